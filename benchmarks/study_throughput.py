"""Study throughput: the same runs done one after another in one process and on a local Dask cluster of 2 workers
(target: an efficiency of at least 90 % for runs of about 0.15 s), and what reusing FMU instances (fmi2Reset
instead of a new instance) saves per run.

1. ``--short`` runs of 0.2 s of the ElastoGap example, each on fresh FMU instances (load + instantiate) and on
   instances reset from the run before (``InstancePool``): seconds per run, the difference being the
   set-up a worker saves per run.
2. The same scenario over c x d (``scenarios/elastogap/study.toml``'s metrics, a ``--runs``-point grid, FMU path,
   stop ``--stop`` s: 5 s of simulated time, 5,000 steps of 8 FMUs, is about 0.14 s of one core a run on the
   project's machine):
   ``run_study`` with workers = 0 (one process) and on a local cluster of 2 workers (``--workers 0,1,2`` adds one
   worker), each in a process of its own, as ``mechfmu sweep`` runs (each pays its own start), ``--repeat`` times
   in turn. Measured: the wall time from the ``run_study`` call to its return, what a user waits for: the study's
   check and, on Dask, the cluster's start (workers forked, warmed up) and stop are inside it. Apart, the start:
   from the call to the first row, less that row's own run. Printed: each configuration's best wall time and the
   spread; the efficiency on 2 workers, sequential / (2 x 2 workers), from the best times, against the target
   90 %, with the start and without it; whether the tables are equal but for the wall-time column.

    python3 benchmarks/study_throughput.py [--runs 256] [--stop 5] [--repeat 3] [--short 20] [--chunk-s 1.0]

On the 2-core machine of the project, anything else running shares the cores and lowers the efficiency: run it
on a quiet machine.
"""
from __future__ import annotations

import argparse
import csv
import faulthandler
import json
import math
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scaling import ROOT, use_this_checkout

TARGET = 0.90


def table_without_wall(path: Path) -> list[list[str]]:
    with path.open(newline="") as f:
        return [line[:-1] for line in csv.reader(f)]


def study(runs: int, stop: float):
    from mechfmu.studies.study import load_study
    side = max(2, round(math.sqrt(runs)))
    return load_study(ROOT / "scenarios" / "elastogap" / "study.toml",
                      grid={"elastoGap1.c": f"2:50:{side}", "elastoGap1.d": f"0.25:4:{side}"}, fixed={"stop": stop})


def one(runs: int, stop: float, workers: int, table: Path, chunk_s: float | None) -> None:
    """In a process of its own: one study, its timings printed as JSON (a crash prints every thread's stack)."""
    faulthandler.enable(all_threads=True)
    from mechfmu.studies.runner import run_study
    if chunk_s is not None:
        from mechfmu.studies import on_dask
        on_dask.CHUNK_S = chunk_s
    the_study = study(runs, stop)
    first: list[float] = []

    def note(row: dict) -> None:
        if not first:
            first.append(time.perf_counter() - started - row["wall_s"])
    started = time.perf_counter()
    counts = run_study(the_study, table, workers=workers, on_row=note)
    wall = time.perf_counter() - started
    assert counts["computed"] == the_study.run_count and counts["failed"] == 0, counts
    print(json.dumps({"wall": wall, "start": first[0]}))


def failed(workers: int, done: subprocess.CompletedProcess) -> str:
    """What a configuration's process that failed said: how it ended (a signal by name) and its error output."""
    ended = f"exit status {done.returncode}"
    if done.returncode < 0:
        try:
            ended = f"killed by {signal.Signals(-done.returncode).name}"
        except ValueError:
            ended = f"killed by signal {-done.returncode}"
    return (f"the study on {workers} worker(s) failed ({ended}); its output:\n{done.stdout[-2000:]}"
            f"{done.stderr[-8000:]}")


