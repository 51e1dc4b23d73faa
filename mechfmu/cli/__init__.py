"""The ``mechfmu`` command: its arguments (``parser``) and what each subcommand does (``main``); ``command``, the
program's entry (the console script and ``python -m mechfmu.cli``)."""
from __future__ import annotations

import atexit
import os
import sys

from mechfmu.cli.main import main

__all__ = ["command", "main"]


def command() -> None:
    """``main`` as a program: its exit code, and the process's end without Python's teardown. What a run leaves to
    the end is done here first (the streams flushed, the exit functions run: unpacked archives removed, files
    closed; the C streams of the loaded libraries flushed); what is skipped is the freeing of every object and
    module one by one, which took 55 ms after a monolithic run of five FMUs, a tenth of its process."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed, or a closed pipe: nothing more to say there
            pass
    atexit._run_exitfuncs()
    try:
        import ctypes
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError, TypeError):  # no C library by that name (Windows): its streams are unbuffered
        pass
    os._exit(code)
