"""The monolithic master's error estimate with its companion in a child process beside the run
(mechfmu/master/alongside.py, ``ForkLater``): the same estimate as after the run, its process never left behind,
its failure never the run's."""
import os
import signal
import threading
import time

import numpy as np
import pytest

from mechfmu.master import alongside
from mechfmu.master import simulate as simulate_module
from mechfmu.master.interrupt import INTERRUPT
from mechfmu.master.simulate import simulate

pytestmark = pytest.mark.skipif(not alongside.fork_allowed(), reason="the companion process needs Linux's fork")

SCENARIO = "scenarios/msl/Backlash"  # auto: monolithic, 52 state events


def run(monkeypatch, forked: bool, **kwargs):
    """The scenario with its estimate, the companion in a process from the run's start (``forked``) or after the
    run; the companion processes started."""
    started = []

    class Counted(alongside.Forked):
        def __init__(self, work):
            started.append(self)
            super().__init__(work)
    monkeypatch.setattr(simulate_module, "beside_allowed", lambda: forked)
    monkeypatch.setattr(alongside, "DELAY", 0.0)
    monkeypatch.setattr(alongside, "Forked", Counted)
    return simulate(SCENARIO, **kwargs), started


def test_the_estimate_from_the_companion_process_is_the_one_after_the_run(fmus, monkeypatch, tmp_path):
    """The companion in its own process computes what it computes after the run: the same estimate to the bit, the
    same calls counted, the same rows of the run; it ran in another process, which is gone."""
    where = tmp_path / "companion.pid"
    original = alongside.companion_after

    def noted(*args, **kwargs):
        where.write_text(str(os.getpid()))
        return original(*args, **kwargs)
    monkeypatch.setattr(alongside, "companion_after", noted)
    beside, started = run(monkeypatch, True)
    after, none = run(monkeypatch, False)
    assert len(started) == 1 and not none
    assert beside.ok and after.ok and beside.accuracy.method.startswith("this run against one at 1000 times")
    assert vars(beside.accuracy) == vars(after.accuracy)
    assert beside.counters == after.counters and beside.counters["estimate_fmu_calls"] > 0
    assert np.array_equal(beside.data, after.data)
    assert int(where.read_text()) != os.getpid()
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # no child left, reaped or not


def test_a_companion_process_that_dies_costs_the_estimate_not_the_run(fmus, monkeypatch):
    """An FMU crashing in the companion (here: its process killed) leaves the run whole, its estimate
    missing with how the companion's process ended."""
    monkeypatch.setattr(alongside, "companion_after", lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL))
    crashed, started = run(monkeypatch, True)
    without = simulate(SCENARIO, estimate_error=False)
    assert len(started) == 1 and crashed.ok and np.array_equal(crashed.data, without.data)
    assert "killed by SIGKILL" in crashed.accuracy.note and crashed.accuracy.estimate != crashed.accuracy.estimate


def test_a_short_run_keeps_its_companion_after_it(fmus, monkeypatch):
    """A run shorter than DELAY forks nothing: its companion runs after it, in this process."""
    started = []
    monkeypatch.setattr(alongside, "Forked", lambda work: started.append(work))
    result = simulate("scenarios/msl/Accelerate", algorithm="monolithic")
    assert result.ok and result.algorithm == "monolithic" and result.accuracy.method and not started


def test_an_interrupt_while_waiting_ends_the_companion_process():
    """A request to stop (Ctrl-C) while the run waits for its companion: the companion process is killed and
    reaped at once, and the waiting ends with ``Interrupted``."""
    process = alongside.Forked(lambda: time.sleep(60))
    INTERRUPT.requested = True
    try:
        began = time.perf_counter()
        with pytest.raises(alongside.Interrupted):
            process.result(60.0)
        assert time.perf_counter() - began < 5 and process.pid == 0 and process.ended == "killed by SIGKILL"
    finally:
        INTERRUPT.requested = False
        process.cancel()


def test_the_companion_process_answers_its_error_or_its_end():
    assert alongside.Forked(lambda: ("rows", 3)).result(60.0) == ("rows", 3)
    with pytest.raises(alongside.CompanionLost, match="ValueError: the companion broke"):
        alongside.Forked(lambda: (_ for _ in ()).throw(ValueError("the companion broke"))).result(60.0)
    with pytest.raises(alongside.CompanionLost, match=r"without an answer \(exit status 3\)"):
        alongside.Forked(lambda: os._exit(3)).result(60.0)


def test_a_companion_process_that_never_answers_is_ended_at_its_deadline():
    """A companion stuck in its process (a lock held at the fork by a thread of a third-party FMU) must not hold
    the run's end: past the deadline it is killed and reaped, and the estimate says why it is missing."""
    process = alongside.Forked(lambda: time.sleep(60))
    began = time.perf_counter()
    with pytest.raises(alongside.CompanionLost, match="did not answer within 0.3 s"):
        process.result(0.3)
    assert time.perf_counter() - began < 5 and process.pid == 0 and process.ended == "killed by SIGKILL"


def test_no_fork_beside_another_python_thread():
    """A lock another thread holds would stay held in the child: with a second Python thread, no fork."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not alongside.fork_allowed()
    finally:
        stop.set()
        other.join()
    assert alongside.fork_allowed()
