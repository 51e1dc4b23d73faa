"""Every FMU with a Model Exchange form is also an FMI 2.0 Model Exchange FMU (one modelIdentifier; fmuType
selects): fmpy validates it and integrates it with CVode against closed forms, and the loader refuses what FMI
2.0's Model Exchange state machine does not allow, naming the function, the instance unchanged."""
import ctypes
import shutil
from ctypes.util import find_library

import numpy as np
import pytest
from conftest import slow_but
from fmpy import read_model_description, simulate_fmu
from fmpy.fmi1 import FMICallException
from fmpy.fmi2 import (
    FMU2Model,
    fmi2CallbackAllocateMemoryTYPE,
    fmi2CallbackFreeMemoryTYPE,
    fmi2CallbackFunctions,
    fmi2CallbackLoggerTYPE,
)
from fmpy.validation import validate_fmu
from mechfmu.components import COMPONENTS

MODEL_EXCHANGE = sorted(m for m in COMPONENTS if not COMPONENTS[m].co_simulation_only)
_LIBC = ctypes.CDLL(find_library("c"))
_LIBC.calloc.restype = ctypes.c_void_p
_LIBC.calloc.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
_LIBC.free.argtypes = [ctypes.c_void_p]


def calloc(n: int, size: int) -> int:
    return _LIBC.calloc(n, size)


def free(pointer: int) -> None:
    _LIBC.free(pointer)


@pytest.mark.parametrize("model", sorted(COMPONENTS))
def test_fmpy_validates_both_interfaces_and_the_documentation_says_which(fmus, model):
    assert validate_fmu(str(fmus[model])) == []
    description = read_model_description(str(fmus[model]))
    assert description.coSimulation is not None
    cls = COMPONENTS[model]
    if cls.co_simulation_only:
        assert description.modelExchange is None
        return
    assert description.modelExchange.modelIdentifier == description.coSimulation.modelIdentifier == model
    assert description.numberOfEventIndicators == len(cls.indicator_names())
    states = [d.variable.derivative.name for d in description.derivatives]
    assert states == [f"state.{n}" for n in cls.continuous_states]


def test_a_mass_under_a_ramp_force_in_fmpys_cvode_equals_the_closed_form(fmus):
    """A Mass driven through its input f_drive by the ramp F = c·t (an input signal of fmpy's), CVode at rtol 1e-12:
    within 1e-8 m and 1e-12 m/s of the closed form (measured 2.8e-10 m, 2.8e-15 m/s). fmpy applies inputs only at
    its output points and where it evaluates event indicators (the Mass has none), and CVode integrates past an
    output point with the old input; so the signal repeats every output time, which makes each an input event
    where fmpy restarts CVode. The force the Mass sees is then the ramp sampled at each output point and held
    over the interval, whose closed form is exact: v += F_k·Δ/m, s += v·Δ + F_k·Δ²/(2m). (It differs from the
    continuous ramp's s0 + v0·t + c·t³/(6m) by the hold, 3.7e-3 m at Δ = 1e-2 s.)"""
    m, c, s0, v0, dt, stop = 2.0, 3.0, 0.25, -0.5, 1e-2, 1.0
    grid = np.linspace(0.0, stop, round(stop / dt) + 1)
    times = np.repeat(grid, 2)[1:-1]  # every inner output time twice: an input event there
    signal = np.array(list(zip(times, c * times)), dtype=[("time", float), ("f_drive", float)])
    result = simulate_fmu(str(fmus["Mass"]), fmi_type="ModelExchange", solver="CVode", input=signal,
                          start_values={"m": m, "s_start": s0, "v_start": v0}, stop_time=stop, output_interval=dt,
                          output=["s", "v"], relative_tolerance=1e-12)
    last = result[np.append(np.diff(result["time"]) != 0, True)]  # of an event's two rows the one after it
    assert np.allclose(last["time"], grid, rtol=0, atol=1e-12)
    s, v = [s0], [v0]
    for t in grid[:-1]:
        s.append(s[-1] + v[-1] * dt + c * t * dt ** 2 / (2 * m))
        v.append(v[-1] + c * t * dt / m)
    assert np.max(np.abs(last["s"] - s)) < 1e-8
    assert np.max(np.abs(last["v"] - v)) < 1e-12


