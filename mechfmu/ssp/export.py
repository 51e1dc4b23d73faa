"""Writing SSP 1.0 archives with their FMUs, that other tools run unchanged (``export_ssp``).

``export_ssp(scenario, target)`` writes ``SystemStructure.ssd`` with the FMUs inside, so that tools which
ignore the SSD's parameter bindings (fmpy's ``simulate_ssp``) or apply only one named set of them (ecos)
still run the scenario's physics:
- every instance gets its own FMU, ``resources/<instance>/<Model>.fmu``; one of ours carries the instance's
  parameter values as its own defaults (start attributes and ``resources/start_values.json``, which it
  applies at instantiation) and a GUID of its own; ``shared_fmus=True``: ``resources/<Model>.fmu`` as
  built, one per model (a small archive for tools that apply the bindings);
- every component's bindings, with those its systems give it, become one inline parameter set named
  ``initialValues`` (``PARAMETER_SET``) with the values as this master reads them (units converted; ``.ssv``
  files, prefixes and mappings applied; no system keeps bindings of its own), so ecos applies them all as one
  set and no tool has units or mappings to handle; likewise a connection that converts units carries the
  conversion as its ``ssc:LinearTransformation``; only connected inputs are declared (``tool_notes``);
plus the annotations each tool reads:
- libcosim: ``osp:FixedStepAlgorithm baseStepSize`` (already in every scenario);
- OpenModelica's OMSimulator: its system annotations (mechfmu.ssp.openmodelica): a weakly coupled system
  (fixed-step master), or with ``strongly_coupled`` a strongly coupled one, whose FMUs OMSimulator
  instantiates as Model Exchange FMUs and integrates with CVODE (then our ``mechfmu:Master`` is the
  monolithic master);
- ours: ``mechfmu:Master`` (algorithm and options).

Before the archive replaces ``target`` it is read back (``mechfmu.ssp.readback``): the SSD through the scenario
loader, every FMU's ``start_values.json`` by Python's json, its start attributes, and the FMU instantiated on this
machine; any difference refuses the export (``ReadBackError``, naming the component, the value and what it reads
back as). ``load_scenario`` reads an archive too (``scenario.extract_ssp``).
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

from mechfmu.components.ports import LAMBDA, LAMBDA_LOOP
from mechfmu.ssp.connection_maps import write_conversions
from mechfmu.ssp.elements import Connection
from mechfmu.ssp.files import replaced
from mechfmu.ssp.fmi_version import with_fmi_version
from mechfmu.ssp.openmodelica import (
    OMS_NS,
    locked_force_loops,
    openmodelica_annotations,
    strongly_coupled_refusal,
    unsolved_constraints,
)
from mechfmu.ssp.readback import ReadBackError, check_bindings, check_fmu, start_holders
from mechfmu.ssp.scenario import NS, SSD_NAME, ComponentSpec, Scenario, component_class, load_scenario
from mechfmu.ssp.system_bindings import nested_systems
from mechfmu.ssp.systems import flatten
from mechfmu.ssp.tool_notes import (
    COUPLING,
    FMI3_TOOLS,
    Exported,
    fmi3_components,
    fmpy_first_step,
    kept_fmi2_lines,
    oms_identifier,
    oms_refused_names,
    unconnected_input_connectors,
    write_wires,
)

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
    values as loaded (no unit: each value is in its parameter's unit; its systems' bindings included)."""
    old = element.find("ssd:ParameterBindings", NS)
    if old is not None:
        element.remove(old)
    if not spec.parameters:
        return
    bindings = ET.Element(_q("ssd", "ParameterBindings"))
    values = ET.SubElement(ET.SubElement(bindings, _q("ssd", "ParameterBinding")), _q("ssd", "ParameterValues"))
    parameters = ET.SubElement(ET.SubElement(values, _q("ssv", "ParameterSet"), version="1.0", name=PARAMETER_SET),
                               _q("ssv", "Parameters"))
    for name, value in spec.parameters.items():
        kind = spec.kinds[name]
        ET.SubElement(ET.SubElement(parameters, _q("ssv", "Parameter"), name=name), _q("ssv", kind),
                      value=_value_text(kind, value))
    before = (_q("ssd", "Connectors"), _q("ssd", "ElementGeometry"))
    after = [i for i, child in enumerate(element) if child.tag in before]
    element.insert(after[-1] + 1 if after else 0, bindings)  # SSP's order: Connectors, ElementGeometry, bindings


