"""A study's runs on Dask in chunks (mechfmu/studies/on_dask.py), the workers' warm-up and ``mechfmu sweep``'s
throughput line. The expectations are independent of the chunking: every run has its row, equal to the run done
here alone, whatever chunk it went in, a chunk whose worker died or a study interrupted; the chunk sizes follow
their rule (about CHUNK_S of work, shrinking towards the end)."""
import json
import os
import subprocess
import sys

import pytest
from test_study import rows

from mechfmu.studies.on_dask import CHUNK_S, chunk_size
from mechfmu.studies.runner import Throughput, run_study
from mechfmu.studies.study import Study
from mechfmu.studies.worker import instance_pool, run_point, warm_up

#: oscillator in-process at 10 ms (100 steps, a few ms a run): many runs, each chunk several of them
FAST = {"scenario": "scenarios/oscillator", "metrics": {"v": "final(mass.v)", "peak": "max(mass.s)"},
        "fixed": {"stop": 0.01}, "local": True}


def fast_study(n=32):
    return Study(**FAST, grid={"mass.m": f"0.5:2:{n}"})


def test_chunks_are_a_second_of_work_and_shrink_towards_the_end():
    assert chunk_size(100, 2, None) == 1  # no run finished yet: one run a chunk
    assert chunk_size(1000, 2, 0.15) == int(CHUNK_S / 0.15)  # about CHUNK_S of work
    assert chunk_size(1000, 2, 10.0) == 1  # a run longer than CHUNK_S goes alone
    # at most the runs left over twice the worker threads: a geometric tail down to single runs
    assert [chunk_size(n, 2, 0.001) for n in (400, 40, 12, 5, 4, 1)] == [100, 10, 3, 2, 1, 1]
    left, sizes = 256, []
    while left:
        sizes.append(chunk_size(left, 2, 0.15))
        left -= sizes[-1]
    assert sizes[-4:] == [1, 1, 1, 1] and max(sizes) == int(CHUNK_S / 0.15) and sizes == sorted(sizes, reverse=True)


def test_the_forkserver_is_started_once_per_process(monkeypatch):
    """Only the first start sets the environment and changes the working folder (both process-wide): a later one,
    such as the local cluster's after the study's check, made while other threads run, does nothing."""
    from mechfmu.studies import forkserver
    started = []
    monkeypatch.setattr(forkserver, "_start", lambda: started.append(os.getcwd()))
    monkeypatch.setattr(forkserver, "_started_by", None)
    for _ in range(3):
        forkserver.start()
    assert started == ([os.getcwd()] if forkserver.available() else [])


def chunks(keys):
    """(kind, first run, runs) of each of our Dask keys (mechfmu-FINGERPRINT-KIND-FIRST-RUNS)."""
    return [(kind, int(first), int(n)) for kind, first, n in (str(key).rsplit("-", 3)[1:] for key in keys)]


@pytest.mark.slow
def test_a_chunked_study_on_two_workers_equals_the_sequential_one(tmp_path):
    """32 runs of a few ms: after the first runs a chunk holds several; the table equals the one made here."""
    from distributed import get_client
    s = fast_study()
    keys = set()

    def note(row):
        keys.update(get_client().run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.tasks)))
    counts = run_study(s, tmp_path / "dask.csv", workers=2, on_row=note, progress=True)
    assert counts == {"runs": 32, "done_before": 0, "computed": 32, "failed": 0}
    run_study(s, tmp_path / "here.csv", workers=0)
    assert rows(tmp_path / "dask.csv") == rows(tmp_path / "here.csv")
    sent = chunks(keys)
    assert {kind for kind, _, _ in sent} == {"chunk"} and max(n for _, _, n in sent) > 1
    assert sorted(sent)[:4] == [("chunk", i, 1) for i in range(4)]  # one run each until a run time is known


@pytest.mark.slow
def test_a_run_that_kills_its_worker_is_an_error_row_and_its_chunk_mates_are_not(tmp_path):
    """A worker plugin kills its worker (os._exit) whenever a task holding run 13 starts, on a cluster that allows
    no retry: the chunk with run 13 fails, its runs go again one per task, run 13 alone fails and is an error row
    "worker failed", the other runs are their own rows, equal to the runs done here."""
    from distributed import Client, LocalCluster, WorkerPlugin

    class KillOnRun13(WorkerPlugin):
        def transition(self, key, start, finish, **kwargs):
            first, n = (int(part) for part in str(key).rsplit("-", 2)[1:])
            if finish == "executing" and first <= 13 < first + n:
                os._exit(1)  # as a crash of the FMU would

    s = fast_study(24)
    import dask
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None, silence_logs=50)
    try:
        with Client(cluster) as client:
            client.register_plugin(KillOnRun13(), name="kill-on-run-13")
            counts = run_study(s, tmp_path / "dask.csv", scheduler=cluster.scheduler_address)
            tasks = client.run_on_scheduler(lambda dask_scheduler: [t.key for t in dask_scheduler.transition_log])
    finally:
        cluster.close()
    assert counts == {"runs": 24, "done_before": 0, "computed": 24, "failed": 1}
    run_study(s, tmp_path / "here.csv", workers=0)
    dask_rows, here = rows(tmp_path / "dask.csv"), rows(tmp_path / "here.csv")
    status = dask_rows[0].index("status")
    assert dask_rows[14][status] == "error" and dask_rows[14][status + 1].startswith("worker failed: KilledWorker")
    assert [r for i, r in enumerate(dask_rows) if i != 14] == [r for i, r in enumerate(here) if i != 14]
    sent = chunks(tasks)
    if any(first <= 13 < first + n and n > 1 for kind, first, n in sent if kind == "chunk"):
        assert ("run", 13, 1) in sent  # run 13's chunk had other runs: each was sent again alone


