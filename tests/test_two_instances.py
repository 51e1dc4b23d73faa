"""Two instances of one FMU in one process, driven the way ecos 0.7.2 drives them
(tests/fmi2_two_instance_host.c: a plain C host, no Python in the process): both instances of one
unzipped FMU with one instance name, the library closed and opened again between the two
fmi2Instantiate calls (fmi4c does this at every instantiation), the two instances stepped at the same
time from a pool of two threads that swap them every step. Each instance must give what it gives
alone in fmpy, bit for bit, with its own parameters and inputs; and once both are freed and the host
has closed the library, the library is unloaded. And instances made, stepped and freed from four threads at
once (tests/fmi2_thread_host.c) while every call looks its handle up without a lock."""
import shutil
import subprocess
from pathlib import Path

import fmpy
import pytest
from fmpy import read_model_description
from test_c_host import fmpy_rows, read_output, unzip, write_plan

HERE = Path(__file__).resolve().parent
HEADERS = Path(fmpy.__file__).parent / "c-code"  # the FMI 2.0 headers fmpy ships
#: two different parameter sets per model (the elastogap scenario's instances and the examples)
PARAMETERS = {
    "Fixed": ({"s0": -2.0}, {"s0": 2.0}),
    "Mass": ({"m": 1.0, "s_start": 2.0}, {"m": 2.5, "L": 0.2, "s_start": 0.3, "v_start": -1.0}),
    "CoordinateSpringDamper": ({"stiffness": 10.0, "damping": 1.5, "offset": 1.0},
                               {"stiffness": 5000.0, "damping": 80.0, "offset": 0.1,
                                "springForceUserFunction": "0.1*k*u + k*u**3 + v*d + sin(t)"}),
    "ElastoGap": ({"c": 10.0, "d": 1.5, "s_rel0": 1.5}, {"c": 1000.0, "d": 30.0, "s_rel0": 0.5, "n": 1.5}),
}


def compiled_host(tmp_path_factory, name: str) -> Path:
    """tests/NAME.c compiled by the system C compiler."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    assert compiler, "a C compiler is needed to build the C host"
    executable = tmp_path_factory.mktemp(name) / name
    subprocess.run([compiler, "-O2", "-Wall", "-Wextra", "-Werror", f"-I{HEADERS}", "-o", str(executable),
                    str(HERE / f"{name}.c"), "-ldl", "-lpthread"], check=True)
    return executable


@pytest.fixture(scope="module")
def two_instance_host(tmp_path_factory):
    return compiled_host(tmp_path_factory, "fmi2_two_instance_host")


def run_two_instances(executable, fmu, model, mode, tmp_path):
    """Both instances through the host in `mode` ("once" or "reopen"); each instance's rows and plan,
    and the host's process."""
    unzipped = unzip(fmu, tmp_path / "fmu")
    md = read_model_description(str(unzipped))
    binary = unzipped / "binaries" / "linux64" / f"{md.coSimulation.modelIdentifier}.so"
    plans = [write_plan(md, PARAMETERS[model][i], tmp_path / f"plan{i}.txt", seed=3 + i) for i in range(2)]
    arguments = [str(binary), (unzipped / "resources").as_uri(), md.guid, str(tmp_path / "plan0.txt"),
                 str(tmp_path / "plan1.txt"), str(tmp_path / "out0.txt"), str(tmp_path / "out1.txt"), mode]
    # empty environment: no LD_PRELOAD, LD_LIBRARY_PATH, PYTHONHOME, PATH
    proc = subprocess.run([str(executable), *arguments], env={}, capture_output=True, text=True, timeout=120)
    rows = [read_output(tmp_path / f"out{i}.txt")[0] if proc.returncode == 0 else None for i in range(2)]
    return unzipped, md, plans, rows, proc


@pytest.mark.parametrize("model", sorted(PARAMETERS))
def test_two_instances_in_a_host_that_reloads_the_library_equal_each_alone(fmus, two_instance_host, model,
                                                                          tmp_path):
    unzipped, md, plans, rows, proc = run_two_instances(two_instance_host, fmus[model], model, "reopen", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[ERROR]" not in proc.stdout and "[FATAL]" not in proc.stdout, proc.stdout
    for i in range(2):
        assert rows[i] == fmpy_rows(unzipped, md, PARAMETERS[model][i], plans[i]), f"instance {i}"
    assert rows[0] != rows[1]  # the two instances really differ: a mix-up could not pass unseen
    assert "binary_mapped_after_close 0" in proc.stdout, proc.stdout  # nothing keeps the library loaded


def test_two_instances_stepped_from_two_threads_equal_each_alone(fmus, two_instance_host, tmp_path):
    """One load of the library (no reopen): the threads and the shared instance name alone."""
    unzipped, md, plans, rows, proc = run_two_instances(two_instance_host, fmus["Mass"], "Mass", "once", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for i in range(2):
        assert rows[i] == fmpy_rows(unzipped, md, PARAMETERS["Mass"][i], plans[i]), f"instance {i}"
    assert "binary_mapped_after_close 0" in proc.stdout, proc.stdout


@pytest.fixture(scope="module")
def thread_host(tmp_path_factory):
    return compiled_host(tmp_path_factory, "fmi2_thread_host")


def test_instances_made_stepped_and_freed_on_four_threads_at_once_each_step_as_alone(fmus, thread_host, tmp_path):
    """The library's set of live instances, which every call looks its handle up in without a lock, while four
    threads each make 20 instances, step them and free them, 50 times over (4,000 instances; the set grows and
    is rebuilt, freed slots are taken again): every call returns fmi2OK and every instance's sine y = sin(2π t)
    after each of its 5 steps equals every other's (a handle resolved to another thread's instance would be at
    that one's time, and its step refused); afterwards each thread's last freed handle is refused."""
    unzipped = unzip(fmus["Sine"], tmp_path / "fmu")
    md = read_model_description(str(unzipped))
    y = next(v.valueReference for v in md.modelVariables if v.name == "y")
    binary = unzipped / "binaries" / "linux64" / f"{md.coSimulation.modelIdentifier}.so"
    proc = subprocess.run([str(thread_host), str(binary), (unzipped / "resources").as_uri(), md.guid, str(y), "4",
                           "50", "20", "5"], env={}, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "instances 4000" in proc.stdout, proc.stdout + proc.stderr