def _ours(fmu: Path) -> bool:
    """True for an FMU built by mechfmu (it applies ``resources/start_values.json`` at instantiation)."""
    from mechfmu.fmu.build import NATIVE_STAMP
    try:
        component_class(fmu)
        with zipfile.ZipFile(fmu) as zf:
            names = set(zf.namelist())
            stamp = NATIVE_STAMP if NATIVE_STAMP in names else "resources/slavemodule.txt"
            return zf.read(stamp).decode().startswith("mechfmu_")
    except (ValueError, OSError, KeyError, zipfile.BadZipFile):
        return False


def _carrying(fmu: Path, target: Path, values: dict[str, Any], component: str) -> None:
    """``fmu`` copied to ``target`` with ``values`` as its own defaults: start attributes and
    ``resources/start_values.json`` (which it applies at instantiation, merged with any it has), and a GUID
    of its own, derived from the original's and the values: libcosim unpacks FMUs of one GUID only once,
    so two instances with different values would read one instance's file. Raises ValueError naming
    ``component``, the parameter and the value where a value cannot be written so that the FMU reads it back (not
    finite, a NUL or a lone surrogate in a string), before ``target`` is written."""
    from mechfmu.components.fmi import START_VALUES
    from mechfmu.components.start_values import start_values_text
    from mechfmu.fmu.build import GUID_FILE

    member = f"resources/{START_VALUES}"
    with zipfile.ZipFile(fmu) as source:
        values = {**(json.loads(source.read(member)) if member in source.namelist() else {}), **values}
    try:
        text = start_values_text(values)  # what both readers take back, or refused here
    except ValueError as exc:
        raise ValueError(f"cannot export component {component!r}: its start value {exc}") from None
    with zipfile.ZipFile(fmu) as source, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        guid = ""
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "modelDescription.xml":
                root = ET.fromstring(data)
                token = "instantiationToken" if root.get("fmiVersion", "").startswith("3") else "guid"
                fingerprint = root.get(token, "") + json.dumps(values, sort_keys=True)
                guid = str(uuid.uuid5(uuid.NAMESPACE_OID, fingerprint))
                root.set(token, guid)
                for name, kind, holder in start_holders(root):
                    if name in values:
                        holder.set("value" if holder.tag == "Start" else "start", _value_text(kind, values[name]))
                data = ET.tostring(root, encoding="UTF-8", xml_declaration=True)
            if item.filename not in (member, GUID_FILE):
                out.writestr(item, data)
        out.writestr(member, text)
        out.writestr(GUID_FILE, guid)  # the GUID the FMU checks at fmi2Instantiate


def safe_name(text: str, fallback: str) -> str:
    """``text`` as one file name, in the folder it is used in: every character but letters, digits, ``_``, ``.``
    and ``-`` replaced by ``_``, no leading dot (no hidden file, no ``..``); ``fallback`` for nothing left. A name
    read from a scenario (its name, an instance's) never chooses where a file goes."""
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", text).lstrip(".") or fallback


def _members(components: dict[str, ComponentSpec], shared: bool) -> dict[str, str]:
    """Component -> its FMU's member in the archive: ``resources/<instance>/<Model>.fmu`` (the instance name
    made a safe folder name, unique), or with ``shared`` ``resources/<Model>.fmu``."""
    members: dict[str, str] = {}
    folders: set[str] = set()
    for name, spec in components.items():
        if shared:
            members[name] = f"resources/{spec.fmu.name}"
            continue
        base = safe_name(name, "component")
        folder, n = base, 2
        while folder.lower() in folders:  # unique also on a case-insensitive file system
            folder, n = f"{base}_{n}", n + 1
        folders.add(folder.lower())
        members[name] = f"resources/{folder}/{spec.fmu.name}"
    return members


