"""Event location: a macro step whose end changes the sign of an event indicator is taken again up to
the indicator's zero, so a contact or stick/slip switch acts at its instant.

Event indicators are the outputs ``indicator.<what>`` of the slaves (components/ports.py): >= 0 on one
side of a switch, < 0 on the other, evaluated at the inputs a slave holds, so after the algorithm's
end-of-step exchange they describe the end of the step. ``EventLocator.step`` wraps an algorithm's
step from t to t + h:

1. save every slave's state (and the algorithm's own memory), take the step, read the indicators;
2. if none changed sign, done. Otherwise find the earliest zero in (t, t + h] by the Illinois method
   (regula falsi that halves the weight of an end point kept twice), each trial a step from the
   saved states to t + τ; the earliest of the indicators' interpolated zeros is the next trial, kept
   inside the bracket's middle 98 %; where two trials have not halved the bracket (an indicator that
   jumps at its switch, such as friction's margin after sticking again) the next trial bisects it;
3. when the bracket is narrower than ``event_tolerance`` [s] (or than the floating-point spacing of
   the step length, where that is larger), take the step to its right end (the indicator has changed sign
   there: the connector switches at the inputs there), count the event, and continue from that time
   to t + h in the same way.

Switching errors (option ``switching_tolerance`` [N] > 0, Exudyn's discontinuous iteration): a slave's
output ``switchingError`` is the force jump of a switch at the inputs it holds (``immediateSwitching``),
so after the exchange it tells whether the step just taken switched. Each enters as one more
indicator, ``switching_tolerance − switchingError``, taken as positive at the step's start (a switch
there is the one the last step stepped to): a step that ends with a jump above the tolerance is
taken again up to the first time it exceeds it, for a jump at the switch (stick after slip) the
switch instant, for a jump that grows from 0 (a stop's penetration·stiffness) where it reaches the
tolerance. A switch whose jump stays below the tolerance is not located (Exudyn's measure does not
count a stop's damping force).

With FMI 3.0 co-simulation FMUs the switches are located by early return instead, no state saved or restored
(mechfmu/master/algorithms/early_return.py): ``events=on`` takes it wherever it applies and rollback otherwise;
``events=rollback`` always rolls back, ``events=early-return`` refuses a run it cannot serve (naming why).

Two sign changes of one indicator within a step cancel and go unseen (a step shorter than the
shortest contact avoids that). More than ``MAX_EVENTS`` events in one macro step (chattering) stop
the run with an error naming the indicator.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mechfmu.components.ports import IMMEDIATE_SWITCHING, INDICATOR, SWITCHING_ERROR
from mechfmu.master.algorithms.stepping import SteppedAlgorithm
from mechfmu.master.coupled_system import CoupledSystem
from mechfmu.master.slaves import Slave

#: most events located within one macro step before the run stops (a switch that chatters)
MAX_EVENTS = 100
#: trials are kept inside this fraction of the bracket (the rest: at least a tenth of a bisection)
INSIDE = 0.01


def indicator_outputs(slaves: dict[str, Slave]) -> list[tuple[Slave, list[str]]]:
    """Every slave's event indicator outputs (``indicator.*``)."""
    found = []
    for slave in slaves.values():
        names = [n for n, v in slave.variables.items() if n.startswith(INDICATOR) and v.causality == "output"]
        if names:
            found.append((slave, names))
    return found


def event_parameters(slave: Slave) -> dict[str, bool]:
    """Parameters an event-locating run sets: switches act at the inputs they are evaluated at."""
    variable = slave.variables.get(IMMEDIATE_SWITCHING)
    return {IMMEDIATE_SWITCHING: True} if variable is not None and variable.causality == "parameter" else {}


def _divisible(lo: float, hi: float) -> bool:
    """Whether the bracket (lo, hi] of step lengths holds one between its ends: below that, the
    floating-point spacing of the step (2.2e-16·h), no trial can narrow it, whatever ``event_tolerance``
    asks (a tolerance of 1e-300 s looped forever)."""
    return lo < 0.5 * (lo + hi) < hi


def negative(values: list[float]) -> list[bool]:
    return [x < 0 for x in values]


