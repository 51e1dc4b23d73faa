"""Error against the exact solution and FMU calls on scenarios/limit_stops, with and without events.

The exact solution is the piecewise one of tests/test_events.py (matrix exponential per phase, the
contact instants by Brent's method). For each algorithm and step the run prints the largest position
error over the 2 s and the FMU calls (in-process slaves count calls the same way), measured in one
run, and for fixed-step Jacobi the step it needs for an error of 1e-3 m (halving from 1e-5 s).

    python3 benchmarks/events_limit_stops.py [--fmus]
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from test_events import SHIPPED, piecewise_linear_motion  # noqa: E402

from mechfmu.master.simulate import simulate  # noqa: E402


def measure(algorithm: str, step: float, events: str, local: bool) -> tuple[float, int, float]:
    started = time.perf_counter()
    r = simulate(ROOT / "scenarios" / "limit_stops", algorithm=algorithm, step=step, local=local, events=events)
    if not r.ok:
        raise SystemExit(f"{algorithm} h={step} events={events}: {r.message}")
    exact, _ = piecewise_linear_motion(r.data["time"], **SHIPPED)
    return float(np.max(np.abs(r.data["mass.s"] - exact))), r.counters["fmu_calls"], time.perf_counter() - started


def main(local: bool) -> None:
    print(f"limit_stops, 2 s, max |x - exact| and FMU calls ({'in-process' if local else 'FMUs'})")
    print(f"  {'algorithm':16s} {'h [s]':>8s} {'events':>6s} {'error [m]':>10s} {'FMU calls':>10s} {'wall [s]':>8s}")
    for algorithm, steps in (("linear-implicit", (1e-3, 1e-4)), ("jacobi", (1e-4,))):
        for step in steps:
            for events in ("off", "on"):
                error, calls, wall = measure(algorithm, step, events, local)
                print(f"  {algorithm:16s} {step:8.0e} {events:>6s} {error:10.2e} {calls:10d} {wall:8.1f}")
    step = 1e-5
    while True:
        error, calls, wall = measure("jacobi", step, "off", local)
        print(f"  {'jacobi':16s} {step:8.1e} {'off':>6s} {error:10.2e} {calls:10d} {wall:8.1f}")
        if error <= 1e-3 or step < 1e-6:
            break
        step /= 2


if __name__ == "__main__":
    main(local="--fmus" not in sys.argv[1:])