def test_a_warmed_up_process_runs_its_first_run_on_reset_instances():
    """The warm-up unpacks the FMUs and leaves their instances in the pool: the first run reuses them, and its row
    equals a run without warm-up."""
    s = Study("scenarios/limit_stops", {"v": "final(mass.v)"}, grid={"mass.m": [0.5, 2.0]}, fixed={"stop": 0.2})
    cold = run_point(s, 1, s.points()[1])
    instance_pool().close()
    assert warm_up(s, s.points()[0]) > 0
    before = instance_pool().reused
    warm = run_point(s, 1, s.points()[1])
    assert instance_pool().reused - before >= 3  # Fixed, Mass, CoordinateSpringDamperExt
    instance_pool().close()
    assert {k: v for k, v in warm.items() if k != "wall_s"} == {k: v for k, v in cold.items() if k != "wall_s"}


def test_throughput_counts_fmu_steps_and_calls_of_the_computed_runs(tmp_path):
    s = fast_study(4)
    speed = Throughput(s)
    run_study(s, tmp_path / "t.csv", workers=0, on_row=speed.add)
    assert speed.runs == 4 and speed.fmus == 3  # ground, spring, mass
    counters = [json.loads(line[-4]) for line in rows(tmp_path / "t.csv")[1:]]
    assert speed.steps == sum(c["steps"] for c in counters) * 3 == 4 * 100 * 3
    assert speed.calls == sum(c["fmu_calls"] + c["estimate_fmu_calls"] for c in counters) > speed.steps
    line = speed.summary()
    assert line.startswith("throughput: 4 runs in ") and " runs/s, " in line
    assert "FMU steps/s (3 FMUs x macro steps)" in line
    again = Throughput(s)
    assert run_study(s, tmp_path / "t.csv", workers=0, on_row=again.add)["computed"] == 0
    assert again.summary().startswith("throughput: no run computed")


def test_sweep_prints_runs_and_fmu_steps_per_second(tmp_path):
    out = tmp_path / "t.csv"
    done = subprocess.run([sys.executable, "-m", "mechfmu.cli", "sweep", "scenarios/oscillator", "--local", "--stop",
                           "0.01", "--grid", "mass.m=1,2", "--metric", "v=final(mass.v)", "--out", str(out),
                           "--workers", "0"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = done.stdout.splitlines()[-1]
    assert summary.startswith("throughput: 2 runs in ") and "(its check included)" in summary
    rate = float(summary.split("): ")[1].split(" runs/s")[0])
    steps = float(summary.split("runs/s, ")[1].split(" FMU steps/s")[0].replace(",", ""))
    assert steps == pytest.approx(rate * 100 * 3, rel=0.01)  # 100 steps of 3 FMUs a run


@pytest.mark.slow
def test_workers_import_the_mechfmu_of_the_study_not_one_in_the_working_folder(tmp_path):
    """A study started in a folder that holds another ``mechfmu`` package (an older checkout, say): the workers,
    forked from a server process that imported mechfmu once, run this mechfmu (Python 3.11's forkserver imports
    from its working folder first, whatever the sys.path of the process that starts it)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    (tmp_path / "mechfmu").mkdir()
    (tmp_path / "mechfmu" / "__init__.py").write_text("")  # no studies: a worker importing it fails every task
    (tmp_path / "script").mkdir()
    (tmp_path / "script" / "study.py").write_text(
        "from mechfmu.studies.runner import run_study\nfrom mechfmu.studies.study import Study\n"
        "if __name__ == '__main__':\n"
        f"    s = Study({root + '/scenarios/oscillator'!r}, {{'v': 'final(mass.v)'}}, grid={{'mass.m': [1.0, 2.0]}},"
        " fixed={'stop': 0.01}, local=True)\n"
        "    print(run_study(s, 't.csv', workers=1))\n")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(tmp_path / "script" / "study.py")], cwd=tmp_path, env=environment,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "'computed': 2, 'failed': 0" in done.stdout
