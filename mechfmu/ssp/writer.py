"""Writing a scenario's ``SystemStructure.ssd`` (SSP 1.0) from instance names, model names, parameter values
and connections, with every ``ssd:Connector`` (libcosim requires them) and the libcosim and mechfmu
annotations (``write_scenario``); Modelica connects of two flanges become their wires (``flange_connections``).
Every check costs the same per component and per connection whatever the system's size (``Wiring``).
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mechfmu.components.ports import ACCELERATION, ANGLE, ANGULAR_VELOCITY, FORCE, POSITION, TORQUE, VELOCITY
from mechfmu.ssp.files import replaced
from mechfmu.ssp.library import checked_parameters, unknown
from mechfmu.ssp.scenario import NS, SSD_NAME, STEP_SIZE, STOP_TIME

Components = list[tuple[str, str, dict[str, Any]]]
#: a wire as (source component, output, target component, input)
Wire = tuple[str, str, str, str]
#: the variables that make a port a flange (a mechanical cut): its position or its cut force or torque
FLANGE_VARIABLES = (POSITION, ANGLE, FORCE, TORQUE)
#: the characters XML 1.0 cannot hold: the control characters but tab, line feed and carriage return, the
#: surrogates, U+FFFE and U+FFFF (a file holding one cannot be read back)
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
#: the characters a name cannot hold: the control characters (Unicode category Cc) and those of ``NOT_XML``
NOT_IN_NAMES = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def refused_character(text: str, refused: re.Pattern[str] = NOT_IN_NAMES) -> str | None:
    """The first character of ``text`` that ``refused`` finds, named (``the control character U+0000, which
    XML 1.0 cannot hold``); None if there is none."""
    found = refused.search(text)
    if found is None:
        return None
    char = found.group()
    kind = "control character" if char <= "\x9f" else "character"
    return f"the {kind} U+{ord(char):04X}" + (", which XML 1.0 cannot hold" if NOT_XML.match(char) else "")


def check_components(components: Components) -> Components:
    """``components`` with each value as its parameter's declared type reads it; ``ValueError`` naming the
    component and the valid names for an unknown model or parameter, a value of the wrong type or out of
    range, an instance name that is empty, holds a control character (``refused_character``) or is taken twice."""
    from mechfmu.components import COMPONENTS

    checked: Components = []
    names: set[str] = set()
    for instance, model, parameters in components:
        if not isinstance(instance, str) or not instance:
            raise ValueError(f"component name {instance!r}: a name is a non-empty text")
        if (why := refused_character(instance)) is not None:
            raise ValueError(f"component name {instance!r}: the name holds {why}; a name is printable text")
        if instance in names:
            raise ValueError(f"component {instance!r} ({model}): the name is taken twice")
        if model not in COMPONENTS:
            raise ValueError(unknown("model", model, f"component {instance!r}: mechfmu", list(COMPONENTS)))
        try:
            checked.append((instance, model, checked_parameters(model, parameters)))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"component {instance!r}: {exc}") from None
        for parameter, value in checked[-1][2].items():
            if isinstance(value, str) and (why := refused_character(value, NOT_XML)) is not None:
                raise ValueError(f"component {instance!r}: {parameter} = {value!r} holds {why}")
        names.add(instance)
    return checked


class Wiring:
    """The wires of a system's connections, checked as the connections are added (``add``): after any sequence
    of ``add`` calls, ``wires`` and ``parsed`` are what ``flange_connections`` and ``check_wires`` give for all
    the connections at once, with the same errors, and a refused ``add`` changes nothing. ``models``: the
    components' classes by instance name (``place`` adds one)."""

    def __init__(self, components: Iterable[tuple[str, str, Any]] = ()) -> None:
        from mechfmu.components import COMPONENTS

        self.models = {instance: COMPONENTS[model] for instance, model, _ in components}
        self.wires: list[str] = []
        self.parsed: list[Wire] = []
        self._taken: set[tuple[str, str]] = set()  # (body, force port) a connect wired
        self._driven: dict[str, str] = {}  # "component.input" -> "component.output" driving it
        self._declared: dict[type, tuple[list[str], list[str], set[str], set[str], list[str]]] = {}
        self._force_ports: dict[tuple[type, str], tuple[str | None, list[str]]] = {}

    def place(self, instance: str, model: str) -> None:
        """A component more (checked by ``check_components``), which connections added later may name."""
        from mechfmu.components import COMPONENTS

        self.models[instance] = COMPONENTS[model]

    def add(self, connections: Iterable[str]) -> list[Wire]:
        """Wire ``connections`` after those added before (``flange_connections``, then ``check_wires``); their
        wires as (source, output, target, input). ``ValueError`` naming the first that cannot be wired."""
        taken: set[tuple[str, str]] = set()
        driven: dict[str, str] = {}
        wires = [wire for text in connections for wire in self.expand(text, taken)]
        parsed = [self.parse(wire, driven) for wire in wires]
        self._taken |= taken
        self._driven.update(driven)
        self.wires += wires
        self.parsed += parsed
        return parsed

    def _variables(self, instance: str) -> tuple[list[str], list[str], set[str], set[str], list[str]]:
        """A component's outputs and inputs (lists in declared order, then sets) and flanges."""
        cls = self.models[instance]
        if cls not in self._declared:
            outputs, inputs = [o.name for o in cls.outputs], [i.name for i in cls.inputs]
            cuts = [name.rpartition(".") for name in (*outputs, *inputs)]
            flanges = list(dict.fromkeys(port for port, dot, last in cuts if dot and last in FLANGE_VARIABLES))
            self._declared[cls] = outputs, inputs, set(outputs), set(inputs), flanges
        return self._declared[cls]

    def _loads(self, body: str, x: str) -> tuple[str | None, list[str]]:
        """The load (``f`` or ``tau``) flange ``x`` of ``body`` takes and its force ports (``x``, ``x[2]``, ...)."""
        key = (self.models[body], x)
        if key not in self._force_ports:
            inputs = self._variables(body)[3]
            load = next((n for n in (FORCE, TORQUE) if f"{x}.{n}" in inputs), None)
            ports = [p for p in [x] + [f"{x}[{k}]" for k in range(2, 100)] if load and f"{p}.{load}" in inputs]
            self._force_ports[key] = load, ports
        return self._force_ports[key]

    def expand(self, text: str, taken: set[tuple[str, str]]) -> list[str]:
        """The wires of one connection (``flange_connections``), ``taken`` holding the force ports it and the
        connections before it in its ``add`` wire."""
        if "<->" not in text:
            return [text]
        ends = [tuple(part.strip().split(".", 1)) for part in text.split("<->")]
        if len(ends) != 2 or any(len(end) != 2 for end in ends):
            raise ValueError(f"connect {text!r}: write COMPONENT.FLANGE <-> COMPONENT.FLANGE")
        for instance, flange in ends:
            if instance not in self.models:
                raise ValueError(f"connect {text!r}: " + unknown("component", instance, "the system",
                                                                  list(self.models)))
            flanges = self._variables(instance)[4]
            if flange not in flanges:
                raise ValueError(f"connect {text!r}: " + unknown("flange", flange, instance, flanges))
        outputs = {end[0]: self._variables(end[0])[2] for end in ends}
        inputs = {end[0]: self._variables(end[0])[3] for end in ends}
        driving = [end for end in ends if {f"{end[1]}.{POSITION}", f"{end[1]}.{ANGLE}"} & outputs[end[0]]]
        if len(driving) != 1:
            raise ValueError(f"connect {text!r}: exactly one side must output the flange's position "
                             f"({'both do' if driving else 'neither does'})")
        (body, x), (element, y) = driving[0], ends[1] if ends[0] == driving[0] else ends[0]
        wires = []
        for names in ((POSITION, ANGLE), (VELOCITY, ANGULAR_VELOCITY)):  # a role's translational, rotational name
            a = next((n for n in names if f"{x}.{n}" in outputs[body]), None)
            b = next((n for n in names if f"{y}.{n}" in inputs[element]), None)
            if a and b:
                wires.append(f"{body}.{x}.{a} -> {element}.{y}.{b}")
        if (getattr(self.models[element], "reads_accelerations", False)  # a friction element's path parameter
                and f"{x}.{ACCELERATION}" in outputs[body] and f"{y}.{ACCELERATION}" in inputs[element]):
            wires.append(f"{body}.{x}.{ACCELERATION} -> {element}.{y}.{ACCELERATION}")
        force = next((n for n in (FORCE, TORQUE) if f"{y}.{n}" in outputs[element]), None)
        if force is None:
            return wires
        load, ports = self._loads(body, x)
        if not ports:
            return wires  # a housing or a motion source: its reaction force is nobody's input
        free = next((p for p in ports if (body, p) not in self._taken and (body, p) not in taken), None)
        if free is None:
            raise ValueError(f"connect {text!r}: {body}.{x} takes no (more) force: "
                             f"{len(ports)} port(s), all wired")
        taken.add((body, free))
        return [*wires, f"{element}.{y}.{force} -> {body}.{free}.{load}"]

    def parse(self, text: str, driven: dict[str, str]) -> Wire:
        """One wire ``"a.x -> b.y"`` as (a, x, b, y) (``check_wires``), ``driven`` holding the inputs it and the
        wires before it in its ``add`` drive."""
        ends = [part.strip().partition(".") for part in text.split("->")]
        if len(ends) != 2 or not all(end[0] and end[2] for end in ends):
            raise ValueError(f"connection {text!r}: write COMPONENT.OUTPUT -> COMPONENT.INPUT")
        (source, _, output), (target, _, input_) = ends
        for instance in (source, target):
            if instance not in self.models:
                raise ValueError(f"connection {text!r}: " + unknown("component", instance, "the system",
                                                                     list(self.models)))
        outputs, inputs = self._variables(source)[0], self._variables(target)[1]
        if output not in self._variables(source)[2]:
            raise ValueError(f"connection {text!r}: " + unknown("output", output, source, outputs))
        if input_ not in self._variables(target)[3]:
            raise ValueError(f"connection {text!r}: " + unknown("input", input_, target, inputs))
        key = f"{target}.{input_}"
        if key in self._driven or key in driven:
            raise ValueError(f"connection {text!r}: {key} is driven twice (also by "
                             f"{self._driven.get(key) or driven[key]})")
        driven[key] = f"{source}.{output}"
        return source, output, target, input_


