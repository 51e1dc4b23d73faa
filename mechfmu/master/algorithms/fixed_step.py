"""Fixed-step (non-iterative) coupling: Jacobi, Gauss-Seidel, linear-implicit."""
from __future__ import annotations

from mechfmu.components.ports import (
    ACCELERATION,
    ANGLE,
    ANGULAR_VELOCITY,
    DAMPING_TANGENT,
    FORCE_SUFFIXES,
    POSITION,
    POSITION_SUFFIXES,
    RATE,
    STIFFNESS_TANGENT,
    VELOCITY,
)
from mechfmu.master.algorithms.base import CouplingAlgorithm, Option, register
from mechfmu.master.coupled_system import CoupledSystem
from mechfmu.master.fused_step import fused_program, step_and_transfer
from mechfmu.master.slaves import Slave
from mechfmu.ssp.scenario import Connection
from mechfmu.ssp.unconnected import derivative_inputs


@register
class Jacobi(CouplingAlgorithm):
    """All slaves step from the values at t_n; then values are exchanged.

    ``exchange="ordered"`` (default): along the connections in dependency order, so connector
    forces are consistent with the bodies' states at t_n+1 (OMSimulator). ``exchange="strict"``:
    read every output first, then set every input (libcosim's fixed-step algorithm); connector
    forces then lag one step behind.
    """

    name = "jacobi"
    options = {"exchange": Option("ordered", "order of the exchange after the step", choices=("ordered", "strict"))}

    def initialize(self, system: CoupledSystem, start_time: float) -> None:
        super().initialize(system, start_time)
        fused_program(system, self._plan(system))  # made now: part of the set-up, not of the first step

    def _plan(self, system: CoupledSystem) -> list:
        return system.strict_plan if self.config["exchange"] == "strict" else system.ordered_plan

    def _step_impl(self, system: CoupledSystem, t: float, h: float) -> None:
        step_and_transfer(system, t, h, self._plan(system))


