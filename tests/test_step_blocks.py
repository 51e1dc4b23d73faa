"""Fixed steps in blocks (mechfmu.master.step_blocks): a Jacobi run through the compiled exchange, many steps a
call, gives what the master's loop gives step by step, bit for bit: the rows, the counters, the FMU calls, the end
time, and the same error where a step fails, a row diverges, an FMU logs a warning or a read fails mid-block.

The step-by-step loop is what the master runs where an observer takes its rows one at a time (``OneByOne``), so
each case runs twice, with and without it, and the two are compared; a spy on ``StepBlocks.advance`` shows which
loop ran."""
from pathlib import Path

import numpy as np
import pytest
from conftest import components_with, table_force
from scipy.io import loadmat

import mechfmu.master.step_blocks as step_blocks
from mechfmu.fmu.build import build
from mechfmu.master.observers import Observer
from mechfmu.master.result_files import CsvWriter, MatWriter
from mechfmu.master.simulate import simulate
from mechfmu.ssp.scenario import ComponentSpec, Connection, Scenario

PROBE = '''"""BlockProbe: a test component. y = its time; after the step that ends at ``warn_at`` it logs a warning, and
reading its outputs at ``fail_at`` or later fails."""
from .base import Component, Input, Output, Param


class BlockProbe(Component):
    description = "test only"
    parameters = (Param("warn_at", -1.0, "s", "when the step warns"), Param("fail_at", 1e9, "s", "when reads fail"))
    inputs = (Input("u", 0.0),)
    outputs = (Output("y"),)

    def compute_outputs(self):
        if self.time >= self.values["fail_at"] - 1e-12:
            raise ValueError("probe read fails")
        return {"y": self.time}

    def step_warnings(self):
        return ["probe warns"] if abs(self.time - self.values["warn_at"]) < 1e-12 else []
'''


class OneByOne(Observer):
    """Takes each row as it comes (``takes_rows`` False): the master steps one by one."""

    def __init__(self) -> None:
        self.rows: list[tuple[float, ...]] = []

    def initialized(self, run) -> None:
        self.rows = [run.row]

    def step_completed(self, run) -> None:
        self.rows.append(run.row)


#: the rows of the last run in blocks whose reads were made inside the step's program (``both``)
READ_INSIDE = [0]


@pytest.fixture
def blocks_taken(monkeypatch):
    """Counts the blocks run (``StepBlocks.advance`` calls), after them the steps a block left to the master
    (``finish_left``: a message logged, a read stopped), and the rows read inside the step's program."""
    calls: list = [0, 0, {}]
    advance, finish_left = step_blocks.StepBlocks.advance, step_blocks.StepBlocks.finish_left

    def counted(self, n):
        calls[0] += 1
        after = n
        try:
            after = advance(self, n)
            return after
        finally:  # per step size, the rows whose reads were made inside the step's program, and the step a block
            if self.read_of is not None:  # left with them made (a read stopped it, or a message of the step)
                why, failed = self.outcome[1], self.outcome[3]
                left = why == step_blocks.READ_STOPPED or (
                    why == step_blocks.LOGGED_IN_STEP and failed < 0 and self._recorded(after))
                calls[2][self.h] = calls[2].get(self.h, 0) + self.outcome[0] + left

    def left(self):
        calls[1] += 1
        return finish_left(self)

    monkeypatch.setattr(step_blocks.StepBlocks, "advance", counted)
    monkeypatch.setattr(step_blocks.StepBlocks, "finish_left", left)
    return calls


def in_blocks(blocks_taken, run):
    """``run()``'s result, the rows its own blocks read inside the step's program kept in READ_INSIDE (its step is
    the smallest: the error estimate's companions step at 2h and 4h)."""
    blocks_taken[2].clear()
    result = run()
    READ_INSIDE[0] = blocks_taken[2][min(blocks_taken[2])] if blocks_taken[2] else 0
    return result


def both(blocks_taken, scenario, **kwargs):
    """The run in blocks and step by step, each checked to have run so (where no companion run of the error
    estimate, which takes blocks of its own, follows)."""
    taken = blocks_taken[0]
    blocked = in_blocks(blocks_taken, lambda: simulate(scenario, **kwargs))
    assert blocks_taken[0] > taken, "the run in blocks did not take the blocks"
    taken = blocks_taken[0]
    one = OneByOne()
    stepped = simulate(scenario, observers=[one], **kwargs)
    if kwargs.get("estimate_error", True) is False:
        assert blocks_taken[0] == taken, "an observer that takes rows one by one must make the master step"
    if stepped.data is not None:
        assert np.array(one.rows).tobytes() == np.array(stepped.data.tolist()).tobytes()
    return blocked, stepped


