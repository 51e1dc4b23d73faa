"""Ctrl-C: `mechfmu run` stops at the next macro step, writes what was computed as a partial CSV,
prints one line and exits 130, with no traceback and no crash."""
import math
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import slow_but
from fmpy.util import read_csv

ROOT = Path(__file__).resolve().parent.parent
STEP = 1e-4  # the oscillator's step
STOP = "1000"  # 10 million steps: ten times what a fast machine takes in the longest delay below


def start(out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "mechfmu.cli", "run", "scenarios/oscillator", "--stop", STOP,
                             "--out", str(out)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(predicate, timeout: float) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.005)


def check_interrupted(proc: subprocess.Popen, out: Path) -> str:
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, (proc.returncode, stdout, stderr)  # not -11 (segfault), not 1
    assert "Traceback" not in stdout + stderr and "Fatal" not in stdout + stderr, stdout + stderr
    assert [p.name for p in out.parent.iterdir() if p.name.startswith(".")] == []  # no temporary file or lock
    return stdout


@pytest.mark.slow
def test_sigint_at_random_moments_of_a_run_keeps_a_valid_partial_csv(fmus, tmp_path):
    rng = random.Random(13)
    for trial in range(20):
        out = tmp_path / f"run{trial}" / "x.csv"
        out.parent.mkdir()
        proc = start(out)
        wait_for(lambda: any(out.parent.glob(".x.csv.*.tmp")), 120)  # the run has started
        time.sleep(rng.uniform(0.0, 1.0))
        proc.send_signal(signal.SIGINT)
        stdout = check_interrupted(proc, out)
        partial = out.parent / "x.partial.csv"
        lines = stdout.splitlines()
        assert len(lines) == 1 and lines[0].endswith(f"results up to there written to {partial}"), stdout
        t_end = float(re.search(r"interrupted \(SIGINT\) at t=(\S+) s", lines[0]).group(1))  # six digits
        data = read_csv(partial)
        assert not out.exists()
        n = len(data)
        assert data["time"][-1] == pytest.approx(t_end, rel=1e-6) and n == round(data["time"][-1] / STEP) + 1
        assert np.array_equal(data["time"], np.arange(n) * STEP)  # t_n = n*h: every row whole, none lost
        assert np.isfinite(np.array(data.tolist())).all()


@pytest.mark.parametrize("delay", slow_but([0.5, 1.0, 1.5, 2.5], 0.5))
def test_sigint_while_starting_up_exits_130_without_traceback(fmus, tmp_path, delay):
    out = tmp_path / "x.csv"
    proc = start(out)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    stdout = check_interrupted(proc, out)
    if (tmp_path / "x.partial.csv").exists():  # the run had started: a valid partial file
        assert len(read_csv(tmp_path / "x.partial.csv")) >= 1 and "written to" in stdout
    assert not out.exists()


@pytest.mark.parametrize("name, code", [("SIGTERM", 143), ("SIGHUP", 129)])
@pytest.mark.slow
def test_sigterm_and_sighup_keep_the_results_as_ctrl_c_does(fmus, tmp_path, name, code):
    """What timeout, kill and batch schedulers send (and a closed terminal) stops the run at its next step like
    Ctrl-C: a valid partial CSV, one line naming the signal, exit 128 + its number, no temporary file left."""
    out = tmp_path / "x.csv"
    proc = start(out)
    wait_for(lambda: any(tmp_path.glob(".x.csv.*.tmp")), 120)
    time.sleep(0.3)
    proc.send_signal(getattr(signal, name))
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == code and "Traceback" not in stdout + stderr, (proc.returncode, stdout, stderr)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    t_end = float(re.search(rf"interrupted \({name}\) at t=(\S+) s", stdout).group(1))
    data = read_csv(tmp_path / "x.partial.csv")
    assert data["time"][-1] == pytest.approx(t_end, rel=1e-6) and len(data) == round(data["time"][-1] / STEP) + 1


def interrupt_at_point(monkeypatch, point: int) -> list[int]:
    """Send SIGINT to this process at the ``point``-th recorded point of any run (the run's or a companion's, in
    the order they are computed); the count so far is returned (a list, updated). The runs go call by call through
    Python (``MECHFMU_EXCHANGE=python``), so every point passes ``record_point`` (in the compiled exchange's blocks a
    request is answered between blocks, as in the runs of the processes above), and the companion after the run
    (``MECHFMU_COMPANION_BESIDE=0``), so its points come after the run's."""
    from mechfmu.master.alongside import ENVIRONMENT
    from mechfmu.master.exchange import VARIABLE
    monkeypatch.setenv(VARIABLE, "python")
    monkeypatch.setenv(ENVIRONMENT, "0")
    import os

    from mechfmu.master import simulate as simulate_module
    count = [0]
    record = simulate_module.record_point

    def record_point(run, observers, t):
        count[0] += 1
        if count[0] == point:
            os.kill(os.getpid(), signal.SIGINT)
        record(run, observers, t)
    monkeypatch.setattr(simulate_module, "record_point", record_point)
    return count


#: a companion at 4h; auto's monolithic at 1000x its rtol; auto's co-simulation (events on), whose companions at 4h
#: and 2h say how many substeps it needs
ESTIMATED = [("jacobi", {}), (None, {}), ("auto", {"events": "on"})]


