"""Unconnected inputs that carry physics, found before a run, each named with what to do.

An input that no connection feeds keeps its start value for the whole run, silently. Where that input
carries a flange's physics the result is wrong without any sign (an oscillator whose spring gets the
mass's position but not its velocity has no damping: 3.7e-3 m instead of 2.0e-3 m), so
``load_scenario`` lists these inputs in ``Scenario.warnings`` and ``simulate`` copies them into
``Result.warnings``. The flanges come from the port vocabulary (components/ports.py):

- A flange that outputs its motion (a body's ``flange_x``, a rod's ``flange_b``, a housing or motion
  source; a ``RigidBody``'s pose) takes the forces of the elements on it in its ports (``flange_x.f``,
  ``flange_x[2].f``, ...; ``force_a.*`` with ``torque_a.*``). A wholly unconnected one is a free end
  without force, as in Modelica: no warning (so the unused ports ``flange_x[2]``..``[4]`` never warn).
  Warned: a port wired in part (its tangents without its force, a force without its torque), and an
  element that reads the flange's motion while its cut force there reaches no input, so the body never
  feels it; the first unwired port is named.
- A flange that reads its motion (a connector's ``flange_x.s``/``.v``, a rod's ``flange_a``, a contact's
  ``sphere.*``/``halfSpace.*``): an input of it left unwired while the flange is used is read as 0 (a
  velocity: no damping). A wholly unconnected one is warned as well: its inputs hold that end at
  position 0, at rest, so the element acts as if fixed to ground there, while in Modelica the same
  unconnected flange is a free end that carries no force. The two readings differ in the force on the
  element's other end, so neither may pass silently: wire a ``Fixed`` (the same numbers) or mark it free.

- A signal input (a source's ``f``, ``tau``, ``s_ref``, ``v_ref``, ``a_ref``: every input of ours outside
  the flanges and the lists below) that nothing drives keeps its start value, so the source does nothing
  (a ``Force`` whose ``f`` is not wired pushes with 0 N): warned, naming the value it keeps.

- A signal's derivative (``signal_derivatives``): an input ``X_rate`` beside a signal input ``X`` (Position's
  ``s_ref_rate`` and ``s_ref_rate_rate``, Speed's ``v_ref_rate``, Accelerate's ``a_ref_rate``, Force's ``f_rate``,
  Torque's ``tau_rate``) is the time derivative of ``X``, as MSL's exact sources differentiate their reference.
  Where ``X`` is wired from an output ``Y`` and ``X_rate`` is neither wired, given a value nor marked free, every
  master wires ``Y_rate -> X_rate`` (times the wire's factor) if the source outputs ``Y_rate`` (a signal source's
  ``y_rate``, ``y_rate_rate``), silently, as a Modelica tool differentiates the signal; if it does not, the input
  keeps its start value in every master (a Position's velocity 0): warned, naming the input, the wire and the value.

Not warned: what a master wires itself (the tangents ``.a``, ``.c``, ``.d`` and a port's ``*_rate`` of
linear-implicit coupling, a constraint's ``lambda``) and a body's drive (``f_drive``, ``tau_drive``, which
Modelica's bodies do not have: none is no force). An input with a value in the SSD is given, not
unconnected.

Inputs left free on purpose are marked in the component's own annotation, which other SSP tools ignore:
``<ssd:Annotations><ssc:Annotation type="org.mechfmu"><mechfmu:Free inputs="flange_a"/></ssc:Annotation>
</ssd:Annotations>`` (``write_scenario(free=["brake.flange_a"])`` writes it): names of inputs, or of ports
or flanges meaning all their inputs, separated by spaces.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mechfmu.components.number_text import with_unit
from mechfmu.components.ports import ANGLE, ANGULAR_VELOCITY, FORCE, LAMBDA, POSITION, RATE, SUPPORT, TORQUE, VELOCITY
from mechfmu.ssp.elements import Connection

if TYPE_CHECKING:
    from mechfmu.ssp.elements import ComponentSpec

MOTION, LOADS = (POSITION, VELOCITY, ANGLE, ANGULAR_VELOCITY), (FORCE, TORQUE)
#: a 1D flange variable ``<flange>[k].<quantity>`` (port ``<flange>[k]``)
FLANGE_VARIABLE = re.compile(r"(?P<port>(?P<flange>[A-Za-z_]\w*)(?:\[\d+\])?)\.(?P<quantity>\w+)")
#: the motion of a 3D body (outputs ``position.x``, ...) or of a contact's side (inputs ``sphere.position.x``)
POSE = ("position", "orientation", "velocity", "angularVelocity")
#: a 3D body's load input ``force_<port>.x`` / ``torque_<port>.x``
BODY_LOAD = re.compile(r"(?:force|torque)_(?P<port>\w+)\.[xyz]")


@dataclass
class Flange:
    """Where a component meets others: its motion (outputs if it ``drives``, inputs if it reads it), the
    cut forces a reading flange returns, and the force ports (port -> its inputs) of a driving
    one; ``members`` are all its variables, ``name`` is '' for a 3D body's pose."""
    name: str
    drives: bool
    motion: list[str] = field(default_factory=list)
    loads: list[str] = field(default_factory=list)
    ports: dict[str, list[str]] = field(default_factory=dict)
    members: set[str] = field(default_factory=set)


