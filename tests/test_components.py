"""Laws and invariants of the components, in-process."""
import math
import random

import pytest
from mechfmu.components import ComponentError, CoordinateSpringDamper, Mass

from mechfmu.master.simulate import simulate

SCENARIOS = "scenarios"


def force_derivatives(c, q: float, v: float, state: dict) -> tuple[float, float]:
    """(∂f/∂q, ∂f/∂v) of a connector by central differences of its output f (step 1e-7·max(1, |x|)), moving
    flange_b alone (q = f1·s_b − f0·s_a), then the flanges put back."""
    f1 = c.values.get("factor1", 1.0)

    def force(dq: float, dv: float) -> float:
        c.set_many(["flange_b.s", "flange_b.v"], [state["flange_b.s"] + dq / f1, state["flange_b.v"] + dv / f1])
        return c.get("f")

    dq, dv = 1e-7 * max(1.0, abs(q)), 1e-7 * max(1.0, abs(v))
    derivatives = ((force(dq, 0.0) - force(-dq, 0.0)) / (2 * dq), (force(0.0, dv) - force(0.0, -dv)) / (2 * dv))
    c.set_many(["flange_b.s", "flange_b.v"], [state["flange_b.s"], state["flange_b.v"]])
    return derivatives


def test_spring_damper_law_signs_and_inactive_connector():
    c = CoordinateSpringDamper("c")
    for name, value in dict(stiffness=100.0, damping=3.0, offset=0.5).items():
        c.set(name, value)
    c.initialize()
    for name, value in {"flange_a.s": 1.0, "flange_b.s": 2.0, "flange_a.v": 0.25, "flange_b.v": -0.75}.items():
        c.set(name, value)
    f = 100.0 * ((2.0 - 1.0) - 0.5) + 3.0 * (-0.75 - 0.25)
    assert c.get("f") == f and c.get("flange_b.f") == f and c.get("flange_a.f") == -f
    assert c.get("s_rel") == 1.0 and c.get("v_rel") == -1.0
    off = CoordinateSpringDamper("off")
    off.set("stiffness", 100.0)
    off.set("activeConnector", False)
    off.initialize()
    off.set("flange_b.s", 3.0)
    assert off.get("f") == 0.0


def test_user_function_replaces_the_law_and_bad_ones_are_named():
    c = CoordinateSpringDamper("spring")
    c.set("stiffness", 5000.0)
    c.set("damping", 80.0)
    c.set("springForceUserFunction", "0.1*k*u + k*u**3 + v*d + t")
    c.initialize(start_time=0.5)
    c.set("flange_b.s", 0.01)
    c.set("flange_b.v", 0.2)
    assert c.get("f") == 0.1 * 5000 * 0.01 + 5000 * 0.01**3 + 0.2 * 80 + 0.5
    bad = CoordinateSpringDamper("spring")
    bad.set("springForceUserFunction", "k*u + os.system(1)")
    with pytest.raises(ComponentError, match=r"CoordinateSpringDamper 'spring': springForceUserFunction = .* is invalid"):
        bad.initialize()


def test_mass_integrates_constant_force_exactly():
    m = Mass("m")
    for name, value in dict(m=2.0, s_start=1.0, v_start=-0.5).items():
        m.set(name, value)
    m.initialize()
    m.set("f_drive", 3.0)
    m.set("flange_a.f", 1.0)  # element at flange_a pulls with -1 N on the body
    h = 0.01
    for n in range(100):
        m.do_step(n * h, h)
    a, T = (3.0 - 1.0) / 2.0, 1.0
    assert m.get("s") == pytest.approx(1.0 - 0.5 * T + 0.5 * a * T * T, rel=1e-13)
    assert m.get("v") == pytest.approx(-0.5 + a * T, rel=1e-13)


@pytest.mark.parametrize("name, value, fragment", [
    ("m", 0.0, "m = 0 is out of range: must be > 0 kg"),
    ("m", float("nan"), "m = nan must be finite"),
    ("L", -1.0, "L = -1 is out of range: must be >= 0 m"),
])
def test_parameter_validation_names_component_parameter_value(name, value, fragment):
    """A value out of its own range is refused when it is written (FMI: fmi2SetReal returns fmi2Error);
    the previous value stays."""
    m = Mass("body")
    before = m.get(name)
    with pytest.raises(ComponentError, match="Mass 'body': " + fragment.replace("(", r"\(")):
        m.set(name, value)
    assert m.get(name) == before
    m.initialize()


