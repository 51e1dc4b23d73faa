"""What a result row's CSV text costs: ``mechfmu.master.csv_text.csv_line`` (the compiled exchange's Ryu digits in
Python's repr layout) against ``csv_row`` (Python's ``repr`` per value), on rows of ``--width`` values (time and the
outputs of a scenario of a few bodies: stick_slip's rows have 45), in one run, best of ``--repeat``; and the start-up
of a short run as a process (``mechfmu run scenarios/stick_slip --stop 0.01``, Jacobi: no scipy), best of 3.

    python3 benchmarks/result_text.py [--width 45] [--rows 20000] [--repeat 5]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def per_row(encode, rows: list[tuple[float, ...]], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        for row in rows:
            encode(row)
        best = min(best, time.perf_counter() - started)
    return best / len(rows) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=45)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from mechfmu.fmu.build import build
    from mechfmu.master.csv_text import csv_line, csv_row
    build()
    rng = np.random.default_rng(1)
    rows = [tuple(r) for r in (rng.standard_normal((args.rows, args.width)) * 10.0 ** rng.integers(-6, 3)).tolist()]
    assert all(csv_line(r) == csv_row(r).encode() for r in rows[:1000])
    compiled, python = per_row(csv_line, rows, args.repeat), per_row(lambda r: csv_row(r).encode(), rows, args.repeat)
    print(f"a row of {args.width} values: {compiled:.2f} µs compiled, {python:.2f} µs by repr "
          f"({python / compiled:.1f}x)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # an install has its bytecode
    command = [sys.executable, "-m", "mechfmu.cli", "run", "scenarios/stick_slip", "--stop", "0.01",
               "--no-error-estimate"]
    subprocess.run(command, cwd=ROOT, env=env, capture_output=True, check=True)
    walls = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run(command, cwd=ROOT, env=env, capture_output=True, check=True)
        walls.append(time.perf_counter() - started)
    print(f"mechfmu run scenarios/stick_slip --stop 0.01 (Jacobi, 5 FMUs) as a process: {min(walls):.2f} s")


if __name__ == "__main__":
    main()
