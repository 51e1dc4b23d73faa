"""Ctrl-C (SIGINT) as a request, not an exception.

A ``KeyboardInterrupt`` raised inside an FMU's Python code becomes ``fmi2Fatal`` (pythonfmu) and
can crash the host at teardown, so while a run is active SIGINT only sets ``INTERRUPT.requested``;
``simulate`` stops at the next macro step, writes what was computed and returns the result with
status "interrupted". ``mechfmu run`` installs the handler for its whole life (``install``).
"""
from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Interrupt:
    """Whether SIGINT arrived while the handler was installed."""

    def __init__(self) -> None:
        self.requested = False

    def handle(self, signum: int, frame: object) -> None:
        self.requested = True

    def install(self) -> None:
        """Make SIGINT a request for the rest of the process (the command line)."""
        signal.signal(signal.SIGINT, self.handle)

    @contextmanager
    def during_run(self) -> Iterator[None]:
        """SIGINT is a request while the block runs (main thread only; other threads cannot receive
        signals); the previous handler is restored afterwards. If the handler is already installed
        (the command line), nothing changes."""
        if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) == self.handle:
            yield
            return
        self.requested = False
        previous = signal.signal(signal.SIGINT, self.handle)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)


#: the process's one SIGINT flag
INTERRUPT = Interrupt()