@cache
def flanges(cls: Any) -> tuple[Flange, ...]:
    """The flanges of a component class, from its variable names."""
    inputs, outputs = [i.name for i in cls.inputs], [o.name for o in cls.outputs]
    found = []
    parsed = [(n, m) for n in inputs + outputs if (m := FLANGE_VARIABLE.fullmatch(n))]
    for name in dict.fromkeys(m["flange"] for _, m in parsed):
        drives = any(f"{name}.{q}" in outputs for q in (POSITION, ANGLE))
        if not drives and not any(f"{name}.{q}" in inputs for q in (POSITION, ANGLE)):
            continue
        flange = Flange(name, drives, members={n for n, m in parsed if m["flange"] == name})
        flange.motion = [n for q in MOTION if (n := f"{name}.{q}") in (outputs if drives else inputs)]
        if drives:
            for n, m in parsed:
                if m["flange"] == name and n in inputs:
                    flange.ports.setdefault(m["port"], []).append(n)
        else:
            flange.loads = [n for q in LOADS if (n := f"{name}.{q}") in outputs]
        found.append(flange)
    for side in dict.fromkeys(n.split(".")[0] for n in inputs if n.count(".") == 2 and n.split(".")[1] in POSE):
        members = {n for n in inputs + outputs if n.startswith(side + ".")}
        found.append(Flange(side, False, [n for n in inputs if n in members and n.split(".")[1] in POSE],
                            [n for n in outputs if n.split(".")[:2] in ([side, "force"], [side, "torque"])],
                            members=members))
    pose = [n for n in outputs if n.count(".") == 1 and n.split(".")[0] in POSE]
    if pose:
        body = Flange("", True, pose, members=set(pose))
        for n in inputs:
            if m := BODY_LOAD.fullmatch(n):
                body.ports.setdefault(m["port"], []).append(n)
                body.members.add(n)
        found.append(body)
    return tuple(found)


def is_load(name: str) -> bool:
    """A cut force or torque input: 1D ``.f``/``.tau``, 3D ``force_*``/``torque_*``."""
    return name.rsplit(".", 1)[-1] in LOADS or bool(BODY_LOAD.fullmatch(name))


def is_velocity(name: str) -> bool:
    """A velocity input: 1D ``.v``/``.w``, 3D ``.velocity.*``/``.angularVelocity.*``."""
    parts = name.split(".")
    return parts[-1] in (VELOCITY, ANGULAR_VELOCITY) if len(parts) == 2 else parts[-2:-1] in (["velocity"],
                                                                                               ["angularVelocity"])