@dataclass
class EventLocator:
    """Steps an algorithm so that every indicator's sign change falls on a step's end (see module)."""
    tolerance: float
    #: locate the zeros of the indicators (events=on)
    use_indicators: bool = True
    #: [N] locate where a switchingError exceeds it (0: not)
    switching_tolerance: float = 0.0
    indicators: list[tuple[Slave, list[str]]] = field(default_factory=list)
    switching: list[Slave] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    #: (time [s], indicator) of every located event, in order
    events: list[tuple[float, str]] = field(default_factory=list)
    #: how switches are located: "on" (early return where it applies, else rollback), "rollback", "early-return"
    how: str = "on"
    #: the early-return stepping where it is used (``early_return.EarlyReturn``)
    early: Any = None
    max_events: int = MAX_EVENTS

    def initialize(self, system: CoupledSystem, algorithm: Any = None) -> None:
        mode = self.mode
        self.indicators = indicator_outputs(system.slaves) if self.use_indicators else []
        if self.use_indicators and self.how != "rollback" and self.switching_tolerance == 0 and algorithm is not None:
            from mechfmu.master.algorithms.early_return import EarlyReturn, plan
            watches, why = plan(system, self.indicators, algorithm)
            if watches:
                self.labels = [f"{slave.name}.{n}" for slave, names in self.indicators for n in names]
                self.early = EarlyReturn(system, watches, self.tolerance, algorithm.counters, inner=algorithm.inner)
                return
            if algorithm.inner:
                raise ValueError(f"intermediate_inputs=on: {why or 'no switching connector'}; the bodies are given "
                                 "their inputs inside a step where the master locates events by early return")
            if self.how == "early-return":
                raise ValueError(f"events=early-return: {why or 'no switching connector'}; run with events=on, "
                                 "which then locates by rollback")
        if self.switching_tolerance > 0:
            self.switching = [s for s in system.slaves.values() if s.variables.get(SWITCHING_ERROR) is not None
                              and s.variables[SWITCHING_ERROR].causality == "output"]
            if not self.switching:
                raise ValueError(f"switching_tolerance = {self.switching_tolerance!r} N: no slave outputs "
                                 f"{SWITCHING_ERROR!r} (a connector with a stored switching state, e.g. "
                                 "CoordinateSpringDamperExt); leave it 0")
        self.labels = ([f"{slave.name}.{n}" for slave, names in self.indicators for n in names]
                       + [f"{slave.name}.{SWITCHING_ERROR}" for slave in self.switching])
        unable = [s.name for s in system.slaves.values() if not getattr(s, "can_roll_back", True)]
        if unable:
            raise ValueError(f"{mode} takes steps again from saved states, and {', '.join(unable)} cannot save "
                             f"its state (canGetAndSetFMUstate is false); run without {mode.split('=')[0]}")

    @property
    def mode(self) -> str:
        """The option that asked for event location."""
        return f"events={self.how}" if self.use_indicators else "switching_tolerance"

    def values(self, start: bool = False) -> list[float]:
        """The indicators, then ``switching_tolerance − switchingError`` per switching slave (at a step's
        ``start``: the tolerance)."""
        tol = self.switching_tolerance
        return ([x for slave, names in self.indicators for x in slave.get(names)]
                + [tol if start else tol - slave.get([SWITCHING_ERROR])[0] for slave in self.switching])

    def step(self, algorithm: SteppedAlgorithm, system: CoupledSystem, t: float, h: float) -> None:
        """Advance from t to t + h with every event on a step's end (the algorithm's ``_step_impl``)."""
        if self.early is not None:
            self.early.advance(self, algorithm, t, h)
            return
        end, located = t + h, 0
        audit = algorithm.audit
        while algorithm.status == "ok":
            tau = end - t
            before = self.values(start=True)
            if audit is not None:
                audit.begin()
            saved, memory = system.save_states(), algorithm.snapshot()
            try:
                algorithm._step_impl(system, t, tau)
                if algorithm.status != "ok":
                    return
                after = self.values()
                if negative(after) == negative(before):
                    if audit is not None:
                        audit.end(tau)
                    return
                tau, after = self.locate(algorithm, system, t, tau, before, after, saved, memory)
                if audit is not None:
                    audit.end(tau)
            finally:
                system.free_states(saved)
            located += 1
            crossed = [label for label, a, b in zip(self.labels, negative(before), negative(after)) if a != b]
            self.events.append((t + tau, ", ".join(crossed)))
            algorithm.counters["events"] += 1
            if located >= MAX_EVENTS:
                algorithm.status = "error"
                algorithm.message = (f"events: {located} events within the step from t={end - h!r} s to {end!r} s "
                                     f"({', '.join(crossed)} last): a switch that chatters; take a larger "
                                     f"event_tolerance or run without {self.mode.split('=')[0]}")
                return
            t = t + tau
            if not end - t > 0:
                return

    def locate(self, algorithm, system, t, tau, before, after, saved, memory) -> tuple[float, list[float]]:
        """The step length to the earliest sign change (right end of a bracket narrower than the
        tolerance) and the indicators there, with the system left at that end."""
        lo, hi = 0.0, tau
        g_lo, g_hi = list(before), list(after)
        kept = 0  # +1 each time hi stays, -1 each time lo stays (Illinois)
        at = hi
        widths = [hi - lo]
        while hi - lo > self.tolerance and _divisible(lo, hi):
            width = hi - lo
            if len(widths) >= 3 and width > 0.5 * widths[-3]:
                trial = 0.5 * (lo + hi)
            else:
                trial = min(self._zero(lo, hi, g_lo[i], g_hi[i]) for i in self._crossing(g_lo, g_hi))
                trial = min(max(trial, lo + INSIDE * width), hi - INSIDE * width)
            algorithm.restore(memory)
            system.restore_states(saved)
            algorithm._step_impl(system, t, trial)
            algorithm.counters["event_trials"] += 1
            algorithm.counters["event_rollbacks"] += 1
            at = trial
            g = self.values()
            if negative(g) != negative(before):
                hi, g_hi = trial, g
                kept = kept + 1 if kept >= 0 else 1
                if kept >= 2:
                    g_lo = [0.5 * x for x in g_lo]
            else:
                lo, g_lo = trial, g
                kept = kept - 1 if kept <= 0 else -1
                if kept <= -2:
                    g_hi = [0.5 * x for x in g_hi]
            widths.append(hi - lo)
        if at != hi:
            algorithm.restore(memory)
            system.restore_states(saved)
            algorithm._step_impl(system, t, hi)
            algorithm.counters["event_trials"] += 1
            algorithm.counters["event_rollbacks"] += 1
        return hi, g_hi

    @staticmethod
    def _crossing(g_lo: list[float], g_hi: list[float]) -> list[int]:
        return [i for i, (a, b) in enumerate(zip(g_lo, g_hi)) if (a < 0) != (b < 0)]

    @staticmethod
    def _zero(lo: float, hi: float, a: float, b: float) -> float:
        """The zero of the line through (lo, a) and (hi, b), a and b of opposite signs."""
        return lo + (hi - lo) * a / (a - b) if a != b else 0.5 * (lo + hi)
