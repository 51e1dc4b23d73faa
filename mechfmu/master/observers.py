"""Observers: receive ``initialized``, ``step_completed`` and ``finished`` events from ``simulate``.

Recording, result files (``mechfmu.master.result_files``), progress display (``mechfmu.master.progress``) and
plots are observers, not flags on ``simulate``.
Each observer gets the ``Run`` (time, step index, column names and ``row``, the values of the
current communication point, read once by ``simulate`` whatever observers are attached).
"""
from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from mechfmu.ssp.files import replaced

if TYPE_CHECKING:
    from mechfmu.master.result import Result, Run


class Observer:
    """``initialized`` starts a run's rows: ``auto``'s co-simulation may run the scenario once at the step, then
    (its companions finding that its tolerance needs substeps) again, with the same observers, ``initialized`` to
    ``finished`` each time; the second run's rows replace the first's."""

    def initialized(self, run: Run) -> None: ...
    def step_completed(self, run: Run) -> None: ...

    def rows_completed(self, run: Run, rows: np.ndarray) -> None:
        """Several recorded points at once, where ``takes_rows`` said the observer takes them: ``rows`` (points x
        columns, float64: ``run.column_names``, time first), as ``step_completed`` would have seen them one by one
        (``run`` is at the last; the slaves may have gone on since). By default nothing, for an observer that does
        nothing at a point."""

    def takes_rows(self) -> bool:
        """Whether ``rows_completed`` takes the place of ``step_completed`` (asked after ``initialized``): so the
        master may run many steps a call (``mechfmu.master.step_blocks``). By default: where ``step_completed`` does
        nothing."""
        return type(self).step_completed is Observer.step_completed

    def finished(self, run: Run, result: Result) -> None: ...
    def close(self) -> None:
        """Called last by every ``simulate``, also when the run failed before ``initialized``."""


