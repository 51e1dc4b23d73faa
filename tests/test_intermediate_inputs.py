"""Intermediate inputs (FMI 3.0's intermediate update with intermediateVariableSetRequested): a body's FMU integrates
its step asking for its inputs at every stage (components/native/runtime.c runtime_integrate), and the master
answers with the forces of the connectors around it (mechfmu/master/algorithms/intermediate_inputs.py)."""
from __future__ import annotations

import math

import pytest
from fmpy import extract, read_model_description
from fmpy.fmi1 import FMICallException
from fmpy.fmi3 import FMU3Slave

from mechfmu.fmu import fmi3
from mechfmu.master.simulate import simulate


def mass_on_a_spring(required: bool, bad_set: bool = False, tolerance: float = 1e-12):
    """A Mass FMU (m = 1 kg, s(0) = 0.1 m) whose force input is a spring to ground k = 100 N/m evaluated in the
    intermediate update: (position after 1 s, refresh calls, errors logged)."""
    fmu = fmi3.fmu_dir() / "Mass.fmu"
    md = read_model_description(str(fmu))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    slave = FMU3Slave(guid=md.guid, unzipDirectory=extract(str(fmu)), modelIdentifier="Mass", instanceName="mass")
    calls, errors = [0], []

    def update(_env, _time, set_requested, _get, _finished, _can, requested, _when):
        requested[0] = False
        if set_requested:
            calls[0] += 1
            s = slave.getFloat64([vr["flange_a.s"]])[0]
            try:
                slave.setFloat64([vr["m" if bad_set else "flange_a.f"]], [100.0 * s])
            except FMICallException:  # refused: logged, and the step fails
                pass

    slave.instantiate(eventModeUsed=True, earlyReturnAllowed=True, intermediateUpdate=update,
                      requiredIntermediateVariables=[vr["flange_a.f"]] if required else None,
                      logMessage=lambda _e, status, _c, message: errors.append(message.decode()) if status else None)
    slave.setFloat64([vr["s_start"]], [0.1])
    slave.enterInitializationMode(tolerance=tolerance, startTime=0.0)
    slave.exitInitializationMode()
    slave.updateDiscreteStates()
    slave.enterStepMode()
    slave.setFloat64([vr["flange_a.f"]], [10.0])  # the spring's force at the start: held where none is asked for
    t = 0.0
    try:
        for _ in range(100):
            slave.doStep(t, 0.01)
            t += 0.01
        return slave.getFloat64([vr["flange_a.s"]])[0], calls[0], errors
    except Exception:  # noqa: BLE001 - the refused step: its messages say why
        return math.nan, calls[0], errors
    finally:
        slave.terminate()
        slave.freeInstance()


def test_a_mass_given_its_spring_force_at_every_stage_moves_as_the_harmonic_oscillator(fmi3_fmus):
    """s(t) = 0.1 cos(10 t): to 1e-11 m after 1 s (tolerance 1e-12), the force asked for at every stage; without
    the input among requiredIntermediateVariables the step holds the force (the FMI 2.0 step) and is far off."""
    exact = 0.1 * math.cos(10.0)
    position, calls, errors = mass_on_a_spring(required=True)
    assert abs(position - exact) < 1e-11 and calls >= 600 and not errors
    held, calls, _ = mass_on_a_spring(required=False)
    assert calls == 0 and abs(held - exact) > 1e-3


def test_only_inputs_may_be_set_where_the_inputs_are_asked_for(fmi3_fmus):
    position, _, errors = mass_on_a_spring(required=True, bad_set=True)
    assert any("only inputs may be set in the intermediate update" in e for e in errors), errors
    assert math.isnan(position)


#: the runs compared: stick_slip over its first three switches (stick to slip, slip to stick, and again)
STOP = {"ball_drop": 1.0, "stick_slip": 2.5}


@pytest.fixture(scope="module")
def reference_events(fmi3_fmus):
    """The monolithic master's event times (Radau at ode_rtol 1e-10, the components in-process: its event times lie
    within 1e-12 s of those through the FMI 3.0 Model Exchange FMUs at 1e-12)."""
    found = {}
    for name, stop in STOP.items():
        result = simulate(f"scenarios/{name}", algorithm="monolithic", local=True, stop=stop, ode_rtol="1e-10",
                          ode_atol="1e-12", estimate_error=False)
        assert result.status == "ok", result.message
        found[name] = result.events
    return found


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ball_drop", "stick_slip"])
def test_with_intermediate_inputs_every_event_lies_within_1e_9_s_of_the_monolithic_one(name, reference_events):
    """The contact's and the friction's events, which the coupling of a plain co-simulation step moves by up to
    0.1 s (ball_drop: four bounces at h = 1e-3 s where there are two), lie within 1e-9 s of the monolithic run's,
    found by early return without a rollback, at a macro step of 1e-2 s."""
    reference = reference_events[name]
    result = simulate(f"scenarios/{name}", algorithm="linear-implicit", step=1e-2, stop=STOP[name], fmi_version=3,
                      events="on", intermediate_inputs="on", event_tolerance="1e-10", estimate_error=False)
    assert result.status == "ok", result.message
    assert result.counters["event_rollbacks"] == 0
    assert [w for _, w in result.events] == [w for _, w in reference] and len(reference) >= 2
    for (time, _), (expected, _) in zip(result.events, reference):
        assert abs(time - expected) <= 1e-9


def test_intermediate_inputs_are_refused_where_events_are_not_located_by_early_return(fmi3_fmus):
    refused = simulate("scenarios/limit_stops", algorithm="jacobi", step=1e-3, fmi_version=3,
                       intermediate_inputs="on", estimate_error=False)
    assert refused.status == "error" and "intermediate_inputs=on with events=off" in refused.message
    refused = simulate("scenarios/limit_stops", algorithm="gauss-seidel", step=1e-3, fmi_version=3, events="on",
                       intermediate_inputs="on", estimate_error=False)
    assert refused.status == "error" and "intermediate_inputs=on: algorithm 'gauss-seidel'" in refused.message
