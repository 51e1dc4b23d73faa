"""CoordinateSpringDamperExt against exudyn 1.13.6 itself.

Force: exudyn's ``GetObjectOutput(..., Force)`` after putting the state into the nodes and the data
node and calling ``Assemble``. End-of-step switching: exudyn's own ``solver.PostNewton`` with the
Current and StartOfStep data set independently. Both are evaluated with the same IEEE operations in
the same order, so the tolerance (1e-12 relative) only allows for a different libm rounding of exp.
"""
from __future__ import annotations

import math
import random
import warnings

import pytest
from mechfmu.components import ComponentError, CoordinateSpringDamperExt

exu = pytest.importorskip("exudyn")  # the test extra (pins 1.13.6)
from exudyn.itemInterface import CoordinateSpringDamperExt as ExuExt  # noqa: E402
from exudyn.itemInterface import NodeGenericData
from exudyn_states import two_coordinates  # noqa: E402

assert exu.__version__ == "1.13.6", exu.__version__
RELATIVE_TOLERANCE = 1e-12
#: our (exudyn 1.11) parameter names -> exudyn 1.13.6 names
EXUDYN_NAMES = {"fDynamicFriction": "dynamicFrictionForce", "fStaticFrictionOffset": "staticFrictionOffsetForce",
                "fViscousFriction": "viscousFrictionFactor"}
USER_EXPRESSION = ("k*(u - offset) + d*(v - velocityOffset) + fDynamicFriction*tanh(v/frictionProportionalZone)"
                   " + fViscousFriction*v*abs(v) - fStaticFrictionOffset*exp(-abs(v)/exponentialDecayStatic)"
                   " + 0.5*itemNumber + t")


def user_function(mbs, t, item, u, v, k, d, offset, v_off, f_d, f_so, v_exp, f_v, v_reg):
    return (k * (u - offset) + d * (v - v_off) + f_d * math.tanh(v / v_reg)
            + f_v * v * abs(v) - f_so * math.exp(-abs(v) / v_exp) + 0.5 * item + t)


def exudyn_system(params: dict, q0, q1, v0, v1, data):
    """Two free coordinates (reference 0), the connector between them, the data node."""
    sc, mbs, markers = two_coordinates(q0, q1, v0, v1)
    data_node = mbs.AddNode(NodeGenericData(initialCoordinates=list(data), numberOfDataCoordinates=3))
    kwargs = {EXUDYN_NAMES.get(k, k): v for k, v in params.items()
              if k not in ("springForceUserFunction", "itemNumber")}
    if params.get("springForceUserFunction"):
        kwargs["springForceUserFunction"] = user_function
    connector = mbs.AddObject(ExuExt(markerNumbers=markers, nodeNumber=data_node, **kwargs))
    assert int(connector) == params.get("itemNumber", int(connector)), "itemNumber must be exudyn's object number"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mbs.Assemble()
    return sc, mbs, connector


def our_component(params: dict, q0, q1, v0, v1, data) -> CoordinateSpringDamperExt:
    c = CoordinateSpringDamperExt("ext")
    for name, value in params.items():
        c.set(name, value)
    for name, value in zip(("frictionMode_start", "lastStickingPosition_start", "limitStopState_start"), data):
        c.set(name, value)
    c.initialize(0.0)
    for name, value in {"flange_a.s": q0, "flange_b.s": q1, "flange_a.v": v0, "flange_b.v": v1}.items():
        c.set(name, value)
    return c


