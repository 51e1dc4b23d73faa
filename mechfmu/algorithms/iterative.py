"""Iterative coupling with rollback: fixed-point iteration and Newton.

Both repeat each macro step from FMU states saved at its start (``IterativeAlgorithm``: save →
iterate → free, ``repeat`` restores and counts the rollback) and hold the coupling values over the
repeated step by one rule (``held_inputs``: the average of start and end values, the trapezoidal
rule, or the end values, implicit Euler). A step that does not converge is rolled back and taken as
two halves, each of which may be halved again, up to ``step_reductions`` times (default 10: down to
h/1024); the results stay on the nominal grid. Only when the smallest step fails too does the run
stop, with the message of advice.py.
"""
from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from ..components.ports import CONSTRAINT_EQUATION, LAMBDA, LAMBDA_RATE, VELOCITY_LEVEL, VELOCITY_RESIDUAL
from ..scenario import Connection
from ..slaves import Slave
from ..system import CoupledSystem
from .advice import non_convergence_message
from .base import CouplingAlgorithm, Option, register
from .fixed_step import tangent_connections

#: how coupling values are held over a repeated step
INPUTS = Option("average", "held values over the step: average of start and end (trapezoidal) or end "
                "(implicit Euler)", choices=("average", "end"))


def held_inputs(rule: str, start, end) -> list[float]:
    """The values held over the step: ``end`` (implicit Euler) or ``(start + end)/2`` (trapezoidal)."""
    return list(end) if rule == "end" else [0.5 * (a + b) for a, b in zip(start, end)]


class IterativeAlgorithm(CouplingAlgorithm):
    """A step that is repeated from the states saved at its start until it converges. Subclasses
    implement ``_iterate(system, t, h, start, saved)`` (``start``: ``start_values``, read before the
    states are saved) and call ``repeat(system, saved)`` before each repetition."""

    counter_names: ClassVar[tuple[str, ...]] = ("iterations", "rollbacks")
    min_iterations: ClassVar[int] = 1
    _nominal_step = 0.0  # the macro step being taken (a failing part of it may be shorter)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "step_reductions" not in cls.counter_names:
            cls.counter_names = (*cls.counter_names, "step_reductions")
        cls.options = {**cls.options,
                       "step_reductions": Option("10", "halvings of a step that does not converge before the run "
                                                 "stops (0: stop at once)", kind=int, check=lambda n: 0 <= n <= 40,
                                                 requirement="must be between 0 and 40"),
                       "tolerance": Option(cls.options.get("tolerance", Option("1e-10")).default,
                                           "convergence tolerance", kind=float, check=lambda x: x > 0,
                                           requirement="must be > 0"),
                       "max_iterations": Option(cls.options.get("max_iterations", Option("30")).default,
                                                "iterations before the run stops with an error", kind=int,
                                                check=lambda n, low=cls.min_iterations: n >= low,
                                                requirement=f"must be >= {cls.min_iterations}")}

    @property
    def tolerance(self) -> float:
        return self.config["tolerance"]

    @property
    def max_iterations(self) -> int:
        return self.config["max_iterations"]

    def start_values(self, system: CoupledSystem) -> list[float]:
        return system.connection_values()

    def fail(self, system: CoupledSystem, t: float, h: float, residuals, thresholds, history: list[float],
             constraints: Sequence[str] = (), alternatives: str = "", quantity: str = "residual") -> None:
        """Status "error" with the message of advice.py: the connections' residuals come first in
        ``residuals``/``thresholds``, then those of ``constraints`` (labels)."""
        connections = system.connections[:len(residuals) - len(constraints)]
        labels = [str(c) for c in connections] + list(constraints)
        units = ([system.slaves[c.source].variables[c.source_variable].unit or "" for c in connections]
                 if quantity == "residual" else [])
        self.status = "error"
        self.message = non_convergence_message(self, t, h, labels, residuals, thresholds, history, units, alternatives,
                                               quantity, self._nominal_step)

    def repeat(self, system: CoupledSystem, saved: dict[str, Any]) -> None:
        system.restore_states(saved)
        self.counters["rollbacks"] += 1

    def _step_impl(self, system: CoupledSystem, t: float, h: float) -> None:
        self._nominal_step = h
        self._take_step(system, t, h, self.config["step_reductions"])

    def _take_step(self, system: CoupledSystem, t: float, h: float, reductions: int) -> bool:
        """Iterate the step from t to t + h; if it does not converge and ``reductions`` are left, roll it
        back and take it as two halves (each with one reduction less). True when it converged."""
        start = self.start_values(system)
        saved = system.save_states()
        memory = self.snapshot()
        try:
            self._iterate(system, t, h, start, saved)
            if self.status == "ok" or reductions == 0:
                return self.status == "ok"
            self.repeat(system, saved)
            self.restore(memory)
            self.status, self.message = "ok", ""
            self.counters["step_reductions"] += 1
            half = 0.5 * h
            return (self._take_step(system, t, half, reductions - 1)
                    and self._take_step(system, t + half, h - half, reductions - 1))
        finally:
            system.free_states(saved)

    @abstractmethod
    def _iterate(self, system: CoupledSystem, t: float, h: float, start: list[float], saved: dict[str, Any]) -> None:
        """Repeat the step (``repeat`` before each repetition) until converged; on failure set status."""


