"""Writing SSP 1.0: scenario files (``write_scenario``) and archives with their FMUs (``export_ssp``)
that other tools run unchanged.

``write_scenario`` writes a ``SystemStructure.ssd`` from instance names, model names, parameter values
and connections, with every ``ssd:Connector`` (libcosim requires them) and the libcosim and mechfmu
annotations.

``export_ssp(scenario, target)`` writes ``SystemStructure.ssd`` with the FMUs inside, so that tools which
ignore the SSD's parameter bindings (fmpy's ``simulate_ssp``) or apply only one named set of them (ecos)
still run the scenario's physics:
- every instance gets its own FMU, ``resources/<instance>/<Model>.fmu``; one of ours carries the instance's
  parameter values as its own defaults (start attributes and ``resources/start_values.json``, which it
  applies at instantiation) and a GUID of its own; ``shared_fmus=True``: ``resources/<Model>.fmu`` as
  built, one per model (a small archive for tools that apply the bindings);
- every component's bindings become one inline parameter set named ``initialValues`` (``PARAMETER_SET``)
  with the values as this master reads them (units converted; ``.ssv`` files, prefixes and mappings
  applied), so ecos applies them all as one set and no tool has units or mappings to handle; likewise a
  connection that converts units carries the conversion as its ``ssc:LinearTransformation``;
plus the annotations each tool reads:
- libcosim: ``osp:FixedStepAlgorithm baseStepSize`` (already in every scenario);
- OpenModelica's OMSimulator: its system annotations (mechfmu.ssp_openmodelica): a weakly coupled system
  (fixed-step master), or with ``strongly_coupled`` a strongly coupled one, whose FMUs OMSimulator
  instantiates as Model Exchange FMUs and integrates with CVODE (then our ``mechfmu:Master`` is the
  monolithic master);
- ours: ``mechfmu:Master`` (algorithm and options).

``load_scenario`` reads an archive too (``scenario.extract_ssp``).
"""
from __future__ import annotations

import json
import re
import tempfile
import uuid
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from typing import Any

from .connection_maps import write_conversions
from .scenario import NS, SSD_NAME, ComponentSpec, component_class, load_scenario
from .ssp_openmodelica import OMS_NS, openmodelica_annotations, strongly_coupled_refusal
from .ssp_systems import flatten

#: the name of the one parameter set each component's binding has in an archive: the set ecos applies with
#: ``init(parameter_set="initialValues")`` (its own examples' name)
PARAMETER_SET = "initialValues"

def _q(prefix: str, tag: str) -> str:
    return f"{{{OMS_NS if prefix == 'oms' else NS[prefix]}}}{tag}"


def _value_text(kind: str, value: Any) -> str:
    """An ``ssv:<kind>`` value attribute that reads back as exactly ``value``."""
    return str(value).lower() if kind == "Boolean" else repr(float(value)) if kind == "Real" else str(value)


def _rebind(element: ET.Element, spec: ComponentSpec) -> None:
    """Replace the component's parameter bindings, in place, by one inline set ``PARAMETER_SET`` of the
    values as loaded (no unit: each value is in its parameter's unit)."""
    old = element.find("ssd:ParameterBindings", NS)
    if old is None or not spec.parameters:
        if old is not None:
            element.remove(old)
        return
    bindings = ET.Element(_q("ssd", "ParameterBindings"))
    values = ET.SubElement(ET.SubElement(bindings, _q("ssd", "ParameterBinding")), _q("ssd", "ParameterValues"))
    parameters = ET.SubElement(ET.SubElement(values, _q("ssv", "ParameterSet"), version="1.0", name=PARAMETER_SET),
                               _q("ssv", "Parameters"))
    for name, value in spec.parameters.items():
        kind = spec.kinds[name]
        ET.SubElement(ET.SubElement(parameters, _q("ssv", "Parameter"), name=name), _q("ssv", kind),
                      value=_value_text(kind, value))
    element[list(element).index(old)] = bindings


def _ours(fmu: Path) -> bool:
    """True for an FMU built by mechfmu (it applies ``resources/start_values.json`` at instantiation)."""
    try:
        component_class(fmu)
        with zipfile.ZipFile(fmu) as zf:
            return zf.read("resources/slavemodule.txt").decode().startswith("mechfmu_")
    except (ValueError, OSError, KeyError, zipfile.BadZipFile):
        return False


