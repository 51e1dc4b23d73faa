"""A run's result plotted against the scenario's reference result and its tube.

A scenario with a reference (``reference/*.csv``, the first by name, as ``mechfmu crosscheck`` reads it) is drawn
on the reference's columns: the run as a solid line, the reference dashed and the Modelica Association's tube
around it as a band (csv-compare: around each reference point a rectangle of half-width 2e-3 of the time span and
half-height 2e-3 of the signal's range, ``mechfmu.validation.msl.tube_violation``). Without one, the
bodies' positions and angles are drawn, as ``mechfmu run --plot`` does. One subplot per unit, its axis saying the
quantity in words (``mechfmu.master.observers.axis_label``). SVG (text kept as text) or PNG by the file's suffix.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from mechfmu.master.observers import POSITION_NAMES, axis_label
from mechfmu.ssp.files import replaced

if TYPE_CHECKING:
    from mechfmu.master.result import Result

#: the tube's half-width and half-height as fractions of the time span and of the signal's range
TUBE = 2e-3
FORMATS = (".svg", ".png")
#: runs of time points a drawn tube is coarsened to (``coarsened``)
BAND_POINTS = 300


def checked_suffix(path: str, option: str, suffixes: tuple[str, ...]) -> str:
    """``path`` if it ends in one of ``suffixes`` (the formats written), else a ValueError naming ``option``."""
    if Path(path).suffix.lower() not in suffixes:
        raise ValueError(f"{option} {path!r}: give a file name ending in {' or '.join(suffixes)} (the format written)")
    return path


def run_and_plot(scenario_path, path: str | Path, variables: list[str] | None = None) -> tuple[Result, list[str]]:
    """Run a scenario as ``mechfmu run`` does (its FMUs, its own algorithm, step and stop) and plot the result
    (``plot_run``); returns the ``Result`` and the plotted columns (none if the run recorded nothing)."""
    from mechfmu.master.simulate import simulate
    from mechfmu.ssp.scenario import load_scenario
    scenario = load_scenario(scenario_path)
    result = simulate(scenario)
    if result.data is None or not len(result.data):
        return result, []
    return result, plot_run(result, scenario, path, variables)


def reference_file(scenario) -> Path | None:
    """The scenario's reference result (the first ``reference/*.csv`` by name), or None."""
    found = sorted((Path(scenario.folder) / "reference").glob("*.csv"))
    return found[0] if found else None


def tube(time: np.ndarray, values: np.ndarray, tolerance: float = TUBE) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper edges of the reference's tube at its own time points (``mechfmu.validation.msl.tube_edges``, the
    bounds ``tube_violation`` checks a run against)."""
    from mechfmu.validation.msl import tube_edges

    return tube_edges(time, values, time, tolerance)


def coarsened(time: np.ndarray, low: np.ndarray, high: np.ndarray, points: int = BAND_POINTS
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A band of about ``points`` points that holds the given one (small as SVG): the time points cut into
    ``points`` runs, at each run's middle the lowest ``low`` and highest ``high`` of it and its two neighbours
    (so the straight lines between middles stay outside the band), and the first and last points as they are."""
    if len(time) <= points:
        return time, low, high
    cuts = np.linspace(0, len(time), points + 1).astype(int)
    lows, highs = np.minimum.reduceat(low, cuts[:-1]), np.maximum.reduceat(high, cuts[:-1])
    lows = np.minimum(lows, np.minimum(np.r_[lows[0], lows[:-1]], np.r_[lows[1:], lows[-1]]))
    highs = np.maximum(highs, np.maximum(np.r_[highs[0], highs[:-1]], np.r_[highs[1:], highs[-1]]))
    middles = (time[cuts[:-1]] + time[cuts[1:] - 1]) / 2
    return (np.r_[time[0], middles, time[-1]], np.r_[lows[0], lows, lows[-1]], np.r_[highs[0], highs, highs[-1]])


def plotted_columns(result, reference: np.ndarray | None, variables: list[str] | None = None) -> list[str]:
    """What the plot draws: ``variables`` (names or patterns), else the reference's columns the run recorded,
    else every body's position or angle."""
    from mechfmu.master.result import selector
    columns = [n for n in result.data.dtype.names or () if n != "time"]
    if variables:
        select = selector(variables, columns, "--plot-variables")
        return [n for n in columns if select(n)]
    if reference is not None:
        chosen = [n for n in reference.dtype.names or () if n != "time" and n in columns]
        if chosen:
            return chosen
    return [n for n in columns if n.split(".", 1)[1] in POSITION_NAMES]


def plot_run(result, scenario, path: str | Path, variables: list[str] | None = None) -> list[str]:
    """Write the plot of ``result`` (a recorded run of ``scenario``) to ``path`` (.svg or .png) with the
    scenario's reference and tube where it has one; returns the plotted columns."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    target = Path(checked_suffix(str(path), "plot", FORMATS))
    if result.data is None or not len(result.data):
        raise ValueError(f"{scenario.name}: the run recorded no result to plot ({result.message or result.status})")
    source = reference_file(scenario)
    reference = None
    if source is not None:
        from mechfmu.validation.msl import read_msl_reference
        reference = read_msl_reference(source)
    names = plotted_columns(result, reference, variables)
    if not names:
        raise ValueError(f"{scenario.name}: nothing to plot (no body position or angle among the outputs); "
                         "choose the variables to plot")
    by_unit: dict[str, list[str]] = {}
    for name in names:
        by_unit.setdefault(result.units.get(name, "1"), []).append(name)
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "mechfmu", "path.simplify": True}):
        fig, axes = plt.subplots(len(by_unit), 1, figsize=(8, 1.2 + 2.4 * len(by_unit)), sharex=True, squeeze=False)
        referenced = False
        for ax, (unit, group) in zip(axes[:, 0], by_unit.items()):
            for index, name in enumerate(group):
                colour = f"C{index % 10}"
                ax.plot(result.data["time"], result.data[name], color=colour, linewidth=1.4, label=name)
                if reference is not None and name in (reference.dtype.names or ()):
                    band = coarsened(reference["time"], *tube(reference["time"], reference[name]))
                    ax.fill_between(*band, color=colour, alpha=0.18, linewidth=0)
                    ax.plot(reference["time"], reference[name], color="black", linewidth=0.9, linestyle="--",
                            gid=f"reference:{name}")
                    referenced = True
            ax.set_ylabel(axis_label(unit, group))
            ax.grid(True, alpha=0.3)
            handles, labels = ax.get_legend_handles_labels()
            if referenced:
                handles += [Line2D([], [], color="black", linestyle="--", linewidth=0.9),
                            Patch(color="grey", alpha=0.3)]
                labels += [f"reference ({source.name if source else ''})", "tube (2e-3 of time span and range)"]
            ax.legend(handles, labels, fontsize="small", loc="best")
        axes[-1, 0].set_xlabel("time [s]")
        step = result.data["time"][1] - result.data["time"][0] if len(result.data) > 1 else scenario.step_size
        axes[0, 0].set_title(f"{scenario.name}: {result.algorithm or scenario.algorithm}, step {step:.3g} s")
        fig.tight_layout()
        with replaced(target) as temporary:
            fig.savefig(temporary, dpi=110, metadata={"Date": None} if target.suffix.lower() == ".svg" else None)
        plt.close(fig)
    return names
