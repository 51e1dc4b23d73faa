"""Newton coupling with rollback (``IterativeAlgorithm``, mechfmu/master/algorithms/iterative.py)."""
from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from mechfmu.components.ports import (
    CONSTRAINT_EQUATION,
    FORCE_SUFFIXES,
    LAMBDA,
    LAMBDA_RATE,
    RATE,
    VELOCITY_LEVEL,
    VELOCITY_RESIDUAL,
)
from mechfmu.master.algorithms.base import Option, register
from mechfmu.master.algorithms.fixed_step import tangent_connections
from mechfmu.master.algorithms.iterative import INPUTS, IterativeAlgorithm
from mechfmu.master.coupled_system import CoupledSystem
from mechfmu.master.slaves import Slave
from mechfmu.ssp.scenario import Connection

#: a flange force's rate (``flange_b.f_rate``, ``.tau_rate``): wired, a constraint's lambda_rate is solved too
FORCE_RATES = tuple(suffix + RATE for suffix in FORCE_SUFFIXES)


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
    counter_names: ClassVar[tuple[str, ...]] = ("iterations", "rollbacks", "jacobians")
    options = {"coupling": Option("explicit", "iterate on the connections too (implicit)",
                                  choices=("explicit", "implicit")),
               "inputs": INPUTS,
               "index": Option("3", "constraints at position (3) or velocity (2) level", choices=("3", "2")),
               "tolerance": Option("1e-10"), "max_iterations": Option("20"),
               "jacobian": Option("broyden", "Jacobian update", choices=("broyden", "fixed", "fresh"))}

    def __init__(self, **options: Any):
        super().__init__(**options)
        self.jacobian: np.ndarray | None = None

    def coupling_order(self) -> int:
        """Connections explicit (Jacobi between the constraint solves): 1; implicit: the rule's order."""
        return super().coupling_order() if self.config["coupling"] == "implicit" else 1

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
        rate_wired = {c.source for c in system.connections if c.source_variable.endswith(FORCE_RATES)}
        self.unknowns: list[tuple[Slave, str, str]] = []
        for s in self.constraints:
            self.unknowns.append((s, LAMBDA, residual_name))
            if residual_name == CONSTRAINT_EQUATION and s.name in rate_wired and LAMBDA_RATE in s.variables:
                if VELOCITY_LEVEL not in s.variables or not s.get([VELOCITY_LEVEL])[0]:
                    self.unknowns.append((s, LAMBDA_RATE, VELOCITY_RESIDUAL))
        self.lambdas = np.array([s.get([name])[0] for s, name, _ in self.unknowns], dtype=float)
        if not self.constraints and not self.implicit:
            raise ValueError(f"algorithm 'newton': the scenario has no constraint (an input {LAMBDA!r}) to solve for; "
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
            self.hold(system, start, x[:n_conn])
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
