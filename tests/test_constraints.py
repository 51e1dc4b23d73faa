"""CoordinateConstraint and the iterative couplings (Newton with rollback, fixed-point)."""
from __future__ import annotations

import math
import random
import warnings

import numpy as np
import pytest
from conftest import slow_but
from mechfmu.components import ComponentError, CoordinateConstraint
from scipy.integrate import solve_ivp

from mechfmu.master.simulate import simulate


def exudyn_constraint_equation(q0, q1, v0, v1, offset, factor, velocity_level):
    exu = pytest.importorskip("exudyn")  # the test extra; the master tests below run without it
    from exudyn.itemInterface import CoordinateConstraint as ExuConstraint
    from exudyn_states import two_coordinates

    sc, mbs, markers = two_coordinates(q0, q1, v0, v1)
    obj = mbs.AddObject(ExuConstraint(markerNumbers=markers, offset=offset, factor1=factor, velocityLevel=velocity_level))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mbs.Assemble()
    return (mbs.GetObjectOutput(obj, exu.OutputVariableType.ConstraintEquation),
            mbs.GetObjectOutput(obj, exu.OutputVariableType.Displacement),
            mbs.GetObjectOutput(obj, exu.OutputVariableType.Velocity))


def test_constraint_equation_equals_exudyn():
    """ConstraintEquation, Displacement, Velocity of exudyn 1.13.6 at 60 random states (position and
    velocity level, factors, offsets)."""
    rng = random.Random(6)
    for i in range(60):
        q0, q1, v0, v1 = (rng.uniform(-1, 1) for _ in range(4))
        offset, factor, velocity_level = rng.uniform(-0.5, 0.5), rng.choice((1.0, 2.0, -0.5)), i % 2 == 1
        ref = exudyn_constraint_equation(q0, q1, v0, v1, offset, factor, velocity_level)
        c = CoordinateConstraint("c")
        for name, value in dict(offset=offset, factorValue1=factor, velocityLevel=velocity_level).items():
            c.set(name, value)
        c.initialize()
        for name, value in {"flange_a.s": q0, "flange_b.s": q1, "flange_a.v": v0, "flange_b.v": v1}.items():
            c.set(name, value)
        assert (c.get("constraintEquation"), c.get("s_rel"), c.get("v_rel")) == pytest.approx(ref, rel=1e-14, abs=1e-15)


def test_constraint_forces_and_bad_user_functions():
    c = CoordinateConstraint("gear")
    c.set("factorValue1", 2.0)
    c.initialize()
    c.set("lambda", 3.0)
    assert (c.get("flange_a.f"), c.get("flange_b.f"), c.get("f")) == (-3.0, 6.0, 3.0)
    bad = CoordinateConstraint("drive")
    bad.set("offsetUserFunction", "sin(t) + mbs")
    with pytest.raises(ComponentError, match=r"CoordinateConstraint 'drive': offsetUserFunction = 'sin\(t\) \+ mbs' is invalid"):
        bad.initialize()


@pytest.mark.slow
def test_prescribed_motion_holds_the_constraint_and_gives_m_times_a():
    """10,000 steps of 1e-3 s: the position residual stays <= 1e-9 relative to the coordinate scale
    (0.1 m) at every communication point, without drift; the mass follows the closed form and the
    constraint force is −m·a (λ acts as −λ on the mass at flange_b, so m·a = −λ)."""
    result = simulate("scenarios/prescribed_motion", local=True)
    assert result.ok, result.message
    d, t = result.data, result.data["time"]
    assert len(t) == 10001
    w = 2 * math.pi * 0.25
    s, v, a = 0.05 * (1 - np.cos(w * t)), 0.05 * w * np.sin(w * t), 0.05 * w * w * np.cos(w * t)
    worst_residual = np.max(np.abs(d["constraint.residual"]))
    print(f"\nmax |residual| {worst_residual:.1e} m, |velocity residual| {np.max(np.abs(d['constraint.residual_v'])):.1e}"
          f" m/s, |s - closed form| {np.max(np.abs(d['mass.s'] - s)):.1e} m, |lambda + m*a| "
          f"{np.max(np.abs(d['constraint.f'][1:] + 5 * a[1:])):.1e} N (of {5 * 0.05 * w * w:.3f} N); "
          f"iterations per step {result.counters['iterations'] / result.counters['steps']:.2f}")
    assert worst_residual <= 1e-9 * 0.1
    assert np.max(np.abs(d["mass.s"] - s)) <= 1e-9 * 0.1
    assert np.max(np.abs(d["mass.v"] - v)) <= 1e-9
    assert np.max(np.abs(d["constraint.f"][1:] + 5 * a[1:])) <= 1e-4 * 5 * 0.05 * w * w


