"""The forces of constraints in the monolithic master: the constraint differentiated to the accelerations, where
its force appears, and stabilized (Baumgarte).

A constraint (``is_constraint``: an input ``lambda``, the force a master sets, and outputs ``residual_v`` ċ and
``constraintEquation``; components/coordinate_constraint.py) has no states. Its force λ is an algebraic unknown
of the ODE, solved at every point (t, x) the integrator evaluates so that

    dċ/dt = −2ω·ċ − ω²·c   (position level: c = constraintEquation, ċ = residual_v its time derivative)
    dċ/dt = −ω·ċ           (velocity level: ċ = residual_v = constraintEquation)

with dċ/dt = ∂ċ/∂x·ẋ(x, λ), the derivative along the motion, from the components' directional derivatives
(``SystemJacobian.linearized``). The bodies' accelerations are affine in the forces on them (Newton's law), so
dċ/dt is affine in λ and one linear solve S·Δλ = −(dċ/dt + 2ω·ċ + ω²·c), S = ∂ċ/∂x·∂ẋ/∂λ, is exact. An exact
start (c = ċ = 0) stays on the constraint up to the integrator's error, which the stabilization removes at the
rate ω = 1/h (h the communication step): drift decays within a step. The integrator's Jacobian is the reduced
ODE's, J = ∂ẋ/∂x + ∂ẋ/∂λ·∂λ/∂x with ∂λ/∂x = −S⁻¹·(∂ċ/∂x·∂ẋ/∂x + 2ω·∂ċ/∂x + ω²·∂c/∂x) (the second
derivatives of the residuals left out: 0 for the flanges of Mass and Inertia, which are states).

A friction element (``is_switching``: MSL's Clutch and its kin, components/friction.py) is a velocity-level
constraint while its output ``locked`` is 1 and has a Model Exchange form of its own: only the locked ones are
solved (``activate``, after every event iteration), the others' λ kept 0.

A constraint whose offset depends on time (``offsetUserFunction``, ``offsetUserFunction_t``) evaluates it at its
co-simulation time: before each evaluation at t it is restored to its state at the start t0 and stepped from t0
to t (``at_time``; it must be able to save its state). An inactive one (``activeConnector`` false) keeps λ = 0.
"""
from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import numpy as np

from mechfmu.components.ports import CONSTRAINT_EQUATION, LAMBDA, LOCKED, VELOCITY_LEVEL, VELOCITY_RESIDUAL
from mechfmu.master.coupled_system import CoupledSystem
from mechfmu.master.exchange import GET_DERIVATIVES, SET_STATE, Program
from mechfmu.master.exchange_plans import compilable
from mechfmu.master.jacobian import SystemJacobian
from mechfmu.master.slaves import Slave

#: the time step of the differences along the motion [s] (relative beyond 1 s)
DELTA = 1e-6
#: solves with a sensitivity that changed between linearizations, at most (each from the last λ)
MAX_ITERATIONS = 4
#: the parameters that make a constraint's offset a function of time
OFFSET_FUNCTIONS = ("offsetUserFunction", "offsetUserFunction_t")


def _text(value: Any) -> str:
    return (value.decode() if isinstance(value, bytes) else str(value)).strip()


def time_dependent(slave: Slave) -> str:
    """The name of the parameter that makes the constraint's offset depend on time, or ''."""
    for name in OFFSET_FUNCTIONS:
        if name in slave.variables and _text(slave.get([name])[0]):
            return name
    return ""


def clocked(components: list[Any]) -> list[Any]:
    """Those of ``components`` whose time the master keeps for them (an FMU's Model Exchange view, a constraint's
    view); an in-process component's time is its instance's own, set by the calls that put it at a point."""
    return [c for c in components if not isinstance(getattr(type(c), "time", None), property)]


class AlgebraicView:
    """A constraint among the monolithic master's components: no states, no derivatives, no events; its partials
    are its slave's (fmi2GetDirectionalDerivative of the co-simulation instance)."""
    co_simulation_only = ""
    continuous_states: tuple[str, ...] = ()

    def __init__(self, slave: Slave):
        self.slave, self.time = slave, 0.0

    def state_variables(self) -> list[str]:
        return []

    derivative_variables = indicator_names = state_variables

    def provides_directional_derivative(self) -> bool:
        return self.slave.provides_directional_derivative()

    def directional_derivative(self, unknowns: list[str], knowns: list[str], seeds: list[float]) -> list[float]:
        return self.slave.directional_derivative(unknowns, knowns, seeds)

    def set_time(self, t: float) -> None:
        self.time = t

    def set_continuous_states(self, values: list[float]) -> None:
        """No states to set."""

    def get_continuous_states(self) -> list[float]:
        return []

    derivatives = event_indicators = get_continuous_states

    def update_discrete_states(self) -> bool:
        return False

    def next_time_event(self) -> float | None:
        return None

    def completed_integrator_step(self) -> None:
        """Nothing to complete."""


