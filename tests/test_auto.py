"""The automatic master ``auto`` (mechfmu/algorithms/auto.py): the default where neither the caller nor the
scenario names an algorithm; it chooses from what the components are and says what and why."""
import re
from pathlib import Path

import numpy as np
import pytest
from test_events import piecewise_linear_motion

from mechfmu.cli import main
from mechfmu.scenario import load_scenario
from mechfmu.simulate import simulate
from mechfmu.ssp import write_scenario

ROOT = Path(__file__).resolve().parent.parent
#: a mass thrown at 1 m/s between two stiff limit stops to ground, as a new user writes it (no master named)
THROWN = dict(m=1.0, k=0.0, d=0.0, k_stop=1e4, d_stop=2.0, lower=-0.1, upper=0.1, x0=0.0, v0=1.0)


def thrown(folder: Path) -> Path:
    return write_scenario(folder, "thrown", [
        ("ground", "Fixed", {}), ("mass", "Mass", {"m": 1.0, "v_start": 1.0}),
        ("stops", "CoordinateSpringDamperExt", {"useLimitStops": True, "limitStopsUpper": 0.1, "limitStopsLower": -0.1,
                                                "limitStopsStiffness": 1e4, "limitStopsDamping": 2.0})],
        ["ground.flange <-> stops.flange_a", "stops.flange_b <-> mass.flange_a"], stop_time=2.0, step_size=1e-4).parent


def without_master(tmp_path: Path, scenario: str) -> Path:
    """A shipped scenario with its mechfmu:Master removed (sources made absolute)."""
    text = (ROOT / "scenarios" / scenario / "SystemStructure.ssd").read_text()
    text = re.sub(r"<mechfmu:Master[^>]*/>", "", text).replace("../../fmus/", (ROOT / "fmus").as_posix() + "/")
    folder = tmp_path / scenario
    folder.mkdir()
    (folder / "SystemStructure.ssd").write_text(text)
    return folder


def test_a_new_users_limit_stops_run_with_no_options_is_accurate(fmus, tmp_path, capsys):
    """write_scenario names no master, so the scenario's is auto: linear-implicit with events, within 1e-6 m of the
    exact piecewise solution over 2 s (measured 4.3e-10 m), where Jacobi at the same step is 4.5e-2 m off. The
    command line says what auto chose and why."""
    folder = thrown(tmp_path / "thrown")
    assert load_scenario(folder).algorithm == "auto"
    assert main(["run", str(folder), "--local"]) == 0
    printed = capsys.readouterr().out
    assert "auto chose linear-implicit events=on: no constraint" in printed
    assert "stops switch (event indicators): each switch located in its step" in printed
    result = simulate(folder, local=True)
    exact, _ = piecewise_linear_motion(result.data["time"], **THROWN)
    assert result.algorithm == "linear-implicit" and np.max(np.abs(result.data["mass.s"] - exact)) < 1e-6
    jacobi = simulate(folder, "jacobi", local=True)
    assert jacobi.choice == "" and np.max(np.abs(jacobi.data["mass.s"] - exact)) > 1e-2


@pytest.mark.parametrize("scenario, algorithm, options", [
    ("geared_masses", "newton", {"coupling": "implicit"}),
    ("elastogap", "linear-implicit", {"events": "on"}),
    ("oscillator", "linear-implicit", {}),
])
def test_the_choice_follows_what_the_components_are(fmus, tmp_path, scenario, algorithm, options):
    """A constraint needs the master that solves it; otherwise linear-implicit, with events where a component
    switches."""
    result = simulate(without_master(tmp_path, scenario), local=True, stop=0.01)
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
    """A scenario or caller that names an algorithm gets it: no choice, the same numbers as before."""
    folder = thrown(tmp_path / "thrown")
    named = simulate(folder, "linear-implicit", local=True, stop=0.2, events="on")
    chosen = simulate(folder, local=True, stop=0.2)
    assert named.choice == "" and chosen.choice
    assert all(np.array_equal(named.data[n], chosen.data[n]) for n in named.data.dtype.names)
