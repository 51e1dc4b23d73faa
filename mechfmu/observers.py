"""Observers: receive ``initialized``, ``step_completed`` and ``finished`` events from ``simulate``.

Recording, CSV streaming and progress display are observers, not flags on ``simulate``.
Each observer gets the ``Run`` (time, step index, column names and ``row``, the values of the
current communication point, read once by ``simulate`` whatever observers are attached).
"""
from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .result import Result, Run


class Observer:
    def initialized(self, run: Run) -> None: ...
    def step_completed(self, run: Run) -> None: ...
    def finished(self, run: Run, result: Result) -> None: ...
    def close(self) -> None:
        """Called last by every ``simulate``, also when the run failed before ``initialized``."""


class Recorder(Observer):
    """Keeps every recorded row; ``array()`` is a structured array with ``time`` first."""

    def __init__(self) -> None:
        self.rows: list[tuple[float, ...]] = []
        self.names: list[str] = []

    def initialized(self, run: Run) -> None:
        self.names = run.column_names
        self.rows = [run.row]

    def step_completed(self, run: Run) -> None:
        self.rows.append(run.row)

    def array(self) -> np.ndarray:
        dtype = np.dtype([(n, np.float64) for n in self.names])
        return np.array(self.rows, dtype=dtype)


def csv_header(names: list[str]) -> str:
    """The quoted header line (RFC 4180: a quote inside a name is doubled)."""
    return ",".join('"' + n.replace('"', '""') + '"' for n in names) + "\n"


def csv_row(row: tuple[float, ...]) -> str:
    return ",".join(repr(float(v)) for v in row) + "\n"


def partial_path(path: Path) -> Path:
    """Where a failed or interrupted run leaves its rows: ``x.csv`` -> ``x.partial.csv``."""
    return path.with_name(f"{path.stem}.partial{path.suffix}")


class CsvWriter(Observer):
    """Streams rows to ``path`` (FMI cross-check CSV: quoted header, ``time`` first; readable by
    ``fmpy.util.read_csv``) without keeping them in memory.

    - Rows go to a hidden temporary file in the target folder, written whole rows at a time (a
      failed write, e.g. a full disk, is cut back to the last whole row and ends the run with an
      ``OSError`` naming the file).
    - At the end the file is renamed: to ``path`` after a complete run, to ``partial_path(path)``
      (``x.partial.csv``) after a failed or interrupted one, with every row computed up to then;
      ``written`` says where. A stale ``path`` from an earlier run is removed in that case.
    - A second writer of the same ``path`` (another run at the same time) is refused at
      construction: a lock (``flock`` on ``.x.csv.lock``, released at exit even after a crash)."""

    #: bytes gathered before a write to the file
    CHUNK = 1 << 16

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.written: Path | None = None
        self._fd: int | None = None
        self._tmp: Path | None = None
        self._pending: list[str] = []
        self._pending_size = 0
        self._committed = 0
        self._lock_fd: int | None = None
        self._lock()

    def _lock(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = self.path.with_name(f".{self.path.name}.lock")
        while True:
            fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise FileExistsError(f"{self.path}: another run is writing this file now (it holds {lock}); "
                                      "wait for it or write elsewhere") from None
            try:  # the holder before us may have removed the lock file: then lock the new one
                if os.stat(lock).st_ino == os.fstat(fd).st_ino:
                    break
            except FileNotFoundError:
                pass
            os.close(fd)
        self._lock_fd, self._lock_file = fd, lock

    def initialized(self, run: Run) -> None:
        fd, name = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        umask = os.umask(0o022)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # a result file like any other, not mkstemp's 0600
        self._fd, self._tmp = fd, Path(name)
        self._add(csv_header(run.column_names))
        self._add(csv_row(run.row))

    def step_completed(self, run: Run) -> None:
        self._add(csv_row(run.row))

    def _add(self, text: str) -> None:
        self._pending.append(text)
        self._pending_size += len(text)
        if self._pending_size >= self.CHUNK:
            self._flush()

    def _flush(self) -> None:
        """Write the gathered rows; on failure cut the file back to its last whole row."""
        assert self._fd is not None  # rows are added after initialized opened the file, flushed before it closes
        data = "".join(self._pending).encode()
        self._pending, self._pending_size = [], 0
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view):]
        except OSError as exc:
            os.ftruncate(self._fd, self._committed)
            message = f"writing {self.path} failed ({exc.strerror}); the rows before were kept"
            raise OSError(exc.errno, message) from None
        self._committed += len(data)

    def finished(self, run: Run, result: Result) -> None:
        if self._fd is None:
            return
        ok = result.ok
        try:
            if self._pending:
                self._flush()
        except OSError as exc:
            ok = False
            result.status, result.message = "error", result.message or str(exc)
        os.close(self._fd)
        self._fd = None
        assert self._tmp is not None  # set with _fd
        target = self.path if ok else partial_path(self.path)
        os.replace(self._tmp, target)
        if not ok and self.path.exists():
            self.path.unlink()  # a result of an earlier run must not pass for this one's
        self.written = target
        self.close()

    def close(self) -> None:
        """Release the file (a temporary file of a run that never finished is removed) and the lock."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            assert self._tmp is not None  # set with _fd
            self._tmp.unlink(missing_ok=True)
        if self._lock_fd is not None:
            self._lock_file.unlink(missing_ok=True)
            os.close(self._lock_fd)
            self._lock_fd = None

    def __del__(self):
        self.close()


class ProgressBar(Observer):
    """A tqdm progress bar over simulated time."""

    def initialized(self, run: Run) -> None:
        from tqdm import tqdm
        self._bar = tqdm(total=run.n_steps, unit="step", desc=run.scenario_name, leave=False)

    def step_completed(self, run: Run) -> None:
        self._bar.update(run.step_index - self._bar.n)

    def finished(self, run: Run, result: Result) -> None:
        self._bar.close()


class PlotWriter(Observer):
    """Draws the recorded result when the run ends (a failed run too): ``plot_result``."""

    def __init__(self, path: str | Path, variables: list[str] | None = None):
        self.path = Path(path)
        self.variables = variables
        self.plotted: list[str] = []

    def finished(self, run: Run, result: Result) -> None:
        if result.data is not None and len(result.data):
            self.plotted = plot_result(result, self.path, run.scenario_name, self.variables)


#: what a body's position is called: 1D (s, phi) and 3D (position.x/y/z)
POSITION_NAMES = ("s", "phi", "position.x", "position.y", "position.z")


def plot_result(result: Result, path: str | Path, title: str, variables: list[str] | None = None) -> list[str]:
    """PNG of the chosen columns (names or glob patterns; default: every body's position or angle),
    one subplot per unit with the quantity and unit on its axis; returns the plotted columns."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .components.base import QUANTITIES
    from .result import selector

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
        ax.set_ylabel(f"{QUANTITIES.get(unit, ('', 'value'))[1]} [{unit}]")
        ax.legend(fontsize="small")
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel("time [s]")
    axes[0, 0].set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return names
