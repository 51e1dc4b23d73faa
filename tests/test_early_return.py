"""Event location by FMI 3.0 early return (mechfmu/master/algorithms/early_return.py), against the monolithic
master's event times, against event location by rollback, and its refusals."""
from __future__ import annotations

import math

import numpy as np
import pytest

from mechfmu import CoordinateSpringDamperExt, Fixed, Mass, System
from mechfmu.fmu.build import fmu_path
from mechfmu.master.algorithms.early_return import Bracket
from mechfmu.master.fmi3_instance import Fmi3Instance
from mechfmu.master.simulate import simulate
from mechfmu.master.slaves import SlaveError

#: the co-simulation both locators run: linear-implicit integrates a linear connector to ground without coupling
#: error, so between two events a body moves as in the monolithic run and the event times can agree to the bit
CO_SIMULATION = dict(algorithm="linear-implicit", step=1e-3, fmi_version=3, event_tolerance="1e-10",
                     estimate_error=False)
#: the monolithic reference: Radau far tighter than the event tolerance, the components in-process
REFERENCE = dict(algorithm="monolithic", local=True, ode_rtol="1e-10", ode_atol="1e-12", estimate_error=False)


@pytest.fixture(scope="module")
def monolithic_events(fmi3_fmus):
    """The monolithic master's event times per scenario (the components in-process), its integrator far tighter than
    the tolerance asked: at ode_rtol 1e-10 its event times lie within 5e-11 s of those at 1e-12."""
    found = {}
    for name in ("limit_stops", "elastogap"):
        result = simulate(f"scenarios/{name}", **REFERENCE)
        assert result.status == "ok", result.message
        found[name] = result.events
    return found


def nearest(time: float, what: str, reference: list[tuple[float, str]]) -> float:
    return min(abs(time - t) for t, w in reference if set(w.split(", ")) & set(what.split(", ")))


@pytest.mark.parametrize("name", ["limit_stops", "elastogap"])
def test_every_event_lies_within_1e_9_s_of_the_monolithic_one_without_a_rollback(name, monolithic_events):
    """Both locators find every contact change of the monolithic run; early return within 1e-9 s of each, without
    restoring a state, and with fewer FMU calls than rollback (which takes every FMU's step again per trial)."""
    reference = monolithic_events[name]
    early = simulate(f"scenarios/{name}", events="on", **CO_SIMULATION)
    rollback = simulate(f"scenarios/{name}", events="rollback", **CO_SIMULATION)
    assert early.status == rollback.status == "ok", (early.message, rollback.message)
    assert len(early.events) == len(rollback.events) == len(reference) >= 10
    assert early.counters["event_rollbacks"] == 0 and rollback.counters["event_rollbacks"] > 0
    assert early.counters["fmu_calls"] < rollback.counters["fmu_calls"]
    for time, what in early.events:
        assert nearest(time, what, reference) <= 1e-9, (time, what)
    for (time, what), (other, label) in zip(early.events, rollback.events):
        assert what == label and abs(time - other) <= 1e-9


def test_two_bodies_each_with_its_stops_the_later_body_taken_back_where_the_other_returns_earlier(fmi3_fmus,
                                                                                                   tmp_path):
    """Two masses between stops of their own (1 and 1.37 m/s, h = 1e-2 s): each body brackets its own contacts; where
    the second body's contact comes before the first's within a step, the first is restored and steps to it (the
    only rollbacks); every event within 1e-9 s of the monolithic run's."""
    system = System("two_stops", "two masses, each between its own stops")
    system.experiment(2.0, 1e-2, "linear-implicit", (1e-4, 1e-6))
    ground = system.add("ground", Fixed())
    for k, v in ((1, 1.0), (2, 1.37)):
        mass = system.add(f"mass{k}", Mass(m=1.0, v_start=v))
        stops = system.add(f"stops{k}", CoordinateSpringDamperExt(
            useLimitStops=True, limitStopsUpper=0.1, limitStopsLower=-0.1, limitStopsStiffness=1e4,
            limitStopsDamping=2.0))
        system.connect(ground.flange, stops.flange_a)
        system.connect(mass.flange_a, stops.flange_b)
    folder = system.write(tmp_path / "two_stops", fmu_folder=str(fmu_path("Mass").parent)).parent
    reference = simulate(folder, **REFERENCE).events
    result = simulate(folder, events="on", **{**CO_SIMULATION, "step": 1e-2})
    assert result.status == "ok", result.message
    assert len(result.events) == len(reference) > 30
    assert 0 < result.counters["event_rollbacks"] < result.counters["events"]
    for time, what in result.events:
        assert nearest(time, what, reference) <= 1e-9, (time, what)


