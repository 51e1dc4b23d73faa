"""Coupling algorithms and the coupled system they act on.

``CoupledSystem`` holds the slaves and connections and knows the data flow:
- ``levels``: the connections sorted into dependency levels. A connection whose source output
  feeds through inputs of its slave (a connector force depends on the flange positions) comes
  after every connection into those inputs, so a feed-through output is read only after its
  inputs were refreshed (OMSimulator's order). A cycle of feed-through is an algebraic loop and
  is rejected.
- ``transfer(plan)``: one batched get per source slave and one batched set per target slave
  per level.

Adding a coupling algorithm (checklist):
1. subclass ``CouplingAlgorithm``, give it a unique ``name`` and keyword options with defaults;
   reject unknown option values in ``__init__`` with a ``ValueError`` naming option and value
   (iterative algorithms: ``check_iteration_options``);
2. implement ``step(system, t, h)``: advance every slave from ``t`` to ``t + h`` and leave every
   connected input consistent with the new outputs; call ``system.do_step`` (raises
   ``StepRefused``) and ``system.transfer``; count extra work in ``self.counters``
   (``iterations``, ``rollbacks``, ...); never raise on non-convergence: set
   ``self.status``/``self.message`` and return;
3. ``initialize`` (optional) if the algorithm needs more than the dependency-ordered propagation;
   ``coupling_connections`` (optional) if it exchanges more than the scenario's connections;
4. decorate with ``@register``; add a convergence test against an analytic solution.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .scenario import Connection
from .slaves import Slave, SlaveError


class StepRefused(SlaveError):
    """A slave refused (discarded) a step."""


class AlgebraicLoopError(ValueError):
    """Feed-through outputs form a cycle; a fixed-step exchange order does not exist."""


@dataclass
class TransferLevel:
    gets: list[tuple[Slave, list[str]]]
    #: (target slave, input names, indices into the flat list of values read in this level)
    sets: list[tuple[Slave, list[str], list[int]]]


@dataclass
class CoupledSystem:
    slaves: dict[str, Slave]
    connections: list[Connection]
    levels: list[list[Connection]] = field(init=False)

    def __post_init__(self) -> None:
        self.levels = self._dependency_levels()
        self.ordered_plan = [self._level_plan(level) for level in self.levels]
        self.strict_plan = [self._level_plan(self.connections)] if self.connections else []

    # --- data flow -----------------------------------------------------------------------
    def _dependency_levels(self) -> list[list[Connection]]:
        feeding = {(c.target, c.target_variable): c for c in self.connections}
        level: dict[Connection, int] = {}

        def visit(con: Connection, path: tuple[Connection, ...]) -> int:
            if con in level:
                return level[con]
            if con in path:
                loop = " -> ".join(str(c) for c in path[path.index(con):] + (con,))
                raise AlgebraicLoopError(f"algebraic loop: {loop}")
            slave = self.slaves[con.source]
            deps = [feeding[(con.source, i)] for i in slave.feedthrough(con.source_variable)
                    if (con.source, i) in feeding]
            level[con] = 1 + max((visit(d, path + (con,)) for d in deps), default=-1)
            return level[con]

        for con in self.connections:
            visit(con, ())
        levels: list[list[Connection]] = [[] for _ in range(1 + max(level.values(), default=-1))]
        for con in self.connections:
            levels[level[con]].append(con)
        return levels

    def _level_plan(self, connections: list[Connection]) -> TransferLevel:
        reads: dict[str, list[str]] = {}
        for c in connections:
            names = reads.setdefault(c.source, [])
            if c.source_variable not in names:
                names.append(c.source_variable)
        flat = {}
        for source, names in reads.items():
            for name in names:
                flat[(source, name)] = len(flat)
        writes: dict[str, tuple[list[str], list[int]]] = {}
        for c in connections:
            names, idx = writes.setdefault(c.target, ([], []))
            names.append(c.target_variable)
            idx.append(flat[(c.source, c.source_variable)])
        return TransferLevel([(self.slaves[s], n) for s, n in reads.items()],
                             [(self.slaves[t], n, i) for t, (n, i) in writes.items()])

    def downstream_plan(self, source: str) -> list[TransferLevel]:
        """Dependency-ordered transfers of everything that changes when ``source``'s outputs change."""
        touched = {source}
        chosen = []
        for level in self.levels:
            picked = [c for c in level if c.source in touched]
            touched.update(c.target for c in picked if self._is_algebraic_path(c))
            chosen.append(picked)
        return [self._level_plan(level) for level in chosen if level]

    def _is_algebraic_path(self, con: Connection) -> bool:
        """True if the target has outputs that feed through the connected input."""
        slave = self.slaves[con.target]
        return any(con.target_variable in slave.feedthrough(o) for o in slave.outputs())

    def transfer(self, plan: list[TransferLevel]) -> None:
        for level in plan:
            values: list[float] = []
            for slave, names in level.gets:
                values.extend(slave.get(names))
            for slave, names, idx in level.sets:
                slave.set(names, [values[i] for i in idx])

    def connection_values(self) -> list[float]:
        """The current value of every connection's source output, in connection order."""
        if not hasattr(self, "_sources"):
            reads: dict[str, list[str]] = {}
            for c in self.connections:
                names = reads.setdefault(c.source, [])
                if c.source_variable not in names:
                    names.append(c.source_variable)
            self._sources = [(self.slaves[s], names) for s, names in reads.items()]
            position = {(s.name, n): i for i, (s, n) in enumerate((s, n) for s, names in self._sources for n in names)}
            self._source_index = [position[(c.source, c.source_variable)] for c in self.connections]
            targets: dict[str, tuple[list[str], list[int]]] = {}
            for i, c in enumerate(self.connections):
                names, index = targets.setdefault(c.target, ([], []))
                names.append(c.target_variable)
                index.append(i)
            self._targets = [(self.slaves[t], names, index) for t, (names, index) in targets.items()]
        flat: list[float] = []
        for slave, names in self._sources:
            flat.extend(slave.get(names))
        return [flat[i] for i in self._source_index]

    def set_connection_values(self, values: list[float]) -> None:
        """Set every connected input to the given per-connection values (as from ``connection_values``)."""
        if not hasattr(self, "_targets"):
            self.connection_values()
        for slave, names, index in self._targets:
            slave.set(names, [values[i] for i in index])

    def save_states(self) -> dict[str, Any]:
        return {name: slave.get_state() for name, slave in self.slaves.items()}

    def restore_states(self, states: dict[str, Any]) -> None:
        for name, slave in self.slaves.items():
            slave.set_state(states[name])

    def free_states(self, states: dict[str, Any]) -> None:
        for name, slave in self.slaves.items():
            slave.free_state(states[name])

    def do_step(self, slave: Slave, t: float, h: float) -> None:
        if not slave.do_step(t, h):
            raise StepRefused(slave.last_error or f"{slave.name} refused the step at t={t!r}")

    def is_algebraic(self, slave: Slave) -> bool:
        """No output without feed-through (a connector, a fixed point): stepping changes nothing."""
        return all(slave.variables[o].depends_on for o in slave.outputs())


