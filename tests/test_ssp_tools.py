"""Exported archives (``mechfmu export-ssp``) run as they are in fmpy's ``simulate_ssp`` and in ecos
(ecospy 0.7.2), with the scenario's physics, String parameters and two instances of one model included.

Neither tool takes our parameter bindings as they are: fmpy's ``simulate_ssp`` ignores the SSD's bindings
(it sets only its ``parameter_set`` argument, and no String), ecos applies one parameter set named in
``init``. So every instance gets its own FMU that carries its values (``resources/<instance>/<Model>.fmu``)
and the bindings become one set, ``initialValues``.

fmpy's one difference from our strict Jacobi: it starts every connector at 0 and does not exchange the
values the FMUs have after initialization, so its first step holds every connected input at 0. A body
then moves in that step without its connectors' forces: v differs by h·(fa + fb)/m, s by h²·(fa + fb)/(2m)
(fa, fb the forces on it at the start; ``m·a = f_drive − fa − fb``), and every element computes its force
from zero positions; the second step passes those forces on, and from there on the runs differ by that
disturbed start (elastogap up to 8.0e-2 m/s, msl/Damper 0.5 m/s; the oscillator starts at rest with all
forces 0: no difference). Our strict Jacobi with every connected input set to 0 before its first step is
fmpy's run. fmpy records after each step under the step's start time (row k: the states at t_(k+1), a
connector force as computed from the inputs held over step k) and runs while its accumulated time is below
``stop_time`` (one step more for the oscillator: 10,001 steps of 1e-4 s). ecos exchanges the values after
initialization: its run is our strict Jacobi from the first step.
"""
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import numpy as np
import pytest
from conftest import missing_system_package, slow_but

from mechfmu.crosscheck.tools import state_outputs
from mechfmu.master.observers import Observer
from mechfmu.master.simulate import simulate
from mechfmu.ssp.export import PARAMETER_SET, export_ssp
from mechfmu.ssp.scenario import NS, component_class, load_scenario

ROOT = Path(__file__).resolve().parent.parent
#: the oscillator (a String user law), elastogap (two instances each of Mass, CoordinateSpringDamper,
#: ElastoGap and Fixed) and an MSL example (three masses, bracketed port names)
SCENARIOS = ["oscillator", "elastogap", "msl/Damper"]
#: the same algorithm on the same FMUs; only the clocks differ: fmpy and ecos add h to their time and step
#: by h itself, we step from t0 + n·h to t0 + (n+1)·h (steps off h in the last bits). Measured over whole
#: runs at most 7.5e-15 of a state's range and 1.9e-14 of a connector force's (elastogap, 5,000 steps)
TOLERANCE = 1e-12

ECOS_RUN = """
import json, sys
from ecospy import EcosLib, EcosSimulation
archive, step, steps, parameter_set, *columns = sys.argv[1:]
EcosLib.set_log_level("warn")
with EcosSimulation(ssp_path=archive, step_size=float(step)) as sim:
    sim.init(parameter_set=parameter_set or None)
    rows = [[sim.get_real(c.replace(".", "::", 1)) for c in columns]]
    for _ in range(int(steps)):
        sim.step(1)
        rows.append([sim.get_real(c.replace(".", "::", 1)) for c in columns])
    sim.terminate()
print(json.dumps(rows), flush=True)
"""


@pytest.fixture(scope="module")
def archives(fmus, tmp_path_factory):
    folder = tmp_path_factory.mktemp("archives")
    return {name: export_ssp(ROOT / "scenarios" / name, folder / f"{name.replace('/', '_')}.ssp")
            for name in SCENARIOS}


class FmpyStart(Observer):
    """fmpy's start: every connected input set to 0 after initialization, before the first step."""

    def __init__(self, scenario):
        self.connections = scenario.connections

    def initialized(self, run) -> None:
        for connection in self.connections:
            run.slaves[connection.target].set([connection.target_variable], [0.0])


