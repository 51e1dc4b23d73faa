"""MSL's Rotational SpringDamper, ElastoBacklash and ElastoBacklash2 (components/spring_damper.py,
components/elasto_backlash.py) against an independent transcription of MSL's equations
(mechfmu/validation/msl_rotational.py) at random states, and MSL's Backlash example (scenarios/msl/Backlash)
against the Modelica Association's reference and an independent piecewise solution."""
from __future__ import annotations

import math

import numpy as np
import pytest
from mechfmu.components import ElastoBacklash, ElastoBacklash2, RotationalSpringDamper

from mechfmu.master.simulate import simulate
from mechfmu.validation.msl import read_msl_reference, tube_violation
from mechfmu.validation.msl_rotational import B_EPS, backlash_example, elasto_backlash, spring_damper

pytest.importorskip("hypothesis")  # the law tests need the test extra
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FOLDER = "scenarios/msl/Backlash"
COMPARED = ("elastoBacklash.phi_rel", "elastoBacklash.w_rel", "springDamper.phi_rel", "springDamper.w_rel")
#: max |ours - MA| at the defaults (auto: monolithic at ode_rtol 2e-4): measured 4.2e-3 rad, 0.161 rad/s,
#: 6.2e-5 rad, 2.7e-3 rad/s (the MA tube's half-heights are 5.8e-3 rad, 0.24 rad/s, 5.6e-3 rad, 0.31 rad/s);
#: bounds 1.25 times that
DEFAULT_ERRORS = {"elastoBacklash.phi_rel": 5.3e-3, "elastoBacklash.w_rel": 0.2, "springDamper.phi_rel": 8e-5,
                  "springDamper.w_rel": 3.4e-3}
#: max |monolithic - independent| at ode_rtol 1e-10, ode_atol 1e-12: measured 8.5e-10 rad, 4.1e-8 rad/s
#: (elastoBacklash, 21 contact changes), 4.6e-9 rad, 2.6e-7 rad/s (elastoBacklash2, whose torque jumps at 30 more
#: events), 2.1e-11 rad, 1.1e-9 rad/s (springDamper): what an integrator held to 1e-10 relative builds up over 1 s
#: of oscillation at 63 rad/s with |w| up to 7.9 rad/s; bounds about 4 times the largest
TIGHT_BOUND = {"phi_rel": 2e-8, "w_rel": 1e-6}
#: the switch instants: the monolithic master's located events (indicator zeros, bracketed to the integrator's
#: tolerance) against the independent solution's (solve_ivp's event location at rtol 1e-13): measured 5.8e-10 s
EVENT_BOUND = 2e-9


def element(cls, **parameters):
    e = cls("e")
    for name, value in parameters.items():
        e.set(name, value)
    return e


def outputs(e, phi_a, w_a, phi_b, w_b, initialized):
    for name, value in (("flange_a.phi", phi_a), ("flange_a.w", w_a), ("flange_b.phi", phi_b), ("flange_b.w", w_b)):
        e.set(name, value)
    if initialized:
        e.initialize()
    return {name: e.get(name) for name in ("phi_rel", "w_rel", "tau", "lossPower", "flange_a.tau", "flange_b.tau",
                                           "flange_b.c", "flange_b.d")}


angles, speeds = st.floats(-2, 2), st.floats(-20, 20)
backlash = st.one_of(st.just(0.0), st.just(B_EPS / 2), st.floats(0, 1.5))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(c=st.floats(1e-3, 1e6), d=st.floats(0, 1e3), b=backlash, phi_rel0=st.floats(-1, 1), phi_a=angles,
       phi_b=angles, w_a=speeds, w_b=speeds, jumping=st.booleans(), initialized=st.booleans())
