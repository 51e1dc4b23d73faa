"""Observers: receive ``initialized``, ``step_completed`` and ``finished`` events from ``simulate``.

Recording, CSV streaming and progress display are observers, not flags on ``simulate``.
Each observer gets the ``Run`` (time, step index, column names and ``row``, the values of the
current communication point, read once by ``simulate`` whatever observers are attached).
"""
from __future__ import annotations

import errno
import fcntl
import os
import stat
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from mechfmu.master.interrupt import INTERRUPT
from mechfmu.ssp.files import replaced

if TYPE_CHECKING:
    from mechfmu.master.result import Result, Run


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


#: what each refused kind of target is, and what to do instead
REFUSED = {stat.S_IFDIR: "a directory; give a file path inside it, e.g. {path}/results.csv",
           stat.S_IFBLK: "a block device (a disk: the rows would overwrite its contents); give a file path",
           stat.S_IFSOCK: "a socket, which cannot be opened for writing; give a file path or a FIFO"}

#: what a failed write means when the file (not the run) is at fault
WRITE_CAUSES = {errno.ENOSPC: "no space left on the disk; free space or write elsewhere",
                errno.EDQUOT: "the disk quota is used up; free space or write elsewhere",
                errno.EFBIG: "the file size limit (ulimit -f) or the file system's largest file was reached; "
                             "raise the limit, record fewer points (--output-interval) or write elsewhere"}


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


class CsvWriter(Observer):
    """Streams rows to ``path`` (FMI cross-check CSV: quoted header, ``time`` first; readable by
    ``fmpy.util.read_csv``) without keeping them in memory.

    - Rows go to a hidden temporary file in the target folder, written whole rows at a time (a
      failed write, e.g. a full disk or the file size limit, is cut back to the last whole row that
      fitted and ends the run with an ``OSError`` naming the file and the cause).
    - At the end the file is renamed: to ``path`` after a complete run, to ``partial_path(path)``
      (``x.partial.csv``) after a failed or interrupted one, with every row computed up to then;
      ``written`` says where. A file of an earlier run at ``path`` is then left as it was (never lost).
    - A second writer of the same ``path`` (another run at the same time) is refused at
      construction: a lock (``flock`` on ``.x.csv.lock``, released at exit even after a crash).
    - A character device (``/dev/null``, a terminal) or a FIFO is written straight through, opened at
      construction (a FIFO waits for its reader; Ctrl-C ends the wait): no temporary file, no rename,
      no lock and no partial file, since replacing it would destroy the device or pipe and nothing can
      be read back from it. A directory, a path ending in ``/``, a block device (a disk, whose contents
      the rows would overwrite) and a socket are refused at construction with a ``ValueError``.
    - A symbolic link is followed: the rows go to the file it names (its folder holds the temporary and
      partial files), and the link stays.
    - A file whose name does not end in ``.csv`` (``x.xlsx``) is refused with a ``ValueError``: CSV text under
      another format's name would not open there."""

    #: bytes gathered before a write to the file
    CHUNK = 1 << 16

    def __init__(self, path: str | Path):
        #: a symbolic link is written through: the file it names gets the rows, the link stays a link
        self.path = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
        self.written: Path | None = None
        self._fd: int | None = None
        self._tmp: Path | None = None
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._committed = 0
        self._rows = 0
        self._failed = False
        self._started = False
        self._lock_fd: int | None = None
        self.stream = is_stream(path)
        if not self.stream and self.path.suffix.lower() != ".csv":
            raise ValueError(f"{path}: results are written as CSV; give a file name ending in .csv")
        if self.stream:
            self._open_stream()
        else:
            self._lock()

    def _open_stream(self) -> None:
        while True:
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError as exc:
                if exc.errno != errno.ENXIO:  # ENXIO: a FIFO without a reader yet
                    raise OSError(exc.errno, f"{self.path}: cannot open it for writing ({exc.strerror})") from None
            if INTERRUPT.requested:
                raise KeyboardInterrupt
            time.sleep(0.05)
        os.set_blocking(fd, True)
        self._fd = fd

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
        self._started = True
        if not self.stream:
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
        data = text.encode()
        self._pending.append(data)
        self._pending_size += len(data)
        if self._pending_size >= self.CHUNK:
            self._flush()

    def _flush(self) -> None:
        """Write the gathered rows; on failure cut the file back to the last whole row that fitted."""
        assert self._fd is not None  # rows are added after initialized opened the file, flushed before it closes
        pieces, data = self._pending, b"".join(self._pending)
        self._pending, self._pending_size = [], 0
        if self._failed:  # the file ends at its last whole row: write nothing after it
            return
        view, done = memoryview(data), 0
        try:
            while done < len(data):
                done += os.write(self._fd, view[done:])
        except OSError as exc:
            self._failed = True
            whole = 0
            for piece in pieces:
                if whole + len(piece) > done:
                    break
                whole += len(piece)
                self._rows += 1
            if not self.stream:
                os.ftruncate(self._fd, self._committed + whole)
            raise self._write_error(exc) from None
        self._committed += len(data)
        self._rows += len(pieces)

    def _write_error(self, exc: OSError) -> OSError:
        """The error that ends the run, naming the file, the cause and what is kept where."""
        message = f"writing {self.path} failed ({exc.strerror})"
        if exc.errno in WRITE_CAUSES:
            message += f": {WRITE_CAUSES[exc.errno]}"
        rows = max(self._rows - 1, 0)  # the first piece is the header
        if self.stream:
            message += f"; {rows} whole rows had been written to it"
        else:
            what = f"the header and {rows} whole rows" if self._rows else "nothing (not even the header fitted)"
            message += f"; {what} kept in {partial_path(self.path)}"
        error = OSError(message)
        error.errno = exc.errno
        return error

    def finished(self, run: Run, result: Result) -> None:
        if self._fd is None or not self._started:
            return
        ok = result.ok
        try:
            if self._pending:
                self._flush()
        except OSError as exc:
            ok = False
            result.status, result.message = "error", result.message or str(exc)
        if self.stream:
            self.written = self.path
            self.close()
            return
        os.close(self._fd)
        self._fd = None
        assert self._tmp is not None  # set with _fd
        target = self.path if ok else partial_path(self.path)
        os.replace(self._tmp, target)  # a failed run leaves an earlier run's file at ``path`` as it was
        self.written = target
        self.close()

    def close(self) -> None:
        """Release the file (a temporary file of a run that never finished is removed) and the lock."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            if self._tmp is not None:
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
