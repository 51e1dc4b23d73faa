"""RigidBody + SmoothSphereHalfSpaceForce scenarios against OpenSim 4.6 integrating the same model
(Simbody's contact force, variable-step integrator at accuracy 1e-9), energy and rolling."""
from __future__ import annotations

import numpy as np
import pytest

from mechfmu.master.simulate import simulate
from mechfmu.ssp.scenario import load_scenario
from mechfmu.validation.opensim_model import opensim_solution

pytest.importorskip("opensim")
TIMES = np.linspace(0.0, 1.0, 1001)


def positions(result, body):
    return np.array([np.interp(TIMES, result.data["time"], result.data[f"{body}.position.{a}"]) for a in "xyz"]).T


def max_distance(result, reference, body) -> float:
    return float(np.max(np.linalg.norm(positions(result, body) - reference.bodies[body]["position"], axis=1)))


@pytest.fixture(scope="module")
def ball_drop_reference():
    reference = opensim_solution("scenarios/ball_drop", TIMES, accuracy=1e-9)
    tighter = opensim_solution("scenarios/ball_drop", TIMES, accuracy=1e-10)
    own = np.max(np.linalg.norm(reference.bodies["ball"]["position"] - tighter.bodies["ball"]["position"], axis=1))
    assert own < 1e-8  # the reference is converged far below the tolerances used here
    return reference


@pytest.mark.slow
@pytest.mark.parametrize("algorithm, step, order", [("jacobi", 1e-4, 1), ("fixed-point", 5e-4, 2)])
def test_ball_drop_matches_opensim(ball_drop_reference, algorithm, step, order):
    """Ball centre within 1e-4 m of OpenSim over 1 s (impact, bounces, rolling); halving the macro
    step divides the error by 2^order (Jacobi: first order; trapezoidal fixed-point: second)."""
    errors = []
    for h in (step, step / 2):
        result = simulate("scenarios/ball_drop", algorithm=algorithm, step=h, local=True)
        assert result.ok, result.message
        errors.append(max_distance(result, ball_drop_reference, "ball"))
        print(f"\n{algorithm} h={h:g}: max |ball centre - OpenSim| {errors[-1]:.2e} m, counters {result.counters}, "
              f"wall {result.wall_time:.1f} s")
    assert errors[0] <= 1e-4
    assert 0.75 * 2 ** order <= errors[0] / errors[1] <= 1.5 * 2 ** order


@pytest.mark.slow
def test_ball_on_moving_plate_matches_opensim_and_keeps_momentum():
    """The half-space rides on a free plate (gravity 0: carried): both bodies follow OpenSim, and the
    total linear momentum changes only by gravity on the ball (the contact pair is internal), to
    round-off under Jacobi."""
    reference = opensim_solution("scenarios/ball_on_moving_plate", TIMES, accuracy=1e-9)
    result = simulate("scenarios/ball_on_moving_plate", algorithm="jacobi", step=1e-4, local=True)
    assert result.ok, result.message
    for body in ("ball", "plate"):
        error = max_distance(result, reference, body)
        print(f"\n{body}: max |position - OpenSim| {error:.2e} m")
        assert error <= 1e-4
    d = result.data
    scenario = load_scenario("scenarios/ball_on_moving_plate")
    m_ball, m_plate = (scenario.components[b].parameters["mass"] for b in ("ball", "plate"))
    g = scenario.components["ball"].parameters["gravity.y"]
    # the bodies' origins are their centres of mass, so origin velocities are centre-of-mass velocities
    momentum = np.array([m_ball * d[f"ball.velocity.{a}"] + m_plate * d[f"plate.velocity.{a}"] for a in "xyz"]).T
    expected = momentum[0] + np.outer(d["time"], [0.0, m_ball * g, 0.0])
    drift = np.max(np.abs(momentum - expected))
    print(f"momentum drift {drift:.1e} N.s; the ball rolled {d['ball.position.x'][-1] - d['plate.position.x'][-1]:.3f} m "
          f"relative to the plate")
    assert drift < 1e-10


