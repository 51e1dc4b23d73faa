"""MSL's Clutch (components/friction.py): its law and event iterations against an independent transcription of MSL's
equations (mechfmu/validation/msl_friction.py) at random states, its locked reaction torque and break-away against
the analytic solution of two inertias, and MSL's CoupledClutches example (scenarios/msl/CoupledClutches) against the
Modelica Association's reference."""
from __future__ import annotations

import math

import numpy as np
import pytest
from mechfmu.components import BearingFriction, Brake, OneWayClutch, RotationalBrake, SupportFriction
from mechfmu.components import Clutch as ClutchComponent
from scipy.integrate import solve_ivp

from mechfmu import Clutch as ClutchModel
from mechfmu import Constant, Force, Inertia, MassWithStopAndFriction, Ramp, Step, Torque
from mechfmu.master.simulate import simulate
from mechfmu.model.system import System
from mechfmu.validation.msl import event_times, read_msl_reference, tube_violation
from mechfmu.validation.msl_friction import (
    Discrete,
    OneWay,
    event_iteration,
    friction_force,
    one_way_iteration,
    one_way_point,
    path_parameter,
    table_value,
    transient,
)

pytest.importorskip("hypothesis")  # the law tests need the test extra
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FOLDER = "scenarios/msl/CoupledClutches"
#: within this of a reference switch either mode counts (the reference's own resolution of an instant)
SWITCH_WINDOW = 1e-6


#: each element: (class, its table's name, whether a normal force scales the table, table_signs at startBackward)
ELEMENTS = {"Clutch": (ClutchComponent, "mu_pos", True, (1, -1)),
            "RotationalBrake": (RotationalBrake, "mu_pos", True, (-1, -1)),
            "Brake": (Brake, "mu_pos", True, (-1, -1)),
            "BearingFriction": (BearingFriction, "tau_pos", False, (-1, -1)),
            "SupportFriction": (SupportFriction, "f_pos", False, (-1, -1))}


def element(name: str, rows: str, peak: float, cgeo: float, fn_max: float, small: float = 1e10):
    cls, table, normal, _ = ELEMENTS[name]
    c = cls("c")
    values = {table: rows, "peak": peak, "cgeo": cgeo, "fn_max": fn_max, cls.friction.small: small}
    for parameter in cls.parameters:
        c.set(parameter.name, values[parameter.name])
    return c


def discrete(c) -> Discrete:
    mode, forward, backward, locked, free = (c.get(n) for n in ("mode", "startForward", "startBackward", "locked",
                                                                "free"))
    return Discrete(int(mode), bool(forward), bool(backward), bool(locked), bool(free))


def needed(seen: dict, inputs: tuple, pre, new) -> bool:
    """Whether an event iteration from ``pre`` to ``new`` asks for another: it changed the state, to one not seen at
    these inputs since they last changed (``seen``: the inputs and the states met; at held inputs the iteration
    would cycle, so it ends there)."""
    if seen.get("inputs") != inputs or seen.get("states", [None])[-1] != pre:
        seen.update(inputs=inputs, states=[pre])
    if new == pre or new in seen["states"]:
        return False
    seen["states"].append(new)
    return True


speeds = st.one_of(st.just(0.0), st.floats(-20, 20), st.floats(-1e-9, 1e-9))
point = st.tuples(speeds, st.floats(-50, 50), st.floats(-30, 30), st.one_of(st.just(0.0), st.floats(-0.5, 1.0)))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(name=st.sampled_from(sorted(ELEMENTS)), mu=st.lists(st.floats(0.05, 1.0), min_size=1, max_size=4),
       peak=st.floats(1.0, 2.0), cgeo=st.floats(0.0, 2.0), fn_max=st.floats(0.0, 50.0),
       small=st.sampled_from([1e10, 1e-3, 0.5]), points=st.lists(point, min_size=1, max_size=12))
