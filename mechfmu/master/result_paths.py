"""Where a result file goes and how it is opened: the partial file of a failed run, a symbolic link followed, a
FIFO or device opened for writing, and the lock that refuses a second writer of the same file
(``mechfmu.master.result_files``)."""
from __future__ import annotations

import errno
import fcntl
import os
import time
from pathlib import Path

from mechfmu.master.interrupt import INTERRUPT


def partial_path(path: Path) -> Path:
    """Where a failed or interrupted run leaves its rows: ``x.csv`` -> ``x.partial.csv``, ``x.mat`` ->
    ``x.partial.mat``."""
    return path.with_name(f"{path.stem}.partial{path.suffix}")


#: what a failed write means when the file (not the run) is at fault
WRITE_CAUSES = {errno.ENOSPC: "no space left on the disk; free space or write elsewhere",
                errno.EDQUOT: "the disk quota is used up; free space or write elsewhere",
                errno.EFBIG: "the file size limit (ulimit -f) or the file system's largest file was reached; "
                             "raise the limit, record fewer points (--output-interval) or write elsewhere"}


def target(path: str | Path) -> Path:
    """The file a result for ``path`` goes to: a symbolic link is followed (the link stays a link)."""
    return Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)


def open_stream(path: Path) -> int:
    """A FIFO or device opened for writing (blocking writes): a FIFO is waited for until it has a reader (Ctrl-C
    ends the wait: ``KeyboardInterrupt``); another failure is an ``OSError`` naming the path."""
    while True:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: a FIFO without a reader yet
                raise OSError(exc.errno, f"{path}: cannot open it for writing ({exc.strerror})") from None
        if INTERRUPT.requested:
            raise KeyboardInterrupt
        time.sleep(0.05)
    os.set_blocking(fd, True)
    return fd


def lock(path: Path) -> tuple[int, Path]:
    """The lock of a result file (``flock`` on ``.x.csv.lock`` beside it, released when its descriptor closes,
    also at a crash): (its descriptor, its path); a ``FileExistsError`` where another run holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_file = path.with_name(f".{path.name}.lock")
    while True:
        fd = os.open(lock_file, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise FileExistsError(f"{path}: another run is writing this file now (it holds {lock_file}); "
                                  "wait for it or write elsewhere") from None
        try:  # the holder before us may have removed the lock file: then lock the new one
            if os.stat(lock_file).st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    return fd, lock_file