def check_wires(components: Components, wires: list[str]) -> list[Wire]:
    """Each ``"a.x -> b.y"`` as (a, x, b, y); ``ValueError`` naming the wire and the valid names if ``a`` or
    ``b`` is not a component, ``x`` not an output of ``a``, ``y`` not an input of ``b``, or an input is driven
    twice."""
    wiring, driven = Wiring(components), {}  # type: Wiring, dict[str, str]
    return [wiring.parse(text, driven) for text in wires]


def flange_connections(components: list[tuple[str, str, dict[str, Any]]], connections: list[str]) -> list[str]:
    """Every ``"A.x <-> B.y"`` (a Modelica ``connect`` of two flanges) as its wires: the position and
    velocity (``s``/``phi``, ``v``/``w``) from the side that outputs them (a body, a housing, a motion
    source, a rod's driven end) to the other's inputs ``y.s``, ``y.v``, and the other's cut force ``y.f``
    back into the first free force port of the flange (``x.f``, ``x[2].f``, ... of a body: components/mass.py
    ``PORTS``; none for a housing or motion source), so any number of elements up to the ports meet at a
    flange and their forces add, as in Modelica. Wires written as ``->`` pass unchanged. ValueError naming
    the connect if it cannot be wired."""
    wiring, taken = Wiring(components), set()  # type: Wiring, set[tuple[str, str]]
    return [wire for text in connections for wire in wiring.expand(text, taken)]