def throughput(runs: int, stop: float, repeat: int, configurations: list[int], work: Path,
               chunk_s: float | None) -> None:
    n = study(runs, stop).run_count
    print(f"2. elastogap study, {n} runs of {stop:g} s simulated (FMUs, linear-implicit, h = 1e-3 s), each "
          f"configuration in a process of its own, {repeat} time(s) in turn")
    times: dict[int, list[dict]] = {w: [] for w in configurations}
    for _ in range(repeat):
        for workers in configurations:
            table = work / f"w{workers}.csv"
            for old in work.glob(f"w{workers}.csv*"):
                old.unlink()
            command = [sys.executable, __file__, "--one", str(workers), str(table), "--runs", str(runs), "--stop",
                       str(stop)] + ([] if chunk_s is None else ["--chunk-s", str(chunk_s)])
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(failed(workers, done))
            times[workers].append(json.loads(done.stdout.splitlines()[-1]))
    with (work / "w0.csv").open(newline="") as f:
        run_s = sum(float(line[-1]) for line in list(csv.reader(f))[1:]) / n
    print(f"   a run: {run_s:.3f} s of wall time (the sequential table's mean)")
    best = {}
    for workers, measured in times.items():
        walls = sorted(m["wall"] for m in measured)
        best[workers] = min(measured, key=lambda m: m["wall"])
        label = "sequential (one process)" if workers == 0 else f"Dask LocalCluster, {workers} worker(s)"
        print(f"   {label:34s} best {walls[0]:6.2f} s ({n / walls[0]:5.1f} runs/s), spread {walls[0]:.2f}-"
              f"{walls[-1]:.2f} s; start {best[workers]['start']:.2f} s (check"
              f"{', cluster, warm-up' if workers else ''})")
    tables = [table_without_wall(work / f"w{w}.csv") for w in configurations]
    print(f"   tables equal (all columns but wall_s): {all(t == tables[0] for t in tables)}")
    if 0 in best and 2 in best:
        whole = best[0]["wall"] / (2 * best[2]["wall"])
        steady = (best[0]["wall"] - best[0]["start"]) / (2 * (best[2]["wall"] - best[2]["start"]))
        spread = sorted(t0["wall"] / (2 * t2["wall"]) for t0, t2 in zip(times[0], times[2]))
        print(f"   efficiency on 2 workers, start included: {whole:.1%} (target {TARGET:.0%}: "
              f"{'met' if whole >= TARGET else 'MISSED'}; measurement by measurement {spread[0]:.1%} to "
              f"{spread[-1]:.1%}); without the start: {steady:.1%}")
    if 1 in best and 2 in best:
        print(f"   2 workers / 1 worker: {best[1]['wall'] / best[2]['wall']:.2f}x")


def reuse(short: int) -> None:
    from mechfmu.master.simulate import InstancePool, simulate
    from mechfmu.ssp.scenario import load_scenario

    scenario = load_scenario(ROOT / "scenarios" / "elastogap")
    simulate(scenario, stop=0.2)  # FMUs unpacked, libraries and modules loaded: both ways start warm
    print(f"1. {short} runs of 0.2 s of elastogap (8 FMUs), seconds per run")
    started = time.perf_counter()
    for _ in range(short):
        simulate(scenario, stop=0.2)
    fresh = (time.perf_counter() - started) / short
    pool = InstancePool()
    simulate(scenario, stop=0.2, pool=pool)
    started = time.perf_counter()
    for _ in range(short):
        simulate(scenario, stop=0.2, pool=pool)
    reused = (time.perf_counter() - started) / short
    pool.close()
    print(f"   fresh instances {fresh:.3f} s, reset instances {reused:.3f} s: reuse saves {fresh - reused:.3f} s "
          f"a run ({(fresh - reused) / fresh:.0%})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=256, help="runs of the study (a square grid, about)")
    parser.add_argument("--stop", type=float, default=5.0, help="stop time of a run [s]")
    parser.add_argument("--repeat", type=int, default=3, help="measurements of each configuration")
    parser.add_argument("--workers", default="0,2", help="configurations: workers, 0 for one process")
    parser.add_argument("--chunk-s", type=float, help="seconds of work a chunk is sized for (default: CHUNK_S)")
    parser.add_argument("--short", type=int, default=20, help="short runs for the instance-reuse measurement")
    parser.add_argument("--one", nargs=2, metavar=("WORKERS", "TABLE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    where = use_this_checkout()
    if args.one:
        one(args.runs, args.stop, int(args.one[0]), Path(args.one[1]), args.chunk_s)
        return
    print(f"code: {where}")
    from mechfmu.fmu import build
    build.build()
    reuse(args.short)
    with tempfile.TemporaryDirectory(prefix="mechfmu_study_") as tmp:
        throughput(args.runs, args.stop, args.repeat, [int(w) for w in args.workers.split(",")], Path(tmp),
                   args.chunk_s)


if __name__ == "__main__":
    main()