@pytest.mark.parametrize("local", [True, False], ids=["in-process", "fmus"])
def test_position_constraint_needs_no_offset_derivative(fmus, local):
    """Without offsetUserFunction_t (exudyn needs none at position level) the
    velocity companion of the position constraint uses the exact time derivative of
    offsetUserFunction (automatic differentiation, components/dual.py); before, it used 0 and gave
    v(1) = 0, f(1) = 2356 N (h = 1e-3) and 235.6 N (h = 1e-2), growing as 1/h.

    s(t) = 0.05·(1 − cos ωt), ω = π/2: v(1) = 0.05·ω = 0.0785398 m/s, a(1) = 0, so f(1) = λ(1) = −m·a(1) = 0.
    Tolerances: v(1) to 1e-10 m/s, newton's tolerance on the velocity residual, which is v − off_t(t)
    itself. f(1): λ is linear over a step with end position and velocity exact, so its end value is
    the linear moment fit of −m·a(t) over the last step: −m·A·ω³·h³/30 + O(h⁵), A = 0.05·ω² (the
    same value the shipped scenario with offsetUserFunction_t gives: −8.0e-8 N at h = 1e-2, −8.0e-11 N
    at h = 1e-3). Allowed beyond that: 1e-8 N, the rounding floor 6·m·ulp(s)/h² = 2.1e-10 N at
    h = 1e-3 (one ulp of the end position moves the fitted end force by 6·m/h²) times the few ulps the
    Newton solve's last correction leaves depending on the linear-algebra library (numpy 2.4.6:
    2.1e-9 N, ten ulps; earlier numpy 8e-11 N), and the O(h⁵) rest; the defect it guards against
    gave 2356 N."""
    m, w = 5.0, 2 * math.pi * 0.25
    amplitude = 0.05 * w * w
    forces = []
    for h in (1e-2, 1e-3):
        r = simulate("scenarios/prescribed_motion", stop=1.0, step=h, local=local,
                     parameters={"constraint": {"offsetUserFunction_t": ""}})
        assert r.ok, r.message
        v, f = float(r.data["mass.v"][-1]), float(r.data["constraint.f"][-1])
        expected_f = -m * amplitude * w ** 3 * h ** 3 / 30
        print(f"\nh={h:g}: v(1) = {v!r} (exact {0.05 * w!r}), f(1) = {f:.6g} N (scheme's {expected_f:.6g} N)")
        assert r.data["time"][-1] == 1.0
        assert abs(v - 0.05 * w) <= 1e-10
        assert abs(f - expected_f) <= 1e-8
        forces.append(abs(f))
    assert forces[1] < forces[0]  # no 1/h growth


