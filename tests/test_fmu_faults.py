"""FMU layer: no FMU call sequence crashes the host, and every refused call says so.

The real FMUs are driven through a plain C host (tests/fmi2_fault_host.c: dlopen RTLD_LOCAL, no Python in
the process) and through fmpy (in a subprocess), with the reported fault sequences: calls after an
fmi2Fatal, fmi2GetReal on a String, setFMUstate(NULL), freeing a state twice, garbage and inconsistent
state blobs, NaN/Inf/1e308 inputs, doStep at a wrong time, calls out of the FMI 2.0 state machine, a
parameter after initialization; each asserts the exact status, the message and that the process lives.
A fatal is provoked with a probe component (built from a copy of components/) whose step raises an
exception that is not an ``Exception``. Leaks: RSS over instantiate/free cycles in the C host, and the
Python slave freed without the garbage collector (fmpy, gc disabled)."""
import json
import subprocess
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import components_with
from fmpy import read_model_description

from mechfmu.fmu.build import build

PROBE = '''"""FaultProbe: a test component. Its step fails (fmi2Discard) for u = 7 and raises an exception that is not
an ``Exception`` for u = 13, which pythonfmu turns into fmi2Fatal."""
from .base import Component, Input, Output, Param


class ProbeAbort(BaseException):
    """Escapes every ``except Exception`` of the FMU glue."""


class FaultProbe(Component):
    description = "test only"
    parameters = (Param("k", 1.0, "1", "gain", min=0.0),)
    inputs = (Input("u", 0.0),)
    outputs = (Output("y", depends_on=("u",)),)

    def advance(self, current_time, step_size):
        if self.values["u"] == 13.0:
            raise ProbeAbort("probe abort")
        if self.values["u"] == 7.0:
            raise ValueError("probe refuses the step")

    def compute_outputs(self):
        return {"y": self.values["k"] * self.values["u"]}
'''
K, U, Y = 0, 1, 2  # the probe's value references
# CoordinateSpringDamper: stiffness, springForceUserFunction (String), flange_b.s (input), f (output)
STIFFNESS, USER_FUNCTION, FLANGE_B_S, FORCE = 0, 4, 8, 14


@pytest.fixture(scope="module")
def probe_fmu(tmp_path_factory, fmus):
    work = tmp_path_factory.mktemp("fault_probe")
    components = components_with(work, "fault_probe", PROBE)
    return build(["FaultProbe"], directory=work / "fmus", components_dir=components, platforms=["linux64"])[0]


@dataclass(frozen=True)
class HostPlatform:
    """Where a C host runs: the FMU's binaries folder and extension, paths and resource URIs as the host writes
    them, and how its program is started (here: directly, with an empty environment)."""
    folder: str = "linux64"
    extension: str = ".so"
    path: Callable[[Path], str] = str
    uri: Callable[[Path], str] = Path.as_uri
    launch: Callable[[Path, list[str]], subprocess.CompletedProcess] = (
        lambda executable, arguments: subprocess.run([str(executable), *arguments], capture_output=True, text=True,
                                                     timeout=300, env={}))


class Run:
    """One C host process over a script: every line's status and value, and the messages logged."""

    def __init__(self, executable: Path, fmu: Path, lines: list[str], directory: Path, guid: str | None = None,
                 location: str | None = None, platform: HostPlatform = HostPlatform()):
        unzipped = directory / fmu.stem
        if not unzipped.exists():
            with zipfile.ZipFile(fmu) as zf:
                zf.extractall(unzipped)
        md = read_model_description(str(unzipped))
        binary = unzipped / "binaries" / platform.folder / f"{md.coSimulation.modelIdentifier}{platform.extension}"
        script = directory / "script.txt"
        script.write_text("\n".join(lines) + "\n")
        arguments = [platform.path(binary), location or platform.uri(unzipped / "resources"), guid or md.guid,
                     platform.path(script)]
        self.proc = platform.launch(executable, arguments)
        self.output = self.proc.stdout + self.proc.stderr
        assert self.proc.returncode == 0 and self.output.rstrip().endswith("end"), self.output  # no crash
        self.results: list[tuple[str, str, str, str]] = []  # (line, status, value, messages logged by it)
        for text in self.proc.stdout.splitlines():
            if text.startswith("call "):
                self.results.append((text[5:], "", "", ""))
            elif text.startswith("=> "):
                status, _, value = text[3:].partition(" ")
                self.results[-1] = (self.results[-1][0], status, value, self.results[-1][3])
            elif self.results:
                line, status, value, messages = self.results[-1]
                self.results[-1] = (line, status, value, messages + text + "\n")

    def __getitem__(self, index: int) -> tuple[str, str, str, str]:
        return self.results[index]

    def statuses(self) -> list[str]:
        return [status for _, status, _, _ in self.results]


