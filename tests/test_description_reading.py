"""An FMU's model description is read once per process for each state of its file (mechfmu.fmu.fmi3_arrays
read_layout): the scenario's check and the FMU's instances share the reading, a rewritten file is read anew, and the
scenario's view (FMI 3.0 types as SSP names them) leaves the shared reading as fmpy gave it."""
import shutil

import fmpy

from mechfmu.fmu import fmi3_arrays
from mechfmu.ssp.scenario import _fmu_variables, load_scenario


def counting(monkeypatch) -> list[str]:
    read: list[str] = []
    original = fmpy.read_model_description

    def read_model_description(filename, *args, **kwargs):
        read.append(str(filename))
        return original(filename, *args, **kwargs)

    monkeypatch.setattr(fmpy, "read_model_description", read_model_description)
    fmi3_arrays._read_layout.cache_clear()
    _fmu_variables.cache_clear()
    return read


def test_a_scenario_and_its_instances_read_each_fmu_once(fmus, monkeypatch, tmp_path):
    from mechfmu.master.fmu_slave import FmuSlave
    from mechfmu.master.simulate import simulate

    read = counting(monkeypatch)
    monkeypatch.setattr(FmuSlave, "_unzipped", {})
    monkeypatch.setattr(FmuSlave, "_layouts", {})
    scenario = load_scenario("scenarios/oscillator")
    result = simulate(scenario, stop=0.01, estimate_error=False)
    assert result.ok, result.message
    sources = {str(c.fmu) for c in scenario.components.values()}
    assert sorted(read) == sorted(sources), read


def test_a_rewritten_fmu_is_read_anew(fmus, monkeypatch, tmp_path):
    read = counting(monkeypatch)
    fmu = tmp_path / "x.fmu"
    shutil.copyfile(fmus["Mass"], fmu)
    assert fmi3_arrays.read_description(fmu).modelName == "Mass"
    assert fmi3_arrays.read_description(fmu).modelName == "Mass" and len(read) == 1
    fmu.unlink()
    shutil.copyfile(fmus["ElastoGap"], fmu)  # another file at the same path: another inode and size
    assert fmi3_arrays.read_description(fmu).modelName == "ElastoGap" and len(read) == 2


def test_the_scenarios_fmi3_types_leave_the_shared_reading_alone(fmi3_fmus, monkeypatch):
    counting(monkeypatch)
    fmu = fmi3_fmus["Mass"]
    before = {v.name: v.type for v in fmi3_arrays.read_description(fmu).modelVariables}
    assert before["m"] == "Float64"
    stat = fmu.stat()
    assert _fmu_variables(str(fmu), (stat.st_ino, stat.st_size, stat.st_mtime_ns))["m"].type == "Real"  # SSP's name
    assert {v.name: v.type for v in fmi3_arrays.read_description(fmu).modelVariables} == before
