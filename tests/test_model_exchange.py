"""The components' Model Exchange form (components/model_exchange.py) and the monolithic master that integrates
it: derivatives are the laws, evaluations have no side effect, time events and left limits, bad states refused by
name, and the monolithic runs against closed-form solutions."""
import copy
import math
import re
from pathlib import Path

import numpy as np
import pytest
from mechfmu.components import COMPONENTS, ComponentError
from scipy.integrate import solve_ivp

from mechfmu.master.simulate import simulate
from mechfmu.validation.analytic import two_mass_oscillator_positions

ROOT = Path(__file__).resolve().parent.parent


def started(model: str, **parameters):
    component = COMPONENTS[model]("it")
    for name, value in {**COMPONENTS[model].example_parameters, **parameters}.items():
        component.set(name, value)
    component.initialize(0.0)
    return component


@pytest.mark.parametrize("model", sorted(m for m in COMPONENTS if not COMPONENTS[m].co_simulation_only))
def test_evaluations_change_nothing(model):
    """A solver evaluates at trial points it rejects: derivatives, indicators and outputs leave the component
    as it was (its whole state: values, hidden state, time)."""
    component = started(model)
    component.set_time(0.0125)
    component.set_continuous_states([x + 0.01 for x in component.get_continuous_states()])
    before = copy.deepcopy(component.get_state())
    for _ in range(2):
        component.derivatives()
        component.event_indicators()
        component.current_outputs()
        component.next_time_event()
    assert component.get_state() == before
    assert len(component.derivatives()) == len(component.continuous_states)
    assert len(component.event_indicators()) == len(component.indicator_names())


def test_a_mass_is_its_law_and_integrates_to_the_closed_form():
    """der(s, v) = (v, (f_drive − fa − fb)/m); under a ramp force f = 6·t N (m = 2 kg, at rest) the ODE
    integrated by scipy at rtol 1e-12 gives s = t³/2 to 1e-10 m."""
    mass = started("Mass", m=2.0, f_drive=0.0)
    mass.set_many(["flange_a.f", "flange_b.f", "f_drive"], [1.5, -0.5, 4.0])
    mass.set_continuous_states([0.3, -1.0])
    assert mass.derivatives() == [-1.0, (4.0 - 1.5 + 0.5) / 2.0]

    def rhs(t, x):
        mass.set_time(t)
        mass.set_continuous_states(list(x))
        mass.set_many(["flange_a.f", "flange_b.f", "f_drive"], [0.0, 0.0, 6.0 * t])
        return mass.derivatives()
    mass = started("Mass", m=2.0)
    solution = solve_ivp(rhs, (0.0, 1.0), [0.0, 0.0], rtol=1e-12, atol=1e-14, dense_output=True)
    times = np.linspace(0.0, 1.0, 11)
    assert np.max(np.abs(solution.sol(times)[0] - times ** 3 / 2)) < 1e-10


def test_a_rigid_body_quaternion_is_drawn_back_to_the_unit_sphere():
    """The rotation term is orthogonal to q; the stabilization makes d|q|²/dt = 2γ(1 − |q|²)|q|²; the outputs
    report the normalized quaternion."""
    body = started("RigidBody")
    states = body.get_continuous_states()
    q = np.array(states[6:10]) * 1.1  # a solver's drift off the unit sphere
    body.set_continuous_states(states[:6] + list(q) + states[10:])
    dq = np.array(body.derivatives()[6:10])
    gamma = 10.0
    assert 2 * q @ dq == pytest.approx(2 * gamma * (1 - q @ q) * (q @ q), rel=1e-12)
    reported = np.array([body.get(f"orientation.{a}") for a in ("w", "x", "y", "z")])
    assert reported @ reported == pytest.approx(1.0, abs=1e-15)


def test_a_step_is_a_time_event_with_its_left_limit_until_handled():
    step = started("Step", height=2.0, offset=0.5, startTime=0.3)
    step.update_discrete_states()  # the event mode that ends FMI's initialization: it tells the next time event
    assert step.next_time_event() == 0.3
    step.set_time(0.3)
    assert step.get("y") == 0.5  # continuous-time mode at the event: the value before the jump
    step.update_discrete_states()  # event mode
    assert step.get("y") == 2.5 and step.next_time_event() is None


def test_a_periodic_table_has_time_events_in_every_period():
    table = started("Table", table="0, 0; 1, 1; 2, 0", extrapolation=3, startTime=0.0, offset=0.0)
    table.set_time(4.5)
    table.update_discrete_states()
    assert table.next_time_event() == 5.0