def run(fault_host, fmu, lines, tmp_path) -> Run:
    return Run(fault_host, Path(fmu), lines, tmp_path)


INITIALIZED = ["instantiate", "setup 0", "enter", "exit"]


@pytest.mark.slow
def test_calls_after_a_fatal_are_refused_and_free_does_not_crash(fault_host, probe_fmu, tmp_path):
    after = ["getReal 2", "setReal 1 1", "doStep 0 0.001", "getState 1", "setStateBogus", "reset", "terminate",
             "deserialize 1 garbage"]
    r = run(fault_host, probe_fmu, INITIALIZED + ["setReal 1 13", "doStep 0 0.001"] + after + ["free"], tmp_path)
    assert r[5][1] == "FATAL" and "probe abort" in r[5][3], r.output
    for line, status, _, messages in r.results[6:-1]:
        assert status == "ERROR", (line, r.output)
        assert "not allowed in state fatal" in messages and "only fmi2FreeInstance" in messages, (line, messages)
    assert r[-1][:2] == ("free", "done")


def test_get_real_of_a_string_or_unknown_reference_is_an_error_not_a_fatal(fault_host, fmus, tmp_path):
    fmu = fmus["CoordinateSpringDamper"]
    r = run(fault_host, fmu, INITIALIZED + [f"getReal {USER_FUNCTION}", "getReal 999", f"setReal {FORCE} 1",
                                            f"setInteger {STIFFNESS} 1", f"getReal {FORCE}", "doStep 0 0.001", "free"],
            tmp_path)
    assert r.statuses()[4:9] == ["ERROR", "ERROR", "ERROR", "ERROR", "OK"], r.output
    assert "valueReference 4: springForceUserFunction is a String, not a Real" in r[4][3]
    assert "valueReference 999: no such variable" in r[5][3]
    assert "f is an output and cannot be set" in r[6][3]
    assert "stiffness is a Real, not a Integer" in r[7][3]
    assert r[9][1] == "OK"  # the instance goes on


def test_state_handles_null_unknown_and_double_free_are_refused(fault_host, fmus, tmp_path):
    lines = INITIALIZED + ["getState 1", "setStateNull", "setStateBogus", "copyState 2 1", "freeState 1",
                           "freeState 2", "setState 2", "freeStateNullPointer", "freeState 1", "getState 3",
                           "setState 3", "doStep 0 0.001", "free", "free", "getReal 14"]
    r = run(fault_host, fmus["CoordinateSpringDamper"], lines, tmp_path)
    by_line = {line: (status, messages) for line, status, _, messages in r.results}
    assert by_line["setStateNull"][0] == "ERROR" and "fmi2SetFMUstate: FMUstate NULL" in by_line["setStateNull"][1]
    assert by_line["setStateBogus"][0] == "ERROR" and "not an FMU state of this instance" in by_line["setStateBogus"][1]
    assert by_line["freeState 2"][0] == "ERROR" and "already freed" in by_line["freeState 2"][1]  # the double free
    assert by_line["setState 2"][0] == "ERROR"
    assert by_line["freeStateNullPointer"][0] == "ERROR"
    assert r.statuses()[8] == "OK" and by_line["freeState 1"][0] == "OK"  # freed once; then NULL: ignored (FMI)
    assert [by_line[x][0] for x in ("getState 3", "setState 3", "doStep 0 0.001")] == ["OK", "OK", "OK"]
    assert r[-1][1] == "ERROR"  # a call on a freed instance is refused, not a use after free


