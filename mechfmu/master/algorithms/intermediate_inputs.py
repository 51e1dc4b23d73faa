"""Bodies integrated with the connectors around them inside their own step: FMI 3.0's intermediate inputs
(``intermediate_inputs=on``, with ``events=on`` or ``events=early-return``).

In a co-simulation step an FMU's inputs are held at their values at the step's start, so a body in contact moves
under the force of the contact as it was at t: the coupling's error, first order in the step, moves every later
event away from where one ODE of body and contact puts it. FMI 3.0 lets an FMU ask for its inputs inside a step:
an input listed in ``requiredIntermediateVariables`` is set in the intermediate update where the FMU asks for it
(``intermediateVariableSetRequested``). Our FMUs with continuous states (a Mass, a RigidBody) then integrate their
step as an ODE (Dormand and Prince's RK5(4), the tolerance of ``fmi3EnterInitializationMode``) and ask for the inputs
at every stage; the master answers each request here (``Inner.refresh``):

1. the body's outputs at the stage (its positions and velocities) go to the connectors around it;
2. those connectors' inputs from sources without states (a ``Fixed`` flange, a ``ConstantSpeed`` drive) are their
   values at t, moved on by their rate where the source gives one (``s`` by ``v``, ``phi`` by ``w``: exact for a
   fixed or constant-speed source);
3. the connectors' outputs (the forces) go back to the body.

Body and connectors so move as one ODE over the step, and an event the early return locates (``early_return``)
lies where the monolithic master puts it. A connector counts when it has no continuous states and its inputs come
from this body and from components without states or inputs; a connector between two bodies keeps the plain
coupling (its force held over the step). The connectors' inputs are put back to their values at t after the body's
step, so the other FMUs step from the values at t, as in a Jacobi step.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mechfmu.components.ports import ANGLE, ANGULAR_VELOCITY, POSITION, VELOCITY
from mechfmu.master.algorithms.early_return import early_instance
from mechfmu.master.coupled_system import CoupledSystem, TransferLevel, read_plan, write_plan
from mechfmu.master.slaves import Slave

#: an output and the output that is its rate, by the name's last part (Translational s/v, Rotational phi/w)
RATES = {POSITION: VELOCITY, ANGLE: ANGULAR_VELOCITY}


def _has_states(slave: Slave) -> bool:
    description = getattr(slave, "model_description", None)
    return description is None or bool(description.derivatives)


def _is_fmi3_body(slave: Slave) -> bool:
    return (getattr(slave, "fmi_version", 2) == 3 and not getattr(slave, "model_exchange", True)
            and _has_states(slave))


def _rate(source: Slave, name: str) -> str | None:
    stem, _, last = name.rpartition(".")
    rate = f"{stem}.{RATES[last]}" if stem and last in RATES else None
    info = source.variables.get(rate) if rate else None
    return rate if info is not None and info.causality == "output" else None


@dataclass
class Inner:
    """A body (``mover``) and the connectors around it, integrated as one ODE inside the body's step."""
    system: CoupledSystem
    mover: Slave
    connectors: list[Slave]
    #: the body's outputs to the connectors, and the connectors' outputs back to the body
    into: TransferLevel = field(init=False)
    back: TransferLevel = field(init=False)
    #: per connector its inputs from sources without states: (connector, inputs, source, outputs, rates or None)
    sources: list[tuple[Slave, list[str], Slave, list[str], list[str | None]]] = field(init=False)
    #: every connector's wired inputs
    wired: list[tuple[Slave, list[str]]] = field(init=False)
    start: float = 0.0
    #: at the step's start: every connector input (put back after the step), the sources' values and rates
    saved: list[tuple[Slave, list[str], list[float]]] = field(default_factory=list)
    moving: list[tuple[Slave, list[str], list[float], list[float]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        slaves, names = self.system.slaves, {c.name for c in self.connectors}
        into = [c for c in self.system.connections if c.source == self.mover.name and c.target in names]
        back = [c for c in self.system.connections if c.source in names and c.target == self.mover.name]
        gets, index = read_plan(slaves, into)
        self.into = TransferLevel(gets, write_plan(slaves, into, index))
        gets, index = read_plan(slaves, back)
        self.back = TransferLevel(gets, write_plan(slaves, back, index))
        wired: dict[str, list[str]] = {}
        for c in self.system.connections:
            if c.target in names:
                wired.setdefault(c.target, []).append(c.target_variable)
        self.wired = [(slave, wired[slave.name]) for slave in self.connectors if slave.name in wired]
        self.sources = []
        for connector in self.connectors:
            wires: dict[str, list[Any]] = {}
            for c in self.system.connections:
                if c.target == connector.name and c.source != self.mover.name:
                    wires.setdefault(c.source, []).append(c)
            for source, group in wires.items():
                outputs = [c.source_variable for c in group]
                self.sources.append((connector, [c.target_variable for c in group], slaves[source], outputs,
                                     [_rate(slaves[source], n) for n in outputs]))

    @property
    def required(self) -> list[str]:
        """The body's inputs it asks for at every stage."""
        return [name for _, names, _, _ in self.back.sets for name in names]

    def begin(self, t: float) -> None:
        """Before the body's step from t: the connectors' inputs and the sources' values and rates there."""
        self.start = t
        self.saved = [(slave, names, slave.get(names)) for slave, names in self.wired]
        self.moving = []
        for connector, inputs, source, outputs, rates in self.sources:
            present = [r for r in rates if r is not None]
            measured = dict(zip(present, source.get(present))) if present else {}
            slopes = [measured[r] if r is not None else 0.0 for r in rates]
            if any(slopes):  # else the inputs stay as they are at t
                self.moving.append((connector, inputs, source.get(outputs), slopes))

    def refresh(self, time: float) -> None:
        """The body's inputs at ``time`` inside its step, from its outputs there (module docstring)."""
        self.into.run()
        dt = time - self.start
        for connector, inputs, values, rates in self.moving:
            connector.set(inputs, [v + r * dt for v, r in zip(values, rates)])
        self.back.run()

    def end(self) -> None:
        """After the body's step: the connectors' inputs as they were at its start."""
        for slave, names, values in self.saved:
            slave.set(names, values)


def inner_couplings(system: CoupledSystem) -> dict[str, Inner]:
    """Per FMI 3.0 co-simulation body its ``Inner``: the connectors without continuous states whose outputs it takes
    and whose inputs come from it and from components without states or wired inputs (none: not listed)."""
    slaves = system.slaves
    fed = {c.target for c in system.connections}
    couplings: dict[str, Inner] = {}
    for name, body in slaves.items():
        if not _is_fmi3_body(body):
            continue
        found = []
        for source in dict.fromkeys(c.source for c in system.connections if c.target == name):
            connector = slaves[source]
            inputs = [c for c in system.connections if c.target == source]
            if (_has_states(connector) or not any(c.source == name for c in inputs)
                    or any(c.source != name and (_has_states(slaves[c.source]) or c.source in fed) for c in inputs)):
                continue
            found.append(connector)
        if found:
            couplings[name] = Inner(system, body, found)
    return couplings


def prepare(system: CoupledSystem, algorithm: Any) -> dict[str, Inner]:
    """The ``Inner`` couplings ``intermediate_inputs`` asks for, every FMI 3.0 co-simulation FMU instantiated anew
    where its intermediate inputs change (before its parameters are set: a pooled instance may have had others).
    ValueError for intermediate_inputs=on without an event location that takes them."""
    on = algorithm.config.get("intermediate_inputs") == "on"
    if on and algorithm.config.get("events") in ("off", "rollback"):
        raise ValueError(f"intermediate_inputs=on with events={algorithm.config.get('events')}: the bodies are "
                         "given their inputs inside a step where the master locates events by early return; run "
                         "with events=on or events=early-return")
    couplings = inner_couplings(system) if on else {}
    for name, slave in system.slaves.items():
        instance = early_instance(slave)
        if instance is not None:
            inner = couplings.get(name)
            instance.require([slave.variables[n].value_reference for n in inner.required] if inner else [],
                             algorithm.config.get("intermediate_tolerance"))
    return couplings
