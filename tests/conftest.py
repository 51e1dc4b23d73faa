import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import fmpy
import pytest

from mechfmu.fmu import build
from mechfmu.fmu.native import PLATFORMS

HERE = Path(__file__).resolve().parent
HEADERS = Path(fmpy.__file__).parent / "c-code"  # the FMI 2.0 headers fmpy ships
#: the modules that take longest (measured: the wheel built for every platform 3.5 min, then 1 to 1.5 min each),
#: started first in this order: pytest-xdist gives each worker a module at a time (--dist loadfile, in collection
#: order: --no-loadscope-reorder), so the workers end together instead of one running these alone at the end
FIRST = ("test_install.py", "test_omsimulator.py", "test_constraints.py", "test_monolithic_msl.py",
         "test_accuracy.py", "test_native_fuzzing.py", "test_fmi3.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    order = {name: i for i, name in enumerate(FIRST)}
    items.sort(key=lambda item: order.get(item.path.name, len(FIRST)))  # stable: each module keeps its own order


@pytest.fixture(scope="session", autouse=True)
def temporary_directory(tmp_path_factory):
    """The session's temporary files (``tempfile``'s and every tool's it starts: TMPDIR) in pytest's own temporary
    folder, which pytest removes after the next runs: what a library leaves behind (fmpy's unpacked FMUs) does not
    pile up in the machine's /tmp."""
    folder = tmp_path_factory.mktemp("tmp")
    before = os.environ.get("TMPDIR")
    os.environ["TMPDIR"], tempfile.tempdir = str(folder), None
    yield folder
    if before is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = before
    tempfile.tempdir = None


@pytest.fixture(scope="session", autouse=True)
def fmus(temporary_directory):
    """Build the FMUs (if stale) with binaries for every platform before any test: scenarios reference them, the
    platform tests load the others. Returns {model: path}."""
    build.build(platforms=list(PLATFORMS))
    return {m: build.fmu_path(m) for m in build.model_names()}


@pytest.fixture(scope="session")
def python_fmus(tmp_path_factory):
    """Every component built as a Python-embedding FMU (``mechfmu build --backend python``; the shipped FMUs are
    native), for Linux and Windows: {model: path}."""
    directory = tmp_path_factory.mktemp("python_fmus")
    build.build(directory=directory, platforms=["linux64", "win64"], backend="python")
    return {m: build.fmu_path(m, directory) for m in build.model_names()}


def compile_c_host(source: str, target: Path, *flags: str) -> Path:
    """tests/<source>.c compiled by the system C compiler into ``target``."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    assert compiler, "a C compiler is needed to build the C hosts"
    subprocess.run([compiler, "-O2", "-Wall", "-Wextra", "-Werror", f"-I{HEADERS}", *flags, "-o", str(target),
                    str(HERE / f"{source}.c"), "-ldl"], check=True)
    return target


@pytest.fixture(scope="session")
def host(tmp_path_factory):
    """tests/fmi2_host.c: (executable, shared library for Python hosts: run_host())."""
    directory = tmp_path_factory.mktemp("c_host")
    return (compile_c_host("fmi2_host", directory / "fmi2_host"),
            compile_c_host("fmi2_host", directory / "libfmi2_host.so", "-shared", "-fPIC", "-DHOST_LIBRARY"))


@pytest.fixture(scope="session")
def fault_host(tmp_path_factory):
    """tests/fmi2_fault_host.c (tests/test_fmu_faults.py has its scripts)."""
    return compile_c_host("fmi2_fault_host", tmp_path_factory.mktemp("fault_host") / "fmi2_fault_host")


@pytest.fixture(scope="session")
def me_host(tmp_path_factory):
    """tests/fmi2_me_host.c, the Model Exchange host."""
    return compile_c_host("fmi2_me_host", tmp_path_factory.mktemp("me_host") / "fmi2_me_host")


def slow_but(cases, *fast) -> list:
    """``cases`` (values, or tuples of values for several argument names) as parametrize cases, each marked
    slow except those in ``fast``, which stay in the fast tier (``pytest -m "not slow"``)."""
    return [pytest.param(*case if isinstance(case, tuple) else (case,), marks=() if case in fast else pytest.mark.slow)
            for case in cases]


def components_with(work: Path, module: str, source: str) -> Path:
    """A copy of our components folder in ``work`` with one more module ``module`` (its ``source``), for
    building FMUs of a component that is not shipped."""
    from mechfmu.fmu.build import COMPONENTS_DIR
    components = work / "components"
    shutil.copytree(COMPONENTS_DIR, components, ignore=shutil.ignore_patterns("__pycache__"))
    (components / f"{module}.py").write_text(source)
    return components


def rebind(ssd: Path, component: str, bindings: str) -> None:
    """The SSD at ``ssd`` with ``component``'s ``<ssd:ParameterBindings>`` content replaced by ``bindings``."""
    text = ssd.read_text()
    start = text.index("<ssd:ParameterBindings>", text.index(f'<ssd:Component name="{component}"'))
    end = text.index("</ssd:ParameterBindings>", start)
    ssd.write_text(text[:start] + f"<ssd:ParameterBindings>{bindings}" + text[end:])


def unavailable(message: str) -> None:
    """A tool a test needs is not on this machine: the test is skipped saying so; a failure under CI
    (``CI=true``), whose ``.ci/run`` provides every one."""
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def missing_system_package(package: str, why: str) -> None:
    """A test's system package is missing (``unavailable``), named with how to install it."""
    unavailable(f"{why}: this test needs the system package {package} (apt-get install {package}; .ci/run "
                "installs it)")


def omsimulator_program() -> str:
    """OpenModelica's OMSimulator program (``mechfmu.crosscheck.omsimulator.find_omsimulator``), else
    ``unavailable``."""
    from mechfmu.crosscheck.omsimulator import OMSIMULATOR_VARIABLE, find_omsimulator
    program = find_omsimulator()
    if program is None:
        unavailable(f"OMSimulator not found: set {OMSIMULATOR_VARIABLE} to its program or put OMSimulator on PATH")
    return program


def table_force(extrapolation: int):
    """A System: a mass pushed by a table's force (1 N from 0 to 0.05 s, ``extrapolation`` beyond)."""
    from mechfmu import Force, Mass, System, Table
    s = System("table_force")
    table = s.add("table", Table(table="0, 1; 0.05, 1", extrapolation=extrapolation))
    force = s.add("force", Force())
    mass = s.add("mass", Mass(m=1.0))
    s.connect(table.y, force.f)
    s.connect(force.flange, mass.flange_a)
    return s


def interpolated(rows: list[tuple[float, float]], steps: int, h: float) -> list[float]:
    """y at t = 0, h, ..., steps h by linear interpolation in ``rows`` (time, y), held after the last row
    (a Table's extrapolation 1), in the order of operations the law documents (components/table.py): the
    independent expectation of a Table's run."""
    ys = []
    for k in range(steps + 1):
        t = k * h
        if t >= rows[-1][0]:
            ys.append(rows[-1][1])
            continue
        (t0, y0), (t1, y1) = next((a, b) for a, b in zip(rows, rows[1:]) if a[0] <= t < b[0])
        ys.append(y0 + (y1 - y0) * (t - t0) / (t1 - t0))
    return ys


@pytest.fixture(scope="session")
def fmi3_fmus(fmus):
    """Every FMI 3.0 FMU, for this machine (built if stale): {model: path}."""
    from mechfmu.fmu import fmi3
    fmi3.build()
    return {m: fmi3.fmu_dir() / f"{m}.fmu" for m in build.model_names()}