def test_bad_state_blobs_are_refused_and_leave_the_instance_unchanged(fault_host, probe_fmu, tmp_path):
    """The serialized state (JSON) of a component written in Python, tampered with in every way; a native
    component's binary state (the native FMU's, and a Python-embedding FMU's of a shipped component):
    tests/test_native_fmus.py."""
    setup = ["instantiate", f"setReal {K} 100", "setup 0", "enter", "exit", f"setReal {U} 0.25",
             "doStep 0 0.001", "getState 1", "serialize 1"]
    bad = ["deserialize 2 garbage", "deserialize 2 empty", "deserialize 2 null", "deserialize 2 truncate 60",
           'deserialize 2 replace 100.0 "x"', "deserialize 2 replace 100.0 NaN", "deserialize 2 replace 100.0 -5e400",
           "deserialize 2 replace true 1", 'deserialize 2 replace "time" "tim"', "deserialize 2 replace 0.25 [1]",
           "deserialize 2 replace true false"]
    check = [f"getReal {K}", f"getReal {Y}", "deserialize 3 asis", "setState 3", f"getReal {Y}",
             "doStep 0.001 0.001", "free"]
    r = run(fault_host, probe_fmu, setup + bad + check, tmp_path)
    results = {line: (status, value, messages) for line, status, value, messages in r.results}
    for line in bad:
        assert results[line][0] == "ERROR", (line, r.output)
        assert "fmi2DeSerializeFMUstate" in results[line][2], (line, results[line][2])
    assert "state.values.k = 'x' must be a finite number" in results['deserialize 2 replace 100.0 "x"'][2]
    assert "state.values.k = nan must be a finite number" in results["deserialize 2 replace 100.0 NaN"][2]
    assert "= 1 must be a bool" in results["deserialize 2 replace true 1"][2]
    assert "no mechfmu state header" in results["deserialize 2 garbage"][2]
    assert "checksum does not match" in results["deserialize 2 truncate 60"][2]
    assert "its phase contradicts its times" in results["deserialize 2 replace true false"][2]
    assert results[f"getReal {K}"][:2] == ("OK", "100")
    assert results[f"getReal {Y}"][:2] == ("OK", "25")
    assert [results[x][0] for x in ("deserialize 3 asis", "setState 3", "doStep 0.001 0.001")] == ["OK"] * 3


def test_refused_inputs_return_an_error_and_keep_the_old_value(fault_host, fmus, tmp_path):
    lines = ["instantiate", f"setReal {STIFFNESS} 100", "setup 0", "enter", "exit", f"setReal {FLANGE_B_S} 0.5",
             f"setReal {FLANGE_B_S} nan", f"setReal {FLANGE_B_S} inf", f"setReal {FLANGE_B_S} -inf",
             f"getReal {FLANGE_B_S}", f"setReal {STIFFNESS} 5", f"getReal {STIFFNESS}",
             f"setReal {FLANGE_B_S} 1e308", f"getReal {FORCE}", "doStep 0 0.001", f"getReal {FORCE}",
             f"setReal {FLANGE_B_S} -1e308", f"getReal {FORCE}", f"setReal {FLANGE_B_S} 0.5", f"getReal {FORCE}", "free"]
    r = run(fault_host, fmus["CoordinateSpringDamper"], lines, tmp_path)
    s = r.statuses()
    assert s[6:9] == ["ERROR"] * 3 and "flange_b.s = nan must be finite" in r[6][3], r.output
    assert r[9][1:3] == ("OK", "0.5")
    assert s[10] == "ERROR" and "stiffness = 5 is a fixed parameter and cannot change after initialization" in r[10][3]
    assert r[11][1:3] == ("OK", "100")
    assert s[12] == "OK"  # 1e308 is a finite input ...
    assert r[13][1:3] == ("ERROR", "inf") and "f = inf is not finite at t = 0" in r[13][3]  # ... f is not
    assert s[14] == "OK" and r[15][1] == "ERROR" and r[17][1:3] == ("ERROR", "-inf")
    assert r[19][1:3] == ("OK", "50")


