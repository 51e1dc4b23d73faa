"""The monolithic master: every component's Model Exchange form integrated as one ODE, with no coupling error.

The system state x is every component's continuous states, in scenario order. At (t, x) each component gets
the time and its states, the outputs pass to the inputs along the connections in dependency order (every
output that feeds through is read after its inputs were set, as in a co-simulation exchange), and dx/dt is
the components' derivatives. An integrator (``method`` Radau: scipy's Radau IIA, ``mechfmu.master.radau``; BDF or
LSODA: scipy's; ``ode_rtol``, ``ode_atol``) integrates it with its own steps, kept across communication points; the
results at a communication point are the components evaluated at the integrator's dense output there. Its Jacobian
(``jacobian``) comes from the components' directional derivatives (``mechfmu.master.jacobian``: exact where their
partials are analytic) when every component provides them, else from scipy's difference quotients of the whole
system (``jacobian="differences"``, one derivative evaluation per state and Jacobian). Events:

- time events (``next_time_event``: a Step's jump, a Ramp's kinks, a Table's rows) and the stop time bound the
  integrator, which stops there exactly; the components then go through event mode (``update_discrete_states``)
  and a new integrator starts;
- state events: after every integrator step each ``indicator.*`` output is compared with its value at the
  step's start; a change of domain (FMI 2.0: z > 0 or z <= 0) is located on the dense output (Brent's method,
  to 4 ulps as ``solve_ivp``), moved on by the fewest ulps that put every indicator that fired strictly on its
  new side (the root may lie a rounding error before the crossing, where event mode would see no switch), then
  event mode and a new integrator from there. An indicator that fires more than ``MAX_FIRINGS`` times in one
  communication step (one chattering within round-off of zero) is watched no more in that step;
- communication points and events are the components' accepted points (``completed_integrator_step``): no
  later evaluation goes before them. The integrator's trial points beyond a communication point are
  evaluations only.

There is no coupling to audit or to control a macro step for: the options events, switching_tolerance,
adaptive and energy_audit are refused, not ignored.

Results are on the communication grid; the recorded outputs are those at each point after the exchange.
Located events go to the run's events (time, every indicator that switched there). The components run in-process
(``--local``) or as FMUs instantiated as fmi2ModelExchange (``mechfmu.master.fmu_model_exchange``), bit for bit
alike. A constraint (no ODE form) is an algebraic part: its force is solved at every point
(``mechfmu.master.constraint_forces``).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from mechfmu.master.algorithms.base import (
    CouplingAlgorithm,
    Option,
    constraint_slaves,
    is_constraint,
    is_switching,
    register,
)
from mechfmu.master.algorithms.monolithic_programs import CompiledExchange
from mechfmu.master.constraint_forces import AlgebraicView, ConstraintForces
from mechfmu.master.coupled_system import CoupledSystem
from mechfmu.master.integrators import METHODS, dense_output, integrator
from mechfmu.master.jacobian import SystemJacobian
from mechfmu.master.scipy_kernels import brentq

#: FMI 2.0's domains of an indicator are z > 0 and z <= 0: a zero is moved this far below 0 (so one that stays 0, as
#: an inactive switch's does, is no event, and leaving z > 0 for z = 0 is one)
ZERO_SIDE = 1e-300
#: the unit roundoff; roots are located to 4 of it (as solve_ivp does)
EPS = float(np.finfo(float).eps)
#: event mode iterations at one instant before the run stops (a chattering model)
MAX_EVENT_ITERATIONS = 100
#: firings of one indicator in one communication step after which it is watched no more in that step
MAX_FIRINGS = 20
#: the located instant is moved on by at most this fraction of its magnitude (or this many seconds near 0)
MAX_NUDGE = 1e-12


def _positive(x: float) -> bool:
    return x > 0


@register
class Monolithic(CompiledExchange, CouplingAlgorithm):
    """All Model Exchange components as one ODE, a stiff integrator, events located (module docstring)."""

    name = "monolithic"
    options = {"method": Option("Radau", "the ODE integrator (scipy.integrate's method of that name)",
                                choices=METHODS),
               "ode_rtol": Option("1e-8", "relative tolerance of the ODE integrator", kind=float, check=_positive,
                                  requirement="must be > 0"),
               "ode_atol": Option("1e-10", "absolute tolerance of the ODE integrator (SI units)", kind=float,
                                  check=_positive, requirement="must be > 0"),
               "jacobian": Option("directional", "the integrator's Jacobian: from the components' directional "
                                  "derivatives (where every one provides them), or by differences of the whole "
                                  "system", choices=("directional", "differences"))}
    counter_names = ("derivative_evaluations", "solver_steps", "state_events", "time_events", "jacobians")
    steps_slaves = False
    enforces_constraints = enforces_switching_constraints = True

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
            view = (AlgebraicView(slave) if is_constraint(slave) and not is_switching(slave)
                    else slave.model_exchange_view())
            if view.co_simulation_only:
                raise ValueError(f"algorithm 'monolithic': {slave.name} ({type(view).__name__}) has no "
                                 f"Model Exchange form: {view.co_simulation_only}")
            self.components.append(view)
        sizes = [len(c.continuous_states) for c in self.components]
        self.slices = [slice(sum(sizes[:i]), sum(sizes[:i + 1])) for i in range(len(sizes))]
        self.labels = [f"{s}.{n}" for s, c in zip(system.slaves, self.components) for n in c.indicator_names()]
        constraints = constraint_slaves(system.slaves)
        self.forces = ConstraintForces(system, self.components, self.slices, constraints) if constraints else None
        directional = self.config["jacobian"] == "directional" and all(
            c.provides_directional_derivative() for c in self.components)
        self.jacobian = SystemJacobian(system, self.components, self.slices) if directional else None
        self._evaluated: tuple[float, bytes] | None = None
        self.compiled = self._compiled(system)
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
        """Every component at time t with its part of x, the outputs passed along the connections (with the
        constraints' forces solved there)."""
        key = (t, x.tobytes())
        if self._evaluated == key:
            return
        if self.forces is not None:
            self.forces.solve(t, x, lambda s, y: self._place(system, s, y))
        else:
            self._place(system, t, x)
        self._evaluated = key

    def _place(self, system: CoupledSystem, t: float, x: np.ndarray) -> None:
        if self.compiled is not None:
            self.compiled["put"].run(t, states=np.ascontiguousarray(x, dtype=float))
            for component in self.clocked:
                component.time = t
            return
        for component, part in zip(self.components, self.slices):
            component.set_time(t)
            component.set_continuous_states(x[part].tolist())
        system.transfer(system.ordered_plan)

    def _states(self) -> np.ndarray:
        return np.array([v for c in self.components for v in c.get_continuous_states()], dtype=float)

    def _put_with(self, name: str, t: float, x: np.ndarray, derivatives: np.ndarray | None = None) -> bool:
        """Where the compiled exchange puts the components (no constraints) and they are not at (t, x) yet: its
        program ``name`` (``_put``'s calls, then its own: the derivatives read into ``derivatives``) run there in one
        call. Whether it ran."""
        if self.compiled is None or self.forces is not None or self._evaluated == (key := (t, x.tobytes())):
            return False
        self.compiled[name].run(t, states=np.ascontiguousarray(x, dtype=float), derivatives=derivatives)
        for component in self.clocked:
            component.time = t
        self._evaluated = key
        return True

    def _derivatives(self, system: CoupledSystem, t: float, x: np.ndarray) -> np.ndarray:
        self.counters["derivative_evaluations"] += 1
        dx = np.empty(self.slices[-1].stop if self.slices else 0)
        if self._put_with("evaluate", t, x, derivatives=dx):
            return dx
        self._put(system, t, x)
        if self.forces is not None:  # read where the forces were solved
            return self.forces.rates.copy()
        if self.compiled is not None:
            self.compiled["derivatives"].run(derivatives=dx)
            return dx
        return np.array([v for c in self.components for v in c.derivatives()], dtype=float)

    def _jacobian(self, system: CoupledSystem, t: float, x: np.ndarray) -> np.ndarray:
        assert self.jacobian is not None  # passed to the integrator only then
        self._put(system, t, x)
        self.counters["jacobians"] += 1
        if self.forces is None:
            return self.jacobian()
        self.forces.linearize()
        return self.forces.jacobian

    def _indicators(self, system: CoupledSystem, t: float, x: np.ndarray) -> list[float]:
        self._put(system, t, x)
        if self.compiled is not None:
            z = np.empty(len(self.labels))
            self.compiled["indicators"].run(indicators=z)
            return z.tolist()
        return [v for c in self.components for v in c.event_indicators()]

    def _event_mode(self, system: CoupledSystem, t: float) -> None:
        """Every component through event mode at time t and its states until none asks for another iteration or
        changes its states; between the iterations the outputs pass on, with the constraints' forces solved in the
        friction elements' new modes (the mixed system of their modes and forces iterated as a Modelica tool does);
        until, too, no output that is passed on changed (an input that jumped, a Step's)."""
        passed = system.connection_values()
        for _ in range(MAX_EVENT_ITERATIONS):
            changed = [c.update_discrete_states() for c in self.components]
            self._evaluated = None
            outputs = system.connection_values()
            system.transfer(system.ordered_plan)
            if not any(changed) and outputs == passed:  # no input changed either: a fixed point
                return
            if self.forces is not None:
                self.forces.activate()
                self._put(system, t, self._states())
            passed = system.connection_values()
        raise RuntimeError(f"algorithm 'monolithic': event mode did not settle in {MAX_EVENT_ITERATIONS} iterations "
                           f"at t = {self.components[0].time!r} s")

    # --- the integrator, kept across communication points ---------------------------------------------------
    def _restart(self, system: CoupledSystem, t: float, x: np.ndarray) -> None:
        """A new integrator from (t, x) (after an event) up to the next time event or the stop time."""
        bounds = [e for c in self.components if (e := c.next_time_event()) is not None and e > t]
        self.solver = integrator(self.config["method"], lambda s, y: self._derivatives(system, s, y), t, x,
                                 min(bounds + [self.stop_time]), rtol=self.config["ode_rtol"],
                                 atol=self.config["ode_atol"],
                                 jac=None if self.jacobian is None else lambda s, y: self._jacobian(system, s, y))
        self.dense: Any = None  # the dense output of the integrator's last step
        self.z = self._indicators(system, t, x)  # the indicators at the integrator's point
        self.pending: tuple[float, list[int]] | None = None  # a crossing in the last step: (root, indicators)

    def _event_value(self, system: CoupledSystem, t: float, i: int) -> float:
        """Indicator i along the last step's dense output, a zero on the side of z <= 0."""
        value = self._indicators(system, t, np.asarray(self.dense(t), dtype=float))[i]
        return value if value > 0.0 else value - ZERO_SIDE

    def _watch(self, system: CoupledSystem, ignored: set[int]) -> None:
        """After an integrator step from t_old to t: the earliest crossing of a watched indicator in it, if any
        (Brent's method on the dense output, to 4 ulps as solve_ivp), as ``pending``; else the indicators at t."""
        t_old, t = self.solver.t_old, self.solver.t
        z = self._indicators(system, t, self.solver.y)
        crossed = [i for i in range(len(z)) if i not in ignored and (z[i] > 0.0) != (self.z[i] > 0.0)]
        if not crossed:
            self.z = z
            return
        roots = {}
        for i in crossed:
            try:
                roots[i] = brentq(lambda s, i=i: self._event_value(system, s, i), t_old, t, xtol=4 * EPS,
                                  rtol=4 * EPS)
            except ValueError:  # no change of sign along the dense output: at the step's end
                roots[i] = t
        first = min(roots.values())
        self.pending = (first, [i for i in crossed if roots[i] == first])

    def _past_crossing(self, system: CoupledSystem, t: float, fired: list[int], limit_time: float
                       ) -> tuple[float, np.ndarray]:
        """The first instant from the root t, by doubling ulps, at which every fired indicator is strictly on
        the other side of 0 from where it was at the step's start, and the states there (the dense output); the
        root itself if there is none within ``MAX_NUDGE`` and ``limit_time``."""
        limit, delta = min(MAX_NUDGE * max(1.0, abs(t)), limit_time - t), 0.0
        while delta <= limit:
            probe = t + delta
            x = np.asarray(self.dense(probe), dtype=float)
            values = self._indicators(system, probe, x)
            if all((values[i] < 0.0) if self.z[i] > 0.0 else (values[i] > 0.0) for i in fired):
                return float(probe), x
            delta = max(2.0 * delta, float(np.spacing(t)))
        return t, np.asarray(self.dense(t), dtype=float)

    def _accept(self, system: CoupledSystem, t: float, x: np.ndarray) -> None:
        if self._put_with("accept", t, x):  # _put's calls, then the completion's
            return
        self._put(system, t, x)
        if self.compiled is not None:
            self.compiled["completed"].run()
            return
        for component in self.components:
            component.completed_integrator_step()

    # --- a communication step ------------------------------------------------------------------------------
    def start(self, system: CoupledSystem, start_time: float, step_size: float) -> None:
        """Event mode at the start time (the first point recorded after it), the stabilization's rate 1/h and the
        first integrator."""
        if self.forces is not None:
            self.forces.stabilize(1.0 / step_size)
            self._evaluated = None
        for component in self.components:
            component.set_time(start_time)
        system.transfer(system.ordered_plan)
        self._event_mode(system, start_time)
        stops = [s.stop_time for s in system.slaves.values() if s.stop_time is not None]
        self.stop_time = min(stops) if stops else math.inf
        self._restart(system, start_time, self._states())
        self._started = True

    def _step_impl(self, system: CoupledSystem, t: float, h: float) -> None:
        if not self._started:
            self.start(system, t, h)
        end = t + h
        ignored: set[int] = set()
        firings = [0] * len(self.labels)
        while True:
            solver = self.solver
            if self.pending is not None and self.pending[0] <= end:  # a state event within this step
                root, fired = self.pending
                now, x = self._past_crossing(system, root, fired, min(solver.t, end))
                self.counters["state_events"] += 1
                z = self._indicators(system, now, x)  # every switch there is named (also one whose root is an ulp on)
                named = [i for i, v in enumerate(z) if i in fired or i not in ignored and (v > 0) != (self.z[i] > 0)]
                self.events.append((now, ", ".join(self.labels[i] for i in named)))
                for i in fired:
                    firings[i] += 1
                    if firings[i] > MAX_FIRINGS:
                        ignored.add(i)
                self._accept(system, now, x)
                self._event_mode(system, now)
                self._restart(system, now, self._states())
            elif solver.status == "finished" and solver.t <= end:  # a time event (or the stop time)
                now = solver.t
                self._accept(system, now, solver.y)
                if any(c.next_time_event() == now for c in self.components):
                    self.counters["time_events"] += 1
                    self._event_mode(system, now)
                self._restart(system, now, self._states())
                if now == end:
                    return
            elif solver.t >= end:  # the integrator is past the communication point: its dense output there
                self._accept(system, end, solver.y if solver.t == end else np.asarray(self.dense(end), dtype=float))
                return
            else:
                solver.step()
                if solver.status == "failed":
                    self.status, self.message = "error", (f"algorithm 'monolithic': the ODE integrator failed after "
                                                           f"t = {solver.t!r} s")
                    return
                self.counters["solver_steps"] += 1
                self.dense = dense_output(solver)
                self._watch(system, ignored)
