"""OpenModelica OMSimulator's annotations of an SSP archive (``export_ssp``).

- Weakly coupled (the default): on the root ``ssd:System`` an ``oms:FixedStepMaster`` with the step size
  (without it OMSimulator 2.1's import fails with "[NewSystem] internal error"); OMSimulator instantiates the
  FMUs as Co-Simulation FMUs and exchanges at the step.
- Strongly coupled: an ``oms:VariableStepSolver`` (CVODE, our monolithic master's tolerances, the whole run
  as its largest step, so that CVODE's error control alone chooses the step, as in our monolithic master)
  instead; OMSimulator instantiates every FMU of such a system as a Model Exchange FMU and
  integrates them as one ODE with event location, as our monolithic master does, which ``mechfmu:Master``
  then names. Every FMU needs a Model Exchange interface and the system no subsystem (OMSimulator's strongly
  coupled systems hold FMUs only).

Both add, as the first ``ssc:Annotation`` of ``ssd:DefaultExperiment``, OMSimulator's
``oms:SimulationInformation`` (its result file).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from mechfmu.components.ports import ACTIVE, CONSTRAINT_EQUATION, LAMBDA, LAMBDA_LOOP
from mechfmu.ssp.scenario import NS, ComponentSpec, component_class

OMS_NS = "https://raw.githubusercontent.com/OpenModelica/OMSimulator/master/schema/oms.xsd"
#: OMSimulator's defaults for the tolerances its fixed-step master declares (not used by a fixed step)
OMS_TOLERANCE = "0.0001"
#: the strongly coupled system's CVODE tolerances: the monolithic master's defaults (ode_rtol, ode_atol)
SC_RELATIVE_TOLERANCE, SC_ABSOLUTE_TOLERANCE = "1e-08", "1e-10"


def _q(prefix: str, tag: str) -> str:
    return f"{{{OMS_NS if prefix == 'oms' else NS[prefix]}}}{tag}"


def strongly_coupled_refusal(root: ET.Element, components: dict[str, Any]) -> str:
    """Why the SSD's system cannot be a strongly coupled one ("" if it can): a subsystem, or the first component
    without a Model Exchange interface, and why (a component of ours says it)."""
    from fmpy import read_model_description

    inner = root.find("ssd:System/ssd:Elements/ssd:System", NS)
    if inner is not None:
        return (f"it holds the subsystem {inner.get('name')!r}; OMSimulator's strongly coupled systems hold FMUs "
                "only")
    for name, spec in components.items():
        if read_model_description(str(spec.fmu)).modelExchange is None:
            try:
                reason = f": {component_class(spec.fmu).co_simulation_only}"
            except ValueError:  # not one of ours
                reason = ""
            return f"{name} ({spec.fmu.name}) has no Model Exchange interface{reason}"
    return ""


def _system_annotation(root: ET.Element, step_size: float, span: float, strongly_coupled: bool) -> None:
    """OMSimulator's system annotation, as the first annotation of the root system: OMSimulator 2.1 reads
    only the first one to learn the kind of system (an existing one is moved there, or replaced when
    ``strongly_coupled``)."""
    system = root.find("ssd:System", NS)
    assert system is not None  # load_scenario refuses an SSD without one
    annotations = system.find("ssd:Annotations", NS)
    if annotations is None:
        annotations = ET.SubElement(system, _q("ssd", "Annotations"))  # last child, as the schema orders it
    existing = annotations.find("ssc:Annotation[@type='org.openmodelica']", NS)
    if existing is not None:
        annotations.remove(existing)
        if not strongly_coupled:  # the kind of system is the one asked for
            annotations.insert(0, existing)
            return
    annotation = ET.Element(_q("ssc", "Annotation"), type="org.openmodelica")
    annotations.insert(0, annotation)
    information = ET.SubElement(ET.SubElement(annotation, _q("oms", "Annotations")), _q("oms", "SimulationInformation"))
    step = repr(float(step_size))
    if strongly_coupled:
        ET.SubElement(information, _q("oms", "VariableStepSolver"), description="cvode",
                      absoluteTolerance=SC_ABSOLUTE_TOLERANCE, relativeTolerance=SC_RELATIVE_TOLERANCE,
                      minimumStepSize="1e-12", maximumStepSize=repr(max(float(span), float(step_size))),
                      initialStepSize=repr(min(1e-6, float(step_size))))
    else:
        ET.SubElement(information, _q("oms", "FixedStepMaster"), description="oms-ma", stepSize=step,
                      absoluteTolerance=OMS_TOLERANCE, relativeTolerance=OMS_TOLERANCE)


def free_marks_on_system(root: ET.Element) -> None:
    """Move every component's ``<mechfmu:Free>`` mark to an ``org.mechfmu`` annotation of the root system,
    ``<mechfmu:FreeInputs><mechfmu:Free component=".." inputs=".."/>...</mechfmu:FreeInputs>`` (one element, as
    SSP has an annotation hold; ``load_scenario`` reads both forms): OMSimulator 2.1 refuses annotations of a
    component ("Unexpected tag ssd:Annotations")."""
    from mechfmu.ssp.systems import flatten

    system = root.find("ssd:System", NS)
    assert system is not None
    marks: list[tuple[str, str]] = []
    for name, element in flatten(system, [])[0]:
        annotations = element.find("ssd:Annotations", NS)
        if annotations is None:
            continue
        for annotation in annotations.findall("ssc:Annotation[@type='org.mechfmu']", NS):
            marks += [(name, free.get("inputs", "")) for free in annotation.iterfind("mechfmu:Free", NS)]
            annotations.remove(annotation)
        if not len(annotations):
            element.remove(annotations)
    if not marks:
        return
    annotations = system.find("ssd:Annotations", NS)
    if annotations is None:
        annotations = ET.SubElement(system, _q("ssd", "Annotations"))
    group = ET.SubElement(ET.SubElement(annotations, _q("ssc", "Annotation"), type="org.mechfmu"),
                          _q("mechfmu", "FreeInputs"))
    for name, inputs in marks:
        ET.SubElement(group, _q("mechfmu", "Free"), component=name, inputs=inputs)


def _monolithic_master(annotations: ET.Element) -> None:
    """Our ``mechfmu:Master`` names the monolithic master (its other options belong to a coupling; the run's
    tolerance rtol/atol and divergenceFactor stay)."""
    master = annotations.find(".//mechfmu:Master", NS)
    if master is None:
        annotation = ET.SubElement(annotations, _q("ssc", "Annotation"), type="org.mechfmu")
        master = ET.SubElement(annotation, _q("mechfmu", "Master"))
    kept = {k: v for k, v in master.attrib.items() if k in ("divergenceFactor", "rtol", "atol")}
    master.attrib.clear()
    master.attrib.update({"algorithm": "monolithic", **kept})


def openmodelica_annotations(root: ET.Element, step_size: float, span: float, name: str,
                             strongly_coupled: bool = False) -> None:
    """Add OMSimulator's annotations unless the file has them (module docstring); ``strongly_coupled`` replaces
    a system annotation the file has. ``span`` [s]: the run's length, CVODE's largest step."""
    _system_annotation(root, step_size, span, strongly_coupled)
    free_marks_on_system(root)
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
    if strongly_coupled:
        _monolithic_master(annotations)


def _variables(spec: ComponentSpec) -> dict[str, str]:
    """A component's variables and their causalities: ours by their declarations (no FMU file needed), others by
    their model description."""
    from mechfmu.fmu.declarations import declared_variables
    from mechfmu.fmu.fmi3_arrays import read_description

    try:
        declared = declared_variables(component_class(spec.fmu)).values()
    except ValueError:  # not one of ours
        declared = read_description(str(spec.fmu)).modelVariables
    return {v.name: v.causality for v in declared}


def unsolved_constraints(components: dict[str, ComponentSpec]) -> list[str]:
    """The active constraints among ``components``: an input ``lambda`` (the force a master must solve at every
    step) beside an output ``constraintEquation``, ``activeConnector`` not false."""
    return [name for name, spec in components.items()
            if (variables := _variables(spec)).get(LAMBDA) == "input"
            and variables.get(CONSTRAINT_EQUATION) == "output" and spec.parameters.get(ACTIVE, True) is not False]


def locked_force_loops(components: dict[str, ComponentSpec]) -> list[str]:
    """The friction elements among ``components``: an input ``lambda`` beside an output ``lambda_loop`` (lambda −
    a_rel while locked, else 0). A strongly coupled export wires each one's lambda_loop to its lambda: OMSimulator
    solves that algebraic loop with the bodies' accelerations at every evaluation (KINSOL, with the FMUs' directional
    derivatives), so the locked force keeps the relative acceleration 0, as mechfmu's monolithic master solves it
    (``load_scenario`` drops such a wire: mechfmu's masters solve the force themselves)."""
    return [name for name, spec in components.items()
            if (variables := _variables(spec)).get(LAMBDA) == "input" and variables.get(LAMBDA_LOOP) == "output"]