def fmpy_run(archive: Path) -> np.ndarray:
    """The archive in fmpy's runner as the README documents it."""
    from fmpy.ssp.simulation import simulate_ssp
    scenario = load_scenario(archive)
    return simulate_ssp(str(archive), stop_time=scenario.stop_time, step_size=scenario.step_size)


def needs_ecospy() -> None:
    """ecospy is in the test extra; its native library needs the system package libtbb12: without it the test is
    left out saying so (under CI, which installs it, it fails)."""
    try:
        import ecospy  # noqa: F401
    except OSError as exc:
        missing_system_package("libtbb12", f"ecospy cannot load its library ({exc})")
    except ImportError:
        pytest.skip("ecospy is not installed (pip install -e '.[test]' installs it)")


def ecos_run(archive: Path, steps: int, columns: list[str], parameter_set: str = "") -> np.ndarray:
    """``columns`` after initialization and after each of ``steps`` ecos steps (its own process)."""
    scenario = load_scenario(archive)
    proc = subprocess.run([sys.executable, "-c", ECOS_RUN, str(archive), repr(scenario.step_size), str(steps),
                           parameter_set, *columns], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return np.array(json.loads(proc.stdout.strip().splitlines()[-1]))


def model_description(fmu) -> ET.Element:
    with zipfile.ZipFile(fmu) as zf:
        return ET.fromstring(zf.read("modelDescription.xml"))


def relative_difference(mine: np.ndarray, theirs: np.ndarray) -> float:
    return float(np.abs(mine - theirs).max() / max(np.abs(mine).max(), 1e-300))


@pytest.mark.parametrize("name", slow_but(SCENARIOS, "oscillator"))
@pytest.mark.slow
def test_fmpy_runs_the_archive_as_our_strict_jacobi_from_zero_inputs(archives, name):
    scenario = load_scenario(archives[name])
    rows = fmpy_run(archives[name])
    steps = round((scenario.stop_time - scenario.start_time) / scenario.step_size)
    assert len(rows) in (steps, steps + 1)  # fmpy steps while its accumulated time is below stop_time
    n = len(rows)
    ours = simulate(archives[name], algorithm="jacobi", exchange="strict", observers=[FmpyStart(scenario)],
                    stop=scenario.start_time + n * scenario.step_size)
    assert ours.ok, ours.message
    states = set(state_outputs(scenario))
    compared = [c for c in rows.dtype.names[1:] if c in ours.data.dtype.names]
    assert len([c for c in compared if c in states]) >= 4, compared
    for column in compared:
        if column in states:  # fmpy's row k: after step k
            difference = relative_difference(ours.data[column][1:n + 1], rows[column])
        else:  # a connector force from the inputs held over step k (ours: read at t_k, after the exchange;
            # our row 0 is read before the inputs were set to 0)
            difference = relative_difference(ours.data[column][1:n], rows[column][1:])
        assert difference < TOLERANCE, (column, difference)


@pytest.mark.parametrize("name", slow_but(SCENARIOS, "oscillator"))
def test_fmpys_first_step_without_the_connector_forces(archives, name):
    """The first-step difference to our strict Jacobi as the module docstring states it, for every mass."""
    scenario = load_scenario(archives[name])
    h = scenario.step_size
    rows = fmpy_run(archives[name])
    ours = simulate(archives[name], algorithm="jacobi", exchange="strict", stop=scenario.start_time + 2 * h)
    assert ours.ok, ours.message
    masses = [n for n, spec in scenario.components.items() if component_class(spec.fmu).__name__ == "Mass"]
    assert masses
    for mass in masses:
        loads = sum(ours.data[f"{c.source}.{c.source_variable}"][0] for c in scenario.connections
                    if c.target == mass and c.target_variable.endswith(".f"))
        default = next(p.default for p in component_class(scenario.components[mass].fmu).parameters if p.name == "m")
        m = scenario.components[mass].parameters.get("m", default)
        flange = next(f for f in ("flange_a", "flange_b") if f"{mass}.{f}.v" in rows.dtype.names)
        dv = ours.data[f"{mass}.{flange}.v"][1] - rows[f"{mass}.{flange}.v"][0]
        ds = ours.data[f"{mass}.{flange}.s"][1] - rows[f"{mass}.{flange}.s"][0]
        # each side rounded once in a value up to |v| <= 10 m/s, |s| <= 4 m: 1e-13 is far above that
        assert dv == pytest.approx(-h * loads / m, rel=1e-9, abs=1e-13), mass
        assert ds == pytest.approx(-h * h * loads / (2 * m), rel=1e-9, abs=1e-13), mass
    if name == "oscillator":  # starts at rest, every force 0: fmpy's run is our strict Jacobi from the start
        plain = simulate(archives[name], algorithm="jacobi", exchange="strict",
                         stop=scenario.start_time + len(rows) * h)
        assert relative_difference(plain.data["mass.flange_a.s"][1:], rows["mass.flange_a.s"]) < TOLERANCE


@pytest.mark.parametrize("name", slow_but(SCENARIOS, "oscillator"))
def test_ecos_runs_the_archive_as_our_strict_jacobi(archives, name):
    needs_ecospy()
    scenario = load_scenario(archives[name])
    steps = round((scenario.stop_time - scenario.start_time) / scenario.step_size)
    columns = state_outputs(scenario)
    theirs = ecos_run(archives[name], steps, columns)
    ours = simulate(archives[name], algorithm="jacobi", exchange="strict", stop=scenario.stop_time)
    assert ours.ok, ours.message
    mine = np.array([ours.data[c] for c in columns]).T
    assert mine.shape == theirs.shape == (steps + 1, len(columns))
    for k, column in enumerate(columns):
        assert relative_difference(mine[:, k], theirs[:, k]) < TOLERANCE, column


def test_ecos_applies_the_bindings_of_a_shared_fmu_archive_by_the_set_name(fmus, tmp_path):
    """With --shared-fmus the values are only in the bindings: ecos applies them when the one set is named
    and leaves the FMUs' defaults without it (the mass at rest: its 1 N load is a binding)."""
    needs_ecospy()
    archive = export_ssp(ROOT / "scenarios" / "oscillator", tmp_path / "shared.ssp", shared_fmus=True)
    with zipfile.ZipFile(archive) as zf:
        assert sorted(zf.namelist()) == ["SystemStructure.ssd", "resources/CoordinateSpringDamper.fmu",
                                         "resources/Fixed.fmu", "resources/Mass.fmu"]
    columns, steps = ["mass.s", "mass.v"], 2000
    named = ecos_run(archive, steps, columns, PARAMETER_SET)
    ours = simulate(archive, algorithm="jacobi", exchange="strict", stop=steps * 1e-4)
    assert all(relative_difference(ours.data[c], named[:, k]) < TOLERANCE for k, c in enumerate(columns))
    assert np.abs(ecos_run(archive, steps, columns)).max() == 0.0


def test_every_instance_has_its_own_fmu_carrying_its_values(archives, fmus):
    scenario, folder = load_scenario(archives["elastogap"]), load_scenario(ROOT / "scenarios" / "elastogap")
    guids = {}
    with zipfile.ZipFile(archives["elastogap"]) as zf:
        root = ET.fromstring(zf.read("SystemStructure.ssd"))
        for element in root.iterfind("ssd:System/ssd:Elements/ssd:Component", NS):
            name = element.get("name")
            model = component_class(folder.components[name].fmu).__name__
            assert element.get("source") == f"resources/{name}/{model}.fmu"
            sets = element.findall("ssd:ParameterBindings/ssd:ParameterBinding/ssd:ParameterValues/ssv:ParameterSet",
                                   NS)
            assert [s.get("name") for s in sets] == [PARAMETER_SET]
            with zipfile.ZipFile(zf.open(element.get("source"))) as fmu:
                assert json.loads(fmu.read("resources/start_values.json")) == folder.components[name].parameters
            md = model_description(zf.open(element.get("source")))
            starts = {v.get("name"): next(iter(v)).get("start") for v in md.iter("ScalarVariable")}
            assert all(float(starts[p]) == v for p, v in folder.components[name].parameters.items())
            guids.setdefault(md.get("guid"), set()).add(json.dumps(folder.components[name].parameters))
    # a GUID per set of values (libcosim unpacks one FMU per GUID), none of them the built FMU's
    assert all(len(values) == 1 for values in guids.values())
    assert not {model_description(path).get("guid") for path in fmus.values()} & set(guids)
    for name, spec in folder.components.items():  # the archive's bindings read back as the folder's values
        assert scenario.components[name].parameters == spec.parameters
        assert {p: type(v) for p, v in scenario.components[name].parameters.items()} == \
            {p: type(v) for p, v in spec.parameters.items()}


def test_external_ssv_files_and_units_are_resolved_into_the_archive(fmus, tmp_path):
    """A binding in an .ssv file with units (g, mm, N/mm) bound at the system with the prefix ``mass.``: the
    archive holds the values in SI units inline in the mass's set, runs bit for bit like the folder, and fmpy
    gets the physics."""
    from test_ssp_parameters import UNITS, scenario_copy, ssv
    mass = ssv('<ssv:Parameter name="m"><ssv:Real value="5000" unit="g"/></ssv:Parameter>'
               '<ssv:Parameter name="f_drive"><ssv:Real value="1.0"/></ssv:Parameter>'
               '<ssv:Parameter name="s_start"><ssv:Real value="12.3" unit="mm"/></ssv:Parameter>', UNITS)
    folder = scenario_copy(tmp_path, "units", "", None, {"mass.ssv": mass})
    ssd = folder / "SystemStructure.ssd"
    text = ssd.read_text()
    system = text.index(">", text.index("<ssd:System ")) + 1
    ssd.write_text(text[:system] + '<ssd:ParameterBindings><ssd:ParameterBinding source="mass.ssv" prefix="mass."/>'
                   '</ssd:ParameterBindings>' + text[system:])
    archive = export_ssp(folder, tmp_path / "units.ssp")
    with zipfile.ZipFile(archive) as zf:
        assert "mass.ssv" not in zf.namelist()
        text = zf.read("SystemStructure.ssd").decode()
    assert 'unit="' not in text and 'source="mass.ssv"' not in text
    assert load_scenario(archive).components["mass"].parameters == {"m": 5.0, "f_drive": 1.0, "s_start": 0.0123}
    runs = [simulate(source, stop=0.05) for source in (folder, archive)]
    assert all(r.ok for r in runs), [r.message for r in runs]
    assert all(np.array_equal(runs[0].data[n], runs[1].data[n]) for n in runs[0].data.dtype.names)
    rows = fmpy_run(archive)  # the mass at 12.3 mm after the first step (0 without its values)
    assert rows["mass.flange_a.s"][0] == pytest.approx(0.0123, rel=1e-3)


@pytest.mark.slow
def test_export_from_the_command_line_with_and_without_shared_fmus(fmus, tmp_path):
    for flag, members in (([], {"resources/ground/Fixed.fmu", "resources/spring/CoordinateSpringDamper.fmu",
                                "resources/mass/Mass.fmu"}),
                          (["--shared-fmus"], {"resources/Fixed.fmu", "resources/CoordinateSpringDamper.fmu",
                                               "resources/Mass.fmu"})):
        archive = tmp_path / f"oscillator{len(flag)}.ssp"
        proc = subprocess.run([sys.executable, "-m", "mechfmu.cli", "export-ssp", "scenarios/oscillator", "-o",
                               str(archive), *flag], capture_output=True, text=True, cwd=ROOT, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert ("fmpy's simulate_ssp and ecos" in proc.stdout) == (not flag), proc.stdout
        with zipfile.ZipFile(archive) as zf:
            assert set(zf.namelist()) == members | {"SystemStructure.ssd"}


def test_instance_folders_are_safe_and_unique(fmus, tmp_path):
    """Instance names become folder names: characters outside letters, digits, '_', '.', '-' become '_',
    and names that then coincide (also in case) are numbered."""
    from mechfmu.ssp import write_scenario
    components = [("ground", "Fixed", {}), ("left mass", "Mass", {"m": 1.0, "f_drive": 1.0}),
                  ("left_Mass", "Mass", {"m": 2.0, "f_drive": 1.0}), ("../up", "Mass", {"m": 4.0, "f_drive": 1.0})]
    folder = write_scenario(tmp_path / "names", "names", components, [], stop_time=0.01, step_size=1e-3,
                            fmu_folder=str(fmus["Mass"].parent)).parent
    archive = export_ssp(folder, tmp_path / "names.ssp")
    with zipfile.ZipFile(archive) as zf:
        root = ET.fromstring(zf.read("SystemStructure.ssd"))
        sources = {c.get("name"): c.get("source") for c in root.iterfind(".//ssd:Component", NS)}
    assert sources == {"ground": "resources/ground/Fixed.fmu", "left mass": "resources/left_mass/Mass.fmu",
                       "left_Mass": "resources/left_Mass_2/Mass.fmu", "../up": "resources/_up/Mass.fmu"}
    result = simulate(archive)  # each mass with its own values: a = f_drive / m
    assert result.ok and [result.final[f"{n}.a"] for n in ("left mass", "left_Mass", "../up")] == [1.0, 0.5, 0.25]


@pytest.fixture(scope="module")
def kilonewton(fmus, tmp_path_factory):
    """An archive whose one transformation matters: a sine declared in kN drives a Force in N (x 1000)."""
    from test_connection_maps import force_on_mass
    folder = tmp_path_factory.mktemp("kN")
    return export_ssp(force_on_mass(folder, 1.0, "kN"), folder / "kN.ssp")


def test_what_export_says_of_a_transformation_is_what_fmpy_and_ecos_do(kilonewton):
    """fmpy's simulate_ssp passes the sine on unchanged (its SSD reader parses the transformation, its runner
    never applies it), ecos multiplies it by 1000 as we do; the export's summary says so, naming the connection."""
    from mechfmu.ssp.export import export_summary
    rows = fmpy_run(kilonewton)
    assert np.ptp(rows["sine.y"]) > 1.9
    np.testing.assert_array_equal(rows["force.f"], rows["sine.y"])
    needs_ecospy()
    ecos = ecos_run(kilonewton, 50, ["sine.y", "force.f"])
    np.testing.assert_array_equal(ecos[1:, 1], 1000.0 * ecos[1:, 0])
    summary = export_summary(kilonewton)
    assert "runs in mechfmu, libcosim and ecos)" in summary, summary
    assert ("fmpy's simulate_ssp and OMSimulator 2.1.3 do not apply ssc:LinearTransformation: there sine.y -> "
            "force.f (x 1000.0 + 0.0); sine.y_rate -> force.f_rate (x 1000.0 + 0.0) would deliver the output "
            "unchanged") in summary, summary  # the force's derivative is wired from the sine's (Scenario.derived)
    assert "do not apply" not in export_summary(export_ssp(ROOT / "scenarios" / "oscillator",
                                                           kilonewton.with_name("plain.ssp")))


@pytest.mark.parametrize("ci", ["", "true"])
def test_a_missing_system_library_leaves_the_test_out_naming_the_package(monkeypatch, ci):
    """ecospy without libtbb.so.12: outside CI the test is skipped naming libtbb12; under CI it fails."""
    import builtins
    real_import = builtins.__import__

    def without_tbb(name, *args, **kwargs):
        if name == "ecospy":
            raise OSError("libtbb.so.12: cannot open shared object file: No such file or directory")
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", without_tbb)
    monkeypatch.setenv("CI", ci)
    outcome = pytest.fail.Exception if ci else pytest.skip.Exception
    with pytest.raises(outcome, match=r"libtbb\.so\.12.*needs the system package libtbb12 \(apt-get install libtbb12"):
        needs_ecospy()
