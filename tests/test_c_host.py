"""Every FMU in a plain C host (tests/fmi2_host.c: dlopen with RTLD_NOW | RTLD_LOCAL, as OMSimulator
and the FMI compliance checker load FMUs) with an empty environment and no Python in the process: the FMU loads
with no preload, runs a few hundred steps with inputs, restores and deserializes its state, and its
outputs equal fmpy's bit for bit; a native FMU maps no Python library at all. A Python-embedding FMU
(``--backend python``) finds and loads the Python it needs, also in a Python host whose interpreter is linked
statically (Debian's /usr/bin/python3), which then maps no libpython: no second interpreter."""
import random
import subprocess
import sysconfig
import zipfile
from pathlib import Path
from urllib.parse import quote

import pytest
from conftest import slow_but
from fmpy import read_model_description
from fmpy_driver import initialized_slave
from mechfmu.components import COMPONENTS

from mechfmu.fmu.build import fmu_backend, python_runtime
from mechfmu.fmu.native import compile_binary

STEPS, SNAPSHOT, STEP_SIZE = 300, 149, 1e-3
STATIC_PYTHON = Path("/usr/bin/python3")


def unzip(fmu: Path, directory: Path) -> Path:
    with zipfile.ZipFile(fmu) as zf:
        zf.extractall(directory)
    return directory


def write_plan(md, parameters: dict, path: Path, inputs: list[str] | None = None, seed: int = 3) -> dict:
    """The host's plan file: parameters, the inputs driven each step (default: all), random input values."""
    variables = {v.name: v for v in md.modelVariables}
    inputs = [v.name for v in md.modelVariables if v.causality == "input"] if inputs is None else inputs
    outputs = [v.name for v in md.modelVariables if v.causality == "output"]
    rng = random.Random(seed)
    sequence = [[rng.uniform(-2, 2) for _ in inputs] for _ in range(STEPS)]
    lines = []
    for name, value in parameters.items():
        kind = {str: "S", bool: "B", int: "I"}.get(type(value), "R")
        text = {"R": lambda x: float(x).hex(), "B": lambda x: str(int(x))}.get(kind, str)(value)
        lines.append(f"param {kind} {variables[name].valueReference} {text}")
    lines.append(f"inputs {len(inputs)} " + " ".join(str(variables[n].valueReference) for n in inputs))
    lines.append(f"outputs {len(outputs)} " + " ".join(str(variables[n].valueReference) for n in outputs))
    lines.append(f"snapshot {SNAPSHOT}")
    lines.append(f"steps {STEPS} {STEP_SIZE.hex()}")
    lines += [" ".join(x.hex() for x in row) for row in sequence]
    path.write_text("\n".join(lines) + "\n")
    return {"inputs": inputs, "outputs": outputs, "sequence": sequence}


def host_arguments(unzipped: Path, md, plan: Path, output: Path) -> list[str]:
    binary = unzipped / "binaries" / "linux64" / f"{md.coSimulation.modelIdentifier}.so"
    return [str(binary), (unzipped / "resources").as_uri(), md.guid, str(plan), str(output)]


def read_output(path: Path) -> tuple[list[list[float]], dict[str, int]]:
    rows, facts = [], {}
    for line in path.read_text().splitlines():
        key, _, value = line.partition(" ")
        if key in ("replay_equal", "serialized_equal", "libpython_mappings"):
            facts[key] = int(value)
        else:
            rows.append([float.fromhex(x) for x in line.split()])
    return rows, facts


def fmpy_rows(unzipped: Path, md, parameters: dict, plan: dict) -> list[list[float]]:
    """The same plan through fmpy in this (Python) process."""
    vr = {v.name: v.valueReference for v in md.modelVariables}
    fmu = initialized_slave(str(unzipped), md, parameters, "fmpy")
    rows = []
    for k, values in enumerate(plan["sequence"]):
        if plan["inputs"]:
            fmu.setReal([vr[n] for n in plan["inputs"]], values)
        fmu.doStep(k * STEP_SIZE, STEP_SIZE)
        rows.append(fmu.getReal([vr[n] for n in plan["outputs"]]))
    fmu.terminate()
    fmu.freeInstance()
    return rows


