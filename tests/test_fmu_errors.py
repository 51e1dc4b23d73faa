"""Errors reach every importer where they happen: through fmpy's ``simulate_fmu`` with its default
logging (debug logging off), a bad parameter or user function makes the call that exposes it fail
with fmi2Error and the FMU's message printed by fmpy's logger; the fmpy command line exits non-zero.
Our own master stops with the same message, through the FMU and in-process."""
import json
import subprocess
import sys

import pytest
from mechfmu.components import COMPONENTS

from mechfmu.master.fmu_slave import FmuSlave
from mechfmu.master.slaves import LocalSlave, SlaveError

#: (model, start values, the call that must fail, the message the FMU logs)
CASES = [
    ("Mass", {"m": -1.0, "f_drive": 1.0}, "fmi2SetReal", "Mass 'Mass': m = -1 is out of range: must be > 0 kg"),
    ("ElastoGap", {"n": 0.5}, "fmi2SetReal", "ElastoGap 'ElastoGap': n = 0.5 is out of range: must be >= 1"),
    ("CoordinateSpringDamper", {"springForceUserFunction": "k*u + mbs"}, "fmi2ExitInitializationMode",
     "CoordinateSpringDamper 'CoordinateSpringDamper': springForceUserFunction = 'k*u + mbs' is invalid"),
    ("CoordinateSpringDamperExt", {"fDynamicFriction": 1.0}, "fmi2ExitInitializationMode",
     "stickingStiffness = 0 may not be zero with fDynamicFriction"),
    ("RigidBody", {"inertia.xx": 1.0, "inertia.yy": 1.0, "inertia.zz": 5.0}, "fmi2ExitInitializationMode",
     "violates the triangle inequality"),
    # its squared norm overflowed: the FMU logged a raw ZeroDivisionError and reported (0, 0, 0, 0) as OK
    ("RigidBody", {"orientation_start.w": 1e200, "orientation_start.x": 1e200}, "fmi2ExitInitializationMode",
     "orientation_start = (1e+200, 1e+200, 0, 0) is too large to normalize"),
    # a raw "math domain error" with a traceback
    ("RigidBody", {"angularVelocity_start.x": 1e200}, "fmi2ExitInitializationMode",
     "angularVelocity_start = (1e+200, 0, 0) gives a kinetic energy beyond the largest real number"),
    ("CoordinateConstraint", {"offsetUserFunction": "sin(t) + mbs"}, "fmi2ExitInitializationMode",
     "offsetUserFunction = 'sin(t) + mbs' is invalid"),
    # a user function that fails at the inputs: the output read that evaluates it fails
    ("CoordinateSpringDamper", {"springForceUserFunction": "sqrt(u - 10)"}, "fmi2GetReal",
     "springForceUserFunction = 'sqrt(u - 10)'"),
]


SIMULATE = """import json, sys
from fmpy import simulate_fmu
from fmpy.fmi1 import FMICallException
try:
    simulate_fmu(sys.argv[1], start_values=json.loads(sys.argv[2]), stop_time=0.01, output_interval=1e-3)
except FMICallException as exc:
    print("raised:", exc)
"""


@pytest.mark.parametrize("model, start_values, call, message", CASES)
@pytest.mark.slow
def test_fmpy_simulate_raises_with_the_message(fmus, model, start_values, call, message):
    """In its own process (an FMU left in an error state stays out of the test process)."""
    proc = subprocess.run([sys.executable, "-c", SIMULATE, str(fmus[model]), json.dumps(start_values)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"raised: {call} failed with status 3 (error)." in proc.stdout, proc.stdout
    printed = proc.stdout.splitlines()
    assert any(line.startswith("[ERROR] ") and message in line for line in printed), proc.stdout


def test_fmpy_command_line_exits_non_zero_with_the_message(fmus, tmp_path):
    """The case of the report: ``fmpy simulate Mass.fmu --start-values m -1 f_drive 1`` used to exit 0."""
    proc = subprocess.run([sys.executable, "-m", "fmpy", "simulate", str(fmus["Mass"]),
                           "--start-values", "m", "-1", "f_drive", "1", "--output-file", str(tmp_path / "x.csv")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "m = -1 is out of range: must be > 0 kg" in proc.stdout + proc.stderr


@pytest.mark.parametrize("model, start_values, call, message", CASES[:6])
def test_master_slaves_stop_with_the_same_message(fmus, model, start_values, call, message):
    for slave in (FmuSlave("x", fmus[model]), LocalSlave("x", COMPONENTS[model])):
        expected = message.replace(f"'{model}'", "'x'")
        with pytest.raises(SlaveError) as info:
            slave.set_parameters(start_values)
            slave.enter_initialization(0.0, 1.0)
            slave.exit_initialization()
        assert expected in str(info.value), (type(slave).__name__, str(info.value))
        slave.terminate()


def test_non_finite_input_is_refused_by_both_slaves(fmus):
    for slave in (FmuSlave("mass", fmus["Mass"]), LocalSlave("mass", COMPONENTS["Mass"])):
        slave.enter_initialization(0.0, 1.0)
        slave.exit_initialization()
        with pytest.raises(SlaveError, match="flange_a.f = nan must be finite"):
            slave.set(["flange_a.f"], [float("nan")])
        slave.terminate()


UNREAD_CONSTRAINT = """import sys
import fmpy
from fmpy.fmi1 import FMICallException
from fmpy.fmi2 import FMU2Slave
fmu = sys.argv[1]
md = fmpy.read_model_description(fmu)
vr = {v.name: v.valueReference for v in md.modelVariables}
slave = FMU2Slave(guid=md.guid, unzipDirectory=fmpy.extract(fmu), modelIdentifier=md.coSimulation.modelIdentifier,
                  instanceName="c")
slave.instantiate(loggingOn=True)
slave.setString([vr["offsetUserFunction"]], ["sqrt(t - 0.0015)"])
slave.setupExperiment(startTime=0.0)
slave.enterInitializationMode()
slave.exitInitializationMode()
for step in range(4):
    t = step * 1e-3
    try:
        slave.doStep(t, 1e-3)
        print("step", step, "ok")
        print("read", step, slave.getReal([vr["constraintEquation"]])[0])
    except FMICallException as exc:
        print("raised", step, exc)
slave.terminate()
slave.freeInstance()
"""


def test_a_constraint_whose_offset_fails_is_stepped_unread_without_a_fatal_error(fmus):
    """An importer that steps without reading the outputs: the offset function cannot be evaluated before
    t = 1.5 ms (sqrt of a negative number). Each step is accepted, the output read at the step's end fails with
    fmi2Error naming the function, and the instance goes on: from 2 ms the reading is a number (it was fmi2Fatal
    with a Python traceback, the instance dead)."""
    proc = subprocess.run([sys.executable, "-c", UNREAD_CONSTRAINT, str(fmus["CoordinateConstraint"])],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert "FATAL" not in proc.stdout and "Traceback" not in proc.stdout, proc.stdout
    assert [line for line in lines if line.startswith("step")] == [f"step {n} ok" for n in range(4)], proc.stdout
    assert "raised 0 fmi2GetReal failed with status 3 (error)." in lines, proc.stdout
    assert any("offsetUserFunction = 'sqrt(t - 0.0015)' evaluation failed" in line for line in lines), proc.stdout
    readings = [line.split()[2] for line in lines if line.startswith("read")]
    assert len(readings) == 3 and all(float(r) == float(r) for r in readings), proc.stdout
