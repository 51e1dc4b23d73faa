"""A run's result plotted against the scenario's reference result and its tube, with its forces and switching states.

What a plot shows is chosen among ``QUANTITIES`` (default: all three, each where the system has it), panels top to
bottom, sharing the time axis [s]:

- positions: with a reference (``reference/*.csv``, the first by name, as ``mechfmu crosscheck`` reads it) the
  reference's columns, the run as a solid line, the reference dashed and the Modelica Association's tube around it
  as a band (csv-compare: around each reference point a rectangle of half-width 2e-3 of the time span and
  half-height 2e-3 of the signal's range, ``mechfmu.validation.msl.tube_violation``); without one the bodies'
  positions and angles, as ``mechfmu run --plot`` draws them. One panel per unit.
- forces: each connector's force law, its ``f`` output (tension positive; N, or N.m on a rotational connector,
  in a torque panel of its own), or a contact's ``normalForce`` [N] (SmoothSphereHalfSpaceForce); connectors with
  neither (a Rod: a rigid offset passing its element's force on) are left out.
- states: the switching states the system has (``STATES``), each on a track of its own with its levels named on
  the axis: an ElastoGap's ``contact`` (0 free, 1 contact), a CoordinateSpringDamperExt's or
  RotationalSpringDamperExt's ``frictionMode`` (its sign, the sign of v_rel while slipping, 0 sticking; only
  where its bristle friction acts: f_d + f_so > 0, frictionProportionalZone 0) and ``limitStopState`` (its sign:
  -1 on the lower stop, 0 free, +1 on the upper; only with useLimitStops). A smooth contact
  (SmoothSphereHalfSpaceForce) has no state: its force is smoothed across zero indentation, so it shows as a force.

Each axis says its quantity in words and unit (``mechfmu.master.observers.axis_label``); every drawn line has an SVG
id ``<panel>:<column>`` (``positions:mass.s``, ``forces:spring.f``, ``states:gap.contact``, the reference's
``reference:<column>``) and each panel's axes ``panel:<quantity>``. SVG (text kept as text) or PNG by the file's
suffix.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
#: what a plot can show, in its panels' order (module docstring); the default is all of them
QUANTITIES = ("positions", "forces", "states")
#: a connector's force outputs, the first one it has is drawn
FORCE_OUTPUTS = ("f", "normalForce")


@dataclass(frozen=True)
class State:
    """A switching state read from an output: ``level`` maps the output's value to the index of its level in
    ``words`` (the levels' names, lowest first); ``acts`` tells from a component's parameter values (a getter by
    name) whether the state can switch at all."""
    words: tuple[str, ...]
    level: Callable[[np.ndarray], np.ndarray]
    acts: Callable[[Callable[[str], Any]], bool] = lambda parameter: True


def _sign(values: np.ndarray) -> np.ndarray:
    return np.sign(values).astype(int) + 1


def _bristles(parameter: Callable[[str], Any]) -> bool:
    return (parameter("fDynamicFriction") + parameter("fStaticFrictionOffset") > 0
            and parameter("frictionProportionalZone") == 0 and not parameter("springForceUserFunction"))


#: output name (in any model) -> the switching state it holds (module docstring)
STATES = {
    "contact": State(("free", "contact"), lambda v: (v > 0.5).astype(int)),
    "frictionMode": State(("slip v<0", "stick", "slip v>0"), _sign, _bristles),
    "limitStopState": State(("lower stop", "free", "upper stop"), _sign,
                            lambda parameter: bool(parameter("useLimitStops"))
                            and not parameter("springForceUserFunction")),
}


def checked_suffix(path: str, option: str, suffixes: tuple[str, ...]) -> str:
    """``path`` if it ends in one of ``suffixes`` (the formats written), else a ValueError naming ``option``."""
    if Path(path).suffix.lower() not in suffixes:
        raise ValueError(f"{option} {path!r}: give a file name ending in {' or '.join(suffixes)} (the format written)")
    return path


def plot_quantities(text: str | None, plot: str | None = "") -> tuple[str, ...]:
    """The quantities a comma-separated ``text`` names (``QUANTITIES``; None: all of them), refused (ValueError) if
    one is unknown, none is given, or ``plot`` is None (``--plot-quantities`` without ``--plot``)."""
    if text is None:
        return QUANTITIES
    if plot is None:
        raise ValueError("--plot-quantities chooses what --plot draws: give --plot FILE as well")
    chosen = [q.strip() for q in text.split(",") if q.strip()]
    unknown = [q for q in chosen if q not in QUANTITIES]
    if unknown or not chosen:
        raise ValueError(f"--plot-quantities {text!r}: give a comma-separated list of {', '.join(QUANTITIES)}")
    return tuple(q for q in QUANTITIES if q in chosen)


def run_and_plot(scenario_path, path: str | Path, variables: list[str] | None = None,
                 quantities: tuple[str, ...] = QUANTITIES) -> tuple[Result, list[str]]:
    """Run a scenario as ``mechfmu run`` does (its FMUs, its own algorithm, step and stop) and plot the result
    (``plot_run``); returns the ``Result`` and the plotted columns (none if the run recorded nothing)."""
    from mechfmu.master.simulate import simulate
    from mechfmu.ssp.scenario import load_scenario
    scenario = load_scenario(scenario_path)
    result = simulate(scenario)
    if result.data is None or not len(result.data):
        return result, []
    return result, plot_run(result, scenario, path, variables, quantities)


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


def _parameters(scenario, name: str) -> Callable[[str], Any]:
    """A getter of a component's parameter values: the scenario's, else the model's default."""
    from mechfmu.components import COMPONENTS
    spec = scenario.components[name]
    cls = COMPONENTS.get(spec.fmu.stem)
    defaults = {p.name: p.default for p in cls.parameters} if cls else {}
    return lambda parameter: spec.parameters.get(parameter, defaults.get(parameter, 0))


def force_columns(result, scenario) -> list[str]:
    """Each connector's force column (``FORCE_OUTPUTS``: its first that the run recorded), in the SSD's order."""
    from mechfmu.drawing.ports import CONNECTOR, blocks
    columns = set(result.data.dtype.names or ())
    found = []
    for name, block in blocks(scenario).items():
        if block.category == CONNECTOR:
            found += [f"{name}.{output}" for output in FORCE_OUTPUTS if f"{name}.{output}" in columns][:1]
    return found


def state_columns(result, scenario) -> list[tuple[str, State]]:
    """The recorded columns holding a switching state that can switch (``STATES``), in the SSD's order."""
    columns = set(result.data.dtype.names or ())
    found = []
    for name in scenario.components:
        parameter = _parameters(scenario, name)
        found += [(f"{name}.{output}", state) for output, state in STATES.items()
                  if f"{name}.{output}" in columns and state.acts(parameter)]
    return found


def _states_panel(ax, result, states: list[tuple[str, State]]) -> None:
    """One track per state, the first on top: its levels one apart and named on the axis, the tracks 1.5 apart,
    each with its column's name above it."""
    from matplotlib.transforms import blended_transform_factory
    ticks, words = [], []
    base = 0.0
    for index, (name, state) in reversed(list(enumerate(states))):
        colour = f"C{index % 10}"
        levels = state.level(np.asarray(result.data[name]))
        ax.step(result.data["time"], base + levels, where="post", color=colour, linewidth=1.4, label=name,
                gid=f"states:{name}")
        ticks += [base + k for k in range(len(state.words))]
        words += list(state.words)
        base += len(state.words) - 1
        ax.text(0.005, base + 0.3, name, color=colour, fontsize="small", va="bottom",
                transform=blended_transform_factory(ax.transAxes, ax.transData))
        base += 1.5
    ax.set_yticks(ticks, words, fontsize="small")
    ax.set_ylim(-0.4, base - 0.8)
    ax.set_ylabel("state")
    ax.grid(True, axis="x", alpha=0.3)


def plot_run(result, scenario, path: str | Path, variables: list[str] | None = None,
             quantities: tuple[str, ...] = QUANTITIES) -> list[str]:
    """Write the plot of ``result`` (a recorded run of ``scenario``) to ``path`` (.svg or .png): the ``quantities``
    the system has (module docstring), with the scenario's reference and tube where it has one; returns the plotted
    columns."""
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
    names = plotted_columns(result, reference, variables) if "positions" in quantities else []
    forces = [n for n in force_columns(result, scenario) if n not in names] if "forces" in quantities else []
    states = state_columns(result, scenario) if "states" in quantities else []
    if not names and not forces and not states:
        raise ValueError(f"{scenario.name}: nothing to plot (no {' or '.join(quantities)} among the outputs); "
                         "choose the quantities or variables to plot")
    panels: list[tuple[str, str, list[str]]] = []  # (quantity, unit, columns)
    for quantity, columns in (("positions", names), ("forces", forces)):
        by_unit: dict[str, list[str]] = {}
        for name in columns:
            by_unit.setdefault(result.units.get(name, "1"), []).append(name)
        panels += [(quantity, unit, group) for unit, group in by_unit.items()]
    ratios = [1.0] * len(panels) + ([max(0.5, 0.16 * sum(len(s.words) + 0.5 for _, s in states))] if states else [])
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "mechfmu", "path.simplify": True}):
        fig, axes = plt.subplots(len(ratios), 1, figsize=(8, 1.2 + 2.4 * sum(ratios)), sharex=True, squeeze=False,
                                 gridspec_kw={"height_ratios": ratios})
        for ax, (quantity, unit, group) in zip(axes[:, 0], panels):
            ax.set_gid(f"panel:{quantity}")
            referenced = False
            for index, name in enumerate(group):
                colour = f"C{index % 10}"
                ax.plot(result.data["time"], result.data[name], color=colour, linewidth=1.4, label=name,
                        gid=f"{quantity}:{name}")
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
            ax.legend(handles, labels, fontsize="small", loc="best", ncol=1 + len(labels) // 7)
        if states:
            axes[-1, 0].set_gid("panel:states")
            _states_panel(axes[-1, 0], result, states)
        axes[-1, 0].set_xlabel("time [s]")
        step = result.data["time"][1] - result.data["time"][0] if len(result.data) > 1 else scenario.step_size
        axes[0, 0].set_title(f"{scenario.name}: {result.algorithm or scenario.algorithm}, step {step:.3g} s")
        fig.tight_layout()
        with replaced(target) as temporary:
            fig.savefig(temporary, dpi=110, metadata={"Date": None} if target.suffix.lower() == ".svg" else None)
        plt.close(fig)
    return names + forces + [name for name, _ in states]