def test_offset_derivative_is_exact_and_velocity_level_keeps_exudyn_semantics():
    """off_t without offsetUserFunction_t: the derivative of offsetUserFunction (exact to rounding,
    compared with the written derivative), 0 for a constant offset, and with velocityLevel exudyn's
    offset (offsetUserFunction unused)."""
    def residual_v(**parameters):
        c = CoordinateConstraint("c")
        for name, value in parameters.items():
            c.set(name, value)
        c.initialize(0.7)
        return c.get("residual_v")

    derived = residual_v(offset=0.1, offsetUserFunction="0.5*(1-cos(2*pi*0.25*t))*lOffset")
    written = residual_v(offset=0.1, offsetUserFunction="0.5*(1-cos(2*pi*0.25*t))*lOffset",
                         offsetUserFunction_t="0.5*lOffset*2*pi*0.25*sin(2*pi*0.25*t)")
    assert derived == pytest.approx(written, rel=1e-15) and derived != 0.0
    assert residual_v(offset=0.1) == 0.0
    assert residual_v(offset=0.1, velocityLevel=True, offsetUserFunction="3*t") == -0.1
    bad = CoordinateConstraint("kink")
    bad.set("offsetUserFunction", "sqrt(t)")
    bad.initialize(0.0)
    with pytest.raises(ComponentError, match="offsetUserFunction = 'sqrt\\(t\\)' has no time derivative here"):
        bad.get("residual_v")


def reduced_geared(times):
    m1, m2, k, d, c = 2.0, 1.0, 100.0, 1.0, 5.0
    sol = solve_ivp(lambda t, y: [y[1], (-4 * k * y[0] - (4 * d + c) * y[1]) / (4 * m1 + m2)], (0, times[-1]),
                    [0.05, 0.0], rtol=1e-12, atol=1e-14, t_eval=times, method="DOP853")
    return sol.y


@pytest.mark.slow
def test_geared_masses_match_the_reduced_ode():
    """Newton on λ and on every connection (implicit trapezoidal coupling): second order; at h = 1e-3 the
    error to the reduced ODE (scipy, rtol 1e-12) is ~9e-7 m; halving h divides it by ~4. The gear
    constraint holds to 1e-9 relative at every point."""
    errors = []
    for h in (1e-3, 5e-4):
        result = simulate("scenarios/geared_masses", step=h, local=True)
        assert result.ok, result.message
        d = result.data
        x, _ = reduced_geared(d["time"])
        errors.append(max(np.max(np.abs(d["mass2.s"] - x)), np.max(np.abs(d["mass1.s"] - 2 * x))))
        assert np.max(np.abs(d["gear.residual"])) <= 1e-9 * 0.1
        print(f"\nh={h:g}: max |position error| {errors[-1]:.2e} m, counters {result.counters}")
    assert errors[0] <= 2e-6
    assert 3.0 < errors[0] / errors[1] < 5.0


