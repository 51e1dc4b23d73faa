"""Writing SSP 1.0: scenario files (``write_scenario``) and archives with their FMUs (``export_ssp``)
that other tools run unchanged.

``write_scenario`` writes a ``SystemStructure.ssd`` from instance names, model names, parameter values
and connections, with every ``ssd:Connector`` (libcosim requires them) and the libcosim and mechfmu
annotations.

``export_ssp(scenario, target)`` writes ``SystemStructure.ssd`` with every component's source
rewritten to ``resources/<Model>.fmu`` and those FMUs inside, plus the annotations each tool reads:
- libcosim: ``osp:FixedStepAlgorithm baseStepSize`` (already in every scenario);
- OpenModelica's OMSimulator (release 2.1): on ``ssd:System`` an ``oms:FixedStepMaster`` with the
  step size (without it OMSimulator's import fails with "[NewSystem] internal error"), and as the
  first ``ssc:Annotation`` of ``ssd:DefaultExperiment`` its ``oms:SimulationInformation`` (result file);
- ours: ``mechfmu:Master`` (algorithm and options).

``load_scenario`` reads an archive too (``scenario.extract_ssp``).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from typing import Any

from .scenario import NS, SSD_NAME, load_scenario

OMS_NS = "https://raw.githubusercontent.com/OpenModelica/OMSimulator/master/schema/oms.xsd"
#: OMSimulator's defaults for the tolerances its fixed-step master declares (not used by a fixed step)
OMS_TOLERANCE = "0.0001"

def _q(prefix: str, tag: str) -> str:
    return f"{{{OMS_NS if prefix == 'oms' else NS[prefix]}}}{tag}"


def _openmodelica_annotations(root: ET.Element, step_size: float, name: str) -> None:
    """Add OMSimulator's annotations unless the file has them (see the module docstring)."""
    system = root.find("ssd:System", NS)
    assert system is not None  # load_scenario refuses an SSD without one
    if system.find("ssd:Annotations/ssc:Annotation[@type='org.openmodelica']", NS) is None:
        annotations = system.find("ssd:Annotations", NS)
        if annotations is None:
            annotations = ET.SubElement(system, _q("ssd", "Annotations"))  # last child, as the schema orders it
        annotation = ET.SubElement(annotations, _q("ssc", "Annotation"), type="org.openmodelica")
        oms = ET.SubElement(annotation, _q("oms", "Annotations"))
        information = ET.SubElement(oms, _q("oms", "SimulationInformation"))
        ET.SubElement(information, _q("oms", "FixedStepMaster"), description="oms-ma", stepSize=repr(float(step_size)),
                      absoluteTolerance=OMS_TOLERANCE, relativeTolerance=OMS_TOLERANCE)
    experiment = root.find("ssd:DefaultExperiment", NS)
    if experiment is None:  # optional in SSP; placed after System, Enumerations and Units as the schema orders
        before = [i for i, child in enumerate(root) if child.tag in (_q("ssd", "System"), _q("ssd", "Enumerations"),
                                                                     _q("ssd", "Units"))]
        experiment = ET.Element(_q("ssd", "DefaultExperiment"))
        root.insert(max(before, default=-1) + 1, experiment)
    annotations = experiment.find("ssd:Annotations", NS)
    if annotations is None:
        annotations = ET.SubElement(experiment, _q("ssd", "Annotations"))
    if annotations.find("ssc:Annotation[@type='org.openmodelica']", NS) is None:
        annotation = ET.Element(_q("ssc", "Annotation"), type="org.openmodelica")
        ET.SubElement(ET.SubElement(annotation, _q("oms", "Annotations")), _q("oms", "SimulationInformation"),
                      resultFile=f"{name}_res.mat", loggingInterval="0", bufferSize="10")
        annotations.insert(0, annotation)  # OMSimulator reads it only as the first annotation there


def export_ssp(scenario: str | Path, target: str | Path) -> Path:
    """Write the scenario (folder, .ssd or .ssp) as a self-contained SSP archive at ``target``."""
    loaded = load_scenario(scenario)
    ssd = Path(scenario) if Path(scenario).suffix == ".ssd" else loaded.folder / SSD_NAME
    for prefix, uri in {**NS, "oms": OMS_NS}.items():
        ET.register_namespace(prefix, uri)
    root = ET.parse(ssd).getroot()
    fmus: dict[str, Path] = {}
    for element in root.iterfind(".//ssd:Elements/ssd:Component", NS):
        fmu = loaded.components[element.get("name", "")].fmu  # load_scenario refuses a component without one
        member = f"resources/{fmu.name}"
        if fmus.setdefault(member, fmu) != fmu:
            raise ValueError(f"two different FMUs named {fmu.name} ({fmus[member]} and {fmu}) cannot share "
                             f"resources/{fmu.name}")
        element.set("source", member)
    _openmodelica_annotations(root, loaded.step_size, loaded.name)
    ET.indent(root, space="  ")
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(SSD_NAME, ET.tostring(root, encoding="UTF-8", xml_declaration=True))
        for member, fmu in fmus.items():
            zf.write(fmu, member)
    return target