class CouplingAlgorithm(ABC):
    """Base of all coupling algorithms (see the module docstring for the checklist)."""

    name: ClassVar[str] = ""
    options: ClassVar[dict[str, Any]] = {}
    #: solves the force ``lambda`` of constraint slaves (``constraint_slaves``); others are refused them
    enforces_constraints: ClassVar[bool] = False

    def __init__(self, **options: Any):
        unknown = set(options) - set(self.options)
        if unknown:
            raise ValueError(f"algorithm {self.name!r}: unknown option(s) {sorted(unknown)}; "
                             f"known: {sorted(self.options)}")
        self.config = {**self.options, **options}
        self.counters: dict[str, int] = {"steps": 0}
        self.status = "ok"
        self.message = ""

    def initialize(self, system: CoupledSystem, start_time: float) -> None:
        """Propagate the initial outputs to the inputs in dependency order."""
        system.transfer(system.ordered_plan)

    def coupling_connections(self, connections: list[Connection], slaves: dict[str, Slave]) -> list[Connection]:
        """The connections the algorithm exchanges (default: the scenario's)."""
        return list(connections)

    def check_iteration_options(self, choices: dict[str, tuple[str, ...]], min_iterations: int) -> None:
        """Validate the choice options and set ``self.tolerance``/``self.max_iterations`` (iterative
        algorithms); a bad value raises ValueError naming algorithm, option and value."""
        for key, allowed in choices.items():
            if str(self.config[key]) not in allowed:
                raise ValueError(f"algorithm {self.name!r}: {key} = {self.config[key]!r}; use one of {allowed}")
        try:
            self.tolerance = float(self.config["tolerance"])
            self.max_iterations = int(self.config["max_iterations"])
        except (TypeError, ValueError):
            raise ValueError(f"algorithm {self.name!r}: tolerance = {self.config['tolerance']!r} and max_iterations = "
                             f"{self.config['max_iterations']!r} must be numbers") from None
        if not (self.tolerance > 0 and self.max_iterations >= min_iterations):
            raise ValueError(f"algorithm {self.name!r}: tolerance must be > 0 and max_iterations >= {min_iterations}, "
                             f"got {self.tolerance!r}, {self.max_iterations!r}")

    @abstractmethod
    def step(self, system: CoupledSystem, t: float, h: float) -> None:
        """Advance every slave from t to t + h and leave all connected inputs consistent."""


