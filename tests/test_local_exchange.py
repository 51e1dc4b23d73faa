"""The in-process path through the compiled exchange: a component whose law is C (``NativeComponent``) is called in
its instance of the host library, with the FMI 2.0 functions' signatures, by the same compiled programs as an FMU
(``LocalSlave.exchange_functions``). A run so gives what the same in-process run gives call by call through Python
(``MECHFMU_EXCHANGE=python``), bit for bit: the rows, the status and message, the counters, the warnings and the
error estimate; for the co-simulation and the monolithic masters, where a run ends well, where a component refuses
a step or a point, and where a component warns mid-block. A spy on ``Program._seal`` shows the compiled exchange
took the in-process components. The host library's calls for the exchange run from four threads at once in a C host
under ThreadSanitizer and AddressSanitizer."""
import os
import shutil
import subprocess
from pathlib import Path
from unittest import mock

import pytest
from conftest import table_force
from mechfmu.components import COMPONENTS

import mechfmu.master.exchange as exchange
from mechfmu.master.simulate import simulate
from mechfmu.master.slaves import LocalSlave

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent


@pytest.fixture
def sealed_local(monkeypatch):
    """Counts the compiled programs sealed whose slaves are in-process components."""
    count = [0]
    seal = exchange.Program._seal

    def spied(self):
        count[0] += any(isinstance(slave, LocalSlave) for slave in self.slaves)
        return seal(self)

    monkeypatch.setattr(exchange.Program, "_seal", spied)
    return count


def through_python(monkeypatch, run):
    """``run()`` with every call made through Python."""
    monkeypatch.setenv(exchange.VARIABLE, "python")
    try:
        return run()
    finally:
        monkeypatch.delenv(exchange.VARIABLE)


def same(compiled, python) -> None:
    assert (compiled.status, compiled.message, compiled.end_time) == (python.status, python.message, python.end_time)
    assert compiled.algorithm == python.algorithm
    assert compiled.data.dtype == python.data.dtype and compiled.data.tobytes() == python.data.tobytes()
    for name in ("steps", "fmu_calls", "estimate_fmu_calls"):
        assert compiled.counters.get(name) == python.counters.get(name), name
    assert compiled.warnings == python.warnings
    assert (compiled.accuracy is None) == (python.accuracy is None)
    if python.accuracy is not None:
        assert compiled.accuracy.describe() == python.accuracy.describe()
        assert compiled.accuracy.states == python.accuracy.states


@pytest.mark.parametrize("scenario, kwargs", [
    ("stick_slip", dict(stop=1.0)),  # Jacobi in blocks, its estimate's companions too
    ("two_mass_oscillator", dict(stop=0.5)),
    ("limit_stops", dict(stop=0.4)),  # auto: the monolithic master, its state events
    ("msl/PreLoad", dict(stop=0.3)),  # the monolithic master with the friction elements' locked forces
    ("msl/CoupledClutches", dict(stop=0.3)),
    ("elastogap", dict(stop=0.3, algorithm="gauss-seidel")),
    ("oscillator", dict(stop=0.2, algorithm="jacobi", output_interval=7e-4)),
    ("geared_masses", dict(stop=0.2)),  # newton: the states saved, restored and freed in compiled programs
    ("prescribed_motion", dict(stop=0.2)),
    # the monolithic master's timed constraint: restored and stepped in the forces' programs
    ("prescribed_motion", dict(stop=0.2, algorithm="monolithic")),
    ("belt_friction", dict(stop=0.2)),
])
def test_an_in_process_run_is_the_same_through_the_compiled_exchange(monkeypatch, sealed_local, scenario, kwargs):
    path = ROOT / "scenarios" / scenario
    compiled = simulate(path, local=True, **kwargs)
    assert sealed_local[0] > 0, "no compiled program called the in-process components"
    sealed = sealed_local[0]
    python = through_python(monkeypatch, lambda: simulate(path, local=True, **kwargs))
    assert sealed_local[0] == sealed  # through Python: no program
    assert compiled.ok, compiled.message
    same(compiled, python)


@pytest.mark.parametrize("algorithm", ["jacobi", "monolithic"])
def test_a_refusal_ends_the_run_as_through_python(monkeypatch, sealed_local, algorithm):
    """A table without extrapolation refuses the time after its last row (0.05 s): in a step's program (Jacobi) or
    in the monolithic master's put; the same error, at the same time, as each call through Python."""
    settings = dict(stop=0.1, step=1e-3, algorithm=algorithm, estimate_error=False, local=True)
    compiled = table_force(4).run(**settings)
    assert sealed_local[0] > 0
    python = through_python(monkeypatch, lambda: table_force(4).run(**settings))
    assert compiled.status == "error" and "table" in compiled.message, compiled.message
    assert 0.05 - 1e-3 - 1e-12 <= compiled.end_time <= 0.05 + 1e-12
    same(compiled, python)