@pytest.mark.slow
def test_energy_is_conserved_across_a_bounce_without_dissipation_and_friction():
    """Dissipation 0 (the C++ would divide by zero), no friction: kinetic + gravity + contact PE is
    the same before and after the bounce to the iteration tolerance with the trapezoidal fixed-point
    coupling (Jacobi gains energy at every impact: printed). During contact Simbody's PE is an
    approximation (2/5·f·δ, not the force's integral), so the total swings by 0.2 J there in OpenSim
    too; ours follows OpenSim's curve within the contact force times our position error
    (~300 N · 5e-5 m)."""
    scenario = load_scenario("scenarios/ball_drop")
    scenario.components["contact"].parameters.update(dissipation=0.0, staticFriction=0.0, dynamicFriction=0.0)
    reference = opensim_solution(scenario, TIMES[:601], accuracy=1e-9)
    gains = {}
    for algorithm, step in (("fixed-point", 5e-4), ("jacobi", 1e-4)):
        result = simulate(scenario, algorithm=algorithm, step=step, stop=0.6, local=True)
        assert result.ok, result.message
        d = result.data
        energy = d["ball.kineticEnergy"] + d["ball.potentialEnergy"] + d["contact.potentialEnergy"]
        t, free = d["time"], d["contact.indentation"] < -0.01
        touching = np.where(~free)[0]
        before, after = energy[(t < t[touching[0]]) & free], energy[(t > t[touching[-1]]) & free]
        gains[algorithm] = after[-1] - before[0]
        if algorithm == "fixed-point":
            in_contact = np.interp(TIMES[:601], t, energy) - reference.energy
            print(f"\nOpenSim's own total energy varies by {np.ptp(reference.energy):.3f} J during contact (PE "
                  f"approximation); ours follows it to {np.max(np.abs(in_contact)):.1e} J")
            # contact force (~200 N) times our 5e-5 m position error is 1e-2 J: measured 4.3e-3 J
            assert np.max(np.abs(in_contact)) < 0.01
    print(f"energy gained across the bounce: {gains}")
    assert abs(gains["fixed-point"]) < 1e-7  # the trapezoidal rule conserves it to the iteration tolerance (4e-9 J)
    assert abs(gains["jacobi"]) > 1e3 * abs(gains["fixed-point"])


@pytest.mark.slow
def test_friction_brings_the_ball_to_rolling():
    """After the bounces the contact point no longer slips: v_x = −ω_z·(R − δ/2) (the lever to the
    contact point, the ball rests 1.1 mm above the surface), i.e. v ≈ −ω·R."""
    result = simulate("scenarios/ball_drop", algorithm="fixed-point", step=5e-4, local=True)
    d = result.data
    v, w, depth = d["ball.velocity.x"][-1], d["ball.angularVelocity.z"][-1], d["contact.indentation"][-1]
    radius = load_scenario("scenarios/ball_drop").components["contact"].parameters["radius"]
    slip = v + w * (radius - depth / 2)
    print(f"\nat t = 1 s: v = {v:.5f} m/s, -omega*R = {-w * radius:.5f} m/s, contact-point slip {slip:.1e} m/s")
    assert abs(slip) < 1e-3
    assert abs(v + w * radius) <= abs(w) * abs(depth) / 2 + 1e-3


def test_fixed_point_through_fmus_equals_in_process(fmus):
    """The iterative coupling saves, restores and frees FMU states every step; through the FMUs it
    gives the in-process result bit for bit (across the first impact)."""
    runs = [simulate("scenarios/ball_drop", algorithm="fixed-point", step=1e-3, stop=0.35, local=local)
            for local in (False, True)]
    assert all(r.ok for r in runs), [r.message for r in runs]
    assert runs[0].counters["rollbacks"] == runs[1].counters["rollbacks"] > 0
    assert all((runs[0].data[n] == runs[1].data[n]).all() for n in runs[0].data.dtype.names)
