"""`mechfmu export-ssp --strongly-coupled`: an SSP archive whose system is OMSimulator's strongly coupled kind
(its FMUs instantiated as Model Exchange FMUs and integrated by CVODE), valid SSP 1.0, every FMU in it a Model
Exchange FMU, run by our master as the monolithic master bit for bit as the folder; a scenario that cannot be
one (a constraint, a subsystem) is refused by name and reason. OMSimulator itself is not installable here."""
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import numpy as np
import pytest
from fmpy import read_model_description

from mechfmu.master.simulate import simulate
from mechfmu.ssp.export import OMS_NS, export_ssp
from mechfmu.ssp.scenario import NS

ROOT = Path(__file__).resolve().parent.parent
OMS = {"oms": OMS_NS, **NS}


@pytest.fixture(scope="module")
def archive(fmus, tmp_path_factory):
    return export_ssp(ROOT / "scenarios/limit_stops", tmp_path_factory.mktemp("sc") / "limit_stops.ssp",
                      strongly_coupled=True)


def test_the_archive_is_a_strongly_coupled_system_of_model_exchange_fmus(archive, tmp_path):
    from fmpy.ssp.ssd import read_ssd
    read_ssd(str(archive), validate=True)  # SSP 1.0 schema
    with zipfile.ZipFile(archive) as zf:
        root = ET.fromstring(zf.read("SystemStructure.ssd"))
        zf.extractall(tmp_path)
    information = root.find("ssd:System/ssd:Annotations/ssc:Annotation/oms:Annotations/oms:SimulationInformation",
                            OMS)
    solver = information.find("oms:VariableStepSolver", OMS)
    assert information.find("oms:FixedStepMaster", OMS) is None
    # CVODE's error control alone limits its step: the largest step is the whole run (limit_stops: 2 s)
    assert solver.get("description") == "cvode" and float(solver.get("maximumStepSize")) == 2.0
    # OMSimulator learns the kind of system from the system's first annotation only
    assert root.find("ssd:System/ssd:Annotations", NS)[0].get("type") == "org.openmodelica"
    assert float(solver.get("relativeTolerance")) == 1e-8 and float(solver.get("absoluteTolerance")) == 1e-10
    # the monolithic master, with the scenario's tolerance (the coupling's options dropped)
    assert root.find(".//mechfmu:Master", NS).attrib == {"algorithm": "monolithic", "rtol": "0.0001", "atol": "1e-06"}
    sources = [c.get("source") for c in root.iterfind(".//ssd:Component", NS)]
    assert len(sources) == 3
    for source in sources:
        description = read_model_description(str(tmp_path / source))
        assert description.modelExchange is not None, source


def test_our_master_runs_the_archive_as_the_monolithic_master_like_the_folder(archive):
    """The archive's FMUs carry the instances' values; run as they are, with the algorithm the archive names,
    they give the folder's monolithic run bit for bit."""
    from_archive = simulate(archive, stop=0.3)
    from_folder = simulate(ROOT / "scenarios/limit_stops", "monolithic", stop=0.3)
    assert from_archive.ok and from_folder.ok, (from_archive.message, from_folder.message)
    assert "derivative_evaluations" in from_archive.counters  # the monolithic master's counter
    assert all(np.array_equal(from_archive.data[n], from_folder.data[n]) for n in from_folder.data.dtype.names)
    assert from_archive.events == from_folder.events and len(from_archive.events) == 2


@pytest.mark.slow
def test_the_crosscheck_of_the_archive_compares_its_monolithic_run_through_the_fmus_and_in_process(archive):
    """The archive's master is the monolithic master: the crosscheck's first pair is that master through the Model
    Exchange FMUs against the components in-process, bit for bit; libcosim still runs the co-simulation."""
    from mechfmu.crosscheck.tools import crosscheck
    comparisons = crosscheck(archive, steps=2000)
    assert comparisons[0].pair == "monolithic FMUs vs in-process"
    assert comparisons[0].difference == 0.0 and comparisons[0].passed
    assert all(c.passed for c in comparisons if c.tolerance is not None)


def test_a_constraint_cannot_be_part_of_a_strongly_coupled_system(fmus, tmp_path):
    with pytest.raises(ValueError, match=r"cannot export geared_masses as a strongly coupled system: gear "
                                         r"\(CoordinateConstraint.fmu\) has no Model Exchange interface: an algebraic"):
        export_ssp(ROOT / "scenarios/geared_masses", tmp_path / "x.ssp", strongly_coupled=True)
    assert not (tmp_path / "x.ssp").exists()


def test_a_subsystem_cannot_be_part_of_a_strongly_coupled_system(fmus, tmp_path):
    from test_nested_systems import body_system
    with pytest.raises(ValueError, match="holds the subsystem 'body'; OMSimulator's strongly coupled systems hold "
                                         "FMUs only"):
        export_ssp(body_system(tmp_path), tmp_path / "x.ssp", strongly_coupled=True)


def test_the_command_line_writes_it(fmus, tmp_path):
    from mechfmu.cli import main
    target = tmp_path / "oscillator_sc.ssp"
    assert main(["export-ssp", str(ROOT / "scenarios/oscillator_linear"), "-o", str(target),
                 "--strongly-coupled"]) == 0
    with zipfile.ZipFile(target) as zf:
        root = ET.fromstring(zf.read("SystemStructure.ssd"))
    assert root.find(".//oms:VariableStepSolver", OMS) is not None