ALGORITHMS: dict[str, type[CouplingAlgorithm]] = {}


def constraint_slaves(slaves: dict[str, Slave]) -> list[Slave]:
    """Active constraints: an input ``lambda`` (the force a master solves) and an output
    ``constraintEquation`` (components/coordinate_constraint.py), ``activeConnector`` not false."""
    found = []
    for slave in slaves.values():
        lam, equation = slave.variables.get("lambda"), slave.variables.get("constraintEquation")
        if lam is not None and lam.causality == "input" and equation is not None and equation.causality == "output":
            if "activeConnector" not in slave.variables or slave.get(["activeConnector"])[0]:
                found.append(slave)
    return found


def refuse_unenforced_constraints(algorithm: CouplingAlgorithm, slaves: dict[str, Slave]) -> None:
    """Raise ValueError if ``algorithm`` cannot solve the constraints among ``slaves`` (it would leave
    lambda at its start value and the constraint violated, silently)."""
    constraints = constraint_slaves(slaves)
    if constraints and not algorithm.enforces_constraints:
        able = ", ".join(sorted(n for n, cls in ALGORITHMS.items() if cls.enforces_constraints))
        names = ", ".join(f"'{s.name}'" for s in constraints)
        raise ValueError(f"constraint {names}: its force 'lambda' is an input that the master must solve at every step, "
                         f"and algorithm '{algorithm.name}' cannot (lambda would stay at its start value and the "
                         f"constraint be violated). Use an algorithm that enforces constraints: {able} "
                         f"(e.g. --algorithm newton).")


def register(cls: type[CouplingAlgorithm]) -> type[CouplingAlgorithm]:
    if not cls.name or cls.name in ALGORITHMS:
        raise ValueError(f"algorithm name {cls.name!r} missing or already registered")
    ALGORITHMS[cls.name] = cls
    return cls


def make_algorithm(name: str, **options: Any) -> CouplingAlgorithm:
    try:
        cls = ALGORITHMS[name.lower()]
    except KeyError:
        raise ValueError(f"unknown algorithm {name!r}; known: {', '.join(sorted(ALGORITHMS))}") from None
    return cls(**options)


@register
class Jacobi(CouplingAlgorithm):
    """All slaves step from the values at t_n; then values are exchanged.

    ``exchange="ordered"`` (default): along the connections in dependency order, so connector
    forces are consistent with the bodies' states at t_n+1 (OMSimulator). ``exchange="strict"``:
    read every output first, then set every input (libcosim's fixed-step algorithm); connector
    forces then lag one step behind.
    """

    name = "jacobi"
    options = {"exchange": "ordered"}

    def __init__(self, **options: Any):
        super().__init__(**options)
        if self.config["exchange"] not in ("ordered", "strict"):
            raise ValueError(f"algorithm 'jacobi': exchange = {self.config['exchange']!r}; "
                             "use 'ordered' or 'strict'")

    def step(self, system: CoupledSystem, t: float, h: float) -> None:
        for slave in system.slaves.values():
            system.do_step(slave, t, h)
        system.transfer(system.strict_plan if self.config["exchange"] == "strict" else system.ordered_plan)
        self.counters["steps"] += 1