def covers(mark: str, name: str) -> bool:
    """A free mark (an input, or a port or flange meaning all its inputs) covers the input ``name``."""
    return name == mark or name.startswith((mark + ".", mark + "["))


def listing(names: list[str], component: str = "") -> str:
    """Names (of ``component``) with a common prefix shortened: ``ball.force_a.x/y/z, ball.torque_a.x``."""
    groups: dict[str, list[str]] = {}
    for name in (f"{component}.{n}" if component else n for n in names):
        head, _, tail = name.rpartition(".")
        groups.setdefault(head, []).append(tail)
    return ", ".join(f"{head}.{'/'.join(tails)}" if head else "/".join(tails) for head, tails in groups.items())


def free_hint(component: str, names: list[str]) -> str:
    """How to mark ``names`` of ``component`` as free (names sharing a prefix by the prefix)."""
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(name.rpartition(".")[0] or name, []).append(name)
    marks = [head if len(group) > 1 else group[0] for head, group in groups.items()]
    quoted = ", ".join(f'"{component}.{m}"' for m in marks)
    return (f"write_scenario(free=[{quoted}]) (System: s.free(...)), or in the SSD <mechfmu:Free "
            f"inputs=\"{' '.join(marks)}\"/> in {component}'s org.mechfmu annotation (a free input is left "
            "unconnected on purpose: held at its start value, without this warning)")


def mark_problems(component: str, marks: list[str], inputs: list[str], wired: set[str]) -> list[str]:
    """What is wrong with a component's free marks: one that names no input, or only connected ones."""
    problems = []
    for mark in marks:
        covered = [n for n in inputs if covers(mark, n)]
        if not covered:
            problems.append(f"{component}: free mark {mark!r} names no input (an input, or a port or flange "
                            f"for all its inputs, e.g. {', '.join(inputs[:3]) or 'none: it has no inputs'})")
        elif all(n in wired for n in covered):
            problems.append(f"{component}: free mark {mark!r}, but {listing(covered)} "
                            f"{'is' if len(covered) == 1 else 'are'} connected; remove the mark")
    return problems


def unconnected_inputs(components: dict[str, ComponentSpec], connections: list[Connection]) -> list[str]:
    """A warning per flange of our components with physics inputs left unconnected (module docstring);
    another FMU's ports are not ours to judge."""
    from mechfmu.components import COMPONENTS

    classes = {name: COMPONENTS.get(Path(spec.fmu).stem) for name, spec in components.items()}
    wiring = Wiring(connections, classes)
    warnings = []
    for name, spec in components.items():
        if classes.get(name) is None:
            continue
        for flange in flanges(classes[name]):
            if flange.drives:
                warnings += wiring.driving(name, spec, flange)
            else:
                warnings += wiring.reading(name, spec, flange)
        warnings += [f"{name}.{i.name} is not connected and has no value in the scenario: it keeps its start value "
                     f"{with_unit(f'{i.start:g}', i.unit)} for the whole run, so {name} acts on nothing it should; "
                     "connect a signal "
                     f"to it (e.g. s.connect(sine.y, {name}.{i.name})), give it a value, or, if holding the start "
                     f"value is meant, mark it free: {free_hint(name, [i.name])}"
                     for i in signal_inputs(classes[name]) if wiring.open(name, spec, i.name)]
    return warnings


@cache
def signal_inputs(cls: Any) -> tuple[Any, ...]:
    """A component's signal inputs (module docstring): outside its flanges, not a rate, a constraint force or a
    body's drive."""
    members = set().union(*(f.members for f in flanges(cls)))
    return tuple(i for i in cls.inputs if i.name not in members and RATE not in i.name and i.name != LAMBDA
                 and not i.name.endswith("_drive"))


