"""The FMUs' win64 binary on Windows (Wine), with Windows builds of our C test hosts (cross-compiled with the zig
that builds the FMUs), and for Python-embedding FMUs python.org's Windows Python 3.11:

- every (native) FMU runs 300 steps with random inputs, restores and deserializes its state, with no Python in
  the Wine prefix at all, and its outputs equal the Linux binary's in the Linux C host bit for bit, but where the
  C library's transcendental functions round differently on Windows (LIBM_ULPS);
- the error cases (calls out of the state machine, unknown and doubly freed states, bad state blobs, refused
  values and steps) give the same statuses and messages as on Linux;
- a Python-embedding FMU finds Python where Windows users have it (MECHFMU_PYTHON, PATH, the registry, beside
  the host program), and says what it tried when there is none or only another version;
- resource URIs as Windows hosts write them: percent-encoded, raw UTF-8, spaces and non-ASCII folders,
  file:/C:, file://localhost/C:, file://C:; a UNC share is looked up as \\\\host\\share."""
import math
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import slow_but
from fmpy import read_model_description
from mechfmu.components import COMPONENTS
from test_c_host import STATIC_HOST, read_output, run_c_host, unzip, write_plan
from test_fmu_faults import INITIALIZED, HostPlatform, Run
from windows_host import Wine, compile_windows_host, windows_path, windows_python, windows_uri

from mechfmu.fmu.native import compile_binary

pytestmark = pytest.mark.slow  # Wine: a prefix made, then about a second a process


@pytest.fixture(scope="module")
def wine(tmp_path_factory) -> Iterator[Wine]:
    prefix = Wine(tmp_path_factory.mktemp("wine") / "prefix")
    yield prefix
    prefix.close()


@pytest.fixture(scope="module")
def python_folder(tmp_path_factory) -> Path:
    return windows_python(tmp_path_factory.mktemp("windows_python") / "python")