def test_a_step_jumps_at_its_time_as_a_time_event(fmus):
    result = simulate_fmu(str(fmus["Step"]), fmi_type="ModelExchange", solver="CVode",
                          start_values={"height": 2.0, "offset": 0.5, "startTime": 0.3}, stop_time=1.0,
                          output_interval=0.1, output=["y"])
    at = np.abs(result["time"] - 0.3) < 1e-12
    assert at.sum() == 2  # fmpy stopped at the FMU's nextEventTime (a row) besides its output grid's 0.1·3
    before = result["time"] < 0.3 - 1e-12
    assert np.all(result["y"][before] == 0.5) and np.all(result["y"][~before] == 2.5)


@pytest.mark.parametrize("model, inputs", [
    ("CoordinateSpringDamper", {"flange_a.s": 0.1, "flange_b.s": 0.35, "flange_a.v": -0.2, "flange_b.v": 0.4}),
    ("ElastoGap", {"flange_a.s": 0.0, "flange_b.s": -0.02, "flange_a.v": 0.0, "flange_b.v": -0.3}),
    ("SmoothSphereHalfSpaceForce", {"sphere.position.z": 0.098, "sphere.velocity.z": -0.5}),
    ("CoordinateSpringDamperExt", {"flange_a.s": 0.0, "flange_b.s": 1.6, "flange_a.v": 0.0, "flange_b.v": 0.3}),
    ("CoordinateSpringDamperExt", {"flange_a.s": 0.0, "flange_b.s": 0.2003, "flange_a.v": 0.0, "flange_b.v": 0.0}),
])
def test_a_connector_outputs_its_law_at_the_given_inputs(fmus, model, inputs):
    """The outputs fmpy's Model Exchange run reads are those of the component in-process at the same inputs, after
    the initial event mode (the Ext's: in contact with its upper stop and slipping; sticking 0.3 mm from its
    sticking position, 3 N of 4 N)."""
    cls = COMPONENTS[model]
    inputs = {k: v for k, v in inputs.items() if k in {i.name for i in cls.inputs}}
    result = simulate_fmu(str(fmus[model]), fmi_type="ModelExchange", solver="CVode", stop_time=0.01,
                          start_values={**cls.example_parameters, **inputs})
    component = cls("it")
    for name, value in {**cls.example_parameters, **inputs}.items():
        component.set(name, value)
    component.initialize(0.0)
    component.in_model_exchange = True
    component.update_discrete_states()
    component.set_time(float(result["time"][-1]))  # a user function may read t
    expected = component.current_outputs()
    for name in result.dtype.names[1:]:
        assert result[name][-1] == expected[name], name


def model_exchange_instance(fmus, tmp_path, model: str, messages: list[str]) -> FMU2Model:
    """``model`` unpacked in tmp_path and instantiated as fmi2ModelExchange, its messages into ``messages``."""
    folder = tmp_path / model
    shutil.unpack_archive(str(fmus[model]), str(folder), "zip")
    description = read_model_description(str(folder))
    fmu = FMU2Model(guid=description.guid, unzipDirectory=str(folder), modelIdentifier=model, instanceName="it")
    callbacks = fmi2CallbackFunctions()
    callbacks.logger = fmi2CallbackLoggerTYPE(lambda env, name, status, category, message:
                                              messages.append(message.decode()))
    callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(lambda n, size: calloc(n, size))
    callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(lambda p: free(p))
    fmu.keep_callbacks = callbacks  # alive as long as the instance
    fmu.instantiate(callbacks=callbacks, loggingOn=True)
    return fmu