def test_friction_is_msl_law_through_event_iterations(name, mu, peak, cgeo, fn_max, small, points):
    """A random sequence of points (relative speed and acceleration, lambda, f_normalized), an event iteration at
    each: the discrete state equals MSL's equations applied to the one before (the first: initial(), from mode 3),
    and the force, sa, its value at rest and maximum, lossPower and the constraint residual equal MSL's in it to
    1e-12 of their size."""
    _, _, normal, backward = ELEMENTS[name]
    rows = np.array([[2.0 * i, m] for i, m in enumerate(mu)])
    c = element(name, "; ".join(f"{w:.17g}, {m:.17g}" for w, m in rows), peak, cgeo, fn_max, small)
    c.initialize()
    first, second = c.quantities.flanges
    speed, zero, zero_max = c.friction.quantities.relative_velocity, *(("tau0", "tau0_max") if "tau0" in
                                                                      c._outputs else ("f0", "f0_max"))
    pre, seen = Discrete(3, False, False, False, False), {}
    entry: float | None = None  # sign(w_rel) where the transient configuration was entered, held while it lasts
    for step, (w, a, lam, u) in enumerate(points):
        values = {f"{first}.{c.quantities.velocity}": 1.0, f"{second}.{c.quantities.velocity}": 1.0 + w,
                  f"{first}.a": 0.5, f"{second}.a": 0.5 + a, "lambda": lam, "f_normalized": u}
        for variable, value in values.items():
            if variable in c._input_names:
                c.set(variable, value)
        w_rel, a_rel = c.get(speed), c.get(c.friction.acceleration)
        fn = fn_max * u if normal else 1.0
        scale = cgeo * fn if normal else 1.0
        tau0 = table_value(rows, 0.0) * scale
        tau0_max = peak * tau0
        free = normal and fn <= 0
        if step == 0:  # the first event mode is initial(), and the outputs before it show its result
            expected = event_iteration(pre, True, free, w_rel, 0.0, tau0, tau0_max, small)
            assert discrete(c) == expected
        else:
            tau = friction_force(pre, w_rel, rows, scale, lam, backward)
            sa = path_parameter(pre, w_rel, a_rel, tau, tau0_max, entry)
            expected = event_iteration(pre, False, free, w_rel, sa, tau0, tau0_max, small)
        changed = c.update_discrete_states()
        assert discrete(c) == expected and changed == needed(seen, (w, a, lam, u), pre, expected)
        if not transient(expected):
            entry = None
        elif expected != pre:
            entry = float(np.sign(w_rel))
        pre = expected
        tau = friction_force(pre, w_rel, rows, scale, lam, backward)
        sa = path_parameter(pre, w_rel, a_rel, tau, tau0_max, entry)
        size = 1.0 + abs(lam) + 2 * (fn_max * cgeo if normal else 1.0) + abs(a_rel)
        force = c.quantities.element_force
        for variable, value in ((force, tau), ("sa", sa), (zero, tau0), (zero_max, tau0_max),
                                ("lossPower", tau * w_rel), (f"{second}.{c.quantities.force}", tau),
                                (f"{first}.{c.quantities.force}", -tau)):
            assert math.isclose(c.get(variable), value, rel_tol=1e-12, abs_tol=1e-12 * size * (1 + abs(w_rel))), \
                variable
        assert c.get("residual_v") == c.get("constraintEquation") == (w_rel if pre.locked else lam)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(mu=st.lists(st.floats(0.05, 1.0), min_size=1, max_size=4), peak=st.floats(1.0, 30.0),
       cgeo=st.floats(0.0, 2.0), fn_max=st.floats(0.0, 50.0), small=st.sampled_from([1e10, 0.5]),
       points=st.lists(point, min_size=1, max_size=12))