@register
class FixedPoint(IterativeAlgorithm):
    """Implicit coupling by fixed-point iteration with rollback (waveform relaxation over one step).

    Every macro step is repeated from the saved FMU states until the exchanged values converge:
    iteration k steps all slaves (Jacobi) with the inputs held at ``V_k`` and then reads the
    end-of-step values ``U_k`` along the connections in dependency order. ``inputs="average"``
    (default) holds ``V_k = (U_start + U_{k−1})/2``: for a body under a spring this is the
    trapezoidal rule (Newmark average acceleration: second order, energy-conserving for a linear
    spring); ``inputs="end"`` holds ``V_k = U_{k−1}`` (implicit Euler, first order, dissipative).
    The first iteration uses ``U_start`` (a plain Jacobi step). ``order="gauss-seidel"`` steps the
    bodies one after another within an iteration, each holding the newest end values (connectors
    re-evaluated after every body; bodies not yet stepped contribute the previous iteration's end
    values), which converges in fewer iterations on chains. ``relaxation="aitken"`` (default)
    updates the guess with Aitken's dynamic relaxation factor (Irons-Tuck, as in partitioned
    fluid-structure codes), which makes stiff couplings (contact friction) converge where plain
    substitution oscillates. Converged when every value changed
    by at most ``tolerance·(1 + |U|)`` between iterations; after ``max_iterations`` without
    convergence the run stops with status "error" and the residual. Counters: ``iterations``
    (slave steps per macro step summed), ``rollbacks``.
    """

    name = "fixed-point"
    min_iterations = 2
    options = {"inputs": INPUTS, "tolerance": Option("1e-10"), "max_iterations": Option("30"),
               "relaxation": Option("aitken", "Aitken's dynamic relaxation or none", choices=("aitken", "none")),
               "order": Option("jacobi", "slaves of one iteration together or one after another",
                               choices=("jacobi", "gauss-seidel"))}

    def initialize(self, system: CoupledSystem, start_time: float) -> None:
        super().initialize(system, start_time)
        algebraic, self.dynamic = system.partition()
        self.algebraic = system.in_dependency_order(algebraic)
        index = {c: i for i, c in enumerate(system.connections)}
        self.incoming = {s: [(c.target_variable, index[c]) for c in system.connections if c.target == s]
                         for s in system.slaves}
        self.outgoing = {s: [(c.source_variable, index[c]) for c in system.connections if c.source == s]
                         for s in system.slaves}

    def _set_inputs(self, slave: Slave, values: list[float]) -> None:
        incoming = self.incoming[slave.name]
        if incoming:
            slave.set([n for n, _ in incoming], [values[i] for _, i in incoming])

    def _read_outputs(self, slave: Slave, latest: list[float]) -> None:
        outgoing = self.outgoing[slave.name]
        if outgoing:
            for (_, i), value in zip(outgoing, slave.get([n for n, _ in outgoing])):
                latest[i] = value

    def _gauss_seidel_sweep(self, system: CoupledSystem, t: float, h: float, start: list[float],
                            previous: list[float]) -> list[float]:
        """Bodies one after another, each holding the average of the start and the newest end values
        (end values of bodies not yet stepped: the previous iteration's); connectors are re-evaluated
        with the newest values after every body."""
        latest = list(previous)
        for slave in self.algebraic:
            system.do_step(slave, t, h)
        for slave in self.dynamic:
            self._set_inputs(slave, held_inputs(self.config["inputs"], start, latest))
            system.do_step(slave, t, h)
            self._read_outputs(slave, latest)
            for connector in self.algebraic:
                self._set_inputs(connector, latest)
                self._read_outputs(connector, latest)
        return latest

    def _iterate(self, system: CoupledSystem, t: float, h: float, start: list[float], saved: dict[str, Any]) -> None:
        previous = start
        omega, last_residual, history = 1.0, None, []
        gauss_seidel = self.config["order"] == "gauss-seidel"
        for k in range(1, self.max_iterations + 1):
            if k > 1:
                self.repeat(system, saved)
                if not gauss_seidel:
                    system.set_connection_values(held_inputs(self.config["inputs"], start, previous))
            if gauss_seidel:
                current = self._gauss_seidel_sweep(system, t, h, start, previous)
            else:
                system.step_all(t, h)
            self.counters["iterations"] += 1
            system.transfer(system.ordered_plan)
            if not gauss_seidel:
                current = system.connection_values()
            if k > 1:
                changes = [abs(a - b) / (1.0 + abs(a)) for a, b in zip(current, previous)]
                history.append(max(changes, default=0.0))
                if history[-1] <= self.tolerance:
                    return
                if self.config["relaxation"] == "aitken":
                    r = [a - b for a, b in zip(current, previous)]
                    if last_residual is not None:
                        dr = [a - b for a, b in zip(r, last_residual)]
                        denominator = sum(x * x for x in dr)
                        if denominator > 0:
                            omega = -omega * sum(a * b for a, b in zip(last_residual, dr)) / denominator
                    last_residual = r
                    current = [b + omega * x for b, x in zip(previous, r)]
            previous = current
        alternatives = ("--option relaxation=aitken (now none); " if self.config["relaxation"] == "none" else "")
        self.fail(system, t, h, changes, [self.tolerance] * len(changes), history, alternatives=alternatives
                  + "--algorithm newton --option coupling=implicit (Newton converges where substitution oscillates)",
                  quantity="relative change")