def test_two_rows_at_every_event_the_grid_kept(fmi3_fmus):
    """A row before and one after each event handled in event mode (as Modelica tools write them), the
    communication points all there; between events the rows are those of the grid."""
    result = simulate("scenarios/limit_stops", events="on", **CO_SIMULATION)
    times = result.data["time"]
    events = [t for t, _ in result.events]
    assert len(times) == 2001 + 2 * len(events)
    assert np.all(np.diff(times) >= 0)
    for t in events:
        assert np.count_nonzero(times == t) == 2
    grid = np.setdiff1d(times, events)
    assert np.allclose(grid, np.linspace(0.0, 2.0, 2001), rtol=0, atol=1e-12)


def test_with_fmi_2_fmus_events_on_locates_by_rollback_as_before(fmi3_fmus):
    """The FMI 2.0 FMUs cannot return early: events=on rolls back, event for event the run events=rollback makes,
    and adds no rows; events=early-return is refused, naming the FMU."""
    options = {**CO_SIMULATION, "fmi_version": 2}
    on = simulate("scenarios/limit_stops", events="on", **options)
    rollback = simulate("scenarios/limit_stops", events="rollback", **options)
    assert on.status == "ok" and on.counters["event_rollbacks"] > 0
    assert on.events == rollback.events and np.array_equal(on.data["time"], rollback.data["time"])
    assert len(on.data["time"]) == 2001
    refused = simulate("scenarios/limit_stops", events="early-return", **options)
    assert refused.status == "error"
    assert "events=early-return" in refused.message and "mass is not an FMI 3.0 co-simulation FMU" in refused.message


def test_an_algorithm_that_steps_fmus_one_after_another_locates_by_rollback(fmi3_fmus):
    """Gauss-Seidel steps each FMU with the others' newer values: no common step to cut, so rollback; asked for
    early return it says why not."""
    options = {**CO_SIMULATION, "algorithm": "gauss-seidel"}
    on = simulate("scenarios/limit_stops", events="on", **options)
    assert on.status == "ok" and on.counters["event_rollbacks"] > 0 and on.counters["events"] > 0
    refused = simulate("scenarios/limit_stops", events="early-return", **options)
    assert refused.status == "error" and "does not step every FMU from the same values" in refused.message


def test_the_bracket_finds_a_zero_to_the_tolerance_from_the_ends_it_is_shown():
    """Illinois on a cubic with its zero inside a step: each answer is a time inside the step, the last ends the
    step at the bracket's right end (the answer the time it is at), within the tolerance after the exact zero."""
    start, h, zero = 2.0, 0.1, 2.0 + 0.0371

    def g(time: float) -> list[float]:
        return [(zero - time) * (1.0 + 30.0 * (time - start) ** 2)]

    bracket = Bracket(start, g(start), 1e-12)
    now, answers = start + h, 0
    while True:
        at = bracket.answer(now, g(now))
        assert at is not None and start < at <= start + h
        if at == now:
            break
        now, answers = at, answers + 1
    assert 0 <= now - zero <= 1e-12 and answers < 30
    assert bracket.answer(now, g(now)) == now


def test_an_internal_step_without_a_zero_moves_the_bracket_s_left_end():
    """Intermediate inputs: the body reports each internal step's end; one before the zero asks for nothing and
    becomes the bracket's left end, so the trials after the crossing lie inside the last internal step."""
    bracket = Bracket(0.0, [1.0], 1e-12)
    assert bracket.answer(0.004, [0.6]) is None and bracket.lo == 0.004
    at = bracket.answer(0.01, [-0.4])
    assert at is not None and 0.004 < at < 0.01


def test_no_crossing_asks_for_nothing():
    bracket = Bracket(0.0, [1.0, -2.0], 1e-9)
    assert bracket.answer(0.1, [0.5, -1.0]) is None and bracket.trials == 0


class ReturnsEarly:
    """fmpy's FMU3Slave as far as ``Fmi3Instance.doStep`` uses it, returning early by itself at 0.05 s."""

    def doStep(self, t, h):
        return False, False, True, 0.05


def test_an_fmu_returning_early_in_a_run_without_events_stops_it_with_the_time():
    instance = Fmi3Instance.__new__(Fmi3Instance)
    instance._fmu, instance.name, instance.on_intermediate, instance.callback_error = ReturnsEarly(), "body", None, None
    with pytest.raises(SlaveError, match=r"body: returned early at t=0\.05 s .* run with events=on"):
        instance.doStep(0.0, 0.1)
    instance.on_intermediate = lambda now: None
    instance.doStep(0.0, 0.1)
    assert instance.returned == (False, False, True, 0.05)
    assert math.isclose(instance.returned[3], 0.05)