@register
class GaussSeidel(CouplingAlgorithm):
    """Slaves step one after another, each with the newest outputs of those before it.

    Order: algebraic slaves (connectors, fixed points; they have no state, their outputs follow
    their inputs) first, then the others in scenario order. After each slave's step its new
    outputs are passed downstream in dependency order (through the feed-through connectors), so
    the next slave steps with forces computed from the already advanced bodies.

    Limitation (measured on ``geared_rotors``): with zero-order hold a later body steps with a
    connector force computed from the earlier body at t + h and itself at t, a position offset of
    v·h. Between bodies moving fast (not relative to each other) a stiff connector then sees a
    spurious force k·v·h: at 1e3 N.m/rad, 10-20 rad/s and h = 2e-4 s it exceeds the brake torque and
    the geared rotors accelerate. It vanishes with h (first order) but Jacobi, whose bodies see
    each other at the same time, has no such bias.
    """

    name = "gauss-seidel"

    def initialize(self, system: CoupledSystem, start_time: float) -> None:
        super().initialize(system, start_time)
        slaves = list(system.slaves.values())
        self.order = [s for s in slaves if system.is_algebraic(s)] + [s for s in slaves if not system.is_algebraic(s)]
        self.plans = {s.name: system.downstream_plan(s.name) for s in self.order}

    def step(self, system: CoupledSystem, t: float, h: float) -> None:
        for slave in self.order:
            system.do_step(slave, t, h)
            system.transfer(self.plans[slave.name])
        self.counters["steps"] += 1


#: flange force variable suffixes (the tangents are x.c, x.d and x.f_rate / x.tau_rate)
_FORCE_SUFFIXES = (".f", ".tau")
#: flange position suffixes (the flange acceleration is x.a)
_POSITION_SUFFIXES = (".s", ".phi")


def tangent_connections(connections: list[Connection], slaves: dict[str, Slave]) -> list[Connection]:
    """For every wired flange force ``A.x.f -> B.y.f`` (or ``.tau``) where A outputs the tangents
    ``x.c``, ``x.d``, ``x.f_rate`` and B accepts ``y.c``, ``y.d``, ``y.f_rate`` (``y.tau_rate``) as inputs,
    and for every wired flange position ``B.y.s -> A.x.s`` (or ``.phi``) where B outputs ``y.a`` and
    A accepts ``x.a``, the connections that carry them, unless the scenario already wires them."""
    wired = {(c.target, c.target_variable) for c in connections}
    extra = []

    def add(source: str, output: str, target: str, input_: str) -> None:
        out, inp = slaves[source].variables.get(output), slaves[target].variables.get(input_)
        if (out is not None and out.causality == "output" and inp is not None and inp.causality == "input"
                and (target, input_) not in wired):
            extra.append(Connection(source, output, target, input_))
            wired.add((target, input_))

    for con in connections:
        position = next((s for s in _POSITION_SUFFIXES if con.source_variable.endswith(s)), None)
        if position is not None and con.target_variable.endswith(".s"):
            add(con.source, con.source_variable[:-len(position)] + ".a", con.target, con.target_variable[:-2] + ".a")
        source_suffix = next((s for s in _FORCE_SUFFIXES if con.source_variable.endswith(s)), None)
        target_suffix = next((s for s in _FORCE_SUFFIXES if con.target_variable.endswith(s)), None)
        if source_suffix is None or target_suffix is None:
            continue
        source_stem = con.source_variable[:-len(source_suffix)]
        target_stem = con.target_variable[:-len(target_suffix)]
        for out, inp in ((source_stem + ".c", target_stem + ".c"), (source_stem + ".d", target_stem + ".d"),
                         (con.source_variable + "_rate", con.target_variable + "_rate")):
            add(con.source, out, con.target, inp)
    return extra


@register
class LinearImplicit(Jacobi):
    """Jacobi plus linear-implicit coupling: besides each flange force, a connector passes its
    tangents (``flange_x.c`` = ∂f/∂s, ``flange_x.d`` = ∂f/∂v at its own flange, ``flange_x.f_rate``
    the force rate from the other flange moving at its current velocity) to the body wired there,
    which integrates the linearized force implicitly (exactly, components/mass.py) over the step.
    A linear connector to ground then adds no coupling error and a stiff one stays stable at any
    step; between two bodies each predicts the other at constant velocity. The tangent connections
    are found by name (``x.f`` → ``x.c``, ``x.d``, ``x.f_rate``) and added to the scenario's; the
    scenario file stays a plain one (libcosim runs it as explicit Jacobi).
    """

    name = "linear-implicit"

    def coupling_connections(self, connections: list[Connection], slaves: dict[str, Slave]) -> list[Connection]:
        return list(connections) + tangent_connections(connections, slaves)