def constraint_steps(compiled: bool) -> LocalSlave:
    """A violated constraint whose lambda nobody writes, five steps: each the set of its position and the step, in
    one compiled program per step (``compiled``) or call by call through Python."""
    slave = LocalSlave("c", COMPONENTS["CoordinateConstraint"])
    slave.set_parameters({"offset": 0.1})
    slave.enter_initialization(0.0, 1.0)
    slave.exit_initialization()
    program = exchange.Program(exchange.library())
    start = program.reserve(1)
    program.set(slave, ["flange_b.s"], start)
    program.call(exchange.DO_STEP, slave)
    for n in range(5):
        if compiled:
            program.values[start] = 0.05 * n
            program.run(n * 1e-3, 1e-3)
        else:
            slave.set(["flange_b.s"], [0.05 * n])
            assert slave.do_step(n * 1e-3, 1e-3)
    return slave


def test_a_warning_logged_in_a_program_is_kept_as_through_python(sealed_local):
    """The constraint warns once, in its second step (status warning: the step goes on); the compiled program's
    run takes the warning from its log as the calls through Python take it, and counts the same calls."""
    compiled, python = constraint_steps(True), constraint_steps(False)
    assert sealed_local[0] == 1
    assert len(compiled.warnings()) == 1
    assert "'c': the constraint is violated by -0.1 m at t = 0.001 s" in compiled.warnings()[0]
    assert compiled.warnings() == python.warnings()
    assert compiled.calls == python.calls == 1 + 1 + 1 + 5 * 2  # parameters, initialization, five steps' two calls


def test_an_in_process_run_is_the_fmus_run(fmus):
    """The same calls as the FMUs' (each law the one C): the same rows, bit for bit."""
    path = ROOT / "scenarios" / "geared_rotors"
    local, through_fmus = simulate(path, local=True, stop=0.3), simulate(path, stop=0.3)
    assert local.ok and through_fmus.ok
    assert local.data.tobytes() == through_fmus.data.tobytes()


@pytest.mark.parametrize("sanitizer", ["thread", "address"])
def test_the_host_librarys_exchange_calls_on_four_threads_under_a_sanitizer(sanitizer, tmp_path):
    """tests/host_library_exchange_host.c: per thread and round a constraint (its warning, a refused step) and a
    Mass in Model Exchange (its derivatives, its FMU state saved, restored and freed, three refused calls), each
    call through the exchange's entry points:
    nothing reported, every call returns what an FMI function returns, and the one counter of messages
    (``host_count_messages``) counts every line the instances logged, from all threads."""
    from mechfmu.fmu.native import compile_library
    clang = shutil.which("clang")
    assert clang, "this test needs clang with its sanitizers (apt-get install clang; .ci/run installs it)"
    wrapper = tmp_path / "clang-sanitized"
    wrapper.write_text(f'#!/bin/sh\nexec {clang} -fsanitize={sanitizer} -g -fno-omit-frame-pointer "$@"\n')
    wrapper.chmod(0o755)
    library = tmp_path / "host_library.so"
    with mock.patch.dict(os.environ, {"CC": str(wrapper)}):
        compile_library(library)
    host = tmp_path / "host"
    subprocess.run([clang, f"-fsanitize={sanitizer}", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-o", str(host),
                    str(HERE / "host_library_exchange_host.c"), "-ldl", "-lpthread"], check=True)
    constraint = LocalSlave("c", COMPONENTS["CoordinateConstraint"]).variables
    threads, rounds = 4, 30
    proc = subprocess.run([str(host), str(library), str(threads), str(rounds),
                           str(constraint["offset"].value_reference), str(constraint["flange_b.s"].value_reference)],
                          capture_output=True, text=True, timeout=600,
                          env={"TSAN_OPTIONS": "halt_on_error=1 exitcode=66", "ASAN_OPTIONS": "detect_leaks=1"})
    assert "Sanitizer" not in proc.stderr, proc.stderr[-6000:]
    # per round five messages: the constraint's warning and refused step, the Mass's three refused calls
    expected = 5 * threads * rounds
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert proc.stdout.split() == ["messages", str(expected), "counted", str(expected), "failures", "0"], proc.stdout
