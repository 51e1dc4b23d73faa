"""Writing a scenario's ``SystemStructure.ssd`` (SSP 1.0) from instance names, model names, parameter values
and connections, with every ``ssd:Connector`` (libcosim requires them) and the libcosim and mechfmu
annotations (``write_scenario``); Modelica connects of two flanges become their wires (``flange_connections``).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from mechfmu.ssp.files import replaced
from mechfmu.ssp.library import checked_parameters, unknown
from mechfmu.ssp.scenario import NS, SSD_NAME

Components = list[tuple[str, str, dict[str, Any]]]
#: the variables that make a port a flange (a mechanical cut): its position or its cut force or torque
FLANGE_VARIABLES = ("s", "phi", "f", "tau")


def check_components(components: Components) -> Components:
    """``components`` with each value as its parameter's declared type reads it; ``ValueError`` naming the
    component and the valid names for an unknown model or parameter, a value of the wrong type or out of
    range, an instance name that is empty or taken twice."""
    from mechfmu.components import COMPONENTS

    checked: Components = []
    for instance, model, parameters in components:
        if not isinstance(instance, str) or not instance:
            raise ValueError(f"component name {instance!r}: a name is a non-empty text")
        if instance in {c[0] for c in checked}:
            raise ValueError(f"component {instance!r} ({model}): the name is taken twice")
        if model not in COMPONENTS:
            raise ValueError(unknown("model", model, f"component {instance!r}: mechfmu", list(COMPONENTS)))
        try:
            checked.append((instance, model, checked_parameters(model, parameters)))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"component {instance!r}: {exc}") from None
    return checked


def check_wires(components: Components, wires: list[str]) -> list[tuple[str, str, str, str]]:
    """Each ``"a.x -> b.y"`` as (a, x, b, y); ``ValueError`` naming the wire and the valid names if ``a`` or
    ``b`` is not a component, ``x`` not an output of ``a``, ``y`` not an input of ``b``, or an input is driven
    twice."""
    from mechfmu.components import COMPONENTS

    models = {instance: COMPONENTS[model] for instance, model, _ in components}
    parsed, driven = [], {}  # type: list[tuple[str, str, str, str]], dict[str, str]
    for text in wires:
        ends = [part.strip().partition(".") for part in text.split("->")]
        if len(ends) != 2 or not all(end[0] and end[2] for end in ends):
            raise ValueError(f"connection {text!r}: write COMPONENT.OUTPUT -> COMPONENT.INPUT")
        (source, _, output), (target, _, input_) = ends
        for instance in (source, target):
            if instance not in models:
                raise ValueError(f"connection {text!r}: " + unknown("component", instance, "the system", list(models)))
        outputs = [o.name for o in models[source].outputs]
        inputs = [i.name for i in models[target].inputs]
        if output not in outputs:
            raise ValueError(f"connection {text!r}: " + unknown("output", output, source, outputs))
        if input_ not in inputs:
            raise ValueError(f"connection {text!r}: " + unknown("input", input_, target, inputs))
        key = f"{target}.{input_}"
        if key in driven:
            raise ValueError(f"connection {text!r}: {key} is driven twice (also by {driven[key]})")
        driven[key] = f"{source}.{output}"
        parsed.append((source, output, target, input_))
    return parsed


def flange_connections(components: list[tuple[str, str, dict[str, Any]]], connections: list[str]) -> list[str]:
    """Every ``"A.x <-> B.y"`` (a Modelica ``connect`` of two flanges) as its wires: the position and
    velocity (``s``/``phi``, ``v``/``w``) from the side that outputs them (a body, a housing, a motion
    source, a rod's driven end) to the other's inputs ``y.s``, ``y.v``, and the other's cut force ``y.f``
    back into the first free force port of the flange (``x.f``, ``x[2].f``, ... of a body: components/mass.py
    ``PORTS``; none for a housing or motion source), so any number of elements up to the ports meet at a
    flange and their forces add, as in Modelica. Wires written as ``->`` pass unchanged. ValueError naming
    the connect if it cannot be wired."""
    from mechfmu.components import COMPONENTS

    models = {instance: COMPONENTS[model] for instance, model, _ in components}
    taken: set[tuple[str, str]] = set()
    wires = []
    for text in connections:
        if "<->" not in text:
            wires.append(text)
            continue
        ends = [tuple(part.strip().split(".", 1)) for part in text.split("<->")]
        if len(ends) != 2 or any(len(end) != 2 for end in ends):
            raise ValueError(f"connect {text!r}: write COMPONENT.FLANGE <-> COMPONENT.FLANGE")
        for instance, flange in ends:
            if instance not in models:
                raise ValueError(f"connect {text!r}: " + unknown("component", instance, "the system", list(models)))
            cuts = [v.name.rpartition(".") for v in (*models[instance].outputs, *models[instance].inputs)]
            flanges = list(dict.fromkeys(port for port, dot, last in cuts if dot and last in FLANGE_VARIABLES))
            if flange not in flanges:
                raise ValueError(f"connect {text!r}: " + unknown("flange", flange, instance, flanges))
        outputs = {end[0]: {o.name for o in models[end[0]].outputs} for end in ends}
        inputs = {end[0]: {i.name for i in models[end[0]].inputs} for end in ends}
        driving = [end for end in ends if {f"{end[1]}.s", f"{end[1]}.phi"} & outputs[end[0]]]
        if len(driving) != 1:
            raise ValueError(f"connect {text!r}: exactly one side must output the flange's position "
                             f"({'both do' if driving else 'neither does'})")
        (body, x), (element, y) = driving[0], ends[1] if ends[0] == driving[0] else ends[0]
        for pos, vel in (("s", "v"), ("phi", "w")):
            if f"{x}.{pos}" in outputs[body]:
                wires += [f"{body}.{x}.{a} -> {element}.{y}.{b}" for a, b in ((pos, "s"), (vel, "v"))
                          if f"{y}.{b}" in inputs[element] and f"{x}.{a}" in outputs[body]]
        if f"{y}.f" not in outputs[element]:
            continue
        load = next((n for n in ("f", "tau") if f"{x}.{n}" in inputs[body]), None)
        ports = [p for p in [x] + [f"{x}[{k}]" for k in range(2, 100)] if load and f"{p}.{load}" in inputs[body]]
        if not ports:
            continue  # a housing or a motion source: its reaction force is nobody's input
        free = next((p for p in ports if (body, p) not in taken), None)
        if free is None:
            raise ValueError(f"connect {text!r}: {body}.{x} takes no (more) force: "
                             f"{len(ports)} port(s), all wired")
        taken.add((body, free))
        wires.append(f"{element}.{y}.f -> {body}.{free}.{load}")
    return wires


def write_scenario(folder: str | Path, name: str, components: list[tuple[str, str, dict[str, Any]]],
                   connections: list[str], stop_time: float, step_size: float, description: str = "",
                   algorithm: str = "auto", fmu_folder: str = "../../fmus", free: list[str] | tuple[str, ...] = (),
                   built_fmus: bool = True, tolerance: tuple[float, float] | None = None,
                   **algorithm_options: str) -> Path:
    """Write ``folder/SystemStructure.ssd``: ``components`` as (instance name, model, parameter
    values), ``connections`` as ``"source.output -> target.input"`` or as Modelica connects of two
    flanges, ``"mass.flange_b <-> spring.flange_a"`` (``flange_connections``). The ssd:Connectors (with
    their causality, from the component declarations) and both annotations are generated, so the
    file runs in this master and unchanged in libcosim. ``fmu_folder``: the FMUs' folder relative to
    ``folder`` (the default fits ``scenarios/NAME/``). ``free``: inputs left unconnected on purpose,
    ``"COMPONENT.INPUT"`` or a port or flange for all its inputs (``"brake.flange_a"``), written as the
    component's ``<mechfmu:Free inputs=".."/>`` (``mechfmu.ssp.unconnected``); ``built_fmus``: the system's
    ``<mechfmu:Sources fallback="built"/>``, a missing source is mechfmu's built FMU (``mechfmu.ssp.fmu_sources``);
    ``tolerance``: the run's (rtol, atol), the Master's ``rtol``/``atol`` (``mechfmu.master.accuracy``; None:
    the defaults).
    Checked first (``check_components``, ``check_wires``): ValueError naming the component, parameter, port or
    connection and the valid names, or a free mark that is not a free input of the scenario's components."""
    from mechfmu.components import COMPONENTS
    from mechfmu.ssp.unconnected import covers

    for prefix, uri in NS.items():
        ET.register_namespace(prefix, uri)
    components = check_components(components)
    parsed = check_wires(components, flange_connections(components, connections))
    used: dict[str, list[str]] = {}
    for s_comp, s_var, t_comp, t_var in parsed:
        for end_comp, var in ((s_comp, s_var), (t_comp, t_var)):
            if var not in used.setdefault(end_comp, []):
                used[end_comp].append(var)
    models = {instance: COMPONENTS[model] for instance, model, _ in components}
    marks: dict[str, list[str]] = {}
    for text in free:
        instance, _, mark = text.partition(".")
        inputs = [i.name for i in models[instance].inputs] if instance in models else []
        covered = [n for n in inputs if covers(mark, n)]
        if not covered or all((instance, n) in {(t, v) for _, _, t, v in parsed} for n in covered):
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
    return path


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
