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

from mechfmu.master.algorithms.advice import non_convergence_message
from mechfmu.master.algorithms.base import CouplingAlgorithm, Option, register
from mechfmu.master.coupled_system import CoupledSystem
from mechfmu.master.slaves import Slave

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

    def coupling_order(self) -> int:
        """Trapezoidal (``inputs="average"``): 2; implicit Euler (``"end"``): 1."""
        return 2 if self.config.get("inputs", "average") == "average" else 1

    @property
    def tolerance(self) -> float:
        return self.config["tolerance"]

    @property
    def max_iterations(self) -> int:
        return self.config["max_iterations"]

    def initialize(self, system: CoupledSystem, start_time: float) -> None:
        super().initialize(system, start_time)
        self.delivered = system.delivered  # what inputs receive for per-connection source values
        index = {c: i for i, c in enumerate(system.connections)}
        switching = self.locator.switching if self.locator is not None else []
        #: (slave, its connected inputs, their connection indices) of every slave whose switchingError is read
        self.switching_inputs = [(s, [c.target_variable for c in system.connections if c.target == s.name],
                                  [index[c] for c in system.connections if c.target == s.name]) for s in switching]

    def start_values(self, system: CoupledSystem) -> list[float]:
        return system.connection_values()

    def hold(self, system: CoupledSystem, start: list[float], end) -> None:
        """Set the values held over a repeated step (``held_inputs``). A slave whose ``switchingError``
        the event locator reads holds the start values: it commits its switching state where the step
        starts (as under Jacobi), so its switching error after the step is that of a switch within it."""
        system.set_connection_values(held_inputs(self.config["inputs"], start, end))
        self.hold_switching_at_start(start)

    def hold_switching_at_start(self, start: list[float]) -> None:
        start = self.delivered(start)
        for slave, names, index in self.switching_inputs:
            if names:
                slave.set(names, [start[i] for i in index])

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
        """Set ``slave``'s connected inputs to what they receive for the per-connection source ``values``."""
        incoming = self.incoming[slave.name]
        if incoming:
            values = self.delivered(values)
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
        switching = {slave.name for slave, _, _ in self.switching_inputs}
        for slave in self.dynamic:
            held = held_inputs(self.config["inputs"], start, latest)
            self._set_inputs(slave, start if slave.name in switching else held)
            system.do_step(slave, t, h)
            if slave.name in switching:
                self._set_inputs(slave, held)
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
                    self.hold(system, start, previous)
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