#: relative coordinate starts at 0.5 moving at −2.4 m/s (slipping), the stops at 0.49 / 0.505
GEARED_FRICTION = {"stiffness": 800.0, "damping": 3.0, "offset": 0.5, "factor0": 2.0, "factor1": 0.5,
                   "fDynamicFriction": 5.0, "fStaticFrictionOffset": 2.0, "stickingStiffness": 2e3,
                   "stickingDamping": 20.0, "useLimitStops": True, "limitStopsUpper": 0.505, "limitStopsLower": 0.49,
                   "limitStopsStiffness": 2e3, "limitStopsDamping": 5.0, "frictionMode_start": -5.0,
                   "lastStickingPosition_start": 0.5}


@pytest.mark.parametrize("model, params", [
    ("CoordinateSpringDamper", {"stiffness": 800.0, "damping": 3.0, "offset": 0.8}),
    ("CoordinateSpringDamperExt", GEARED_FRICTION),
])
def test_two_free_masses_joined_by_a_connector_conserve_momentum(model, params):
    """Jacobi (both exchange orders): both bodies step with the same force pair (+f0·f on flange_a,
    −f1·f on flange_b), so the geared momentum f1·m1·v1 + f0·m2·v2 keeps its start value to round-off
    (plain momentum for f0 = f1 = 1), through stick, slip and the stops. (Gauss-Seidel does not: the
    second body steps with a force computed after the first one moved.)"""
    from mechfmu.components import COMPONENTS

    from mechfmu.master.algorithms import make_algorithm
    from mechfmu.master.coupled_system import CoupledSystem
    from mechfmu.master.slaves import LocalSlave
    from mechfmu.ssp.scenario import Connection

    f0, f1 = params.get("factor0", 1.0), params.get("factor1", 1.0)
    for exchange in ("ordered", "strict"):
        slaves = {"m1": LocalSlave("m1", COMPONENTS["Mass"]), "sd": LocalSlave("sd", COMPONENTS[model]),
                  "m2": LocalSlave("m2", COMPONENTS["Mass"])}
        slaves["m1"].set_parameters({"m": 1.5, "v_start": 0.7})
        slaves["m2"].set_parameters({"m": 0.4, "s_start": 1.0, "v_start": -2.0})
        slaves["sd"].set_parameters(params)
        cons = [Connection("m1", "flange_b.s", "sd", "flange_a.s"), Connection("m1", "flange_b.v", "sd", "flange_a.v"),
                Connection("m2", "flange_a.s", "sd", "flange_b.s"), Connection("m2", "flange_a.v", "sd", "flange_b.v"),
                Connection("sd", "flange_a.f", "m1", "flange_b.f"), Connection("sd", "flange_b.f", "m2", "flange_a.f")]
        system = CoupledSystem(slaves, cons)
        algo = make_algorithm("jacobi", exchange=exchange)
        for s in slaves.values():
            s.enter_initialization(0.0, 1.0)
        algo.initialize(system, 0.0)
        for s in slaves.values():
            s.exit_initialization()
        p0 = f1 * 1.5 * 0.7 + f0 * 0.4 * -2.0
        worst, modes = 0.0, set()
        for n in range(2000):
            algo.step(system, n * 1e-3, 1e-3)
            v1, v2 = slaves["m1"].get(["v"])[0], slaves["m2"].get(["v"])[0]
            worst = max(worst, abs(f1 * 1.5 * v1 + f0 * 0.4 * v2 - p0))
            assert abs(v1) + abs(v2) < 20.0, (exchange, n)  # a stable run, not round-off on huge values
            if model.endswith("Ext"):
                mode, stop = slaves["sd"].get(["frictionMode", "limitStopState"])
                modes.add((mode == 0, stop == 0))
        assert worst < 1e-12, (exchange, worst)
        if model.endswith("Ext"):
            assert modes == {(True, True), (False, True), (True, False), (False, False)}, modes


