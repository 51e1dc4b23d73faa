"""Other tools' results at their true times, for comparing them with a reference (``benchmarks/side_by_side.py``).

- fmpy's ``simulate_ssp`` returns one row per step holding the values after that step under the step's start time
  (row k: the states at t_k + h), and only the SSD's connectors: ``fmpy_columns`` puts each row at t_k + h and
  derives a body's own position and speed from its flange where fmpy recorded only that (``X.s`` from
  ``X.flange_a.s`` + L/2 or ``X.flange_b.s`` − L/2, L the body's length; ``X.v``, ``X.phi``, ``X.w`` equal to a
  flange's), and an element's relative position from its two flanges (``X.s_rel`` = ``X.flange_b.s`` −
  ``X.flange_a.s``, ``X.phi_rel`` likewise).
- ``values_at`` takes a tool's value at given times: its row there where it has one (the last at that time, after
  an event), else the straight line between its rows around it, and where it interpolated, so that a table can
  say so.
"""
from __future__ import annotations

import numpy as np

#: a tool's time and a wanted time are the same instant within this, relative to max(1 s, |t|): tools sum their
#: steps or count integer nanoseconds, t0 + n·h differs from those by ulps
SAME_TIME = 1e-9


def fmpy_columns(rows: np.ndarray, step: float, bodies: dict[str, float]) -> dict[str, np.ndarray]:
    """fmpy's rows (a structured array, ``time`` first) as columns at their true times (``time`` + ``step``), with
    each body's ``s``/``v`` or ``phi``/``w`` taken from a recorded flange where fmpy has no column of its own, and
    each element's ``s_rel`` or ``phi_rel`` from its two flanges; ``bodies``: a body's name to its length L [m]
    (0 for one without)."""
    names = rows.dtype.names or ()
    columns = {name: np.asarray(rows[name], dtype=float) for name in names}
    columns["time"] = columns["time"] + step
    for body, length in bodies.items():
        for own in ("s", "v", "phi", "w"):
            for side, half in (("flange_a", 0.5), ("flange_b", -0.5), ("flange", 0.0)):
                flange = f"{body}.{side}.{own}"
                if f"{body}.{own}" not in columns and flange in columns:
                    columns[f"{body}.{own}"] = columns[flange] + (half * length if own == "s" else 0.0)
    for name in names:  # an element between two flanges: its relative position
        element, _, variable = name.rpartition(".flange_a.")
        other = f"{element}.flange_b.{variable}"
        if element and variable in ("s", "phi") and other in columns and f"{element}.{variable}_rel" not in columns:
            columns[f"{element}.{variable}_rel"] = columns[other] - columns[name]
    return columns


def values_at(times: np.ndarray, tool_times: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``values`` (the tool's, at ``tool_times``, ascending, an event's time repeated) at each of ``times``: the last
    row within ``SAME_TIME`` of it, else linear interpolation between the two rows around it; nan outside the
    tool's rows. Also where it interpolated (a boolean array)."""
    times, tool_times, values = (np.asarray(a, dtype=float) for a in (times, tool_times, values))
    tolerance = SAME_TIME * np.maximum(1.0, np.abs(times))
    last = np.searchsorted(tool_times, times + tolerance, side="right") - 1
    found = last >= 0
    found[found] = np.abs(tool_times[last[found]] - times[found]) <= tolerance[found]
    keep = np.append(np.diff(tool_times) > 0, True)  # at a repeated time, the line starts from its last row
    result = np.interp(times, tool_times[keep], values[keep], left=np.nan, right=np.nan)
    result[found] = values[last[found]]
    return result, ~found & ~np.isnan(result)
