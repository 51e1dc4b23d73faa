"""The automatic master ``auto`` (mechfmu/master/algorithms/auto.py): the default where neither the caller nor the
scenario names an algorithm; it chooses from what the components are and says what and why."""
import re
from pathlib import Path

import numpy as np
import pytest
from test_events import piecewise_linear_motion, stick_slip_reference

from mechfmu.cli import main
from mechfmu.master.simulate import simulate
from mechfmu.ssp import write_scenario
from mechfmu.ssp.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent
#: a mass thrown at 1 m/s between two stiff limit stops to ground, as a new user writes it (no master named)
THROWN = dict(m=1.0, k=0.0, d=0.0, k_stop=1e4, d_stop=2.0, lower=-0.1, upper=0.1, x0=0.0, v0=1.0)


def thrown(folder: Path) -> Path:
    return write_scenario(folder, "thrown", [
        ("ground", "Fixed", {}), ("mass", "Mass", {"m": 1.0, "v_start": 1.0}),
        ("stops", "CoordinateSpringDamperExt", {"useLimitStops": True, "limitStopsUpper": 0.1, "limitStopsLower": -0.1,
                                                "limitStopsStiffness": 1e4, "limitStopsDamping": 2.0})],
        ["ground.flange <-> stops.flange_a", "stops.flange_b <-> mass.flange_a"], stop_time=2.0, step_size=1e-4).parent


def stick_slip(folder: Path) -> Path:
    """A mass on a spring whose far end moves at 0.1 m/s, bristle friction to ground (static 10 N, dynamic 5 N), as a
    new user writes it: test_events.stick_slip_reference's system."""
    return write_scenario(folder, "stick_slip_of_a_user", [
        ("drive", "ConstantSpeed", {"v_fixed": 0.1}), ("spring", "CoordinateSpringDamper", {"stiffness": 100.0,
                                                                                            "damping": 0.5}),
        ("mass", "Mass", {"m": 1.0}), ("ground", "Fixed", {}),
        ("friction", "CoordinateSpringDamperExt", {"fDynamicFriction": 5.0, "fStaticFrictionOffset": 5.0,
                                                   "exponentialDecayStatic": 0.05, "stickingStiffness": 1e4,
                                                   "stickingDamping": 200.0})],
        ["drive.flange <-> spring.flange_a", "spring.flange_b <-> mass.flange_a", "ground.flange <-> friction.flange_a",
         "friction.flange_b <-> mass.flange_b"], stop_time=5.0, step_size=1e-4).parent


def without_master(tmp_path: Path, scenario: str) -> Path:
    """A shipped scenario with its mechfmu:Master removed (sources made absolute)."""
    text = (ROOT / "scenarios" / scenario / "SystemStructure.ssd").read_text()
    text = re.sub(r"<mechfmu:Master[^>]*/>", "", text).replace("../../fmus/", (ROOT / "fmus").as_posix() + "/")
    folder = tmp_path / scenario
    folder.mkdir()
    (folder / "SystemStructure.ssd").write_text(text)
    return folder


@pytest.mark.slow
def test_a_new_users_limit_stops_run_with_no_options_is_accurate(fmus, tmp_path, capsys):
    """write_scenario names no master, so the scenario's is auto: every component has a Model Exchange form, so the
    monolithic master with every contact located, within 1e-6 m of the exact piecewise solution over 2 s; with a
    co-simulation option (events=on) linear-implicit with events, within 1e-6 m too (measured 4.3e-10 m), where
    Jacobi at the same step is 4.5e-2 m off. The command line says what auto chose and why."""
    folder = thrown(tmp_path / "thrown")
    assert load_scenario(folder).algorithm == "auto"
    assert main(["run", str(folder), "--local"]) == 0
    printed = capsys.readouterr().out
    assert "auto chose monolithic ode_rtol=1e-07 ode_atol=1e-09: every component has a Model Exchange form" in printed
    assert "stops switch (event indicators): each switch located" in printed
    result = simulate(folder, local=True)
    exact, _ = piecewise_linear_motion(result.data["time"], **THROWN)
    assert result.algorithm == "monolithic" and np.max(np.abs(result.data["mass.s"] - exact)) < 1e-6
    co_simulation = simulate(folder, local=True, events="on")
    assert co_simulation.choice.startswith("auto chose linear-implicit events=on: no constraint")
    assert np.max(np.abs(co_simulation.data["mass.s"] - exact)) < 1e-6
    jacobi = simulate(folder, "jacobi", local=True)
    assert jacobi.choice == "" and np.max(np.abs(jacobi.data["mass.s"] - exact)) > 1e-2


