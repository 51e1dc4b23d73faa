"""Scenario folders run unchanged in libcosim (libcosimpy 0.0.6, its own process) and equal our
fixed-step Jacobi with libcosim's exchange order (``exchange="strict"``)."""
from pathlib import Path

import numpy as np
import pytest
from conftest import slow_but

from mechfmu.master.simulate import simulate
from mechfmu.ssp.scenario import load_scenario

pytest.importorskip("libcosimpy")  # the test extra; libcosim runs in its own process (mechfmu.crosscheck.tools)
from mechfmu.crosscheck.tools import run_libcosim  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
#: scenario -> (steps, compared outputs); the step counts cover stick -> slip, two bounces, ...
#: Only state outputs are compared: libcosim reads a feed-through output (a connector force) before
#: the new inputs arrive, our recorder after.
CASES = {
    "two_mass_oscillator": (2000, ["mass1.s", "mass1.v", "mass2.s", "mass2.v"]),
    "friction_slide": (3000, ["mass.s", "mass.v"]),
    "stick_slip": (12000, ["mass.s", "mass.v", "friction.frictionMode", "friction.lastStickingPosition"]),
    "limit_stops": (3000, ["mass.s", "mass.v", "stops.limitStopState"]),
    "geared_rotors": (3000, ["rotor1.phi", "rotor1.w", "rotor2.phi", "rotor2.w"]),
    "elastogap": (1000, ["mass1.s", "mass1.v", "mass2.s", "mass2.v"]),
    "ball_drop": (3500, ["ball.position.x", "ball.position.y", "ball.angularVelocity.z", "ball.orientation.w"]),
    "ball_on_moving_plate": (2000, ["ball.position.x", "ball.position.y", "plate.position.x", "plate.velocity.y"]),
}


@pytest.mark.parametrize("name", slow_but(sorted(CASES), "elastogap"))
def test_scenario_in_libcosim_equals_strict_jacobi(fmus, name):
    n_steps, columns = CASES[name]
    ssd = ROOT / "scenarios" / name / "SystemStructure.ssd"
    libcosim = run_libcosim(ssd, n_steps, columns)
    scenario = load_scenario(ssd.parent)
    ours = simulate(scenario, algorithm="jacobi", exchange="strict", stop=n_steps * scenario.step_size, local=True)
    assert ours.ok, ours.message
    mine = np.array([ours.data[c][1:n_steps + 1] for c in columns]).T
    assert mine.shape == libcosim.shape == (n_steps, len(columns))
    scale = np.maximum(np.abs(mine).max(axis=0), 1e-300)
    difference = (np.abs(mine - libcosim) / scale).max()
    print(f"\n{name}: max |ours(strict) - libcosim| / max|value| over {n_steps} steps: {difference:.2e}")
    assert difference < 1e-12


@pytest.mark.slow
def test_given_libcosims_times_strict_jacobi_equals_libcosim_bit_for_bit(fmus, tmp_path):
    """The only arithmetic difference is the clock: libcosim's times are integer nanoseconds converted
    to seconds, ours t0 + n·h. Stepping our strict Jacobi on libcosim's clock gives libcosim's numbers
    exactly, here through limit_stops' stiff impacts (which amplify any ulp)."""
    from mechfmu.master.algorithms import make_algorithm
    from mechfmu.master.coupled_system import CoupledSystem
    from mechfmu.master.simulate import instantiate
    from mechfmu.ssp import export_ssp

    scenario = load_scenario(ROOT / "scenarios" / "limit_stops")
    slaves = instantiate(scenario, local=True)
    for name, slave in slaves.items():
        slave.set_parameters(scenario.components[name].parameters)
    algorithm, system = make_algorithm("jacobi", exchange="strict"), CoupledSystem(slaves, scenario.connections)
    for slave in slaves.values():
        slave.enter_initialization(0.0, scenario.stop_time)
    algorithm.initialize(system, 0.0)
    for slave in slaves.values():
        slave.exit_initialization()
    step_ns, n_steps = round(scenario.step_size * 1e9), 6000
    rows = []
    for n in range(n_steps):
        t, t_next = n * step_ns / 1e9, (n + 1) * step_ns / 1e9
        algorithm.step(system, t, t_next - t)
        rows.append(slaves["mass"].get(["s", "v"]))
    theirs = run_libcosim(export_ssp(ROOT / "scenarios" / "limit_stops", tmp_path / "ls.ssp"), n_steps,
                          ["mass.s", "mass.v"])
    assert np.array_equal(np.array(rows), theirs)
