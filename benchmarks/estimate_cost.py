"""What the error estimate costs: each case run as a new user runs it (``benchmarks/default_runs.py``'s cases: the
impact and the two-mass model written with ``System``, and every shipped scenario with its master removed, so auto
at the default tolerance), with the estimate and without it (``estimate_error=False``), best of ``--repeat`` runs
each, in this process. Printed per case: the wall times, the estimate's wall share of the run it judges
((with - without) / without) and its FMU calls as a share of the run's. Target: at most 30 % of the run.

``--long STOP``: instead, stick_slip with its own master (Jacobi, h = 1e-4 s) to STOP s (1,000: 10^7 steps), as
``mechfmu run scenarios/stick_slip --stop STOP`` runs it (no rows kept in memory), with the estimate and without,
in turn ``--repeat`` times: the ratio of the fastest wall times (target: at most 1.3) and when the run's first row
reached the observers
(target: within 1 s of the call, as without the estimate).

    python3 benchmarks/estimate_cost.py [--repeat 3] [CASE ...]
    python3 benchmarks/estimate_cost.py --long 1000
"""
from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from default_runs import impact_run, shipped, two_mass_run, without_master  # noqa: E402

TARGET = 0.30
LONG_TARGET, FIRST_ROW = 1.3, 1.0


def long_run(stop: float, repeat: int) -> None:
    """stick_slip to ``stop`` with and without the estimate, in turn ``repeat`` times (the fastest of each kept: a
    shared machine's slow spells hit both alike): wall times, their ratio, the first row's latency."""
    from mechfmu.master.observers import Observer
    from mechfmu.master.simulate import simulate

    class FirstRow(Observer):
        def __init__(self) -> None:
            self.at = float("nan")

        def initialized(self, run) -> None:
            if self.at != self.at:
                self.at = time.perf_counter()

    scenario = HERE.parent / "scenarios" / "stick_slip"
    simulate(scenario, stop=0.1, record=False)  # warm: libraries loaded, FMUs unpacked
    walls: dict[bool, float] = {False: math.inf, True: math.inf}
    first: dict[bool, float] = {False: math.inf, True: math.inf}
    for _ in range(repeat):
        for estimate in (False, True):
            row = FirstRow()
            started = time.perf_counter()
            result = simulate(scenario, stop=stop, record=False, observers=[row], estimate_error=estimate)
            wall = time.perf_counter() - started
            walls[estimate], first[estimate] = min(walls[estimate], wall), min(first[estimate], row.at - started)
            method = result.accuracy.method[:60] if estimate and result.accuracy else ""
            print(f"stick_slip to {stop:g} s, {'with' if estimate else 'without'} the estimate: {wall:.1f} s, "
                  f"first row after {row.at - started:.3f} s ({result.status}; {method})", flush=True)
    ratio = walls[True] / walls[False]
    print(f"fastest: {walls[False]:.1f} s without, {walls[True]:.1f} s with; with / without: {ratio:.2f} (target <= "
          f"{LONG_TARGET}: {'met' if ratio <= LONG_TARGET else 'NOT met'}); first row {first[True]:.3f} s (target <= "
          f"{FIRST_ROW} s: {'met' if first[True] <= FIRST_ROW else 'NOT met'})")


def timed(case: str, work: Path, estimate: bool) -> tuple[float, int, int]:
    """(wall [s], FMU calls of the run, FMU calls of the estimate) of one run of ``case``."""
    from mechfmu.fmu.build import FMU_DIR
    from mechfmu.master.simulate import simulate
    if case in ("impact", "two_mass"):
        system = impact_run() if case == "impact" else two_mass_run()
        started = time.perf_counter()
        result = system.run(estimate_error=estimate)
    else:
        folder = without_master(case, Path(tempfile.mkdtemp(dir=work)), Path(FMU_DIR))
        started = time.perf_counter()
        result = simulate(folder, estimate_error=estimate)
    wall = time.perf_counter() - started
    if not result.ok:
        raise SystemExit(f"{case}: {result.status}: {result.message}")
    return wall, result.counters.get("fmu_calls", 0), result.counters.get("estimate_fmu_calls", 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", help="impact, two_mass or a shipped scenario (default: all)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, the fastest kept")
    parser.add_argument("--long", type=float, metavar="STOP", help="stick_slip to STOP s with and without")
    args = parser.parse_args()
    from mechfmu.fmu.build import build
    build()
    if args.long:
        long_run(args.long, args.repeat)
        return
    cases = args.cases or ["impact", "two_mass", *shipped()]
    print(f"{'case':<26}{'without s':>10}{'with s':>9}{'wall share':>11}{'calls share':>12}  target <= 30 %")
    shares = []
    with tempfile.TemporaryDirectory() as work:
        for case in cases:
            timed(case, Path(work), True)  # warm: libraries loaded, FMUs unpacked
            without = min(timed(case, Path(work), False)[0] for _ in range(args.repeat))
            runs = [timed(case, Path(work), True) for _ in range(args.repeat)]
            with_estimate, calls, estimate_calls = min(runs)
            share = (with_estimate - without) / without
            shares.append(share)
            print(f"{case:<26}{without:>10.3f}{with_estimate:>9.3f}{share:>10.0%}{estimate_calls / calls:>11.0%}  "
                  f"{'met' if share <= TARGET else 'NOT met'}", flush=True)
    met = sum(s <= TARGET for s in shares)
    print(f"wall share: {min(shares):.0%} to {max(shares):.0%}; within 30 %: {met} of {len(shares)} cases")


if __name__ == "__main__":
    main()