@pytest.mark.parametrize("local", slow_but([True, False], False), ids=["in-process", "fmus"])
@pytest.mark.slow
def test_the_monolithic_master_solves_the_constraints_at_every_point(fmus, local):
    """One Radau integration (ode_rtol 1e-8) with each constraint's force solved at every point it evaluates (the
    constraint differentiated to the accelerations, stabilized; mechfmu/master/constraint_forces.py), 2 s:
    - the gear follows the reduced ODE (scipy, rtol 1e-12) within 1e-8 m (measured 1.2e-10 m) and holds 2·s2 = s1 to
      1e-9 of its 0.1 m scale (measured 2e-16 m);
    - the prescribed motion (an offset in time: the constraint stepped to each evaluation's time) is the closed form
      within 1e-9 m and 1e-8 m/s (measured 3e-12 m, 1e-9 m/s), its force −m·a within 1e-3 of its amplitude
      (measured 1.6e-5 N of 0.62 N: the acceleration at a communication point from the interpolated state);
    - the belt's velocity constraint holds to 1e-9 m/s through every stick/slip switch (measured 1.2e-13 m/s);
    through the FMUs the in-process numbers bit for bit (the same C behind both)."""
    geared = simulate("scenarios/geared_masses", "monolithic", local=local, stop=2.0, estimate_error=False)
    assert geared.ok, geared.message
    x, _ = reduced_geared(geared.data["time"])
    assert max(np.max(np.abs(geared.data["mass2.s"] - x)), np.max(np.abs(geared.data["mass1.s"] - 2 * x))) < 1e-8
    assert np.max(np.abs(geared.data["gear.residual"])) <= 1e-9 * 0.1
    prescribed = simulate("scenarios/prescribed_motion", "monolithic", local=local, stop=2.0, estimate_error=False)
    assert prescribed.ok, prescribed.message
    d, t, w = prescribed.data, prescribed.data["time"], 2 * math.pi * 0.25
    s, v, a = 0.05 * (1 - np.cos(w * t)), 0.05 * w * np.sin(w * t), 0.05 * w * w * np.cos(w * t)
    assert np.max(np.abs(d["mass.s"] - s)) < 1e-9 and np.max(np.abs(d["mass.v"] - v)) < 1e-8
    assert np.max(np.abs(d["constraint.f"][1:] + 5 * a[1:])) <= 1e-3 * 5 * 0.05 * w * w
    belt = simulate("scenarios/belt_friction", "monolithic", local=local, stop=0.5, estimate_error=False)
    assert belt.ok and len(belt.events) >= 3, belt.message
    assert np.max(np.abs(belt.data["belt.v"] - 4.0)) <= 1e-9
    if not local:
        in_process = [simulate(f"scenarios/{name}", "monolithic", local=True, stop=0.3, estimate_error=False)
                      for name in ("geared_masses", "prescribed_motion")]
        through_fmus = [simulate(f"scenarios/{name}", "monolithic", stop=0.3, estimate_error=False)
                        for name in ("geared_masses", "prescribed_motion")]
        assert all(a.data.tobytes() == b.data.tobytes() for a, b in zip(in_process, through_fmus))


@pytest.mark.slow
def test_belt_friction_matches_exudyn():
    """Velocity-level belt drive + bristle friction + spring (exudyn's massSpringFrictionInteractive),
    first second. Tolerance by halving both: our error must shrink with h and be explained by the two
    solutions' own step-halving differences."""
    pytest.importorskip("exudyn")
    from mechfmu.validation.exudyn_model import exudyn_solution
    stop = 1.0
    refs = [exudyn_solution("scenarios/belt_friction", step, stop=stop) for step in (2.5e-5, 1.25e-5)]
    ours = [simulate("scenarios/belt_friction", step=h, stop=stop, local=True) for h in (2e-4, 1e-4)]
    assert all(r.ok for r in ours), [r.message for r in ours]
    t_ref, p_ref = refs[1].time, refs[1].bodies["mass"][0]
    err = [float(np.max(np.abs(np.interp(t_ref, r.data["time"], r.data["mass.s"]) - p_ref))) for r in ours]
    own = float(np.max(np.abs(np.interp(t_ref, ours[0].data["time"], ours[0].data["mass.s"])
                              - np.interp(t_ref, ours[1].data["time"], ours[1].data["mass.s"]))))
    exudyn_own = float(np.max(np.abs(np.interp(t_ref, refs[0].time, refs[0].bodies["mass"][0]) - p_ref)))
    belt_speed = ours[1].data["belt.v"]
    print(f"\n|mass - exudyn| {err[0]:.2e} (h=2e-4), {err[1]:.2e} (h=1e-4); halving estimates ours {own:.2e}, "
          f"exudyn {exudyn_own:.2e}; range {np.ptp(p_ref):.3f} m; belt speed {belt_speed.min():.12f}.."
          f"{belt_speed.max():.12f} m/s; counters {ours[1].counters}")
    assert np.max(np.abs(belt_speed - 4.0)) <= 1e-9
    assert err[1] <= 0.75 * err[0]
    assert err[1] <= 2.0 * (own + exudyn_own)
    assert err[1] <= 2e-3


