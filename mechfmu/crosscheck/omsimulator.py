"""OpenModelica's OMSimulator on our exported archives: find it, run an archive, read its result.

OMSimulator (the command-line program of OpenModelica's FMI/SSP simulator) is found as ``MECHFMU_OMSIMULATOR``
(the program's path) or as ``OMSimulator`` on ``PATH``. It runs an archive as a user's would: no preload and
none of Python's environment variables. Its result is a MATLAB v4 file in the Modelica result format
(``Aclass``, ``name``, ``dataInfo``, ``data_1`` for the parameters, ``data_2`` for the time series), read here
with scipy: each signal by its name without the two leading system names OMSimulator puts before it
(``oscillator.oscillator.mass.s`` is ``mass.s``). A row is written at every communication point and, in a
strongly coupled system, before and after every event (two rows at an event's time).
"""
from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

#: the environment variable naming the OMSimulator program
OMSIMULATOR_VARIABLE = "MECHFMU_OMSIMULATOR"
#: variables of the environment a user's OMSimulator does not have: ours and Python's
_UNSET = ("LD_PRELOAD", "PYTHONPATH", "PYTHONHOME", "MECHFMU_PYTHON")


def find_omsimulator() -> Path | None:
    """The OMSimulator program: ``MECHFMU_OMSIMULATOR``, else ``OMSimulator`` on PATH, else None."""
    named = os.environ.get(OMSIMULATOR_VARIABLE)
    if named:
        return Path(named) if Path(named).is_file() else None
    found = shutil.which("OMSimulator")
    return Path(found) if found else None


@dataclass
class OmsRun:
    returncode: int
    output: str            # what it printed (standard output and error)
    signals: dict[str, np.ndarray]   # name -> values; "time" the time points
    wall_time: float       # [s]

    @property
    def errors(self) -> list[str]:
        return [line for line in self.output.splitlines() if line.lstrip().lower().startswith("error")]


def read_result(path: Path, systems: int = 2) -> dict[str, np.ndarray]:
    """The time series of a MATLAB v4 result file in the Modelica result format, by name (the ``systems`` system
    names before each one removed: 2 for OMSimulator's, ``model.root.``; 0 for mechfmu's); parameters (``data_1``)
    as constant series."""
    from scipy.io import loadmat

    mat = loadmat(str(path), chars_as_strings=False)
    transposed = "".join(np.asarray(mat["Aclass"]).reshape(4, -1)[3]).strip() == "binTrans"
    chars = np.asarray(mat["name"])
    chars = chars.T if transposed else chars
    names = ["".join(row).rstrip("\x00 ") for row in chars]
    info = np.asarray(mat["dataInfo"])
    info = info if info.shape[0] == 4 or not transposed else info.T
    data = {1: np.asarray(mat["data_1"], float), 2: np.asarray(mat["data_2"], float)}
    if transposed:
        data = {k: v.T for k, v in data.items()}  # rows: time points
    n = data[2].shape[0]
    signals: dict[str, np.ndarray] = {}
    for i, name in enumerate(names):
        matrix, column = int(info[0, i]), int(info[1, i])
        if matrix == 0:  # the time axis of data_2
            values = data[2][:, 0]
        else:
            values = np.sign(column) * data[matrix][:, abs(column) - 1]
            values = values if matrix == 2 else np.full(n, values[0])
        parts = name.split(".", systems)
        signals[parts[systems] if systems and len(parts) == systems + 1 and i else name] = values
    return signals


def run_omsimulator(program: Path, archive: Path, work: Path, options: Sequence[str] = (),
                    timeout: float = 600.0) -> OmsRun:
    """Run ``archive`` in OMSimulator with its result in ``work``; the signals are empty if it wrote none."""
    work.mkdir(parents=True, exist_ok=True)
    result = work / f"{archive.stem}_res.mat"
    result.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in _UNSET and not k.startswith("PYTHON")}
    command = [str(program), str(archive), f"--resultFile={result}", f"--tempDir={work / 'temp'}", *options]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - start
    signals = read_result(result) if result.is_file() and result.stat().st_size else {}
    return OmsRun(done.returncode, done.stdout + done.stderr, signals, wall)


def at_times(signals: dict[str, np.ndarray], times: np.ndarray) -> dict[str, np.ndarray]:
    """Each signal at ``times``: its last row within 1e-9 s (times scaled to the run's length) of each time (after
    an event there; OMSimulator sums its steps, ours are t0 + n·h, so the two differ by ulps); a time OMSimulator
    wrote no row at is a ValueError naming it."""
    axis = signals["time"]
    tolerance = 1e-9 * max(1.0, float(np.max(np.abs(times)))) if len(times) else 0.0
    rows = np.searchsorted(axis, times + tolerance, side="right") - 1
    missing = (rows < 0) | (np.abs(axis[np.clip(rows, 0, None)] - times) > tolerance)
    if np.any(missing):
        raise ValueError(f"OMSimulator wrote no row at t = {float(times[np.argmax(missing)])!r} s")
    return {name: values[rows] for name, values in signals.items()}


