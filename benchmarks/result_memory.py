"""Memory of a result kept in memory (``simulate``'s ``Result.data``): each case's run in a child process of its
own, its peak RSS before and after the run (``getrusage``'s ``ru_maxrss`` of a process started by fork, so its
own), the result's bytes (float64: 8 bytes a value) and the ratio of the peak's growth to them. Target: at most
2.5 (the rows as float64 blocks, then joined once into the result's array; rows kept as Python tuples of floats
took about 5).

    python3 benchmarks/result_memory.py [--repeat 1]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 2.5

#: (name, simulate's keyword arguments): a long co-simulation with many columns, a monolithic run with many rows
CASES = [("elastogap, jacobi, h = 3.125e-5 s", {"scenario": "scenarios/elastogap", "algorithm": "jacobi",
                                                "step": 3.125e-05}),
         ("stick_slip to 20 s (monolithic)", {"scenario": "scenarios/stick_slip", "stop": 20.0})]

CHILD = """
import json, resource, sys, time
from mechfmu.master.simulate import simulate
options = json.loads(sys.argv[1])
scenario = options.pop("scenario")
simulate(scenario, stop=0.01, estimate_error=False)  # libraries loaded, FMUs unpacked
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
started = time.perf_counter()
result = simulate(scenario, estimate_error=False, **options)
wall = time.perf_counter() - started
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"before": before, "after": after, "wall": wall, "bytes": result.data.nbytes,
                  "rows": len(result.data), "columns": len(result.data.dtype.names)}))
"""


def nothing() -> None:
    """Given as preexec_fn: the child is forked, so its peak RSS is its own (a vfork child's starts at ours)."""


def measure(options: dict) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(options)], capture_output=True, text=True,
                          cwd=ROOT, preexec_fn=nothing, env={**os.environ, "MECHFMU_COMPANION_BESIDE": "0"})
    if proc.returncode != 0:
        raise SystemExit(f"the run failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs per case; the smallest growth is kept")
    args = parser.parse_args()
    for name, options in CASES:
        runs = [measure(dict(options)) for _ in range(max(1, args.repeat))]
        best = min(runs, key=lambda r: r["after"] - r["before"])
        mib = best["bytes"] / 2 ** 20
        growth = best["after"] - best["before"]
        ratio = growth / mib
        print(f"{name}: {best['rows']:,} rows x {best['columns']} columns = {mib:.1f} MiB of values; peak RSS "
              f"{best['before']:.0f} -> {best['after']:.0f} MiB (+{growth:.0f}); growth / result {ratio:.2f} "
              f"(target <= {TARGET}: {'met' if ratio <= TARGET else 'NOT met'}); "
              f"run {min(r['wall'] for r in runs):.2f} s")


if __name__ == "__main__":
    main()
