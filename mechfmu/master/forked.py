"""A function run in a child process (POSIX ``fork``) beside this one, its answer pickled back through a pipe:
the monolithic master's error-estimate companion beside its run (``mechfmu.master.alongside``).

The child starts with this process's memory (loaded FMUs and all) and changes nothing of it; it ignores SIGINT and
SIGHUP (a Ctrl-C reaches the terminal's whole process group: the run answers it), ends with this process
(PR_SET_PDEATHSIG) and leaves by ``os._exit`` (this process's buffers and exit handlers are not its own to run).
"""
from __future__ import annotations

import os
import pickle
import select
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

#: the child's pickled answer is read in pieces of this many bytes; a message in it is cut to MESSAGE
PIECE, MESSAGE = 1 << 16, 4000


class Interrupted(Exception):
    """An interrupt request (``INTERRUPT``) came while the child's answer was waited for: the child is ended."""


class Forked:
    """``work()`` in a child process from now on (the module's docstring): ``result()`` waits for it and returns
    what it returned, or raises ``CompanionLost`` (it raised, its process ended without an answer, or it did not
    answer in time) or ``Interrupted`` (an interrupt request while waiting: it is ended); ``cancel()`` ends it
    (SIGKILL) and reaps it."""

    def __init__(self, work: Callable[[], Any]) -> None:
        read, write = os.pipe()
        parent = os.getpid()
        with warnings.catch_warnings():  # Python 3.12 warns of any other thread: numpy's BLAS has its own workers,
            warnings.simplefilter("ignore", DeprecationWarning)  # which fork safely (pthread_atfork)
            pid = os.fork()
        if pid == 0:
            os.close(read)
            _child(work, write, parent)
        os.close(write)
        self.pid, self.read = pid, read

    def result(self, timeout: float) -> Any:
        """What ``work()`` returned, waited for at most ``timeout`` [s] (then ``CompanionLost``: a companion that
        never answers, its process stuck, must not hold the run's end)."""
        from mechfmu.master.interrupt import INTERRUPT
        pieces, deadline = [], time.monotonic() + timeout
        try:
            while True:
                if INTERRUPT.requested:
                    raise Interrupted
                if not select.select([self.read], [], [], 0.05)[0]:
                    if time.monotonic() > deadline:
                        raise CompanionLost(f"the companion run's process did not answer within {timeout:.3g} s")
                    continue
                piece = os.read(self.read, PIECE)
                if not piece:
                    break
                pieces.append(piece)
            self._reap(0)  # its answer is whole: it is ending
        finally:
            self.cancel()
        answer = b"".join(pieces)
        if not answer:
            raise CompanionLost(f"the companion run's process ended without an answer ({self.ended})")
        kind, value = pickle.loads(answer)
        if kind == "error":
            raise CompanionLost(value)
        return value

    def cancel(self) -> None:
        """End the child (SIGKILL where it still runs) and reap it; close the pipe. Idempotent."""
        if self.pid and not self._reap(os.WNOHANG):
            os.kill(self.pid, signal.SIGKILL)
            self._reap(0)
        if self.read >= 0:
            os.close(self.read)
            self.read = -1

    def _reap(self, options: int) -> bool:
        """Whether the child has ended (reaped now, with ``ended`` saying how), waiting for it unless ``options``
        is ``os.WNOHANG``."""
        try:
            done, status = os.waitpid(self.pid, options)
        except ChildProcessError:  # reaped by a SIGCHLD handler of the host's
            self.pid, self.ended = 0, "reaped elsewhere"
            return True
        if not done:
            return False
        self.pid = 0
        self.ended = (f"killed by {signal.Signals(os.WTERMSIG(status)).name}" if os.WIFSIGNALED(status)
                      else f"exit status {os.WEXITSTATUS(status)}")
        return True

    ended = "still running"


class CompanionLost(Exception):
    """The child failed: the reason (its error, how its process ended, or that it did not answer in time)."""


def _child(work: Callable[[], Any], write: int, parent: int) -> None:
    """The child: ``work()``'s value or error through ``write``, then ``os._exit``."""
    try:
        for number in (signal.SIGINT, getattr(signal, "SIGHUP", signal.SIGINT)):
            signal.signal(number, signal.SIG_IGN)
        try:  # ends with the parent (Linux: PR_SET_PDEATHSIG, SIGKILL)
            import ctypes
            ctypes.CDLL(None).prctl(1, int(signal.SIGKILL))
        except (OSError, AttributeError):
            pass
        if os.getppid() != parent:
            os._exit(1)
        try:
            answer = pickle.dumps(("ok", work()))
        except BaseException as exc:  # noqa: BLE001 - handed to the parent
            answer = pickle.dumps(("error", f"{type(exc).__name__}: {exc}"[:MESSAGE]))
        view = memoryview(answer)
        while view:
            view = view[os.write(write, view[:PIECE]):]
    finally:
        os._exit(0)


def fork_allowed() -> bool:
    """Whether a child may be forked here: Linux (``fork`` is safe there for a
    process whose only Python thread forks; macOS's system libraries are not), and no other Python thread (a lock
    another thread holds would stay held in the child)."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1