def test_elasto_backlash_is_msl_law(c, d, b, phi_rel0, phi_a, phi_b, w_a, w_b, jumping, initialized):
    """tau, lossPower and the cut torques equal MSL's equations (before initialization: initial()'s) to 1e-12 of
    the terms they are sums of (c·(|phi_diff| + b) + d·|w_rel|), at any state, with and without backlash."""
    cls = ElastoBacklash2 if jumping else ElastoBacklash
    out = outputs(element(cls, c=c, d=d, b=b, phi_rel0=phi_rel0), phi_a, w_a, phi_b, w_b, initialized)
    phi_rel, w_rel = phi_b - phi_a, w_b - w_a
    tau, loss = elasto_backlash(phi_rel, w_rel, c, d, b, phi_rel0, jumping=jumping, initial=not initialized)
    scale = c * (abs(phi_rel - phi_rel0) + b) + d * abs(w_rel)
    assert (out["phi_rel"], out["w_rel"]) == (phi_rel, w_rel)
    assert math.isclose(out["tau"], tau, rel_tol=1e-12, abs_tol=1e-12 * scale)
    assert math.isclose(out["lossPower"], loss, rel_tol=1e-12, abs_tol=1e-12 * scale * abs(w_rel))
    assert out["flange_b.tau"] == out["tau"] and out["flange_a.tau"] == -out["tau"]
    if initialized and b > B_EPS:  # never pulls (ElastoBacklash's clamp, ElastoBacklash2's cut-off)
        phi_diff = phi_rel - phi_rel0
        assert out["tau"] * (1 if phi_diff > b / 2 else -1) >= 0 or out["tau"] == 0.0


@settings(max_examples=200, deadline=None, derandomize=True)
@given(c=st.floats(0, 1e6), d=st.floats(0, 1e3), phi_rel0=st.floats(-1, 1), phi_a=angles, phi_b=angles,
       w_a=speeds, w_b=speeds)
def test_spring_damper_is_msl_law(c, d, phi_rel0, phi_a, phi_b, w_a, w_b):
    out = outputs(element(RotationalSpringDamper, c=c, d=d, phi_rel0=phi_rel0), phi_a, w_a, phi_b, w_b, True)
    tau, loss = spring_damper(phi_b - phi_a, w_b - w_a, c, d, phi_rel0)
    assert math.isclose(out["tau"], tau, rel_tol=1e-12, abs_tol=1e-12 * (c * abs(phi_b - phi_a - phi_rel0) + d * 20))
    assert math.isclose(out["lossPower"], loss, rel_tol=1e-12, abs_tol=1e-300)
    assert (out["flange_b.c"], out["flange_b.d"]) == (c, d)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(phi_rel=st.floats(-1, 1), w_rel=st.floats(-5, 5), jumping=st.booleans(), initialized=st.booleans())
def test_elasto_backlash_tangents_are_the_laws_slopes(phi_rel, w_rel, jumping, initialized):
    """flange_b.c, flange_b.d = dtau/dphi_rel, dtau/dw_rel: central differences of MSL's law (steps 1e-7 rad,
    1e-6 rad/s; the law is piecewise linear, so exact to rounding away from its switches, which are skipped)."""
    c, d, b = 2e4, 50.0, 0.8
    out = outputs(element(ElastoBacklash2 if jumping else ElastoBacklash, c=c, d=d, b=b), 0.0, 0.0, phi_rel, w_rel,
                  initialized)
    law = lambda p, w: elasto_backlash(p, w, c, d, b, jumping=jumping, initial=not initialized)[0]  # noqa: E731
    dp, dw = 1e-7, 1e-6
    slopes = ((law(phi_rel + dp, w_rel) - law(phi_rel - dp, w_rel)) / (2 * dp),
              (law(phi_rel, w_rel + dw) - law(phi_rel, w_rel - dw)) / (2 * dw))
    one_sided = [(law(phi_rel + h, w_rel + k) - law(phi_rel, w_rel)) / max(h, k)
                 for h, k in ((dp, 0), (0, dw))] + [(law(phi_rel, w_rel) - law(phi_rel - h, w_rel - k)) / max(h, k)
                                                     for h, k in ((dp, 0), (0, dw))]
    if not (math.isclose(one_sided[0], one_sided[2], rel_tol=1e-6, abs_tol=1e-3)
            and math.isclose(one_sided[1], one_sided[3], rel_tol=1e-6, abs_tol=1e-3)):
        return  # a switch within a step: no slope to compare
    assert math.isclose(out["flange_b.c"], slopes[0], rel_tol=1e-6, abs_tol=1e-3)
    assert math.isclose(out["flange_b.d"], slopes[1], rel_tol=1e-6, abs_tol=1e-3)


