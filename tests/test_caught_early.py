"""Mistakes caught where they are made: an option name the run would refuse is refused before anything starts,
with the closest name, and ``System.experiment`` refuses at the call what the run would refuse later."""
import subprocess
import sys
from pathlib import Path

import pytest

from mechfmu import Mass, System

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("algorithm", ["auto", "jacobi"])
@pytest.mark.slow
def test_a_misspelt_option_is_refused_before_start_up_with_the_closest_name(algorithm):
    proc = subprocess.run([sys.executable, "-m", "mechfmu.cli", "run", "scenarios/oscillator", "--algorithm",
                           algorithm, "--option", "event=on", "--stop", "0.01"], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""  # nothing started: no run line, no choice
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"mechfmu run: error: algorithm '{algorithm}': unknown option")
    assert "'event'" in line and "(did you mean 'events'?)" in line


def system() -> System:
    s = System("early")
    s.add("mass", Mass(m=1.0))
    return s


@pytest.mark.parametrize("arguments, said", [
    (dict(stop_time=2.0, step_size=0.3), "experiment: step 0.3 s does not divide the run from start 0 s to stop "
                                         "2 s"),
    (dict(stop_time=1.0, step_size=0.1, event="on"), "experiment: algorithm 'auto': unknown option 'event' (did you "
                                                     "mean 'events'?)"),
    (dict(stop_time=1.0, step_size=0.1, algorithm="jacobi", substeps="0"), "experiment: algorithm 'jacobi': "
                                                                           "substeps = '0' must be >= 1"),
])
def test_experiment_refuses_at_the_call_what_the_run_would_refuse(arguments, said):
    s = system()
    with pytest.raises(ValueError) as refused:
        s.experiment(**arguments)
    assert str(refused.value).startswith(said), refused.value
    assert "tmp" not in str(refused.value)  # no temporary folder named: the call is the place
    assert s.stop_time != arguments["stop_time"] or s.step_size != arguments["step_size"]  # nothing taken


def test_experiment_takes_what_the_run_takes():
    s = system()
    s.experiment(stop_time=1.0, step_size=0.1, algorithm="jacobi", substeps=2)
    assert (s.stop_time, s.step_size, s.options) == (1.0, 0.1, {"substeps": "2"})
    assert s.run(local=True).ok


@pytest.mark.parametrize("where", ["here", "deep/er/down", "elsewhere"])
def test_a_written_system_names_fmus_that_exist_where_it_is_written(tmp_path, monkeypatch, fmus, where):
    """``write(folder)`` anywhere names the FMU folder as seen from there: the scenario loads without the built
    FMUs standing in (no warning) and each source exists."""
    from mechfmu.ssp.scenario import load_scenario
    monkeypatch.chdir(tmp_path)
    s = system()
    s.experiment(stop_time=0.01, step_size=1e-3, algorithm="jacobi")
    folder = s.write(tmp_path / "elsewhere" if where == "elsewhere" else where).parent
    scenario = load_scenario(folder)
    assert scenario.warnings == [], scenario.warnings
    assert all(Path(spec.fmu).is_file() for spec in scenario.components.values())


@pytest.mark.slow
def test_turning_the_estimate_off_does_not_change_auto_s_run():
    """auto under co-simulation divides its step by its companions' estimate: without the estimate the same
    companions run, so the run (its choice, its substeps, every value) is the same."""
    from mechfmu import CoordinateSpringDamper, ElastoGap, Fixed, Force, Sine
    s = System("two_mass")
    sine, force = s.add("sine", Sine(amplitude=50.0, f=2.0)), s.add("force", Force())
    m1, m2 = s.add("m1", Mass(m=1.0)), s.add("m2", Mass(m=2.0, s_start=0.01))
    gap, ground = s.add("gap", ElastoGap(c=1e5, d=50.0)), s.add("ground", Fixed(s0=0.01))
    spring = s.add("spring", CoordinateSpringDamper(stiffness=100.0, damping=1.0))
    for a, b in ((sine.y, force.f), (force.flange, m1.flange_a), (m1.flange_b, gap.flange_a),
                 (gap.flange_b, m2.flange_a), (m2.flange_b, spring.flange_a), (spring.flange_b, ground.flange)):
        s.connect(a, b)
    s.experiment(stop_time=0.1, step_size=1e-3, exchange="strict")  # strict exchange: a co-simulation master
    with_estimate, without = s.run(local=True), s.run(local=True, estimate_error=False)
    assert "substeps=" in with_estimate.choice and with_estimate.choice == without.choice
    assert without.final == with_estimate.final