def flange_connections(components: list[tuple[str, str, dict[str, Any]]], connections: list[str]) -> list[str]:
    """Every ``"A.x <-> B.y"`` (a Modelica ``connect`` of two flanges) as its wires: the position and
    velocity (``s``/``phi``, ``v``/``w``) from the side that outputs them (a body, a housing, a motion
    source, a rod's driven end) to the other's inputs ``y.s``, ``y.v``, and the other's cut force ``y.f``
    back into the first free force port of the flange (``x.f``, ``x[2].f``, ... of a body: components/mass.py
    ``PORTS``; none for a housing or motion source), so any number of elements up to the ports meet at a
    flange and their forces add, as in Modelica. Wires written as ``->`` pass unchanged. ValueError naming
    the connect if it cannot be wired."""
    from .components import COMPONENTS

    models = {instance: COMPONENTS[model] for instance, model, _ in components}
    taken: set[tuple[str, str]] = set()
    wires = []
    for text in connections:
        if "<->" not in text:
            wires.append(text)
            continue
        ends = [tuple(part.strip().split(".", 1)) for part in text.split("<->")]
        if len(ends) != 2 or any(len(end) != 2 or end[0] not in models for end in ends):
            raise ValueError(f"connect {text!r}: use COMPONENT.FLANGE <-> COMPONENT.FLANGE of the scenario's "
                             "components")
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
                   algorithm: str = "jacobi", fmu_folder: str = "../../fmus", **algorithm_options: str) -> Path:
    """Write ``folder/SystemStructure.ssd``: ``components`` as (instance name, model, parameter
    values), ``connections`` as ``"source.output -> target.input"`` or as Modelica connects of two
    flanges, ``"mass.flange_b <-> spring.flange_a"`` (``flange_connections``). The ssd:Connectors (with
    their causality, from the component declarations) and both annotations are generated, so the
    file runs in this master and unchanged in libcosim. ``fmu_folder``: the FMUs' folder relative to
    ``folder`` (the default fits ``scenarios/NAME/``)."""
    from .components import COMPONENTS

    for prefix, uri in NS.items():
        ET.register_namespace(prefix, uri)
    parsed = []
    for text in flange_connections(components, connections):
        src, dst = (part.strip() for part in text.split("->"))
        parsed.append((*src.split(".", 1), *dst.split(".", 1)))
    used: dict[str, list[str]] = {}
    for s_comp, s_var, t_comp, t_var in parsed:
        for end_comp, var in ((s_comp, s_var), (t_comp, t_var)):
            if var not in used.setdefault(end_comp, []):
                used[end_comp].append(var)

    def q(prefix: str, tag: str) -> str:
        return f"{{{NS[prefix]}}}{tag}"

    root = ET.Element(q("ssd", "SystemStructureDescription"), version="1.0", name=name)
    if description:
        root.append(ET.Comment(f" {description} "))
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
    cons = ET.SubElement(system, q("ssd", "Connections"))
    for s_comp, s_var, t_comp, t_var in parsed:
        ET.SubElement(cons, q("ssd", "Connection"), startElement=s_comp, startConnector=s_var,
                      endElement=t_comp, endConnector=t_var)
    experiment = ET.SubElement(root, q("ssd", "DefaultExperiment"), startTime="0.0", stopTime=repr(float(stop_time)))
    annotations = ET.SubElement(experiment, q("ssd", "Annotations"))
    osp = ET.SubElement(annotations, q("ssc", "Annotation"), type="com.opensimulationplatform")
    ET.SubElement(ET.SubElement(osp, q("osp", "Algorithm")), q("osp", "FixedStepAlgorithm"),
                  baseStepSize=repr(float(step_size)))
    ours = ET.SubElement(annotations, q("ssc", "Annotation"), type="org.mechfmu")
    ET.SubElement(ours, q("mechfmu", "Master"), {"algorithm": algorithm, **algorithm_options})
    ET.indent(root, space="  ")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / SSD_NAME
    ET.ElementTree(root).write(path, encoding="UTF-8", xml_declaration=True)
    return path
