"""Study throughput: the same runs done one after another here, on a local Dask cluster of 1 worker and of 2
(target: 2 workers >= 1.8x the sequential throughput), and what reusing FMU instances
(fmi2Reset instead of a new instance) saves per run.

1. ``--short`` runs of 0.2 s of the ElastoGap example, each on fresh FMU instances (load + instantiate) and on
   instances reset from the run before (``InstancePool``): seconds per run, the difference being the
   set-up a worker saves per run.
2. The same scenario over c x d (``scenarios/elastogap/study.toml``'s metrics, a ``--runs``-point grid,
   FMU path, stop ``--stop`` s): ``run_study`` with workers = 0 (this process), 1 and 2; wall time from the
   call to the finished table, cluster start-up included (what a user waits for). The three tables must be
   equal but for the wall-time column. Printed: runs/s, and the ratios 2 workers / sequential and 2 / 1.

    python3 benchmarks/study_throughput.py [--runs 64] [--stop 5] [--short 20]

On the 2-core machine of the project, anything else running shares the cores: run it on a quiet machine.
"""
from __future__ import annotations

import argparse
import csv
import math
import tempfile
import time
from pathlib import Path

from scaling import ROOT, use_this_checkout


def table_without_wall(path: Path) -> list[list[str]]:
    with path.open(newline="") as f:
        return [line[:-1] for line in csv.reader(f)]


def throughput(runs: int, stop: float, work: Path) -> None:
    from mechfmu.studies.runner import run_study
    from mechfmu.studies.study import load_study

    side = max(2, round(math.sqrt(runs)))
    study = load_study(ROOT / "scenarios" / "elastogap" / "study.toml",
                       grid={"elastoGap1.c": f"2:50:{side}", "elastoGap1.d": f"0.25:4:{side}"}, fixed={"stop": stop})
    n = len(study.points())
    print(f"2. elastogap study, {n} runs of {stop:g} s (FMUs, linear-implicit, h = 1e-3 s)")
    walls = {}
    for workers in (0, 1, 2):
        table = work / f"w{workers}.csv"
        started = time.perf_counter()
        counts = run_study(study, table, workers=workers)
        walls[workers] = time.perf_counter() - started
        assert counts["computed"] == n and counts["failed"] == 0, counts
        label = "sequential (this process)" if workers == 0 else f"Dask LocalCluster, {workers} worker(s)"
        print(f"   {label:34s} {walls[workers]:7.1f} s  {n / walls[workers]:6.2f} runs/s")
    same = table_without_wall(work / "w0.csv") == table_without_wall(work / "w1.csv") == table_without_wall(
        work / "w2.csv")
    print(f"   tables equal (all columns but wall_s): {same}")
    speedup = walls[0] / walls[2]
    print(f"   2 workers / sequential: {speedup:.2f}x (target >= 1.8: {'met' if speedup >= 1.8 else 'MISSED'}); "
          f"2 workers / 1 worker: {walls[1] / walls[2]:.2f}x")


def reuse(short: int) -> None:
    from mechfmu.master.simulate import InstancePool, simulate
    from mechfmu.ssp.scenario import load_scenario

    scenario = load_scenario(ROOT / "scenarios" / "elastogap")
    simulate(scenario, stop=0.2)  # FMUs unpacked, libraries and modules loaded: both ways start warm
    print(f"1. {short} runs of 0.2 s of elastogap (9 FMUs), seconds per run")
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
    parser.add_argument("--runs", type=int, default=64, help="runs of the study (a square grid, about)")
    parser.add_argument("--stop", type=float, default=5.0, help="stop time of a run [s]")
    parser.add_argument("--short", type=int, default=20, help="short runs for the instance-reuse measurement")
    args = parser.parse_args()
    print(f"code: {use_this_checkout()}")
    from mechfmu.fmu import build
    build.build()
    reuse(args.short)
    with tempfile.TemporaryDirectory(prefix="mechfmu_study_") as tmp:
        throughput(args.runs, args.stop, Path(tmp))


if __name__ == "__main__":
    main()