def test_failed_step_stops_cleanly_and_keeps_results():
    """A user function that fails at run time: status error, message names the component, data kept."""
    result = simulate(f"{SCENARIOS}/oscillator", local=True, stop=0.5,
                      parameters={"spring": {"springForceUserFunction": "k*u + 1/(t - 0.25)"}})
    assert result.status == "error"
    assert "spring" in result.message and "springForceUserFunction" in result.message
    assert result.data is not None and 0.2 < result.data["time"][-1] < 0.25


def test_streamed_csv_is_the_result_in_fmi_cross_check_format(tmp_path):
    """The CSV the observer streams reads back with fmpy.util.read_csv, equal to the recorded array."""
    from fmpy.util import read_csv

    from mechfmu.master.result_files import CsvWriter
    path = tmp_path / "out.csv"
    result = simulate(f"{SCENARIOS}/two_mass_oscillator", local=True, stop=0.1, observers=[CsvWriter(path)])
    back = read_csv(path)
    assert back.dtype.names == result.data.dtype.names and back.dtype.names[0] == "time"
    assert all((back[n] == result.data[n]).all() for n in back.dtype.names)


@pytest.mark.parametrize("params, fragment", [
    ({"factor0": 0.0}, "factor0 = 0 may not be zero"),
    ({"factor1": 0.0}, "factor1 = 0 may not be zero"),
    ({"fDynamicFriction": 1.0}, "stickingStiffness = 0 may not be zero with fDynamicFriction"),
    ({"fStaticFrictionOffset": 1.0, "frictionProportionalZone": 0.1, "useLimitStops": True},
     "stickingStiffness = 0 may not be zero"),
    ({"useLimitStops": True, "frictionMode_start": 2.0}, "stickingStiffness = 0 may not be zero with frictionMode_start"),
    ({"fDynamicFriction": -1.0, "frictionProportionalZone": 0.1}, "fDynamicFriction = -1 is out of range: must be >= 0 N"),
    ({"exponentialDecayStatic": 0.0}, "exponentialDecayStatic = 0 is out of range: must be > 0 m/s"),
    ({"frictionProportionalZone": -0.1}, "frictionProportionalZone = -0.1 is out of range"),
    ({"springForceUserFunction": "k*u + mbs"}, "springForceUserFunction = 'k\\*u \\+ mbs' is invalid"),
])
def test_ext_parameter_errors_name_component_parameter_value(params, fragment):
    """Exudyn's consistency checks (checkPreAssembleConsistencies) and ranges, as clear errors."""
    from mechfmu.components import CoordinateSpringDamperExt
    c = CoordinateSpringDamperExt("brake")
    with pytest.raises(ComponentError, match="CoordinateSpringDamperExt 'brake': " + fragment):
        for name, value in params.items():  # ranges are checked when written, the rest at initialization
            c.set(name, value)
        c.initialize()


def test_ext_bristle_sticks_below_the_static_limit_and_slips_above():
    """A stuck bristle holds any force up to f_d + f_so; above it the step switches to slip with the
    Stribeck force in the direction of motion, and a reversed velocity brings it back to stick."""
    from mechfmu.components import CoordinateSpringDamperExt
    c = CoordinateSpringDamperExt("f")
    for name, value in {"fDynamicFriction": 3.0, "fStaticFrictionOffset": 2.0, "stickingStiffness": 1e3,
                        "exponentialDecayStatic": 0.01}.items():
        c.set(name, value)
    c.initialize()
    c.set("flange_b.s", 4.9e-3)  # bristle force 4.9 N < 5 N: stays stuck
    c.do_step(0.0, 1e-3)
    assert c.get("frictionMode") == 0.0 and c.get("f") == pytest.approx(4.9) and c.get("switchingError") == 0.0
    c.set("flange_b.s", 5.1e-3)  # 5.1 N > 5 N, moving at +0.2 m/s: slips with S(0.2) = 3 + 2 exp(-20)
    c.set("flange_b.v", 0.2)
    c.do_step(1e-3, 1e-3)
    slip = 3.0 + 2.0 * math.exp(-0.2 / 0.01)
    assert c.get("frictionMode") == slip and c.get("f") == slip
    assert c.get("switchingError") == pytest.approx(5.1 + 0.2 * 0.0 - slip)
    c.set("flange_b.v", -0.1)  # reversed against the slip direction; the step started slipping: stick
    c.do_step(2e-3, 1e-3)
    assert c.get("frictionMode") == 0.0
    # new sticking position makes the bristle force equal the start-of-step slip force
    assert c.get("f") == pytest.approx(slip, rel=1e-12)