@register
class GaussSeidel(CouplingAlgorithm):
    """Slaves step one after another, each with the newest outputs of those before it.

    Order: algebraic slaves (connectors, fixed points; they have no state, their outputs follow
    their inputs) first, then slaves whose ``switchingError`` an event locator reads (they commit their
    switching state at the step's start values, as under Jacobi), then the others in scenario order.
    After each slave's step its new
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
        algebraic, dynamic = system.partition()
        switching = self.locator.switching if self.locator is not None else []
        self.order = algebraic + switching + [s for s in dynamic if s not in switching]
        self.plans = {s.name: system.downstream_plan(s.name) for s in self.order}

    def _step_impl(self, system: CoupledSystem, t: float, h: float) -> None:
        for slave in self.order:
            system.do_step(slave, t, h)
            system.transfer(self.plans[slave.name])


def stem(variable: str, suffixes: tuple[str, ...]) -> str | None:
    """The flange of a port variable (``flange_a`` of ``flange_a.f``), if it ends with one of ``suffixes``."""
    suffix = next((s for s in suffixes if variable.endswith(s)), None)
    return None if suffix is None else variable[:-len(suffix)]


def tangent_connections(connections: list[Connection], slaves: dict[str, Slave]) -> list[Connection]:
    """For every wired flange force ``A.x.f -> B.y.f`` (or ``.tau``) where A outputs the tangents
    ``x.c``, ``x.d`` and B accepts ``y.c``, ``y.d`` as inputs, for every wired flange position
    ``B.y.s -> A.x.s`` (or ``.phi``) where B outputs ``y.a`` and A accepts ``x.a``, and for every wire
    ``A.X -> B.Y`` (these added ones too) into a port of B where A outputs the rate ``X_rate`` and B accepts
    ``Y_rate`` (``x.f_rate -> y.f_rate``/``y.tau_rate``), the connections that carry them, unless the scenario
    already wires them (the port vocabulary: components/ports.py). A signal's derivative (``y_rate -> f_rate``,
    ``y_rate_rate -> s_ref_rate_rate``) is not a coupling's: every master takes it from the scenario
    (``Scenario.derived``, mechfmu.ssp.unconnected.signal_derivatives). A wire with a factor k
    (``Connection.factor``) passes its rate and acceleration times k; a force wire's tangents are times k and the
    factor of the wire into the connector's flange position (c) or velocity (d): ∂(k·f)/∂s_B = k·c·a for
    s = a·s_B + b."""
    wired = {(c.target, c.target_variable) for c in connections}
    into = {(c.target, c.target_variable): c.factor for c in connections}
    extra: list[Connection] = []
    pending = list(connections)  # grows while it is walked: a wired rate may carry a rate of its own

    def add(source: str, output: str, target: str, input_: str, factor: float) -> None:
        out, inp = slaves[source].variables.get(output), slaves[target].variables.get(input_)
        if (out is not None and out.causality == "output" and inp is not None and inp.causality == "input"
                and (target, input_) not in wired):
            extra.append(Connection(source, output, target, input_, factor))
            pending.append(extra[-1])
            wired.add((target, input_))

    for con in pending:
        source_flange = stem(con.source_variable, POSITION_SUFFIXES)
        target_flange = stem(con.target_variable, (f".{POSITION}",))
        if source_flange is not None and target_flange is not None:
            add(con.source, f"{source_flange}.{ACCELERATION}", con.target, f"{target_flange}.{ACCELERATION}",
                con.factor)
        source_flange = stem(con.source_variable, FORCE_SUFFIXES)
        target_flange = stem(con.target_variable, FORCE_SUFFIXES)
        if source_flange is not None and target_flange is not None:
            for tangent, by in ((STIFFNESS_TANGENT, (POSITION, ANGLE)),
                                (DAMPING_TANGENT, (VELOCITY, ANGULAR_VELOCITY))):
                inner = next((into[(con.source, f"{source_flange}.{n}")] for n in by
                              if (con.source, f"{source_flange}.{n}") in into), 1.0)
                add(con.source, f"{source_flange}.{tangent}", con.target, f"{target_flange}.{tangent}",
                    con.factor * inner)
        if con.target_variable not in derivative_inputs(slaves[con.target].inputs()):  # a signal's: the scenario's
            add(con.source, con.source_variable + RATE, con.target, con.target_variable + RATE, con.factor)
    return extra


#: a connector's tangents a body takes, computed by the master: (connector, its flange force, per tangent the
#: connector's flange input it is the derivative by, body, the body's tangent inputs, each tangent's factor)
DerivedTangents = tuple[Slave, str, list[str], Slave, list[str], list[float]]


def derived_tangents(connections: list[Connection], slaves: dict[str, Slave]) -> list[DerivedTangents]:
    """For every wired flange force ``A.x.f -> B.y.f`` where B accepts ``y.c``, ``y.d`` that no connection feeds
    (A outputs no tangents) and A provides directional derivatives and has the inputs ``x.s``, ``x.v`` (or
    ``.phi``, ``.w``): the tangents ∂(x.f)/∂(x.s) and ∂(x.f)/∂(x.v) to compute from A's directional derivatives
    before each step, with the factors ``tangent_connections`` gives a wired tangent."""
    wired = {(c.target, c.target_variable) for c in connections}
    into = {(c.target, c.target_variable): c.factor for c in connections}
    found: list[DerivedTangents] = []
    for con in connections:
        source_flange = stem(con.source_variable, FORCE_SUFFIXES)
        target_flange = stem(con.target_variable, FORCE_SUFFIXES)
        source, target = slaves[con.source], slaves[con.target]
        if source_flange is None or target_flange is None or not source.provides_directional_derivative():
            continue
        knowns, inputs, factors = [], [], []
        for tangent, by in ((STIFFNESS_TANGENT, (POSITION, ANGLE)), (DAMPING_TANGENT, (VELOCITY, ANGULAR_VELOCITY))):
            name = f"{target_flange}.{tangent}"
            known = next((f"{source_flange}.{n}" for n in by if f"{source_flange}.{n}" in source.inputs()), None)
            variable = target.variables.get(name)
            if (known is None or variable is None or variable.causality != "input" or (con.target, name) in wired
                    or f"{source_flange}.{tangent}" in source.outputs()):
                continue
            knowns.append(known)
            inputs.append(name)
            factors.append(con.factor * into.get((con.source, known), 1.0))
        if knowns:
            found.append((source, con.source_variable, knowns, target, inputs, factors))
    return found


@register
class LinearImplicit(Jacobi):
    """Jacobi plus linear-implicit coupling: besides each flange force, a connector passes its
    tangents (``flange_x.c`` = ∂f/∂s, ``flange_x.d`` = ∂f/∂v at its own flange, ``flange_x.f_rate``
    the force rate from the other flange moving at its current velocity) to the body wired there,
    which integrates the linearized force implicitly (exactly, components/mass.py) over the step.
    A linear connector to ground then adds no coupling error and a stiff one stays stable at any
    step; between two bodies each predicts the other at constant velocity. The tangent connections
    are found by name (``x.f`` → ``x.c``, ``x.d``, ``x.f_rate``) and added to the scenario's; the
    scenario file stays a plain one (libcosim runs it as explicit Jacobi). Any wire ``X -> Y`` into a port
    carries ``X_rate -> Y_rate`` where both exist: a signal source's slope, which reaches a ``Force`` in every
    master, reaches the body behind it, which then integrates the force as a first-order hold (exact for a ramp).
    A connector that outputs no tangents but provides directional derivatives (an FMU of another tool) has its
    stiffness and damping tangents computed by the master before each step (``derived_tangents``); its force rate
    is then 0.
    """

    name = "linear-implicit"

    def initialize(self, system: CoupledSystem, start_time: float) -> None:
        super().initialize(system, start_time)
        self.derived = derived_tangents(system.connections, system.slaves)

    def _step_impl(self, system: CoupledSystem, t: float, h: float) -> None:
        for source, force, knowns, target, inputs, factors in self.derived:
            target.set(inputs, [source.directional_derivative([force], [known], [1.0])[0] * factor
                                for known, factor in zip(knowns, factors)])
        super()._step_impl(system, t, h)

    def coupling_order(self) -> int:
        return 2

    def coupling_connections(self, connections: list[Connection], slaves: dict[str, Slave]) -> list[Connection]:
        return list(connections) + tangent_connections(connections, slaves)