def random_case(rng: random.Random, branch: str):
    """Parameters, flange states and data values that exercise ``branch``."""
    p = {"stiffness": rng.uniform(0, 1e3), "damping": rng.uniform(0, 20), "offset": rng.uniform(-0.1, 0.1),
         "fDynamicFriction": rng.uniform(0.5, 20), "fStaticFrictionOffset": rng.uniform(0, 10),
         "fViscousFriction": rng.uniform(0, 5), "exponentialDecayStatic": rng.uniform(1e-3, 0.1),
         "stickingStiffness": rng.uniform(1e2, 1e5), "stickingDamping": rng.uniform(0, 50)}
    q0, q1 = rng.uniform(-0.5, 0.5), rng.uniform(-0.5, 0.5)
    v0, v1 = rng.uniform(-1, 1), rng.uniform(-1, 1)
    data = [0.0, rng.uniform(-0.5, 0.5), 0.0]
    slip = rng.uniform(0.5, 20)
    stops = {"useLimitStops": True, "limitStopsUpper": rng.uniform(0.0, 0.3), "limitStopsLower": rng.uniform(-0.3, 0.0),
             "limitStopsStiffness": rng.uniform(1e3, 1e6), "limitStopsDamping": rng.uniform(0, 100)}
    if branch == "regularized-inside":
        p["frictionProportionalZone"] = rng.uniform(0.1, 1.0)
        v1 = v0 + rng.uniform(-1, 1) * p["frictionProportionalZone"]
    elif branch == "regularized-outside":
        p["frictionProportionalZone"] = rng.uniform(1e-3, 0.05)
        v1 = v0 + rng.choice((-1, 1)) * rng.uniform(0.06, 1.0)
    elif branch == "stick":
        pass
    elif branch == "slip-positive":
        data[0] = slip
    elif branch == "slip-negative":
        data[0] = -slip
    elif branch in ("stops-below", "stops-above", "stops-free"):
        p.update(stops, fDynamicFriction=0.0, fStaticFrictionOffset=0.0)
        data[2] = {"stops-below": -1.0, "stops-above": 1.0, "stops-free": 0.0}[branch] * rng.uniform(1e-4, 0.1)
    elif branch == "stops-bristle":
        p.update(stops)
        data = [rng.choice((0.0, slip, -slip)), data[1], rng.choice((-1.0, 0.0, 1.0)) * rng.uniform(1e-4, 0.1)]
    elif branch == "stops-regularized":
        p.update(stops, frictionProportionalZone=rng.uniform(1e-3, 0.5))
        data = [rng.choice((0.0, slip, -slip)), data[1], rng.choice((-1.0, 1.0)) * rng.uniform(1e-4, 0.1)]
    elif branch == "velocity-offset":
        p["velocityOffset"] = rng.uniform(-1, 1)
        p["frictionProportionalZone"] = rng.choice((0.0, rng.uniform(1e-3, 0.5)))
        data[0] = rng.choice((0.0, slip, -slip))
    elif branch == "factors":
        p["factor0"], p["factor1"] = rng.choice((-1, 1)) * rng.uniform(0.1, 5), rng.choice((-1, 1)) * rng.uniform(0.1, 5)
        p["velocityOffset"] = rng.uniform(-1, 1)
        p.update(stops)
        data = [rng.choice((0.0, slip, -slip)), data[1], rng.choice((-1.0, 0.0, 1.0)) * rng.uniform(1e-4, 0.1)]
    elif branch == "user-function":
        p.update(springForceUserFunction=USER_EXPRESSION, velocityOffset=rng.uniform(-1, 1),
                 frictionProportionalZone=rng.uniform(1e-3, 0.5), itemNumber=2)
    elif branch == "inactive":
        p.update(stops, activeConnector=False)
        data[0] = slip
    else:
        raise ValueError(branch)
    return p, (q0, q1, v0, v1), data


BRANCHES = ("regularized-inside", "regularized-outside", "stick", "slip-positive", "slip-negative",
            "stops-below", "stops-above", "stops-free", "stops-bristle", "stops-regularized",
            "velocity-offset", "factors", "user-function", "inactive")
STATES_PER_BRANCH = 20  # 14 branches x 20 = 280 states


def relative_difference(ours: float, ref: float) -> float:
    return 0.0 if ours == ref else abs(ours - ref) / max(abs(ref), abs(ours))