def test_connector_tangents_equal_central_differences_of_the_force():
    """Analytic tangents (CoordinateSpringDamper, Ext in every friction/stop state, ElastoGap incl. its
    clamped branches) equal central differences of the flange forces away from kinks, and obey
    flange_a.c = factor0²·∂f/∂q, flange_b.c = factor1²·∂f/∂q, f_rate = −f0·f1·(∂f/∂q·v + ∂f/∂v·a)."""
    from mechfmu.components import CoordinateSpringDamper, CoordinateSpringDamperExt, ElastoGap

    rng = random.Random(11)
    cases = [(CoordinateSpringDamper, {"stiffness": 300.0, "damping": 4.0, "offset": 0.1})]
    for mode, stop in ((0.0, 0.0), (2.0, 0.0), (-2.0, 0.01), (0.0, -0.01)):
        cases.append((CoordinateSpringDamperExt, {
            "stiffness": 50.0, "damping": 1.0, "factor0": 2.0, "factor1": -0.5, "fDynamicFriction": 3.0,
            "fStaticFrictionOffset": 1.0, "fViscousFriction": 0.7, "exponentialDecayStatic": 0.2,
            "stickingStiffness": 1e3, "stickingDamping": 5.0, "useLimitStops": True, "limitStopsUpper": 0.1,
            "limitStopsLower": -0.1, "limitStopsStiffness": 1e4, "limitStopsDamping": 3.0,
            "frictionMode_start": mode, "limitStopState_start": stop}))
    cases.append((CoordinateSpringDamperExt, {"fDynamicFriction": 3.0, "fStaticFrictionOffset": 1.0,
                                              "frictionProportionalZone": 0.05, "fViscousFriction": 0.5}))
    cases.append((ElastoGap, {"c": 1e3, "d": 40.0, "s_rel0": 0.2, "n": 1.5}))
    checked = 0
    for cls, params in cases:
        for _ in range(40):
            c = cls("t")
            for name, value in params.items():
                c.set(name, value)
            c.initialize()
            state = {"flange_a.s": rng.uniform(-0.3, 0.3), "flange_b.s": rng.uniform(-0.3, 0.3),
                     "flange_a.v": rng.uniform(-1, 1), "flange_b.v": rng.uniform(-1, 1),
                     "flange_a.a": rng.uniform(-5, 5), "flange_b.a": rng.uniform(-5, 5)}
            for name, value in state.items():
                c.set(name, value)
            f0, f1 = c.values.get("factor0", 1.0), c.values.get("factor1", 1.0)
            q, v = c.get("s_rel"), c.get("v_rel")
            f_q, f_v = force_derivatives(c, q, v, state)  # central differences
            if cls is ElastoGap and abs(q - 0.2) < 1e-5:
                continue
            expected = {"flange_a.c": f0 * f0 * f_q, "flange_a.d": f0 * f0 * f_v, "flange_b.c": f1 * f1 * f_q,
                        "flange_b.d": f1 * f1 * f_v,
                        "flange_a.f_rate": -f0 * f1 * (f_q * state["flange_b.v"] + f_v * state["flange_b.a"]),
                        "flange_b.f_rate": -f0 * f1 * (f_q * state["flange_a.v"] + f_v * state["flange_a.a"])}
            for name, value in expected.items():
                # central differences with step 1e-7·max(1, |x|): truncation O(1e-14) times the second
                # derivative, round-off O(1e-9·|f|); 1e-6 still tells a wrong sign or factor
                assert c.get(name) == pytest.approx(value, rel=1e-6, abs=1e-6), (cls.__name__, params, name)
            checked += 1
    assert checked > 250
