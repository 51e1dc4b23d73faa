"""The SSP loader reads what libcosim reads and reports every problem at once."""
from pathlib import Path

import pytest

from mechfmu.ssp.scenario import ScenarioError, load_scenario

ROOT = Path(__file__).resolve().parent.parent


def test_shipped_scenario_is_read_completely(fmus):
    sc = load_scenario(ROOT / "scenarios/oscillator")
    assert (sc.start_time, sc.stop_time, sc.step_size, sc.algorithm) == (0.0, 1.0, 1e-4, "jacobi")
    assert sc.algorithm_options == {"exchange": "ordered", "rtol": "0.0001", "atol": "1e-06"}
    assert sc.tolerance == (1e-4, 1e-6)  # the run's tolerance, the adaptive step's too
    assert sc.components["spring"].parameters["springForceUserFunction"] == "0.1*k*u + k*u**3 + v*d"
    assert sc.components["mass"].parameters == {"m": 5.0, "f_drive": 1.0}
    assert len(sc.connections) == 5


def test_all_problems_are_reported_together(fmus, tmp_path):
    text = (ROOT / "scenarios/two_mass_oscillator/SystemStructure.ssd").read_text()
    text = text.replace("../../fmus/", (ROOT / "fmus").as_posix() + "/")
    text = text.replace('startElement="left" startConnector="flange.s" endElement="spring1"',
                        'startElement="lefty" startConnector="flange.s" endElement="spring1"')
    text = text.replace('startElement="spring3" startConnector="flange_a.f" endElement="mass2" endConnector="flange_b.f"',
                        'startElement="spring3" startConnector="flange_a.f" endElement="mass2" endConnector="flange_a.f"')
    text = text.replace('<ssd:Connector name="flange_b.s" kind="input"><ssc:Real/></ssd:Connector>',
                        '<ssd:Connector name="flange_b.s" kind="output"><ssc:Real/></ssd:Connector>', 1)
    (tmp_path / "SystemStructure.ssd").write_text(text)
    with pytest.raises(ScenarioError) as info:
        load_scenario(tmp_path)
    problems = info.value.problems
    assert any("unknown component 'lefty'" in p for p in problems)
    assert any("input mass2.flange_a.f is connected twice" in p for p in problems)
    assert any("spring1: connector 'flange_b.s' declared as 'output', but it is an input" in p for p in problems)
    assert len(problems) == 3


def test_local_run_needs_no_fmu_file(tmp_path):
    """In-process components are found from the SSD's source names (../../fmus/Mass.fmu -> Mass):
    a scenario folder copied where no FMU exists runs with local=True and equals the FMU run."""
    import shutil

    from mechfmu.master.simulate import simulate
    folder = tmp_path / "a" / "b" / "oscillator"
    shutil.copytree(ROOT / "scenarios" / "oscillator", folder)
    assert not (folder / "../../fmus/Mass.fmu").exists()
    local = simulate(folder, local=True, stop=0.05)
    assert local.ok, local.message
    through_fmus = simulate(ROOT / "scenarios" / "oscillator", stop=0.05)
    assert all((local.data[n] == through_fmus.data[n]).all() for n in local.data.dtype.names)