@pytest.mark.parametrize("scenario, given, algorithm, options", [
    ("geared_masses", {}, "monolithic", {"ode_rtol": "1e-07", "ode_atol": "1e-09"}),
    ("prescribed_motion", {}, "monolithic", {"ode_rtol": "1e-07", "ode_atol": "1e-09"}),
    ("geared_masses", {"substeps": 2}, "newton", {"coupling": "implicit", "substeps": "2"}),
    ("elastogap", {}, "monolithic", {"ode_rtol": "1e-07", "ode_atol": "1e-09"}),
    ("elastogap", {"energy_audit": "on"}, "linear-implicit", {"events": "on", "energy_audit": "on"}),
    ("oscillator", {}, "monolithic", {"ode_rtol": "1e-07", "ode_atol": "1e-09"}),
    ("oscillator", {"rtol": 1e-4}, "monolithic", {"ode_rtol": "1e-05", "ode_atol": "1e-09", "rtol": "0.0001"}),
    ("oscillator", {"substeps": 2}, "linear-implicit", {"substeps": "2"}),
])
def test_the_choice_follows_what_the_components_are(fmus, tmp_path, scenario, given, algorithm, options):
    """Where every component has a Model Exchange form or is a constraint the monolithic master, its tolerance the
    run's rtol/10 and atol, unless the caller gives an option of co-simulation; then a constraint needs newton, the
    co-simulation master that solves it; else linear-implicit, with events where a component switches."""
    result = simulate(without_master(tmp_path, scenario), local=True, stop=0.01, **given)
    assert result.ok, result.message
    assert result.algorithm == algorithm
    assert result.choice.startswith(f"auto chose {algorithm}{''.join(f' {k}={v}' for k, v in options.items())}:")


def test_the_callers_options_go_to_the_chosen_algorithm_and_win(fmus, tmp_path):
    folder = without_master(tmp_path, "elastogap")
    result = simulate(folder, local=True, stop=0.01, events="off")
    assert result.choice.startswith("auto chose linear-implicit events=off:")
    assert result.events == []
    refused = simulate(folder, local=True, stop=0.01, coupling="implicit")
    assert refused.status == "error"
    assert "algorithm 'auto' chose linear-implicit" in refused.message and "coupling" in refused.message


def test_a_named_algorithm_is_not_auto(fmus, tmp_path):
    """A scenario or caller that names an algorithm gets it: no choice, the same numbers as auto's choice with its
    options."""
    folder = thrown(tmp_path / "thrown")
    named = simulate(folder, "monolithic", local=True, stop=0.2, ode_rtol=1e-7, ode_atol=1e-9)
    chosen = simulate(folder, local=True, stop=0.2)
    assert named.choice == "" and chosen.choice
    assert all(np.array_equal(named.data[n], chosen.data[n]) for n in named.data.dtype.names)


@pytest.mark.slow
def test_a_new_users_stick_slip_run_with_no_options_switches_at_the_exact_instants(fmus, tmp_path):
    """Written with write_scenario, run with no options: auto (the monolithic master) locates every breakaway and
    sticking, all 6 within 1e-6 s of scipy's piecewise solution (measured 5.6e-11 s; linear-implicit with events,
    auto's choice before it integrated Model Exchange forms, 2.8e-7 s)."""
    result = simulate(stick_slip(tmp_path / "user"), local=True)
    assert result.ok, result.message
    assert result.choice.startswith("auto chose monolithic")
    located, reference = [t for t, _ in result.events], stick_slip_reference(result.end_time)
    assert len(located) == len(reference) == 6
    print(f"\nlargest difference {max(abs(a - b) for a, b in zip(located, reference)):.2e} s")
    assert max(abs(a - b) for a, b in zip(located, reference)) < 1e-6