@register
class FixedPoint(CouplingAlgorithm):
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
    options = {"inputs": "average", "tolerance": "1e-10", "max_iterations": "30", "relaxation": "aitken",
               "order": "jacobi"}

    def __init__(self, **options: Any):
        super().__init__(**options)
        self.check_iteration_options({"inputs": ("average", "end"), "order": ("jacobi", "gauss-seidel"),
                                      "relaxation": ("aitken", "none")}, min_iterations=2)
        self.counters.update(iterations=0, rollbacks=0)

    def initialize(self, system: CoupledSystem, start_time: float) -> None:
        super().initialize(system, start_time)
        slaves = list(system.slaves.values())
        algebraic = [s for s in slaves if system.is_algebraic(s)]
        self.dynamic = [s for s in slaves if not system.is_algebraic(s)]
        ordered_sources = []
        for level in system.levels:
            for c in level:
                if system.slaves[c.source] in algebraic and system.slaves[c.source] not in ordered_sources:
                    ordered_sources.append(system.slaves[c.source])
        self.algebraic = ordered_sources + [s for s in algebraic if s not in ordered_sources]
        index = {c: i for i, c in enumerate(system.connections)}
        self.incoming = {s.name: [(c.target_variable, index[c]) for c in system.connections if c.target == s.name]
                         for s in slaves}
        self.outgoing = {s.name: [(c.source_variable, index[c]) for c in system.connections if c.source == s.name]
                         for s in slaves}

    def _held(self, start: list[float], values: list[float]) -> list[float]:
        return list(values) if self.config["inputs"] == "end" else [0.5 * (a + b) for a, b in zip(start, values)]

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
            self._set_inputs(slave, self._held(start, latest))
            system.do_step(slave, t, h)
            self._read_outputs(slave, latest)
            for connector in self.algebraic:
                self._set_inputs(connector, latest)
                self._read_outputs(connector, latest)
        return latest

    def step(self, system: CoupledSystem, t: float, h: float) -> None:
        start = system.connection_values()
        saved = system.save_states()
        previous = start
        omega, last_residual = 1.0, None
        gauss_seidel = self.config["order"] == "gauss-seidel"
        try:
            for k in range(1, self.max_iterations + 1):
                if k > 1:
                    system.restore_states(saved)
                    self.counters["rollbacks"] += 1
                    if not gauss_seidel:
                        system.set_connection_values(self._held(start, previous))
                if gauss_seidel:
                    current = self._gauss_seidel_sweep(system, t, h, start, previous)
                else:
                    for slave in system.slaves.values():
                        system.do_step(slave, t, h)
                self.counters["iterations"] += 1
                system.transfer(system.ordered_plan)
                if not gauss_seidel:
                    current = system.connection_values()
                if k > 1:
                    residual = max((abs(a - b) / (1.0 + abs(a)) for a, b in zip(current, previous)), default=0.0)
                    if residual <= self.tolerance:
                        break
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
            else:
                self.status = "error"
                self.message = (f"fixed-point iteration did not converge at t={t!r} (h={h!r}): relative change "
                                f"{residual:.3g} > tolerance {self.tolerance:g} after {self.max_iterations} iterations")
        finally:
            system.free_states(saved)
        self.counters["steps"] += 1


