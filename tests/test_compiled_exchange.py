"""The compiled exchange (mechfmu/master/exchange.py, exchange.c): the master's batched FMI calls made by one call into
C give the Python path's results bit for bit and its call counts, and fail with the same messages."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mechfmu.master import exchange
from mechfmu.master.coupled_system import CoupledSystem
from mechfmu.master.fmu_slave import FmuSlave
from mechfmu.master.simulate import simulate
from mechfmu.master.slaves import SlaveError
from mechfmu.ssp.scenario import Connection

ROOT = Path(__file__).resolve().parent.parent


def counted_runs(monkeypatch) -> list[int]:
    """Counts the compiled programs run from now on (so a comparison cannot pass with the Python path twice)."""
    runs = [0]
    original = exchange.Program.run

    def run(self, *args, **kwargs):
        runs[0] += 1
        return original(self, *args, **kwargs)
    monkeypatch.setattr(exchange.Program, "run", run)
    return runs


@pytest.mark.parametrize("scenario, algorithm, options", [
    ("oscillator", None, {}),  # Jacobi: every step, transfer and recorded row compiled
    ("elastogap", None, {"stop": 1.0}),  # linear-implicit with tangents and located events (states saved, restored)
    ("two_mass_oscillator", "monolithic", {"stop": 0.5}),  # Model Exchange: the ODE's evaluation compiled
    ("limit_stops", "gauss-seidel", {"stop": 0.5}),  # a plan per slave
    ("geared_masses", "newton", {"stop": 0.2}),  # connection values set and read, states saved and restored
    ("geared_masses", "monolithic", {"stop": 0.2}),  # a constraint's force solved at every evaluation
    ("prescribed_motion", "monolithic", {"stop": 0.2}),  # and a constraint's offset in time (its state restored)
])
@pytest.mark.slow
def test_compiled_and_python_paths_give_the_same_bits_and_calls(fmus, monkeypatch, scenario, algorithm, options):
    runs = counted_runs(monkeypatch)
    compiled = simulate(ROOT / "scenarios" / scenario, algorithm, **options)
    assert compiled.profile.compiled_runs > 100, "the compiled exchange ran"  # its programs, one by one or in blocks
    monkeypatch.setenv(exchange.VARIABLE, "python")
    before = runs[0]
    python = simulate(ROOT / "scenarios" / scenario, algorithm, **options)
    assert runs[0] == before, "the Python path ran no program"
    assert compiled.ok and python.ok, (compiled.message, python.message)
    assert compiled.data.dtype == python.data.dtype
    assert compiled.data.tobytes() == python.data.tobytes()
    assert compiled.counters == python.counters
    assert compiled.accuracy.estimate == python.accuracy.estimate


def pair(fmus, spring: dict) -> tuple[CoupledSystem, dict]:
    """A mass on a spring (parameters ``spring``) to a fixed point, initialized, through the FMUs."""
    slaves = {"ground": FmuSlave("ground", fmus["Fixed"]), "spring": FmuSlave("spring", fmus["CoordinateSpringDamper"]),
              "mass": FmuSlave("mass", fmus["Mass"])}
    wires = ["ground.flange.s -> spring.flange_a.s", "mass.flange_a.s -> spring.flange_b.s",
             "mass.flange_a.v -> spring.flange_b.v", "spring.flange_b.f -> mass.flange_a.f"]
    connections = [Connection(*a.split(".", 1), *b.split(".", 1)) for a, b in (w.split(" -> ") for w in wires)]
    system = CoupledSystem(slaves, connections)
    slaves["spring"].set_parameters(spring)
    for slave in slaves.values():
        slave.enter_initialization(0.0, 1.0)
    for slave in slaves.values():
        slave.exit_initialization()
    return system, slaves


def failure(fmus, monkeypatch, python: bool, spring: dict, act) -> str:
    if python:
        monkeypatch.setenv(exchange.VARIABLE, "python")
    else:
        monkeypatch.delenv(exchange.VARIABLE, raising=False)
    system, slaves = pair(fmus, spring)
    try:
        with pytest.raises(SlaveError) as raised:
            act(system)
        return str(raised.value)
    finally:
        for slave in slaves.values():
            slave.release()


def test_a_failed_read_fails_with_the_fmus_message_on_both_paths(fmus, monkeypatch):
    """The spring's user function fails at the mass's position (sqrt of a negative number): its force read
    (fmi2GetReal) fails in the transfer, with the FMU's message, compiled as in Python."""
    spring = {"stiffness": 1.0, "springForceUserFunction": "sqrt(u - 10)"}
    messages = [failure(fmus, monkeypatch, python, spring, lambda s: s.transfer(s.ordered_plan))
                for python in (False, True)]
    assert messages[0] == messages[1]
    assert messages[0].startswith("spring: reading outputs failed: ") and "sqrt(u - 10)" in messages[0]


