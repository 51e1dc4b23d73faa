"""Result files streamed during a run: ``CsvWriter`` (FMI cross-check CSV), ``MatWriter`` (Dymola's result format
1.1, the MATLAB v4 file Dymola and OpenModelica write and OMEdit plots), and ``result_writer``, which picks one by
the file's suffix.

Both are a ``ResultFile``: rows go whole to a temporary file renamed at the end (``x.partial.csv`` or
``x.partial.mat`` after a failed run), a lock refuses a second writer, a full disk is cut back to whole rows. The
rows are never kept in memory: the CSV row is text, the MAT row the point's values as float64 appended to the
matrix ``data_2``, whose header holds the number of points and is completed when the run ends. The run's FMU
profile (``mechfmu.master.fmu_profile``) goes into the MAT file after ``data_2`` and beside the CSV file as JSON.
"""
from __future__ import annotations

import errno
import os
import struct
import tempfile
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING

from mechfmu.master.csv_text import csv_header, csv_line, csv_lines
from mechfmu.master.fmu_profile import Profile, write_sidecar
from mechfmu.master.mat_v4 import trajectory_head
from mechfmu.master.observers import Observer, is_stream
from mechfmu.master.result_paths import WRITE_CAUSES, lock, open_stream, partial_path, target

if TYPE_CHECKING:
    import numpy as np

    from mechfmu.master.result import Result, Run


