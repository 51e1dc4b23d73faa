"""Native FMUs (``mechfmu build --backend native``): a component whose law is written in C runs with no Python.

Each is checked against the Python-embedding FMU of the same component, which runs the same C law through the
Python glue (components/fmi.py and its host library in the FMU's resources): the same outputs bit for bit over
random inputs (also after restoring a saved and a serialized state, in a C host with no Python), the same Model
Exchange derivatives and indicators, the same messages for refused calls, so the build option gives what the
native FMU gives. The binary needs the C runtime only, and a C host under glibc's LD_DEBUG=libs loads no Python."""
import math
import random
import re
import subprocess
import tempfile
import zipfile
from pathlib import Path

import lief
import pytest
from conftest import slow_but
from fmpy import extract, read_model_description
from fmpy.fmi2 import (
    FMU2Model,
    FMU2Slave,
    fmi2CallbackAllocateMemoryTYPE,
    fmi2CallbackFreeMemoryTYPE,
    fmi2CallbackFunctions,
    fmi2CallbackLoggerTYPE,
)
from mechfmu.components import COMPONENTS
from test_c_host import host_arguments, read_output, run_c_host, unzip, write_plan
from test_model_exchange_fmus import calloc, free

from mechfmu.fmu.build import build, fmu_backend
from mechfmu.fmu.native import compile_binary
from mechfmu.fmu.native_tables import NATIVE_HOOKS

NATIVE = sorted(NATIVE_HOOKS)
#: what a native binary may import: the C runtime (glibc's libc and libm)
C_RUNTIME = {"libc.so.6", "libm.so.6"}


@pytest.fixture(scope="module")
def native_fmus(tmp_path_factory):
    directory = tmp_path_factory.mktemp("native_fmus")
    build(NATIVE, directory, platforms=["linux64"], backend="native")
    return {model: directory / f"{model}.fmu" for model in NATIVE}


@pytest.mark.slow
def test_native_fmu_carries_no_python_and_needs_the_c_runtime_only(native_fmus):
    for model, fmu in native_fmus.items():
        assert fmu_backend(fmu) == "native"
        with zipfile.ZipFile(fmu) as zf:
            names = zf.namelist()
            description = zf.read("modelDescription.xml").decode()
            binary = zf.read(f"binaries/linux64/{model}.so")
        assert not [n for n in names if n.endswith(".py")], names
        assert 'needsExecutionTool="false"' in description and 'needsExecutionTool="true"' not in description
        parsed = lief.parse(list(binary))
        assert set(parsed.libraries) <= C_RUNTIME, (model, parsed.libraries)
        assert not [s.name for s in parsed.imported_symbols if s.name.startswith("Py")], model


@pytest.mark.slow
def test_native_windows_binary_imports_the_c_runtime_only(tmp_path):
    """The win64 binary (zig): Windows' own DLLs and the Universal C Runtime, no python3X.dll."""
    binary = tmp_path / "native.dll"
    compile_binary(binary, None, "win64")
    imported = {name.lower() for name in lief.parse(str(binary)).libraries}
    assert imported and all(name == "kernel32.dll" or name == "advapi32.dll" or name.startswith("api-ms-win-crt-")
                            or name == "ucrtbase.dll" for name in imported), imported


#: parameter sets beyond the components' examples, for the branches those leave out
VARIANTS = [
    ("CoordinateSpringDamperExt", {**COMPONENTS["CoordinateSpringDamperExt"].example_parameters,
                                   "immediateSwitching": True}),
    ("CoordinateSpringDamperExt", {"stiffness": 10.0, "damping": 0.5, "fDynamicFriction": 2.0,
                                   "fStaticFrictionOffset": 0.5, "frictionProportionalZone": 0.1, "factor0": 2.0,
                                   "factor1": -0.5, "velocityOffset": 0.2, "exponentialDecayStatic": 0.3}),
    ("CoordinateSpringDamperExt", {"springForceUserFunction": "k*u + d*v + fDynamicFriction*sign(v) + t",
                                   "stiffness": 3.0, "damping": 0.1, "fDynamicFriction": 1.5, "useLimitStops": True,
                                   "limitStopsUpper": 1.0, "limitStopsStiffness": 100.0, "stickingStiffness": 1e3}),
    ("CoordinateSpringDamperExt", {**COMPONENTS["CoordinateSpringDamperExt"].example_parameters,
                                   "activeConnector": False}),
    ("ElastoGap", {"f_ref": 5.0, "s_ref": 0.2, "n": 2.5, "d": 1e3, "s_rel0": 0.3}),
    ("CoordinateSpringDamper", {"stiffness": 100.0, "damping": 3.0, "offset": 0.2}),
    ("CoordinateConstraint", {"velocityLevel": True, "offset": 0.3, "factorValue1": -1.5}),
    ("CoordinateConstraint", {"offsetUserFunction": "0.1*sin(3*t) + lOffset", "offset": 0.05}),
    ("Sine", {**COMPONENTS["Sine"].example_parameters, "continuous": True}),
    ("Ramp", {"height": 2.0, "duration": 0.0, "startTime": 0.1}),
    ("RigidBody", {"mass": 3.0, "inertia.xx": 0.2, "inertia.yy": 0.25, "inertia.zz": 0.3, "inertia.xz": -0.02,
                   "orientation_start.w": 0.8, "orientation_start.y": 0.6, "maxSubstepSize": 0.0003}),
]


