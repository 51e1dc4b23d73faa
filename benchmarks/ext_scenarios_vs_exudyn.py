"""Step-halving study: the CoordinateSpringDamperExt scenarios, our master vs exudyn.

For every scenario: exudyn (GeneralizedAlpha, full Newton) at H, H/2, H/4 (its own convergence),
then our default fixed-step Jacobi (in-process slaves) and Gauss-Seidel at four macro steps, each
compared with the finest exudyn solution: max |position error| over the whole run, the ratio to
the previous step (2 = first order) and wall time.

    python3 benchmarks/ext_scenarios_vs_exudyn.py [scenario ...]
"""
from __future__ import annotations

import sys
import time

import numpy as np

from mechfmu.master.simulate import simulate
from mechfmu.validation.exudyn_model import exudyn_solution

#: scenario -> (our macro steps, exudyn steps)
STUDY = {
    "friction_slide": ((1e-3, 5e-4, 2.5e-4, 1.25e-4), (1e-4, 5e-5, 2.5e-5)),
    "stick_slip": ((4e-4, 2e-4, 1e-4, 5e-5), (5e-5, 2.5e-5, 1.25e-5)),
    "limit_stops": ((4e-5, 2e-5, 1e-5, 5e-6), (1e-5, 5e-6, 2.5e-6)),
    "geared_rotors": ((4e-4, 2e-4, 1e-4, 5e-5), (5e-5, 2.5e-5, 1.25e-5)),
}


def position(result, body):
    names = result.data.dtype.names
    return result.data[f"{body}.s"] if f"{body}.s" in names else result.data[f"{body}.phi"]


def main(names: list[str]) -> None:
    for name in names:
        ours_steps, exudyn_steps = STUDY[name]
        refs = []
        for step in exudyn_steps:
            t0 = time.perf_counter()
            refs.append(exudyn_solution(f"scenarios/{name}", step))
            print(f"{name}: exudyn H={step:g}: {time.perf_counter() - t0:.2f} s")
        fine = refs[-1]
        for ref, step in zip(refs[:-1], exudyn_steps):
            for body, (pos, _) in ref.bodies.items():
                diff = np.max(np.abs(pos - np.interp(ref.time, fine.time, fine.bodies[body][0])))
                print(f"  exudyn H={step:g} vs H={exudyn_steps[-1]:g}: {body} {diff:.2e}")
        for algorithm in ("jacobi", "gauss-seidel"):
            previous: dict[str, float] = {}
            for step in ours_steps:
                t0 = time.perf_counter()
                result = simulate(f"scenarios/{name}", algorithm=algorithm, step=step, local=True)
                wall = time.perf_counter() - t0
                if not result.ok:
                    print(f"  {algorithm} h={step:g}: {result.message}")
                    continue
                for body, (pos, _) in fine.bodies.items():
                    error = np.max(np.abs(np.interp(fine.time, result.data["time"], position(result, body)) - pos))
                    ratio = f"{previous[body] / error:5.2f}" if body in previous else "   - "
                    previous[body] = error
                    print(f"  {algorithm:12s} h={step:<8g} {body:7s} max|pos err| {error:.3e}  ratio {ratio}  "
                          f"range {np.ptp(pos):.3g}  wall {wall:.2f} s")


if __name__ == "__main__":
    main(sys.argv[1:] or list(STUDY))