class ConstraintForces:
    """Solves the constraints' forces at each point of a monolithic run (module docstring)."""

    def __init__(self, system: CoupledSystem, components: list[Any], slices: list[slice], constraints: list[Slave]):
        """``constraints``: the active constraint slaves, each among ``components`` as an ``AlgebraicView``."""
        self.timed = [slave for slave in constraints if time_dependent(slave)]
        for slave in self.timed:
            if not getattr(slave, "can_roll_back", True):
                raise ValueError(f"algorithm 'monolithic': constraint '{slave.name}' has an offset that depends on "
                                 f"time ({time_dependent(slave)}) and cannot save its state (canGetAndSetFMUstate), "
                                 "which evaluating it at the integrator's times needs; use --algorithm newton")
        for slave in constraints:
            if not slave.provides_directional_derivative():
                raise ValueError(f"algorithm 'monolithic': constraint '{slave.name}' gives no directional "
                                 "derivatives, which its force's solution needs; use --algorithm newton")
        missing = [c.slave.name for c in components if not c.provides_directional_derivative()]
        if missing:
            raise ValueError(f"algorithm 'monolithic': the constraints' forces need every component's directional "
                             f"derivatives, which {', '.join(missing)} do not give; use --algorithm newton")
        from mechfmu.master.algorithms.base import is_switching  # the algorithms import this module

        self.slaves = constraints
        self.switching = np.array([is_switching(s) for s in constraints], dtype=bool)
        self.velocity_level = np.array([VELOCITY_LEVEL in s.variables and bool(s.get([VELOCITY_LEVEL])[0])
                                        for s in constraints]) | self.switching
        self.active = np.ones(len(constraints), dtype=bool)
        self.linear = SystemJacobian(system, components, slices, knowns={s.name: [LAMBDA] for s in constraints},
                                     outputs={s.name: [VELOCITY_RESIDUAL, CONSTRAINT_EQUATION] for s in constraints})
        self.lambdas = np.array([s.get([LAMBDA])[0] for s in constraints], dtype=float)
        self.sensitivity: np.ndarray | None = None
        self.start: tuple[float, list[Any]] | None = None  # the timed constraints' time and states at the start
        self.handles: Any = None
        self.components, self.size = components, sum(p.stop - p.start for p in slices)
        self.programs: dict[str, Program] = {}
        self.values: dict[str, np.ndarray] = {}
        self.rates = np.zeros(self.size)
        self.stabilize(0.0)  # the master sets 1/h at its first step
        self.constant = False
        self.jacobian = np.zeros((0, 0))
        self.activate()

    def activate(self) -> bool:
        """The constraints to solve: all but the friction elements that are not locked now (their λ set to 0);
        True if that changed (the next solve linearizes again)."""
        active = np.array([not switching or bool(slave.get([LOCKED])[0])
                           for slave, switching in zip(self.slaves, self.switching)], dtype=bool)
        changed = bool(np.any(active != self.active))
        self.active = active
        self.lambdas = np.where(active, self.lambdas, 0.0)
        if changed:
            self.sensitivity = None
        return changed

    def linearize(self) -> None:
        """S and the reduced ODE's Jacobian at the point the components are at (module docstring); a sensitivity
        equal to the last one (to 1e-12) is taken as constant (the bodies' masses), so that one solve is exact."""
        lin = self.linear.linearized()
        active = self.active
        v_rows, c_rows, dx_dz = lin.dr_dx[0::2][active], lin.dr_dx[1::2][active], lin.dx_dz[:, active]
        k1, k2 = (gain[active] for gain in self._gains())
        sensitivity = v_rows @ dx_dz
        self.constant = self.sensitivity is not None and bool(np.allclose(sensitivity, self.sensitivity, rtol=1e-12,
                                                                          atol=0.0))
        try:
            gain = np.linalg.solve(sensitivity, -(v_rows @ lin.dx_dx + k1[:, None] * v_rows + k2[:, None] * c_rows))
        except np.linalg.LinAlgError:
            names = ", ".join(f"'{s.name}'" for s, a in zip(self.slaves, active) if a)
            raise ValueError(f"algorithm 'monolithic': the forces of constraint {names} do not move the constrained "
                             f"coordinates independently (∂(dċ/dt)/∂λ = {sensitivity.tolist()} is singular): a "
                             "constraint on a coordinate that nothing can accelerate, or two constraints on one "
                             "coordinate") from None
        self.sensitivity, self.jacobian = sensitivity, lin.dx_dx + dx_dz @ gain
        self.inverse = np.linalg.inv(sensitivity)

    def _gains(self) -> tuple[np.ndarray, np.ndarray]:
        return (np.where(self.velocity_level, self.omega, 2 * self.omega),
                np.where(self.velocity_level, 0.0, self.omega ** 2))

    def stabilize(self, omega: float) -> None:
        """The stabilization's rate ω [1/s] (the master's: 1/h); the next solve linearizes again."""
        self.omega, self.sensitivity = omega, None
        self.gains = self._gains()

    def saved(self, t: float) -> tuple[float, list[Any]]:
        """The timed constraints' start time t0 and their states there: saved at the first evaluation (at t),
        with their handles (``handles``: void pointers, the compiled exchange's)."""
        if self.start is None:
            self.start = (t, [slave.get_state() for slave in self.timed])
            self.handles = (ctypes.c_void_p * len(self.timed))(*(slave.state_handle(state) for slave, state in
                                                                 zip(self.timed, self.start[1])))
        return self.start

    def at_time(self, t: float) -> None:
        """The constraints whose offset depends on time at time t: each restored to its state at the first
        evaluation (the start time t0) and stepped from t0 to t (its offset evaluated at its time)."""
        if not self.timed:
            return
        t0, states = self.saved(t)
        for slave, state in zip(self.timed, states):
            slave.set_state(state)
            if t > t0:
                slave.do_step(t0, t - t0)

    def compilable(self) -> bool:
        """Whether the compiled exchange can make an evaluation's calls (``compile``): every constraint's reads and
        writes, and the timed ones' states restored and steps."""
        return (all(compilable(slave) for slave in self.slaves)
                and all(compilable(slave, "fmi2SetFMUstate", "fmi2DoStep") for slave in self.timed))

    def compile(self, runner: Any, add_put: Callable[[Program], bool], stated: list[tuple[Any, slice]]) -> None:
        """The compiled programs of an evaluation (``mechfmu.master.exchange``): the timed constraints restored and
        stepped to the run's time, the forces λ set from the program's first values, the components put at (t, x)
        by ``add_put`` and the residuals read (``probe``), then the derivatives of the ``stated`` components
        (``settle``)."""
        for name in ("probe", "settle"):
            program = self.programs[name] = Program(runner)
            start = program.reserve(len(self.slaves))
            self.start_at = program.reserve(1)  # the timed constraints' start time
            for j, slave in enumerate(self.timed):  # before λ: a restored state has its own
                program.call(SET_STATE, slave, 0, j)
                program.step_from(slave, self.start_at)
            for j, slave in enumerate(self.slaves):
                program.set(slave, [LAMBDA], start + j)
            add_put(program)
            self.residuals_at = np.array([program.get(slave, [VELOCITY_RESIDUAL, CONSTRAINT_EQUATION])
                                          for slave in self.slaves])[:, None] + np.arange(2)
        for slave, part in stated:
            self.programs["settle"].call(GET_DERIVATIVES, slave, part.stop - part.start, part.start)
        self.values = {name: np.ctypeslib.as_array(program.values) for name, program in self.programs.items()}

    def evaluate(self, t: float, x: np.ndarray, lambdas: np.ndarray, place: Callable[[float, np.ndarray], None],
                 settle: bool) -> np.ndarray:
        """The residuals (ċ, c per constraint) with the components at (t, x) (``place`` puts them there and passes
        the outputs on) and the forces λ; ``settle``: also the derivatives there (``rates``)."""
        if self.programs:
            name = "settle" if settle else "probe"
            program, values = self.programs[name], self.values[name]
            values[:len(lambdas)] = lambdas
            if self.timed:
                values[self.start_at] = self.saved(t)[0]
            rates = np.empty(self.size) if settle else None
            program.run(t, states=np.ascontiguousarray(x, dtype=float), derivatives=rates, handles=self.handles)
            for component in clocked(self.components):
                component.time = t
            if rates is not None:
                self.rates = rates
            return values[self.residuals_at]
        self.at_time(t)
        for slave, value in zip(self.slaves, lambdas):
            slave.set([LAMBDA], [float(value)])
        place(t, x)
        if settle:
            self.rates = np.array([v for c in self.components for v in c.derivatives()], dtype=float)
        return np.array([s.get([VELOCITY_RESIDUAL, CONSTRAINT_EQUATION]) for s in self.slaves], dtype=float)

    def solve(self, t: float, x: np.ndarray, place: Callable[[float, np.ndarray], None]) -> None:
        """λ at (t, x), leaving the components there with it and its derivatives in ``rates`` (``place`` puts the
        components at a point and passes the outputs on). dċ/dt along the motion by differences at t + δ and
        t + 2δ, δ = ``DELTA``·max(1, |t|) (second order, forward: a component may refuse a time before its last
        accepted point; exact where ċ is linear in the states and in time)."""
        active = self.active
        k1, k2 = (gain[active] for gain in self.gains)
        delta = DELTA * max(1.0, abs(t))
        values = self.evaluate(t, x, self.lambdas, place, True)
        if not active.any():
            return
        if self.sensitivity is None:
            self.linearize()
        for _ in range(MAX_ITERATIONS):
            rates = self.rates
            ahead = self.evaluate(t + delta, x + delta * rates, self.lambdas, place, False)[active, 0]
            farther = self.evaluate(t + 2 * delta, x + 2 * delta * rates, self.lambdas, place, False)[active, 0]
            residuals = values[active]
            acceleration = (-3 * residuals[:, 0] + 4 * ahead - farther) / (2 * delta)
            step = -(self.inverse @ (acceleration + k1 * residuals[:, 0] + k2 * residuals[:, 1]))
            self.lambdas[active] += step
            values = self.evaluate(t, x, self.lambdas, place, True)
            if self.constant or np.all(np.abs(step) <= 1e-10 * (1.0 + np.abs(self.lambdas[active]))):
                return