@register
class Newton(CouplingAlgorithm):
    """Newton coupling with rollback: constraint forces, and optionally every coupling variable.

    Unknowns per macro step:
    - the constraint force ``lambda`` of every constraint slave (an input ``lambda`` with an output
      ``constraintEquation``; components/coordinate_constraint.py). Its residual is the constraint
      at the end of the step: ``constraintEquation`` (position level, or velocity level where the
      constraint says ``velocityLevel``) with ``index="3"`` (default), ``residual_v`` (velocity
      level for all) with ``index="2"``; λ is held over the step;
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
    options = {"coupling": "explicit", "inputs": "average", "index": "3", "tolerance": "1e-10",
               "max_iterations": "20", "jacobian": "broyden"}

    def coupling_connections(self, connections: list[Connection], slaves: dict[str, Slave]) -> list[Connection]:
        """The scenario's connections plus the force rates of constraints (lambda_rate) to the bodies."""
        constraint_sources = [c for c in connections if "lambda" in slaves[c.source].variables]
        return list(connections) + tangent_connections(constraint_sources, slaves)

    def __init__(self, **options: Any):
        super().__init__(**options)
        self.check_iteration_options({"coupling": ("explicit", "implicit"), "inputs": ("average", "end"),
                                      "index": ("3", "2"), "jacobian": ("broyden", "fixed", "fresh")}, min_iterations=1)
        self.counters.update(iterations=0, rollbacks=0, jacobians=0)
        self.jacobian = None

    def initialize(self, system: CoupledSystem, start_time: float) -> None:
        super().initialize(system, start_time)
        residual_name = "constraintEquation" if str(self.config["index"]) == "3" else "residual_v"
        self.constraints = [s for s in system.slaves.values()
                            if s.variables.get("lambda") is not None and s.variables["lambda"].causality == "input"
                            and s.variables.get(residual_name) is not None]
        self.residual_name = residual_name
        self.implicit = self.config["coupling"] == "implicit"
        # a position-level constraint whose force rates reach bodies gets two unknowns (λ, λ̇) and two
        # residuals (position and velocity at the end of the step); otherwise λ is held
        rate_wired = {c.source for c in system.connections if c.source_variable.endswith(".f_rate")}
        self.unknowns: list[tuple[Slave, str, str]] = []
        for s in self.constraints:
            self.unknowns.append((s, "lambda", residual_name))
            if residual_name == "constraintEquation" and s.name in rate_wired and "lambda_rate" in s.variables:
                if "velocityLevel" not in s.variables or not s.get(["velocityLevel"])[0]:
                    self.unknowns.append((s, "lambda_rate", "residual_v"))
        self.lambdas = np.array([s.get([name])[0] for s, name, _ in self.unknowns], dtype=float)
        if not self.constraints and not self.implicit:
            raise ValueError("algorithm 'newton': the scenario has no constraint (an input 'lambda') to solve for; "
                             "use coupling='implicit' to iterate on the connections")

    def _evaluate(self, system: CoupledSystem, t: float, h: float, x: np.ndarray, start: list[float],
                  saved: dict[str, Any] | None) -> np.ndarray:
        """Repeat the step from the saved states with the unknowns x; return the residuals."""
        if saved is not None:
            system.restore_states(saved)
            self.counters["rollbacks"] += 1
        n_conn = len(start) if self.implicit else 0
        if self.implicit:
            guess = x[:n_conn]
            held = guess if self.config["inputs"] == "end" else 0.5 * (np.asarray(start) + guess)
            system.set_connection_values(list(held))
        for (slave, name, _), value in zip(self.unknowns, x[n_conn:]):
            slave.set([name], [float(value)])
        if not self.implicit:
            system.transfer(system.ordered_plan)  # the constraint forces of the new λ reach the bodies
        for slave in system.slaves.values():
            system.do_step(slave, t, h)
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

    def _finite_difference_jacobian(self, system, t, h, x, r, start, saved) -> np.ndarray:
        jacobian = np.empty((len(r), len(x)))
        for j in range(len(x)):
            dx = 1e-7 * max(1.0, abs(x[j]))
            xp = x.copy()
            xp[j] += dx
            jacobian[:, j] = (self._evaluate(system, t, h, xp, start, saved) - r) / dx
        self.counters["jacobians"] += 1
        return jacobian

    def step(self, system: CoupledSystem, t: float, h: float) -> None:
        start = system.connection_values() if self.implicit else []
        n_conn = len(start)
        x = np.concatenate([np.asarray(start, dtype=float), self.lambdas])
        saved = system.save_states()
        try:
            r = self._evaluate(system, t, h, x, start, None)
            if self.config["jacobian"] == "fresh" or self.jacobian is None or self.jacobian.shape != (len(r), len(x)):
                if not self._converged(r, x, n_conn):
                    self.jacobian = self._finite_difference_jacobian(system, t, h, x, r, start, saved)
            iterations = 0
            while not self._converged(r, x, n_conn):
                if iterations >= self.max_iterations:
                    worst = float(np.max(np.abs(r)))
                    self.status = "error"
                    self.message = (f"newton coupling did not converge at t={t!r} (h={h!r}): largest residual "
                                    f"{worst:.3g} after {iterations} iterations (tolerance {self.tolerance:g})")
                    break
                iterations += 1
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
        finally:
            system.free_states(saved)
        self.lambdas = x[n_conn:].copy()
        for i, (_, name, _) in enumerate(self.unknowns):  # next guess: λ continued along its rate
            if name == "lambda" and i + 1 < len(self.unknowns) and self.unknowns[i + 1][1] == "lambda_rate":
                self.lambdas[i] += self.lambdas[i + 1] * h
        self.counters["steps"] += 1
