"""Event location by early return, FMI 3.0 co-simulation's way: the body that moves into a contact stops there inside
its own step, and the other FMUs' steps end at that time. No FMU state is saved or restored to find the event.

A switching connector (an FMU with ``indicator.*`` outputs) has its indicators evaluated at the flange values it is
given. In a Jacobi step every FMU steps from the values at t, so over the step the connector's inputs change only
with the FMU that drives them: its *mover*, the one source of its inputs with continuous states (a Mass, a
RigidBody; a Fixed flange has none). ``EarlyReturn.step_all`` replaces the system's ``step_all`` for one step:

1. each mover steps first, an FMI 3.0 co-simulation FMU instantiated with early return allowed. Its intermediate
   update at the step's end (``Fmi3Instance.on_intermediate``) passes its outputs to its connectors (in step mode
   between their steps, where inputs may be set), and reads their indicators;
2. if none changed sign, the step goes on. Otherwise the answer is an early return to a trial time: the FMU takes the
   step again from its start to that time (FMI 3.0's repeated early return, inside the same fmi3DoStep) and calls the
   intermediate update there. The trials are those of the rollback locator (``events``: Illinois, kept inside the
   bracket's middle 98 %, bisection where two trials did not halve it) until the bracket is narrower than
   ``event_tolerance``; the step then ends at the bracket's right end (``lastSuccessfulTime``);
3. the connectors' inputs are put back to the values at t, and every other FMU steps to the time the movers
   reached. Where a second mover returns earlier than a first, the first is restored to t and steps to that time
   again (a rollback, counted in ``event_rollbacks``; none where one mover drives all switching connectors);
4. the algorithm exchanges as after any step; at an event every FMI 3.0 FMU enters event mode, the values are
   exchanged, the discrete states updated, and step mode entered again (``EarlyReturnLocator.handle_event``). The run
   records a row before and after (Modelica's two rows at an event), and goes on to the macro step's end.

It applies where every switching connector has exactly one mover and that mover is an FMI 3.0 co-simulation FMU, the
algorithm steps every FMU from the same values (jacobi, linear-implicit) and the macro step is not adaptive
(``plan`` says why not otherwise); ``events=on`` then uses it, else locates by rollback (``events=rollback``).
The connector's other sources (a Fixed flange) are taken at their values at t; one whose value changed over a step
with an event stops the run (such a source moves inside the step: locate by rollback).
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mechfmu.components.number_text import measured
from mechfmu.master.coupled_system import CoupledSystem, TransferLevel, read_plan, write_plan
from mechfmu.master.fmi3_instance import Fmi3Instance
from mechfmu.master.slaves import Slave, SlaveError, StepRefused

#: trials are kept inside this fraction of the bracket (the rest: at least a tenth of a bisection), as by rollback
INSIDE = 0.01
#: algorithms whose step is every FMU's step from the values at its start, then the exchange
JOINT_STEPPERS = ("jacobi", "linear-implicit")


def _negative(values: list[float]) -> list[bool]:
    return [x < 0 for x in values]


def has_states(slave: Slave) -> bool:
    """The slave has continuous states: its outputs move within a step."""
    description = getattr(slave, "model_description", None)
    return description is None or bool(description.derivatives)


def early_instance(slave: Slave) -> Fmi3Instance | None:
    """The FMI 3.0 co-simulation instance of ``slave``, instantiated with early return allowed, or None."""
    instance = getattr(slave, "_fmu", None)
    return instance if isinstance(instance, Fmi3Instance) and not instance.model_exchange else None


def returns_early(slave: Slave) -> bool:
    """An FMI 3.0 co-simulation FMU instantiated with early return allowed (``Fmi3Instance``)."""
    return early_instance(slave) is not None


@dataclass
class Bracket:
    """The trials of one mover's step from ``start``: step lengths [s] ``lo`` (no sign change) and ``hi`` (a change)
    with the indicators there, Illinois as the rollback locator takes them."""
    start: float
    g_lo: list[float]
    tolerance: float
    lo: float = 0.0
    hi: float | None = None
    g_hi: list[float] = field(default_factory=list)
    kept: int = 0
    widths: list[float] = field(default_factory=list)
    finishing: bool = False
    trials: int = 0
    #: the indicators at the step's start (a crossing is a sign other than theirs)
    before: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.before = list(self.g_lo)

    def answer(self, now: float, g: list[float]) -> float | None:
        """The time to return early at after an intermediate update at ``now`` with indicators ``g``: ``now`` to end
        the step there, None to go on (no zero before ``now``)."""
        length = now - self.start
        if self.finishing:
            return now
        crossed = _negative(g) != _negative(self.before)
        if self.hi is None:
            if not crossed:  # an internal step's end (intermediate inputs) or the step's: no zero before it
                self.lo, self.g_lo = length, g
                return None
            self.hi, self.g_hi, self.widths = length, g, [length]
        elif crossed:
            self.hi, self.g_hi = length, g
            self.kept = self.kept + 1 if self.kept >= 0 else 1
            if self.kept >= 2:
                self.g_lo = [0.5 * x for x in self.g_lo]
            self.widths.append(self.hi - self.lo)
        else:
            self.lo, self.g_lo = length, g
            self.kept = self.kept - 1 if self.kept <= 0 else -1
            if self.kept <= -2:
                self.g_hi = [0.5 * x for x in self.g_hi]
            self.widths.append(self.hi - self.lo)
        lo, hi = self.lo, self.hi
        if not (hi - lo > self.tolerance and lo < 0.5 * (lo + hi) < hi):
            if length == hi:
                return now
            self.finishing = True
            return self.start + hi
        width = hi - lo
        if len(self.widths) >= 3 and width > 0.5 * self.widths[-3]:
            trial = 0.5 * (lo + hi)
        else:
            crossing = [i for i, (a, b) in enumerate(zip(self.g_lo, self.g_hi)) if (a < 0) != (b < 0)]
            trial = min(lo + (hi - lo) * self.g_lo[i] / (self.g_lo[i] - self.g_hi[i])
                        if self.g_lo[i] != self.g_hi[i] else 0.5 * (lo + hi) for i in crossing)
            trial = min(max(trial, lo + INSIDE * width), hi - INSIDE * width)
        self.trials += 1
        return self.start + trial


@dataclass
class Watch:
    """A mover, the connectors it drives (their indicator outputs) and the wires from it into them."""
    mover: Slave
    connectors: list[tuple[Slave, list[str]]]
    #: positions of these indicators among the locator's values
    index: list[int]
    transfer: TransferLevel
    #: the connectors' inputs from the mover, and from their other sources
    driven: list[tuple[Slave, list[str]]]
    held: list[tuple[Slave, list[str]]]

    def indicators(self) -> list[float]:
        return [x for slave, names in self.connectors for x in slave.get(names)]


def plan(system: CoupledSystem, indicators: list[tuple[Slave, list[str]]], algorithm: Any) -> tuple[list[Watch], str]:
    """The watches that locate every switch of ``indicators`` by early return, or [] and why they cannot."""
    if algorithm.name not in JOINT_STEPPERS:
        return [], f"algorithm {algorithm.name!r} does not step every FMU from the same values"
    if algorithm.controller is not None:
        return [], "an adaptive macro step takes its steps again from saved states"
    watches: dict[str, Watch] = {}
    start = 0
    for connector, names in indicators:
        wires = [c for c in system.connections if c.target == connector.name]
        movers = sorted({c.source for c in wires if has_states(system.slaves[c.source])})
        positions = list(range(start, start + len(names)))
        start += len(names)
        if len(movers) != 1:
            return [], (f"{connector.name}'s inputs come from {len(movers)} components with states "
                        f"({', '.join(movers) or 'none'}), not one")
        mover = system.slaves[movers[0]]
        if not returns_early(mover):
            return [], f"{mover.name} is not an FMI 3.0 co-simulation FMU (it cannot return early)"
        driven = [c for c in wires if c.source == mover.name]
        others = [c.target_variable for c in wires if c.source != mover.name]
        watch = watches.get(mover.name)
        if watch is None:
            watch = watches[mover.name] = Watch(mover, [], [], TransferLevel([], []), [], [])
        watch.connectors.append((connector, names))
        watch.index += positions
        watch.driven.append((connector, [c.target_variable for c in driven]))
        if others:
            watch.held.append((connector, others))
        links = [c for c in system.connections if c.source == mover.name
                 and any(c.target == slave.name for slave, _ in watch.connectors)]
        gets, index = read_plan(system.slaves, links)
        watch.transfer = TransferLevel(gets, write_plan(system.slaves, links, index))
    return list(watches.values()), ""


@dataclass
class EarlyReturn:
    """One step of every slave with the movers' switches located by early return (module docstring)."""
    system: CoupledSystem
    watches: list[Watch]
    tolerance: float
    counters: dict[str, int]
    #: where the step ended [s] and the movers' brackets
    reached: float = 0.0
    brackets: list[Bracket] = field(default_factory=list)
    #: the connectors' inputs from sources other than their movers at the step's start, read at a crossing
    held: list[tuple[Slave, list[str], list[float]]] = field(default_factory=list)
    #: (time [s], the indicators there) after the last step without an event: the next step's start values
    last: tuple[float, list[float]] | None = None
    #: per body the connectors it integrates with inside its step (``intermediate_inputs.Inner``)
    inner: dict[str, Any] = field(default_factory=dict)

    def step_all(self, t: float, h: float, before: list[float]) -> None:
        """Every slave from t to at most t + h (``reached``): movers with their brackets, then the others."""
        system, end = self.system, t + h
        movers = [w.mover for w in self.watches]
        saved: dict[str, Any] = {}
        stepped: list[Slave] = []
        self.brackets = []
        try:
            for watch in self.watches:
                starts = [(slave, names, slave.get(names)) for slave, names in watch.driven]
                bracket = Bracket(t, [before[i] for i in watch.index], self.tolerance)
                self.brackets.append(bracket)
                if len(self.watches) > 1:
                    saved[watch.mover.name] = watch.mover.get_state()
                try:
                    last = self._step(watch.mover, t, end - t, self._listener(watch, bracket))
                finally:
                    for slave, names, values in starts:
                        slave.set(names, values)
                if last < end:
                    for earlier in stepped:  # passed the new end: taken again from t
                        earlier.set_state(saved[earlier.name])
                        self._step(earlier, t, last - t, None)
                        self.counters["event_rollbacks"] += 1
                    end = last
                stepped.append(watch.mover)
            for slave in system.slaves.values():
                if slave not in movers and self._step(slave, t, end - t, None) < end:
                    raise SlaveError(f"{slave.name}: returned early in the step from t={measured(t)} s; early "
                                     "return is taken from the FMUs that drive a switching connector only: run with "
                                     "events=rollback")
        finally:
            for state_name, state in saved.items():
                system.slaves[state_name].free_state(state)
        self.counters["event_trials"] += sum(b.trials for b in self.brackets)
        self.reached = end

    def _listener(self, watch: Watch, bracket: Bracket) -> Callable[[float], float | None]:
        """The answer to ``watch``'s mover's intermediate updates; at a crossing ``held`` gets the connectors' inputs
        from their other sources."""
        def listen(now: float) -> float | None:
            watch.transfer.run()
            answer = bracket.answer(now, watch.indicators())
            if bracket.hi is not None and not self.held and watch.mover.name not in self.inner:
                self.held = [(slave, names, slave.get(names)) for w in self.watches for slave, names in w.held]
            return answer
        return listen

    def _step(self, slave: Slave, t: float, h: float, listen: Callable[[float], float | None] | None) -> float:
        """``slave``'s step from t by h (with its inner coupling's inputs inside it); the time it ended at."""
        instance = early_instance(slave)
        inner = self.inner.get(slave.name)
        if instance is not None:
            instance.on_intermediate = listen or (lambda now: None)
        if self.system.before_step is not None:
            self.system.before_step(slave)
        if inner is not None and instance is not None:
            inner.begin(t)
            instance.on_inputs = inner.refresh
        try:
            if not slave.do_step(t, h):
                raise StepRefused(slave.last_error or f"{slave.name} refused the step at t={measured(t)} s")
        finally:
            if instance is not None:
                instance.on_intermediate = instance.on_inputs = None
            if inner is not None:
                inner.end()
        if instance is not None and instance.returned[2]:
            return instance.returned[3]
        return t + h

    def advance(self, locator: Any, algorithm: Any, t: float, h: float) -> None:
        """Advance ``algorithm`` from t to t + h with every switch on a step's end, handled as an FMI 3.0 event
        (``locator``: the run's ``EventLocator``, its indicators, labels and events)."""
        system, end, located = self.system, t + h, 0
        audit = algorithm.audit
        while algorithm.status == "ok":
            last, self.last = self.last, None
            before = last[1] if last is not None and last[0] == t else locator.values(start=True)
            self.held = []
            if audit is not None:
                audit.begin()
            system.stepper = functools.partial(self.step_all, before=before)
            try:
                algorithm._step_impl(system, t, end - t)
            finally:
                system.stepper = None
            if algorithm.status != "ok":
                return
            reached = self.reached
            if audit is not None:
                audit.end(reached - t)
            after = locator.values()
            crossed = [label for label, a, b in zip(locator.labels, _negative(before), _negative(after)) if a != b]
            if not crossed and not self.events_pending():
                self.last = (reached, after)  # the inputs stay until the next step: read once
            else:
                moved = self.moved_source()
                if moved:
                    raise SlaveError(f"early return: {moved} in the step from t={measured(t)} s, and the event "
                                     "location holds a switching connector's inputs from components without states "
                                     "fixed over a step; run with events=rollback")
                if algorithm.on_event is not None:
                    algorithm.on_event(reached)
                handle_event(system)
                if algorithm.on_event is not None:
                    algorithm.on_event(reached)
                locator.events.append((reached, ", ".join(crossed) or "an FMU's event"))
                algorithm.counters["events"] += 1
            located += 1
            if located >= locator.max_events:
                algorithm.status = "error"
                algorithm.message = (f"events: {located} events within the step from t={end - h!r} s to {end!r} s "
                                     f"({', '.join(crossed)} last): a switch that chatters; take a larger "
                                     "event_tolerance or run without events")
                return
            t = reached
            if not end - t > 0:
                return

    def events_pending(self) -> bool:
        """An FMI 3.0 FMU asked for event handling in the step just taken."""
        instances = (early_instance(s) for s in self.system.slaves.values())
        return any(instance is not None and instance.returned[0] for instance in instances)

    def moved_source(self) -> str:
        """A connector input from a source other than its mover that changed over the step ('' if none)."""
        for slave, names, old in self.held:
            for name, a, b in zip(names, old, slave.get(names)):
                if a != b:
                    return f"{slave.name}.{name} changed from {a!r} to {b!r}"
        return ""


def handle_event(system: CoupledSystem, max_iterations: int = 100) -> None:
    """An event for every FMI 3.0 co-simulation FMU at once: event mode, the values exchanged, the discrete states
    updated until none needs an update, step mode."""
    fmi3 = [slave for slave in system.slaves.values() if returns_early(slave)]
    for slave in fmi3:
        slave.event_call("enterEventMode")  # type: ignore[attr-defined]  # an FmuSlave: it has an FMI 3.0 instance
    for _ in range(max_iterations):
        system.transfer(system.ordered_plan)
        updates = [slave.event_call("newDiscreteStates") for slave in fmi3]  # type: ignore[attr-defined]
        if any(update[1] for update in updates):
            raise SlaveError(", ".join(s.name for s, u in zip(fmi3, updates) if u[1]) + ": asked to terminate the "
                             "simulation at an event")
        if not any(update[0] for update in updates):
            break
    else:
        raise SlaveError(f"the discrete states still need an update after {max_iterations} iterations at one event")
    for slave in fmi3:
        slave.event_call("enterStepMode")  # type: ignore[attr-defined]
