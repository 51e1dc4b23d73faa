"""Ctrl-C (SIGINT), and SIGTERM and SIGHUP (what ``timeout``, ``kill`` and batch schedulers send, and a closed
terminal), as a request, not an exception.

A ``KeyboardInterrupt`` raised inside an FMU's Python code becomes ``fmi2Fatal`` (pythonfmu) and
can crash the host at teardown, and SIGTERM's default ends the process with its results in a hidden temporary
file, so while a run is active these signals only set ``INTERRUPT.requested`` (and which one arrived);
``simulate`` stops at the next macro step, writes what was computed and returns the result with
status "interrupted". ``mechfmu run`` installs the handler for its whole life (``install``) and exits with
128 + the signal's number (130 after Ctrl-C, 143 after SIGTERM).
"""
from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: the signals that ask a run to stop and keep its results (SIGHUP does not exist on Windows)
SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class Interrupt:
    """Whether one of ``SIGNALS`` arrived while the handler was installed, and which."""

    def __init__(self) -> None:
        self.requested = False
        self.signum = int(signal.SIGINT)

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    def handle(self, signum: int, frame: object) -> None:
        self.requested, self.signum = True, signum

    def install(self) -> None:
        """Make the signals a request for the rest of the process (the command line)."""
        for number in SIGNALS:
            signal.signal(number, self.handle)

    def uninstall(self) -> None:
        """Python's defaults again: KeyboardInterrupt for SIGINT, the end of the process for the others."""
        for number in SIGNALS:
            signal.signal(number, signal.default_int_handler if number == signal.SIGINT else signal.SIG_DFL)

    @contextmanager
    def during_run(self) -> Iterator[None]:
        """The signals are a request while the block runs (main thread only; other threads cannot receive
        signals); the previous handlers are restored afterwards. If the handler is already installed
        (the command line), nothing changes."""
        if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) == self.handle:
            yield
            return
        self.requested = False
        previous = {number: signal.signal(number, self.handle) for number in SIGNALS}
        try:
            yield
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)


#: the process's one interrupt request
INTERRUPT = Interrupt()


class RunInterrupted(KeyboardInterrupt):
    """The ``KeyboardInterrupt`` a script gets from a run stopped by Ctrl-C (``System.run``), after the run kept its
    results: ``result`` is the interrupted run's (status "interrupted", every row computed up to the stop)."""

    def __init__(self, result: Any) -> None:
        super().__init__(result.message)
        self.result = result
