"""The built FMUs: fmpy validation, bit-identical to the in-process component, exact state handling,
and running in a Python process that never imported this repository."""
import json
import subprocess
import sys

import pytest
from fmpy.validation import validate_fmu

from mechfmu_components import COMPONENTS

PARAMETERS = {
    "Mass": {"m": 2.5, "L": 0.2, "s_start": 0.3, "v_start": -1.0},
    "Fixed": {"s0": 0.7},
    "CoordinateSpringDamper": {"stiffness": 5000.0, "damping": 80.0, "offset": 0.1,
                               "springForceUserFunction": "0.1*k*u + k*u**3 + v*d + sin(t)"},
    "Inertia": {"J": 0.3, "phi_start": 0.1, "w_start": 2.0},
    "ElastoGap": {"c": 1e3, "d": 30.0, "s_rel0": 0.5, "n": 1.5},
    "CoordinateConstraint": {"factorValue1": 2.0, "offset": 0.1, "offsetUserFunction": "lOffset*sin(t)",
                             "offsetUserFunction_t": "lOffset*cos(t)"},
    "RigidBody": {"mass": 2.0, "inertia.xx": 0.3, "inertia.yy": 0.4, "inertia.zz": 0.5, "inertia.xy": 0.01,
                  "centerOfMass.y": 0.1, "angularVelocity_start.x": 3.0, "velocity_start.z": 1.0, "maxSubstepSize": 5e-4},
    "SmoothSphereHalfSpaceForce": {"stiffness": 1e6, "dissipation": 1.0, "staticFriction": 0.8, "dynamicFriction": 0.5,
                                   "viscousFriction": 0.1, "radius": 0.5, "sphereLocation.x": 0.1,
                                   "halfSpaceOrientation.z": -1.5707963267948966},
    "ConstantSpeed": {"v_fixed": 0.5, "s_start": 0.1},
    # bristle friction and limit stops: random inputs switch stick/slip and the stops many times
    "CoordinateSpringDamperExt": {"stiffness": 100.0, "damping": 2.0, "fDynamicFriction": 3.0,
                                  "fStaticFrictionOffset": 1.0, "stickingStiffness": 1e4, "stickingDamping": 10.0,
                                  "fViscousFriction": 0.5, "exponentialDecayStatic": 0.05, "useLimitStops": True,
                                  "limitStopsUpper": 1.5, "limitStopsLower": -1.5, "limitStopsStiffness": 1e4,
                                  "limitStopsDamping": 5.0, "lastStickingPosition_start": 0.2},
    "RotationalSpringDamperExt": {"stiffness": 50.0, "factor0": 2.0, "factor1": 0.5, "frictionProportionalZone": 0.05,
                                  "fDynamicFriction": 2.0, "stickingStiffness": 100.0, "useLimitStops": True,
                                  "limitStopsUpper": 1.0, "limitStopsLower": -1.0, "limitStopsStiffness": 1e3,
                                  "velocityOffset": 0.3, "itemNumber": 4},
}


@pytest.mark.parametrize("model", sorted(COMPONENTS))
def test_fmpy_validate_finds_no_problems(fmus, model):
    assert validate_fmu(str(fmus[model])) == []


@pytest.mark.parametrize("model", sorted(COMPONENTS))
def test_fmu_manipulation_toolbox_checker_finds_no_problems(fmus, model):
    """The second checker: the modelDescription against the FMI 2.0 XSD and its semantic checks
    (``fmutool -check`` exits non-zero on any error)."""
    proc = subprocess.run(["fmutool", "-input", str(fmus[model]), "-check"], capture_output=True, text=True,
                          timeout=120)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "compliant with FMI-2.0" in output and "No semantic error against the FMI-2 standard" in output, output
    assert "ERROR" not in output, output


@pytest.mark.parametrize("model", sorted(COMPONENTS))
def test_fmu_matches_component_bit_for_bit_and_state_roundtrips(fmus, model, tmp_path):
    script = __file__.replace("test_fmus.py", "fmu_roundtrip.py")
    proc = subprocess.run([sys.executable, "-I", script, str(fmus[model]), "7", json.dumps(PARAMETERS[model])],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["replay_equal"] and report["serialized_equal"]
    component = COMPONENTS[model]("roundtrip")
    for name, value in PARAMETERS[model].items():
        component.set(name, value)
    component.initialize(0.0)
    if "frictionMode" in report["outputs"]:  # the sequence really switches the state machines
        rows = [[float.fromhex(x) for x in row] for row in report["rows"]]
        for state in ("frictionMode", "limitStopState"):
            column = [row[report["outputs"].index(state)] for row in rows]
            assert any(x == 0 for x in column) and any(x != 0 for x in column), state
    for n, values in enumerate(report["sequence"]):
        for name, value in zip(report["inputs"], values):
            component.set(name, float.fromhex(value))
        component.do_step(n * 1e-3, 1e-3)
        expected = [float.fromhex(x) for x in report["rows"][n]]
        assert [component.get(o) for o in report["outputs"]] == expected, f"step {n}"


def test_scenario_through_fmus_equals_in_process_bit_for_bit(fmus):
    """Three instances of one FMU in one process, two runs in a row (pythonfmu 0.7.0 used to crash
    here), and the FMU run is identical to the in-process run for both algorithms."""
    from mechfmu.simulate import simulate
    for algorithm in ("jacobi", "gauss-seidel"):
        runs = [simulate("scenarios/two_mass_oscillator", algorithm=algorithm, stop=0.5, local=local)
                for local in (False, False, True)]
        assert all(r.ok for r in runs), [r.message for r in runs]
        for r in runs[1:]:
            assert r.data.dtype == runs[0].data.dtype
            assert all((r.data[n] == runs[0].data[n]).all() for n in r.data.dtype.names)