def same(blocked, stepped, read_failed: bool = False) -> None:
    """The same rows, end and calls; with ``read_failed`` (a read that failed stopped the run) the reads made before
    it may differ by one per FMU: inside the step's program they follow its order, not the reader's."""
    assert (blocked.status, blocked.message, blocked.end_time) == (stepped.status, stepped.message, stepped.end_time)
    assert blocked.data.dtype == stepped.data.dtype and blocked.data.tobytes() == stepped.data.tobytes()
    calls = {name: (dict(f.calls), f.setup_calls) for name, f in blocked.profile.fmus.items()}
    expected = {name: (dict(f.calls), f.setup_calls) for name, f in stepped.profile.fmus.items()}
    extra = 0
    if read_failed:
        for name, (kinds, _) in calls.items():
            more = kinds.get("fmi2GetReal", 0) - expected[name][0].get("fmi2GetReal", 0)
            assert more in (0, 1), (name, more)
            kinds["fmi2GetReal"], extra = expected[name][0].get("fmi2GetReal", 0), extra + more
    assert blocked.counters["steps"] == stepped.counters["steps"]
    assert blocked.counters["fmu_calls"] == stepped.counters["fmu_calls"] + extra
    assert calls == expected
    # a row's reads made inside the step's program are no run of the reader's (the calls are the same)
    assert blocked.profile.compiled_runs + READ_INSIDE[0] == stepped.profile.compiled_runs


@pytest.mark.parametrize("scenario, kwargs", [
    ("stick_slip", dict(stop=2.0)),
    ("oscillator", dict(stop=0.3, output_interval=7e-4)),  # every 7th step recorded, and the last
    ("two_mass_oscillator", dict(stop=1.0, output_variables=["*.s"])),
    ("two_mass_oscillator", dict(stop=1.0, algorithm="monolithic")),  # the points between the integrator's steps
    ("two_mass_oscillator", dict(stop=0.987, algorithm="monolithic")),  # the last point at the stop, 0.987 s
    ("elastogap", dict(stop=0.5, algorithm="monolithic", output_interval=3e-3)),  # state events between them
    ("ball_drop", dict(stop=0.5, algorithm="monolithic")),
])
def test_the_rows_counters_and_calls_are_those_of_the_step_by_step_loop(fmus, blocks_taken, scenario, kwargs):
    blocked, stepped = both(blocks_taken, f"scenarios/{scenario}", estimate_error=False, **kwargs)
    assert blocked.ok, blocked.message
    same(blocked, stepped)
    assert blocked.data["time"][-1] == kwargs["stop"]


def test_the_error_estimate_is_the_same_in_blocks(fmus, blocks_taken):
    """The companion's rows and the comparison take blocks too: the same estimate, to the bit."""
    blocked, stepped = both(blocks_taken, "scenarios/stick_slip", stop=1.0)
    same(blocked, stepped)
    assert blocked.accuracy.states == stepped.accuracy.states and blocked.accuracy.time == stepped.accuracy.time


def test_the_files_written_in_blocks_are_those_written_row_by_row(fmus, blocks_taken, tmp_path):
    for writer, suffix in ((CsvWriter, ".csv"), (MatWriter, ".mat")):
        blocked, stepped = (tmp_path / f"blocked{suffix}", tmp_path / f"stepped{suffix}")
        simulate("scenarios/oscillator", stop=0.2, estimate_error=False, record=False, observers=[writer(blocked)])
        simulate("scenarios/oscillator", stop=0.2, estimate_error=False, record=False,
                 observers=[writer(stepped), OneByOne()])
        if suffix == ".csv":
            assert blocked.read_bytes() == stepped.read_bytes()
            continue
        mat = [loadmat(path) for path in (blocked, stepped)]  # the profile's seconds differ, not its calls
        assert mat[0]["data_2"].tobytes() == mat[1]["data_2"].tobytes() and mat[0]["data_2"].shape[1] > 100
        assert sorted(mat[0]["profile_data"][0]) == sorted(mat[1]["profile_data"][0])  # calls (ordered by time)


def test_a_diverging_run_stops_at_the_same_row(fmus, blocks_taken):
    blocked, stepped = both(blocks_taken, "scenarios/two_mass_oscillator", algorithm="jacobi", step=0.05, stop=50.0,
                            estimate_error=False)
    assert blocked.status == "error" and "diverged" in blocked.message and blocked.end_time < 10.0
    same(blocked, stepped)


@pytest.mark.parametrize("algorithm", ["jacobi", "monolithic"])
def test_a_step_refused_mid_block_ends_the_run_as_step_by_step(fmus, blocks_taken, algorithm):
    """A table without extrapolation refuses the time after its last row (t = 0.05 s)."""
    system = table_force(4)
    settings = dict(stop=0.1, step=1e-3, algorithm=algorithm, estimate_error=False)
    blocked = in_blocks(blocks_taken, lambda: system.run(**settings))
    stepped = system.run(observers=[OneByOne()], **settings)
    assert blocked.status == "error" and "table" in blocked.message, blocked.message
    assert blocks_taken[0] > 0
    assert 0.05 - 1e-3 - 1e-12 <= blocked.end_time <= 0.05 + 1e-12  # the step, or the read, past its last row
    same(blocked, stepped)