def run_c_host(executable: Path, arguments: list[str]) -> subprocess.CompletedProcess:
    # empty environment: no LD_PRELOAD, LD_LIBRARY_PATH, PYTHONHOME, PATH
    return subprocess.run([str(executable), *arguments], env={}, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("model", slow_but(sorted(COMPONENTS), "Mass"))
def test_fmu_runs_in_a_c_host_without_python_and_equals_fmpy(fmus, host, model, tmp_path):
    check_c_host(fmus[model], COMPONENTS[model].example_parameters, host[0], tmp_path)


def python_libraries(fmu: Path) -> int:
    """How many Python libraries a C host maps with ``fmu`` loaded: one for a Python-embedding FMU, none for a
    native one."""
    return 1 if fmu_backend(fmu) == "python" else 0


def check_c_host(fmu, parameters: dict, executable, tmp_path) -> None:
    unzipped = unzip(fmu, tmp_path / "fmu")
    md = read_model_description(str(unzipped))
    plan = write_plan(md, parameters, tmp_path / "plan.txt")
    output = tmp_path / "c_host.txt"
    proc = run_c_host(executable, host_arguments(unzipped, md, tmp_path / "plan.txt", output))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "libpython_mappings_before 0" in proc.stdout  # no Python in the process before the FMU
    assert "[ERROR]" not in proc.stdout and "[FATAL]" not in proc.stdout, proc.stdout
    rows, facts = read_output(output)
    assert facts == {"replay_equal": 1, "serialized_equal": 1, "libpython_mappings": python_libraries(fmu)}
    assert len(rows) == STEPS and len(rows[0]) == len(plan["outputs"])
    assert rows == fmpy_rows(unzipped, md, parameters, plan)  # bit for bit


def _static_python() -> Path:
    # the acceptance needs this host: its absence must fail, not pass unseen
    assert STATIC_PYTHON.exists(), f"{STATIC_PYTHON} (Debian's statically linked python3) is not installed"
    needed = subprocess.run(["ldd", str(STATIC_PYTHON)], capture_output=True, text=True).stdout
    assert "libpython" not in needed, f"{STATIC_PYTHON} is not linked statically:\n{needed}"
    version = subprocess.run([str(STATIC_PYTHON), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True).stdout.strip()
    assert version == sysconfig.get_config_var("VERSION"), (
        f"{STATIC_PYTHON} is Python {version}; the FMUs are built for {sysconfig.get_config_var('VERSION')}")
    return STATIC_PYTHON


STATIC_HOST = """import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.run_host.argtypes = [ctypes.c_char_p] * 5
sys.exit(lib.run_host(*(a.encode() for a in sys.argv[2:])))
"""


@pytest.mark.parametrize("model", slow_but(sorted(COMPONENTS), "Mass"))
@pytest.mark.slow
def test_fmu_in_a_statically_linked_python_uses_its_interpreter(python_fmus, host, model, tmp_path):
    """The C host's code inside Debian's python3 (no libpython.so): the FMU runs on that interpreter,
    maps no libpython, and gives the C host's (= fmpy's) results bit for bit."""
    python = _static_python()
    unzipped = unzip(python_fmus[model], tmp_path / "fmu")
    md = read_model_description(str(unzipped))
    write_plan(md, COMPONENTS[model].example_parameters, tmp_path / "plan.txt")
    outputs = {}
    for name in ("c", "static"):
        arguments = host_arguments(unzipped, md, tmp_path / "plan.txt", tmp_path / f"{name}.txt")
        if name == "c":
            proc = run_c_host(host[0], arguments)
        else:
            proc = subprocess.run([str(python), "-I", "-c", STATIC_HOST, str(host[1]), *arguments], env={},
                                  capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        outputs[name] = read_output(tmp_path / f"{name}.txt")
    assert outputs["static"][1] == {"replay_equal": 1, "serialized_equal": 1, "libpython_mappings": 0}
    assert outputs["c"][1]["libpython_mappings"] == 1
    assert outputs["static"][0] == outputs["c"][0]


def test_constraint_warns_in_a_host_that_does_not_drive_lambda(fmus, host, tmp_path):
    """OMSimulator's case: the constraint's lambda is left alone; the FMU says once, through the logger,
    that its constraint is violated and what a master must do."""
    unzipped = unzip(fmus["CoordinateConstraint"], tmp_path / "fmu")
    md = read_model_description(str(unzipped))
    write_plan(md, {"offset": 0.1}, tmp_path / "plan.txt", inputs=["flange_a.s", "flange_a.v", "flange_b.s",
                                                                  "flange_b.v"])
    proc = run_c_host(host[0], host_arguments(unzipped, md, tmp_path / "plan.txt", tmp_path / "out.txt"))
    assert proc.returncode == 0, proc.stdout
    warnings = [line for line in proc.stdout.splitlines() if line.startswith("[WARNING]")]
    assert len(warnings) == 1, proc.stdout
    assert "the constraint is violated by" in warnings[0] and "at t = 0.001 s" in warnings[0]
    assert "lambda" in warnings[0] and "'newton'" in warnings[0]


@pytest.mark.slow
def test_missing_python_runtime_is_reported_through_the_logger(python_fmus, host, tmp_path):
    """A machine without a Python-embedding FMU's Python: fmi2Instantiate fails with a message naming the library,
    not with an unresolved symbol. (A loader built for a Python 0.0 that exists nowhere.)"""
    unzipped = unzip(python_fmus["Mass"], tmp_path / "fmu")
    compile_binary(unzipped / "binaries" / "linux64" / "Mass.so",
                   {"version": "0.0", "soname": "libpython0.0.so.1.0", "library": ""})
    md = read_model_description(str(unzipped))
    write_plan(md, {}, tmp_path / "plan.txt")
    proc = run_c_host(host[0], host_arguments(unzipped, md, tmp_path / "plan.txt", tmp_path / "out.txt"))
    assert proc.returncode == 1
    assert "[FATAL] host: no Python 0.0 runtime" in proc.stdout and "libpython0.0.so.1.0" in proc.stdout, proc.stdout
    assert "fmi2Instantiate failed" in proc.stdout


@pytest.mark.parametrize("model, parameters, call, message", [
    ("Mass", {"m": -1.0}, "fmi2SetReal", "Mass 'host': m = -1 is out of range: must be > 0 kg"),
    ("CoordinateSpringDamper", {"springForceUserFunction": "k*u + mbs"}, "fmi2ExitInitializationMode",
     "springForceUserFunction = 'k*u + mbs' is invalid"),
])
def test_errors_reach_a_c_host_with_logging_off(fmus, host, tmp_path, model, parameters, call, message):
    """The C host instantiates with loggingOn = false: the error still arrives through its logger and
    the call that exposes it returns fmi2Error."""
    unzipped = unzip(fmus[model], tmp_path / "fmu")
    md = read_model_description(str(unzipped))
    write_plan(md, parameters, tmp_path / "plan.txt")
    proc = run_c_host(host[0], host_arguments(unzipped, md, tmp_path / "plan.txt", tmp_path / "out.txt"))
    assert proc.returncode == 1
    assert f"call failed: {call}(" in proc.stdout and "-> ERROR" in proc.stdout, proc.stdout
    assert any(line.startswith("[ERROR] host: ") and message in line for line in proc.stdout.splitlines()), proc.stdout


@pytest.mark.slow
def test_loader_finds_libpython_by_soname_on_a_target_machine(python_fmus, host, tmp_path):
    """A target machine without the build machine's Python: a loader that knows only the soname
    finds the system's libpython (Debian's libpython3.11 package here) and gives fmpy's bits."""
    runtime = dict(python_runtime(), library="")
    found = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout
    system_library = next((line.split("=>")[-1].strip() for line in found.splitlines()
                           if line.strip().startswith(runtime["soname"] + " ")), None)
    assert system_library, f"no {runtime['soname']} on this machine's library search path (Debian: libpython3.11)"
    unzipped = unzip(python_fmus["CoordinateSpringDamperExt"], tmp_path / "fmu")
    compile_binary(unzipped / "binaries" / "linux64" / "CoordinateSpringDamperExt.so", runtime)
    md = read_model_description(str(unzipped))
    parameters = COMPONENTS["CoordinateSpringDamperExt"].example_parameters
    plan = write_plan(md, parameters, tmp_path / "plan.txt")
    proc = run_c_host(host[0], host_arguments(unzipped, md, tmp_path / "plan.txt", tmp_path / "out.txt"))
    assert proc.returncode == 0, proc.stdout
    rows, facts = read_output(tmp_path / "out.txt")
    assert facts == {"replay_equal": 1, "serialized_equal": 1, "libpython_mappings": 1}
    assert rows == fmpy_rows(unzipped, md, parameters, plan)


@pytest.mark.parametrize("form", ["percent-encoded", "raw UTF-8", "file:/path", "localhost"])
def test_resources_in_a_folder_with_spaces_and_non_ascii_characters(fmus, host, form, tmp_path):
    """The resource URI as hosts write it, of a folder whose name has spaces and non-ASCII characters."""
    unzipped = unzip(fmus["Mass"], tmp_path / "dir with spaces" / "ünïcødé Ω")
    resources = unzipped / "resources"
    uri = {"percent-encoded": resources.as_uri(), "raw UTF-8": f"file://{resources}",
           "file:/path": f"file:{quote(str(resources))}", "localhost": f"file://localhost{quote(str(resources))}"}[form]
    md = read_model_description(str(unzipped))
    parameters = COMPONENTS["Mass"].example_parameters
    plan = write_plan(md, parameters, tmp_path / "plan.txt")
    arguments = host_arguments(unzipped, md, tmp_path / "plan.txt", tmp_path / "out.txt")
    proc = run_c_host(host[0], [arguments[0], uri, *arguments[2:]])
    assert proc.returncode == 0, proc.stdout
    rows, facts = read_output(tmp_path / "out.txt")
    assert facts == {"replay_equal": 1, "serialized_equal": 1, "libpython_mappings": 0}
    assert rows == fmpy_rows(unzipped, md, parameters, plan)


@pytest.mark.parametrize("names", ["the library", "its folder"])
@pytest.mark.slow
def test_mechfmu_python_names_the_python_library(python_fmus, host, names, tmp_path):
    """MECHFMU_PYTHON, the file or the folder, is where the loader looks first: a loader built for a Python 0.0
    runs with the library it names (in the folder: under the name it looks for)."""
    library = Path(python_runtime()["library"])
    assert library.is_file(), "this Python has no shared libpython"
    unzipped = unzip(python_fmus["Mass"], tmp_path / "fmu")
    compile_binary(unzipped / "binaries" / "linux64" / "Mass.so",
                   {"version": "0.0", "soname": "libpython0.0.so.1.0", "library": ""})
    folder = tmp_path / "python"
    folder.mkdir()
    (folder / "libpython0.0.so.1.0").symlink_to(library)
    md = read_model_description(str(unzipped))
    write_plan(md, {}, tmp_path / "plan.txt")
    named = str(library) if names == "the library" else str(folder)
    proc = subprocess.run([str(host[0]), *host_arguments(unzipped, md, tmp_path / "plan.txt", tmp_path / "out.txt")],
                          env={"MECHFMU_PYTHON": named}, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "[FATAL]" not in proc.stdout, proc.stdout
    assert read_output(tmp_path / "out.txt")[1]["serialized_equal"] == 1


@pytest.mark.slow
def test_a_python_host_of_another_version_runs_the_fmu_with_a_warning(python_fmus, host, tmp_path):
    """A loader built for Python 3.10 in a Python 3.11 host (Debian's static python3): the host's interpreter runs
    the model (its code is the standard library's and its own), and every instance says so through the logger."""
    python = _static_python()
    unzipped = unzip(python_fmus["Mass"], tmp_path / "fmu")
    compile_binary(unzipped / "binaries" / "linux64" / "Mass.so",
                   {"version": "3.10", "soname": "libpython3.10.so.1.0", "library": ""})
    md = read_model_description(str(unzipped))
    parameters = COMPONENTS["Mass"].example_parameters
    plan = write_plan(md, parameters, tmp_path / "plan.txt")
    arguments = host_arguments(unzipped, md, tmp_path / "plan.txt", tmp_path / "out.txt")
    proc = subprocess.run([str(python), "-I", "-c", STATIC_HOST, str(host[1]), *arguments], env={},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    version = sysconfig.get_config_var("VERSION")
    assert (f"[WARNING] host: this FMU was built for Python 3.10; the host process runs Python {version}"
            in proc.stdout), proc.stdout
    assert read_output(tmp_path / "out.txt")[0] == fmpy_rows(unzipped, md, parameters, plan)
