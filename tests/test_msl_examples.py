"""MSL 4.1 Translational examples as scenarios (scenarios/msl, written by
scenarios/msl/make_examples.py with MSL's instance names), each at its own master and step against the
Modelica Association's reference result: inside the regression tube (csv-compare, 2e-3) for every
compared signal, a stated max abs error, the FMU run equal to the in-process run bit for bit."""
import numpy as np
import pytest
from conftest import slow_but

from mechfmu.master.simulate import simulate
from mechfmu.validation.msl import read_msl_reference, tube_violation

#: example -> max abs error allowed per compared signal, and why
EXAMPLES = {
    # linear-implicit holds the sine force first-order: 4.2e-5 m, 8e-5 m/s from the closed form at
    # h = 1e-3 s (tests/test_sources.py), plus the reference's own 7.6e-6 m, 1.3e-5 m/s
    "Sensors": {"mass.s": 6e-5, "mass.v": 1.2e-4},
    # s = t²/2 and v = t are exact to rounding here; the reference (DASSL, tolerance 1e-6) is 6.9e-12 m off
    "Accelerate": {"accelerate.s": 1e-11, "accelerate.v": 1e-15},
    # the same for three masses pushed by 1 N: s = t²/2 for each, whichever flange the force is on
    "SignConvention": {f"mass{i}.{q}": 1e-11 if q == "s" else 1e-15 for i in (1, 2, 3) for q in "sv"},
    # the chain at rest (m3, sd2) stays exactly at rest; in the moving chain linear-implicit's coupling between
    # the two masses (each predicts the other at constant acceleration): 1.5e-5 m, 4.9e-4 m/s, 2.5e-5 m,
    # 6.5e-4 m/s over its 5 s at h = 1e-3 s (1.2e-5 m ... 4.7e-4 m/s at 5e-4 s); bounds 1.3-1.4x that
    "InitialConditions": {"m1.s": 2e-5, "m1.v": 6e-4, "sd1.s_rel": 3.3e-5, "sd1.v_rel": 9e-4,
                          "m3.s": 0.0, "m3.v": 0.0, "sd2.s_rel": 0.0, "sd2.v_rel": 0.0},
    # a sine force at the springs' resonance (100 rad/s), held first-order by linear-implicit: its error grows
    # with the resonant amplitude; measured 2.0e-6 m, 2.0e-4 m/s, 1.2e-5 m, 1.3e-3 m/s, bounds 1.5x that
    "Oscillator": {"damper1.s_rel": 3e-6, "damper1.v_rel": 3e-4, "mass1.s": 1.8e-5, "mass1.v": 2e-3},
    # linear dampers and springs to housings are exact under linear-implicit (test below): the error is the
    # reference's own, 1.1e-6 m and 2.7e-5 m/s
    "Damper": {f"{e}.{q}": 1.5e-6 if q == "s_rel" else 4e-5 for e in ("damper1", "damper2", "springDamper3")
               for q in ("s_rel", "v_rel")},
    # a linear spring to a housing is integrated exactly by linear-implicit (test below): what is left is
    # the reference's own error, 5.8e-6 m and 1.0e-5 m/s
    "WhyArrows": {f"{body}.{q}": 1e-5 if q == "s" else 2e-5 for body in ("mass1", "inertia2") for q in "sv"},
    # auto (monolithic at ode_rtol 2e-4): the reference is within 1.3e-9 m, 1.1e-7 m/s of a solution at ode_rtol
    # 1e-10, so the error is our integrator's: measured 1.25e-6 to 1.42e-6 m, 1.63e-6 to 1.86e-6 m/s (2.3e-4 of
    # the 6.3 mm stroke, the size of ode_rtol); bounds 1.5x that
    "PreLoad": {c: 2.2e-6 if c.endswith("s_rel") else 2.8e-6 for c in (
        "innerContactA.s_rel", "innerContactB.s_rel", "outerContactB.s_rel", "friction.v_rel", "outerContactA.v_rel",
        "outerContactB.v_rel")},
}
SLOW = ("InitialConditions", "PreLoad")  # 100 s of PreLoad: 2 s a run


@pytest.mark.parametrize("name", slow_but(sorted(EXAMPLES), *(n for n in EXAMPLES if n not in SLOW)))
def test_msl_example_inside_the_reference_tube(name):
    folder = f"scenarios/msl/{name}"
    reference = read_msl_reference(f"{folder}/reference/{name}.csv")
    compared = [c for c in open(f"{folder}/reference/comparisonSignals.txt").read().split() if c != "time"]
    assert sorted(compared) == sorted(EXAMPLES[name])  # every regression-checked signal has its bound
    result = simulate(folder)
    assert result.ok, result.message
    ours, theirs = np.isin(result.data["time"], reference["time"]), np.isin(reference["time"], result.data["time"])
    assert ours.sum() == len(result.data)  # every communication point is a reference point
    errors = {c: float(np.max(np.abs(result.data[c][ours] - reference[c][theirs]))) for c in compared}
    tube = {c: tube_violation(reference["time"], reference[c], result.data["time"], result.data[c]) for c in compared}
    print(f"\n{name}: max abs error {errors}, FMU calls {result.counters['fmu_calls']}")
    assert all(errors[c] <= EXAMPLES[name][c] for c in compared), errors
    assert all(v == 0.0 for v in tube.values()), tube
    local = simulate(folder, local=True)
    assert np.array_equal(local.data, result.data)


