"""What ``export-ssp`` says of other tools, held to what those tools do, and what it reads back of its own archive.

- Names: OMSimulator 2.1.3 refuses a name that is not an identifier (an ASCII letter, then letters, digits, _).
  The model's name is written as one (OMSimulator then runs the archive); a component's is named in the summary,
  which no longer says OMSimulator runs it (OMSimulator indeed stops); a strongly coupled export, for OMSimulator
  alone, is refused.
- Coupling: the estimate of each tool's error is our run of its coupling against the default master; OMSimulator's
  own run of the archive is that far from the default master's (measured: 0.107 m in the two-mass oscillator).
- fmpy's first step: the inputs named as starting away from 0 are those our master's first row holds; an input
  declared but connected to nothing, which fmpy's reader cannot take, is not declared in the archive.
- Read back: a value an FMU does not read back (a 14 KB table string, which the FMU's reader took as no JSON
  object, so every value went back to its default) refuses the export, naming the component and the value.
"""
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from conftest import omsimulator_program

from mechfmu.ssp import export as export_module
from mechfmu.ssp.export import export_ssp, export_summary
from mechfmu.ssp.readback import ReadBackError
from mechfmu.ssp.scenario import load_scenario
from mechfmu.ssp.tool_notes import OMS_IDENT, initial_inputs, oms_identifier

ROOT = Path(__file__).resolve().parent.parent


def renamed(tmp_path: Path, scenario: str, old: str, new: str, model: bool = False) -> Path:
    """scenarios/``scenario`` copied with the component ``old`` (or with ``model`` the model) named ``new``."""
    folder = tmp_path / new.replace("/", "_").replace(" ", "_")
    shutil.copytree(ROOT / "scenarios" / scenario, folder)
    ssd = folder / "SystemStructure.ssd"
    text = ssd.read_text().replace("../../fmus/", f"{(ROOT / 'fmus').as_posix()}/")
    if model:
        text = text.replace(f'name="{old}"', f'name="{new}"')
    else:
        for attribute in ("name", "startElement", "endElement"):
            text = text.replace(f'{attribute}="{old}"', f'{attribute}="{new}"')
    ssd.write_text(text)
    return folder


@pytest.mark.parametrize("name, ident", [("quarter-truck", "quarter_truck"), ("osc.dot", "osc_dot"),
                                         ("osc space", "osc_space"), ("2mass", "mass"), ("_osc", "osc"),
                                         ("masse_é", "masse__"), ("Osc2", "Osc2"), ("---", "system")])
def test_a_name_is_made_an_identifier_omsimulator_accepts(name, ident):
    assert oms_identifier(name) == ident
    assert OMS_IDENT.match(ident)  # the form OMSimulator 2.1.3 accepted in every measured case


@pytest.mark.slow
def test_the_model_name_is_written_as_an_identifier_and_omsimulator_runs_it(fmus, tmp_path):
    folder = renamed(tmp_path, "oscillator", "oscillator", "quarter-truck", model=True)
    archive = export_ssp(folder, tmp_path / "qt.ssp")
    with zipfile.ZipFile(archive) as zf:
        text = zf.read("SystemStructure.ssd").decode()
    assert 'name="quarter_truck"' in text and "quarter-truck" not in text
    summary = export_summary(archive, scenario=folder)
    assert "the model is named 'quarter_truck' in the archive: OMSimulator 2.1.3 refuses 'quarter-truck'" in summary
    assert "runs in mechfmu, libcosim, OMSimulator" in summary
    from mechfmu.crosscheck.omsimulator import run_omsimulator
    run = run_omsimulator(omsimulator_program(), archive, tmp_path / "oms")
    assert run.returncode == 0 and not run.errors and run.signals, run.output[-2000:]