def test_one_way_clutch_is_msl_law_through_event_iterations(mu, peak, cgeo, fn_max, small, points):
    """As for the other elements, with OneWayClutch's own equations (stuck, locked, startForward; free from
    f_normalized at each event iteration, sa of the configuration held)."""
    rows = np.array([[2.0 * i, m] for i, m in enumerate(mu)])
    c = OneWayClutch("c")
    for name, value in (("mu_pos", "; ".join(f"{w:.17g}, {m:.17g}" for w, m in rows)), ("peak", peak),
                        ("cgeo", cgeo), ("fn_max", fn_max), ("w_small", small)):
        c.set(name, value)
    c.initialize()
    pre, seen = OneWay(False, False, False, False), {}
    for step, (w, a, lam, u) in enumerate(points):
        for name, value in (("flange_a.w", 1.0), ("flange_b.w", 1.0 + w), ("flange_a.a", 0.5),
                            ("flange_b.a", 0.5 + a), ("lambda", lam), ("f_normalized", u)):
            c.set(name, value)
        w_rel, a_rel = c.get("w_rel"), c.get("a_rel")
        at = pre._replace(free=u <= 0)
        expected = one_way_iteration(pre, step == 0, w_rel, one_way_point(at, u, w_rel, a_rel, lam, rows, peak, cgeo,
                                                                          fn_max), small, u <= 0)
        if step == 0:  # the outputs before the first event mode show the initial equations' result
            assert tuple(bool(c.get(n)) for n in ("stuck", "locked", "startForward", "free")) == expected
        changed = c.update_discrete_states()
        assert tuple(bool(c.get(n)) for n in ("stuck", "locked", "startForward", "free")) == expected
        assert changed == (step == 0 or needed(seen, (w, a, lam, u), pre, expected))
        pre = expected
        values = one_way_point(pre, u, w_rel, a_rel, lam, rows, peak, cgeo, fn_max)
        size = 1.0 + abs(lam) + 2 * fn_max * cgeo * (1 + abs(u)) + abs(a_rel)
        for name in ("tau", "sa", "fn", "tau0", "tau0_max", "lossPower"):
            assert math.isclose(c.get(name), values[name], rel_tol=1e-12, abs_tol=1e-12 * size * (1 + abs(w_rel))), \
                name
        assert c.get("residual_v") == (w_rel if pre.locked else lam)


@pytest.mark.parametrize("name", sorted(ELEMENTS))
def test_a_bad_friction_table_is_refused_naming_it(name):
    table = ELEMENTS[name][1]
    for rows, words in (("0, 0.5; 0, 0.4", "must increase strictly"), ("", "has no rows"), ("0, x", "valid table")):
        with pytest.raises(Exception, match=f"{name} 'c': {table} = .*{words}"):
            element(name, rows, 1.0, 1.0, 1.0).initialize()


def two_inertias(j1: float, j2: float, slope: float, stop: float) -> System:
    s = System("two_inertias")
    ramp = s.add("ramp", Ramp(height=slope * stop, duration=stop))
    torque = s.add("torque", Torque())
    one = s.add("one", Constant(k=1.0))
    first = s.add("J1", Inertia(J=j1))
    second = s.add("J2", Inertia(J=j2))
    c = s.add("clutch", ClutchModel(mu_pos="0, 0.5", peak=1.2, fn_max=10.0))
    s.connect(ramp.y, torque.tau)
    s.connect(torque.flange, first.flange_a)
    s.connect(first.flange_b, c.flange_a)
    s.connect(c.flange_b, second.flange_a)
    s.connect(one.y, c.f_normalized)
    s.experiment(stop, 1e-2, "auto", tolerance=(1e-8, 1e-10))
    return s


def test_locked_torque_and_break_away_are_the_analytic_ones():
    """Two inertias (1 and 3 kg.m2) from rest, a torque 3·t N.m on the first, a clutch (tau0 = 5, tau0_max = 6 N.m)
    between them: locked, its torque is the reaction −T·J2/(J1 + J2) (the second inertia is accelerated with the
    first), until that reaches tau0_max at t* = 6·4/(3·3) s; then backward sliding at tau = −tau0. The locked torque,
    the break-away instant and the speeds at 4 s are the analytic ones."""
    j1, j2, k, stop = 1.0, 3.0, 3.0, 4.0
    result = two_inertias(j1, j2, k, stop).run()
    assert result.ok, result.message
    d, t_star = result.data, 6.0 * (j1 + j2) / (j2 * k)
    locked = d["time"] < t_star - 1e-6
    assert np.all(d["clutch.locked"][locked] == 1) and np.all(d["clutch.mode"][~locked] == -1)
    assert np.allclose(d["clutch.tau"][locked], -k * d["time"][locked] * j2 / (j1 + j2), rtol=1e-7, atol=1e-9)
    assert np.max(np.abs(d["clutch.w_rel"][locked])) < 1e-9
    assert any(abs(t - t_star) < 1e-8 and "clutch.indicator.slip" in names for t, names in result.events), result.events
    w_star = k * t_star ** 2 / (2 * (j1 + j2))
    w1 = w_star + (k * (stop ** 2 - t_star ** 2) / 2 - 5.0 * (stop - t_star)) / j1
    w2 = w_star + 5.0 * (stop - t_star) / j2
    assert math.isclose(d["J1.w"][-1], w1, rel_tol=1e-6) and math.isclose(d["J2.w"][-1], w2, rel_tol=1e-6)