def export_ssp(scenario: str | Path, target: str | Path, shared_fmus: bool = False,
               strongly_coupled: bool = False, unsolved_constraints_allowed: bool = False,
               fmi_version: int = 2) -> Path:
    """Write the scenario (folder, .ssd or .ssp) as a self-contained SSP archive at ``target``: one FMU
    per instance, ours carrying the instance's values; ``shared_fmus``: one FMU per model, shared by its
    instances, the values only in the bindings (a smaller archive, for tools that apply bindings);
    ``strongly_coupled``: OMSimulator's strongly coupled system of Model Exchange FMUs (ValueError naming a
    component without a Model Exchange interface). A scenario with an active constraint is refused (ValueError
    naming it) unless ``unsolved_constraints_allowed``: no tool but mechfmu's constraint-solving masters solves
    its force, so elsewhere the bodies would move unconstrained (OMSimulator stops at its first step with the
    constraint's message; libcosim, fmpy and ecos run on unconstrained). ``fmi_version`` 3: mechfmu's FMUs as
    their FMI 3.0 builds (``mechfmu.ssp.fmi_version``), which mechfmu and ecos run (``export_notes``), but for those
    with array variables, whose scalars an SSP 1.0 connection names: they keep their FMI 2.0 FMU."""
    if strongly_coupled and fmi_version == 3:
        raise ValueError("a strongly coupled system is OMSimulator's, and OMSimulator 2.1.3 runs FMI 2.0 FMUs only: "
                         "export it with the FMI 2.0 FMUs (fmi_version 2, the default)")
    loaded = with_fmi_version(load_scenario(scenario), fmi_version, arrays=False)  # SSP 1.0 names scalars only
    ssd = Path(scenario) if Path(scenario).suffix == ".ssd" else loaded.folder / SSD_NAME
    for prefix, uri in {**NS, "oms": OMS_NS}.items():
        ET.register_namespace(prefix, uri)
    root = ET.parse(ssd).getroot()
    refusal = strongly_coupled_refusal(root, loaded.components) if strongly_coupled else ""
    if strongly_coupled and not refusal and (names := oms_refused_names(root)):
        refusal = (f"OMSimulator 2.1.3 refuses the names {', '.join(names)} (a name is an ASCII letter, then "
                   "letters, digits and _): rename them")
    if refusal:
        raise ValueError(f"cannot export {loaded.name} as a strongly coupled system: {refusal}")
    looped = locked_force_loops(loaded.components)
    constraints = [c for c in unsolved_constraints(loaded.components) if not (strongly_coupled and c in looped)]
    if constraints and not unsolved_constraints_allowed:
        listed, anyway = ", ".join(map(repr, constraints)), ("--unsolved-constraints (export_ssp(..., "
                                                            "unsolved_constraints_allowed=True))")
        if set(constraints) <= set(looped):  # friction elements only
            raise ValueError(
                f"cannot export {loaded.name} for other tools: its friction element {listed} needs its force "
                "lambda solved by the master while locked, which mechfmu's monolithic master (auto's choice) and "
                "newton-friction do, and OMSimulator's strongly coupled system through the loop --strongly-coupled "
                "writes; OMSimulator's co-simulation, libcosim, fmpy and ecos would leave it at its start value "
                "(the FMU warns). Run it with 'mechfmu run', or export it with --strongly-coupled for OMSimulator; "
                f"to write this archive anyway add {anyway}")
        raise ValueError(
            f"cannot export {loaded.name} for other tools: its constraint {listed} needs "
            "its force lambda solved by the master at every step, which only mechfmu's constraint-solving "
            "algorithms do (monolithic, newton); OMSimulator stops at the first step with the constraint's message, "
            "and libcosim, fmpy and ecos would move the bodies unconstrained. Run it with 'mechfmu run'; to write "
            f"the archive anyway (for mechfmu, or to compare the tools' unconstrained runs) add {anyway}")
    members = _members(loaded.components, shared_fmus)
    files: dict[str, ComponentSpec] = {}
    system = root.find("ssd:System", NS)
    assert system is not None  # load_scenario refuses an SSD without one
    for _, holder in nested_systems(system):  # their values are the components' now (system_bindings)
        for old in holder.findall("ssd:ParameterBindings", NS):
            holder.remove(old)
    for name, element in flatten(system, [])[0]:  # a nested system's components by their path
        spec = loaded.components[name]  # load_scenario refuses a component without a name
        member = members[spec.name]
        if files.setdefault(member, spec).fmu != spec.fmu:
            raise ValueError(f"two different FMUs named {spec.fmu.name} ({files[member].fmu} and {spec.fmu}) "
                             f"cannot share {member}: export without shared FMUs")
        element.set("source", member)
        _rebind(element, spec)
        connectors = element.find("ssd:Connectors", NS)
        for unfed in unconnected_input_connectors(element, name, loaded):  # fmpy misreads them (tool_notes)
            assert connectors is not None
            connectors.remove(unfed)
    for named in (root, system):  # the model's name: OMSimulator refuses one that is not an identifier
        named.set("name", oms_identifier(named.get("name") or loaded.name))
    write_wires(system, loaded.derived)  # the signal derivatives every mechfmu master wires (Scenario.derived)
    if strongly_coupled:  # OMSimulator's loop solver finds each locked force (locked_force_loops)
        write_wires(system, [Connection(name, LAMBDA_LOOP, name, LAMBDA) for name in looped])
    write_conversions(system, loaded.connections)
    openmodelica_annotations(root, loaded.step_size, loaded.stop_time - loaded.start_time, root.get("name", ""),
                             strongly_coupled)
    ET.indent(root, space="  ")
    target = Path(target)
    with replaced(target) as temporary, tempfile.TemporaryDirectory() as work:
        problems: list[str] = []
        with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr(SSD_NAME, ET.tostring(root, encoding="UTF-8", xml_declaration=True))
            for member, spec in files.items():
                if shared_fmus or not (spec.parameters and _ours(spec.fmu)):
                    zf.write(spec.fmu, member)
                    continue
                variant = Path(work) / member
                variant.parent.mkdir(parents=True)
                _carrying(spec.fmu, variant, dict(spec.parameters), spec.name)
                problems += check_fmu(variant, spec.name, dict(spec.parameters))
                zf.write(variant, member)
        problems += check_bindings(temporary, loaded.components)
        if problems:  # the target is left as it was
            raise ReadBackError(f"cannot export {loaded.name}: the archive does not read back as written\n  - "
                                + "\n  - ".join(problems))
    return target