@pytest.mark.parametrize("values, problem", [
    ([0.0], "continuous states = [0] must be 2 values (s, v)"),
    ([0.0, math.nan], "state v = nan must be finite"),
])
def test_bad_states_are_refused_by_name_and_change_nothing(values, problem):
    mass = started("Mass")
    before = mass.get_continuous_states()
    with pytest.raises(ComponentError, match=re.escape(problem)):
        mass.set_continuous_states(values)
    assert mass.get_continuous_states() == before


def test_time_may_not_go_before_the_last_accepted_point():
    mass = started("Mass")
    mass.set_time(0.5)
    mass.completed_integrator_step()
    mass.set_time(0.6)
    with pytest.raises(ComponentError, match="time = 0.4 must be finite and not before 0.5 s"):
        mass.set_time(0.4)


def test_a_constraint_has_no_model_exchange_form_but_the_monolithic_master_solves_its_force(fmus):
    """It has no ODE form (its force is the unknown a solving master finds), which the component says; the monolithic
    master takes it as an algebraic part of the ODE (its co-simulation instance, its force solved at every point), so
    the run goes and the gear holds (tests/test_constraints.py measures it against the reduced ODE)."""
    reason = COMPONENTS["CoordinateConstraint"].co_simulation_only
    assert "algebraic constraint between bodies has no ODE form" in reason
    result = simulate(ROOT / "scenarios/geared_masses", "monolithic", stop=0.01)
    assert result.ok, result.message
    assert np.max(np.abs(result.data["gear.residual"])) < 1e-12


@pytest.mark.parametrize("scenario, stop", [("two_mass_oscillator", 0.6), ("elastogap", 0.6), ("limit_stops", 0.6),
                                            ("stick_slip", 1.5)])
@pytest.mark.slow
def test_the_fmus_as_model_exchange_fmus_give_the_in_process_run_bit_for_bit(fmus, scenario, stop):
    """The FMUs instantiated as fmi2ModelExchange: the same numbers through C doubles, so the same solver steps,
    events (contacts, stick/slip switches) and results."""
    through_fmus = simulate(ROOT / "scenarios" / scenario, "monolithic", stop=stop, step=1e-2)
    in_process = simulate(ROOT / "scenarios" / scenario, "monolithic", local=True, stop=stop, step=1e-2)
    assert through_fmus.ok and in_process.ok, through_fmus.message
    assert all(np.array_equal(through_fmus.data[n], in_process.data[n]) for n in in_process.data.dtype.names)
    assert through_fmus.events == in_process.events


