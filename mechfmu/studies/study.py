"""Parameter studies: what to vary, what to measure, one run per point.

A ``Study`` names a scenario, the settings every run shares (``fixed``), the axes to vary and the
metrics to compute. A setting is ``COMPONENT.PARAMETER`` (an override, ``mechfmu.ssp.overrides``),
``algorithm``, ``step``, ``stop`` [s] or ``option.KEY`` (an algorithm option), so a study can compare
couplings as well as parameters. Axes:

- ``grid``: a list of values per setting, or a text ``START:STOP:N`` (N evenly spaced values, ends
  included) or ``a,b,c``; the runs are the Cartesian product, the last axis varying fastest;
- ``ranges`` with ``samples`` > 0: that many space-filling points over the [low, high] of each
  range (``method`` "sobol" or "lhs", scipy.stats.qmc, scrambled with ``seed``: the same points on
  every machine), combined with every grid point;
- ``tied``: settings that take a varied setting's value in every run (both gaps of a scenario swept
  together: ``{"elastoGap2.c": "elastoGap1.c"}``); they are not columns of the table.

Runs are numbered in that order, so a study's table is the same whatever the number of workers or the
order in which they finish. A metric is ``NAME = EXPR``, a safe expression (components/expressions.py)
over the aggregates ``final(X)``, ``initial(X)``, ``max(X)``, ``min(X)``, ``maxabs(X)`` and
``integral(X)`` (trapezoidal over the recorded points, X's unit times s) of recorded outputs X
(``component.variable``), e.g. ``peak = maxabs(elastoGap1.f)``; ``max(X, T0)`` and ``max(X, T0, T1)``
take only the points with T0 <= time <= T1 [s] (e.g. the rebound after an impact).
"""
from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mechfmu.components.expressions import Expression, ExpressionError

#: settings that are not component parameters
RUN_SETTINGS = ("algorithm", "step", "stop")
OPTION = "option."
#: aggregate(values, times) of one output over the recorded points (of a time window)
AGGREGATES: dict[str, Callable[[np.ndarray, np.ndarray], Any]] = {
    "final": lambda x, t: x[-1], "initial": lambda x, t: x[0], "max": lambda x, t: np.max(x),
    "min": lambda x, t: np.min(x), "maxabs": lambda x, t: np.max(np.abs(x)),
    "integral": lambda x, t: np.trapezoid(x, t)}
_NUMBER = r"\s*,\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
_AGGREGATE = re.compile(r"\b(" + "|".join(AGGREGATES) + r")\(\s*([A-Za-z_][\w\[\]]*(?:\.[\w\[\]]+)*)"
                        rf"(?:{_NUMBER}(?:{_NUMBER})?)?\s*\)")


def _linspace_spec(name: str, spec: str) -> tuple[float, float, int]:
    """START, STOP and N of a ``START:STOP:N`` text (N >= 1)."""
    parts = spec.split(":")
    try:
        if len(parts) != 3:
            raise ValueError
        start, stop, n = float(parts[0]), float(parts[1]), int(parts[2])
    except ValueError:
        raise ValueError(f"grid {name} = {spec!r}: use START:STOP:N (N evenly spaced values, ends included, "
                         "e.g. 0.5:2:4) or a,b,c") from None
    if n < 1:
        raise ValueError(f"grid {name} = {spec!r}: N must be >= 1")
    return start, stop, n


def grid_length(name: str, spec: Any) -> int:
    """How many values the axis ``spec`` has, without making them (a text START:STOP:N has N)."""
    if isinstance(spec, str) and ":" in spec:
        return _linspace_spec(name, spec)[2]
    return len(grid_values(name, spec))


def grid_values(name: str, spec: Any) -> list[Any]:
    """The values of one grid axis: a list as it is, ``START:STOP:N`` or ``a,b,c`` from a text (a text with a
    colon is START:STOP:N)."""
    if isinstance(spec, (list, tuple)):
        values = list(spec)
    elif isinstance(spec, str) and ":" in spec:
        start, stop, n = _linspace_spec(name, spec)
        values = [float(x) for x in np.linspace(start, stop, n)]
    elif isinstance(spec, str):
        values = [v.strip() for v in spec.split(",") if v.strip()]
    else:
        values = [spec]
    if not values:
        raise ValueError(f"grid {name} = {spec!r}: no values")
    return values


#: the columns of a study's table besides its axes and metrics: the run's index first, its outcome last
INDEX_COLUMN = "index"
FIXED_COLUMNS = ("status", "message", "counters", "error_estimate", "error_ratio", "error_variable", "wall_s")


