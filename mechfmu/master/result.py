"""What a run shows while it runs (``Run``, handed to observers) and what it leaves (``Result``)."""
from __future__ import annotations

import fnmatch
import math
from array import array
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from mechfmu.master.exchange_plans import reader
from mechfmu.master.fmu_profile import Profile

if TYPE_CHECKING:
    from collections.abc import Callable

    from mechfmu.master.slaves import Slave
    from mechfmu.ssp.scenario import Scenario

    #: columns a run adds besides the outputs: (names, units, a function returning their values)
    Extra = tuple[list[str], list[str], Callable[[], list[float]]]


#: located events listed in a run's summary (all of them: ``Result.events``, ``mechfmu run --events-out``)
EVENTS_SHOWN = 4


@dataclass
class Accuracy:
    """A run's error estimate for its worst state (the largest estimate over tolerance)."""
    rtol: float
    atol: float
    estimate: float = math.nan  # [unit] the worst state's estimated error (nan: not estimated, see ``note``)
    variable: str = ""
    unit: str = ""
    time: float = math.nan  # [s] where that state's estimated error is largest
    tolerance: float = math.nan  # [unit] atol + rtol·scale of that state
    method: str = ""
    note: str = ""  # why there is no estimate
    states: dict[str, float] = field(default_factory=dict)  # every compared state's estimate [its unit]

    @property
    def ratio(self) -> float:
        """Estimate over tolerance (nan: not estimated)."""
        return self.estimate / self.tolerance if self.tolerance > 0 else math.nan

    @property
    def exceeded(self) -> bool:
        return not self.ratio <= 1 and not math.isnan(self.estimate)

    def describe(self) -> str:
        if math.isnan(self.estimate):
            return f"error not estimated: {self.note}"
        return (f"estimated error {self.estimate:.2g} {self.unit} in {self.variable} (largest near t = "
                f"{self.time:.6g} s; tolerance {self.tolerance:.2g} {self.unit}: rtol {self.rtol:g}, atol "
                f"{self.atol:g}); {self.method}")


class AcceptedSteps(Sequence):
    """The adaptive step's accepted steps, each (end time [s], size [s]), kept as two doubles (16 bytes a step; a
    list of tuples took about 100): a run of millions of steps keeps tens of MB, not a GB."""

    def __init__(self) -> None:
        self._values = array("d")

    def append(self, step: tuple[float, float]) -> None:
        self._values.extend(step)

    def __len__(self) -> int:
        return len(self._values) // 2

    @overload
    def __getitem__(self, index: int) -> tuple[float, float]: ...
    @overload
    def __getitem__(self, index: slice) -> list[tuple[float, float]]: ...

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("accepted step index out of range")
        return self._values[2 * index], self._values[2 * index + 1]

    def __iter__(self) -> Iterator[tuple[float, float]]:
        values = self._values
        return zip(values[0::2], values[1::2])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, AcceptedSteps):
            return self._values == other._values
        return isinstance(other, Sequence) and list(self) == list(other)

    def sizes(self) -> array:
        """Every accepted step's size [s]."""
        return self._values[1::2]


@dataclass
class Result:
    status: str                      # "ok", "error" or "interrupted" (SIGINT)
    message: str
    data: np.ndarray | None          # structured array, "time" first (None if nothing was recorded)
    counters: dict[str, int] = field(default_factory=dict)
    end_time: float = math.nan       # last completed communication point
    wall_time: float = 0.0
    warnings: list[str] = field(default_factory=list)  # Scenario.warnings, then what the slaves reported
    units: dict[str, str] = field(default_factory=dict)  # column -> unit
    final: dict[str, float] = field(default_factory=dict)  # the last recorded point, column -> value
    events: list[tuple[float, str]] = field(default_factory=list)  # located events: (time [s], indicators)
    #: adaptive: (end time, size) [s] per accepted step (``AcceptedSteps``)
    steps: Sequence[tuple[float, float]] = field(default_factory=list)
    #: energy audit: per power bond, {"injected": J (signed), "absolute": J (sum of |residual|)}
    energy: dict[str, dict[str, float]] = field(default_factory=dict)
    algorithm: str = ""  # the coupling algorithm that ran
    choice: str = ""  # algorithm "auto": what it chose and why
    accuracy: Accuracy | None = None  # the run's error estimate (mechfmu.master.accuracy)
    #: what the error estimate reads of the run: its recorded body states, the coupling's order, substeps of
    #: the step, the adaptive step's summed local errors, the components that switch, whether events were on
    state_columns: list[str] = field(default_factory=list)
    coupling_order: int = 1
    substeps: int = 1
    local_errors: dict[str, float] = field(default_factory=dict)
    switching: list[str] = field(default_factory=list)
    events_on: bool = False
    #: where the time went: per FMU (instance name) its FMI calls by kind, counted, and the seconds inside them,
    #: its setup (``mechfmu.master.fmu_profile.Profile``; empty for an in-process run)
    profile: Profile = field(default_factory=Profile)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def summary(self) -> str:
        counters = ", ".join(f"{k} {v}" for k, v in self.counters.items())
        reached = (f"reached t = {self.end_time:.6g} s" if math.isfinite(self.end_time)
                   else "stopped before the first step")
        text = f"{self.status}: {reached} in {self.wall_time:.2f} s wall ({counters})"
        if self.choice:
            text += f"\n{self.choice}"
        if self.accuracy is not None:
            text += f"\n{self.accuracy.describe()}"
        if self.profile.fmus:
            text += f"\n{self.profile.describe()}"
        if self.events:
            shown = "; ".join(f"{t:.9g} s {what}" for t, what in self.events[:EVENTS_SHOWN])
            more = f" (and {len(self.events) - EVENTS_SHOWN} more)" if len(self.events) > EVENTS_SHOWN else ""
            text += f"\nevents located at {shown}{more}"
        if self.steps:
            sizes = self.steps.sizes() if isinstance(self.steps, AcceptedSteps) else [h for _, h in self.steps]
            text += f"\nadaptive steps from {min(sizes):.3g} s to {max(sizes):.3g} s"
        text += "".join(f"\nenergy injected at {bond}: {e['injected']:.6g} J (sum of |residuals| {e['absolute']:.6g} J)"
                        for bond, e in self.energy.items())
        text += "".join(f"\nwarning: {w}" for w in self.warnings)
        return text + (f"\n{self.message}" if self.message else "")