def test_calls_outside_the_state_machine_and_bad_states_are_refused_by_name(fmus, tmp_path):
    messages: list[str] = []
    fmu = model_exchange_instance(fmus, tmp_path, "Mass", messages)
    fmu.setupExperiment(startTime=0.0)
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    with pytest.raises(FMICallException):
        fmu.setContinuousStates((ctypes.c_double * 2)(1.0, 2.0), 2)  # event mode: not allowed
    assert any("fmi2SetContinuousStates: not allowed in state event mode" in m for m in messages)
    fmu.newDiscreteStates()
    fmu.enterContinuousTimeMode()
    before = (ctypes.c_double * 2)()
    fmu.getContinuousStates(before, 2)
    for values, count, said in (((1.0,), 1, "continuous states = [1] must be 2 values (s, v)"),
                                ((0.0, float("nan")), 2, "state v = nan must be finite")):
        with pytest.raises(FMICallException):
            fmu.setContinuousStates((ctypes.c_double * len(values))(*values), count)
        assert any(said in m for m in messages), messages[-1]
    with pytest.raises(FMICallException):
        fmu.getDerivatives((ctypes.c_double * 3)(), 3)
    assert any("fmi2GetDerivatives: nx = 3, but Mass has 2 (s, v)" in m for m in messages)
    fmu.setTime(0.5)
    fmu.completedIntegratorStep()
    with pytest.raises(FMICallException):
        fmu.setTime(0.25)
    assert any("fmi2SetTime" in m and "time = 0.25 must be finite and not before 0.5 s" in m for m in messages)
    after = (ctypes.c_double * 2)()
    fmu.getContinuousStates(after, 2)
    assert list(after) == list(before)
    fmu.terminate()
    fmu.freeInstance()


def test_a_state_saved_in_continuous_time_mode_restores_that_point(fmus, tmp_path):
    """An FMU state got at t = 0.2 in continuous-time mode, serialized, read back and set after the solver went on
    to t = 0.5: the states and the time are 0.2's again, and so is the earliest time fmi2SetTime accepts (the
    last completed step, 0.2), so an importer that rolls back can go on from there."""
    messages: list[str] = []
    fmu = model_exchange_instance(fmus, tmp_path, "Mass", messages)
    fmu.setupExperiment(startTime=0.0)
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    fmu.newDiscreteStates()
    fmu.enterContinuousTimeMode()
    fmu.setTime(0.2)
    fmu.setContinuousStates((ctypes.c_double * 2)(0.1, 0.3), 2)
    fmu.completedIntegratorStep()
    blob = fmu.serializeFMUstate(fmu.getFMUstate())
    fmu.setTime(0.5)
    fmu.setContinuousStates((ctypes.c_double * 2)(0.4, 0.5), 2)
    fmu.completedIntegratorStep()
    fmu.setFMUstate(fmu.deSerializeFMUstate(blob))
    states = (ctypes.c_double * 2)()
    fmu.getContinuousStates(states, 2)
    assert list(states) == [0.1, 0.3]
    fmu.setTime(0.3)  # after 0.2, before 0.5: accepted
    with pytest.raises(FMICallException):
        fmu.setTime(0.1)
    assert any("time = 0.1 must be finite and not before 0.2 s" in m for m in messages), messages[-3:]
    # a Co-Simulation instance of the same FMU refuses that state, saying whose it is
    from fmpy.fmi2 import FMU2Slave
    slave = FMU2Slave(guid=read_model_description(str(fmus["Mass"])).guid, unzipDirectory=str(tmp_path / "Mass"),
                      modelIdentifier="Mass", instanceName="cs")
    slave.keep_callbacks = fmu.keep_callbacks
    slave.instantiate(callbacks=fmu.keep_callbacks, loggingOn=True)
    with pytest.raises(FMICallException):
        slave.deSerializeFMUstate(blob)
    assert any("the state was saved by a Model Exchange instance (in continuous-time mode); this instance is "
               "Co-Simulation" in m for m in messages), messages[-2:]
    slave.freeInstance()
    fmu.terminate()
    fmu.freeInstance()


def test_a_component_without_a_model_exchange_form_refuses_it_saying_why(fmus, tmp_path):
    messages: list[str] = []
    with pytest.raises(Exception, match="Failed to instantiate model"):
        model_exchange_instance(fmus, tmp_path, "CoordinateConstraint", messages)
    assert any("CoordinateConstraint has no Model Exchange form: an algebraic constraint" in m for m in messages)


