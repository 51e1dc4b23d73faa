"""The error estimate's companion beside the run (mechfmu/master/alongside.py): the same estimate as after the run,
its own FMU instances, cancelled when the run ends early, never left running."""
import threading

import numpy as np
import pytest

from mechfmu.master import alongside
from mechfmu.master import simulate as simulate_module
from mechfmu.master.observers import Observer
from mechfmu.master.simulate import simulate


def companion_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "mechfmu error estimate"]


def run(monkeypatch, beside: bool, **kwargs):
    made = []

    class Counted(alongside.Alongside):
        def __init__(self, work):
            made.append(self)
            super().__init__(work)
    monkeypatch.setattr(simulate_module, "beside_allowed", lambda: beside)
    monkeypatch.setattr(alongside, "Alongside", Counted)
    return simulate("scenarios/stick_slip", **kwargs), made


@pytest.mark.parametrize("stop", [0.3, 3.0])
def test_the_estimate_beside_the_run_is_the_one_after_it(fmus, monkeypatch, stop):
    """Beside the run or after it, the companion computes the same: the same estimate to the bit, the same calls
    counted (its own instances' start counts as the pool's reset does), the same rows of the run."""
    beside, made = run(monkeypatch, True, stop=stop)
    after, none = run(monkeypatch, False, stop=stop)
    assert len(made) == 1 and not none  # beside once, after without a thread
    assert beside.ok and after.ok and beside.accuracy.method.startswith("Richardson")
    assert vars(beside.accuracy) == vars(after.accuracy)
    assert beside.counters == after.counters and beside.counters["estimate_fmu_calls"] > 0
    assert np.array_equal(beside.data, after.data)
    assert not companion_threads()


class FailingAt(Observer):
    """Ends the run it observes with an error once it passes ``time``."""

    def __init__(self, time: float) -> None:
        self.time = time

    def step_completed(self, run) -> None:
        if run.time > self.time:
            raise ValueError(f"an observer gave up at t = {run.time}")

    def rows_completed(self, run, rows) -> None:
        self.step_completed(run)

    def takes_rows(self) -> bool:
        return True


def test_a_run_that_ends_early_cancels_its_companion(fmus, monkeypatch):
    """A run of 10^7 steps that fails at 0.5 s: its companion beside it (2.5·10^6 steps) sees the cancel at its next
    block and stops there; no thread is left and the run's error is the one reported."""
    seen = []
    original = alongside.Stopper.rows_completed

    def watched(self, run, rows):
        seen.append(self.event.is_set())
        original(self, run, rows)
    monkeypatch.setattr(alongside.Stopper, "rows_completed", watched)
    result, made = run(monkeypatch, True, stop=1000.0, record=False, observers=[FailingAt(0.5)])
    assert result.status == "error" and "an observer gave up" in result.message
    assert len(made) == 1 and seen and seen[-1] is True  # it stopped at the cancel, not at its end
    assert isinstance(made[0]._error, alongside.Cancelled)
    assert not companion_threads()


def test_the_companion_beside_is_off_by_environment_or_on_one_core(monkeypatch):
    monkeypatch.setattr(alongside.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setenv(alongside.ENVIRONMENT, "0")
    assert not alongside.beside_allowed()
    monkeypatch.setenv(alongside.ENVIRONMENT, "1")
    assert alongside.beside_allowed()
    monkeypatch.setattr(alongside.os, "sched_getaffinity", lambda pid: {0})
    assert not alongside.beside_allowed()


def test_an_error_in_the_companion_reaches_the_run_that_waits_for_it():
    def work(event):
        raise RuntimeError("the companion broke")
    with pytest.raises(RuntimeError, match="the companion broke"):
        alongside.Alongside(work).result()


def test_no_fmu_is_loaded_while_the_companion_runs_beside(fmus, monkeypatch):
    """fmpy changes the process's working directory while it loads an FMU: every instance of the run and of its
    companion is made before the companion's thread starts, none in it, and a relative path means the same
    throughout the run."""
    import os

    from mechfmu.master.fmu_slave import FmuSlave
    made_in = []
    original = FmuSlave.__init__

    def init(self, *args, **kwargs):
        made_in.append((threading.current_thread().name, len(companion_threads())))
        original(self, *args, **kwargs)
    monkeypatch.setattr(FmuSlave, "__init__", init)

    class WorkingDirectory(Observer):
        seen: set = set()

        def rows_completed(self, run, rows) -> None:
            self.seen.add(os.getcwd())

        def takes_rows(self) -> bool:
            return True
    watcher = WorkingDirectory()
    result, made = run(monkeypatch, True, stop=3.0, observers=[watcher])
    assert result.ok and len(made) == 1 and result.accuracy.method.startswith("Richardson")
    assert made_in and all(thread == "MainThread" and running == 0 for thread, running in made_in), made_in
    assert watcher.seen == {os.getcwd()}


def test_a_pool_filled_beforehand_makes_no_instance():
    from mechfmu.master.instance_pool import InstancePool
    from mechfmu.master.slaves import SlaveError
    with pytest.raises(SlaveError, match="mass: no instance of .*Mass.fmu \\(co-simulation\\) was made for this run"):
        InstancePool(makes=False).take("mass", "fmus/Mass.fmu")


def test_a_companion_beside_that_failed_leaves_the_one_at_2h_to_after_the_run():
    """The companion at 4h beside the run: used where it ended well; interrupted, the estimate is; failed (or too
    few steps for it), the companion at 2h runs after the run, in the thread that may make FMU instances."""
    from types import SimpleNamespace
    asked = []

    def companion(factor, **kwargs):
        asked.append((factor, kwargs))
        return SimpleNamespace(ok=True, status="ok"), f"rows at {factor}h"
    good, interrupted, failed = (SimpleNamespace(ok=status == "ok", status=status, message="it failed")
                                 for status in ("ok", "interrupted", "error"))
    assert alongside.after_beside((good, "rows at 4h"), companion, 100, 1e-3) == ((good, "rows at 4h"), 4, "")
    assert alongside.after_beside((interrupted, "rows"), companion, 100, 1e-3)[2].startswith("the companion run was "
                                                                                               "interrupted")
    assert not asked
    (ran, rows), factor, note = alongside.after_beside((failed, "rows"), companion, 100, 1e-3)
    assert (rows, factor, note) == ("rows at 2h", 2, "") and asked == [(2, {})]
    (ran, rows), factor, note = alongside.after_beside((None, "rows"), companion, 100, 1e-3)
    assert factor == 2 and asked[-1] == (2, {})