def test_an_fmu_without_a_model_exchange_interface_is_refused(fmus, tmp_path):
    """A Co-Simulation-only FMU (Mass.fmu with its <ModelExchange> element removed, as another tool's could be)
    stops the run before it starts, naming the component and the FMU."""
    import shutil
    import zipfile

    (tmp_path / "fmus").mkdir()
    for model, path in fmus.items():
        if model != "Mass":
            shutil.copy(path, tmp_path / "fmus")
    with zipfile.ZipFile(fmus["Mass"]) as source, zipfile.ZipFile(tmp_path / "fmus" / "Mass.fmu", "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "modelDescription.xml":
                data = re.sub(rb"<ModelExchange[^>]*/>", b"", data)
            target.writestr(item, data)
    ssd = (ROOT / "scenarios/two_mass_oscillator/SystemStructure.ssd").read_text()
    (tmp_path / "SystemStructure.ssd").write_text(ssd.replace("../../fmus/", "fmus/"))
    result = simulate(tmp_path, "monolithic", stop=0.01)
    assert result.status == "error"
    assert re.search(r"mass\d: Mass.fmu is not a Model Exchange FMU", result.message), result.message


@pytest.mark.slow
def test_monolithic_two_mass_oscillator_against_its_closed_form(fmus):
    """No coupling error: the integrator's tolerance alone (rtol 1e-10) bounds the error, 1e-7 m."""
    result = simulate(ROOT / "scenarios/two_mass_oscillator", "monolithic", local=True, ode_rtol=1e-10,
                      ode_atol=1e-12)
    assert result.ok, result.message
    exact = two_mass_oscillator_positions(result.data["time"])
    names = [n for n in result.data.dtype.names if n.endswith(".s") and n.count(".") == 1]
    error = max(np.max(np.abs(result.data[n] - exact[i])) for i, n in enumerate(sorted(names)))
    assert error < 1e-7, error


def test_monolithic_damped_oscillator_against_its_closed_form(fmus):
    """m·x'' + d·x' + k·x = F from rest (m 5 kg, k 5000 N/m, d 80 N.s/m, F 1 N)."""
    result = simulate(ROOT / "scenarios/oscillator_linear", "monolithic", local=True, ode_rtol=1e-10,
                      ode_atol=1e-12)
    assert result.ok, result.message
    m, k, d, force = 5.0, 5000.0, 80.0, 1.0
    w0, zeta = math.sqrt(k / m), d / (2 * math.sqrt(k * m))
    wd, t = w0 * math.sqrt(1 - zeta ** 2), result.data["time"]
    exact = force / k * (1 - np.exp(-zeta * w0 * t) * (np.cos(wd * t) + zeta * w0 / wd * np.sin(wd * t)))
    assert np.max(np.abs(result.data["mass.s"] - exact)) < 1e-9


@pytest.mark.slow
def test_monolithic_elastogap_against_its_piecewise_reference(fmus):
    """The MSL ElastoGap example against scipy's piecewise integration of its two ODEs (restarted at every kink
    of the contact law; mechfmu/validation/event_references.py): every contact change and clamp switch located, the
    instants to 1e-8 s and the signals to 1e-7 (measured 2.1e-10 s and 5.9e-10 at ode_rtol 1e-10)."""
    from mechfmu.validation.event_references import elastogap_contact_changes, monolithic_example

    result = simulate(ROOT / "scenarios/elastogap", "monolithic", local=True, ode_rtol=1e-10, ode_atol=1e-12)
    assert result.ok, result.message
    reference = elastogap_contact_changes(with_modes=True)
    assert [label.replace("clamp", "indicator.damperLimit") for _, label in reference] == [e[1] for e in result.events]
    assert max(abs(a[0] - b[0]) for a, b in zip(result.events, reference)) < 1e-8
    for name, values in monolithic_example(result.data["time"]).items():
        if name != "events":
            assert np.max(np.abs(result.data[name] - values)) < 1e-7, name


@pytest.mark.slow
def test_monolithic_ball_drop_against_opensim(fmus):
    """Sphere on a half-space (Simbody's contact) with a free RigidBody: the centre within 1e-7 m of OpenSim 4.6's
    solution at accuracy 1e-10 and the contact onset and lift-off within 1e-8 s of its crossings (measured
    2.0e-12 m and 2.3e-13 s at ode_rtol 1e-10)."""
    pytest.importorskip("opensim")
    from mechfmu.validation.event_references import ball_drop_contact_changes, ball_drop_positions

    result = simulate(ROOT / "scenarios/ball_drop", "monolithic", local=True, ode_rtol=1e-10, ode_atol=1e-12)
    assert result.ok, result.message
    centre = np.stack([result.data[f"ball.position.{a}"] for a in "xyz"], axis=1)
    assert np.max(np.abs(centre - ball_drop_positions(result.data["time"]))) < 1e-7
    instants = [t for t, _ in result.events]
    reference = ball_drop_contact_changes()
    assert len(instants) == len(reference) and max(abs(a - b) for a, b in zip(instants, reference)) < 1e-8


@pytest.mark.parametrize("option", [{"events": "on"}, {"adaptive": "on"}, {"energy_audit": "on"},
                                    {"switching_tolerance": "1"}])
def test_options_of_a_coupling_are_refused_not_ignored(fmus, option):
    """The monolithic master has no coupling to audit and no macro step to control: such an option would do
    nothing, so it is refused with the reason."""
    result = simulate(ROOT / "scenarios/oscillator_linear", "monolithic", local=True, stop=0.01, **option)
    assert result.status == "error"
    assert "leave the options events, switching_tolerance, adaptive and energy_audit off" in result.message


def test_the_dense_output_is_scipys_bit_for_bit():
    """The master's evaluation of Radau's dense output (mechfmu/master/integrators.py) gives scipy's own bits at
    every point of 200 steps of a stiff nonlinear oscillator, for float and array times (its Radau and scipy's in
    lockstep)."""
    from scipy.integrate import Radau

    from mechfmu.master.integrators import dense_output
    from mechfmu.master.radau import Radau as OurRadau

    def fun(t, y):
        return np.array([y[1], -1e4 * y[0] - 3 * y[1] * abs(y[0])])
    solver, scipys_solver = (kind(fun, 0.0, np.array([1.0, 0.3]), 10.0, rtol=1e-8, atol=1e-10)
                             for kind in (OurRadau, Radau))
    compared = 0
    for _ in range(200):
        solver.step()
        scipys_solver.step()
        scipys, ours = scipys_solver.dense_output(), dense_output(solver)
        assert ours is not solver.dense_output()  # the master's own evaluation, not the integrator's object
        for t in np.linspace(solver.t_old, solver.t, 7):
            assert np.array_equal(scipys(t), ours(t)) and np.array_equal(scipys(float(t)), ours(float(t)))
            compared += 1
    assert compared == 1400
