"""What a system diagram shows of each component: its category and its ports.

Category, from the model's declarations (so a new model is classified without a list to keep up):

- connector: reads the position or angle of a port (an input ``<port>.<...>`` in m or rad): it computes a
  force from the motion of ports it does not own (spring-dampers, gaps, friction, contacts, constraints, rods);
- body: else takes a force or torque at a port (an input ``<port>.<...>`` in N or N.m) and integrates the loads
  of the elements wired to it (Mass, Inertia, RigidBody);
- source: neither: prescribes a motion, a force or a signal from its parameters or signal inputs (Fixed,
  Position, Force, Sine, ...);
- other: an FMU that is not a mechfmu model (its declarations are unknown).

A port is the first part of a variable's name without an index (``flange_b[2].f`` is on ``flange_b``,
``sphere.position.x`` on ``sphere``); an undotted variable is a signal port of its own.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

from mechfmu.components import COMPONENTS, Component

BODY, CONNECTOR, SOURCE, OTHER = "body", "connector", "source", "other"
CATEGORIES = (BODY, CONNECTOR, SOURCE, OTHER)
#: units of a position read at a port (a connector's inputs)
POSITION_UNITS = frozenset({"m", "rad"})
#: units of a load taken at a port (a body's inputs)
LOAD_UNITS = frozenset({"N", "N.m"})
#: units that make a flange rotational
ROTATIONAL = frozenset({"rad", "rad/s", "rad/s2", "N.m"})
#: port kinds: a 1D flange (translational or rotational), a 3D frame (world-frame vectors), a signal
TRANSLATIONAL, ROTATIONAL_FLANGE, FRAME, SIGNAL = "translational", "rotational", "frame", "signal"
INDEX = re.compile(r"\[\d+\]$")


def category(cls: type[Component]) -> str:
    """``body``, ``connector`` or ``source`` of a component class (module docstring)."""
    port_inputs = [i for i in cls.inputs if "." in i.name]
    if any(i.unit in POSITION_UNITS for i in port_inputs):
        return CONNECTOR
    if any(i.unit in LOAD_UNITS for i in port_inputs):
        return BODY
    return SOURCE


def port_name(variable: str) -> str:
    """The port a variable belongs to: its name's first part without an index."""
    return INDEX.sub("", variable.split(".", 1)[0])


@dataclass
class Port:
    """A port of a block: its variables (as the connections and the SSD name them), kind, side and place."""
    name: str
    kind: str
    variables: list[str] = field(default_factory=list)
    #: where the port would be without a layout: left, right, or "" (faces its neighbours)
    nominal: str = ""
    free: bool = False  # left unconnected on purpose (mechfmu:Free)
    side: str = "right"
    x: float = 0.0
    y: float = 0.0


@dataclass
class Block:
    """A component drawn as a block."""
    name: str
    model: str
    category: str
    parameters: dict[str, Any]
    units: dict[str, str]  # variable or parameter -> declared unit
    ports: dict[str, Port] = field(default_factory=dict)
    column: int = 0
    row: float = 0.0
    x: float = 0.0
    y: float = 0.0
    width: float = 0.0
    height: float = 0.0


def _kind(variables: list[str], units: dict[str, str]) -> str:
    if all("." not in v for v in variables):
        return SIGNAL
    if any(v.rsplit(".", 1)[1] in ("x", "y", "z") for v in variables if "." in v):
        return FRAME
    return ROTATIONAL_FLANGE if any(units.get(v) in ROTATIONAL for v in variables) else TRANSLATIONAL


def _nominal(port: str, kind: str, category_: str, order: int, inputs: set[str], variables: list[str]) -> str:
    """Left or right as Modelica draws it (flange_a left, flange_b right, signals flow left to right, a
    connector's first port left and its second right), or "" for a port that faces its neighbours."""
    if kind == SIGNAL:
        return "left" if variables[0] in inputs else "right"
    if kind != FRAME and port.endswith(("_a", "_b")):
        return "left" if port.endswith("_a") else "right"
    if category_ == CONNECTOR and order < 2:
        return ("left", "right")[order]
    return ""


def blocks(scenario) -> dict[str, Block]:
    """The blocks of a scenario's components with the ports its connections and connectors use, in SSD order."""
    used: dict[str, list[str]] = {name: list(spec.connectors) for name, spec in scenario.components.items()}
    for c in scenario.connections:
        used[c.source].append(c.source_variable)
        used[c.target].append(c.target_variable)
    found = {}
    for name, spec in scenario.components.items():
        cls = COMPONENTS.get(spec.fmu.stem)
        declared = [] if cls is None else [*cls.outputs, *cls.inputs, *cls.parameters]  # ports: outputs' order
        units = {d.name: d.unit for d in declared}
        inputs = {i.name for i in cls.inputs} if cls else set()
        block = Block(name, spec.fmu.stem, category(cls) if cls else OTHER, dict(spec.parameters), units)
        order = {d.name: i for i, d in enumerate(declared)}
        variables = sorted(dict.fromkeys(used[name]), key=lambda v: (order.get(v, len(order)), v))
        groups: dict[str, list[str]] = {}
        for variable in variables:
            groups.setdefault(port_name(variable), []).append(variable)
        for free in spec.free:
            if free and port_name(free) not in groups:
                groups[port_name(free)] = []
        declared_ports = list(dict.fromkeys(port_name(d.name) for d in (*cls.inputs, *cls.outputs)
                                            if "." in d.name)) if cls else []
        for port, members in groups.items():
            of_port = members or [d.name for d in declared if "." in d.name and port_name(d.name) == port]
            kind = _kind(of_port or [f"{port}.s"], units)
            rank = declared_ports.index(port) if port in declared_ports else 2
            block.ports[port] = Port(port, kind, members, _nominal(port, kind, block.category, rank, inputs,
                                                                   members or [port]),
                                     free=port in {port_name(f) for f in spec.free if f})
        found[name] = block
    return found


def description(scenario) -> str:
    """The scenario's description: the first comment of its SSD (whitespace joined), or ""."""
    ssd = scenario.folder / "SystemStructure.ssd"
    if not ssd.is_file():
        return ""
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    for element in ET.parse(ssd, parser).getroot().iter():
        if element.tag is ET.Comment:
            return " ".join((element.text or "").split())
    return ""
