"""Issue 14's acceptance on the contact scenarios: events located and the macro step adapted, against
independent references (validation/event_references.py: OpenSim integrating the same ball model to
accuracy 1e-10, its contact onset by a Hermite root to ~1e-13 s)."""
import numpy as np

from mechfmu.simulate import simulate
from validation import event_references as refs


def test_ball_drop_with_events_and_adaptive_step_follows_opensim_with_fewer_calls():
    """Fixed-point coupling (trapezoidal, second order; iteration tolerance 1e-8), events on, adaptive
    step at the default tolerances (rtol 1e-4, atol 1e-6) within a 1e-2 s grid. Measured: first impact
    +6.2e-7 s from OpenSim's onset, ball centre within 3.7e-6 m of OpenSim over 1 s, 70,272 counted
    calls against 80,031 for Jacobi at h = 1e-4 s (counted alike, in-process; Jacobi there is 7.6e-4 m
    off). Bounds: the issue's, 1e-6 s and 1e-5 m."""
    r = simulate("scenarios/ball_drop", algorithm="fixed-point", local=True, step=1e-2, stop=1.0, events="on",
                 adaptive="on", tolerance=1e-8)
    assert r.ok, r.message
    onset = refs.ball_drop_contact_onset()
    impact = next(t for t, what in r.events if "indicator.distance" in what)
    reference = refs.ball_drop_positions(r.data["time"])
    ours = np.array([r.data[f"ball.position.{a}"] for a in "xyz"]).T
    error = float(np.max(np.linalg.norm(ours - reference, axis=1)))
    jacobi = simulate("scenarios/ball_drop", algorithm="jacobi", local=True, step=1e-4, stop=1.0, record=False)
    print(f"\nimpact {impact - onset:+.2e} s, position {error:.2e} m, calls {r.counters['fmu_calls']} "
          f"(jacobi h=1e-4: {jacobi.counters['fmu_calls']})")
    assert abs(impact - onset) <= 1e-6
    assert error <= 1e-5
    assert r.counters["fmu_calls"] < jacobi.counters["fmu_calls"]
