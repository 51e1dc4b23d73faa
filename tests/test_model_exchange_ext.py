"""CoordinateSpringDamperExt's Model Exchange form: its friction and limit-stop modes are discrete states that
change only in event mode, its indicators are those of the stored modes, and the monolithic master integrates
scenarios/limit_stops and scenarios/stick_slip to their exact (piecewise) solutions. Exudyn's end-of-step
switching (the co-simulation law) converges to the same solutions as its step shrinks."""
import sys

import numpy as np
import pytest
from mechfmu.components import COMPONENTS
from test_events import SHIPPED, SPRING, SPRING_PARAMETERS, piecewise_linear_motion, stick_slip_reference

from mechfmu.master.simulate import simulate

STOPS = {"useLimitStops": True, "limitStopsUpper": 0.1, "limitStopsLower": -0.1, "limitStopsStiffness": 1e4,
         "limitStopsDamping": 2.0}
FRICTION = {"fDynamicFriction": 5.0, "fStaticFrictionOffset": 5.0, "stickingStiffness": 1e4, "stickingDamping": 200.0,
            "exponentialDecayStatic": 0.05}


def model_exchange_ext(parameters: dict, s_b: float, v_b: float):
    """An Ext between a fixed flange_a and flange_b at (s_b, v_b), instantiated for Model Exchange and through the
    initial event mode."""
    ext = COMPONENTS["CoordinateSpringDamperExt"]("ext")
    for name, value in parameters.items():
        ext.set(name, value)
    ext.initialize(0.0)
    ext.in_model_exchange = True
    ext.set_many(["flange_b.s", "flange_b.v"], [s_b, v_b])
    ext.update_discrete_states()
    return ext


def test_a_stop_acts_from_the_event_mode_at_its_crossing_on():
    """Moved beyond the upper stop in continuous time the force stays 0 (the mode is the stored one) while the
    indicator says the crossing (< 0); event mode sets the contact, and the force is the stop's law."""
    ext = model_exchange_ext(STOPS, 0.05, 1.0)
    ext.set_time(0.01)
    ext.set_many(["flange_b.s"], [0.1002])
    assert ext.get("f") == 0.0 and ext.get("limitStopState") == 0.0
    assert ext.event_indicators()[1] == pytest.approx(-2e-4)  # upperStop = 0.1 - q
    ext.update_discrete_states()
    assert ext.get("limitStopState") == pytest.approx(2e-4)
    assert ext.get("f") == pytest.approx(2e-4 * 1e4 + 1.0 * 2.0)


def test_a_stop_touched_exactly_is_in_contact_as_its_indicator_says():
    """At q = limitStopsUpper the free indicator is 0, on the contact side of FMI 2.0's domains (z <= 0): event mode
    there sets the contact (a penetration of 0 kept as the least positive double), so the crossing cannot be lost
    when an integrator lands on the stop exactly (scenarios/limit_stops does, at a communication point); the contact
    indicator then reads the least positive normal double, its own contact side (z > 0), so that going on into the
    stop is no second crossing."""
    ext = model_exchange_ext(STOPS, 0.1, 1.0)
    assert ext.event_indicators()[1] == sys.float_info.min
    assert ext.get("limitStopState") > 0.0
    assert ext.get("f") == 2.0  # the stop's damping at 1 m/s; its spring at 0 penetration
    ext.set_time(0.01)
    ext.set_many(["flange_b.s", "flange_b.v"], [0.0999, -1.0])  # back inside: in contact the indicator is
    assert ext.event_indicators()[1] == pytest.approx(-1e-4)    # q - limitStopsUpper, <= 0 out of it
    ext.update_discrete_states()
    assert ext.get("limitStopState") == 0.0 and ext.get("f") == 0.0
    assert ext.event_indicators()[1] == pytest.approx(1e-4)  # free again: limitStopsUpper - q


def test_friction_breaks_away_and_sticks_again_only_in_event_mode():
    """Sticking at 0: pulled 1.5 mm (15 N > f_d + f_so = 10 N) the bristle force acts on until event mode, the
    margin indicator below 0; then it slips (force S(v)). With v reversed the slipping indicator turns negative;
    event mode sticks again with the bristles preloaded at the limit, the slip's direction."""
    ext = model_exchange_ext(FRICTION, 0.0, 0.0)
    ext.set_time(0.01)
    ext.set_many(["flange_b.s", "flange_b.v"], [1.5e-3, 0.0])
    assert ext.get("f") == pytest.approx(15.0) and ext.get("frictionMode") == 0.0
    assert ext.event_indicators()[2] == pytest.approx(-5.0)
    ext.set_many(["flange_b.v"], [0.01])
    ext.update_discrete_states()
    slip = 5.0 + 5.0 * np.exp(-0.01 / 0.05)
    assert ext.get("frictionMode") == pytest.approx(slip) and ext.get("f") == pytest.approx(slip)
    assert ext.event_indicators()[2] == pytest.approx(10.0 * 0.01 / 0.05)  # slipping: > 0 while v keeps on
    ext.set_time(0.02)
    ext.set_many(["flange_b.s", "flange_b.v"], [2e-3, -1e-6])
    assert ext.event_indicators()[2] < 0.0
    assert ext.get("frictionMode") == pytest.approx(slip)  # still slipping until event mode
    ext.update_discrete_states()
    assert ext.get("frictionMode") == 0.0
    assert abs(ext.get("f")) <= 10.0 and ext.get("f") == pytest.approx(10.0)
    assert ext.event_indicators()[2] >= 0.0