@pytest.mark.parametrize("algorithm", ["jacobi", "newton"])
def test_a_master_that_cannot_solve_the_locked_torque_refuses_before_it_starts(algorithm):
    result = simulate(FOLDER, algorithm, local=True, stop=0.01)
    assert result.status == "error" and result.data is None
    assert "friction element 'clutch1', 'clutch2', 'clutch3'" in result.message
    assert f"algorithm '{algorithm}' cannot couple it exactly" in result.message and "monolithic" in result.message
    assert "--algorithm newton-friction" in result.message and "--fmi-version 3" in result.message


@pytest.mark.parametrize("name, rows", [("CoupledClutches", 1501), ("Brake", 2001), ("OneWayClutch", 2001)])
def test_msl_example_at_the_defaults_inside_the_reference_tube_with_its_modes(name, rows):
    """A shipped example under the default master through the FMUs: every compared signal inside the Modelica
    Association's tube; every mode column equal to the reference's at each of its rows not within SWITCH_WINDOW of
    a switch of the reference; the in-process run the same bits."""
    folder = f"scenarios/msl/{name}"
    path = f"{folder}/reference/{name}.csv"
    reference = read_msl_reference(path)
    compared = [c for c in open(f"{folder}/reference/comparisonSignals.txt").read().split() if c != "time"]
    result = simulate(folder)
    assert result.ok, result.message
    d = result.data
    ours, theirs = np.isin(d["time"], reference["time"]), np.isin(reference["time"], d["time"])
    assert ours.sum() == len(d) == rows
    switches = event_times(path)
    away = np.array([np.min(np.abs(switches - t)) > SWITCH_WINDOW for t in reference["time"][theirs]])
    for column in compared:
        if column.rsplit(".", 1)[1] in ("mode", "startForward", "startBackward"):
            mismatched = reference["time"][theirs][away & (d[column][ours] != reference[column][theirs])]
            assert mismatched.size == 0, (column, mismatched[:5])
        else:
            assert tube_violation(reference["time"], reference[column], d["time"], d[column]) == 0.0, column
    errors = {c: float(np.max(np.abs(d[c][ours] - reference[c][theirs]))) for c in compared
              if c.rsplit(".", 1)[1] not in ("mode", "startForward", "startBackward")}
    print(f"\n{name}: max abs error {errors}")
    assert np.array_equal(simulate(folder, local=True).data, d)


@pytest.mark.parametrize("name", ["CoupledClutches", "Brake", "OneWayClutch", "Backlash"])
def test_mechfmu_crosscheck_of_the_msl_friction_and_backlash_examples_passes(fmus, name):
    """`mechfmu crosscheck` of each whole example: the FMUs equal the in-process components bitwise, the result lies
    inside the Modelica Association's tube, and strict Jacobi agrees with libcosim where it applies (Backlash; a
    friction element's locked phase needs a master that solves it, which the table says)."""
    from mechfmu.crosscheck.tools import crosscheck, table

    pytest.importorskip("libcosimpy")
    comparisons = crosscheck(f"scenarios/msl/{name}")
    print("\n" + table(name, comparisons))
    assert all(c.passed for c in comparisons)
    judged = {c.pair: c for c in comparisons if c.tolerance is not None}
    assert [c.difference for pair, c in judged.items() if pair.endswith("FMUs vs in-process")] == [0.0]
    assert any("(tube)" in pair for pair in judged)
    libcosim = next(c for c in comparisons if c.pair == "strict Jacobi vs libcosim")
    assert (libcosim.tolerance is not None) == (name == "Backlash")


MASS = {"m": 1.0, "L": 0.2, "s_start": 0.1, "v_start": 2.0, "smax": 0.9, "smin": -0.5, "F_prop": 1.0,
        "F_Coulomb": 5.0, "F_Stribeck": 10.0, "fexp": 2.0}


def pushed_mass(drive: float) -> System:
    s = System("mass_with_stop")
    source = s.add("drive", Constant(k=drive))
    force = s.add("force", Force())
    mass = s.add("mass", MassWithStopAndFriction(**MASS))
    s.connect(source.y, force.f)
    s.connect(force.flange, mass.flange_a)
    s.experiment(1.0, 1e-2, "auto", tolerance=(1e-8, 1e-10))
    return s