@pytest.mark.parametrize("branch", BRANCHES)
def test_force_equals_exudyn(branch):
    rng = random.Random(f"force-{branch}")
    worst = 0.0
    for _ in range(STATES_PER_BRANCH):
        params, (q0, q1, v0, v1), data = random_case(rng, branch)
        _, mbs, connector = exudyn_system(params, q0, q1, v0, v1, data)
        ours = our_component(params, q0, q1, v0, v1, data)
        for variable, output in (("s_rel", "Displacement"), ("v_rel", "Velocity"), ("f", "Force")):
            ref = mbs.GetObjectOutput(connector, getattr(exu.OutputVariableType, output))
            worst = max(worst, relative_difference(ours.get(variable), ref))
        f = ours.get("f")
        assert ours.get("flange_a.f") == -ours.values["factor0"] * f
        assert ours.get("flange_b.f") == ours.values["factor1"] * f
        if branch in ("user-function", "inactive"):  # the user function replaces the whole law
            assert ours.get("f_friction") == ours.get("f_limitStop") == 0.0
            assert branch == "user-function" or f == 0.0
        else:
            linear = (params["stiffness"] * (ours.get("s_rel") - params["offset"])
                      + params["damping"] * (ours.get("v_rel") - params.get("velocityOffset", 0.0)))
            assert f == linear + ours.get("f_friction") + ours.get("f_limitStop")
    print(f"\n{branch}: max relative difference to exudyn {worst:.1e}")
    assert worst <= RELATIVE_TOLERANCE


def exudyn_post_newton(params, q0, q1, v0, v1, current, start):
    sc, mbs, _ = exudyn_system(params, q0, q1, v0, v1, current)
    settings = exu.SimulationSettings()
    settings.solution.file.write = False
    solver = exu.MainSolverImplicitSecondOrder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver.InitializeSolver(mbs, settings)
    mbs.systemData.SetDataCoordinates(list(current), configuration=exu.ConfigurationType.Current)
    mbs.systemData.SetDataCoordinates(list(start), configuration=exu.ConfigurationType.StartOfStep)
    error = solver.PostNewton(mbs, settings)
    return list(mbs.systemData.GetDataCoordinates(configuration=exu.ConfigurationType.Current)), error


POST_NEWTON_BRANCHES = ("stick", "slip-positive", "slip-negative", "stops-below", "stops-above", "stops-free",
                        "stops-bristle", "stops-regularized", "factors")


DATA = ("frictionMode", "lastStickingPosition", "limitStopState")


@pytest.mark.parametrize("branch", POST_NEWTON_BRANCHES)
def test_end_of_step_switching_equals_exudyn_post_newton(branch):
    """15 states per branch (135 in all), a third of them at zero relative velocity: the component's step ends
    with exudyn's PostNewton (its start-of-step data are its current data: a repeated step starts from the
    restored state)."""
    rng = random.Random(f"post-newton-{branch}")
    transitions = set()
    for i in range(15):
        params, (q0, q1, v0, v1), current = random_case(rng, branch)
        if i % 3 == 0:
            v1 = params.get("factor0", 1.0) * v0 / params.get("factor1", 1.0)  # zero relative velocity
        ref_data, ref_error = exudyn_post_newton(params, q0, q1, v0, v1, current, current)
        ours = our_component(params, q0, q1, v0, v1, current)
        ours.do_step(0.0, 1e-3)
        new = [ours.get(n) for n in DATA]
        for ours_value, ref in zip(new, ref_data):
            assert relative_difference(ours_value, ref) <= RELATIVE_TOLERANCE, (new, ref_data)
        error = ours.get("switchingError")
        assert relative_difference(max(0.0, error), ref_error) <= RELATIVE_TOLERANCE, (error, ref_error)
        transitions.add((current[0] == 0, new[0] == 0, current[2] == 0, new[2] == 0))
    print(f"\n{branch}: (stick before, stick after, stop free before, stop free after) seen: {sorted(transitions)}")


