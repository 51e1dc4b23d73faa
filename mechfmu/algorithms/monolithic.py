"""The monolithic master: every component's Model Exchange form integrated as one ODE, with no coupling error.

The system state x is every component's continuous states, in scenario order. At (t, x) each component gets
the time and its states, the outputs pass to the inputs along the connections in dependency order (every
output that feeds through is read after its inputs were set, as in a co-simulation exchange), and dx/dt is
the components' derivatives. scipy's ``solve_ivp`` integrates it (``method`` Radau, BDF or LSODA, ``ode_rtol``,
``ode_atol``) from one communication point to the next:

- time events (``next_time_event``: a Step's jump, a Ramp's kinks, a Table's rows) end an integration
  segment exactly there; the components then go through event mode (``update_discrete_states``);
- state events: every ``indicator.*`` output is an event function; a change of its domain (FMI 2.0: z > 0 or
  z <= 0) ends the segment at the located instant (scipy's root finding on the dense output), moved on along
  the dense output by the fewest ulps that put every indicator that fired strictly on its new side (the root
  may lie a rounding error before the crossing, where event mode would see no switch), then event mode. An
  indicator that fires more than ``MAX_FIRINGS`` times in one communication step (one chattering within
  round-off of zero) is watched no more in that step;
- the end of every integration segment is an accepted point of the components (``completed_integrator_step``):
  no later evaluation goes before it.

There is no coupling to audit or to control a macro step for: the options events, switching_tolerance,
adaptive and energy_audit are refused, not ignored.

Results are on the communication grid; the recorded outputs are those at each point after the exchange.
Located events go to the run's events (time, indicator). The components run in-process (``--local``) or as
FMUs instantiated as fmi2ModelExchange (``mechfmu.fmu_model_exchange``), bit for bit alike; a component
without an ODE form (a constraint) is refused before the run with its reason.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from scipy.integrate import solve_ivp

from ..system import CoupledSystem
from .base import CouplingAlgorithm, Option, register

#: FMI 2.0's domains of an indicator are z > 0 and z <= 0: a zero is moved this far below 0 (so one that stays 0, as
#: an inactive switch's does, is no event, and leaving z > 0 for z = 0 is one)
ZERO_SIDE = 1e-300
#: event mode iterations at one instant before the run stops (a chattering model)
MAX_EVENT_ITERATIONS = 100
#: firings of one indicator in one communication step after which it is watched no more in that step
MAX_FIRINGS = 20
#: the located instant is moved on by at most this fraction of its magnitude (or this many seconds near 0)
MAX_NUDGE = 1e-12


def _positive(x: float) -> bool:
    return x > 0


@register
class Monolithic(CouplingAlgorithm):
    """All Model Exchange components as one ODE, a stiff integrator, events located (module docstring)."""

    name = "monolithic"
    options = {"method": Option("Radau", "the ODE integrator of scipy.integrate.solve_ivp",
                                choices=("Radau", "BDF", "LSODA")),
               "ode_rtol": Option("1e-8", "relative tolerance of the ODE integrator", kind=float, check=_positive,
                                  requirement="must be > 0"),
               "ode_atol": Option("1e-10", "absolute tolerance of the ODE integrator (SI units)", kind=float,
                                  check=_positive, requirement="must be > 0")}
    counter_names = ("derivative_evaluations", "solver_steps", "state_events", "time_events")
    steps_slaves = False

    def __init__(self, **options: Any):
        super().__init__(**options)
        self.events: list[tuple[float, str]] = []  # located state events: (time [s], the indicators that crossed)

    def initialize(self, system: CoupledSystem, start_time: float) -> None:
        if self.locator is not None or self.controller is not None or self.config["energy_audit"] != "off":
            raise ValueError("algorithm 'monolithic' locates events and controls its step itself and injects no "
                             "coupling energy: leave the options events, switching_tolerance, adaptive and "
                             "energy_audit off")
        self.components = []
        for slave in system.slaves.values():
            view = slave.model_exchange_view()
            if view.co_simulation_only:
                raise ValueError(f"algorithm 'monolithic': {slave.name} ({type(view).__name__}) has no "
                                 f"Model Exchange form: {view.co_simulation_only}")
            self.components.append(view)
        sizes = [len(c.continuous_states) for c in self.components]
        self.slices = [slice(sum(sizes[:i]), sum(sizes[:i + 1])) for i in range(len(sizes))]
        self.labels = [f"{s}.{n}" for s, c in zip(system.slaves, self.components) for n in c.indicator_names()]
        self._evaluated: tuple[float, bytes] | None = None
        self._started = False  # event mode at the start time comes with the first step (after initialization)
        system.transfer(system.ordered_plan)  # the initial outputs reach the inputs, as in every algorithm

    def located_events(self) -> list[tuple[float, str]]:
        return list(self.events)

    def snapshot(self) -> Any:
        return len(self.events)

    def restore(self, memory: Any) -> None:
        del self.events[memory:]

    # --- the ODE -------------------------------------------------------------------------------------------
    def _put(self, system: CoupledSystem, t: float, x: np.ndarray) -> None:
        """Every component at time t with its part of x, the outputs passed along the connections."""
        key = (t, x.tobytes())
        if self._evaluated == key:
            return
        for component, part in zip(self.components, self.slices):
            component.set_time(t)
            component.set_continuous_states(x[part].tolist())
        system.transfer(system.ordered_plan)
        self._evaluated = key

    def _states(self) -> np.ndarray:
        return np.array([v for c in self.components for v in c.get_continuous_states()], dtype=float)

    def _derivatives(self, system: CoupledSystem, t: float, x: np.ndarray) -> np.ndarray:
        self._put(system, t, x)
        self.counters["derivative_evaluations"] += 1
        return np.array([v for c in self.components for v in c.derivatives()], dtype=float)

    def _indicators(self, system: CoupledSystem, t: float, x: np.ndarray) -> list[float]:
        self._put(system, t, x)
        return [v for c in self.components for v in c.event_indicators()]

    def _event_functions(self, system: CoupledSystem, ignored: set[int]) -> list:
        """solve_ivp's terminal event functions of the indicators not in ``ignored``."""
        functions = []
        for i in (i for i in range(len(self.labels)) if i not in ignored):
            def event(t: float, x: np.ndarray, i: int = i) -> float:
                value = self._indicators(system, t, x)[i]
                return value if value > 0.0 else value - ZERO_SIDE
            event.terminal = True  # type: ignore[attr-defined]
            functions.append(event)
        return functions

    def _event_mode(self, system: CoupledSystem) -> None:
        """Every component through event mode at its current time and states until none changes its states."""
        for _ in range(MAX_EVENT_ITERATIONS):
            changed = [c.update_discrete_states() for c in self.components]
            self._evaluated = None
            system.transfer(system.ordered_plan)
            if not any(changed):
                return
        raise RuntimeError(f"algorithm 'monolithic': event mode did not settle in {MAX_EVENT_ITERATIONS} iterations "
                           f"at t = {self.components[0].time!r} s")

    def _past_crossing(self, system: CoupledSystem, solution: Any, t: float, fired: list[int],
                       before: list[float], segment_end: float) -> tuple[float, np.ndarray]:
        """The first instant from the located root t, by doubling ulps, at which every fired indicator is
        strictly on the other side of 0 from ``before`` (its values at the segment's start), and the states
        there (the dense output); the root itself if none is within ``MAX_NUDGE`` and the segment."""
        limit, delta = min(MAX_NUDGE * max(1.0, abs(t)), segment_end - t), 0.0
        while delta <= limit:
            probe = t + delta
            x = np.asarray(solution.sol(probe), dtype=float)
            values = self._indicators(system, probe, x)
            if all((values[i] < 0.0) if before[i] > 0.0 else (values[i] > 0.0) for i in fired):
                return float(probe), x
            delta = max(2.0 * delta, np.spacing(t))
        return t, np.asarray(solution.sol(t), dtype=float)

    # --- a communication step ------------------------------------------------------------------------------
    def _step_impl(self, system: CoupledSystem, t: float, h: float) -> None:
        if not self._started:
            for component in self.components:
                component.set_time(t)
            system.transfer(system.ordered_plan)
            self._event_mode(system)
            self._started = True
        end = t + h
        x = self._states()
        now = max([t] + [c.time for c in self.components])  # the last step's end may be an ulp past t
        ignored: set[int] = set()
        firings = [0] * len(self.labels)
        while now < end:
            upcoming = [e for c in self.components if (e := c.next_time_event()) is not None]
            segment_end = min([end] + [e for e in upcoming if e > now])
            functions = self._event_functions(system, ignored)
            watched = [i for i in range(len(self.labels)) if i not in ignored]
            before = self._indicators(system, now, x) if watched else []
            solution = solve_ivp(lambda s, y: self._derivatives(system, s, y), (now, segment_end), x,
                                 method=self.config["method"], rtol=self.config["ode_rtol"],
                                 atol=self.config["ode_atol"],
                                 events=functions or None, dense_output=bool(watched))
            if solution.status < 0:
                self.status, self.message = "error", (f"algorithm 'monolithic': the ODE integrator failed after "
                                                       f"t = {float(solution.t[-1])!r} s: {solution.message}")
                return
            self.counters["solver_steps"] += len(solution.t) - 1
            found = [k for k, times in enumerate(solution.t_events or []) if len(times)]
            fired = [watched[k] for k in found]
            if solution.status == 1 and fired:
                now, x = self._past_crossing(system, solution, float(solution.t_events[found[0]][0]), fired, before,
                                              segment_end)
                self.counters["state_events"] += 1
                self.events.append((now, ", ".join(self.labels[i] for i in fired)))
                for i in fired:
                    firings[i] += 1
                    if firings[i] > MAX_FIRINGS:
                        ignored.add(i)
            else:
                now, x = segment_end, solution.y[:, -1]
                if now < end or now in upcoming:
                    self.counters["time_events"] += 1
            self._put(system, now, x)
            for component in self.components:
                component.completed_integrator_step()
            if solution.status == 1 or now in upcoming:
                self._event_mode(system)
                x = self._states()
        self._put(system, end, x)