@pytest.fixture(scope="module")
def probe(tmp_path_factory, fmus):
    work = tmp_path_factory.mktemp("block_probe")
    components = components_with(work, "block_probe", PROBE)
    return build(["BlockProbe"], directory=work / "fmus", components_dir=components, platforms=["linux64"])[0]


def probed(probe: Path, fmus: dict, **parameters) -> Scenario:
    """The probe beside a mass on a spring (0.2 s at 1e-3 s under Jacobi)."""
    scenario = Scenario("probed", Path("."), {
        "probe": ComponentSpec("probe", probe, parameters),
        "wall": ComponentSpec("wall", fmus["Fixed"]),
        "spring": ComponentSpec("spring", fmus["CoordinateSpringDamper"], {"stiffness": 100.0}),
        "mass": ComponentSpec("mass", fmus["Mass"], {"m": 1.0, "s_start": 0.1}),
    }, [Connection(*a.split(".", 1), *b.split(".", 1)) for a, b in (
        ("wall.flange.s", "spring.flange_a.s"), ("wall.flange.v", "spring.flange_a.v"),
        ("mass.flange_a.s", "spring.flange_b.s"), ("mass.flange_a.v", "spring.flange_b.v"),
        ("spring.flange_b.f", "mass.flange_a.f"), ("mass.flange_a.s", "probe.u"))])
    scenario.stop_time, scenario.step_size = 0.2, 1e-3
    return scenario


def test_a_warning_logged_mid_block_is_kept_and_the_run_goes_on(fmus, probe, blocks_taken):
    blocked, stepped = both(blocks_taken, probed(probe, fmus, warn_at=0.123), algorithm="jacobi",
                            estimate_error=False)
    assert blocked.ok, blocked.message
    assert blocks_taken[1] == 1  # the block stopped at the warning, the master judged it, the blocks went on
    assert any("probe warns" in w for w in blocked.warnings), blocked.warnings
    assert blocked.warnings == stepped.warnings
    same(blocked, stepped)


def test_a_block_never_writes_more_rows_than_it_holds(fmus, probe, blocks_taken, monkeypatch):
    """Blocks of 2 rows (6 steps), every 3rd step recorded and the last: after the step a warning left to the master
    (n = 123) the blocks start at 124, 130, ..., so the last, 196 to 201, holds 2 points on the grid and the last
    step's (t = 0.202 s, off it); the block ends before the one it has no row for, and the rows are those of the
    step-by-step loop."""
    monkeypatch.setattr(step_blocks, "VALUES", 2 * 24)  # the probed scenario records 24 columns: 2 rows a block
    ended = [0]
    advance = step_blocks.StepBlocks.advance

    def watched(self, n):
        count, after = self._count(n), advance(self, n)
        ended[0] += after - n < count and self.left is None and not self.diverged
        assert self.outcome[0] <= len(self.rows)
        return after

    monkeypatch.setattr(step_blocks.StepBlocks, "advance", watched)
    settings = dict(algorithm="jacobi", output_interval=3e-3, stop=0.202, estimate_error=False)
    blocked = in_blocks(blocks_taken, lambda: simulate(probed(probe, fmus, warn_at=0.124), **settings))
    stepped = simulate(probed(probe, fmus, warn_at=0.124), observers=[OneByOne()], **settings)
    assert blocked.ok and len(blocked.data.dtype.names) == 24
    assert ended[0] > 0  # a block ended for want of room
    same(blocked, stepped)


def test_a_read_failing_mid_block_ends_the_run_as_step_by_step(fmus, probe, blocks_taken):
    blocked, stepped = both(blocks_taken, probed(probe, fmus, fail_at=0.1234), algorithm="jacobi",
                            estimate_error=False)
    assert blocked.status == "error" and "probe read fails" in blocked.message, blocked.message
    assert blocks_taken[1] == 1
    same(blocked, stepped, read_failed=True)


def test_a_row_read_inside_the_step_or_apart_is_the_same(fmus, blocks_taken, monkeypatch):
    """Jacobi's blocks read a row's outputs inside the step's program, right after each FMU's last call there; with
    the reader apart (after every FMU's calls) the rows and the calls are the same, and so are the step-by-step
    loop's."""
    inside, stepped = both(blocks_taken, "scenarios/stick_slip", stop=0.5, estimate_error=False)
    assert READ_INSIDE[0] == len(inside.data) - 1  # every row but the first (the master's, before the steps)
    same(inside, stepped)
    monkeypatch.setattr(step_blocks, "READS_INSIDE", [False])
    apart, _ = both(blocks_taken, "scenarios/stick_slip", stop=0.5, estimate_error=False)
    assert READ_INSIDE[0] == 0
    same(apart, stepped)
    assert apart.data.tobytes() == inside.data.tobytes()