def test_do_step_at_a_wrong_time_or_size_is_refused(fault_host, fmus, tmp_path):
    lines = INITIALIZED + ["doStep nan 0.1", "doStep 0 nan", "doStep 0 inf", "doStep 0 -0.1", "doStep 0 0",
                           "doStep 5 0.1", "doStep -0.1 0.1", "doStep 0 0.1", "doStep 0.1 0.1", "doStep 0.2 0.1",
                           "doStep 0.30000000000000004 0.1", "doStep 0.4 0.1", "doStep 0.4 0.1", "getState 1",
                           "doStep 0.5 0.1", "setState 1", "doStep 0.6 0.1", "doStep 0.5 0.1", "free"]
    r = run(fault_host, fmus["Mass"], lines, tmp_path)
    s = r.statuses()
    assert s[4:11] == ["ERROR"] * 7, r.output
    assert ("fmi2DoStep refused: currentCommunicationPoint = 5, communicationStepSize = 0.1; "
            "expected currentCommunicationPoint = 0") in r[9][3]
    # t0 + n*h and accumulated times differ by rounding only: accepted
    assert s[11:16] == ["OK"] * 5
    assert s[16] == "ERROR" and "expected currentCommunicationPoint = 0.5" in r[16][3]  # a repeated step
    assert s[17:20] == ["OK"] * 3  # restored to t = 0.5
    assert s[20] == "ERROR" and s[21] == "OK"  # after setFMUstate the time is the restored state's


#: the FMI state each prefix reaches, a witness that the state is still that one, and the calls FMI 2.0
#: allows there (fmi2Terminate also before initialization ended, fmi2Get{Real,Integer,Boolean,String} also when instantiated: the
#: documented relaxations)
STATES = {
    "instantiated": (["instantiate"], [("setup 0", "OK")]),
    "initialization mode": (["instantiate", "setup 0", "enter"], [("exit", "OK")]),
    "step complete": (INITIALIZED, [("doStep 0 0.001", "OK")]),
    "step failed": (INITIALIZED + ["setReal 1 7", "doStep 0 0.001"], [("doStep 0 0.001", "ERROR"), ("getReal 2", "OK"),
                                                                     ("terminate", "OK")]),
    "terminated": (INITIALIZED + ["terminate"], [("terminate", "ERROR"), ("getReal 2", "OK"), ("reset", "OK")]),
}
CALLS = {
    "setup 0": {"instantiated"},
    "enter": {"instantiated"},
    "exit": {"initialization mode"},
    "doStep 0 0.001": {"step complete"},
    "terminate": {"instantiated", "initialization mode", "step complete", "step failed"},
    "getReal 2": {"instantiated", "initialization mode", "step complete", "step failed", "terminated"},  # relaxed
    "setReal 1 0.5": {"instantiated", "initialization mode", "step complete"},
    "cancelStep": set(),
    "getBooleanStatus": {"step complete", "step failed", "terminated"},
}


@pytest.mark.parametrize("state", sorted(STATES))
def test_state_machine_refuses_each_illegal_call_and_keeps_the_state(fault_host, probe_fmu, tmp_path, state):
    prefix, witness = STATES[state]
    illegal = [call for call, allowed in CALLS.items() if state not in allowed]
    lines = []
    for call in illegal:
        lines += prefix + [call] + [line for line, _ in witness] + ["free"]
    r = run(fault_host, probe_fmu, lines, tmp_path)
    position = 0
    for call in illegal:
        position += len(prefix)
        line, status, _, messages = r[position]
        assert (line, status) == (call, "ERROR"), r.output
        assert f"not allowed in state {state}" in messages, (call, messages)
        for k, (line, expected) in enumerate(witness, start=1):
            assert r[position + k][:2] == (line, expected), (call, r[position + k], r.output)
        position += len(witness) + 2


@pytest.mark.slow
def test_legal_calls_in_each_state(fault_host, probe_fmu, tmp_path):
    for state, (prefix, _) in STATES.items():
        for call, allowed in CALLS.items():
            if state in allowed and call != "doStep 0 0.001":
                r = run(fault_host, probe_fmu, prefix + [call, "free"], tmp_path)
                assert r[len(prefix)][1] == "OK", (state, call, r.output)