def test_a_step_at_a_wrong_time_fails_with_the_fmus_message_on_both_paths(fmus, monkeypatch):
    """A step from a time that is not the last step's end: the FMU logs an error (the compiled path sees it in the
    log, not in a status), the same SlaveError both ways."""
    def act(system):
        system.step_all(0.0, 1e-3)
        system.step_all(0.5, 1e-3)
    messages = [failure(fmus, monkeypatch, python, {"stiffness": 1.0}, act) for python in (False, True)]
    assert messages[0] == messages[1]
    assert "fmi2DoStep refused: currentCommunicationPoint = 0.5" in messages[0]


def test_without_a_c_compiler_the_python_path_runs(fmus, monkeypatch, tmp_path):
    """No compiler and no library built: the run goes through Python, with the same bits."""
    reference = simulate(ROOT / "scenarios" / "oscillator", stop=0.05)
    monkeypatch.setattr(exchange, "_library", [])
    monkeypatch.setenv("CC", str(tmp_path / "no-compiler"))
    monkeypatch.setattr("mechfmu.fmu.locations.FMU_DIR", tmp_path / "fmus")  # no library built there yet
    assert exchange.library() is None
    runs = counted_runs(monkeypatch)
    result = simulate(ROOT / "scenarios" / "oscillator", stop=0.05)
    assert runs[0] == 0 and np.array_equal(result.data, reference.data)
    monkeypatch.setattr(exchange, "_library", [])  # found again by the next test


def test_a_step_at_a_wrong_time_fails_the_same_way_in_the_fused_step(fmus, monkeypatch):
    """Jacobi's step and transfer as one program (``fused_step``): a refused doStep stops it with the message the
    step alone gives."""
    from mechfmu.master.fused_step import step_and_transfer

    def act(system):
        step_and_transfer(system, 0.0, 1e-3, system.ordered_plan)
        step_and_transfer(system, 0.5, 1e-3, system.ordered_plan)
    messages = [failure(fmus, monkeypatch, python, {"stiffness": 1.0}, act) for python in (False, True)]
    assert messages[0] == messages[1]
    assert "fmi2DoStep refused: currentCommunicationPoint = 0.5" in messages[0]


def chain_calls(masses: int, tmp_path) -> tuple[list, list, CoupledSystem]:
    """(the fused order, the step-then-transfer order, the system) of a mass-spring chain, in-process."""
    import sys
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from scaling import write_chain

    from mechfmu.master.fused_step import fused_order
    from mechfmu.master.simulate import instantiate
    from mechfmu.ssp.scenario import load_scenario
    scenario = load_scenario(write_chain(tmp_path, masses))
    slaves = instantiate(scenario, local=True)
    system = CoupledSystem(slaves, scenario.connections)
    plan = system.ordered_plan
    plain = ([("step", k) for k in range(len(slaves))]
             + [(kind, level, k) for level, transfer in enumerate(plan)
                for kind, count in (("get", len(transfer.gets)), ("set", len(transfer.sets))) for k in range(count)])
    return fused_order(list(slaves.values()), plan), plain, system


def test_the_fused_step_keeps_every_fmus_calls_and_values_and_moves_along_a_chain(tmp_path):
    """Against the step then the transfer (every doStep, then per level every read, then every write): the same
    calls; each slave's in the same order; each write after the reads whose values it passes; and along a chain
    of 201 FMUs a wavefront: each slave's calls lie within a few calls of one another (instead of a sweep apart)."""
    fused, plain, system = chain_calls(100, tmp_path)
    assert sorted(fused) == sorted(plain) and len(fused) == len(plain)
    plan = system.ordered_plan
    number = {id(slave): k for k, slave in enumerate(system.slaves.values())}

    def owner(call):
        if call[0] == "step":
            return call[1]
        return number[id((plan[call[1]].gets if call[0] == "get" else plan[call[1]].sets)[call[2]][0])]

    def per_slave(order):
        calls: dict[int, list[tuple[int, tuple]]] = {}
        for i, call in enumerate(order):
            calls.setdefault(owner(call), []).append((i, call))
        return calls
    ours, theirs = per_slave(fused), per_slave(plain)
    assert all([c for _, c in ours[k]] == [c for _, c in theirs[k]] for k in theirs)
    at = {call: i for i, call in enumerate(fused)}
    for level, transfer in enumerate(plan):
        read_by = [g for g, (_, names) in enumerate(transfer.gets) for _ in names]
        for s, (_, _, index, _) in enumerate(transfer.sets):
            assert all(at[("get", level, read_by[i])] < at[("set", level, s)] for i in index)
    span = max(calls[-1][0] - calls[0][0] for calls in ours.values())
    plain_span = min(calls[-1][0] - calls[0][0] for k, calls in theirs.items() if k > 0)
    assert span <= 10 < len(system.slaves) <= plain_span