class ResultFile(Observer, ABC):
    """Streams a run's rows to ``path`` without keeping them in memory; a format gives ``header`` (the bytes before
    the first row) and ``encode`` (one row's bytes), and may complete a regular file in ``complete``.

    - Rows go to a hidden temporary file in the target folder, written whole rows at a time (a failed write, e.g.
      a full disk or the file size limit, is cut back to the last whole row that fitted and ends the run with an
      ``OSError`` naming the file and the cause).
    - At the end the file is renamed: to ``path`` after a complete run, to ``partial_path(path)`` after a failed
      or interrupted one, with every row computed up to then; ``written`` says where. A file of an earlier run at
      ``path`` is then left as it was (never lost).
    - A second writer of the same ``path`` (another run at the same time) is refused at construction: a lock
      (``flock`` on ``.x.csv.lock``, released at exit even after a crash).
    - A character device (``/dev/null``, a terminal) or a FIFO is written straight through where the format allows
      it (``STREAMS``), opened at construction (a FIFO waits for its reader; Ctrl-C ends the wait): no temporary
      file, no rename, no lock and no partial file. A directory, a path ending in ``/``, a block device and a
      socket are refused at construction with a ``ValueError`` (``is_stream``).
    - A symbolic link is followed: the rows go to the file it names, and the link stays.
    - A second run with the same writer (``initialized`` again after ``finished``: ``auto`` running again with the
      substeps its tolerance needs) writes its rows anew, the first run's file left at ``path`` until the second
      replaces it (an interrupted second run leaves its rows in the partial file); a stream takes one run only.
    - A regular file whose name does not end in ``SUFFIX`` is refused with a ``ValueError``."""

    #: bytes gathered before a write to the file
    CHUNK = 1 << 16
    #: the format's name and the suffix of its files
    FORMAT, SUFFIX = "", ""
    #: whether a FIFO or a device can take the format (one that is completed at its end cannot)
    STREAMS = True
    ASCII = False  # whether names must be ASCII (MatWriter)
    #: whether the run's FMU profile goes to a file beside it (``mechfmu.master.fmu_profile.sidecar_path``)
    SIDECAR = False
    profile = Profile()

    def __init__(self, path: str | Path):
        self.path = target(path)
        self.written: Path | None = None
        self._fd: int | None = None
        self._tmp: Path | None = None
        self._fresh()
        self._started = False
        self._lock_fd: int | None = None
        self.stream = is_stream(path)
        if self.stream and not self.STREAMS:
            raise ValueError(f"{path}: a {self.FORMAT} file is completed at its end (its header counts the points), "
                             "which a FIFO or device cannot take; give a regular file, or stream .csv")
        if not self.stream and self.path.suffix.lower() != self.SUFFIX:
            raise ValueError(f"{path}: results are written as {self.FORMAT}; give a file name ending in {self.SUFFIX}")
        if self.stream:
            self._open_stream()
        else:
            self._lock()

    def _fresh(self) -> None:
        self._pending: list[bytes] = []
        self._pending_size = self._committed = self._rows = 0  # _rows: pieces written whole (the header, the rows)
        self._last, self._failed = b"", False  # the last piece written whole

    @abstractmethod
    def header(self, run: Run) -> bytes:
        """The bytes before the first row."""

    @abstractmethod
    def encode(self, row: tuple[float, ...]) -> bytes:
        """One row's bytes."""

    def complete(self, rows: int, last: bytes) -> None:
        """Complete a regular file (temporary or partial) that holds ``rows`` whole rows, ``last`` the last one."""

    def _open_stream(self) -> None:
        self._fd = open_stream(self.path)

    def _lock(self) -> None:
        self._lock_fd, self._lock_file = lock(self.path)

    def initialized(self, run: Run) -> None:
        if self.ASCII and (refused := ", ".join(name for name in run.column_names if not name.isascii())):
            raise ValueError(f"{self.path}: names that are not ASCII ({refused[:200]}): a {self.FORMAT} file's readers "
                             "(scipy.io.loadmat, DyMat, Modelica tools) read one byte per character and give them back "
                             "garbled; rename with ASCII letters, or write .csv (UTF-8)")
        if self._started:  # a second pass (auto's run with the substeps its tolerance needs): its rows anew
            if self.stream:
                raise ValueError(f"{self.path}: a stream takes one run's rows; this is a second run of the same file")
            self.close()
            self._lock()
            self._fresh()
        self._started = True
        if not self.stream:
            fd, name = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
            umask = os.umask(0o022)
            os.umask(umask)
            os.fchmod(fd, 0o666 & ~umask)  # a result file like any other, not mkstemp's 0600
            self._fd, self._tmp = fd, Path(name)
        self._add(self.header(run))
        self._add(self.encode(run.row))

    def step_completed(self, run: Run) -> None:
        self._add(self.encode(run.row))

    def rows_completed(self, run: Run, rows: np.ndarray) -> None:
        pieces = self.encode_rows(rows)
        self._pending.extend(pieces)
        self._pending_size += sum(map(len, pieces))
        if self._pending_size >= self.CHUNK:
            self._flush()

    def takes_rows(self) -> bool:
        return True

    def encode_rows(self, rows: np.ndarray) -> list[bytes]:
        """Each row's bytes (``rows``: points x columns, float64), as ``encode`` gives them."""
        return [self.encode(tuple(row)) for row in rows.tolist()]

    def _add(self, data: bytes) -> None:
        self._pending.append(data)
        self._pending_size += len(data)
        if self._pending_size >= self.CHUNK:
            self._flush()

    def _flush(self) -> None:
        """Write the gathered rows; on failure cut the file back to the last whole row that fitted."""
        assert self._fd is not None  # rows are added after initialized opened the file, flushed before it closes
        pieces, data = self._pending, b"".join(self._pending)
        self._pending, self._pending_size = [], 0
        if self._failed or not pieces:  # after a failure the file ends at its last whole row: nothing after it
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
                self._last = piece
            if not self.stream:
                os.ftruncate(self._fd, self._committed + whole)
            raise self._write_error(exc) from None
        self._committed += len(data)
        self._rows += len(pieces)
        self._last = pieces[-1]

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
        ok, self.profile = result.ok, result.profile
        for step in (self._flush, self._complete):
            try:
                step()
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
        destination = self.path if ok else partial_path(self.path)
        if self.SIDECAR and self.profile.fmus:
            try:
                write_sidecar(destination, self.profile, result.status, result.end_time)
            except OSError as exc:
                result.status, result.message = "error", result.message or f"writing the FMU profile failed: {exc}"
                destination = partial_path(self.path)
        os.replace(self._tmp, destination)  # a failed run leaves an earlier run's file at ``path`` as it was
        self.written = destination
        self.close()

    def _complete(self) -> None:
        if not self.stream and self._rows:  # a file cut before its header's end stays empty
            self.complete(self._rows - 1, self._last)

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


class CsvWriter(ResultFile):
    """The run's rows as FMI cross-check CSV (quoted header, ``time`` first, every value as ``repr``, which reads
    back bit for bit; readable by ``fmpy.util.read_csv``), streamed as ``ResultFile`` says; a device or a FIFO is
    written straight through. The run's FMU profile goes beside a regular file, as JSON (``x.csv``:
    ``x.profile.json``, ``x.partial.csv``: ``x.partial.profile.json``; ``fmu_profile.write_sidecar``), where the run
    had an FMU. A file whose name does not end in ``.csv`` (``x.xlsx``) is refused: CSV text under
    another format's name would not open there."""

    FORMAT, SUFFIX = "CSV", ".csv"
    SIDECAR = True

    def header(self, run: Run) -> bytes:
        return csv_header(run.column_names).encode()

    def encode(self, row: tuple[float, ...]) -> bytes:
        return csv_line(row)

    def encode_rows(self, rows: np.ndarray) -> list[bytes]:
        return csv_lines(rows).splitlines(keepends=True)