@register
class Newton(IterativeAlgorithm):
    """Newton coupling with rollback: constraint forces, and optionally every coupling variable.

    Unknowns per macro step:
    - the constraint force ``lambda`` of every constraint slave (an input ``lambda`` with an output
      ``constraintEquation``; components/coordinate_constraint.py). Its residual is the constraint
      at the end of the step: ``constraintEquation`` (position level, or velocity level where the
      constraint says ``velocityLevel``) with ``index="3"`` (default), ``residual_v`` (velocity
      level for all) with ``index="2"``; λ is held over the step; a position-level constraint whose
      force rates reach bodies gets λ̇ too, with the velocity residual (the exact time derivative of the
      position constraint, also without offsetUserFunction_t);
    - with ``coupling="implicit"`` also the end-of-step value of every connection, with the inputs
      held at the average of start and end (``inputs="average"``: trapezoidal, second order,
      A-stable) or at the end value (``inputs="end"``: implicit Euler); residual = value read after
      the step − value assumed. ``coupling="explicit"`` (default) exchanges connections as Jacobi.

    Each residual evaluation restores the saved FMU states and repeats the step. The Jacobian of
    the residuals with respect to the unknowns is built by forward differences (one repeated step
    per unknown), kept across steps and corrected by Broyden's rank-one update
    (``jacobian="broyden"``, default), kept without updates (``"fixed"``), or rebuilt every step
    (``"fresh"``); it is rebuilt whenever an iteration fails to halve the residual. Converged when
    every constraint residual is within ``tolerance`` (absolute, in the constraint's units) and
    every connection residual within ``tolerance·(1 + |value|)``; otherwise after
    ``max_iterations`` the run stops with status "error". Counters: ``iterations`` (residual
    evaluations), ``rollbacks``, ``jacobians``.
    """

    name = "newton"
    enforces_constraints = True
    counter_names = ("iterations", "rollbacks", "jacobians")
    options = {"coupling": Option("explicit", "iterate on the connections too (implicit)",
                                  choices=("explicit", "implicit")),
               "inputs": INPUTS,
               "index": Option("3", "constraints at position (3) or velocity (2) level", choices=("3", "2")),
               "tolerance": Option("1e-10"), "max_iterations": Option("20"),
               "jacobian": Option("broyden", "Jacobian update", choices=("broyden", "fixed", "fresh"))}

    def __init__(self, **options: Any):
        super().__init__(**options)
        self.jacobian: np.ndarray | None = None

    def snapshot(self) -> Any:
        return self.lambdas.copy()

    def restore(self, memory: Any) -> None:
        self.lambdas = memory
        self.jacobian = None  # rebuilt by differences at the shorter step

    def coupling_connections(self, connections: list[Connection], slaves: dict[str, Slave]) -> list[Connection]:
        """The scenario's connections plus the force rates of constraints (lambda_rate) to the bodies."""
        constraint_sources = [c for c in connections if LAMBDA in slaves[c.source].variables]
        return list(connections) + tangent_connections(constraint_sources, slaves)

    def initialize(self, system: CoupledSystem, start_time: float) -> None:
        super().initialize(system, start_time)
        residual_name = CONSTRAINT_EQUATION if self.config["index"] == "3" else VELOCITY_RESIDUAL
        self.constraints = [s for s in system.slaves.values()
                            if s.variables.get(LAMBDA) is not None and s.variables[LAMBDA].causality == "input"
                            and s.variables.get(residual_name) is not None]
        self.implicit = self.config["coupling"] == "implicit"
        rate_wired = {c.source for c in system.connections if c.source_variable.endswith(".f_rate")}
        self.unknowns: list[tuple[Slave, str, str]] = []
        for s in self.constraints:
            self.unknowns.append((s, LAMBDA, residual_name))
            if residual_name == CONSTRAINT_EQUATION and s.name in rate_wired and LAMBDA_RATE in s.variables:
                if VELOCITY_LEVEL not in s.variables or not s.get([VELOCITY_LEVEL])[0]:
                    self.unknowns.append((s, LAMBDA_RATE, VELOCITY_RESIDUAL))
        self.lambdas = np.array([s.get([name])[0] for s, name, _ in self.unknowns], dtype=float)
        if not self.constraints and not self.implicit:
            raise ValueError("algorithm 'newton': the scenario has no constraint (an input 'lambda') to solve for; "
                             "use coupling='implicit' to iterate on the connections")

    def start_values(self, system: CoupledSystem) -> list[float]:
        return system.connection_values() if self.implicit else []

    def _evaluate(self, system: CoupledSystem, t: float, h: float, x: np.ndarray, start: list[float],
                  saved: dict[str, Any] | None) -> np.ndarray:
        """Repeat the step from the saved states (None: the first evaluation) with the unknowns x;
        return the residuals."""
        if saved is not None:
            self.repeat(system, saved)
        n_conn = len(start) if self.implicit else 0
        if self.implicit:
            system.set_connection_values(held_inputs(self.config["inputs"], start, x[:n_conn]))
        for (slave, name, _), value in zip(self.unknowns, x[n_conn:]):
            slave.set([name], [float(value)])
        if not self.implicit:
            system.transfer(system.ordered_plan)  # the constraint forces of the new λ reach the bodies
        system.step_all(t, h)
        self.counters["iterations"] += 1
        system.transfer(system.ordered_plan)
        residuals = [s.get([residual])[0] for s, _, residual in self.unknowns]
        if self.implicit:
            values = np.asarray(system.connection_values())
            return np.concatenate([values - x[:n_conn], residuals])
        return np.asarray(residuals, dtype=float)

    def _converged(self, r: np.ndarray, x: np.ndarray, n_conn: int) -> bool:
        connections_ok = np.all(np.abs(r[:n_conn]) <= self.tolerance * (1.0 + np.abs(x[:n_conn])))
        return bool(connections_ok and np.all(np.abs(r[n_conn:]) <= self.tolerance))

    def _fail(self, system, t, h, r, x, n_conn, history) -> None:
        thresholds = [self.tolerance * (1.0 + abs(v)) for v in x[:n_conn]] + [self.tolerance] * (len(r) - n_conn)
        constraints = [f"constraint '{s.name}' {residual} (unknown {name})" for s, name, residual in self.unknowns]
        if not self.constraints:
            alternatives = "--algorithm fixed-point (Aitken relaxation, no Jacobian: copes with switching elements)"
        elif self.implicit:
            alternatives = "--option coupling=explicit (iterate on the constraint forces only)"
        else:
            alternatives = ""
        self.fail(system, t, h, list(r), thresholds, history, constraints, alternatives)

    def _finite_difference_jacobian(self, system, t, h, x, r, start, saved) -> np.ndarray:
        jacobian = np.empty((len(r), len(x)))
        for j in range(len(x)):
            dx = 1e-7 * max(1.0, abs(x[j]))
            xp = x.copy()
            xp[j] += dx
            jacobian[:, j] = (self._evaluate(system, t, h, xp, start, saved) - r) / dx
        self.counters["jacobians"] += 1
        return jacobian

    def _iterate(self, system: CoupledSystem, t: float, h: float, start: list[float], saved: dict[str, Any]) -> None:
        n_conn = len(start)
        x = np.concatenate([np.asarray(start, dtype=float), self.lambdas])
        r = self._evaluate(system, t, h, x, start, None)
        if self.config["jacobian"] == "fresh" or self.jacobian is None or self.jacobian.shape != (len(r), len(x)):
            if not self._converged(r, x, n_conn):
                self.jacobian = self._finite_difference_jacobian(system, t, h, x, r, start, saved)
        iterations, history = 0, [float(np.max(np.abs(r), initial=0.0))]
        while not self._converged(r, x, n_conn):
            if iterations >= self.max_iterations:
                self._fail(system, t, h, r, x, n_conn, history)
                break
            iterations += 1
            assert self.jacobian is not None  # computed above whenever r had not converged
            try:
                dx = np.linalg.solve(self.jacobian, -r)
            except np.linalg.LinAlgError:
                self.jacobian = self._finite_difference_jacobian(system, t, h, x, r, start, saved)
                dx = np.linalg.lstsq(self.jacobian, -r, rcond=None)[0]
            x_new = x + dx
            r_new = self._evaluate(system, t, h, x_new, start, saved)
            if self.config["jacobian"] == "broyden":
                self.jacobian += np.outer(r_new - r - self.jacobian @ dx, dx) / float(dx @ dx)
            if np.max(np.abs(r_new)) > 0.5 * np.max(np.abs(r)) and not self._converged(r_new, x_new, n_conn):
                self.jacobian = self._finite_difference_jacobian(system, t, h, x_new, r_new, start, saved)
            x, r = x_new, r_new
            history.append(float(np.max(np.abs(r))))
        self.lambdas = x[n_conn:].copy()
        for i, (_, name, _) in enumerate(self.unknowns):  # next guess: λ continued along its rate
            if name == LAMBDA and i + 1 < len(self.unknowns) and self.unknowns[i + 1][1] == LAMBDA_RATE:
                self.lambdas[i] += self.lambdas[i + 1] * h
