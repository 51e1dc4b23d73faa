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
    ("Mass", {"m": -1.0, "f_drive": 1.0}, "fmi2SetReal", "Mass 'Mass': m = -1.0 is out of range: must be > 0 kg"),
    ("ElastoGap", {"n": 0.5}, "fmi2SetReal", "ElastoGap 'ElastoGap': n = 0.5 is out of range: must be >= 1"),
    ("CoordinateSpringDamper", {"springForceUserFunction": "k*u + mbs"}, "fmi2ExitInitializationMode",
     "CoordinateSpringDamper 'CoordinateSpringDamper': springForceUserFunction = 'k*u + mbs' is invalid"),
    ("CoordinateSpringDamperExt", {"fDynamicFriction": 1.0}, "fmi2ExitInitializationMode",
     "stickingStiffness = 0.0 may not be zero with fDynamicFriction"),
    ("RigidBody", {"inertia.xx": 1.0, "inertia.yy": 1.0, "inertia.zz": 5.0}, "fmi2ExitInitializationMode",
     "violates the triangle inequality"),
    # its squared norm overflowed: the FMU logged a raw ZeroDivisionError and reported (0, 0, 0, 0) as OK
    ("RigidBody", {"orientation_start.w": 1e200, "orientation_start.x": 1e200}, "fmi2ExitInitializationMode",
     "orientation_start = (1e+200, 1e+200, 0.0, 0.0) is too large to normalize"),
    # a raw "math domain error" with a traceback
    ("RigidBody", {"angularVelocity_start.x": 1e200}, "fmi2ExitInitializationMode",
     "angularVelocity_start = (1e+200, 0.0, 0.0) gives a kinetic energy beyond the largest real number"),
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
    assert "m = -1.0 is out of range: must be > 0 kg" in proc.stdout + proc.stderr


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
