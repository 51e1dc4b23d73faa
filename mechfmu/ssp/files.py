"""Writing a file whole or not at all: ``replaced``.

Every file mechfmu writes for a user (an archive, a scenario's SSD, a diagram, a plot, a gallery page) is written
to a temporary file beside its target and renamed over the target once it is complete, so a failed write (a
full disk, the file size limit, an error on the way) leaves the target as it was, and a symbolic link at the
target is replaced, not followed. Results streamed during a run have their own writer
(``mechfmu.master.result_files``: CSV and MAT).
"""
from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _naming(target: Path, exc: OSError) -> OSError:
    """The error of a failed write, saying the file and the cause, its errno kept (``str`` without ``[Errno n]``)."""
    error = OSError(f"{target}: not written: {exc.strerror or exc}")
    error.errno = exc.errno
    return error


@contextmanager
def replaced(target: str | Path) -> Iterator[Path]:
    """A temporary file beside ``target`` (same suffix, so a writer that reads the format from it still can) for
    the block to write; renamed over ``target`` when the block ends, removed when it fails. An ``OSError`` names
    ``target`` and the cause (``[Errno 28] No space left on device`` becomes ``x.ssp: not written: No space left
    on device``)."""
    target = Path(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=f".tmp{target.suffix}", dir=target.parent)
        os.close(fd)
        os.chmod(name, 0o666 & ~_umask())  # a file like any other the user writes, not mkstemp's 0600
    except OSError as exc:
        raise _naming(target, exc) from None
    temporary = Path(name)
    try:
        yield temporary
        os.replace(temporary, target)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise _naming(target, exc) from None
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
