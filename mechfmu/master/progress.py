"""A run's progress on a terminal: ``ProgressBar``, a tqdm bar over simulated time."""
from __future__ import annotations

import math
import os
import sys
from typing import TYPE_CHECKING, TextIO

from mechfmu.master.observers import Observer

if TYPE_CHECKING:
    import numpy as np

    from mechfmu.master.result import Result, Run

#: wall-clock seconds a run goes on before its bar shows (a shorter run shows none); $MECHFMU_PROGRESS_DELAY
#: overrides it (0: at once, inf: never)
DELAY = 2.0
#: bar updates a run makes at most (tqdm throttles its drawing further, to 10 a second)
UPDATES = 1000


def progress_delay() -> float:
    """The bar's delay [s]: $MECHFMU_PROGRESS_DELAY if set, else ``DELAY``."""
    text = os.environ.get("MECHFMU_PROGRESS_DELAY", "").strip()
    try:
        return float(text) if text else DELAY
    except ValueError:
        raise ValueError(f"MECHFMU_PROGRESS_DELAY={text!r}: give the seconds before the progress bar shows, "
                         "e.g. 0 or inf") from None


class ProgressBar(Observer):
    """A tqdm bar of the run's simulated time t [s], from its start to ``stop`` (the macro steps where ``stop`` is
    None), on ``file`` (default: stderr) if it is a terminal, and nothing otherwise (piped or redirected output
    stays clean). The bar shows once the run has taken ``delay`` s of wall time (default ``progress_delay()``) and
    is cleared when the run ends, so a short run prints nothing. It is updated at most ``UPDATES`` times a run: a
    comparison per recorded point otherwise. ``label`` follows the scenario's name (``oscillator (error estimate)``)."""

    def __init__(self, stop: float | None = None, file: TextIO | None = None, delay: float | None = None,
                 label: str = ""):
        self.stop = stop
        self.label = label  # what the run is, after the scenario's name (the error estimate's companion run)
        self.file = file if file is not None else sys.stderr
        self.delay = progress_delay() if delay is None else delay
        self.shown = bool(getattr(self.file, "isatty", lambda: False)())
        self._bar = None
        self._next = math.inf  # the step index of the next update
        self._stride = 1  # steps between updates
        self._start = 0.0  # [s] the run's start time

    def initialized(self, run: Run) -> None:
        if not self.shown or not math.isfinite(self.delay):
            return
        from tqdm import tqdm

        self._start, self._stride = run.time, max(1, run.n_steps // UPDATES)
        desc = f"{run.scenario_name} ({self.label})" if self.label else run.scenario_name
        self._next = self._stride
        if self.stop is None:
            self._bar = tqdm(total=run.n_steps, unit="step", desc=desc, leave=False, file=self.file,
                             delay=self.delay)
            return
        self._bar = tqdm(total=self.stop - self._start, desc=desc, leave=False, file=self.file,
                         delay=self.delay, bar_format="{desc}: {percentage:3.0f}%|{bar}| t = {n:.6g}/{total:.6g} s "
                                                      "[{elapsed}<{remaining}]")

    def step_completed(self, run: Run) -> None:
        if run.step_index < self._next:
            return
        assert self._bar is not None  # _next is finite once the bar is made
        self._next = run.step_index + self._stride
        self._bar.n = run.step_index if self.stop is None else run.time - self._start
        self._bar.update(0)  # drawn where tqdm's interval and delay allow

    def rows_completed(self, run: Run, rows: np.ndarray) -> None:
        self.step_completed(run)  # the bar at the last

    def takes_rows(self) -> bool:
        return True

    def finished(self, run: Run, result: Result) -> None:
        self.close()

    def close(self) -> None:
        """Clear the bar (it leaves no line behind)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self._next = math.inf