def sliding(drive: float, event):
    """MSL's sliding mass (forward, Stribeck) under a constant drive, solved by scipy to rtol 1e-12 up to ``event``."""
    p = MASS

    def motion(t, y):
        return [y[1], (drive - (p["F_prop"] * y[1] + p["F_Coulomb"] + p["F_Stribeck"] * math.exp(-p["fexp"] * y[1])))
                / p["m"]]
    event.terminal = True
    return solve_ivp(motion, (0.0, 1.0), [p["s_start"], p["v_start"]], method="DOP853", rtol=1e-12, atol=1e-14,
                     events=event)


@pytest.mark.parametrize("drive", [0.0, 20.0])
def test_mass_with_stop_and_friction_against_the_independent_solution(drive):
    """Undriven, the mass slides forward on its Stribeck friction until it stops and locks (its friction force then
    the reaction, 0); driven by 20 N (more than f0_max = 15.015 N) it hits the upper stop (s + L/2 = smax), is
    reset there at rest (MSL's reinit: inelastic) and stays, held by its friction's reaction, 20 N. The monolithic
    master (Model Exchange: the switch located) and the co-simulation FMU on its own (its hybrid motion integrated
    within each step) agree with scipy's solution of MSL's equations: the switch within 1e-8 s, the rest position
    within 1e-9 m."""
    stop = MASS["smax"] - MASS["L"] / 2
    independent = sliding(drive, (lambda t, y: y[1]) if drive == 0.0 else (lambda t, y: y[0] - stop))
    switch, rest = independent.t_events[0][0], independent.y_events[0][0][0]
    for algorithm in ("auto", "jacobi"):
        result = pushed_mass(drive).run(algorithm=algorithm)
        assert result.ok, result.message
        d = result.data
        assert abs(d["mass.s"][-1] - rest) < 1e-9 and abs(d["mass.v"][-1]) < 1e-12, (algorithm, d["mass.s"][-1], rest)
        assert d["mass.locked"][-1] == 1.0 and d["mass.f"][-1] == drive
        assert d["mass.stopped"][-1] == (1.0 if drive else 0.0)
        if algorithm == "auto":
            assert result.algorithm == "monolithic"
            assert min(abs(t - switch) for t, _ in result.events) < 1e-8, (result.events, switch)


def test_a_mass_held_at_its_stop_leaves_it_when_pulled_beyond_its_static_friction():
    """Pushed onto the upper stop by 20 N, then from 0.5 s pulled back by 20 N (beyond f0_max = 15.015 N): it starts
    backward at 0.5 s and slides on its Stribeck friction; its position at 0.9 s is scipy's solution of MSL's
    backward sliding from rest at the stop within 1e-9 m, under the monolithic master and the co-simulation FMU
    alike; then it reaches the lower stop and is held there."""
    s = System("pulled_mass")
    drive = s.add("drive", Step(height=-40.0, offset=20.0, startTime=0.5))
    force = s.add("force", Force())
    mass = s.add("mass", MassWithStopAndFriction(**MASS))
    s.connect(drive.y, force.f)
    s.connect(force.flange, mass.flange_a)
    s.experiment(1.0, 1e-2, "auto", tolerance=(1e-8, 1e-10))
    p, stop = MASS, MASS["smax"] - MASS["L"] / 2

    def backward(t, y):
        friction = p["F_prop"] * y[1] - p["F_Coulomb"] - p["F_Stribeck"] * math.exp(-p["fexp"] * abs(y[1]))
        return [y[1], (-20.0 - friction) / p["m"]]
    expected = solve_ivp(backward, (0.5, 0.9), [stop, 0.0], method="DOP853", rtol=1e-12, atol=1e-14).y[0][-1]
    for algorithm in ("auto", "jacobi"):
        result = s.run(algorithm=algorithm)
        assert result.ok, result.message
        d = result.data
        at = int(np.argmin(np.abs(d["time"] - 0.9)))
        assert d["mass.s"][d["time"] <= 0.5][-1] == stop and d["mass.mode"][at] == -1.0
        assert abs(d["mass.s"][at] - expected) < 1e-9, (algorithm, d["mass.s"][at], expected)
        lower = MASS["smin"] + MASS["L"] / 2
        assert d["mass.s"][-1] == lower and d["mass.v"][-1] == 0.0 and d["mass.locked"][-1] == 1.0
