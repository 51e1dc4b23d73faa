"""Table: a signal y(t) by linear interpolation in a time table (Modelica.Blocks.Sources.CombiTimeTable, one column).

Law (t the component's time, T = (t − startTime)/timeScale the table time, rows (t_i, y_i)):

    y = offset + (if t < startTime then 0 else table(T))
    table(T) = y_i + (y_{i+1} − y_i)·(T − t_i)/(t_{i+1} − t_i)    for t_i <= T < t_{i+1}

so ``table(t_i) = y_i`` exactly at every row. Two rows with the same time are a jump (at that time the
later row's value, as after Modelica's time event); three are refused, and so is a time that decreases
(an error naming the row). Outside [t_1, t_n] by ``extrapolation`` (MSL's
``Modelica.Blocks.Types.Extrapolation``): 1 HoldLastPoint (the first/last value), 2 LastTwoPoints (the line
through the first/last two rows; MSL's default, and ours), 3 Periodic (T wrapped into [t_1, t_n)),
4 NoExtrapolation (a step that ends outside is refused, naming the time). A one-row table is constant.
Derivatives as every signal source (components/signals.py): ``y_rate`` the slope from the right divided by
``timeScale``, ``y_rate_rate`` = 0 (piecewise linear: MSL's ``smoothness = LinearSegments``).

Data: ``table`` (String) holds rows ``"t, y; t, y; ..."`` (Modelica's matrix syntax: rows separated by
``;`` or new lines, values by ``,`` or blanks, optional outer brackets); with ``tableOnFile`` the rows come
from the CSV file ``fileName`` (UTF-8, one row per line, values separated by ``,``, numbers with ``.`` whatever
the locale; a byte-order mark at its start, blank lines and lines starting with ``#`` are skipped, and so is
the first other line if all its values are names (a header: none begins like a number); any other line that
is not numbers is an error naming it). A relative ``fileName`` is found
in the FMU's resources folder (put the file into the FMU's ``resources/``), in-process in the scenario's
folder (the current directory for a component used alone); that folder is also the only one read from: a
name that leads out of it (an absolute path, ``..``,
a symbolic link) is refused unless ``allowOutsideFiles`` (the FMU then reads any file its process may read).
Only a regular file of at most 16 MiB is read (a device or FIFO is not even opened; type and
size are checked again on the opened file, and no more is read); errors name the file and the line, never
its text; a read error is reported as the system's. ``columns`` (MSL's name; one index here,
from 1 = time) chooses the value column, default 2; it and ``extrapolation`` are used only as integers in their
range (a saved state's or start value's fraction, or one beyond a C int, is refused by name).
MSL's ``shiftTime`` is its default, ``startTime``; ``smoothness``, ``tableName``, ``timeEvents`` are not
offered (linear segments; a CSV holds one table; kinks are exact at the points that fall on them).
Units: none on ``offset`` and the outputs (a signal: components/signals.py); ``startTime``,
``timeScale`` [s].
"""
from __future__ import annotations

from .base import NO_UNIT, Component, Param
from .native_component import NativeComponent
from .signals import OFFSET, SIGNAL_OUTPUTS, START_TIME

HOLD_LAST_POINT, LAST_TWO_POINTS, PERIODIC, NO_EXTRAPOLATION = 1, 2, 3, 4

class Table(NativeComponent, Component):
    description = "Signal by linear interpolation in a time table (parameter string or CSV file)"
    source = "Modelica Standard Library 4.1, Modelica.Blocks.Sources.CombiTimeTable (one output column)"
    outputs = SIGNAL_OUTPUTS
    example_parameters = {"table": "0, 0; 0.01, 1; 0.01, 2; 0.03, -1; 0.05, 0.5", "extrapolation": 1,
                          "offset": 0.25, "startTime": 0.005, "timeScale": 1.0}
    parameters = (
        Param("table", "0, 0; 1, 1", NO_UNIT, "Table rows 't, y; t, y; ...' (time in the first column)",
              type="String"),
        Param("tableOnFile", False, "1", "true: the table is read from the CSV file fileName", type="Boolean"),
        Param("fileName", "", NO_UNIT, "CSV file of the table (relative: in the FMU's resources folder)",
              type="String"),
        Param("allowOutsideFiles", False, "1", "true: fileName may lead out of the resources folder (absolute, "
              "'..', links): the FMU then reads any file its process may read", type="Boolean"),
        Param("columns", 2, "1", "Column of the table that is output (1 is time)", min=2, type="Integer"),
        Param("extrapolation", LAST_TWO_POINTS, "1", "Outside the table: 1 hold the first/last point, "
              "2 line through the first/last two points, 3 periodic, 4 error", min=1, max=4, type="Integer"),
        OFFSET, START_TIME,
        Param("timeScale", 1.0, "s", "Time scale of the first table column (table time = (t - startTime)/timeScale)",
              min=0.0, min_exclusive=True),
    )