@pytest.mark.slow
def test_stiff_coupling_where_jacobi_diverges():
    """two_mass_oscillator with a 1e6 N/m middle spring at h = 1e-3 (ω·h ≈ 1.4): Jacobi and
    linear-implicit blow up; fixed-point (trapezoidal, Aitken) and Newton (implicit trapezoidal) stay
    bounded and conserve the energy."""
    params = {"spring2": {"stiffness": 1e6}}

    def energy(d):
        k, kc = 4 * math.pi ** 2, 1e6
        return (0.5 * d["mass1.v"] ** 2 + 0.5 * d["mass2.v"] ** 2 + 0.5 * k * d["mass1.s"] ** 2
                + 0.5 * kc * (d["mass2.s"] - d["mass1.s"]) ** 2 + 0.5 * k * d["mass2.s"] ** 2)

    with np.errstate(over="ignore", invalid="ignore"):
        for algorithm in ("jacobi", "linear-implicit"):
            r = simulate("scenarios/two_mass_oscillator", algorithm=algorithm, step=1e-3, stop=2.0, local=True,
                         parameters=params)
            grown = np.nanmax(energy(r.data)) / energy(r.data)[0]
            print(f"\n{algorithm}: {r.status} ({r.message[:60]}...), energy grew x{grown:.1e}")
            assert not r.ok or grown > 1e10
    for algorithm, options in (("fixed-point", {}), ("fixed-point", {"order": "gauss-seidel"}),
                               ("newton", {"coupling": "implicit"})):
        r = simulate("scenarios/two_mass_oscillator", algorithm=algorithm, step=1e-3, stop=2.0, local=True,
                     parameters=params, **options)
        assert r.ok, r.message
        e = energy(r.data)
        per_step = r.counters["iterations"] / r.counters["steps"]
        print(f"{algorithm} {options}: energy drift {np.max(np.abs(e - e[0])) / e[0]:.1e} relative, {per_step:.2f} iterations per "
              f"step, counters {r.counters}")
        assert np.max(np.abs(e - e[0])) <= 1e-6 * e[0]


def test_non_convergence_is_reported_and_results_kept():
    r = simulate("scenarios/two_mass_oscillator", algorithm="fixed-point", step=1e-3, stop=1.0, local=True,
                 parameters={"spring2": {"stiffness": 1e8}}, max_iterations="3", relaxation="none")
    assert r.status == "error" and "did not converge at t=0 s" in r.message
    assert r.data is not None and len(r.data) >= 1
    r = simulate("scenarios/geared_masses", step=1e-3, stop=1.0, local=True, max_iterations="1", tolerance="1e-30")
    assert r.status == "error" and "newton coupling did not converge at t=0 s" in r.message
    with pytest.raises(ValueError, match="algorithm 'newton': max_iterations = '0' must be >= 1"):
        simulate("scenarios/geared_masses", local=True, max_iterations="0")


def test_newton_through_fmus_equals_in_process(fmus):
    """Rollback through fmpy (get/set/free FMUstate) gives the in-process result bit for bit."""
    runs = [simulate("scenarios/geared_masses", step=1e-3, stop=0.3, local=local) for local in (False, True)]
    assert all(r.ok for r in runs), [r.message for r in runs]
    assert runs[0].counters["rollbacks"] == runs[1].counters["rollbacks"] > 0
    assert all((runs[0].data[n] == runs[1].data[n]).all() for n in runs[0].data.dtype.names)


@pytest.mark.slow
def test_fixed_point_orders_converge_to_the_same_trapezoidal_solution():
    """Jacobi- and Gauss-Seidel-ordered fixed-point iterations solve the same implicit step: on the
    two-mass oscillator they agree to the iteration tolerance, and halving h divides the error to the
    closed form by 4 (second order)."""
    runs = {}
    for order in ("jacobi", "gauss-seidel"):
        for h in (1e-3, 5e-4):
            r = simulate("scenarios/two_mass_oscillator", algorithm="fixed-point", step=h, stop=1.0, local=True, order=order)
            assert r.ok, r.message
            t = r.data["time"]
            exact = 0.5 * np.cos(2 * np.pi * t) + 0.5 * np.cos(6 * np.pi * t)
            runs[order, h] = (r.data["mass1.s"], float(np.max(np.abs(r.data["mass1.s"] - exact))))
    assert np.max(np.abs(runs["jacobi", 1e-3][0] - runs["gauss-seidel", 1e-3][0])) < 1e-8
    for order in ("jacobi", "gauss-seidel"):
        ratio = runs[order, 1e-3][1] / runs[order, 5e-4][1]
        print(f"\n{order}: errors {runs[order, 1e-3][1]:.2e}, {runs[order, 5e-4][1]:.2e} (ratio {ratio:.2f})")
        assert 3.5 < ratio < 4.5


