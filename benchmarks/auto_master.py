"""The automatic master beside the scenario's hand-chosen master and Jacobi at the scenario's step, per shipped
scenario with an independent solution (those of benchmarks/monolithic.py: closed forms, scipy's piecewise
integration, OpenSim, the MSL examples' matrix exponentials; stick_slip: its switch instants [s]).

For each: the largest error, the component calls and the wall time of ``--algorithm auto``, of the master the
SSD names, and of Jacobi, in-process, measured in this one run; then auto's calls over the hand-chosen master's
(the worst ratio last).

    python3 benchmarks/auto_master.py [--scenario NAME ...]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from monolithic import SCENARIOS, measured  # noqa: E402

from mechfmu.scenario import load_scenario  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="append", choices=SCENARIOS, help="default: all")
    args = parser.parse_args()
    print(f"{'scenario':<22}{'master':<34}{'error':>10}{'calls':>10}{'wall s':>8}")
    ratios = []
    for scenario in args.scenario or SCENARIOS:
        hand = load_scenario(ROOT / "scenarios" / scenario, check=False).algorithm
        runs = [("auto", measured(scenario, "auto", {})), (f"hand-chosen: {hand}", measured(scenario, None, {})),
                ("jacobi", measured(scenario, "jacobi", {}))]
        for i, (label, (error, calls, wall, status)) in enumerate(runs):
            print(f"{scenario if i == 0 else '':<22}{label:<34}{error:>10.2e}{calls:>10d}{wall:>8.2f}"
                  + ("" if status == "ok" else f"  {status}"))
        ratios.append((runs[0][1][1] / runs[1][1][1], scenario))
    worst = max(ratios)
    print(f"auto's calls / the hand-chosen master's: {min(ratios)[0]:.2f} to {worst[0]:.2f} ({worst[1]})")


if __name__ == "__main__":
    main()