def test_instance_memory_is_returned(fault_host, fmus, tmp_path):
    """RSS over 400 cycles (instantiate, initialize, 10 steps, 20 FMU states the host leaves to
    fmi2FreeInstance, terminate, free) after 100 warm-up cycles. Bound 1 kB per cycle, against RSS
    granularity (pages of 4 kB over 400 cycles: 10 bytes a cycle) and allocator noise: pythonfmu 0.7.0's
    binary kept ~7 kB per instantiation (it executed the entry script again each time and kept every new
    class alive), and the 20 states used to add ~40 kB."""
    r = run(fault_host, fmus["CoordinateSpringDamper"], ["cycles 100 10 20", "cycles 400 10 20"], tmp_path)
    before, after = (int(r[i][2].split()[-1]) for i in (0, 1))
    per_cycle = (after - before) * 1024 / 400
    assert per_cycle < 1024, f"{per_cycle:.0f} bytes per cycle"


FMPY_CYCLES = """import gc, json, sys
from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave
md = read_model_description(sys.argv[1]); unzipped = extract(sys.argv[1])
gc.disable()  # what is freed must be freed by reference counting, not by a later collection
path_length = len(sys.path)
for n in range(50):
    fmu = FMU2Slave(guid=md.guid, unzipDirectory=unzipped, modelIdentifier=md.coSimulation.modelIdentifier,
                    instanceName="x")
    fmu.instantiate(); fmu.setupExperiment(startTime=0.0); fmu.enterInitializationMode(); fmu.exitInitializationMode()
    fmu.doStep(0.0, 1e-3); fmu.terminate(); fmu.freeInstance(); fmu.freeLibrary()
slaves = [o for o in gc.get_objects() if any(c.__name__ == "ComponentFmu" for c in type(o).__mro__)]
classes = [o for o in gc.get_objects()
           if isinstance(o, type) and any(c.__name__ == "ComponentFmu" for c in o.__mro__[1:])]
with open("/proc/self/maps") as maps:
    pythonfmu_binary = "pythonfmu" in maps.read()
print(json.dumps({"slaves_alive": len(slaves), "slave_classes": len(classes),
                  "sys_path_growth": len(sys.path) - path_length, "pythonfmu_binary_loaded": pythonfmu_binary}))
"""


