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
from the CSV file ``fileName`` (one row per line, values separated by ``,``; blank lines, lines starting
with ``#`` and a first line that is not numbers (a header) are skipped). A relative ``fileName`` is found
in the FMU's resources folder (put the file into the FMU's ``resources/``), in-process in the scenario's
folder (the current directory for a component used alone); that folder is also the only one read from: a
name that leads out of it (an absolute path, ``..``,
a symbolic link) is refused unless ``allowOutsideFiles`` (the FMU then reads any file its process may read).
Only a regular file of at most ``MAX_FILE_BYTES`` is read (a device or FIFO is not even opened; type and
size are checked again on the opened file, and no more is read); errors name the file and the line, never
its text. ``columns`` (MSL's name; one index here,
from 1 = time) chooses the value column, default 2.
MSL's ``shiftTime`` is its default, ``startTime``; ``smoothness``, ``tableName``, ``timeEvents`` are not
offered (linear segments; a CSV holds one table; kinks are exact at the points that fall on them).
Units: none on ``offset`` and the outputs (a signal: components/signals.py); ``startTime``,
``timeScale`` [s].
"""
from __future__ import annotations

import bisect
import math
import os
import stat
from typing import Any

from .base import NO_UNIT, Param
from .signals import OFFSET, START_TIME, SignalSource

HOLD_LAST_POINT, LAST_TWO_POINTS, PERIODIC, NO_EXTRAPOLATION = 1, 2, 3, 4

Rows = tuple[tuple[float, ...], tuple[float, ...]]

#: the largest table file read, 16 MiB: some 850 000 rows of two 8-digit columns, parsed in seconds into
#: about half a GiB (memory and time grow with the size)
MAX_FILE_BYTES = 16 * 1024 * 1024
OUTSIDE_HINT = ("put the file into the FMU's resources/ folder (in-process: the scenario's folder) and give "
                "its relative name, or set allowOutsideFiles = true to read it where it is")


class TableFileError(Exception):
    """A table file that is refused before it is parsed (outside its folder, not a regular file, too large)."""


def read_table_file(name: str, folder: str, allow_outside: bool, limit: int = MAX_FILE_BYTES) -> str:
    """The text of the table file ``name`` (relative: in ``folder``): a regular file of at most ``limit``
    bytes inside ``folder`` (links resolved) unless ``allow_outside``; OSError, TableFileError or
    UnicodeDecodeError otherwise."""
    if "\0" in name:
        raise TableFileError("holds a NUL character, which no file name has: give the CSV file's name")
    path = os.path.realpath(os.path.join(folder, name))
    root = os.path.realpath(folder)
    if not allow_outside and os.path.commonpath([root, path]) != root:
        raise TableFileError(f"leads to {path!r}, outside the folder {root!r} table files are read from: "
                             + OUTSIDE_HINT)
    if not stat.S_ISREG(os.stat(path).st_mode):  # not opened at all: opening a device or FIFO may block
        raise TableFileError(f"leads to {path!r}, which is not a regular file: give a CSV file")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    descriptor = os.open(path, flags)
    with os.fdopen(descriptor, "rb") as file:
        status = os.fstat(file.fileno())  # the file really opened: a swap after the check above is seen here
        if not stat.S_ISREG(status.st_mode):
            raise TableFileError(f"leads to {path!r}, which is not a regular file: give a CSV file")
        if status.st_size > limit:
            raise TableFileError(f"has {status.st_size} bytes, more than the {limit} a table file may have: "
                                 "shorten the table or thin out its rows")
        data = file.read(limit + 1)
    if len(data) > limit:
        raise TableFileError(f"has more than the {limit} bytes a table file may have (it grew while read): "
                             "shorten the table or thin out its rows")
    return data.decode("utf-8")


def parse_rows(text: str, column: int, csv: bool = False) -> Rows:
    """(times, values) of a table given as text; ValueError saying which row (CSV: which line) is wrong,
    quoting the text of the row only for a table given as a parameter (never a file's text)."""
    if csv:
        lines = [(number, line.strip()) for number, line in enumerate(text.splitlines(), start=1)]
        rows = [(number, line.split(",")) for number, line in lines if line and not line.startswith("#")]
    else:
        body = text.strip().removeprefix("[").removesuffix("]")
        rows = list(enumerate((row.replace(",", " ").split() for row in body.replace("\n", ";").split(";")
                               if row.strip()), start=1))
    times: list[float] = []
    values: list[float] = []
    for index, (number, row) in enumerate(rows):
        where = f"line {number}" if csv else f"row {number}"
        try:
            numbers = [float(x) for x in row]
        except ValueError:
            if csv and index == 0:
                continue  # a header line
            raise ValueError(f"line {number} is not a list of numbers separated by ','" if csv
                             else f"row {number} {','.join(row)!r} is not a list of numbers") from None
        if len(numbers) < column:
            raise ValueError(f"{where} has {len(numbers)} values, column {column} is wanted")
        if not all(math.isfinite(x) for x in numbers):
            raise ValueError(f"{where} has a value that is not finite")
        t, y = numbers[0], numbers[column - 1]
        if times and t < times[-1]:
            raise ValueError(f"time is not monotonic: line {number} has a time before the line above it" if csv
                             else f"time is not monotonic: row {number} has t = {t!r} after t = {times[-1]!r}")
        if len(times) >= 2 and t == times[-1] == times[-2]:
            raise ValueError(f"line {number} is the third line at one time (two make a jump, no more)" if csv
                             else f"time t = {t!r} appears three times (two rows make a jump, no more)")
        times.append(t)
        values.append(y)
    if not times:
        raise ValueError("has no rows")
    return tuple(times), tuple(values)


def _line(times: tuple[float, ...], values: tuple[float, ...], i: int, j: int) -> float:
    """Slope between rows i and j (0 if they are at the same time: a jump)."""
    dt = times[j] - times[i]
    return (values[j] - values[i]) / dt if dt != 0.0 else 0.0


def interpolate(rows: Rows, t: float, extrapolation: int = LAST_TWO_POINTS) -> tuple[float, float]:
    """(y, dy/dT) of the table at table time T = t, the slope from the right; ValueError outside the
    table with NoExtrapolation."""
    times, values = rows
    first, last = times[0], times[-1]
    if len(times) == 1:
        return values[0], 0.0
    if extrapolation == PERIODIC and not first <= t < last:
        t = first + (t - first) % (last - first)
        if not first <= t < last:  # the remainder rounded up to the period
            t = first
    if first <= t < last:
        i = bisect.bisect_right(times, t)  # times[i-1] <= t < times[i], so times[i] > times[i-1]
        t0, t1, y0, y1 = times[i - 1], times[i], values[i - 1], values[i]
        return y0 + (y1 - y0) * (t - t0) / (t1 - t0), (y1 - y0) / (t1 - t0)
    if extrapolation == NO_EXTRAPOLATION and t != last:
        raise ValueError(f"table time {t!r} is outside the table [{first!r}, {last!r}] and extrapolation = 4 "
                         "(NoExtrapolation)")
    if extrapolation in (HOLD_LAST_POINT, NO_EXTRAPOLATION):
        return (values[-1] if t >= last else values[0]), 0.0
    if t >= last:
        slope = _line(times, values, -2, -1)
        return values[-1] + slope * (t - last), slope
    slope = _line(times, values, 0, 1)
    return values[0] + slope * (t - first), slope


class Table(SignalSource):
    description = "Signal by linear interpolation in a time table (parameter string or CSV file)"
    source = "Modelica Standard Library 4.1, Modelica.Blocks.Sources.CombiTimeTable (one output column)"
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

    def __init__(self, instance_name: str | None = None):
        super().__init__(instance_name)
        self._rows: tuple[Any, Rows] | None = None  # (the parameters they were read from, rows)
        self._events: tuple[Any, list[float]] | None = None  # (what they were made from, the time events)

    def rows(self) -> Rows:
        """The table's rows, read once per table/file parameters; ComponentError naming the parameter."""
        v = self.values
        key = (v["table"], v["tableOnFile"], v["fileName"], v["allowOutsideFiles"], v["columns"], self.resources)
        if self._rows is None or self._rows[0] != key:
            name = "fileName" if v["tableOnFile"] else "table"
            try:
                if v["tableOnFile"]:
                    text = read_table_file(v["fileName"], self.resources or os.getcwd(), v["allowOutsideFiles"])
                else:
                    text = v["table"]
                self._rows = (key, parse_rows(text, v["columns"], csv=v["tableOnFile"]))
            except OSError as exc:
                raise self.error(name, v[name], f"cannot be read: {exc.strerror or exc}") from None
            except TableFileError as exc:
                raise self.error(name, v[name], f"is refused: {exc}") from None
            except UnicodeDecodeError as exc:
                line = exc.object[:exc.start].count(b"\n") + 1
                raise self.error(name, v[name], f"is not a valid table: line {line} is not UTF-8 text") from None
            except ValueError as exc:
                raise self.error(name, v[name], f"is not a valid table: {exc}") from None
        return self._rows[1]

    def validate(self) -> None:
        if not self.values["tableOnFile"]:  # a file is read at initialization (the FMU's state check has no
            self.rows()                     # resources folder to find it in)

    def initialize(self, start_time: float = 0.0) -> None:
        self.check_parameters()
        self.waveform(float(start_time))  # NoExtrapolation: the start time must be inside the table
        super().initialize(start_time)

    def waveform(self, t: float) -> tuple[float, float, float]:
        v = self.values
        if t < v["startTime"]:
            return v["offset"], 0.0, 0.0
        rows = self.rows()
        try:
            y, slope = interpolate(rows, (t - v["startTime"]) / v["timeScale"], v["extrapolation"])
        except ValueError as exc:
            raise self.error("extrapolation", v["extrapolation"], f"refuses t = {t!r}: {exc}") from None
        return v["offset"] + y, slope / v["timeScale"], 0.0

    def advance(self, current_time: float, step_size: float) -> None:
        self.waveform(current_time + step_size)  # a step that ends outside a NoExtrapolation table is refused

    def time_events(self) -> list[float]:
        """startTime and every row's time (MSL's ``timeEvents = Always``); periodic: those of the period that
        holds the model's time and of the next one."""
        v = self.values
        times = self.rows()[0]
        start, scale = v["startTime"], v["timeScale"]
        period = times[-1] - times[0] if v["extrapolation"] == PERIODIC and times[-1] > times[0] else 0.0
        shift = max(0.0, math.floor(((self.time - start) / scale - times[0]) / period)) * period if period else 0.0
        key = (self._rows, start, scale, period, shift)  # sorted once per table, start, scale and period
        if self._events is None or self._events[0] != key:
            both = times + tuple(t + period for t in times) if period else times
            self._events = (key, sorted({start} | {start + (t + shift) * scale for t in both}))
        return self._events[1]
