"""Every shipped scenario's exported archive in OpenModelica's OMSimulator against our master, side by side.

Per scenario without a constraint:
- co-simulation (``export-ssp``): OMSimulator's fixed-step master against our ordered Jacobi through the FMUs,
  the largest difference relative to 1e-9 of the variable's range (force rates 1e-8): <= 1 agrees;
- strongly coupled (``export-ssp --strongly-coupled``): OMSimulator's CVODE at its default order (2) and with
  ``--CVODEMaxOrder=5`` against our monolithic master through the FMUs: the largest difference of a body state
  relative to the scenario's tolerance, its variable, the events of each, and the wall times.

    MECHFMU_OMSIMULATOR=/path/to/OMSimulator python3 benchmarks/omsimulator.py [SCENARIO ...]
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from mechfmu.crosscheck.omsimulator import (
    FAST_CVODE,
    cosimulation_agreement,
    find_omsimulator,
    run_omsimulator,
    strongly_coupled_agreement,
)
from mechfmu.fmu.build import build
from mechfmu.master.accuracy import scenario_tolerance
from mechfmu.master.simulate import simulate
from mechfmu.ssp.export import export_ssp, unsolved_constraints
from mechfmu.ssp.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent


def main(names: list[str]) -> int:
    program = find_omsimulator()
    if program is None:
        print("OMSimulator not found: set MECHFMU_OMSIMULATOR or put it on PATH")
        return 2
    build()
    names = names or sorted(str(p.parent.relative_to(ROOT / "scenarios"))
                            for p in (ROOT / "scenarios").glob("**/SystemStructure.ssd"))
    print("co-simulation: OMSimulator against ordered Jacobi (difference / 1e-9 of the range); strongly coupled: "
          "against the monolithic master (difference / the scenario's tolerance), events OMSimulator/ours")
    print(f"{'scenario':22s} | {'co-sim':>8s} {'variable':26s} {'OMS s':>6s} {'ours s':>6s} | "
          f"{'order 2':>8s} {'variable':22s} {'events':>6s} {'OMS s':>6s} | {'order 5':>8s} {'OMS s':>6s} "
          f"{'ours s':>6s}")
    failed = 0
    with tempfile.TemporaryDirectory(prefix="mechfmu_oms_") as tmp:
        for name in names:
            scenario = load_scenario(ROOT / "scenarios" / name)
            if unsolved_constraints(scenario.components):
                print(f"{name:22s} | refused: a constraint (only mechfmu's newton master solves its force)")
                continue
            work = Path(tmp) / name.replace("/", "_")
            cosim = export_ssp(ROOT / "scenarios" / name, work / "cosim" / "a.ssp")
            strong = export_ssp(ROOT / "scenarios" / name, work / "sc" / "a.ssp", strongly_coupled=True)
            jacobi = simulate(scenario, "jacobi", exchange="ordered", estimate_error=False)
            until = 0.1 if name == "limit_stops" else float("inf")  # its contact lands on a grid point
            co = cosimulation_agreement(jacobi, run_omsimulator(program, cosim, work / "cosim"), until)
            mono = simulate(scenario, "monolithic", estimate_error=False)
            tolerance = scenario_tolerance(scenario, None, None)
            order2 = strongly_coupled_agreement(mono, run_omsimulator(program, strong, work / "o2"), scenario,
                                                *tolerance)
            order5 = strongly_coupled_agreement(mono, run_omsimulator(program, strong, work / "o5", FAST_CVODE),
                                                scenario, *tolerance)
            failed += co.worst > 1 or order2.worst > 1 or order5.worst > 1 or order2.oms_events != order2.our_events
            print(f"{name:22s} | {co.worst:8.3g} {co.variable:26s} {co.oms_wall:6.2f} {co.ours_wall:6.2f} | "
                  f"{order2.worst:8.3g} {order2.variable:22s} {order2.oms_events:>2d}/{order2.our_events:<3d} "
                  f"{order2.oms_wall:6.2f} | {order5.worst:8.3g} {order5.oms_wall:6.2f} {order5.ours_wall:6.2f}",
                  flush=True)
    print(f"{failed} scenario(s) beyond a tolerance")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
