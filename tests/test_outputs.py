"""Results as fmpy users expect: chosen outputs (names or patterns), an output interval, plots of every
scenario with units, output paths checked before the run, honest messages when a run fails early."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mechfmu.master.observers import plot_result
from mechfmu.master.simulate import simulate
from mechfmu.ssp.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted(p.parent.name for p in (ROOT / "scenarios").glob("*/SystemStructure.ssd"))


def test_chosen_outputs_at_an_interval_equal_the_full_run():
    full = simulate("scenarios/oscillator", stop=0.1, local=True)
    chosen = simulate("scenarios/oscillator", stop=0.1, local=True, output_variables=["mass.*", "spring.f"],
                      output_interval=0.005)
    assert chosen.ok
    assert chosen.data.dtype.names == ("time", "spring.f", *[n for n in full.data.dtype.names if n.startswith("mass.")])
    rows = full.data[::50]  # h = 1e-4 s: every 50th row, the last one included (1000 steps)
    assert len(chosen.data) == len(rows) == 21
    assert all(np.array_equal(chosen.data[n], rows[n]) for n in chosen.data.dtype.names)
    assert chosen.units["mass.s"] == "m" and chosen.units["spring.f"] == "N"


def test_bad_output_choices_are_refused():
    with pytest.raises(ValueError, match=r"output variables \['mass.x'\] match no output"):
        simulate("scenarios/oscillator", stop=0.01, local=True, output_variables=["mass.x"])
    with pytest.raises(ValueError, match="output interval 0.00015 s must be a positive multiple of the step 0.0001 s"):
        simulate("scenarios/oscillator", stop=0.01, local=True, output_interval=1.5e-4)


@pytest.mark.parametrize("name", SCENARIOS)
def test_plot_of_every_scenario_draws_labelled_curves(name, tmp_path):
    scenario = load_scenario(ROOT / "scenarios" / name, local=True)
    result = simulate(scenario, stop=scenario.start_time + 50 * scenario.step_size, local=True)
    assert result.ok, result.message
    plotted = plot_result(result, tmp_path / "plot.png", name)
    assert plotted and all(result.units[n] in ("m", "rad") for n in plotted), plotted
    assert (tmp_path / "plot.png").stat().st_size > 10_000


def run_cli(*argv, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "mechfmu.cli", *argv], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


@pytest.mark.slow
def test_output_paths_are_checked_before_the_run(fmus, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    proc = run_cli("run", "scenarios/oscillator", "--out", str(blocker / "x.csv"))
    assert proc.returncode == 2 and "--out" in proc.stderr and "cannot create its folder" in proc.stderr
    assert "oscillator" not in proc.stdout  # nothing ran
    proc = run_cli("run", "scenarios/oscillator", "--stop", "0.01", "--plot", str(tmp_path / "new" / "p.png"))
    assert proc.returncode == 0 and (tmp_path / "new" / "p.png").is_file(), proc.stdout + proc.stderr
    assert "final values at t = 0.01 s: mass.s = " in proc.stdout and " m, " in proc.stdout


def test_a_run_failing_at_initialization_says_so(fmus, tmp_path):
    proc = run_cli("run", "scenarios/prescribed_motion", "--algorithm", "jacobi", "--out", str(tmp_path / "x.csv"))
    assert proc.returncode == 1
    assert "stopped before the first step" in proc.stdout and "reached t = nan" not in proc.stdout
    assert "results written" not in proc.stdout and not (tmp_path / "x.csv").exists()