class Wiring:
    """A scenario's connections, asked about one flange at a time."""

    def __init__(self, connections: list[Connection], classes: dict[str, Any]):
        self.classes = classes
        self.wired = {(c.target, c.target_variable) for c in connections}
        self.feeding = {(c.source, c.source_variable) for c in connections}
        self.links = {(c.source, c.target) for c in connections}
        self.readers: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for c in connections:
            self.readers.setdefault((c.source, c.source_variable), []).append((c.target, c.target_variable))

    def given(self, name: str, spec: ComponentSpec, variable: str) -> bool:
        """Wired, or a value in the SSD."""
        return (name, variable) in self.wired or variable in spec.parameters

    def open(self, name: str, spec: ComponentSpec, variable: str) -> bool:
        """Neither given nor marked free."""
        return not self.given(name, spec, variable) and not any(covers(mark, variable) for mark in spec.free)

    def reading(self, name: str, spec: ComponentSpec, flange: Flange) -> list[str]:
        """A reading flange: its motion inputs wired in part, or not at all."""
        missing = [v for v in flange.motion if self.open(name, spec, v)]
        if not missing:
            return []
        ordered = flange.motion + sorted(flange.members - set(flange.motion))
        used = [v for v in ordered if (name, v) in self.wired or (name, v) in self.feeding]
        if not used and flange.name == SUPPORT:  # a housing left out: fixed, as MSL's useSupport = false
            return []
        if used:
            it = "it" if len(missing) == 1 else "them"
            damping = " (a velocity: no damping of that motion)" if any(map(is_velocity, missing)) else ""
            return [f"{listing(missing, name)} {'is' if len(missing) == 1 else 'are'} not connected while "
                    f"{name}.{used[0]} is: the element reads {it} as the start value throughout{damping}; connect "
                    f"{it}, or mark {it} free if that is meant: {free_hint(name, missing)}"]
        return [f"{name}.{flange.name} is not connected: its inputs {listing(missing)} keep their start values, so "
                "the element holds that end at rest at position 0, as if fixed there (in Modelica an unconnected "
                "flange is a free end that carries no force); connect it, or mark it free if an end fixed there "
                f"is meant: {free_hint(name, [flange.name])}"]

    def driving(self, name: str, spec: ComponentSpec, flange: Flange) -> list[str]:
        """A driving flange: a port wired in part, and elements that read its motion but whose cut force
        there reaches no input and that feed nothing into the body (each gets the flange's next unwired port)."""
        warnings = []
        for inputs in flange.ports.values():
            missing = [v for v in inputs if is_load(v) and self.open(name, spec, v)]
            touched = [v for v in inputs if (name, v) in self.wired]
            if missing and touched:
                it = "it" if len(missing) == 1 else "them"
                warnings.append(f"{listing(missing, name)} {'is' if len(missing) == 1 else 'are'} not connected "
                                f"while {name}.{touched[0]} is: no load arrives there; connect {it}, or mark {it} "
                                f"free if that is meant: {free_hint(name, missing)}")
        silent: dict[tuple[str, str], tuple[str, Flange]] = {}
        for motion in flange.motion:
            for element, variable in self.readers.get((name, motion), []):
                if self.classes.get(element) is None:
                    continue
                side = next((f for f in flanges(self.classes[element]) if not f.drives and variable in f.motion), None)
                if (side is not None and side.loads and not any((element, v) in self.feeding for v in side.loads)
                        and (element, name) not in self.links):  # a force into the body by another way is felt
                    silent.setdefault((element, side.name), (f"{name}.{motion} -> {element}.{variable}", side))
        if not flange.ports:
            return warnings  # a housing or motion source: its reaction force is nobody's input
        ports = [[v for v in inputs if is_load(v)] for inputs in flange.ports.values()]
        unwired = [loads for loads in ports if not any(self.given(name, spec, v) for v in loads)]
        where = f"{name}.{flange.name}" if flange.name else name
        for i, ((element, _), (wire, side)) in enumerate(silent.items()):
            forces = listing(side.loads, element)
            if i >= len(unwired):
                warnings.append(f"{forces} {'reach' if len(side.loads) > 1 else 'reaches'} no input although "
                                f"{element} reads {where}'s motion ({wire}), and every force port of {where} is "
                                f"taken: {name} never feels {element}; wire it into another port or body")
            elif any(self.open(name, spec, v) for v in unwired[i]):
                loads = unwired[i]
                it = "it" if len(loads) == 1 else "them"
                connect = (f"connect {forces} -> {name}.{loads[0]}" if len(loads) == len(side.loads) == 1
                           else f"connect {element}'s forces to them")
                warnings.append(f"{listing(loads, name)} {'is' if len(loads) == 1 else 'are'} not connected: "
                                f"{element} reads {where}'s motion ({wire}), but its "
                                f"{'forces' if len(side.loads) > 1 else 'force'} {forces} "
                                f"{'reach' if len(side.loads) > 1 else 'reaches'} no input, so {name} never feels "
                                f"{element}; {connect}, or mark {it} free if that is meant: "
                                f"{free_hint(name, loads)}")
        return warnings