@pytest.mark.parametrize("model, parameters", slow_but(
    [(model, COMPONENTS[model].example_parameters) for model in NATIVE] + VARIANTS, *(
        (model, COMPONENTS[model].example_parameters) for model in ("ElastoGap", "Mass"))))
def test_native_fmu_equals_the_python_fmu_bit_for_bit_in_a_c_host(python_fmus, native_fmus, host, model, parameters,
                                                                  tmp_path):
    """The same plan (random inputs, a saved state replayed, a serialized state restored) in a C host with no
    Python: the native FMU gives the Python-embedding FMU's outputs bit for bit and maps no libpython."""
    results = {}
    for kind, fmu in (("python", python_fmus[model]), ("native", native_fmus[model])):
        unzipped = unzip(fmu, tmp_path / kind)
        md = read_model_description(str(unzipped))
        write_plan(md, parameters, tmp_path / f"{kind}.plan", seed=11)
        proc = run_c_host(host[0], host_arguments(unzipped, md, tmp_path / f"{kind}.plan", tmp_path / f"{kind}.out"))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        warnings = [line for line in proc.stdout.splitlines() if line.startswith("[WARNING]")]
        results[kind] = (*read_output(tmp_path / f"{kind}.out"), warnings)
    rows, facts, warnings = results["native"]
    assert facts == {"replay_equal": 1, "serialized_equal": 1, "libpython_mappings": 0}
    assert rows == results["python"][0]
    assert warnings == results["python"][2]  # the constraint's warning that nothing drives lambda, word for word