@pytest.mark.parametrize("scenario, constraint", [("prescribed_motion", "constraint"), ("geared_masses", "gear"),
                                                  ("belt_friction", "beltDrive")])
def test_constraint_scenarios_are_refused_by_algorithms_that_cannot_enforce_them(scenario, constraint):
    """Without a constraint-solving master lambda stays 0 and the constraint is violated (0.1 m in
    prescribed_motion): every such algorithm refuses, naming the constraint and the one that can."""
    for algorithm in ("jacobi", "gauss-seidel", "linear-implicit", "fixed-point"):
        r = simulate(f"scenarios/{scenario}", algorithm=algorithm, stop=0.01, local=True)
        assert r.status == "error" and r.data is None, (algorithm, r.status)
        assert f"constraint '{constraint}': its force 'lambda' is an input that the master must solve" in r.message
        assert f"algorithm '{algorithm}' cannot" in r.message and "enforces constraints: monolithic, newton" in r.message


def test_inactive_constraint_runs_under_any_algorithm():
    """activeConnector = false: the constraint exerts no force, lambda = 0 is its solution."""
    r = simulate("scenarios/prescribed_motion", algorithm="jacobi", stop=0.1, local=True,
                 parameters={"constraint": {"activeConnector": False}})
    assert r.ok, r.message
    assert not r.data["constraint.flange_a.f"].any()


@pytest.mark.slow
def test_constraint_under_jacobi_exits_non_zero_from_the_command_line(fmus):
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-m", "mechfmu.cli", "run", "scenarios/prescribed_motion", "--algorithm",
                           "jacobi"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1
    assert "constraint 'constraint': its force 'lambda' is an input that the master must solve" in proc.stdout
    assert "Use an algorithm that enforces constraints: monolithic, newton" in proc.stdout


@pytest.mark.parametrize("scenario", slow_but(["prescribed_motion", "geared_masses", "belt_friction"],
                                              "prescribed_motion", "geared_masses"))
def test_no_constraint_warning_under_newton_through_the_fmus(fmus, scenario):
    """The FMU warns only when nothing drives lambda (tests/test_c_host.py shows that warning); newton
    drives it from the first step on, so its runs carry no warning."""
    r = simulate(f"scenarios/{scenario}", stop=0.2)
    assert r.ok, r.message
    assert r.warnings == []


def test_constraint_fmu_warns_once_when_lambda_is_not_driven(fmus):
    """Through fmpy: a violated constraint whose lambda nobody writes warns once (status fmi2Warning,
    the step still succeeds); writing lambda after initialization, as a solving master does, silences it."""
    from mechfmu.master.fmu_slave import FmuSlave
    for drive in (False, True):
        slave = FmuSlave("c", fmus["CoordinateConstraint"])
        slave.set_parameters({"offset": 0.1})
        slave.enter_initialization(0.0, 1.0)
        slave.exit_initialization()
        for n in range(5):
            slave.set(["flange_b.s"], [0.05 * n])
            if drive:
                slave.set(["lambda"], [0.0])
            assert slave.do_step(n * 1e-3, 1e-3)
        slave.terminate()
        if drive:
            assert slave.warnings() == []
        else:
            assert len(slave.warnings()) == 1
            assert "'c': the constraint is violated by -0.1 m at t = 0.001 s" in slave.warnings()[0]