class Metric:
    """``NAME = EXPR`` over aggregates of recorded outputs (see the module)."""

    def __init__(self, name: str, text: str):
        if not name.isidentifier():
            raise ValueError(f"metric {name!r}: its name must be an identifier (letters, digits, _)")
        if name in (INDEX_COLUMN, *FIXED_COLUMNS):
            raise ValueError(f"metric {name!r}: the table has a column of that name already "
                             f"({', '.join((INDEX_COLUMN, *FIXED_COLUMNS))}); give the metric another name")
        self.name, self.text = name, text
        #: placeholder -> (aggregate, column, window start [s], window end [s])
        self.columns: dict[str, tuple[str, str, float, float]] = {}

        def placeholder(match: re.Match) -> str:
            key = f"_a{len(self.columns)}"
            start, end = (float(g) if g is not None else default for g, default in
                          ((match.group(3), -math.inf), (match.group(4), math.inf)))
            if not start < end:
                raise ValueError(f"metric {name} = {text!r}: the window {match.group(0)} needs start < end")
            self.columns[key] = (match.group(1), match.group(2), start, end)
            return key

        rewritten = _AGGREGATE.sub(placeholder, text)
        if not self.columns:
            raise ValueError(f"metric {name} = {text!r}: it uses no output; write e.g. final(mass.s), max(x.f), "
                             f"aggregates: {', '.join(AGGREGATES)}")
        try:
            self.expression = Expression(rewritten, self.columns)
        except ExpressionError as exc:
            raise ValueError(f"metric {name} = {text!r}: {exc}") from None

    @property
    def outputs(self) -> list[str]:
        return sorted({column for _, column, _, _ in self.columns.values()})

    def __call__(self, data: np.ndarray) -> float:
        values = {}
        for key, (aggregate, column, start, end) in self.columns.items():
            if column not in (data.dtype.names or ()):
                raise ValueError(f"metric {self.name}: no recorded output {column!r}")
            inside = (data["time"] >= start) & (data["time"] <= end)
            if not inside.any():
                raise ValueError(f"metric {self.name}: no recorded point of {column} in [{start!r}, {end!r}] s")
            values[key] = float(AGGREGATES[aggregate](data[column][inside], data["time"][inside]))
        return self.expression(**values)


@dataclass
class Study:
    """A scenario, shared settings, axes and metrics (see the module)."""
    scenario: str
    metrics: dict[str, str]
    grid: dict[str, Any] = field(default_factory=dict)
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    samples: int = 0
    method: str = "sobol"
    seed: int = 0
    fixed: dict[str, Any] = field(default_factory=dict)
    local: bool = False
    #: settings that take another axis's value in every run: {"elastoGap2.c": "elastoGap1.c"}
    tied: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.parsed_metrics = [Metric(n, t) for n, t in self.metrics.items()]
        if not self.parsed_metrics:
            raise ValueError("a study needs at least one metric (NAME=EXPR)")
        if self.method not in ("sobol", "lhs"):
            raise ValueError(f"sampling method {self.method!r}: use sobol or lhs")
        if self.ranges and self.samples < 1:
            raise ValueError("ranges need samples >= 1 (the number of space-filling points)")
        for name, (low, high) in self.ranges.items():
            if not (math.isfinite(low) and math.isfinite(high) and low < high):
                raise ValueError(f"range {name} = {low!r}:{high!r}: needs finite low < high")
        overlap = (set(self.grid) | set(self.ranges)) & set(self.fixed) | set(self.grid) & set(self.ranges)
        if overlap:
            raise ValueError(f"setting(s) {sorted(overlap)} given twice (grid, ranges, fixed)")
        for target, source in self.tied.items():
            if source not in self.axes:
                raise ValueError(f"tied {target} = {source!r}: {source!r} is not a varied setting "
                                 f"({', '.join(self.axes) or 'none'})")
            if target in self.axes or target in self.fixed:
                raise ValueError(f"tied {target}: it is already varied or fixed")

    def settings(self, point: dict[str, Any]) -> dict[str, Any]:
        """Everything a run of ``point`` sets: the fixed settings, the point's, the tied ones."""
        return {**self.fixed, **point, **{target: point[source] for target, source in self.tied.items()}}

    def definition(self) -> dict[str, Any]:
        """The study as plain data (what a table is checked against on resume)."""
        data = asdict(self)
        data["ranges"] = {k: list(v) for k, v in self.ranges.items()}
        if not self.tied:
            del data["tied"]  # the definition (and fingerprint) of a study without ties is as before ties
        return data

    @classmethod
    def from_definition(cls, data: dict[str, Any]) -> Study:
        return cls(**{**data, "ranges": {k: tuple(v) for k, v in data.get("ranges", {}).items()}})

    def __reduce__(self):
        return Study.from_definition, (self.definition(),)  # to a worker: parsed again there

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.definition(), sort_keys=True, default=str).encode()).hexdigest()[:16]

    @property
    def axes(self) -> list[str]:
        return list(self.grid) + list(self.ranges)

    @property
    def run_count(self) -> int:
        """The number of runs, counted without making the points."""
        return math.prod(grid_length(n, s) for n, s in self.grid.items()) * (self.samples if self.ranges else 1)

    def points(self) -> list[dict[str, Any]]:
        """Every run's varied settings, in run order."""
        grid = [dict(zip(self.grid, combo))
                for combo in itertools.product(*(grid_values(n, s) for n, s in self.grid.items()))]
        if not self.ranges:
            return grid
        from scipy.stats import qmc
        d = len(self.ranges)
        sampler = (qmc.Sobol(d, scramble=True, seed=self.seed) if self.method == "sobol"
                   else qmc.LatinHypercube(d, seed=self.seed))
        unit = sampler.random(self.samples)
        lows, highs = zip(*self.ranges.values())
        scaled = qmc.scale(unit, lows, highs)
        return [{**g, **{n: float(x) for n, x in zip(self.ranges, row)}} for g in grid for row in scaled]

    @property
    def outputs(self) -> list[str]:
        return sorted({c for m in self.parsed_metrics for c in m.outputs if c != "time"})