class MatWriter(ResultFile):
    """The run's rows as Dymola's result format 1.1 (a MATLAB v4 file, little-endian; what Dymola and OpenModelica
    write, OMEdit and Dymola plot, ``scipy.io.loadmat`` and DyMat read), streamed as ``ResultFile`` says. Its
    matrices, stored transposed (``binTrans``) so that each point's values are contiguous, as OpenModelica does:

    - ``Aclass`` (char 4 x 11): "Atrajectory", "1.1", "", "binTrans".
    - ``name``, ``description`` (char, one column per variable, padded with NULs): ``time`` and the columns of the
      CSV; the description is the unit in brackets ("Simulation time [s]", "[m]"), where OMEdit reads it.
    - ``dataInfo`` (int32, 4 per variable): time ``(0, 1, 0, -1)`` (the abscissa, data_2's first row), every other
      column ``(2, k, 0, -1)``: row k of ``data_2``, linear interpolation, undefined outside the run.
    - ``data_1`` (float64, 1 x 2): time's first and last recorded value; no parameters: the recorded outputs may
      change at every point, so all go to ``data_2`` (OpenModelica's ``data_1`` holds parameters, read as
      constants).
    - ``data_2`` (float64, n x points): one column per recorded point, in the CSV's order and bits; the header's
      column count and ``data_1``'s last time are written when the run ends (a partial file's too).
    - ``profile_name`` (char) and ``profile_data`` (float64, 2 x entries: calls, seconds), after ``data_2`` where
      the run had an FMU: the FMU profile (``fmu_profile.Profile.matrices``), which readers of the format that stop
      at ``data_2`` (Dymola's, OpenModelica's) pass over.

    A FIFO or device (it cannot be completed at its end) and non-ASCII names (``ASCII``) are refused."""

    FORMAT, SUFFIX = "MAT (Dymola's result format)", ".mat"
    STREAMS = False
    #: a char matrix's byte per character is read as Latin-1 by scipy.io.loadmat (DyMat too) and as ASCII by Modelica
    #: tools: UTF-8 names would come back garbled (masse\u0301 as masseÌ\x81), so names must be ASCII
    ASCII = True
    #: the matrix types (MATLAB v4 ``MOPT``, little-endian): float64, int32, text as uint8

    def header(self, run: Run) -> bytes:
        head, self._data_1, self._data_2 = trajectory_head(run.column_names, run.units, run.row[0])
        self._pack = struct.Struct(f"<{len(run.column_names)}d").pack
        return head

    def encode(self, row: tuple[float, ...]) -> bytes:
        return self._pack(*row)

    def encode_rows(self, rows: np.ndarray) -> list[bytes]:
        data, size = rows.astype("<f8").tobytes(), 8 * rows.shape[1]
        return [data[k:k + size] for k in range(0, len(data), size)]

    def complete(self, rows: int, last: bytes) -> None:
        """data_2's column count (the points written whole) and data_1's last time, in place."""
        assert self._fd is not None  # completed before the file is closed
        if rows >= 2 ** 31:
            raise OSError(errno.EFBIG, f"{self.path}: {rows} points, more than a MAT v4 file holds (2**31 - 1); "
                                       "record fewer (--output-interval) or write .csv")
        if rows:
            os.pwrite(self._fd, struct.pack("<d", struct.unpack_from("<d", last)[0]), self._data_1 + 8)
        os.pwrite(self._fd, struct.pack("<i", rows), self._data_2 + 8)
        if not self._failed:  # the FMU profile after data_2 (a file cut at a full disk ends at its last point)
            os.pwrite(self._fd, self.profile.matrices(), self._committed)


#: the result file's format by suffix
WRITERS: dict[str, type[ResultFile]] = {".csv": CsvWriter, ".mat": MatWriter}


def result_writer(path: str | Path) -> ResultFile:
    """The writer of a result file by its suffix: ``.csv`` (``CsvWriter``) or ``.mat`` (``MatWriter``); a FIFO or
    a device is streamed as CSV (a ``.mat`` one is refused). Another suffix (``x.xlsx``) is refused with a
    ``ValueError`` naming the suffixes written, before anything runs."""
    suffix = target(path).suffix.lower()
    if suffix not in WRITERS and not is_stream(path):
        raise ValueError(f"{path}: results are written as CSV (.csv, the FMI cross-check format) or as MAT (.mat, "
                         "Dymola's result format, plotted by OMEdit); give a file name ending in .csv or .mat")
    return WRITERS.get(suffix, CsvWriter)(path)
