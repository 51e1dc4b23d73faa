"""Observers: receive ``initialized``, ``step_completed`` and ``finished`` events from ``simulate``.

Recording, CSV streaming and progress display are observers, not flags on ``simulate``.
Each observer gets the ``Run`` (time, step index, column names and ``row``, the values of the
current communication point, read once by ``simulate`` whatever observers are attached).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .result import Result, Run


class Observer:
    def initialized(self, run: "Run") -> None: ...
    def step_completed(self, run: "Run") -> None: ...
    def finished(self, run: "Run", result: "Result") -> None: ...


class Recorder(Observer):
    """Keeps every recorded row; ``array()`` is a structured array with ``time`` first."""

    def __init__(self, every: int = 1):
        self.every = max(1, int(every))
        self.rows: list[tuple[float, ...]] = []
        self.names: list[str] = []

    def initialized(self, run: "Run") -> None:
        self.names = run.column_names
        self.rows = [run.row]

    def step_completed(self, run: "Run") -> None:
        if run.step_index % self.every == 0:
            self.rows.append(run.row)

    def array(self) -> np.ndarray:
        dtype = np.dtype([(n, np.float64) for n in self.names])
        return np.array(self.rows, dtype=dtype)


def csv_header(names: list[str]) -> str:
    return ",".join(f'"{n}"' for n in names) + "\n"


def csv_row(row: tuple[float, ...]) -> str:
    return ",".join(repr(float(v)) for v in row) + "\n"


class CsvWriter(Observer):
    """Streams rows as they come (FMI cross-check CSV: quoted header, ``time`` first), so a
    failed run keeps everything up to the failure. Readable by ``fmpy.util.read_csv``."""

    def __init__(self, path: str | Path, every: int = 1):
        self.path = Path(path)
        self.every = max(1, int(every))
        self._file: Any = None

    def initialized(self, run: "Run") -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "w")
        self._file.write(csv_header(run.column_names))
        self._file.write(csv_row(run.row))

    def step_completed(self, run: "Run") -> None:
        if run.step_index % self.every == 0:
            self._file.write(csv_row(run.row))

    def finished(self, run: "Run", result: "Result") -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class ProgressBar(Observer):
    """A tqdm progress bar over simulated time."""

    def initialized(self, run: "Run") -> None:
        from tqdm import tqdm
        self._bar = tqdm(total=run.n_steps, unit="step", desc=run.scenario_name, leave=False)

    def step_completed(self, run: "Run") -> None:
        self._bar.update(1)

    def finished(self, run: "Run", result: "Result") -> None:
        self._bar.close()
