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
   reject unknown option values in ``__init__`` with a ``ValueError`` naming option and value;
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

    @abstractmethod
    def step(self, system: CoupledSystem, t: float, h: float) -> None:
        """Advance every slave from t to t + h and leave all connected inputs consistent."""


ALGORITHMS: dict[str, type[CouplingAlgorithm]] = {}


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
    The first iteration uses ``U_start`` (a plain Jacobi step). ``relaxation="aitken"`` (default)
    updates the guess with Aitken's dynamic relaxation factor (Irons-Tuck, as in partitioned
    fluid-structure codes), which makes stiff couplings (contact friction) converge where plain
    substitution oscillates. Converged when every value changed
    by at most ``tolerance·(1 + |U|)`` between iterations; after ``max_iterations`` without
    convergence the run stops with status "error" and the residual. Counters: ``iterations``
    (slave steps per macro step summed), ``rollbacks``.
    """

    name = "fixed-point"
    options = {"inputs": "average", "tolerance": "1e-10", "max_iterations": "30", "relaxation": "aitken"}

    def __init__(self, **options: Any):
        super().__init__(**options)
        if self.config["inputs"] not in ("average", "end"):
            raise ValueError(f"algorithm 'fixed-point': inputs = {self.config['inputs']!r}; use 'average' or 'end'")
        if self.config["relaxation"] not in ("aitken", "none"):
            raise ValueError(f"algorithm 'fixed-point': relaxation = {self.config['relaxation']!r}; "
                             "use 'aitken' or 'none'")
        try:
            self.tolerance = float(self.config["tolerance"])
            self.max_iterations = int(self.config["max_iterations"])
        except (TypeError, ValueError):
            raise ValueError(f"algorithm 'fixed-point': tolerance = {self.config['tolerance']!r} and max_iterations = "
                             f"{self.config['max_iterations']!r} must be numbers") from None
        if not (self.tolerance > 0 and self.max_iterations >= 2):
            raise ValueError(f"algorithm 'fixed-point': tolerance must be > 0 and max_iterations >= 2, got "
                             f"{self.tolerance!r}, {self.max_iterations!r}")
        self.counters.update(iterations=0, rollbacks=0)

    def step(self, system: CoupledSystem, t: float, h: float) -> None:
        start = system.connection_values()
        saved = system.save_states()
        previous = start
        omega, last_residual = 1.0, None
        try:
            for k in range(1, self.max_iterations + 1):
                if k > 1:
                    system.restore_states(saved)
                    self.counters["rollbacks"] += 1
                    held = previous if self.config["inputs"] == "end" else [
                        0.5 * (a + b) for a, b in zip(start, previous)]
                    system.set_connection_values(held)
                for slave in system.slaves.values():
                    system.do_step(slave, t, h)
                self.counters["iterations"] += 1
                system.transfer(system.ordered_plan)
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