@pytest.mark.parametrize("algorithm, options", ESTIMATED, ids=["jacobi", "auto", "auto-co-simulation"])
def test_ctrl_c_early_in_an_estimated_run_keeps_the_rows_the_run_computed(monkeypatch, algorithm, options):
    """The run goes before its error estimate's companions: Ctrl-C at the 10th point computed stops the run there
    with the initial row and 10 steps kept, t_n = n·h (a companion run first kept the row at t = 0 only)."""
    from mechfmu.master.interrupt import INTERRUPT
    from mechfmu.master.simulate import simulate
    interrupt_at_point(monkeypatch, 10)
    try:
        result = simulate(ROOT / "scenarios" / "oscillator_linear", algorithm, local=True, stop=0.1, **options)
    finally:
        INTERRUPT.requested = False
    assert result.status == "interrupted", result.summary()
    assert np.array_equal(result.data["time"], np.arange(11) * STEP)
    assert result.end_time == 10 * STEP


@pytest.mark.parametrize("algorithm, options", ESTIMATED, ids=["jacobi", "auto", "auto-co-simulation"])
def test_ctrl_c_in_the_companion_keeps_the_whole_run_without_its_estimate(monkeypatch, algorithm, options):
    """Ctrl-C while the companion runs, after the run's 1,000 steps: every row of the run is kept, the status says
    interrupted (the request stands: the command line exits 130) and the estimate is absent, saying why."""
    from mechfmu.master.interrupt import INTERRUPT
    from mechfmu.master.simulate import simulate
    count = interrupt_at_point(monkeypatch, 1000 + 10)
    try:
        result = simulate(ROOT / "scenarios" / "oscillator_linear", algorithm, local=True, stop=0.1, **options)
    finally:
        INTERRUPT.requested = False
    assert result.status == "interrupted" and "companion" in result.message, result.summary()
    assert np.array_equal(result.data["time"], np.arange(1001) * STEP) and result.end_time == 0.1
    assert math.isnan(result.accuracy.estimate) and "interrupted" in result.accuracy.note
    assert count[0] < 1000 + 20  # the companion stopped at the request


def test_auto_running_again_with_substeps_writes_the_second_runs_rows(tmp_path, monkeypatch):
    """auto's co-simulation of the two-mass oscillator needs 2 substeps for its tolerance, which its companions say
    after its first run at the step: the run goes again with them, and the result file holds the second run's rows
    (bit for bit the result's). Ctrl-C in the second run keeps its rows computed in x.partial.csv, and the whole
    first run in x.csv."""
    from mechfmu.master.interrupt import INTERRUPT
    from mechfmu.master.result_files import CsvWriter
    from mechfmu.master.simulate import simulate
    scenario, steps = ROOT / "scenarios" / "two_mass_oscillator", 1000
    writer = CsvWriter(tmp_path / "x.csv")
    result = simulate(scenario, "auto", local=True, stop=steps * 1e-3, events="on", observers=[writer])
    assert result.ok and "substeps=2" in result.choice and result.substeps == 2, result.choice
    written = read_csv(tmp_path / "x.csv")
    assert all(np.array_equal(written[n], result.data[n]) for n in result.data.dtype.names)
    first = simulate(scenario, "auto", local=True, stop=steps * 1e-3, events="on", substeps=1, estimate_error=False)
    # the steps: the first run's, its companions' at 4h and 2h, then 10 of the second run's
    interrupt_at_point(monkeypatch, steps + steps // 4 + steps // 2 + 10)
    try:
        stopped = simulate(scenario, "auto", local=True, stop=steps * 1e-3, events="on",
                           observers=[CsvWriter(tmp_path / "y.csv")])
    finally:
        INTERRUPT.requested = False
    assert stopped.status == "interrupted" and len(stopped.data) == 11, stopped.summary()  # t = 0 and 10 steps
    partial, whole = read_csv(tmp_path / "y.partial.csv"), read_csv(tmp_path / "y.csv")
    assert np.array_equal(partial["mass1.s"], stopped.data["mass1.s"])
    assert np.array_equal(whole["mass1.s"], first.data["mass1.s"])


def test_the_run_shows_its_progress_first_then_the_estimates_companion_its_own(monkeypatch):
    """On a terminal the run's bar comes first (the run goes first), then the companion's, labelled (the companion
    after the run: beside it, the run's bar is the one shown)."""
    import io

    from mechfmu.master.alongside import ENVIRONMENT
    from mechfmu.master.progress import ProgressBar
    from mechfmu.master.simulate import simulate
    monkeypatch.setenv(ENVIRONMENT, "0")

    class Terminal(io.StringIO):
        def isatty(self):
            return True
    terminal = Terminal()
    result = simulate(ROOT / "scenarios" / "oscillator_linear", "jacobi", local=True, stop=0.1,
                      observers=[ProgressBar(0.1, terminal, delay=0)])
    assert result.ok and result.accuracy.method.startswith("Richardson")
    shown = terminal.getvalue()
    run, companion = shown.find("oscillator_linear: "), shown.find("oscillator_linear (error estimate): ")
    assert 0 <= run < companion, shown[:300]