def split_settings(settings: dict[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, Any]], dict[str, Any]]:
    """(algorithm/step/stop, overrides per component, algorithm options) of a run's settings."""
    run: dict[str, Any] = {}
    overrides: dict[str, dict[str, Any]] = {}
    options: dict[str, Any] = {}
    for name, value in settings.items():
        if name in RUN_SETTINGS:
            run[name] = value if name == "algorithm" else float(value)
        elif name.startswith(OPTION):
            options[name[len(OPTION):]] = value
        else:
            component, dot, parameter = name.partition(".")
            if not dot or not parameter:
                raise ValueError(f"setting {name!r}: use COMPONENT.PARAMETER, algorithm, step, stop or option.KEY")
            overrides.setdefault(component, {})[parameter] = value
    return run, overrides, options


def _range(name: str, spec: Any) -> tuple[float, float]:
    try:
        low, high = (spec.split(":") if isinstance(spec, str) else spec)
        return float(low), float(high)
    except (TypeError, ValueError):
        raise ValueError(f"range {name} = {spec!r}: use LOW:HIGH (or [low, high] in a study file)") from None


def load_study(path: str | Path, metrics: dict[str, str] | None = None, grid: dict[str, Any] | None = None,
               ranges: dict[str, Any] | None = None, samples: int | None = None, method: str | None = None,
               seed: int | None = None, fixed: dict[str, Any] | None = None, local: bool = False,
               tied: dict[str, str] | None = None) -> Study:
    """A study from a scenario (folder, .ssd, .ssp) and the given pieces, or from a study file (.toml:
    ``scenario`` relative to the file, tables ``metrics``, ``grid``, ``ranges``, ``fixed``, ``tied``, and
    ``samples``, ``method``, ``seed``, ``local``) with the given pieces added."""
    data: dict[str, Any] = {"scenario": str(path)}
    if Path(path).suffix == ".toml":
        import tomllib
        try:
            data = tomllib.loads(Path(path).read_text())
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ValueError(f"study file {path}: {exc}") from None
        unknown = set(data) - {"scenario", "metrics", "grid", "ranges", "fixed", "samples", "method", "seed", "local",
                               "tied"}
        if unknown or "scenario" not in data:
            raise ValueError(f"study file {path}: " + (f"unknown key(s) {sorted(unknown)}" if unknown
                                                       else "no 'scenario'"))
        data["scenario"] = str((Path(path).parent / data["scenario"]).resolve())
    for key, extra in (("metrics", metrics), ("grid", grid), ("ranges", ranges), ("fixed", fixed), ("tied", tied)):
        data[key] = {**data.get(key, {}), **(extra or {})}
    data["ranges"] = {name: _range(name, spec) for name, spec in data["ranges"].items()}
    for key, value in (("samples", samples), ("method", method), ("seed", seed)):
        if value is not None:
            data[key] = value
    data["local"] = bool(data.get("local", False) or local)
    return Study(**data)