def test_python_slave_is_freed_without_the_garbage_collector(python_fmus):
    """50 cycles in one process: no slave left, one slave class (the module is imported once; pythonfmu's
    binary made a new class per instantiation and kept each), sys.path grown by one entry, and pythonfmu's
    binary never loaded (its library destructor used a freed object at exit: heap corruption now and
    then in any process that had freed all its instances)."""
    proc = subprocess.run([sys.executable, "-c", FMPY_CYCLES, str(python_fmus["CoordinateSpringDamper"])],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    expected = {"slaves_alive": 0, "slave_classes": 1, "sys_path_growth": 1, "pythonfmu_binary_loaded": False}
    assert json.loads(proc.stdout.splitlines()[-1]) == expected


FMPY_FAULTS = """import json, struct, sys
from fmpy import extract, read_model_description
from fmpy.fmi1 import FMICallException
from fmpy.fmi2 import FMU2Slave
md = read_model_description(sys.argv[1]); unzipped = extract(sys.argv[1])
messages, statuses = [], {}
fmu = FMU2Slave(guid=md.guid, unzipDirectory=unzipped, modelIdentifier=md.coSimulation.modelIdentifier,
                instanceName="x")
fmu.instantiate(loggingOn=False)
def call(name, fn, *args):
    try:
        result = fn(*args)
        statuses[name] = 0
        return result
    except FMICallException as exc:
        statuses[name] = exc.status
call("doStep before setup", fmu.doStep, 0.0, 1e-3)
fmu.setReal([0], [100.0]); fmu.setupExperiment(startTime=0.0); fmu.enterInitializationMode()
call("doStep in initialization", fmu.doStep, 0.0, 1e-3)
fmu.exitInitializationMode()
call("getReal of a String", fmu.getReal, [4])
call("setReal nan", fmu.setReal, [8], [float("nan")])
call("setReal inf", fmu.setReal, [8], [float("inf")])
call("parameter after initialization", fmu.setReal, [0], [5.0])
call("doStep nan", fmu.doStep, float("nan"), 1e-3)
call("doStep jump", fmu.doStep, 1.0, 1e-3)
call("doStep", fmu.doStep, 0.0, 1e-3)
state = fmu.getFMUstate()
call("setFMUstate NULL", fmu.setFMUstate, None)
call("deserialize garbage", fmu.deSerializeFMUstate, bytes(range(256)))
blob = fmu.serializeFMUstate(state)
# stiffness 100.0 -> -inf: in the JSON of a Python-embedding FMU, or as the double of a native one
tampered = (blob.replace(b"100.0", b"-inf") if b"100.0" in blob
            else blob.replace(struct.pack("<d", 100.0), struct.pack("<d", float("-inf"))))
call("deserialize tampered", fmu.deSerializeFMUstate, tampered)
call("freeFMUstate", fmu.freeFMUstate, state)
call("setReal 1e308", fmu.setReal, [8], [1e308])
call("getReal inf", fmu.getReal, [14])
call("getReal stiffness", fmu.getReal, [0])
call("terminate", fmu.terminate)
call("doStep after terminate", fmu.doStep, 1e-3, 1e-3)
fmu.freeInstance()
print(json.dumps(statuses))
"""


@pytest.mark.parametrize("kind", ["native", "python"])
def test_fmpy_fault_sequence_gives_the_exact_statuses_without_crashing(fmus, python_fmus, kind):
    fmu = (fmus if kind == "native" else python_fmus)["CoordinateSpringDamper"]
    proc = subprocess.run([sys.executable, "-c", FMPY_FAULTS, str(fmu)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # no segfault
    statuses = json.loads(proc.stdout.splitlines()[-1])
    assert statuses == {
        "doStep before setup": 3, "doStep in initialization": 3, "getReal of a String": 3, "setReal nan": 3,
        "setReal inf": 3, "parameter after initialization": 3, "doStep nan": 3, "doStep jump": 3, "doStep": 0,
        "setFMUstate NULL": 3, "deserialize garbage": 3, "deserialize tampered": 3, "freeFMUstate": 0,
        "setReal 1e308": 0, "getReal inf": 3, "getReal stiffness": 0, "terminate": 0, "doStep after terminate": 3,
    }, proc.stdout


@pytest.mark.parametrize("guid, location, message", [
    ("0a1b2c3d-not-this-fmu", None, "fmi2Instantiate: fmuGUID '0a1b2c3d-not-this-fmu' is not this FMU's GUID '"),
    (None, "/tmp/resources", "fmi2Instantiate: fmuResourceLocation '/tmp/resources' is not a file URI"),
    (None, "http://example.invalid/resources", "is not a file URI"),
    (None, "{resources}%00x", "holds an encoded NUL (%00)"),  # decoded, the NUL cut the path back to resources
    (None, "{resources}%zz", "holds a '%' not followed by two hex digits at '%zz'"),
    (None, "file://server/share/resources", "names the host 'server': only a local folder can be read"),
    (None, "file:resources", "holds no absolute path"),
    (None, "file:///nonexistent/resources", "cannot read this FMU's GUID from /nonexistent/resources/mechfmu_guid.txt"),
])
def test_instantiate_refuses_another_fmus_guid_and_a_location_that_is_not_its_resources(fault_host, fmus, tmp_path,
                                                                                        guid, location, message):
    """The standard hands the FMU its GUID and resource URI to check: an instance of another FMU (or of another
    build) is refused by name instead of running, and nothing after it is reported OK."""
    resources = (tmp_path / "Mass" / "resources").as_uri()
    r = Run(fault_host, Path(fmus["Mass"]), ["instantiate", "getReal 0"], tmp_path, guid=guid,
            location=location and location.format(resources=resources))
    assert r[0][1] == "NULL" and message in r[0][3], r.output
    assert r[1][1] != "OK"


def test_the_guid_a_host_checks_is_the_one_in_the_model_description(fmus):
    """resources/mechfmu_guid.txt (what fmi2Instantiate compares with) is the modelDescription's GUID (an
    exported archive's FMUs, each with a GUID of its own, run in tests/test_ssp_tools.py)."""
    for model, fmu in fmus.items():
        with zipfile.ZipFile(fmu) as zf:
            assert zf.read("resources/mechfmu_guid.txt").decode() == read_model_description(str(fmu)).guid, model