#: the tools that run an archive of ours but do not apply ``ssc:LinearTransformation`` (checked: the input then
#: gets the output unchanged; libcosim and ecos apply it)
IGNORING_TRANSFORMATIONS = ("fmpy's simulate_ssp", "OMSimulator 2.1.3")


def export_summary(target: Path, shared_fmus: bool = False, strongly_coupled: bool = False,
                   scenario: str | Path | None = None, deviations: tuple[dict[str, float], str, float] | None = None,
                   fmi_version: int = 2) -> str:
    """``export_notes`` as one text: the summary, then a note a line."""
    return str(export_notes(target, shared_fmus, strongly_coupled, scenario, deviations, fmi_version))


def export_notes(target: Path, shared_fmus: bool = False, strongly_coupled: bool = False,
                 scenario: str | Path | None = None, deviations: tuple[dict[str, float], str, float] | None = None,
                 fmi_version: int = 2) -> Exported:
    """What ``export_ssp`` wrote at ``target``, which tools run it as mechfmu does and how (one line each): a
    connection that transforms its value takes out the tools that ignore transformations, a name OMSimulator
    refuses takes it out (``mechfmu.ssp.tool_notes``); the coupling each tool runs, with ``deviations``
    (``mechfmu.master.first_order.first_order_deviations``) its estimated distance from the accurate run; what
    fmpy's first step gets wrong. ``scenario``: the exported one, to name a model name written otherwise.
    ``differing``: the notes where a named tool gives another answer than mechfmu."""
    loaded = load_scenario(target)
    root = ET.parse(loaded.folder / SSD_NAME).getroot()
    transformed = [f"{c} (x {c.factor!r} + {c.offset!r})" for c in loaded.connections
                   if (c.factor, c.offset) != (1.0, 0.0)]
    ignoring = IGNORING_TRANSFORMATIONS if transformed else ()
    names = oms_refused_names(root)
    lines = []
    if scenario is not None and (original := load_scenario(scenario, check=False).name) != loaded.name:
        lines.append(f"the model is named {loaded.name!r} in the archive: OMSimulator 2.1.3 refuses {original!r} "
                     "(a name is an ASCII letter, then letters, digits and _)")
    friction = locked_force_loops(loaded.components)
    if left := [c for c in unsolved_constraints(loaded.components) if not (strongly_coupled and c in friction)]:
        masters = "monolithic and newton-friction" if set(left) <= set(friction) else "monolithic and newton"
        unsolved = f"wrote {target}: the force of {', '.join(left)} is solved only by mechfmu's {masters} masters"
        return Exported(Path(target), unsolved, tuple(lines), (unsolved,))
    if strongly_coupled:
        summary = (f"wrote {target}: a strongly coupled system of Model Exchange FMUs (OMSimulator: CVODE, as "
                   "mechfmu's monolithic master)")
        runs = ["OMSimulator"]
    else:
        tools = ["mechfmu", "libcosim", "OMSimulator"] + ([] if shared_fmus else ["fmpy's simulate_ssp", "ecos"])
        fmi3 = fmi3_components(loaded)
        runs = [tool for tool in tools if not any(tool in name for name in ignoring)
                and not (tool == "OMSimulator" and names) and not (fmi3 and tool not in FMI3_TOOLS)]
        if fmi3:
            lines.append(f"{', '.join(fmi3)} {'is an FMI 3.0 FMU' if len(fmi3) == 1 else 'are FMI 3.0 FMUs'}: "
                         "OMSimulator 2.1.3, libcosim and fmpy's simulate_ssp load FMI 2.0 FMUs only (export with the "
                         "FMI 2.0 FMUs for them)")
        if fmi_version == 3:
            lines += kept_fmi2_lines(loaded, fmi3)
        layout = ("SystemStructure.ssd + resources/<Model>.fmu; values in the bindings only" if shared_fmus else
                  "SystemStructure.ssd + resources/<instance>/<Model>.fmu carrying its values")
        summary = f"wrote {target} ({layout}: runs in {', '.join(runs[:-1])} and {runs[-1]})"
    differing = []
    if transformed:
        differing.append(f"{' and '.join(ignoring)} do not apply ssc:LinearTransformation: there "
                         f"{'; '.join(transformed)} would deliver the output unchanged")
    if names:
        differing.append(f"OMSimulator 2.1.3 refuses the names {', '.join(names)} (a name is an ASCII letter, then "
                         "letters, digits and _; libcosim and fmpy take them): rename them to run the archive there")
    # nothing exchanged, nothing to differ in: every tool runs unconnected components alike
    coupling, hint = _coupling_lines(loaded, runs, deviations) if loaded.connections and not strongly_coupled \
        else ([], [])
    differing += coupling
    return Exported(Path(target), summary, (*lines, *differing, *hint), tuple(differing))


