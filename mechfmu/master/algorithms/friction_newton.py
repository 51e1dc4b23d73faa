"""Newton coupling of MSL's friction elements between co-simulation FMUs (``newton-friction``), through FMI 3.0's
event mode.

A friction element (components/friction.py) locked is a constraint: its torque ``lambda`` an unknown the master
solves, its relative speed held 0. Its mode (stuck, sliding, free, starting) changes at events, where MSL iterates
the mixed system: the modes from the locked torques and the accelerations, the torques from the modes. Between FMUs
that needs the FMUs' FMI 3.0 co-simulation with event mode: instantiated so, a friction FMU holds its discrete state
over ``fmi3DoStep`` (and says ``eventHandlingNeeded`` where its held inputs imply a switch) and iterates it in
``fmi3UpdateDiscreteStates``. The algorithm then:

- takes each macro step as ``Newton`` does at velocity level (``index="2"``) with the modes held: the residual of an
  element locked at the step's start is its relative speed after the step (``residual_v``), of the others lambda
  (kept 0); ``coupling="implicit"`` (the default here) iterates the connections too, trapezoidal in the inputs
  (``Newton``), which keeps the sliding torques second order;
- locates every switch the elements' indicators show (``indicator.slip``, ``indicator.w_rel``, ``indicator.free``;
  rollback bisection to ``event_tolerance``, as ``events=on`` does), and ends a step at each time event the sources
  announce (``fmi3UpdateDiscreteStates``'s nextEventTime);
- at every located event, time event, and step an FMU ended with ``eventHandlingNeeded``, and at the start time,
  puts every FMU through event mode until none needs another update, the values passed on and the locked torques
  solved between the updates at acceleration level (MSL's locked equation a_rel = 0; the torques of the others 0):
  MSL's mixed-system iteration, as the monolithic master's event mode does for Model Exchange. The run records a row
  before and after each event (Modelica's two rows).

Every FMU must be an FMI 3.0 co-simulation FMU (``fmi_version=3``; ValueError before the run otherwise): an FMI 2.0
friction FMU changes its mode inside its step, where no master can hold it. Counters: Newton's, the located events'
(``events``, ``event_trials``, ``event_rollbacks``), ``event_iterations`` (discrete-state updates of all FMUs) and
``time_events``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from mechfmu.components.ports import LAMBDA, LOCKED
from mechfmu.master.algorithms.base import Option, register
from mechfmu.master.algorithms.early_return import early_instance
from mechfmu.master.algorithms.events import EventLocator, negative
from mechfmu.master.algorithms.newton import Newton
from mechfmu.master.coupled_system import CoupledSystem
from mechfmu.master.slaves import Slave, SlaveError

#: discrete-state updates of all FMUs at one event before the run stops (a mode that never settles)
MAX_EVENT_ITERATIONS = 100
#: events located within one macro step before the run stops (a switch that chatters)
MAX_EVENTS_PER_STEP = 100


@register
class NewtonFriction(Newton):
    """Newton coupling (velocity level) of MSL's friction elements between FMI 3.0 co-simulation FMUs: the modes held
    over a step, the switches located by rollback, event mode with the locked torques solved at every event (see the
    module)."""

    name = "newton-friction"
    enforces_switching_constraints = True
    counter_names = (*Newton.counter_names, "events", "event_trials", "event_rollbacks", "event_iterations",
                     "time_events")
    options = {**Newton.options, "coupling": Option("implicit", "iterate on the connections too (implicit)",
                                                    choices=("explicit", "implicit")),
               "index": Option("2", "constraints at velocity level (2): the friction elements'", choices=("2",))}

    def __init__(self, **options: Any):
        super().__init__(**options)
        self.locator = EventLocator(self.config["event_tolerance"], True, 0.0, how="rollback")
        #: the time events the FMUs announced at the last event mode [s]
        self.next_events: list[float] = []

    def initialize(self, system: CoupledSystem, start_time: float) -> None:
        others = [s.name for s in system.slaves.values() if early_instance(s) is None]
        if others:
            raise ValueError(f"algorithm {self.name!r} couples friction elements through FMI 3.0's event mode: every "
                             f"FMU must be an FMI 3.0 co-simulation FMU (run with fmi_version=3, --fmi-version 3); "
                             f"not: {', '.join(others)}")
        super().initialize(system, start_time)
        self.switching = [s for s in self.constraints if LOCKED in s.variables]
        #: per element the output its locked equation holds at 0 (a_rel; a brake's or bearing's a)
        self.acceleration = {s.name: "a_rel" if "a_rel" in s.variables else "a" for s in self.switching}
        for slave in system.slaves.values():  # eventHandlingNeeded is read after each step
            instance = early_instance(slave)
            if instance is not None and instance.on_intermediate is None:
                instance.on_intermediate = lambda now: None

    def start(self, system: CoupledSystem, start_time: float, step_size: float) -> None:
        self._event_mode(system, start_time)

    def _solve_locked(self, system: CoupledSystem) -> None:
        """The torque of every locked element so that its relative acceleration is 0 (the others' 0), the values
        passed on: the loop lambda -> the bodies' accelerations -> a_rel, linear in lambda, closed by Newton steps
        with a finite-difference Jacobian."""
        locked = [s for s in self.switching if s.get([LOCKED])[0]]
        for slave in self.switching:
            if slave not in locked:
                slave.set([LAMBDA], [0.0])
        system.transfer(system.ordered_plan)
        if not locked:
            return
        x = np.array([s.get([LAMBDA])[0] for s in locked])

        def residual(values: np.ndarray) -> np.ndarray:
            for slave, value in zip(locked, values):
                slave.set([LAMBDA], [float(value)])
            system.transfer(system.ordered_plan)
            return np.array([s.get([self.acceleration[s.name]])[0] for s in locked])

        r = residual(x)
        for _ in range(3):  # linear: one step solves it; a second where rounding left more than the tolerance
            if np.max(np.abs(r)) <= 1e-12 * (1.0 + np.max(np.abs(x))):
                break
            jacobian = np.empty((len(x), len(x)))
            for j in range(len(x)):
                dx = 1e-6 * max(1.0, abs(x[j]))
                shifted = x.copy()
                shifted[j] += dx
                jacobian[:, j] = (residual(shifted) - r) / dx
            x = x + np.linalg.lstsq(jacobian, -r, rcond=None)[0]
            r = residual(x)

    def _event_mode(self, system: CoupledSystem, t: float) -> None:
        """Every FMU through event mode until none needs another update, the locked torques solved between."""
        fmus: list[Slave] = list(system.slaves.values())
        for slave in fmus:
            slave.event_call("enterEventMode")  # type: ignore[attr-defined]  # an FmuSlave of an FMI 3.0 FMU
        for _ in range(MAX_EVENT_ITERATIONS):
            self._solve_locked(system)
            updates = [slave.event_call("newDiscreteStates") for slave in fmus]  # type: ignore[attr-defined]
            self.counters["event_iterations"] += 1
            if any(update[1] for update in updates):
                raise SlaveError(", ".join(s.name for s, u in zip(fmus, updates) if u[1])
                                 + f": asked to terminate the simulation at the event at t = {t!r} s")
            if not any(update[0] for update in updates):
                break
        else:
            raise SlaveError(f"{', '.join(s.name for s in self.switching)}: the modes still change after "
                             f"{MAX_EVENT_ITERATIONS} iterations of event mode at t = {t!r} s")
        self._solve_locked(system)
        for slave in fmus:
            slave.event_call("enterStepMode")  # type: ignore[attr-defined]
        self.next_events = sorted(update[5] for update in updates if update[4] and update[5] > t)
        # the next step's guess: the torques at the event; the Jacobian anew (its rows changed with the modes)
        self.lambdas = np.array([s.get([name])[0] for s, name, _ in self.unknowns], dtype=float)
        self.jacobian = None

    def snapshot(self) -> Any:
        return self.lambdas.copy(), self.jacobian

    def restore(self, memory: Any) -> None:
        lambdas, jacobian = memory
        self.lambdas, self.jacobian = lambdas.copy(), jacobian

    def advance(self, system: CoupledSystem, t: float, h: float) -> None:
        """From t to t + h: Newton's steps with the modes held, each ending at the first switch located in it or at
        the next time event, and event mode there."""
        locator, end, located = self.locator, t + h, 0
        assert locator is not None
        while self.status == "ok" and end - t > 0:
            timed = bool(self.next_events) and self.next_events[0] <= end + 1e-12 * max(1.0, abs(end))
            target = min(end, self.next_events[0]) if timed else end
            tau = target - t
            before = locator.values(start=True)
            saved, memory = system.save_states(), self.snapshot()
            try:
                self._step_impl(system, t, tau)
                if self.status != "ok":
                    return
                after = locator.values()
                crossed = negative(after) != negative(before)
                if crossed:
                    tau, after = locator.locate(self, system, t, tau, before, after, saved, memory)
            finally:
                system.free_states(saved)
            if crossed:
                names = [label for label, a, b in zip(locator.labels, negative(before), negative(after)) if a != b]
                t += tau
                locator.events.append((t, ", ".join(names)))
                self.counters["events"] += 1
                located += 1
                if located > MAX_EVENTS_PER_STEP:
                    self.status = "error"
                    self.message = (f"algorithm {self.name!r}: {located} events in the step to t = {end!r} s "
                                    f"({', '.join(names)} last): a switch that chatters")
                    return
            else:
                t = target
                asked = any(early_instance(s).returned[0] for s in system.slaves.values())  # type: ignore[union-attr]
                if not timed and not asked:
                    return
                self.counters["time_events"] += timed
            if self.on_event is not None:
                self.on_event(t)
            self._event_mode(system, t)
            if self.on_event is not None:
                self.on_event(t)