#: the co-simulation archives run the same algorithm as ours (ordered Jacobi): they differ only by OMSimulator's
#: summed step times against our t0 + n·h (ulps of the step, as libcosim's: crosscheck.tools.SAME_ALGORITHM),
#: amplified at stick/slip switches. 1e-9 of a variable's range (or largest magnitude) holds for every output
#: but the force rates (``*.f_rate``, derivatives of a force that switches), held to 1e-8 (measured: 1.1e-9,
#: stick_slip)
SAME_ALGORITHM, SAME_ALGORITHM_RATES = 1e-9, 1e-8
#: OMSimulator's options for the strongly coupled comparison: CVODE up to order 5 (its default, 2, is slow and
#: less accurate at the same tolerances)
FAST_CVODE = ["--CVODEMaxOrder=5"]


@dataclass
class Agreement:
    """OMSimulator's run of an exported archive against ours: the largest difference (relative to a tolerance:
    <= 1 agrees), where it is, the compared count, both wall times and, for a strongly coupled run, the events."""
    worst: float
    variable: str
    time: float
    compared: int
    oms_wall: float
    ours_wall: float
    oms_events: int = 0
    our_events: int = 0
    rows: int = 0


def _relative(ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    scale = max(float(np.ptp(ours)), float(np.max(np.abs(ours))), 1e-300)
    return np.abs(theirs - ours) / scale


def cosimulation_agreement(ours: Any, oms: OmsRun, until: float = math.inf) -> Agreement:
    """Every output both wrote, at our communication points up to ``until`` [s], against ``SAME_ALGORITHM`` (or
    ``SAME_ALGORITHM_RATES``): the worst ratio of difference to tolerance."""
    data = ours.data
    times = data["time"][data["time"] <= until]
    theirs = at_times(oms.signals, times)
    worst = Agreement(0.0, "", math.nan, 0, oms.wall_time, ours.wall_time)
    for name in data.dtype.names[1:]:
        if name not in theirs:
            continue
        tolerance = SAME_ALGORITHM_RATES if name.endswith("f_rate") else SAME_ALGORITHM
        ratio = _relative(data[name][:len(times)], theirs[name]) / tolerance
        worst.compared += 1
        if ratio.max() > worst.worst:
            worst.worst, worst.variable, worst.time = float(ratio.max()), name, float(times[ratio.argmax()])
    return worst


def body_states(columns: list[str], scenario: Any) -> list[str]:
    """The recorded body states among ``columns``: positions, velocities, angles, orientations and angular
    velocities of the components with continuous states."""
    from mechfmu.ssp.scenario import component_class

    bodies = {name for name, spec in scenario.components.items() if component_class(spec.fmu).continuous_states}
    pattern = re.compile(r"(s|v|phi|w|(position|velocity|orientation|angularVelocity)\.[wxyz])")
    return [c for c in columns if c.split(".", 1)[0] in bodies and pattern.fullmatch(c.split(".", 1)[1])]


#: event times closer than this (relative to max(1 s, t)) are one instant: two indicators of one event (two
#: identical elements that touch at once), whose zeros CVODE finds apart by rounding
SAME_INSTANT = 1e-12


def event_instants(axis: np.ndarray) -> int:
    """The instants of events in a result's time axis: OMSimulator writes an event's time twice (and again for each
    further event there), before the stop time; times within ``SAME_INSTANT`` are one instant."""
    times = np.unique(axis[:-1][(np.diff(axis) == 0) & (axis[:-1] < axis[-1])])
    return int(np.sum(np.diff(times) > SAME_INSTANT * np.maximum(1.0, times[1:]))) + 1 if times.size else 0


def strongly_coupled_agreement(ours: Any, oms: OmsRun, scenario: Any, rtol: float, atol: float) -> Agreement:
    """The body states of OMSimulator's CVODE run against our monolithic run, relative to the run's tolerance
    (atol + rtol·largest |y|): at OMSimulator's last row (the stop time) and at each of its rows where our grid
    resolves the trajectory: there our result's cubic spline differs from the spline of every other point by
    less than 0.1 of the tolerance (a spline's error goes with h^4, so its own is about 1/15 of that: < 0.007 of
    the tolerance; rows within a fast contact are left out); the instants of events counted (``event_instants``;
    ours are the located events, one per instant)."""
    from scipy.interpolate import CubicSpline

    data, axis = ours.data, oms.signals["time"]
    grid = data["time"]
    result = Agreement(0.0, "", math.nan, 0, oms.wall_time, ours.wall_time, rows=len(axis),
                       oms_events=event_instants(axis),
                       our_events=len(ours.events))
    for name in body_states(list(data.dtype.names), scenario):
        if name not in oms.signals:
            continue
        values, theirs = data[name], oms.signals[name]
        tolerance = atol + rtol * float(np.max(np.abs(values)))
        cubic = CubicSpline(grid, values)(axis)
        coarse = CubicSpline(grid[::2], values[::2])(axis)
        resolved = np.abs(cubic - coarse) < 0.1 * tolerance
        resolved[-1] = True  # the stop time: both are there exactly
        ratio = np.abs(np.where(resolved, cubic, theirs) - theirs) / tolerance
        ratio[-1] = abs(values[-1] - theirs[-1]) / tolerance
        result.compared += int(np.sum(resolved))
        if ratio.max() > result.worst:
            result.worst, result.variable, result.time = float(ratio.max()), name, float(axis[ratio.argmax()])
    return result