@pytest.fixture(scope="module")
def windows_hosts(tmp_path_factory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("windows_hosts")
    hosts = {name: compile_windows_host(name, directory) for name in ("fmi2_host", "fmi2_fault_host", "fmi2_me_host")}
    hosts["library"] = compile_windows_host("fmi2_host", directory, library=True)  # run_host() for a Python host
    return hosts


def windows_arguments(unzipped: Path, md, plan: Path, output: Path, uri: str | None = None) -> list[str]:
    binary = unzipped / "binaries" / "win64" / f"{md.coSimulation.modelIdentifier}.dll"
    return [windows_path(binary), uri or windows_uri(unzipped / "resources"), md.guid, windows_path(plan),
            windows_path(output)]


def linux_rows(host, unzipped: Path, md, plan: Path, tmp_path: Path) -> tuple[list, dict]:
    binary = unzipped / "binaries" / "linux64" / f"{md.coSimulation.modelIdentifier}.so"
    output = tmp_path / "linux.txt"
    proc = run_c_host(host[0], [str(binary), (unzipped / "resources").as_uri(), md.guid, str(plan), str(output)])
    assert proc.returncode == 0, proc.stdout
    return read_output(output)


@pytest.mark.parametrize("model", slow_but(sorted(COMPONENTS), "Mass"))
def test_fmu_runs_on_windows_as_on_linux_bit_for_bit(fmus, host, wine, windows_hosts, model, tmp_path):
    """No Python anywhere: not in the Wine prefix, not named, not loaded."""
    unzipped = unzip(fmus[model], tmp_path / "fmu")
    md = read_model_description(str(unzipped))
    plan = tmp_path / "plan.txt"
    write_plan(md, COMPONENTS[model].example_parameters, plan)
    proc = wine.run(windows_hosts["fmi2_host"], windows_arguments(unzipped, md, plan, tmp_path / "windows.txt"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "libpython_mappings_before 0" in proc.stdout
    assert "[ERROR]" not in proc.stdout and "[FATAL]" not in proc.stdout, proc.stdout
    rows, facts = read_output(tmp_path / "windows.txt")
    assert facts == {"replay_equal": 1, "serialized_equal": 1, "libpython_mappings": 0}
    assert len(rows) == 300
    linux, linux_facts = linux_rows(host, unzipped, md, plan, tmp_path)
    assert facts == linux_facts
    if model not in LIBM_ULPS:
        assert rows == linux  # bit for bit
        return
    distances = [ulps(a, b) for row, other in zip(rows, linux) for a, b in zip(row, other)]
    print(f"{model}: {sum(d > 0 for d in distances)} of {len(distances)} outputs differ, at most {max(distances)} ulp")
    assert max(distances) <= LIBM_ULPS[model]


#: the components whose outputs go through a transcendental function of the C library (Python's math module calls
#: the platform's: glibc on Linux, the UCRT on Windows, which round some results differently), and the most ulps
#: (units in the last place, of the larger value) by which an output differs: measured, Sine's sin and cos 2 ulp
#: (20 of 900 outputs differ), the sphere's tanh 1 ulp (1 of 6000), MassWithStopAndFriction's Stribeck exp 2 ulp (23
#: of 7200); every other FMU is bit for bit the same
LIBM_ULPS = {"Sine": 2, "SmoothSphereHalfSpaceForce": 1, "MassWithStopAndFriction": 2}


def ulps(a: float, b: float) -> float:
    """|a - b| in units in the last place of the larger of the two."""
    return 0.0 if a == b else abs(a - b) / math.ulp(max(abs(a), abs(b)))


ERROR_CASES = {  # model: script of the fault host (tests/fmi2_fault_host.c)
    "Mass": ["doStep 0 0.001", "getReal 0", "instantiate", "exit", "doStep 0 0.001", "setup 0", "enter",
             "setReal 0 -1", "setReal 0 nan", "exit", "doStep 0.5 0.001", "doStep 0 -1", "doStep 0 inf",
             "getState 0", "doStep 0 0.001", "setState 0", "freeState 0", "freeState 0", "setState 0",
             "setStateBogus", "setStateNull", "cancelStep", "setReal 0 2", "terminate", "doStep 0.001 0.001",
             "free", "free"],
    "CoordinateSpringDamper": [*INITIALIZED, "getReal 4", "getReal 999", "setString 4 k*u+", "getState 1",
                               "serialize 1", "deserialize 2 garbage", "deserialize 2 truncate 10",
                               "deserialize 2 empty", "deserialize 2 asis", "setState 2", "getReal 14",
                               "setReal 8 1e308", "doStep 0 0.001", "getReal 14", "terminate", "free"],
}


@pytest.mark.parametrize("model", sorted(ERROR_CASES))
def test_error_cases_give_the_same_statuses_and_messages_as_on_linux(fmus, fault_host, wine, windows_hosts, model,
                                                                     tmp_path):
    windows = HostPlatform("win64", ".dll", windows_path, windows_uri,
                           lambda executable, arguments: wine.run(executable, arguments))
    on_windows = Run(windows_hosts["fmi2_fault_host"], Path(fmus[model]), ERROR_CASES[model], tmp_path / "w",
                     platform=windows)
    on_linux = Run(fault_host, Path(fmus[model]), ERROR_CASES[model], tmp_path / "l")
    assert on_windows.results == on_linux.results
    statuses = on_windows.statuses()
    assert statuses.count("ERROR") >= 5 and "FATAL" not in statuses, on_windows.output  # refused, none fatal


def run_mass(wine, program: Path, fmus, directory: Path, uri=None, **variables: str):
    """Mass in the Windows C host, unzipped into ``directory``: the process, and its rows and facts if it ran."""
    unzipped = unzip(fmus["Mass"], directory)
    md = read_model_description(str(unzipped))
    plan, output = directory.parent / "plan.txt", directory.parent / "windows.txt"
    write_plan(md, COMPONENTS["Mass"].example_parameters, plan)
    proc = wine.run(program, windows_arguments(unzipped, md, plan, output, uri(unzipped / "resources") if uri
                                               else None), **variables)
    return proc, (read_output(output) if proc.returncode == 0 else None)


REGISTRY_KEY = r"HKEY_CURRENT_USER\Software\Python\PythonCore\3.11\InstallPath"


@pytest.mark.parametrize("where", ["MECHFMU_PYTHON names the folder", "MECHFMU_PYTHON names the DLL", "on PATH",
                                   "registered by the installer", "beside the host program"])
def test_the_fmu_finds_python_where_windows_has_it(python_fmus, wine, python_folder, windows_hosts, where, tmp_path):
    program, variables = windows_hosts["fmi2_host"], {}
    if where == "MECHFMU_PYTHON names the folder":
        variables["MECHFMU_PYTHON"] = windows_path(python_folder)
    elif where == "MECHFMU_PYTHON names the DLL":
        variables["MECHFMU_PYTHON"] = windows_path(python_folder / "python311.dll")
    elif where == "on PATH":
        variables["WINEPATH"] = windows_path(python_folder)  # Wine's way to add a folder to the Windows PATH
    elif where == "registered by the installer":  # python.org's installer: InstallPath's default value
        wine.registry("add", REGISTRY_KEY, "/ve", "/d", windows_path(python_folder) + "\\", "/f")
    else:  # an application that ships Python beside its program, in a folder with a space
        folder = tmp_path / "Program Files" / "Tool"
        shutil.copytree(python_folder, folder)
        program = Path(shutil.copy(program, folder))
    try:
        proc, result = run_mass(wine, program, python_fmus, tmp_path / "fmu", **variables)
    finally:
        if where == "registered by the installer":
            wine.registry("delete", REGISTRY_KEY.rsplit("\\", 1)[0], "/f")
    assert proc.returncode == 0 and "[FATAL]" not in proc.stdout, proc.stdout + proc.stderr
    assert result is not None and result[1] == {"replay_equal": 1, "serialized_equal": 1, "libpython_mappings": 1}


def test_without_python_instantiate_fails_listing_where_it_looked(python_fmus, wine, windows_hosts, tmp_path):
    """A Python-embedding FMU on a machine without its Python (a native one needs none)."""
    proc, _ = run_mass(wine, windows_hosts["fmi2_host"], python_fmus, tmp_path / "fmu")
    assert proc.returncode == 1 and "fmi2Instantiate failed" in proc.stdout, proc.stdout
    fatal = next(line for line in proc.stdout.splitlines() if line.startswith("[FATAL]"))
    assert "no Python 3.11 runtime" in fatal and "needs python311.dll" in fatal and "MECHFMU_PYTHON" in fatal
    assert "python.org" in fatal and "Tried: " in fatal
    for place in ("C:\\windows\\system32\\python311.dll (not there)", f"{REGISTRY_KEY} (no such key)",
                  "HKEY_LOCAL_MACHINE\\Software\\Python\\PythonCore\\3.11\\InstallPath (no such key)",
                  "python311.dll through the system's DLL search"):
        assert place in fatal, fatal


def test_a_python_of_another_version_is_named_not_loaded(python_fmus, wine, python_folder, windows_hosts, tmp_path):
    """Only Python 3.12 where the user pointed: the error names it and the version the FMU needs."""
    other = tmp_path / "Python312"
    other.mkdir()
    shutil.copy(python_folder / "python311.dll", other / "python312.dll")
    proc, _ = run_mass(wine, windows_hosts["fmi2_host"], python_fmus, tmp_path / "fmu",
                       MECHFMU_PYTHON=windows_path(other))
    assert proc.returncode == 1 and "fmi2Instantiate failed" in proc.stdout, proc.stdout
    assert f"Found only another version: python312.dll in {windows_path(other)}" in proc.stdout, proc.stdout
    assert f"{windows_path(other)}\\python311.dll (not there)" in proc.stdout


UNUSUAL_FOLDER = Path("dir with spaces") / "ünïcødé Ω"
URI_FORMS = {  # the resources folder as hosts write it
    "percent-encoded": windows_uri,
    "raw UTF-8": lambda path: "file:///Z:" + str(path),
    "file:/Z:": lambda path: "file:/Z:" + windows_uri(path).removeprefix("file:///Z:"),
    "localhost": lambda path: "file://localhost/Z:" + windows_uri(path).removeprefix("file:///Z:"),
    "drive as authority": lambda path: "file://Z:" + windows_uri(path).removeprefix("file:///Z:"),
    "old drive bar": lambda path: "file:///Z|" + windows_uri(path).removeprefix("file:///Z:"),
}


@pytest.mark.parametrize("form", sorted(URI_FORMS))
def test_resources_in_a_folder_with_spaces_and_non_ascii_characters(fmus, host, wine, windows_hosts, form, tmp_path):
    proc, result = run_mass(wine, windows_hosts["fmi2_host"], fmus, tmp_path / UNUSUAL_FOLDER, uri=URI_FORMS[form])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    unzipped = tmp_path / UNUSUAL_FOLDER
    md = read_model_description(str(unzipped))
    assert result == linux_rows(host, unzipped, md, unzipped.parent / "plan.txt", tmp_path)


def test_a_unc_share_is_looked_up_as_such(fmus, wine, windows_hosts, tmp_path):
    proc, _ = run_mass(wine, windows_hosts["fmi2_host"], fmus, tmp_path / "fmu",
                       uri=lambda _: "file://fileserver.invalid/share/Mass/resources")
    assert proc.returncode == 1, proc.stdout
    assert ("cannot read this FMU's GUID from \\\\fileserver.invalid\\share\\Mass\\resources\\mechfmu_guid.txt"
            in proc.stdout), proc.stdout


@pytest.mark.parametrize("built_for", ["3.11", "3.10"])
def test_in_a_windows_python_host_the_fmu_uses_its_interpreter(python_fmus, host, wine, python_folder, windows_hosts,
                                                                built_for, tmp_path):
    """The C host's code in Windows Python 3.11 (python.exe, ctypes), as fmpy on Windows loads an FMU: no
    MECHFMU_PYTHON, a Python-embedding FMU uses the process's python311.dll; one built for another version says so
    and runs."""
    unzipped = unzip(python_fmus["Mass"], tmp_path / "fmu")
    if built_for != "3.11":
        compile_binary(unzipped / "binaries" / "win64" / "Mass.dll",
                       {"version": built_for, "soname": "", "library": ""}, "win64")
    md = read_model_description(str(unzipped))
    plan = tmp_path / "plan.txt"
    write_plan(md, COMPONENTS["Mass"].example_parameters, plan)
    arguments = windows_arguments(unzipped, md, plan, tmp_path / "windows.txt")
    proc = wine.run(python_folder / "python.exe", ["-I", "-c", STATIC_HOST, windows_path(windows_hosts["library"]),
                                                   *arguments])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    warned = "[WARNING] host: this FMU was built for Python 3.10; the host process runs Python 3.11" in proc.stdout
    assert warned == (built_for == "3.10"), proc.stdout
    assert read_output(tmp_path / "windows.txt") == linux_rows(host, unzipped, md, plan, tmp_path)


@pytest.mark.parametrize("model", ["Mass", "ElastoGap", "Step", "CoordinateSpringDamperExt"])
def test_model_exchange_on_windows_as_on_linux_bit_for_bit(fmus, me_host, wine, windows_hosts, model, tmp_path):
    """The Model Exchange host (explicit Euler with state and time events, tests/fmi2_me_host.c), built for
    both platforms: every output, state and the event count equal."""
    unzipped = unzip(fmus[model], tmp_path / "fmu")
    md = read_model_description(str(unzipped))
    plan = tmp_path / "plan.txt"
    write_plan(md, COMPONENTS[model].example_parameters, plan)
    plan.write_text(f"states {len(md.derivatives)} {md.numberOfEventIndicators}\n" + plan.read_text())
    proc = wine.run(windows_hosts["fmi2_me_host"], windows_arguments(unzipped, md, plan, tmp_path / "windows.txt"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    binary = unzipped / "binaries" / "linux64" / f"{model}.so"
    linux = run_c_host(me_host, [str(binary), (unzipped / "resources").as_uri(), md.guid, str(plan),
                                 str(tmp_path / "linux.txt")])
    assert linux.returncode == 0, linux.stdout
    windows_lines = (tmp_path / "windows.txt").read_text().splitlines()
    linux_lines = (tmp_path / "linux.txt").read_text().splitlines()
    assert len(windows_lines) == 301 and windows_lines[-1].startswith("events ")
    assert [[float.fromhex(v) for v in line.split()] for line in windows_lines[:-1]] == \
        [[float.fromhex(v) for v in line.split()] for line in linux_lines[:-1]]
    assert windows_lines[-1] == linux_lines[-1]