def test_backlash_example_at_the_defaults_inside_the_reference_tube():
    """The shipped example under the default master (auto: monolithic) through the FMUs: every compared signal
    inside the Modelica Association's tube and within DEFAULT_ERRORS of its reference, the in-process run the
    same bits."""
    reference = read_msl_reference(f"{FOLDER}/reference/Backlash.csv")
    compared = [c for c in open(f"{FOLDER}/reference/comparisonSignals.txt").read().split() if c != "time"]
    assert sorted(compared) == sorted(COMPARED)
    result = simulate(FOLDER)
    assert result.ok, result.message
    ours, theirs = np.isin(result.data["time"], reference["time"]), np.isin(reference["time"], result.data["time"])
    assert ours.sum() == len(result.data) == 1001
    errors = {c: float(np.max(np.abs(result.data[c][ours] - reference[c][theirs]))) for c in compared}
    tube = {c: tube_violation(reference["time"], reference[c], result.data["time"], result.data[c]) for c in compared}
    print(f"\nBacklash: max abs error {errors}")
    assert all(errors[c] <= DEFAULT_ERRORS[c] for c in compared), errors
    assert all(v == 0.0 for v in tube.values()), tube
    assert np.array_equal(simulate(FOLDER, local=True).data, result.data)


@pytest.mark.slow
def test_backlash_example_converges_to_the_independent_solution():
    """At ode_rtol 1e-10 the monolithic master is within TIGHT_BOUND of the independent solution (which is inside
    the MA tube, as far from the MA reference as DASSL's tolerance 1e-6 puts that: 2.1e-5 rad, 1.3e-3 rad/s), and
    each located event is one of the independent solution's switches of that element, within EVENT_BOUND; every
    contact change of the independent solution is located."""
    reference = read_msl_reference(f"{FOLDER}/reference/Backlash.csv")
    result = simulate(FOLDER, "monolithic", local=True, ode_rtol=1e-10, ode_atol=1e-12)
    assert result.ok, result.message
    independent, switches = backlash_example(result.data["time"])
    for c in COMPARED + ("elastoBacklash2.phi_rel", "elastoBacklash2.w_rel"):
        assert np.max(np.abs(result.data[c] - independent[c])) <= TIGHT_BOUND[c.split(".")[1]], c
    on_grid, _ = backlash_example(reference["time"])
    for c in COMPARED:
        assert tube_violation(reference["time"], reference[c], reference["time"], on_grid[c]) == 0.0, c
    located = [(t, name.split(".")[0]) for t, names in result.events for name in names.split(", ")]
    expected = [(t, what) for t, what in switches if not what.endswith(".clamp")]
    for t, element_name in located:  # a contact's start may also switch ElastoBacklash2's transmitting there
        nearest = min(abs(t - s) for s, what in expected if what.startswith(element_name + "."))
        assert nearest <= EVENT_BOUND, (t, element_name, nearest)
    for s, what in expected:
        if what.endswith((".upper", ".lower")):
            assert min(abs(t - s) for t, name in located if what.startswith(name + ".")) <= EVENT_BOUND, (s, what)


@pytest.mark.parametrize("cls", [ElastoBacklash, ElastoBacklash2])
@pytest.mark.parametrize("name, value, problem", [("c", 1e-70, "is out of range: must be >= 1e-60 N.m/rad"),
                                                  ("b", -0.1, "is out of range: must be >= 0 rad"),
                                                  ("d", -1.0, "is out of range: must be >= 0 N.m.s/rad")])
def test_out_of_range_parameters_are_refused_naming_them(cls, name, value, problem):
    """MSL's ranges: c >= Modelica.Constants.small (1e-60), d >= 0, b >= 0."""
    from mechfmu.components import ComponentError
    with pytest.raises(ComponentError, match="^" + f"{cls.__name__} 'e': {name} = {value:g} {problem}$"
                       .replace(".", r"\.").replace("+", r"\+")):
        cls("e").set(name, value)
