"""Events and adaptive steps on the contact scenarios: events located and the macro step adapted, against
independent references (mechfmu/validation/event_references.py: OpenSim integrating the same ball model to
accuracy 1e-10, its contact onset by a Hermite root to ~1e-13 s)."""
import numpy as np
import pytest

from mechfmu.master.simulate import simulate
from mechfmu.validation import event_references as refs
from mechfmu.validation.msl import read_msl_reference

ELASTOGAP_COLUMNS = ["elastoGap1.v_rel", "elastoGap2.s_rel", "springDamper1.v_rel", "springDamper2.s_rel"]


def test_elastogap_with_events_is_exact_between_its_switches():
    """The MSL ElastoGap example, linear-implicit coupling with events at h = 1e-2 s. With the contact
    (indicator.gap) and the damper clamp (indicator.damperLimit) located, the law is linear between
    events and linear-implicit coupling integrates each piece exactly. Measured: the six contact
    changes within 5.5e-10 s of scipy's (mechfmu/validation/event_references.py, rtol 1e-12), every signal
    within 7.5e-11 of scipy's solution, 34,150 counted calls (fewer than the 90,094 of the fixed-step
    run before events). Against the Modelica Association's reference the error is 3.11e-5, exactly
    that reference's own distance from the exact solution (elastoGap1.v_rel near t = 1.02 s): the
    issue's 3e-5 lies below the reference's accuracy, so it is asserted as the reference's own error
    plus 1e-9."""
    r = simulate("scenarios/elastogap", algorithm="linear-implicit", local=True, step=1e-2, events="on")
    assert r.ok, r.message
    changes = refs.elastogap_contact_changes()
    located = [t for t, what in r.events if "indicator.gap" in what]
    assert len(located) == len(changes) == 6
    assert max(abs(a - b) for a, (b, _) in zip(located, changes)) <= 1e-6
    exact = refs.monolithic_example(r.data["time"])
    assert max(float(np.max(np.abs(r.data[c] - exact[c]))) for c in ELASTOGAP_COLUMNS) <= 1e-8
    reference = read_msl_reference("scenarios/elastogap/reference/ElastoGap.csv")
    common = np.isin(r.data["time"], reference["time"])
    at = np.isin(reference["time"], r.data["time"])
    ours = max(float(np.max(np.abs(r.data[c][common] - reference[c][at]))) for c in ELASTOGAP_COLUMNS)
    exact_at = refs.monolithic_example(reference["time"])
    floor = max(float(np.max(np.abs(exact_at[c] - reference[c]))) for c in ELASTOGAP_COLUMNS)
    print(f"\ncalls {r.counters['fmu_calls']}, vs MA {ours:.3g} (the reference's own error {floor:.3g})")
    assert ours <= floor + 1e-9 and floor < 3.2e-5
    assert r.counters["fmu_calls"] < 90_094


def test_the_ma_elastogap_reference_is_3e_5_from_the_closed_form_of_its_contact_free_mass():
    """Why the issue's "<= 3e-5 against the MA reference" lies below that reference's accuracy, with no
    solver of ours involved: the example's mass1 hangs between two linear spring-dampers (c = 10 N/m,
    d = 1.5 N.s/m, 1 kg, at x = 2 m at rest), x'' + 3x' + 20x = 0, whose closed form
    x = e^(-1.5t)(2 cos wt + (3/w) sin wt), w = sqrt(17.75), the reference (Dymola, DASSL at tolerance
    1e-6) misses by 2.63e-5 m/s in springDamper1.v_rel (measured; 9.8e-6 m in springDamper2.s_rel):
    integration error of the order of the one it shows near the contacts (3.11e-5, test above). Our
    run above is within 7.5e-11 of the exact solution; here it meets the closed form to 1e-9."""
    reference = read_msl_reference("scenarios/elastogap/reference/ElastoGap.csv")
    t = reference["time"]
    w = np.sqrt(20.0 - 1.5**2)
    x = np.exp(-1.5 * t) * (2.0 * np.cos(w * t) + 3.0 / w * np.sin(w * t))
    v = np.exp(-1.5 * t) * (-(2.0 * w + 4.5 / w) * np.sin(w * t))
    reference_error = float(np.max(np.abs(reference["springDamper1.v_rel"] - v)))
    assert 2.5e-5 < reference_error < 3e-5
    assert float(np.max(np.abs(reference["springDamper2.s_rel"] - (2.0 - x)))) < 1e-5
    r = simulate("scenarios/elastogap", algorithm="linear-implicit", local=True, step=1e-2, events="on")
    assert r.ok, r.message
    at = np.isin(r.data["time"], t)
    t_ours = r.data["time"][at]
    v_ours = np.exp(-1.5 * t_ours) * (-(2.0 * w + 4.5 / w) * np.sin(w * t_ours))
    assert float(np.max(np.abs(r.data["springDamper1.v_rel"][at] - v_ours))) < 1e-9


@pytest.mark.slow
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
