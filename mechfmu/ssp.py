"""SSP 1.0 archives: a scenario with its FMUs in one ``.ssp`` file that other tools run unchanged.

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

from .scenario import NS, SSD_NAME, load_scenario

OMS_NS = "https://raw.githubusercontent.com/OpenModelica/OMSimulator/master/schema/oms.xsd"
#: OMSimulator's defaults for the tolerances its fixed-step master declares (not used by a fixed step)
OMS_TOLERANCE = "0.0001"

def _q(prefix: str, tag: str) -> str:
    return f"{{{OMS_NS if prefix == 'oms' else NS[prefix]}}}{tag}"


def _openmodelica_annotations(root: ET.Element, step_size: float, name: str) -> None:
    """Add OMSimulator's annotations unless the file has them (see the module docstring)."""
    system = root.find("ssd:System", NS)
    if system.find(f"ssd:Annotations/ssc:Annotation[@type='org.openmodelica']", NS) is None:
        annotations = system.find("ssd:Annotations", NS)
        if annotations is None:
            annotations = ET.SubElement(system, _q("ssd", "Annotations"))  # last child, as the schema orders it
        annotation = ET.SubElement(annotations, _q("ssc", "Annotation"), type="org.openmodelica")
        information = ET.SubElement(ET.SubElement(annotation, _q("oms", "Annotations")), _q("oms", "SimulationInformation"))
        ET.SubElement(information, _q("oms", "FixedStepMaster"), description="oms-ma", stepSize=repr(float(step_size)),
                      absoluteTolerance=OMS_TOLERANCE, relativeTolerance=OMS_TOLERANCE)
    experiment = root.find("ssd:DefaultExperiment", NS)
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
        fmu = loaded.components[element.get("name")].fmu
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