def write_scenario(folder: str | Path, name: str, components: list[tuple[str, str, dict[str, Any]]],
                   connections: list[str], stop_time: float = STOP_TIME, step_size: float = STEP_SIZE,
                   description: str = "",
                   algorithm: str = "auto", fmu_folder: str = "../../fmus", free: list[str] | tuple[str, ...] = (),
                   built_fmus: bool = True, tolerance: tuple[float, float] | None = None,
                   **algorithm_options: str) -> Path:
    """Write ``folder/SystemStructure.ssd``: ``components`` as (instance name, model, parameter
    values), ``connections`` as ``"source.output -> target.input"`` or as Modelica connects of two
    flanges, ``"mass.flange_b <-> spring.flange_a"`` (``flange_connections``); ``stop_time`` and ``step_size``
    [s] by default ``STOP_TIME`` = 1 s and ``STEP_SIZE`` = 1e-3 s, as ``System`` and an SSD without an experiment
    (``mechfmu.ssp.scenario.STOP_TIME``). The ssd:Connectors (with
    their causality, from the component declarations) and both annotations are generated, so the
    file runs in this master and unchanged in libcosim. ``fmu_folder``: the FMUs' folder relative to
    ``folder`` (the default fits ``scenarios/NAME/``). ``free``: inputs left unconnected on purpose,
    ``"COMPONENT.INPUT"`` or a port or flange for all its inputs (``"brake.flange_a"``), written as the
    component's ``<mechfmu:Free inputs=".."/>`` (``mechfmu.ssp.unconnected``); ``built_fmus``: the system's
    ``<mechfmu:Sources fallback="built"/>``, a missing source is mechfmu's built FMU (``mechfmu.ssp.fmu_sources``);
    ``tolerance``: the run's (rtol, atol), the Master's ``rtol``/``atol`` (``mechfmu.master.accuracy``; None:
    the defaults).
    Checked first (``check_components``, ``check_wires``): ValueError naming the component, parameter, port or
    connection and the valid names, a free mark that is not a free input of the scenario's components, or a
    name or description holding a character the file cannot carry (``refused_character``)."""
    from mechfmu.components import COMPONENTS
    from mechfmu.ssp.unconnected import covers

    for prefix, uri in NS.items():
        ET.register_namespace(prefix, uri)
    texts = [("name", name, NOT_IN_NAMES), ("description", description, NOT_XML),
             *((f"option {key}", str(value), NOT_XML) for key, value in algorithm_options.items())]
    for what, text, refused in texts:
        if (why := refused_character(text, refused)) is not None:
            raise ValueError(f"scenario {name!r}: the {what} holds {why}")
    components = check_components(components)
    parsed = Wiring(components).add(connections)
    used: dict[str, list[str]] = {}
    for s_comp, s_var, t_comp, t_var in parsed:
        for end_comp, var in ((s_comp, s_var), (t_comp, t_var)):
            if var not in used.setdefault(end_comp, []):
                used[end_comp].append(var)
    models = {instance: COMPONENTS[model] for instance, model, _ in components}
    marks: dict[str, list[str]] = {}
    connected = {(t, v) for _, _, t, v in parsed}
    for text in free:
        instance, _, mark = text.partition(".")
        inputs = [i.name for i in models[instance].inputs] if instance in models else []
        covered = [n for n in inputs if covers(mark, n)]
        if not covered or all((instance, n) in connected for n in covered):
            raise ValueError(f"free {text!r}: not an unconnected input, port or flange of a component of the "
                             "scenario (COMPONENT.INPUT, e.g. brake.flange_a)")
        marks.setdefault(instance, []).append(mark)

    def q(prefix: str, tag: str) -> str:
        return f"{{{NS[prefix]}}}{tag}"

    root = ET.Element(q("ssd", "SystemStructureDescription"), version="1.0", name=name)
    if description:
        root.append(ET.Comment(f" {comment_text(description)} "))
    system = ET.SubElement(root, q("ssd", "System"), name=name)
    elements = ET.SubElement(system, q("ssd", "Elements"))
    for instance, model, params in components:
        cls = COMPONENTS[model]
        causality = {**{p.name: "parameter" for p in cls.parameters}, **{i.name: "input" for i in cls.inputs},
                     **{o.name: "output" for o in cls.outputs}}
        comp = ET.SubElement(elements, q("ssd", "Component"), name=instance, source=f"{fmu_folder}/{model}.fmu",
                             type="application/x-fmu-sharedlibrary")
        if used.get(instance):
            connectors = ET.SubElement(comp, q("ssd", "Connectors"))
            for var in used[instance]:
                connector = ET.SubElement(connectors, q("ssd", "Connector"), name=var, kind=causality[var])
                ET.SubElement(connector, q("ssc", "Real"))
        if params:
            values = ET.SubElement(ET.SubElement(ET.SubElement(comp, q("ssd", "ParameterBindings")),
                                                 q("ssd", "ParameterBinding")), q("ssd", "ParameterValues"))
            pset = ET.SubElement(values, q("ssv", "ParameterSet"), version="1.0", name=instance)
            plist = ET.SubElement(pset, q("ssv", "Parameters"))
            for pname, value in params.items():
                param = ET.SubElement(plist, q("ssv", "Parameter"), name=pname)
                kind = ("Boolean" if isinstance(value, bool) else "Integer" if isinstance(value, int)
                        else "String" if isinstance(value, str) else "Real")
                text = (str(value).lower() if isinstance(value, bool)
                        else repr(float(value)) if kind == "Real" else str(value))
                ET.SubElement(param, q("ssv", kind), value=text)
        if instance in marks:
            annotation = ET.SubElement(ET.SubElement(comp, q("ssd", "Annotations")), q("ssc", "Annotation"),
                                       type="org.mechfmu")
            ET.SubElement(annotation, q("mechfmu", "Free"), inputs=" ".join(marks[instance]))
    cons = ET.SubElement(system, q("ssd", "Connections"))
    for s_comp, s_var, t_comp, t_var in parsed:
        ET.SubElement(cons, q("ssd", "Connection"), startElement=s_comp, startConnector=s_var,
                      endElement=t_comp, endConnector=t_var)
    if built_fmus:
        annotation = ET.SubElement(ET.SubElement(system, q("ssd", "Annotations")), q("ssc", "Annotation"),
                                   type="org.mechfmu")
        ET.SubElement(annotation, q("mechfmu", "Sources"), fallback="built")
    experiment = ET.SubElement(root, q("ssd", "DefaultExperiment"), startTime="0.0", stopTime=repr(float(stop_time)))
    annotations = ET.SubElement(experiment, q("ssd", "Annotations"))
    osp = ET.SubElement(annotations, q("ssc", "Annotation"), type="com.opensimulationplatform")
    ET.SubElement(ET.SubElement(osp, q("osp", "Algorithm")), q("osp", "FixedStepAlgorithm"),
                  baseStepSize=repr(float(step_size)))
    ours = ET.SubElement(annotations, q("ssc", "Annotation"), type="org.mechfmu")
    tolerances = {"rtol": repr(float(tolerance[0])), "atol": repr(float(tolerance[1]))} if tolerance else {}
    ET.SubElement(ours, q("mechfmu", "Master"), {"algorithm": algorithm, **algorithm_options, **tolerances})
    ET.indent(root, space="  ")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / SSD_NAME
    with replaced(path) as temporary:
        ET.ElementTree(root).write(temporary, encoding="UTF-8", xml_declaration=True)
        _read_back(temporary, components)
    return path


