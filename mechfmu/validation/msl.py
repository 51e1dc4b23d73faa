"""Modelica Association reference results: MSL reference CSVs (event rows, event times) and the
tube check of their regression tests (csv-compare)."""
from __future__ import annotations

from pathlib import Path

import numpy as np


def read_msl_reference(path: str | Path) -> np.ndarray:
    """An MSL reference CSV as a structured array (fmpy's reader) with event rows collapsed: of the
    rows sharing a time stamp the last (post-event) one is kept."""
    from fmpy.util import read_csv

    data = read_csv(str(path))
    keep = np.append(np.diff(data["time"]) != 0, True)
    return data[keep]


def event_times(path: str | Path) -> np.ndarray:
    """The event instants of an MSL reference CSV: time stamps that appear twice, except StopTime."""
    from fmpy.util import read_csv

    time = read_csv(str(path))["time"]
    duplicated = time[:-1][np.diff(time) == 0]
    return duplicated[duplicated < time[-1]]


def _envelope(ref_time: np.ndarray, ref_values: np.ndarray, time: np.ndarray,
              tolerance: float) -> tuple[np.ndarray, np.ndarray, float]:
    """The reference's lowest and highest value within ``tolerance·(t_end − t_start)`` of each of ``time``, and
    the tube's half-height ``dy`` (``tube_edges``)."""
    dt = tolerance * (ref_time[-1] - ref_time[0])
    dy = max(tolerance * (np.max(ref_values) - np.min(ref_values)), tolerance * 1e-3)
    order = np.argsort(ref_time, kind="stable")
    ref_time, ref_values = ref_time[order], ref_values[order]
    # the reference is piecewise linear: its extremes over [t − dt, t + dt] lie at the window's ends or
    # at the reference points inside
    low = np.minimum(np.interp(time - dt, ref_time, ref_values), np.interp(time + dt, ref_time, ref_values))
    high = np.maximum(np.interp(time - dt, ref_time, ref_values), np.interp(time + dt, ref_time, ref_values))
    first = np.searchsorted(ref_time, time - dt, side="left")
    end = np.searchsorted(ref_time, time + dt, side="right")
    for k in range(int(np.max(end - first, initial=0))):
        index = first + k
        valid = index < end
        point = ref_values[np.minimum(index, len(ref_values) - 1)]
        low = np.where(valid, np.minimum(low, point), low)
        high = np.where(valid, np.maximum(high, point), high)
    return low, high, dy


def tube_edges(ref_time: np.ndarray, ref_values: np.ndarray, time: np.ndarray,
               tolerance: float = 2e-3) -> tuple[np.ndarray, np.ndarray]:
    """The lower and upper edges at ``time`` of the tube around the reference.

    The tube follows the Modelica Association's regression check (csv-compare): around every
    reference point a rectangle of half-width ``tolerance·(t_end − t_start)`` in time and half-height
    ``tolerance·(max − min)`` of the signal (at least ``tolerance``·1e-3 for a constant signal); the
    tube is the union of the rectangles."""
    low, high, dy = _envelope(ref_time, ref_values, time, tolerance)
    return low - dy, high + dy


def tube_violation(ref_time: np.ndarray, ref_values: np.ndarray, time: np.ndarray, values: np.ndarray,
                   tolerance: float = 2e-3) -> float:
    """How far ``values`` leave the tube around the reference (0 = inside), in units of the signal
    (``tube_edges``): a test value must lie within the tube at its time. Test values are compared at
    their own time stamps inside the reference's time range."""
    inside = (time >= ref_time[0]) & (time <= ref_time[-1])
    time, values = time[inside], values[inside]
    low, high, dy = _envelope(ref_time, ref_values, time, tolerance)
    return float(max(0.0, np.max(low - dy - values, initial=0.0), np.max(values - high - dy, initial=0.0)))