def test_a_c_host_loads_no_python_library(native_fmus, host, tmp_path):
    """glibc's LD_DEBUG=libs lists every library the process initialises: none is Python's."""
    unzipped = unzip(native_fmus["Mass"], tmp_path / "fmu")
    md = read_model_description(str(unzipped))
    write_plan(md, {}, tmp_path / "plan.txt")
    proc = subprocess.run([str(host[0]), *host_arguments(unzipped, md, tmp_path / "plan.txt", tmp_path / "out.txt")],
                          env={"LD_DEBUG": "libs"}, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout
    initialised = [Path(line.split("calling init:")[1].strip()).name for line in proc.stderr.splitlines()
                   if "calling init:" in line]
    assert "Mass.so" in initialised, proc.stderr[-2000:]
    assert not [name for name in initialised if "python" in name.lower()], initialised


def instance(fmu: Path, model: str, messages: list[str], kind=FMU2Slave, resources: dict[str, bytes] | None = None):
    """An fmpy instance (``kind``) of ``fmu``, its log messages (status and text) appended to ``messages``;
    ``resources``: files put into its resources folder first."""
    md = read_model_description(str(fmu))
    unpacked = extract(str(fmu))
    for name, data in (resources or {}).items():
        (Path(unpacked) / "resources" / name).write_bytes(data)
    slave = kind(guid=md.guid, unzipDirectory=unpacked, modelIdentifier=model, instanceName="probe")
    callbacks = fmi2CallbackFunctions()
    callbacks.logger = fmi2CallbackLoggerTYPE(lambda env, name, status, category, message:
                                              messages.append(f"{status} {message.decode()}"))
    callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(lambda n, size: calloc(n, size))
    callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(lambda p: free(p))
    slave.keep_callbacks = callbacks  # alive as long as the instance
    slave.instantiate(callbacks=callbacks, loggingOn=False)
    return slave, {v.name: v.valueReference for v in md.modelVariables}


def refused_calls(fmu: Path, model: str) -> list[str]:
    """The statuses and messages of a sequence of refused calls (and the values read in between)."""
    messages: list[str] = []
    slave, vr = instance(fmu, model, messages)
    cls = COMPONENTS[model]
    first_parameter = cls.parameters[0].name if cls.parameters else cls.inputs[0].name
    outputs = [o.name for o in cls.outputs]

    def attempt(name: str, call) -> None:
        try:
            result = call()
        except Exception as exc:  # fmpy raises on fmi2Error: the status and the message are what counts
            messages.append(f"{name}: {exc}")
        else:
            if result is not None:
                messages.append(f"{name} -> {[float(x).hex() for x in result] if isinstance(result, list) else result}")
    slave.setupExperiment(startTime=0.0)
    attempt("huge parameter", lambda: slave.setReal([vr[first_parameter]], [float("nan")]))
    attempt("low parameter", lambda: slave.setReal([vr[first_parameter]], [-1e300]))
    attempt("unknown reference", lambda: slave.setReal([len(vr) + 5], [1.0]))
    attempt("set an output", lambda: slave.setReal([vr[outputs[0]]], [1.0]))
    attempt("read outputs", lambda: slave.getReal([vr[o] for o in outputs]))
    slave.enterInitializationMode()
    slave.exitInitializationMode()
    attempt("parameter after initialization", lambda: slave.setReal([vr[first_parameter]], [2.0]))
    if cls.inputs:
        attempt("infinite input", lambda: slave.setReal([vr[cls.inputs[0].name]], [float("inf")]))
        attempt("huge inputs", lambda: slave.setReal([vr[i.name] for i in cls.inputs], [1e300] * len(cls.inputs)))
    attempt("read outputs", lambda: slave.getReal([vr[o] for o in outputs]))
    attempt("step at a wrong time", lambda: slave.doStep(0.5, 1e-3))
    attempt("step of size 0", lambda: slave.doStep(0.0, 0.0))
    attempt("garbage state", lambda: slave.deSerializeFMUstate(b"\x00" * 40))
    slave.terminate()
    slave.freeInstance()
    return messages


@pytest.mark.parametrize("model", slow_but(NATIVE, "ElastoGap", "Mass"))
def test_native_fmu_refuses_what_the_python_fmu_refuses_with_its_words(python_fmus, native_fmus, model):
    python, native = refused_calls(python_fmus[model], model), refused_calls(native_fmus[model], model)
    garbage = [i for i, line in enumerate(python) if "serialized" in line or "state" in line.lower()]
    for i in garbage:  # the serialized forms differ: both refuse garbage, each naming why in its own terms
        assert "fmi2DeSerializeFMUstate" in native[i] or "refused" in native[i], native[i]
    assert [m for i, m in enumerate(native) if i not in garbage] == [m for i, m in enumerate(python)
                                                                      if i not in garbage]


def model_exchange_points(fmu: Path, model: str, seed: int) -> list:
    """Derivatives, event indicators and outputs of a Model Exchange instance at random states, inputs and times,
    and the messages of refused calls (a wrong number of states, a non-finite state, a time before the last
    accepted one)."""
    messages: list[str] = []
    try:
        me, vr = instance(fmu, model, messages, FMU2Model)
    except Exception as exc:  # a component without a Model Exchange form refuses fmi2ModelExchange
        return [str(exc), *messages]
    me.setupExperiment(startTime=0.0)
    cls = COMPONENTS[model]
    for name, value in cls.example_parameters.items():
        setter = {str: me.setString, bool: me.setBoolean, int: me.setInteger}.get(type(value), me.setReal)
        setter([vr[name]], [value])
    me.enterInitializationMode()
    me.exitInitializationMode()
    found: list = [me.newDiscreteStates()]  # the event info: the first time event among them
    me.enterContinuousTimeMode()
    rng = random.Random(seed)
    nx, ni = len(cls.continuous_states), len(cls.indicator_names())
    for k in range(50):
        if k in (15, 30):  # event mode at a point: the next time event after it
            me.enterEventMode()
            found.append(me.newDiscreteStates())
            me.enterContinuousTimeMode()
        me.setTime(k * 1e-3)
        if nx:
            me.setContinuousStates(*_array([rng.uniform(-1, 1) for _ in range(nx)]))
        if cls.inputs:
            me.setReal([vr[i.name] for i in cls.inputs], [rng.uniform(-2, 2) for _ in cls.inputs])
        derivatives, indicators = _array([0.0] * nx), _array([0.0] * ni)
        me.getDerivatives(*derivatives)
        me.getEventIndicators(*indicators)
        outputs = me.getReal([vr[o.name] for o in cls.outputs])
        found.append((list(derivatives[0])[:nx], list(indicators[0])[:ni], outputs))
        me.completedIntegratorStep()
    for call in (lambda: me.setContinuousStates(*_array([1.0] * (nx + 1))),
                 lambda: me.setContinuousStates(*_array([float("nan")] * nx)) if nx else None,
                 lambda: me.getEventIndicators(*_array([0.0] * (ni + 2))),
                 lambda: me.setTime(-1.0)):
        try:
            call()
        except Exception as exc:  # fmpy raises on fmi2Error
            found.append(str(exc))
    me.terminate()
    me.freeInstance()
    return found + messages


def _array(values: list[float]):
    import ctypes
    array = (ctypes.c_double * max(1, len(values)))(*values)
    return array, len(values)


@pytest.mark.parametrize("model", slow_but(NATIVE, "ElastoGap", "Mass"))
def test_native_model_exchange_equals_the_python_fmu(python_fmus, native_fmus, model):
    assert model_exchange_points(native_fmus[model], model, 5) == model_exchange_points(python_fmus[model], model, 5)


def user_function_messages(fmu: Path, text: str) -> list[str]:
    """CoordinateSpringDamper with springForceUserFunction = text: initialization, a step and a read."""
    messages: list[str] = []
    slave, vr = instance(fmu, "CoordinateSpringDamper", messages)
    slave.setupExperiment(startTime=0.0)
    slave.setString([vr["springForceUserFunction"]], [text])
    slave.enterInitializationMode()
    for call in (slave.exitInitializationMode, lambda: slave.setReal([vr["flange_b.s"]], [-2.0]),
                 lambda: slave.doStep(0.0, 1e-3), lambda: messages.append(repr(slave.getReal([vr["f"], vr["flange_a.c"]])))):
        try:
            call()
        except Exception as exc:  # fmpy raises on fmi2Error
            messages.append(str(exc))
    slave.terminate()
    slave.freeInstance()
    return messages


@pytest.mark.parametrize("text", ["k*u + mbs", "sqrt", "k*u +", "os.system(1)", "sqrt(u)", "u / 0", "k*u**3 + d*v",
                                  "1e308 * 10 * u", "log(u, 2)", "'abc'"])
def test_native_user_function_refuses_and_computes_as_the_python_fmu(python_fmus, native_fmus, text):
    python = user_function_messages(python_fmus["CoordinateSpringDamper"], text)
    native = user_function_messages(native_fmus["CoordinateSpringDamper"], text)
    if any("syntax error" in m for m in python):  # CPython's own words for a syntax error are not copied
        python = [m.split(": syntax error")[0] for m in python]
        native = [m.split(": syntax error")[0] for m in native]
    assert native == python


def test_native_constraint_warns_as_the_python_one_in_a_host_that_does_not_drive_lambda(python_fmus, native_fmus, host,
                                                                                         tmp_path):
    warnings = {}
    for kind, fmu in (("python", python_fmus["CoordinateConstraint"]), ("native", native_fmus["CoordinateConstraint"])):
        unzipped = unzip(fmu, tmp_path / kind)
        md = read_model_description(str(unzipped))
        write_plan(md, {"offset": 0.1}, tmp_path / f"{kind}.plan",
                   inputs=["flange_a.s", "flange_a.v", "flange_b.s", "flange_b.v"])
        proc = run_c_host(host[0], host_arguments(unzipped, md, tmp_path / f"{kind}.plan", tmp_path / f"{kind}.out"))
        assert proc.returncode == 0, proc.stdout
        warnings[kind] = [line for line in proc.stdout.splitlines() if line.startswith("[WARNING]")]
    assert len(warnings["native"]) == 1 and "the constraint is violated by" in warnings["native"][0]
    assert warnings["native"] == warnings["python"]


CSV = b"time, y\n# a comment\n0, 0\n0.01, 1\n\n0.01, 2\n0.03, -1\n0.05, 0.5\n"
TABLES = [
    ({"table": "0, 0; 0.01, 1; 0.02, 1.5; 0.04, 0", "extrapolation": 2}, {}),
    ({"table": "[0 1; 0.02 3\n 0.03, -2]", "extrapolation": 3, "startTime": 0.004, "timeScale": 0.5}, {}),
    ({"table": "0, 0; 0.01, 1", "extrapolation": 4}, {}),
    ({"table": "0, 0, 5; 0.01, 1, 6; 0.03, 4, 1", "columns": 3, "extrapolation": 1, "offset": -1.0}, {}),
    ({"tableOnFile": True, "fileName": "t.csv"}, {"t.csv": CSV}),
    ({"tableOnFile": True, "fileName": "t.csv", "extrapolation": 3}, {"t.csv": CSV}),
    ({"tableOnFile": True, "fileName": "missing.csv"}, {}),
    ({"tableOnFile": True, "fileName": "../outside.csv"}, {}),
    ({"tableOnFile": True, "fileName": "bad.csv"}, {"bad.csv": b"0, 1\n1, x\n"}),
    ({"tableOnFile": True, "fileName": "latin.csv"}, {"latin.csv": b"0, 1\n1, 2\n\xe9\n"}),
    ({"tableOnFile": True, "fileName": "back.csv"}, {"back.csv": b"0, 1\n1, 2\n0.5, 3\n"}),
    ({"table": "0, 0; 1, x"}, {}),
    ({"table": "0, 0; 1, 1; 1, 2; 1, 3"}, {}),
    ({"table": "0, 0; 1, 1; 0.5, 2"}, {}),
    ({"table": "0, inf; 1, 1"}, {}),
    ({"table": "0; 1"}, {}),
    ({"table": " ; "}, {}),
]


def table_run(fmu: Path, parameters: dict, resources: dict[str, bytes]) -> list:
    """Table through fmpy: its messages, and y, y_rate at every step to 0.1 s (or the refusal)."""
    messages: list = []
    slave, vr = instance(fmu, "Table", messages, resources=resources)
    slave.setupExperiment(startTime=0.0)
    for name, value in parameters.items():
        setter = {str: slave.setString, bool: slave.setBoolean, int: slave.setInteger}.get(type(value), slave.setReal)
        setter([vr[name]], [value])
    try:
        slave.enterInitializationMode()
        slave.exitInitializationMode()
        for k in range(100):
            slave.doStep(k * 1e-3, 1e-3)
            messages.append(slave.getReal([vr["y"], vr["y_rate"]]))
    except Exception as exc:  # fmpy raises on fmi2Error and fmi2Discard
        messages.append(str(exc))
    slave.terminate()
    slave.freeInstance()
    return messages


@pytest.mark.parametrize("parameters, resources", TABLES)
def test_native_table_reads_and_refuses_as_the_python_one(python_fmus, native_fmus, parameters, resources):
    python = table_run(python_fmus["Table"], parameters, resources)
    native = table_run(native_fmus["Table"], parameters, resources)
    strip = re.compile(re.escape(tempfile.gettempdir()) + r"/tmp[^/' ]*")  # each run unpacks into its own folder
    assert [strip.sub("UNPACKED", str(m)) for m in native] == [strip.sub("UNPACKED", str(m)) for m in python]


def test_a_native_state_blob_is_checked_completely_before_use(native_fmus):
    """Mass's serialized state tampered with: each blob is refused naming why, and the instance goes on as it was
    (a valid blob then restores)."""
    import struct
    import zlib
    messages: list[str] = []
    slave, vr = instance(native_fmus["Mass"], "Mass", messages)
    slave.setupExperiment(startTime=0.0)
    slave.setReal([vr["m"]], [2.5])
    slave.enterInitializationMode()
    slave.exitInitializationMode()
    slave.setReal([vr["f_drive"]], [1.0])
    slave.doStep(0.0, 1e-3)
    blob = bytes(slave.serializeFMUstate(slave.getFMUstate()))
    content = blob[13:-4]  # the header (magic, FMI state, CRC-32) and the body's own CRC-32 around it

    def sealed(body: bytes) -> bytes:  # with both checksums made right again: the checks behind them are reached
        body += zlib.crc32(body).to_bytes(4, "little")
        return blob[:9] + zlib.crc32(blob[8:9] + body).to_bytes(4, "little") + body
    assert sealed(content) == blob
    mass = struct.pack("<d", 2.5)
    assert content.count(mass) == 1
    tampered = {"mass": sealed(content.replace(mass, struct.pack("<d", -1.0))),
                "nan": sealed(content.replace(mass, struct.pack("<d", math.nan))), "short": sealed(content[:-5]),
                "longer": sealed(content + b"\0"), "class": sealed(content.replace(b"Mass\0", b"Maso\0")),
                "unsealed": blob.replace(mass, struct.pack("<d", 3.0))}
    reasons = {}
    for name, data in tampered.items():
        messages.clear()
        with pytest.raises(Exception, match="fmi2DeSerializeFMUstate"):
            slave.deSerializeFMUstate(data)
        reasons[name] = " ".join(messages)
    assert "Mass 'state check': m = -1 is out of range: must be > 0 kg" in reasons["mass"], reasons
    assert "state.values.m must be a finite number" in reasons["nan"], reasons
    assert "cut short" in reasons["short"] and "bytes after the state" in reasons["longer"], reasons
    assert "a state of another class" in reasons["class"], reasons
    assert "checksum does not match" in reasons.pop("unsealed"), reasons
    assert all("the serialized FMU state is refused" in r for r in reasons.values()), reasons
    before = slave.getReal([vr["s"], vr["v"]])
    slave.doStep(1e-3, 1e-3)
    slave.setFMUstate(slave.deSerializeFMUstate(blob))
    assert slave.getReal([vr["s"], vr["v"]]) == before
    slave.terminate()
    slave.freeInstance()


@pytest.mark.slow
def test_native_fmus_access_no_memory_they_should_not(native_fmus, host, tmp_path):
    """Every native FMU (and the user-function and table-file variants) in the C host under valgrind: random
    inputs, saved, restored and serialized states; no invalid read or write, no use of uninitialised memory, no
    leak of what an instance allocated."""
    import shutil
    assert shutil.which("valgrind"), "this test needs valgrind (apt-get install valgrind; .ci/run installs it)"
    cases = [(model, COMPONENTS[model].example_parameters, {}) for model in NATIVE]
    cases += [("Table", {"tableOnFile": True, "fileName": "t.csv", "extrapolation": 3}, {"t.csv": CSV}),
              ("CoordinateSpringDamperExt", VARIANTS[2][1], {})]
    for index, (model, parameters, resources) in enumerate(cases):
        unzipped = unzip(native_fmus[model], tmp_path / f"fmu{index}")
        for name, data in resources.items():
            (unzipped / "resources" / name).write_bytes(data)
        md = read_model_description(str(unzipped))
        write_plan(md, parameters, tmp_path / f"{index}.plan")
        log = tmp_path / f"{index}.valgrind"
        arguments = host_arguments(unzipped, md, tmp_path / f"{index}.plan", tmp_path / f"{index}.out")
        proc = subprocess.run(["valgrind", "--error-exitcode=9", "--leak-check=full", "--errors-for-leak-kinds=definite",
                               f"--log-file={log}", str(host[0]), *arguments], capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, (model, proc.stdout[-2000:], log.read_text()[-4000:])


def test_a_law_reads_its_text_anew_after_every_change(native_fmus):
    """A law keeps what it read from a String parameter (CoordinateSpringDamper's parsed springForceUserFunction) while
    no text is written: after a reset with another text, and after an FMU state of another text is restored, the force
    is the one of the text now in force (Hooke's law f = k·s_rel for an empty text, independent of the cache)."""
    messages: list[str] = []
    slave, refs = instance(native_fmus["CoordinateSpringDamper"], "CoordinateSpringDamper", messages)
    k, stretch = 250.0, 0.125  # exact in binary: the forces below are exact too

    def force(text: str | None) -> float:
        if text is not None:
            slave.reset()
            slave.setReal([refs["stiffness"]], [k])
            slave.setString([refs["springForceUserFunction"]], [text])
            slave.setupExperiment(startTime=0.0)
            slave.enterInitializationMode()
            slave.exitInitializationMode()
            slave.setReal([refs["flange_b.s"]], [stretch])
        return slave.getReal([refs["f"]])[0]

    assert force("") == k * stretch
    assert force("3*k*u") == 3 * k * stretch
    saved = slave.getFMUstate()
    assert force("k*u + 1") == k * stretch + 1
    slave.setFMUstate(saved)  # the state's text, 3*k*u, with its inputs
    assert force(None) == 3 * k * stretch
    slave.freeFMUstate(saved)
    assert force("") == k * stretch
    assert not [m for m in messages if not m.startswith("0 ")], messages