def _read_back(ssd: Path, components: Components) -> None:
    """Every value of the SSD written at ``ssd`` read back as a run reads it (``binding_values``), each the value
    written; ValueError naming the component, the value and what it reads back as (the file is not kept)."""
    from mechfmu.ssp.parameters import binding_values
    from mechfmu.ssp.readback import same
    written = {c.get("name"): c for c in ET.parse(ssd).getroot().iter(f"{{{NS['ssd']}}}Component")}
    for instance, _, params in components:
        read = {item[0]: item[1] for item in binding_values(written[instance], ssd.parent, {}, lambda _: None)
                if not isinstance(item, str)}
        for name, value in params.items():
            expected = value if isinstance(value, (bool, int, str)) else float(value)
            if name not in read or not same(expected, read[name]):
                raise ValueError(f"component {instance!r}: {name} = {value!r} does not read back from the written "
                                 f"SSD (it reads {read.get(name, 'nothing')!r}); the file is not written")


def comment_text(text: str) -> str:
    """``text`` as it can stand in an XML comment, which ends at the first ``--``: each ``--`` written ``- -`` (so
    a description holding ``-->`` cannot end the comment and put its own elements into the file)."""
    while "--" in text:
        text = text.replace("--", "- -")
    return text


def ssd_content(path: str | Path) -> str:
    """What an SSD says, without its layout: its canonical XML (C14N 2.0, comments kept, whitespace-only text
    dropped) with each component's connector declarations in name order, which mean the same in any order.
    Two files with equal content are the same scenario, however they are laid out."""
    root = ET.parse(path).getroot()
    for connectors in root.iter(f"{{{NS['ssd']}}}Connectors"):
        declared = sorted(connectors, key=lambda c: c.get("name", ""))
        connectors[:] = declared
    return ET.canonicalize(ET.tostring(root, encoding="unicode"), strip_text=True, with_comments=True)