def _coupling_lines(loaded: Scenario, runs: list[str], deviations: tuple[dict[str, float], str, float] | None
                    ) -> tuple[list[str], list[str]]:
    """The coupling each tool of ``runs`` runs (but mechfmu), with its estimated error, and fmpy's first step
    (each gives another answer than mechfmu); how to get OMSimulator's accurate run."""
    found, unit, span = deviations if deviations is not None else ({}, "m", 0.0)
    lines = []
    for tool in (t for t in runs if t in COUPLING):
        coupling, ours = COUPLING[tool]
        but = " but for its first step" if tool.startswith("fmpy") else ""
        estimate = (f", about {found[ours]:.2g} {unit} from the accurate run in a body's position over "
                    f"{span:.6g} s (mechfmu's {ours}, which it equals{but})" if ours in found else "")
        lines.append(f"{tool}: {coupling}{estimate}")
    hint = []
    if "OMSimulator" in runs and lines:
        hint.append("for OMSimulator's accurate run (CVODE on the Model Exchange FMUs) export with "
                    "--strongly-coupled (export_ssp(..., strongly_coupled=True)); mechfmu runs either archive with "
                    "its own master")
    if "fmpy's simulate_ssp" in runs and (jolt := fmpy_first_step(loaded)):
        lines.append(jolt)
    return lines, hint
