"""Scenarios handed on as self-contained SSP archives (``mechfmu export-ssp``): the archive passes the
SSP 1.0 schema, carries the annotations libcosim and OMSimulator read, runs in our master exactly as
the folder does, and runs unchanged in libcosim; a scenario folder copied elsewhere still runs."""
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import numpy as np
import pytest
from conftest import slow_but

from mechfmu.crosscheck.tools import run_libcosim, state_outputs
from mechfmu.master.simulate import simulate
from mechfmu.ssp.export import OMS_NS, export_ssp
from mechfmu.ssp.scenario import NS, ScenarioError, load_scenario

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted(p.parent.name for p in (ROOT / "scenarios").glob("*/SystemStructure.ssd"))
CONSTRAINED = {"prescribed_motion", "geared_masses", "belt_friction"}  # libcosim cannot solve lambda


@pytest.fixture(scope="module")
def archives(fmus, tmp_path_factory):
    folder = tmp_path_factory.mktemp("ssp")
    return {name: export_ssp(ROOT / "scenarios" / name, folder / f"{name}.ssp",
                             unsolved_constraints_allowed=name in CONSTRAINED) for name in SCENARIOS}


@pytest.mark.parametrize("name", SCENARIOS)
@pytest.mark.slow
def test_archive_is_valid_ssp_with_every_tool_annotation(archives, name):
    from fmpy.ssp.ssd import read_ssd
    read_ssd(str(archives[name]), validate=True)  # SSP 1.0 schema (fmpy's copy of the XSDs, lxml)
    scenario = load_scenario(ROOT / "scenarios" / name)
    with zipfile.ZipFile(archives[name]) as zf:
        root = ET.fromstring(zf.read("SystemStructure.ssd"))
        members = set(zf.namelist())
    sources = {c.get("source") for c in root.iterfind(".//ssd:Component", NS)}
    assert sources == {f"resources/{n}/{spec.fmu.name}" for n, spec in scenario.components.items()}
    assert sources <= members
    oms = {"oms": OMS_NS, **NS}
    master = root.find("ssd:System/ssd:Annotations/ssc:Annotation/oms:Annotations/oms:SimulationInformation/"
                       "oms:FixedStepMaster", oms)
    assert float(master.get("stepSize")) == scenario.step_size
    first = root.find("ssd:DefaultExperiment/ssd:Annotations", NS)[0]  # OMSimulator reads only the first
    assert first.get("type") == "org.openmodelica" and first.find("oms:Annotations/oms:SimulationInformation", oms) is not None
    osp = root.find(".//osp:FixedStepAlgorithm", NS)
    assert float(osp.get("baseStepSize")) == scenario.step_size
    # no annotation on a component (OMSimulator refuses them); the free marks kept on the system
    assert root.find(".//ssd:Component/ssd:Annotations", NS) is None
    loaded = load_scenario(archives[name])
    assert {n: s.free for n, s in loaded.components.items()} == {n: s.free for n, s in scenario.components.items()}


@pytest.mark.parametrize("name", slow_but(SCENARIOS, "oscillator"))
def test_archive_runs_like_the_folder_bit_for_bit(archives, name):
    scenario = load_scenario(ROOT / "scenarios" / name)
    stop = scenario.start_time + 200 * scenario.step_size
    folder, archive = (simulate(source, stop=stop) for source in (ROOT / "scenarios" / name, archives[name]))
    assert folder.ok and archive.ok, (folder.message, archive.message)
    assert archive.data.dtype == folder.data.dtype
    assert all(np.array_equal(archive.data[n], folder.data[n]) for n in folder.data.dtype.names)


@pytest.mark.parametrize("name", slow_but([n for n in SCENARIOS if n not in CONSTRAINED], "oscillator"))
def test_archive_runs_unchanged_in_libcosim(archives, name):
    """libcosimpy 0.0.6 opens the .ssp itself; its states equal our strict Jacobi (libcosim's order)."""
    pytest.importorskip("libcosimpy")
    scenario = load_scenario(archives[name])
    n_steps = 500
    columns = state_outputs(scenario)
    theirs = run_libcosim(archives[name], n_steps, columns)
    ours = simulate(scenario, algorithm="jacobi", exchange="strict", stop=n_steps * scenario.step_size, local=True)
    assert ours.ok, ours.message
    mine = np.array([ours.data[c][1:n_steps + 1] for c in columns]).T
    scale = np.maximum(np.abs(mine).max(axis=0), 1e-300)
    # the same algorithm on the same FMUs: only the clocks differ (libcosim: integer ns), 500 steps
    assert (np.abs(mine - theirs) / scale).max() < 1e-12


def test_copied_folder_runs_against_the_built_fmus(fmus, tmp_path):
    folder = tmp_path / "elsewhere" / "oscillator"
    shutil.copytree(ROOT / "scenarios" / "oscillator", folder)
    copied, original = (simulate(f, stop=0.05) for f in (folder, ROOT / "scenarios" / "oscillator"))
    assert copied.ok and all(np.array_equal(copied.data[n], original.data[n]) for n in original.data.dtype.names)
    text = (folder / "SystemStructure.ssd").read_text().replace("Mass.fmu", "NotOurs.fmu")
    (folder / "SystemStructure.ssd").write_text(text)
    with pytest.raises(ScenarioError, match="mass: FMU not found: .*NotOurs.fmu .*mechfmu build.*export-ssp"):
        load_scenario(folder)


@pytest.mark.slow
def test_export_and_run_from_the_command_line(fmus, tmp_path):
    archive = tmp_path / "two.ssp"
    for argv in (["export-ssp", "scenarios/two_mass_oscillator", "-o", str(archive)],
                 ["run", str(archive), "--stop", "0.01"]):
        proc = subprocess.run([sys.executable, "-m", "mechfmu.cli", *argv], capture_output=True, text=True,
                              cwd=ROOT, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "two_mass_oscillator (FMUs, jacobi): ok" in proc.stdout


@pytest.mark.slow
def test_a_scenario_with_a_constraint_is_exported_only_when_asked(fmus, tmp_path):
    """No tool but our masters solve a constraint's force: export-ssp refuses it (exit 2, naming the
    constraint and the option); with --unsolved-constraints the archive is written, says so, and runs here."""
    archive = tmp_path / "gm.ssp"

    def cli(*argv):
        return subprocess.run([sys.executable, "-m", "mechfmu.cli", *argv], capture_output=True, text=True, cwd=ROOT,
                              timeout=300)
    refused = cli("export-ssp", "scenarios/geared_masses", "-o", str(archive))
    assert refused.returncode == 2 and not archive.exists()
    assert "constraint 'gear'" in refused.stderr and "--unsolved-constraints" in refused.stderr, refused.stderr
    written = cli("export-ssp", "scenarios/geared_masses", "-o", str(archive), "--unsolved-constraints")
    assert written.returncode == 0 and "the force of gear is solved only by mechfmu's monolithic and newton masters" \
        in written.stdout, written.stderr
    friction = cli("export-ssp", "scenarios/msl/Brake", "-o", str(tmp_path / "brake.ssp"), "--unsolved-constraints")
    assert friction.returncode == 0, friction.stderr
    assert "is solved only by mechfmu's monolithic and newton-friction masters" in friction.stdout, friction.stdout
    run = cli("run", str(archive), "--stop", "0.01")
    assert run.returncode == 0 and "geared_masses (FMUs, newton): ok" in run.stdout, run.stdout + run.stderr
