"""The bad-input and fault corpus of the master side: each case is refused with a message
naming what and where, or completes with the right result; nothing hangs, crashes or passes silently.
(FMU-level faults: tests/test_fmu_faults.py; fuzzing: tests/test_fuzzing.py.)"""
import csv
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fmpy.util import read_csv
from mechfmu.components import COMPONENTS

from mechfmu.master.fmu_slave import FmuSlave
from mechfmu.master.result_files import CsvWriter
from mechfmu.master.simulate import DIVERGENCE_FACTOR, MAX_STEPS, simulate
from mechfmu.master.slaves import LocalSlave, SlaveError
from mechfmu.ssp.scenario import ComponentSpec, Connection, Scenario, ScenarioError, load_scenario

ROOT = Path(__file__).resolve().parent.parent
OSCILLATOR = ROOT / "scenarios" / "oscillator"


def cli(*args, cwd=ROOT, timeout=300, **kw):
    return subprocess.run([sys.executable, "-m", "mechfmu.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout, **kw)


def edited(tmp_path, edit, name="oscillator"):
    """A copy of a shipped scenario with its SSD text edited."""
    folder = tmp_path / name
    folder.mkdir()
    text = (ROOT / "scenarios" / name / "SystemStructure.ssd").read_text()
    (folder / "SystemStructure.ssd").write_text(edit(text.replace("../../fmus/", (ROOT / "fmus").as_posix() + "/")))
    return folder


# --- every range-limited parameter of every FMU ------------------------------------------------

def out_of_range(param):
    if param.min is not None:
        return float(param.min) if param.min_exclusive else float(param.min) - max(1.0, abs(param.min))
    return float(param.max) + max(1.0, abs(param.max))


RANGED = [(model, p) for model, cls in COMPONENTS.items() for p in cls.parameters
          if p.type == "Real" and (p.min is not None or p.max is not None)]


@pytest.mark.parametrize("model, param", RANGED, ids=[f"{m}.{p.name}" for m, p in RANGED])
def test_every_range_limited_parameter_is_refused_out_of_range_by_fmu_and_component(fmus, model, param):
    bad = out_of_range(param)
    for slave in (FmuSlave("x", fmus[model]), LocalSlave("x", COMPONENTS[model])):
        with pytest.raises(SlaveError) as info:
            slave.set_parameters({param.name: bad})
        shown = re.search(rf"{model} 'x': {param.name} = (\S+) is out of range", str(info.value))
        assert shown and float(shown[1]) == bad and not shown[1].endswith(".0"), str(info.value)  # as written
        slave.set_parameters({param.name: param.default})  # the instance still works
        slave.enter_initialization(0.0, 1.0)
        slave.exit_initialization()
        assert slave.do_step(0.0, 1e-3), slave.last_error
        slave.terminate()


# --- values are never coerced silently (item 7) ------------------------------------------------

@pytest.mark.parametrize("local", [True, False])
@pytest.mark.parametrize("value, fragment", [
    (2**40 + 5, "does not fit an FMI Integer (32 bits"),
    (3.7, "is not an integer"),
    ("1", "is not an integer"),
    (True, "is not an integer"),
])
def test_integer_parameters_are_not_cut_or_converted(fmus, local, value, fragment):
    result_or_error = None
    with pytest.raises(Exception) as info:
        result_or_error = simulate(OSCILLATOR, local=local, stop=0.01, parameters={"spring": {"itemNumber": value}})
        assert not result_or_error.ok
        raise RuntimeError(result_or_error.message)
    assert f"itemNumber = {value!r} {fragment}" in str(info.value)


@pytest.mark.parametrize("local", [True, False])
@pytest.mark.parametrize("value", ["yes", 2, 0.5, "false"])
def test_boolean_parameters_accept_only_booleans(fmus, local, value):
    with pytest.raises(ScenarioError) as info:  # refused before the run (mechfmu/ssp/overrides.py)
        simulate(OSCILLATOR, local=local, stop=0.01, parameters={"spring": {"activeConnector": value}})
    assert f"activeConnector = {value!r} is not a Boolean" in str(info.value)


@pytest.mark.parametrize("edit, fragment", [
    (lambda t: t.replace('stopTime="', 'stopTime="x', 1), "stopTime = 'x"),
    (lambda t: t.replace('stopTime="1.0"', 'stopTime="inf"'), "stopTime = 'inf' is not a finite number"),
    (lambda t: t.replace('baseStepSize="0.0001"', 'baseStepSize=""'), "baseStepSize = '' is not a finite number"),
    (lambda t: t.replace('baseStepSize="0.0001"', 'baseStepSize="nan"'), "baseStepSize = 'nan' is not a finite number"),
    (lambda t: t.replace('<ssv:Real value="5.0"/>', '<ssv:Real value="abc"/>', 1),
     "mass: parameter m = 'abc': not a Real"),
    (lambda t: t.replace('<mechfmu:Master ', '<mechfmu:Master divergenceFactor="0.5" ', 1),
     "divergenceFactor 0.5 must be > 1"),
    # a source no file system can hold (the system's stat fails with "File name too long"): refused by name
    (lambda t: re.sub(r'(name="mass" source=")[^"]*', r"\g<1>" + "1" * 400, t, count=1),
     "mass: source '" + "1" * 80 + "'... (400 characters): a file name in it is longer than 255 bytes"),
])
def test_scenario_numbers_are_checked_and_named(tmp_path, edit, fragment):
    folder = edited(tmp_path, edit)
    with pytest.raises(ScenarioError) as info:
        load_scenario(folder)
    assert fragment in str(info.value)


def test_a_scenario_without_default_experiment_exports_and_runs(fmus, tmp_path):
    """ssd:DefaultExperiment is optional: defaults apply, and export-ssp writes one for OMSimulator."""
    from mechfmu.ssp import export_ssp
    folder = edited(tmp_path, lambda t: t[:t.index("<ssd:DefaultExperiment")] + t[t.index("</ssd:DefaultExperiment>")
                                                                                   + len("</ssd:DefaultExperiment>"):])
    export_ssp(folder, tmp_path / "x.ssp")
    scenario = load_scenario(tmp_path / "x.ssp")
    assert (scenario.stop_time, scenario.step_size) == (1.0, 1e-3)
    assert simulate(scenario, stop=0.01).ok


@pytest.mark.slow
def test_algorithm_options_must_be_finite_and_exact(fmus):
    for option, fragment in (("tolerance=inf", "tolerance = 'inf' is not a finite number"),
                             ("tolerance=nan", "tolerance = 'nan' is not a finite number"),
                             ("max_iterations=2.5", "max_iterations = '2.5' is not an integer")):
        proc = cli("run", "scenarios/two_mass_oscillator", "--algorithm", "newton", "--option", option)
        assert proc.returncode == 2 and fragment in proc.stderr, proc.stderr
    with pytest.raises(ValueError, match="max_iterations = 2.5 is not an integer"):
        simulate("scenarios/two_mass_oscillator", algorithm="fixed-point", max_iterations=2.5, local=True)


def test_parameters_for_a_misspelt_component_are_refused():
    with pytest.raises(ValueError, match=r"unknown component 'sping'; the scenario's components are ground, mass, spring"):
        simulate(OSCILLATOR, local=True, parameters={"sping": {"stiffness": 1.0}})


# --- divergence (item 8) and work guards (item 9) ----------------------------------------------

@pytest.mark.parametrize("scenario", ["oscillator_linear", "two_mass_oscillator"])
def test_divergence_stops_the_run_long_before_overflow(scenario):
    result = simulate(f"scenarios/{scenario}", algorithm="jacobi", step=0.05, stop=50.0, local=True)
    assert result.status == "error" and "diverged" in result.message and "beyond" in result.message
    assert result.end_time < 10.0
    values = np.array(result.data.tolist())[:, 1:]
    scale = max(1.0, np.abs(values[0]).max())
    # the growth of one step past the bound is far below overflow
    assert np.isfinite(values).all() and np.abs(values).max() < 1e3 * DIVERGENCE_FACTOR * scale
    # without the guard the same run reports "ok" with forces near 1e80: the guard is what stops it
    unguarded = simulate(f"scenarios/{scenario}", algorithm="jacobi", step=0.05, stop=50.0, local=True,
                         divergence_factor=1e300, record=False)
    assert unguarded.ok and max(abs(v) for v in unguarded.final.values()) > 1e60


def test_a_scenario_states_its_own_divergence_bound(tmp_path):
    folder = edited(tmp_path, lambda t: t.replace('<mechfmu:Master ', '<mechfmu:Master divergenceFactor="1.5" ', 1),
                    "oscillator_linear")
    assert load_scenario(folder, local=True).divergence_factor == 1.5
    result = simulate(folder, algorithm="jacobi", step=0.05, stop=50.0, local=True)
    default = simulate("scenarios/oscillator_linear", algorithm="jacobi", step=0.05, stop=50.0, local=True)
    assert result.status == "error" and "1.5 x the run's scale" in result.message
    assert result.end_time < default.end_time


@pytest.mark.slow
def test_shipped_scenarios_do_not_trip_the_divergence_guard():
    for folder in sorted((ROOT / "scenarios").glob("*/SystemStructure.ssd")):
        result = simulate(folder.parent, local=True, stop=min(0.5, load_scenario(folder, local=True).stop_time),
                          record=False)
        assert result.ok, (folder.parent.name, result.message)


@pytest.mark.parametrize("args, fragment", [
    (["--step", "1e-12"], "needs 1e+12 steps"),
    (["--stop", "1e300"], "needs 1e+304 steps"),
    (["--step", "5e-324"], "needs inf steps"),
    (["--stop", "inf"], "stop inf s finite"),
    (["--step", "nan"], "step nan s must be positive and finite"),
])
@pytest.mark.slow
def test_excessive_or_non_finite_runs_are_refused_up_front(args, fragment):
    proc = cli("run", "scenarios/oscillator", "--local", *args, timeout=60)
    assert proc.returncode == 2 and fragment in proc.stderr, proc.stderr
    if "needs" in fragment:
        assert f"more than max_steps = {MAX_STEPS}" in proc.stderr and "--max-steps N" in proc.stderr
    assert "cannot convert" not in proc.stderr and "Traceback" not in proc.stderr


def test_the_step_limit_can_be_raised():
    with pytest.raises(ScenarioError, match="needs 100 steps .* more than max_steps = 50"):
        simulate(OSCILLATOR, local=True, stop=0.01, max_steps=50)
    assert simulate(OSCILLATOR, local=True, stop=0.01, max_steps=100).counters["steps"] == 100


@pytest.mark.parametrize("local", [True, False])
def test_rigid_body_substeps_are_bounded(fmus, local):
    result = simulate("scenarios/ball_drop", local=local, stop=0.01,
                      parameters={"ball": {"maxSubstepSize": 1e-300}})
    assert result.status == "error" and result.end_time == 0.0
    assert "maxSubstepSize = 1e-300 needs 1e+296 rotation substeps" in result.message
    assert "more than 100000: raise maxSubstepSize" in result.message


# --- clear errors (item 10) --------------------------------------------------------------------

def spring_chain(n: int) -> Scenario:
    """Fixed - spring - mass - spring - ... - mass, its connections listed in reverse order."""
    components = {"ground": ComponentSpec("ground", Path("Fixed.fmu"))}
    connections = []
    left = ("ground", "flange")
    for i in range(n):
        spring, mass = f"spring{i}", f"mass{i}"
        components[spring] = ComponentSpec(spring, Path("CoordinateSpringDamper.fmu"), parameters={"stiffness": 1.0, "offset": 1.0})
        components[mass] = ComponentSpec(mass, Path("Mass.fmu"), parameters={"s_start": float(i + 1)})
        for var in ("s", "v"):
            connections.append(Connection(left[0], f"{left[1]}.{var}", spring, f"flange_a.{var}"))
            connections.append(Connection(mass, f"flange_a.{var}", spring, f"flange_b.{var}"))
        connections.append(Connection(spring, "flange_b.f", mass, "flange_a.f"))
        if left[0] != "ground":
            connections.append(Connection(spring, "flange_a.f", left[0], "flange_b.f"))
        left = (mass, "flange_b")
    return Scenario("chain", ROOT, components, connections[::-1], stop_time=2e-3, step_size=1e-3)


@pytest.mark.slow
def test_a_long_chain_listed_in_reverse_runs():
    result = simulate(spring_chain(1500), local=True, algorithm="gauss-seidel", record=False)
    assert result.ok, result.message
    # static: every spring at its unstretched length 1 m, no force, nothing moves
    assert result.final["mass1499.s"] == 1500.0 and result.final["spring700.f"] == 0.0


def test_duplicate_result_columns_are_refused_before_the_first_step(tmp_path):
    scenario = spring_chain(1)
    scenario.components["ground.flange"] = ComponentSpec("ground.flange", Path("Mass.fmu"))  # outputs s, v, ...
    result = simulate(scenario, local=True)
    assert result.status == "error" and not math.isfinite(result.end_time)
    assert "['ground.flange.s', 'ground.flange.v'] would be written twice" in result.message


def test_names_with_quotes_and_commas_give_a_valid_csv_header(tmp_path):
    scenario = spring_chain(1)
    scenario.components['m "A", 2'] = scenario.components.pop("mass0")
    scenario.components['m "A", 2'].name = 'm "A", 2'
    scenario.connections = [Connection(*('m "A", 2' if x == "mass0" else x for x in (c.source, c.source_variable,
                                                                                        c.target, c.target_variable)))
                            for c in scenario.connections]
    result = simulate(scenario, local=True, observers=[CsvWriter(tmp_path / "x.csv")])
    assert result.ok, result.message
    with open(tmp_path / "x.csv", newline="") as file:
        header = next(csv.reader(file))
    assert header == list(result.data.dtype.names) and 'm "A", 2.flange_a.s' in header


@pytest.mark.slow
def test_out_errors_name_the_file(tmp_path):
    (tmp_path / "adir").mkdir()
    proc = cli("run", "scenarios/oscillator", "--local", "--stop", "0.01", "--out", tmp_path / "adir")
    assert proc.returncode == 2 and f"--out {tmp_path / 'adir'}: not a writable file path" in proc.stderr


# --- results: streaming, temporary file, partial file, locking (items 4, 5) --------------------

def test_streaming_keeps_no_rows_and_a_complete_run_renames_its_file(tmp_path):
    writer = CsvWriter(tmp_path / "x.csv")
    result = simulate(OSCILLATOR, local=True, stop=0.05, observers=[writer], record=False)
    assert result.ok and result.data is None and result.final["time"] == 0.05
    back = read_csv(tmp_path / "x.csv")
    assert len(back) == 501 and back["time"][-1] == 0.05 and back["mass.s"][-1] == result.final["mass.s"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.csv"]  # no temporary file, no lock left


@pytest.mark.slow
def test_a_failed_run_leaves_a_partial_file_and_an_earlier_result_as_it_was(tmp_path):
    """The rows up to the failure go to x.partial.csv; an earlier run's x.csv is never lost (it was removed, so
    that it could not pass for this run's: the run's exit code and message say which file is which)."""
    (tmp_path / "x.csv").write_text("an earlier run's result\n")
    result = simulate(OSCILLATOR, local=True, stop=0.5, observers=[CsvWriter(tmp_path / "x.csv")],
                      parameters={"spring": {"springForceUserFunction": "k*u + 1/(t - 0.25)"}})
    assert result.status == "error"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.csv", "x.partial.csv"]
    assert (tmp_path / "x.csv").read_text() == "an earlier run's result\n"
    proc = cli("run", "scenarios/oscillator", "--local", "--stop", "0.5", "--out", tmp_path / "x.csv", "--param",
               "spring.springForceUserFunction=k*u + 1/(t - 0.25)")
    assert proc.returncode == 1
    assert proc.stdout.rstrip().endswith(f"results up to the failure written to {tmp_path / 'x.partial.csv'} "
                                         f"({tmp_path / 'x.csv'} is an earlier run's, left as it was)"), proc.stdout
    back = read_csv(tmp_path / "x.partial.csv")
    assert back["time"][-1] == result.end_time and np.array_equal(back["mass.s"], result.data["mass.s"])


@pytest.mark.slow
def test_a_second_writer_of_the_same_file_is_refused(tmp_path):
    holder = CsvWriter(tmp_path / "x.csv")
    try:
        proc = cli("run", "scenarios/oscillator", "--local", "--stop", "0.01", "--out", tmp_path / "x.csv")
        assert proc.returncode == 2
        assert f"{tmp_path / 'x.csv'}: another run is writing this file now" in proc.stderr
    finally:
        holder.close()
    proc = cli("run", "scenarios/oscillator", "--local", "--stop", "0.01", "--out", tmp_path / "x.csv")
    assert proc.returncode == 0, proc.stderr


def test_a_full_disk_keeps_whole_rows_and_says_so(tmp_path):
    """A file-size limit (as a full disk): the run stops with the file named; every row kept is whole."""
    script = ("import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (150_000, 150_000)); "
              "from mechfmu.cli import main; sys.exit(main(sys.argv[1:]))")
    proc = subprocess.run([sys.executable, "-c", script, "run", "scenarios/oscillator", "--local", "--out",
                           tmp_path / "x.csv"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"writing {tmp_path / 'x.csv'} failed (File too large)" in proc.stdout
    assert f"results up to the failure written to {tmp_path / 'x.partial.csv'}" in proc.stdout
    text = (tmp_path / "x.partial.csv").read_text()
    assert text.endswith("\n") and 0 < len(text) <= 150_000
    back = read_csv(tmp_path / "x.partial.csv")
    assert len(back) > 100 and np.isfinite(back["mass.s"]).all()
    assert not (tmp_path / "x.csv").exists()


# --- temporary folders (item 12) ----------------------------------------------------------------

@pytest.mark.parametrize("scenario, extra, code", [("oscillator", [], 0),
                                                   ("prescribed_motion", ["--algorithm", "jacobi"], 1)])
@pytest.mark.slow
def test_a_run_leaves_nothing_in_the_temporary_directory(fmus, tmp_path, scenario, extra, code):
    """Unpacked FMUs are removed when the process ends, also after a failed run."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    proc = cli("run", f"scenarios/{scenario}", "--stop", "0.01", *extra, env={**os.environ, "TMPDIR": str(temp)})
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert list(temp.iterdir()) == []


@pytest.mark.parametrize("model, name, value, output", [
    ("Sine", "startTime", -1e308, "y"),  # sin of an infinite phase: a bare "math domain error"
    ("Sine", "amplitude", -1e308, "y_rate_rate"),  # amplitude·(2πf)² overflows: nan
    ("CoordinateSpringDamperExt", "factor0", 1e200, "flange_a.d"),
    ("RigidBody", "centerOfMass.y", -1e308, "potentialEnergy"),
])
def test_a_parameter_too_large_for_the_law_is_named(fmus, model, name, value, output):
    """In-process, a law whose arithmetic fails names the parameter; through the FMU, a non-finite output is
    refused (fmi2Error) naming the parameter (it named the output and blamed the inputs)."""
    component = COMPONENTS[model](model)
    component.set(name, value)
    component.initialize()
    try:
        computed = component.get(output)
    except ValueError as exc:
        assert f"{name} = {value!r} is beyond what the law can compute with" in str(exc)
    else:
        assert not math.isfinite(computed)
    slave = FmuSlave("x", fmus[model], model_exchange=True)
    slave.set_parameters({name: value})
    slave.enter_initialization(0.0, None)
    slave.exit_initialization()
    with pytest.raises(SlaveError, match=re.escape(f"{name} = {value!r} is beyond what the law can compute with")):
        slave.get([output])