def euler_in_process(model: str, parameters: dict, plan: dict, steps: int, h: float) -> tuple[list, int]:
    """The C host's explicit Euler with event handling (tests/fmi2_me_host.c), call for call on the component in
    this process: (rows of outputs and states, events)."""
    component = COMPONENTS[model]("host")
    for name, value in parameters.items():
        component.set(name, value)
    component.initialize(0.0)
    component.in_model_exchange = True  # what fmi2Instantiate(fmi2ModelExchange) makes of it
    while component.update_discrete_states():  # until no new discrete states are needed (no state is set anew)
        pass
    upcoming = component.next_time_event()
    x = component.get_continuous_states()
    inputs, outputs = plan["inputs"], plan["outputs"]
    if inputs:
        component.set_many(inputs, plan["sequence"][0])
    z = component.event_indicators()
    rows, events = [], 0
    for k in range(steps):
        component.set_time(k * h)
        if inputs:
            component.set_many(inputs, plan["sequence"][k])
        component.set_continuous_states(x)
        dx = component.derivatives()
        rows.append(component.get_many(outputs) + list(x))
        x = [a + h * b for a, b in zip(x, dx)]
        component.set_time((k + 1) * h)
        component.set_continuous_states(x)
        component.completed_integrator_step()
        z_new = component.event_indicators()
        if any((a > 0) != (b > 0) for a, b in zip(z, z_new)) or (upcoming is not None and upcoming <= (k + 1) * h):
            events += 1
            while component.update_discrete_states():
                x = component.get_continuous_states()
            upcoming = component.next_time_event()
            z_new = component.event_indicators()
        z = z_new
    return rows, events


@pytest.mark.parametrize("model", slow_but(MODEL_EXCHANGE, "Mass", "Step", "ElastoGap"))
def test_a_c_host_runs_every_model_exchange_fmu_as_the_component_in_process(fmus, me_host, tmp_path, model):
    """No Python in the host process (dlopen RTLD_LOCAL, empty environment): explicit Euler over 300 steps of
    1e-3 s with random inputs, event and time-event handling; every output and state equals the same calls on
    the component in-process, bit for bit."""
    import subprocess

    from test_c_host import STEP_SIZE, STEPS, unzip, write_plan

    unzipped = unzip(fmus[model], tmp_path / "fmu")
    description = read_model_description(str(unzipped))
    parameters = COMPONENTS[model].example_parameters
    plan_path = tmp_path / "plan.txt"
    plan = write_plan(description, parameters, plan_path)
    plan_path.write_text(f"states {len(description.derivatives)} {description.numberOfEventIndicators}\n"
                         + plan_path.read_text())
    output = tmp_path / "rows.txt"
    proc = subprocess.run([str(me_host), str(unzipped / "binaries" / "linux64" / f"{model}.so"),
                           (unzipped / "resources").as_uri(), description.guid, str(plan_path), str(output)],
                          env={}, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = output.read_text().splitlines()
    rows = [[float.fromhex(v) for v in line.split()] for line in lines[:-1]]
    expected, events = euler_in_process(model, parameters, plan, STEPS, STEP_SIZE)
    assert rows == expected
    assert lines[-1] == f"events {events}"


def test_the_monolithic_master_gives_the_same_bits_through_the_fmus_and_in_process_from_the_first_row(fmus):
    """An FMU instantiated as fmi2ModelExchange is in Model Exchange use from its instantiation, so its event
    indicators at the start are Model Exchange's; the in-process component the monolithic master drives is too.
    The first row is recorded after event mode at the start time: belt_friction's friction is stored sticking at a
    slip velocity of 4 m/s, which that event mode turns into slipping, so its friction indicator in the first row is
    Model Exchange's slipping one, (f_d + f_so)·v/v_exp = 80·4/0.1 = 3200 N, in both, every other value equal as
    well."""
    from mechfmu.master.simulate import simulate
    from mechfmu.ssp.scenario import load_scenario

    scenario = load_scenario("scenarios/belt_friction")
    through_fmus = simulate(scenario, "monolithic", stop=0.02, estimate_error=False)
    in_process = simulate(scenario, "monolithic", stop=0.02, estimate_error=False, local=True)
    assert through_fmus.ok and in_process.ok
    assert through_fmus.data["friction.indicator.friction"][0] == 80.0 * 4.0 / 0.1
    assert through_fmus.data.dtype.names == in_process.data.dtype.names
    for name in through_fmus.data.dtype.names:
        assert np.array_equal(through_fmus.data[name], in_process.data[name]), name
