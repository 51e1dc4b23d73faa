"""mechfmu against OpenModelica's OMSimulator on the same strongly coupled archives, as whole processes.

Each scenario is exported once with ``export-ssp --strongly-coupled`` (Model Exchange FMUs); then ``python3 -m
mechfmu.cli run ARCHIVE -o out.mat`` (its master the archive's, with its error estimate, bytecode cached as in a
user's install) and OMSimulator at its default options (CVODE) run it, each writing a MATLAB v4 result of every
variable, each ``--repeat`` times in turn, the best wall time kept (``side_by_side.py``'s runners). Printed per
scenario: both wall times and mechfmu / OMSimulator, against
the target: at most 1 (no slower), and the largest difference of the positions both record at OMSimulator's rows
(mechfmu's interpolated linearly between its communication points, 1e-4 s apart), beside the scenario's tolerance.

    MECHFMU_OMSIMULATOR=/path/to/OMSimulator python3 benchmarks/archives_vs_omsimulator.py [--repeat 3] [CASE ...]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from side_by_side import best_of, prepare, run_mechfmu, run_oms  # noqa: E402

CASES = ("oscillator", "elastogap", "ball_drop", "stick_slip", "limit_stops")


def largest_difference(ours: dict[str, np.ndarray], oms: dict[str, np.ndarray]) -> tuple[float, str]:
    """The largest |ours - OMSimulator| of a position or angle both record (``x.s``, ``x.phi``, ``x.position.y``), at
    OMSimulator's rows within our run, ours interpolated linearly."""
    worst, where = 0.0, ""
    times = oms.get("time")
    for name, values in oms.items():
        position = name.endswith((".s", ".phi")) or ".position." in name
        if not position or name not in ours or times is None:
            continue
        inside = (times >= ours["time"][0]) & (times <= ours["time"][-1])
        difference = float(np.max(np.abs(np.interp(times[inside], ours["time"], ours[name]) - values[inside])))
        if difference > worst:
            worst, where = difference, name
    return worst, where


def main() -> None:
    from mechfmu.crosscheck.omsimulator import find_omsimulator
    from mechfmu.master.accuracy import scenario_tolerance
    from mechfmu.ssp.scenario import load_scenario
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", default=list(CASES))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    program = find_omsimulator()
    if program is None:
        raise SystemExit("OMSimulator not found: set MECHFMU_OMSIMULATOR or put it on PATH")
    print(f"{'case':14s} {'mechfmu s':>10s} {'OMSimulator s':>14s} {'ratio':>7s}  verdict   "
          "largest position difference")
    with tempfile.TemporaryDirectory() as folder:
        for name in args.cases:
            work = Path(folder) / name
            work.mkdir()
            case = prepare(name, work)
            if case.strong is None:
                print(f"{name:14s} no strongly coupled archive: {case.strong_refused}")
                continue
            case.cosim = None  # mechfmu runs the strongly coupled archive too
            ours = best_of(args.repeat, lambda case=case, work=work: run_mechfmu(case, work))
            theirs = best_of(args.repeat, lambda case=case, work=work: run_oms(case, work, program, []))
            if ours.refused or theirs.refused:
                print(f"{name:14s} mechfmu: {ours.refused or 'ok'}; OMSimulator: {theirs.refused or 'ok'}")
                continue
            rtol, atol = scenario_tolerance(load_scenario(case.source), None, None)
            difference, where = largest_difference(ours.columns, theirs.columns)
            ratio = ours.wall / theirs.wall
            print(f"{name:14s} {ours.wall:10.2f} {theirs.wall:14.2f} {ratio:7.2f}  "
                  f"{'met' if ratio <= 1.0 else 'NOT met':8s}  {difference:.1e} m ({where}; tolerance rtol {rtol:g}, "
                  f"atol {atol:g} m)", flush=True)


if __name__ == "__main__":
    main()
