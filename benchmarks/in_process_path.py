"""One fast path: every shipped scenario run in-process (``local=True``: the components in the host library, no FMU)
and through its FMUs, in this process, at its defaults as ``mechfmu run`` runs it (its own algorithm or auto, the
error estimate on), each way ``--repeat`` times in turn after one warm-up run each (libraries loaded, FMUs unpacked);
the fastest wall time of each ``simulate`` call kept. Printed per scenario: both wall times, their ratio (in-process
/ FMUs) and whether the rows are the same bits; then the geometric mean of the ratios and the largest.

Target: the in-process path at least as fast as the FMU path, ratio <= 1 (the geometric mean over the scenarios;
a single scenario's ratio varies by some 10 % between runs of a few tens of ms on a shared machine). The exit
status is 1 when it is not met or a scenario's rows differ.

    python3 benchmarks/in_process_path.py [--repeat 3] [SCENARIO ...]
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from default_runs import ROOT, shipped  # noqa: E402

TARGET = 1.0


def timed(scenario: Path, local: bool):
    from mechfmu.master.simulate import simulate
    started = time.perf_counter()
    result = simulate(scenario, local=local)
    return time.perf_counter() - started, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("scenarios", nargs="*")
    args = parser.parse_args()
    cases = args.scenarios or shipped()
    print(f"{'scenario':24s} {'in-process s':>12s} {'FMUs s':>9s} {'ratio':>7s}  rows")
    ratios, failed = [], 0
    for case in cases:
        scenario = ROOT / "scenarios" / case
        best = {True: math.inf, False: math.inf}
        results = {}
        for local in (True, False):  # warm-up
            timed(scenario, local)
        for _ in range(args.repeat):
            for local in (True, False):
                wall, results[local] = timed(scenario, local)
                best[local] = min(best[local], wall)
        a, b = results[True], results[False]
        same = (a.ok and b.ok and a.data.dtype.names == b.data.dtype.names
                and all(a.data[n].tobytes() == b.data[n].tobytes() for n in a.data.dtype.names))
        failed += not same
        ratio = best[True] / best[False]
        ratios.append(ratio)
        print(f"{case:24s} {best[True]:12.3f} {best[False]:9.3f} {ratio:7.2f}  {'same bits' if same else 'DIFFERENT'}")
    mean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    met = mean <= TARGET
    print(f"in-process / FMUs: geometric mean {mean:.2f}, largest {max(ratios):.2f} "
          f"({cases[ratios.index(max(ratios))]}), smallest {min(ratios):.2f}; target <= {TARGET:g}: "
          f"{'met' if met else 'NOT met'}; rows the same bits in {len(cases) - failed} of {len(cases)}")
    return 0 if met and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
