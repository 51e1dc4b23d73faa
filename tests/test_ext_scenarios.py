"""The CoordinateSpringDamperExt scenarios against exudyn solving the same SSD monolithically.

For each scenario our master (default fixed-step Jacobi, in-process slaves, which equal the FMUs bit
for bit: test_fmus) runs at h and h/2, exudyn (GeneralizedAlpha, full Newton) at H and H/2. The
tolerance comes from the step halving itself:
- the difference to exudyn must shrink like a first-order method's (explicit zero-order-hold
  coupling and end-of-step switching are first order): e(h/2) <= 0.65·e(h);
- at h/2 it must be explained by the two solutions' own step-size errors, estimated by halving
  (Richardson, first order: the error at h/2 is about |x_h − x_h/2|): e(h/2) <= 2·(ours + exudyn's).
The step-halving study with more steps is ``benchmarks/ext_scenarios_vs_exudyn.py``.
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import slow_but

from mechfmu.master.simulate import simulate

pytest.importorskip("exudyn")  # the reference solutions need the test extra
from mechfmu.validation.exudyn_model import exudyn_solution  # noqa: E402

#: scenario -> (our macro step h, exudyn step H, stop time)
CASES = {
    "friction_slide": (1e-4, 5e-5, 1.0),
    "stick_slip": (1e-4, 5e-5, 5.0),
    "limit_stops": (2e-5, 1e-5, 1.0),
    "geared_rotors": (1e-4, 5e-5, 3.0),
}


def positions(result, body: str) -> np.ndarray:
    names = result.data.dtype.names
    return result.data[f"{body}.s"] if f"{body}.s" in names else result.data[f"{body}.phi"]


def max_difference(time, values, other_time, other_values) -> float:
    return float(np.max(np.abs(values - np.interp(time, other_time, other_values))))


@pytest.mark.parametrize("name", slow_but(sorted(CASES), "friction_slide"))
def test_scenario_matches_exudyn(name):
    h, big_h, stop = CASES[name]
    ours = [simulate(f"scenarios/{name}", algorithm="jacobi", step=step, stop=stop, local=True) for step in (h, h / 2)]
    assert all(r.ok for r in ours), [r.message for r in ours]
    refs = [exudyn_solution(f"scenarios/{name}", step, stop=stop) for step in (big_h, big_h / 2)]
    t_ref = refs[1].time
    for body, (ref_pos, _) in refs[1].bodies.items():
        coarse, fine = (positions(r, body) for r in ours)
        t_coarse, t_fine = ours[0].data["time"], ours[1].data["time"]
        e_coarse = max_difference(t_ref, ref_pos, t_coarse, coarse)
        e_fine = max_difference(t_ref, ref_pos, t_fine, fine)
        own = max_difference(t_coarse, coarse, t_fine, fine)
        exudyn_own = max_difference(refs[0].time, refs[0].bodies[body][0], t_ref, ref_pos)
        print(f"\n{name}.{body}: |ours - exudyn| {e_coarse:.2e} (h={h:g}), {e_fine:.2e} (h={h / 2:g}), ratio "
              f"{e_coarse / e_fine:.2f}; halving estimates: ours {own:.2e}, exudyn {exudyn_own:.2e}; "
              f"range {np.ptp(ref_pos):.3g}")
        assert e_fine <= 0.65 * e_coarse
        assert e_fine <= 2.0 * (own + exudyn_own)


def test_rollback_reproduces_switching_state_exactly(fmus):
    """Through the FMU: at every step of a stick-slip run with limit stops, save the state, step, restore,
    step with other inputs, restore, step again with the original inputs: friction mode, sticking
    position, stop state, switching error and force equal the first attempt bit for bit."""
    from mechfmu.master.fmu_slave import FmuSlave

    run = simulate("scenarios/stick_slip", step=1e-3, stop=2.5, local=True)
    assert run.ok
    slave = FmuSlave("friction", fmus["CoordinateSpringDamperExt"])
    slave.set_parameters({"fDynamicFriction": 5.0, "fStaticFrictionOffset": 5.0, "exponentialDecayStatic": 0.05,
                          "stickingStiffness": 1e4, "stickingDamping": 200.0, "useLimitStops": True,
                          "limitStopsUpper": 0.15, "limitStopsLower": -1.0, "limitStopsStiffness": 1e4})
    slave.enter_initialization(0.0, None)
    slave.exit_initialization()
    watched = ["frictionMode", "lastStickingPosition", "limitStopState", "switchingError", "f"]
    inputs = ["flange_b.s", "flange_b.v"]
    seen_modes, seen_stops = set(), set()
    positions, velocities = run.data["mass.s"], run.data["mass.v"]
    sequence = list(zip(positions, velocities)) + list(zip(-positions, -velocities))  # then slipping in −s
    for n, (s, v) in enumerate(sequence):
        t = n * 1e-3
        slave.set(inputs, [s, v])
        state = slave.get_state()
        assert slave.do_step(t, 1e-3)
        first = slave.get(watched)
        slave.set_state(state)
        slave.set(inputs, [s + 0.05, -v])
        assert slave.do_step(t, 1e-3)
        slave.set_state(state)
        slave.set(inputs, [s, v])
        assert slave.do_step(t, 1e-3)
        assert slave.get(watched) == first, f"step {n}"
        seen_modes.add(np.sign(first[0]))
        seen_stops.add(np.sign(first[2]))
    slave.terminate()
    assert seen_modes == {-1.0, 0.0, 1.0} and seen_stops == {0.0, 1.0}, (seen_modes, seen_stops)