_smallest, _largest = np.minimum.reduce, np.maximum.reduce


class Run:
    """What observers see of a running simulation: scenario name, step count, the current step index
    and time, the column names, and ``row``, the values of the current communication point (time
    first, then every output of every slave), read once per point by ``simulate`` (``read_row``)."""

    def __init__(self, scenario_name: str, slaves: dict[str, Slave], n_steps: int, t0: float,
                 output_variables: list[str] | None = None, extra: Extra | None = None):
        self.scenario_name = scenario_name
        self.slaves = slaves
        self.n_steps = n_steps
        self.step_index = 0
        self.time = t0
        select = selector(output_variables, [f"{s.name}.{n}" for s in slaves.values() for n in s.outputs()])
        self._reads = [(s, [n for n in s.outputs() if select(f"{s.name}.{n}")]) for s in slaves.values()]
        self.column_names = ["time"] + [f"{s.name}.{n}" for s, names in self._reads for n in names]
        self._extra = extra
        if extra is not None:
            self.column_names += extra[0]
        twice = sorted(n for n, count in Counter(self.column_names).items() if count > 1)
        if twice:
            raise ValueError(f"result columns {twice} would be written twice (a component named like another's "
                             "component.variable, e.g. 'x.flange' beside 'x'); rename a component")
        self.units = {"time": "s", **{f"{s.name}.{n}": s.variables[n].unit or "1" for s, names in self._reads
                                      for n in names}}
        if extra is not None:
            self.units.update(zip(extra[0], extra[1]))
        self._row: tuple[float, ...] | None = ()
        #: the batched gets of a row: each slave's bound ``get`` and its selected outputs (none: no call)
        self._getters = [(s.get, names) for s, names in self._reads if names]
        self._reader = reader([(s, names) for s, names in self._reads if names])
        #: the compiled reader's values as numpy (a view: the last row's outputs until the next read)
        self.outputs = (np.ctypeslib.as_array(self._reader.values)[:self._reader.size]
                        if self._reader is not None else None)
        self._extras: list[float] = []
        #: the run's state columns (``Result.state_columns``), or None where not known: what an estimate judges
        self.state_columns: list[str] | None = None

    @property
    def row(self) -> tuple[float, ...]:
        """The current point's values, time first; made from the compiled reader's values when first asked for."""
        if self._row is None:
            assert self.outputs is not None
            self._row = (self._row_time, *self.outputs.tolist(), *self._extras)
        return self._row

    def within(self, bound: float) -> bool:
        """Every value of the current point but its time is finite and at most ``bound`` in magnitude."""
        if self._row is None:  # the compiled reader's values, as numpy: a NaN is its own minimum and maximum
            assert self.outputs is not None
            outputs = self.outputs
            return ((not outputs.size or -bound <= _smallest(outputs) and _largest(outputs) <= bound)
                    and all(abs(x) <= bound for x in self._extras))
        values = self._row[1:]
        return not values or (math.isfinite(sum(values)) and -bound <= min(values) and max(values) <= bound)

    def read_row(self) -> tuple[float, ...] | None:
        """Read every output now (one batched get per slave, compiled where it can be) and keep it as ``row``
        (made when first asked for where the compiled reader holds the values: ``outputs``, the extras in
        ``extras``); returns the row, or None for that."""
        if self._reader is not None:
            self._reader.run()
            self._row_time, self._row = self.time, None
            self._extras = list(self._extra[2]()) if self._extra is not None else []
            return None
        values = [self.time]
        extend = values.extend
        for get, names in self._getters:
            extend(get(names))
        if self._extra is not None:
            extend(self._extra[2]())
        self._row = tuple(values)
        return self._row


def selector(patterns: list[str] | None, names: list[str], what: str = "output variables"):
    """A test for ``component.variable`` names: every name if ``patterns`` is None, else the names a
    pattern matches (exactly or as a glob, ``*`` and ``?``). A pattern that matches nothing is an
    error naming it and ``what`` it was given as (a misspelt variable must not silently vanish from the
    results)."""
    if patterns is None:
        return lambda name: True
    unmatched = [p for p in patterns if not any(fnmatch.fnmatchcase(n, p) for n in names)]
    if unmatched:
        components = sorted({n.split(".", 1)[0] for n in names})
        raise ValueError(f"{what} {unmatched} match no output; outputs are named component.variable "
                         f"(components: {', '.join(components)}), e.g. {', '.join(names[:4])}")
    return lambda name: any(fnmatch.fnmatchcase(name, p) for p in patterns)


def declared_outputs(scenario: Scenario, local: bool = False) -> list[str]:
    """Every output of the scenario as ``component.variable``, in result-column order, from the FMUs'
    model descriptions (``local``: the components' declarations): known before anything is instantiated."""
    from mechfmu.ssp.scenario import component_variables
    return [f"{name}.{variable}" for name, spec in scenario.components.items()
            for variable, declared in component_variables(spec, local).items() if declared.causality == "output"]