def derivative_inputs(inputs: Iterable[str]) -> dict[str, str]:
    """A component's inputs that have a derivative among its inputs: ``X -> X_rate`` where ``X`` is a signal input
    (no port: no '.'; not a constraint's ``lambda``) or itself such a derivative (``X_rate -> X_rate_rate``)."""
    names = set(inputs)
    pairs: dict[str, str] = {}
    for name in sorted(names, key=len):
        if name + RATE in names and "." not in name and name != LAMBDA and (RATE not in name or name in pairs.values()):
            pairs[name] = name + RATE
    return pairs


def signal_derivatives(components: dict[str, ComponentSpec], connections: list[Connection],
                       variables: Callable[[ComponentSpec], dict[str, Any]]) -> tuple[list[Connection], list[str]]:
    """The connections every master adds for the derivatives of wired signals (module docstring), and a warning per
    derivative that cannot be derived. ``variables`` gives a component's variables by name (each with its
    ``causality``; ValueError if they cannot be read: that component is left out)."""
    known: dict[str, dict[str, Any]] = {}
    for name, spec in components.items():
        try:
            known[name] = variables(spec)
        except ValueError:
            continue

    def has(component: str, variable: str, causality: str) -> bool:
        v = known.get(component, {}).get(variable)
        return v is not None and v.causality == causality

    pairs = {name: derivative_inputs(n for n, v in found.items() if v.causality == "input")
             for name, found in known.items()}
    taken = {(c.target, c.target_variable) for c in connections}
    derived: list[Connection] = []
    warnings: list[str] = []
    pending = list(connections)
    for con in pending:  # grows while it is walked: a derived rate may have a derivative of its own
        rate = pairs.get(con.target, {}).get(con.target_variable)
        target = components.get(con.target)
        if rate is None or target is None or (con.target, rate) in taken or rate in target.parameters or any(
                covers(mark, rate) for mark in target.free):
            continue
        taken.add((con.target, rate))
        if has(con.source, con.source_variable + RATE, "output"):
            derived.append(Connection(con.source, con.source_variable + RATE, con.target, rate, con.factor))
            pending.append(derived[-1])
            continue
        if con.source not in known:
            continue  # a component whose variables cannot be read is reported where it is checked
        value = start_text(known[con.target][rate])
        warnings.append(f"{con.target}.{rate} is not connected, and {con} gives no derivative of the signal (no "
                        f"output {con.source}.{con.source_variable + RATE}): {con.target}.{rate}, the time derivative "
                        f"of {con.target}.{con.target_variable}, keeps its start value {value} in every master "
                        f"(where the source gives its derivative, every master wires it); connect the signal's "
                        f"derivative to it, give it a value, or, if holding {value} is meant, mark it free: "
                        f"{free_hint(con.target, [rate])}")
    return derived, warnings


def start_text(variable: Any) -> str:
    """A variable's start value with its unit (0 where it declares none, as FMI's default)."""
    try:
        start, unit = float(getattr(variable, "start", None) or 0.0), getattr(variable, "unit", None) or ""
    except (TypeError, ValueError):
        start, unit = 0.0, ""
    return f"{start:g}{' ' + unit if unit else ''}"