@pytest.mark.slow
@pytest.mark.parametrize("component", ["mass-1", "2mass"])
def test_a_component_name_omsimulator_refuses_is_named_and_omsimulator_is_not_promised(fmus, tmp_path, component):
    folder = renamed(tmp_path, "oscillator", "mass", component)
    archive = export_ssp(folder, tmp_path / "named.ssp")
    summary = export_summary(archive, scenario=folder)
    first = summary.splitlines()[0]
    assert "runs in mechfmu, libcosim, fmpy's simulate_ssp and ecos)" in first, summary
    assert f"OMSimulator 2.1.3 refuses the names component {component!r}" in summary
    with pytest.raises(ValueError, match=f"OMSimulator 2.1.3 refuses the names component '{component}'"):
        export_ssp(folder, tmp_path / "sc.ssp", strongly_coupled=True)
    from mechfmu.crosscheck.omsimulator import run_omsimulator
    run = run_omsimulator(omsimulator_program(), archive, tmp_path / "oms")  # what the summary says, it does
    assert run.returncode != 0 and f'"{component}" is not a valid ident' in run.output, run.output[-2000:]


@pytest.mark.slow
def test_the_estimated_error_of_omsimulators_coupling_is_its_error(fmus, tmp_path):
    """The summary's estimate for OMSimulator is its own run's distance from our default master (auto: 2e-9 m of
    the exact answer in this system) within 1 %, and it points to --strongly-coupled."""
    from mechfmu.crosscheck.coupling import first_order_deviations
    from mechfmu.crosscheck.omsimulator import run_omsimulator
    from mechfmu.master.simulate import simulate
    archive = export_ssp(ROOT / "scenarios" / "two_mass_oscillator", tmp_path / "tmo.ssp")
    estimate = first_order_deviations(archive)
    summary = export_summary(archive, deviations=estimate)
    ordered = estimate[0]["jacobi, exchange=ordered"]
    assert f"OMSimulator: weakly coupled: its fixed-step master exchanges once a step (first order), about " \
           f"{ordered:.2g} m from the accurate run" in summary
    assert "export with --strongly-coupled" in summary
    run = run_omsimulator(omsimulator_program(), archive, tmp_path / "oms")
    assert run.returncode == 0 and run.signals, run.output[-2000:]
    accurate = simulate(archive, "auto", estimate_error=False)
    measured = max(float(np.max(np.abs(run.signals[c] - np.interp(run.signals["time"], accurate.data["time"],
                                                                   accurate.data[c]))))
                   for c in ("mass1.flange_a.s", "mass2.flange_a.s"))
    assert ordered == pytest.approx(measured, rel=0.01)


def test_the_inputs_fmpy_starts_at_zero_are_those_our_first_row_holds_elsewhere(fmus):
    """The in-process evaluation at the start gives each connected input its output's value in our master's
    first row (to rounding); the preloaded two-mass oscillator has such inputs, the oscillator none."""
    from mechfmu.master.simulate import simulate
    scenario = load_scenario(ROOT / "scenarios" / "two_mass_oscillator")
    start = initial_inputs(scenario)
    first = simulate(scenario, "jacobi", exchange="strict", stop=scenario.step_size, estimate_error=False).data[0]
    assert len(start) == len(scenario.connections)
    for con in scenario.connections:
        expected = con.factor * first[f"{con.source}.{con.source_variable}"] + con.offset
        assert start[(con.target, con.target_variable)] == pytest.approx(expected, rel=1e-12, abs=1e-12), con
    assert any(value != 0.0 for value in start.values())
    assert not any(initial_inputs(load_scenario(ROOT / "scenarios" / "oscillator")).values())


@pytest.mark.slow
def test_a_declared_unconnected_input_is_not_declared_in_the_archive_and_fmpy_runs_it(fmus, tmp_path):
    """fmpy 0.3's reader stops on an input declared but connected to nothing (or wires it to the output of the
    connected input before it); the archive declares connected inputs only, and fmpy runs the free mass with its
    f_drive = 2 N: s(1) = 1 m."""
    from fmpy.ssp.simulation import simulate_ssp
    from test_ssp_system_bindings import scenario as lone_mass
    folder = lone_mass(tmp_path)
    ssd = folder / "SystemStructure.ssd"
    ssd.write_text(ssd.read_text().replace('<ssd:Connectors>', '<ssd:Connectors><ssd:Connector name="f_drive" '
                                           'kind="input"><ssc:Real/></ssd:Connector>'))
    archive = export_ssp(folder, tmp_path / "lone.ssp")
    with zipfile.ZipFile(archive) as zf:
        assert 'name="f_drive" kind="input"' not in zf.read("SystemStructure.ssd").decode()
    rows = simulate_ssp(str(archive), stop_time=1.0, step_size=1e-3)
    assert rows["mass.flange_a.s"][-1] == pytest.approx(1.0, rel=2e-3)  # fmpy's last row: after 999 or 1000 steps