@pytest.mark.parametrize("name, columns", [("Accelerate", ["accelerate"]),
                                           ("SignConvention", ["mass1", "mass2", "mass3"])])
def test_constant_acceleration_examples_are_exact(name, columns):
    """a = 1 m/s2 held: every step is exact (s += v·h + a·h²/2), so s = t²/2 and v = t up to one rounding a
    step: at most 1,000 ulp(0.5 m) = 1.1e-13 m and 1,000 ulp(1 m/s) = 2.2e-13 m/s."""
    result = simulate(f"scenarios/msl/{name}", local=True)
    t = result.data["time"]
    for c in columns:
        assert np.max(np.abs(result.data[f"{c}.s"] - t * t / 2)) <= 1.1e-13
        assert np.max(np.abs(result.data[f"{c}.v"] - t)) <= 2.2e-13


def test_why_arrows_is_the_harmonic_oscillation():
    """Each mass (1 kg, flange_b at s + 1 m) on a spring (11 N/m, s_rel0 = 2 m) to a housing at -1.9 m
    rests at s = -0.9 m and starts 0.9 m from it: s = -0.9 + 0.9·cos(√11·t). Linear-implicit integrates a
    linear spring to a housing without coupling error: to rounding over 1,000 steps."""
    result = simulate("scenarios/msl/WhyArrows", local=True)
    t, omega = result.data["time"], np.sqrt(11.0)
    for body in ("mass1", "inertia2"):
        assert np.max(np.abs(result.data[f"{body}.s"] - (-0.9 + 0.9 * np.cos(omega * t)))) < 1e-12
        assert np.max(np.abs(result.data[f"{body}.v"] + 0.9 * omega * np.sin(omega * t))) < 1e-12


def test_damper_is_the_exponential_decay():
    """mass1 (1 kg, 10 m/s) on a 25 N.s/m damper to a housing: v = 10·e^(−25t), s = 3 + 0.4·(1 − e^(−25t));
    linear-implicit integrates a linear damper to a housing exactly: to rounding."""
    result = simulate("scenarios/msl/Damper", local=True)
    t = result.data["time"]
    assert np.max(np.abs(result.data["mass1.v"] - 10 * np.exp(-25 * t))) < 1e-13
    assert np.max(np.abs(result.data["mass1.s"] - (3 + 0.4 * (1 - np.exp(-25 * t))))) < 1e-13


@pytest.mark.slow
def test_pre_load_holds_the_spool_until_the_force_exceeds_the_preload():
    """PreLoad's spring (k = 20e3 N/m, s_rel0 = 25 mm) lies between two plates (L = 2 mm) on the housing's stops
    (housing 30.5 mm, outer gaps 1.5 mm): 30.5 − 2·1.5 − 2·2 = 23.5 mm long, Δ = 1.5 mm compressed. Each plate is
    held by a housing stop and a spool stop, all four c = 1e6 N/m. Statically, all four in contact, the spring
    carries P0 = Δ/(1/k + 1/c) = 29.41 N whatever the force F on the spool, which sits at x = F/c (the stops'
    compliance); plate A's housing stop and plate B's spool stop unload together at F = P0: the threshold F*.
    Beyond it the spool takes one plate off its housing stop: x = sign(F)·(|F|·(1/k + 2/c) − Δ), the spring and
    two stops in series (6.3 mm at 150 N). The sine's period (100 s) is 800 times the slowest time constant
    (friction's d over the spring, 0.125 s), so the stops and spring carry F − d·v (the friction damper takes d·v;
    inertia is negligible): on a solution at ode_rtol 1e-10 that law holds to 2.1e-8 m.

    - While |F| < F* − d·v_max (v_max = 150 N·2π·0.01 Hz·(1/k + 2/c) = 4.9e-4 m/s, the spool's fastest, so that
      the damper cannot carry the force past F*), the spool stays within F*/c = 29 µm of its start (0.5 % of its
      stroke), up to the run's integrator error below.
    - Everywhere x follows the law with F − d·v: the default run's integrator error, measured 1.43e-6 m (2.3e-4 of
      the stroke, its ode_rtol 2e-4), bounded by 3e-6 m, a quarter of the regression tube's half-height."""
    k, c, d, gap = 20e3, 1e6, 2500.0, 0.025 - (0.0305 - 2 * 0.0015 - 2 * 0.002)
    threshold = gap / (1 / k + 1 / c)
    assert threshold == pytest.approx(29.41, abs=5e-3)
    result = simulate("scenarios/msl/PreLoad", local=True)
    assert result.ok, result.message
    force, x, v = result.data["sineForce.y"], result.data["spool.s"] - 0.01475, result.data["spool.v"]
    v_max = 150 * 2 * np.pi * 0.01 * (1 / k + 2 / c)
    held = np.abs(force) < threshold - d * v_max
    assert 100 < held.sum() < 200 and np.max(np.abs(v)) <= v_max  # 3 s either side of F = 0 (t = 0, 50, 100 s)
    assert np.max(np.abs(x[held])) <= threshold / c + 3e-6
    carried = force - d * v
    law = np.where(np.abs(carried) <= threshold, carried / c,
                   np.sign(carried) * (np.abs(carried) * (1 / k + 2 / c) - gap))
    assert np.max(np.abs(x - law)) <= 3e-6
    assert np.max(np.abs(x)) == pytest.approx(150 * (1 / k + 2 / c) - gap, abs=3e-6)  # the stroke: 6.3 mm