def _carrying(fmu: Path, target: Path, values: dict[str, Any]) -> None:
    """``fmu`` copied to ``target`` with ``values`` as its own defaults: start attributes and
    ``resources/start_values.json`` (which it applies at instantiation, merged with any it has), and a GUID
    of its own, derived from the original's and the values: libcosim unpacks FMUs of one GUID only once,
    so two instances with different values would read one instance's file."""
    from .build import GUID_FILE
    from .components.fmi import START_VALUES

    member = f"resources/{START_VALUES}"
    with zipfile.ZipFile(fmu) as source, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        names = source.namelist()
        values = {**(json.loads(source.read(member)) if member in names else {}), **values}
        guid = ""
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "modelDescription.xml":
                root = ET.fromstring(data)
                fingerprint = root.get("guid", "") + json.dumps(values, sort_keys=True)
                guid = str(uuid.uuid5(uuid.NAMESPACE_OID, fingerprint))
                root.set("guid", guid)
                for variable in root.iter("ScalarVariable"):
                    if (name := variable.get("name")) in values:
                        declared = next(iter(variable))
                        declared.set("start", _value_text(declared.tag, values[name]))
                data = ET.tostring(root, encoding="UTF-8", xml_declaration=True)
            if item.filename not in (member, GUID_FILE):
                out.writestr(item, data)
        out.writestr(member, json.dumps(values))
        out.writestr(GUID_FILE, guid)  # the GUID the FMU checks at fmi2Instantiate


def _members(components: dict[str, ComponentSpec], shared: bool) -> dict[str, str]:
    """Component -> its FMU's member in the archive: ``resources/<instance>/<Model>.fmu`` (the instance name
    made a safe folder name, unique), or with ``shared`` ``resources/<Model>.fmu``."""
    members: dict[str, str] = {}
    folders: set[str] = set()
    for name, spec in components.items():
        if shared:
            members[name] = f"resources/{spec.fmu.name}"
            continue
        base = re.sub(r"[^A-Za-z0-9_.\-]", "_", name).lstrip(".") or "component"
        folder, n = base, 2
        while folder.lower() in folders:  # unique also on a case-insensitive file system
            folder, n = f"{base}_{n}", n + 1
        folders.add(folder.lower())
        members[name] = f"resources/{folder}/{spec.fmu.name}"
    return members


def export_ssp(scenario: str | Path, target: str | Path, shared_fmus: bool = False,
               strongly_coupled: bool = False) -> Path:
    """Write the scenario (folder, .ssd or .ssp) as a self-contained SSP archive at ``target``: one FMU
    per instance, ours carrying the instance's values; ``shared_fmus``: one FMU per model, shared by its
    instances, the values only in the bindings (a smaller archive, for tools that apply bindings);
    ``strongly_coupled``: OMSimulator's strongly coupled system of Model Exchange FMUs (ValueError naming a
    component without a Model Exchange interface)."""
    loaded = load_scenario(scenario)
    ssd = Path(scenario) if Path(scenario).suffix == ".ssd" else loaded.folder / SSD_NAME
    for prefix, uri in {**NS, "oms": OMS_NS}.items():
        ET.register_namespace(prefix, uri)
    root = ET.parse(ssd).getroot()
    refusal = strongly_coupled_refusal(root, loaded.components) if strongly_coupled else ""
    if refusal:
        raise ValueError(f"cannot export {loaded.name} as a strongly coupled system: {refusal}")
    members = _members(loaded.components, shared_fmus)
    files: dict[str, ComponentSpec] = {}
    system = root.find("ssd:System", NS)
    assert system is not None  # load_scenario refuses an SSD without one
    for name, element in flatten(system, [])[0]:  # a nested system's components by their path
        spec = loaded.components[name]  # load_scenario refuses a component without a name
        member = members[spec.name]
        if files.setdefault(member, spec).fmu != spec.fmu:
            raise ValueError(f"two different FMUs named {spec.fmu.name} ({files[member].fmu} and {spec.fmu}) "
                             f"cannot share {member}: export without shared FMUs")
        element.set("source", member)
        _rebind(element, spec)
    write_conversions(system, loaded.connections)
    openmodelica_annotations(root, loaded.step_size, loaded.name, strongly_coupled)
    ET.indent(root, space="  ")
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf, tempfile.TemporaryDirectory() as work:
        zf.writestr(SSD_NAME, ET.tostring(root, encoding="UTF-8", xml_declaration=True))
        for member, spec in files.items():
            if shared_fmus or not (spec.parameters and _ours(spec.fmu)):
                zf.write(spec.fmu, member)
                continue
            variant = Path(work) / member
            variant.parent.mkdir(parents=True)
            _carrying(spec.fmu, variant, dict(spec.parameters))
            zf.write(variant, member)
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
    component's ``<mechfmu:Free inputs=".."/>`` (``mechfmu.unconnected``); ``built_fmus``: the system's
    ``<mechfmu:Sources fallback="built"/>``, a missing source is mechfmu's built FMU (``mechfmu.fmu_sources``);
    ``tolerance``: the run's (rtol, atol), the Master's ``rtol``/``atol`` (``mechfmu.accuracy``; None: the defaults).
    ValueError naming a free mark that is not a free input of the scenario's components."""
    from .components import COMPONENTS
    from .unconnected import covers

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
    ET.ElementTree(root).write(path, encoding="UTF-8", xml_declaration=True)
    return path