@pytest.mark.slow
def test_a_long_table_string_is_read_back_or_the_export_refused(fmus, tmp_path):
    """A table string of 14 KB: the archive's FMU gives y(1) = 2·1 + 0.5 (the table's line, the offset), or the
    export is refused naming the table and its value; no archive that loses them is written."""
    from test_ssp_system_bindings import EXPERIMENT, HEAD

    from mechfmu.master.simulate import simulate
    rows = "; ".join(f"{i * 0.001:.3f}, {i * 0.002:.3f}" for i in range(1001))
    folder = tmp_path / "long_table"
    folder.mkdir()
    (folder / "SystemStructure.ssd").write_text(
        HEAD.format(name="long_table") + '<ssd:System name="long_table"><ssd:Elements><ssd:Component name="table" '
        f'source="{(ROOT / "fmus" / "Table.fmu").as_uri()}"><ssd:Connectors><ssd:Connector name="y" kind="output">'
        '<ssc:Real/></ssd:Connector></ssd:Connectors><ssd:ParameterBindings><ssd:ParameterBinding>'
        '<ssd:ParameterValues><ssv:ParameterSet version="1.0" name="p"><ssv:Parameters><ssv:Parameter name="table">'
        f'<ssv:String value="{rows}"/></ssv:Parameter><ssv:Parameter name="offset"><ssv:Real value="0.5"/>'
        '</ssv:Parameter></ssv:Parameters></ssv:ParameterSet></ssd:ParameterValues></ssd:ParameterBinding>'
        '</ssd:ParameterBindings></ssd:Component></ssd:Elements></ssd:System>' + EXPERIMENT)
    target = tmp_path / "long_table.ssp"
    try:
        export_ssp(folder, target)
    except ReadBackError as exc:
        assert "table (Table.fmu) as instantiated: table = '0.000, 0.000; 0.001" in str(exc), str(exc)
        assert not target.exists()
        return
    result = simulate(target)
    assert result.ok, result.message
    assert result.data["table.y"][-1] == pytest.approx(2.5, rel=1e-12)


@pytest.mark.slow
def test_a_value_an_fmu_does_not_carry_refuses_the_export(fmus, tmp_path, monkeypatch):
    """An FMU written without one of its values (the writer made to drop m): the export names the component, the
    value and what the file holds instead, and leaves the target as it was."""
    carrying = export_module._carrying

    def dropping(fmu, target, values, *rest):
        carrying(fmu, target, {k: v for k, v in values.items() if k != "m"}, *rest)

    monkeypatch.setattr(export_module, "_carrying", dropping)
    target = tmp_path / "oscillator.ssp"
    target.write_bytes(b"before")
    with pytest.raises(ReadBackError) as info:
        export_ssp(ROOT / "scenarios" / "oscillator", target)
    assert "mass (Mass.fmu) resources/start_values.json: m = 5.0 reads back as nothing" in str(info.value)
    assert target.read_bytes() == b"before"


def test_an_export_leaves_fmpys_logging_to_the_fmus_loaded_after_it(fmus, tmp_path):
    """The read-back's FMUs log to callbacks of their own, not through fmpy's logger proxy (one global of the
    process, which would then call the read-back's callbacks after they are gone): an FMU instantiated with fmpy's
    default callbacks after an export still prints its message through fmpy (it crashed the process, or its
    messages went to the gone callbacks)."""
    script = f"""
import gc
from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave
from mechfmu.ssp.export import export_ssp
export_ssp({str(ROOT / "scenarios" / "oscillator")!r}, {str(tmp_path / "o.ssp")!r})
gc.collect()
unzipped = extract({str(fmus["Mass"])!r})
md = read_model_description(unzipped)
m = next(v.valueReference for v in md.modelVariables if v.name == "m")
for k in range(3):
    slave = FMU2Slave(guid=md.guid, unzipDirectory=unzipped, modelIdentifier=md.coSimulation.modelIdentifier,
                      instanceName=f"probe{{k}}")
    slave.instantiate(loggingOn=True)
    try:
        slave.setReal([m], [-1.0])
    except Exception:
        pass
    slave.freeInstance()
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stdout.count("m = -1 is out of range") == 3, done.stdout[-2000:]