def test_fmu_step_switching_equals_exudyn_post_newton():
    """The component's do_step applies exudyn's PostNewton (start-of-step data = current data), 40 states."""
    rng = random.Random("fmu-step")
    for branch in (POST_NEWTON_BRANCHES + ("inactive",)) * 4:  # inactive: exudyn skips the switching
        params, (q0, q1, v0, v1), current = random_case(rng, branch)
        ref_data, ref_error = exudyn_post_newton(params, q0, q1, v0, v1, current, current)
        ours = our_component(params, q0, q1, v0, v1, current)
        ours.do_step(0.0, 1e-3)
        got = [ours.get(n) for n in ("frictionMode", "lastStickingPosition", "limitStopState")]
        assert all(relative_difference(a, b) <= RELATIVE_TOLERANCE for a, b in zip(got, ref_data)), (got, ref_data)
        assert relative_difference(max(0.0, ours.get("switchingError")), ref_error) <= RELATIVE_TOLERANCE


def test_switching_law_reference_cases():
    """Hand-checked cases of the state machine, through the component's step."""
    params = {"fDynamicFriction": 1.0, "stickingStiffness": 100.0, "useLimitStops": True, "limitStopsUpper": 0.3,
              "limitStopsLower": -0.1, "limitStopsStiffness": 1000.0}
    # stick at 0.1, q = 0.4: bristle force 30 N > 1 N -> slip with S(-0.5) = -1 N, error 30 - 1;
    # q above the upper stop: contact 0.1 m, error += 0.1*1000
    ours = our_component(params, 0.0, 0.4, 0.0, -0.5, (0.0, 0.1, 0.0))
    ours.do_step(0.0, 1e-3)
    assert [ours.get(n) for n in DATA] == [-1.0, 0.1, pytest.approx(0.1, rel=1e-12)]
    assert ours.get("switchingError") == pytest.approx(129.0, rel=1e-12)
    # slipping in + (slip force 2 N) but moving in −: sticks, the bristles preloaded with the last slip force 2 N
    ours = our_component(params, 0.0, 0.0, 0.0, -0.5, (2.0, 0.0, 0.0))
    ours.do_step(0.0, 1e-3)
    assert ours.get("frictionMode") == 0.0
    bristles = (0.0 - ours.get("lastStickingPosition")) * params["stickingStiffness"]
    assert bristles == pytest.approx(2.0)
    assert ours.get("switchingError") == pytest.approx(3.0)  # |2 − (−1)|


@pytest.mark.parametrize("params", [
    {"fViscousFriction": 1.0}, {"fDynamicFriction": 1.0, "frictionProportionalZone": 0.1}, {"useLimitStops": True},
    {"stiffness": -1.0}, {"fViscousFriction": 1.0, "useLimitStops": True},
    {"fDynamicFriction": 1.0}, {"fStaticFrictionOffset": 1.0, "useLimitStops": True, "frictionProportionalZone": 0.1},
    {"factor0": 0.0},
])
def test_parameter_combinations_accepted_exactly_where_exudyn_accepts_them(params):
    """Exudyn's consistency checks (checkPreAssembleConsistencies) and ours agree: a combination
    exudyn assembles initializes here, one it refuses is refused here with a named parameter."""
    try:
        exudyn_system(params, 0.1, 0.3, 0.0, 0.5, (0.0, 0.0, 0.0))
        exudyn_accepts = True
    except Exception:  # exudyn raises a plain exception (RuntimeError / ValueError by version)
        exudyn_accepts = False
    c = CoordinateSpringDamperExt("ext")
    try:
        for name, value in params.items():
            c.set(name, value)
        c.initialize(0.0)
        ours = True
    except ComponentError as exc:
        assert "CoordinateSpringDamperExt 'ext': " in str(exc)
        ours = False
    assert ours == exudyn_accepts, (params, exudyn_accepts)