class Recorder(Observer):
    """Keeps every recorded row as float64 (8 bytes a value: a row given one by one waits as a tuple among at most
    ``PENDING``, then joins a block); ``array()`` is a structured array with ``time`` first; ``count`` its rows."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.blocks: list[np.ndarray] = []  # (rows, columns), float64
        self.pending: list[tuple[float, ...]] = []
        self.count = 0

    def initialized(self, run: Run) -> None:
        self.names = run.column_names
        self.blocks, self.pending, self.count = [], [run.row], 1

    def step_completed(self, run: Run) -> None:
        self.pending.append(run.row)
        self.count += 1
        if len(self.pending) == PENDING:
            self._gather()

    def rows_completed(self, run: Run, rows: np.ndarray) -> None:
        self._gather()
        self.blocks.append(np.array(rows, dtype=np.float64))  # a copy: the rows' array is the next block's
        self.count += len(rows)

    def takes_rows(self) -> bool:
        return True

    def _gather(self) -> None:
        if self.pending:
            self.blocks.append(np.array(self.pending, dtype=np.float64))
            self.pending = []

    def array(self) -> np.ndarray:
        self._gather()
        dtype = np.dtype([(n, np.float64) for n in self.names])
        if not self.blocks:
            return np.zeros(0, dtype=dtype)
        rows = np.concatenate(self.blocks) if len(self.blocks) > 1 else self.blocks[0]
        self.blocks = [rows]
        return np.ascontiguousarray(rows).view(dtype).reshape(-1)


#: rows a ``Recorder`` holds as tuples before it makes them a block
PENDING = 4096


#: what each refused kind of target is, and what to do instead
REFUSED = {stat.S_IFDIR: "a directory; give a file path inside it, e.g. {path}/results.csv",
           stat.S_IFBLK: "a block device (a disk: the rows would overwrite its contents); give a file path",
           stat.S_IFSOCK: "a socket, which cannot be opened for writing; give a file path or a FIFO"}


def is_stream(path: str | Path) -> bool:
    """Whether a result for ``path`` is written through as a stream (a character device such as
    ``/dev/null`` or a terminal, or a FIFO) rather than as a regular file (one that exists, or none yet).
    Raises ``ValueError`` naming the path and what it is for a target that cannot hold a result: a path
    ending in ``/`` (a folder), a directory, a block device, a socket."""
    if str(path).endswith(("/", "/.", "/..")) or str(path) in (".", ".."):
        raise ValueError(f"{path}: not a writable file path (it ends in '/', '.' or '..' and so names a folder); "
                         "give the file's path, e.g. without the trailing '/'")
    try:
        mode = os.stat(path).st_mode
    except OSError:  # none yet (or unreachable): the regular-file path creates or reports it
        return False
    kind = stat.S_IFMT(mode)
    if kind in REFUSED:
        raise ValueError(f"{path}: not a writable file path (it is {REFUSED[kind].format(path=path)})")
    return kind in (stat.S_IFCHR, stat.S_IFIFO)


class PlotWriter(Observer):
    """Draws the recorded result when the run ends (a failed run too): ``plot_result``."""

    def __init__(self, path: str | Path, variables: list[str] | None = None):
        self.path, self.variables = Path(path), variables
        self.plotted: list[str] = []

    def finished(self, run: Run, result: Result) -> None:
        if result.data is not None and len(result.data):
            self.plotted = plot_result(result, self.path, run.scenario_name, self.variables)


#: what a body's position is called: 1D (s, phi) and 3D (position.x/y/z)
POSITION_NAMES = ("s", "phi", "position.x", "position.y", "position.z")
#: the physical quantity of a unit in words, as a plot's axis says it
QUANTITY_WORDS = {"m": "position", "m/s": "velocity", "m/s2": "acceleration", "m/s3": "jerk", "N": "force",
                  "rad": "angle", "rad/s": "angular velocity", "rad/s2": "angular acceleration", "N.m": "torque",
                  "kg": "mass", "kg.m2": "moment of inertia", "s": "time", "Hz": "frequency", "J": "energy",
                  "W": "power", "N/m": "stiffness", "N.s/m": "damping", "N.m/rad": "rotational stiffness",
                  "N.m.s/rad": "rotational damping", "N/s": "force rate", "N.m/s": "torque rate", "N/m2": "pressure",
                  "1": "value", "": "signal"}


def axis_label(unit: str, names: Sequence[str] = ()) -> str:
    """``quantity [unit]`` for an axis showing ``names`` in ``unit``: "position [m]", "relative velocity [m/s]"
    (every name a ``*_rel``), "signal" for a signal without unit."""
    words = QUANTITY_WORDS.get(unit, "value")
    if names and all(name.rsplit(".", 1)[-1].endswith("_rel") for name in names):
        words = f"relative {words}"
    return f"{words} [{unit}]" if unit else words


def plot_result(result: Result, path: str | Path, title: str, variables: list[str] | None = None) -> list[str]:
    """PNG of the chosen columns (names or glob patterns; default: every body's position or angle),
    one subplot per unit with the quantity in words and the unit on its axis (``axis_label``); returns the plotted
    columns."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mechfmu.master.result import selector

    assert result.data is not None, "plot_result needs a recorded result"
    columns = [n for n in result.data.dtype.names or () if n != "time"]
    if variables:
        select = selector(variables, columns)
        names = [n for n in columns if select(n)]
    else:
        names = [n for n in columns if n.split(".", 1)[1] in POSITION_NAMES]
    by_unit: dict[str, list[str]] = {}
    for name in names:
        by_unit.setdefault(result.units.get(name, "1"), []).append(name)
    fig, axes = plt.subplots(max(1, len(by_unit)), 1, figsize=(8, 2.6 * max(1, len(by_unit))), sharex=True,
                             squeeze=False)
    for ax, (unit, group) in zip(axes[:, 0], by_unit.items()):
        for name in group:
            ax.plot(result.data["time"], result.data[name], label=name)
        ax.set_ylabel(axis_label(unit, group))
        ax.legend(fontsize="small")
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel("time [s]")
    axes[0, 0].set_title(title)
    fig.tight_layout()
    with replaced(path) as temporary:  # whole or not at all; the error names the file
        fig.savefig(temporary, dpi=120)
    plt.close(fig)
    return names