def test_evaluations_of_the_ext_change_no_mode():
    """A solver's trial points beyond a stop and past breakaway change nothing: only event mode does."""
    ext = model_exchange_ext({**STOPS, **FRICTION}, 0.0, 0.0)
    before = dict(ext.state)
    for s_b in (0.5, -0.5, 0.002):
        ext.set_many(["flange_b.s", "flange_b.v"], [s_b, 0.3])
        ext.current_outputs(), ext.event_indicators(), ext.derivatives()
    assert ext.state == before


@pytest.mark.parametrize("case, parameters", [(SHIPPED, None), (SPRING, SPRING_PARAMETERS)], ids=["shipped", "spring"])
@pytest.mark.slow
def test_monolithic_limit_stops_follow_the_exact_solution(case, parameters):
    """scenarios/limit_stops over its 2 s against the exact piecewise solution (matrix exponential per phase,
    contact instants by Brent's method): every contact change located, the position within 1e-7 m (measured
    3.1e-12 m shipped, 8.1e-12 m spring at ode_rtol 1e-10) and the instants within 1e-8 s (3.7e-12 s, 2.4e-11
    s). The shipped case lands on its first stop exactly at a communication point."""
    result = simulate("scenarios/limit_stops", "monolithic", local=True, step=1e-3, ode_rtol=1e-10,
                      ode_atol=1e-12, parameters=parameters)
    assert result.ok, result.message
    exact, instants = piecewise_linear_motion(result.data["time"], **case)
    error = np.max(np.abs(result.data["mass.s"] - exact))
    located = [t for t, _ in result.events]
    print(f"\nmax |x - exact| {error:.2e} m; {len(located)} events; {result.counters}")
    assert error <= 1e-7
    assert len(located) == len(instants)
    assert max(abs(a - b) for a, b in zip(located, instants)) <= 1e-8


@pytest.mark.slow
def test_monolithic_stick_slip_switches_at_the_exact_instants():
    """scenarios/stick_slip over its 5 s: every breakaway and sticking within 1e-6 s of scipy's piecewise solution
    (Radau, rtol 1e-12; tests/test_events.py), measured 1.5e-13 s at ode_rtol 1e-10. The communication step only
    sets the result grid (1e-2 s here)."""
    result = simulate("scenarios/stick_slip", "monolithic", local=True, step=1e-2, ode_rtol=1e-10, ode_atol=1e-12)
    assert result.ok, result.message
    reference = stick_slip_reference(result.end_time)
    located = [t for t, _ in result.events]
    print(f"\ndifferences {[a - b for a, b in zip(located, reference)]}")
    assert len(located) == len(reference) == 6
    assert all(what == "friction.indicator.friction" for _, what in result.events)
    assert max(abs(a - b) for a, b in zip(located, reference)) <= 1e-6


@pytest.mark.slow
def test_exudyns_end_of_step_switching_converges_to_the_model_exchange_law():
    """Exudyn's law switches a mode at the end of the step in which it changed (up to one step late) and sticks
    again preloaded with the last step's slip force: first order in the step. Co-simulated (Jacobi) at h = 4e-4,
    2e-4, 1e-4 s, scenarios/limit_stops with the spring case departs from the exact solution of the Model
    Exchange law by 8.4e-3, 4.3e-3, 2.2e-3 m over 1 s, halving with h (ratio >= 1.8 asserted), while the
    monolithic run of the Model Exchange form is within 1e-7 m of it."""
    errors = []
    for step in (4e-4, 2e-4, 1e-4):
        result = simulate("scenarios/limit_stops", "jacobi", local=True, step=step, stop=1.0,
                          parameters=SPRING_PARAMETERS)
        assert result.ok, result.message
        exact, _ = piecewise_linear_motion(result.data["time"], **SPRING)
        errors.append(float(np.max(np.abs(result.data["mass.s"] - exact))))
    print(f"\nerrors {errors}")
    assert errors[0] >= 1.8 * errors[1] >= 1.8 ** 2 * errors[2]


@pytest.mark.slow
def test_exudyns_stick_slip_instants_converge_to_the_model_exchange_law():
    """The stick/slip instants of Exudyn's law (the first result row with the new mode; linear-implicit coupling)
    approach those of the Model Exchange law as h shrinks: at h = 4e-4, 2e-4, 1e-4 s the largest difference over
    3 s is 1.1e-3, 5.6e-4, 3.6e-4 s (a few steps each, growing from cycle to cycle: the switch acts a step late
    and the preload differs by O(h), which moves the next sticking position); asserted within 4·h and shrinking by
    a factor >= 1.4 per halving."""
    reference = stick_slip_reference(3.0)
    worst = []
    for step in (4e-4, 2e-4, 1e-4):
        result = simulate("scenarios/stick_slip", "linear-implicit", local=True, step=step, stop=3.0)
        assert result.ok, result.message
        mode, time = result.data["friction.frictionMode"], result.data["time"]
        changes = time[1:][(mode[1:] == 0) != (mode[:-1] == 0)]
        assert len(changes) == 4
        worst.append(float(np.max(np.abs(changes - reference[:4]))))
        assert worst[-1] <= 4 * step
    print(f"\nlargest differences {worst}")
    assert worst[0] >= 1.4 * worst[1] >= 1.4 ** 2 * worst[2]
