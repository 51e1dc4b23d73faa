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

    def __init__(self):
        self.rows: list[tuple[float, ...]] = []
        self.names: list[str] = []

    def initialized(self, run: "Run") -> None:
        self.names = run.column_names
        self.rows = [run.row]

    def step_completed(self, run: "Run") -> None:
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

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._file: Any = None

    def initialized(self, run: "Run") -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "w")
        self._file.write(csv_header(run.column_names))
        self._file.write(csv_row(run.row))

    def step_completed(self, run: "Run") -> None:
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
        self._bar.update(run.step_index - self._bar.n)

    def finished(self, run: "Run", result: "Result") -> None:
        self._bar.close()


class PlotWriter(Observer):
    """Draws the recorded result when the run ends (a failed run too): ``plot_result``."""

    def __init__(self, path: str | Path, variables: list[str] | None = None):
        self.path = Path(path)
        self.variables = variables
        self.plotted: list[str] = []

    def finished(self, run: "Run", result: "Result") -> None:
        if result.data is not None and len(result.data):
            self.plotted = plot_result(result, self.path, run.scenario_name, self.variables)


#: what a body's position is called: 1D (s, phi) and 3D (position.x/y/z)
POSITION_NAMES = ("s", "phi", "position.x", "position.y", "position.z")


def plot_result(result: "Result", path: str | Path, title: str, variables: list[str] | None = None) -> list[str]:
    """PNG of the chosen columns (names or glob patterns; default: every body's position or angle),
    one subplot per unit with the quantity and unit on its axis; returns the plotted columns."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .components.base import QUANTITIES
    from .result import selector

    columns = [n for n in result.data.dtype.names if n != "time"]
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
        ax.set_ylabel(f"{QUANTITIES.get(unit, ('', 'value'))[1]} [{unit}]")
        ax.legend(fontsize="small")
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel("time [s]")
    axes[0, 0].set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return names
