"""Numbers in the components' messages as an engineer writes them, word for word the same in the Python-embedding
and the native FMU, and in a host whose locale writes a decimal comma: a value the user gave (a parameter, a bound
as declared, a step size) in the shortest form that reads back (at most 12 significant digits: a value computed in
floating point, -40 * 9.81 = -392.40000000000003, is -392.4), a time or a computed value with six significant
digits (%.6g: 191.01500000000001 s is 191.015 s), a unit once and none for a dimensionless one ("must be >= 1",
not "must be >= 1 1"). The expected texts below are written by hand from that rule."""
import re

import pytest
from conftest import slow_but
from test_native_fmus import instance
from test_native_threads import STEPS, german, plain_host, plan_lines, run_host, unpacked  # noqa: F401 (fixtures)

#: (model, parameters, the calls after them, the message expected)
CASES = {
    "computed parameter": ("Mass", {"m": -40 * 9.81}, [],
                           "Mass 'probe': m = -392.4 is out of range: must be > 0 kg"),
    "small parameter": ("Mass", {"m": -1e-9}, [], "Mass 'probe': m = -1e-09 is out of range: must be > 0 kg"),
    "whole parameter": ("Mass", {"m": -1.0}, [], "Mass 'probe': m = -1 is out of range: must be > 0 kg"),
    "dimensionless bound": ("ElastoGap", {"n": 0.5}, [], "ElastoGap 'probe': n = 0.5 is out of range: must be >= 1"),
    "dimensionless Integer": ("Table", {"extrapolation": 0}, [],
                              "Table 'probe': extrapolation = 0 is out of range: must be >= 1"),
    "step at a wrong time": ("Mass", {}, [("doStep", 191.01500000000001, 1e-3)],
                             "probe: fmi2DoStep refused: currentCommunicationPoint = 191.015, "
                             "communicationStepSize = 0.001; expected currentCommunicationPoint = 0 (the end of the "
                             "last step or the restored state's time) and a finite step size > 0"),
    "failed step": ("RigidBody", {"maxSubstepSize": 0.1}, [("doStep", 0.0, 0.1), ("doStep", 0.1, 0.2),
                                                           ("doStep", 0.1 + 0.2, 1e9)],
                    "probe: step at t=0.3 h=1000000000 failed: RigidBody 'probe': maxSubstepSize = 0.1 "
                    "needs 1e+10 rotation substeps in a step of 1000000000 s"),
    "table outside": ("Table", {"table": "0, 0; 0.03, 1", "timeScale": 3.0, "extrapolation": 4},
                      [("doStep", 0.0, 0.125), ("getReal", "y")],
                      "Table 'probe': extrapolation = 4 refuses t = 0.125: table time 0.0416667 is outside the table "
                      "[0, 0.03] and extrapolation = 4 (NoExtrapolation)"),
    "failed user function": ("CoordinateSpringDamper",
                             {"springForceUserFunction": "sqrt(0.25 - t)", "stiffness": 1 / 3},
                             [("doStep", 0.0, 0.1), ("doStep", 0.1, 0.2), ("getReal", "flange_a.f")],
                             "springForceUserFunction = 'sqrt(0.25 - t)' evaluation failed (math domain error) for "
                             "t=0.3, itemNumber=0, u=0, displacement=0, v=0, velocity=0, k=0.333333, "
                             "stiffness=0.333333"),
}


def said(expected: str, messages: list[str]) -> list[str]:
    """The messages that hold ``expected`` whole: at their end or before a comma (not "must be >= 1 1")."""
    return [m for m in messages if re.search(re.escape(expected) + "($|,)", m)]


def messages_of(fmu, model: str, parameters: dict, calls: list) -> list[str]:
    """The messages an fmpy instance of ``fmu`` logs while it is given ``parameters``, initialized, and ``calls``."""
    messages: list[str] = []
    slave, vr = instance(fmu, model, messages)
    slave.setupExperiment(startTime=0.0)
    for name, value in parameters.items():
        setter = {str: slave.setString, bool: slave.setBoolean, int: slave.setInteger}.get(type(value), slave.setReal)
        try:
            setter([vr[name]], [value])
        except Exception:  # fmpy raises on fmi2Error; the message is logged
            pass
    slave.enterInitializationMode()
    slave.exitInitializationMode()
    for call, *arguments in calls:
        try:
            if call == "getReal":
                slave.getReal([vr[arguments[0]]])
            else:
                slave.doStep(*arguments)
        except Exception:
            pass
    slave.terminate()
    slave.freeInstance()
    return messages


@pytest.mark.parametrize("case", slow_but(list(CASES), "computed parameter", "dimensionless Integer"))
def test_a_native_fmu_writes_numbers_as_an_engineer_does(fmus, case):
    model, parameters, calls, expected = CASES[case]
    messages = messages_of(fmus[model], model, parameters, calls)
    assert said(expected, messages), messages


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_the_python_fmu_writes_the_native_fmus_words(fmus, python_fmus, case):
    model, parameters, calls, expected = CASES[case]
    python = messages_of(python_fmus[model], model, parameters, calls)
    assert said(expected, python), python
    assert said(expected, python) == said(expected, messages_of(fmus[model], model, parameters, calls))


def test_a_host_with_a_german_locale_gets_the_same_words(fmus, plain_host, german, tmp_path):  # noqa: F811
    """setlocale(LC_ALL, "de_DE.UTF-8") in a C host: the numbers keep their point (printf's %g would write
    "0,0416667" there), given and measured values alike."""
    name, environment = german
    table = unpacked(fmus["Table"], tmp_path / "Table", None)
    mass = unpacked(fmus["Mass"], tmp_path / "Mass", None)
    out = []
    for job, parameters in (((*table, "y"), {"table": "0, 0; 0.03, 1", "timeScale": 3.0, "extrapolation": 4}),
                            ((*mass, "s"), {"m": -40 * 9.81})):
        plan = tmp_path / "plan.txt"
        plan.write_text("\n".join([f"steps\t{STEPS}\t{0.125.hex()}", *plan_lines(job, parameters,
                                                                                 [0.0] * (STEPS + 1))]) + "\n")
        out.append(run_host(plain_host, plan, 1, 1, name, environment=environment).stdout)
    assert CASES["table outside"][3].replace("'probe'", "'t0_0'") in out[0], out[0]
    assert "Mass 't0_0': m = -392.4 is out of range: must be > 0 kg" in out[1], out[1]
