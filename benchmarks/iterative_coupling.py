"""Cost of the iterative couplings, through the FMUs (fmpy), measured in one run.

1. Stiff two-mass oscillator (middle spring 1e6 N/m, h = 1e-3 s, ω·h ≈ 1.4): which algorithms stay
   stable, residual evaluations per step, FMU calls, wall time, energy drift.
2. ball_drop at the same accuracy (<= 1e-4 m from OpenSim): Jacobi at h = 1e-4 s against the
   trapezoidal fixed-point at h = 5e-4 s; ratio of FMU calls and wall time.

    python3 benchmarks/iterative_coupling.py [--local]
"""
from __future__ import annotations

import math
import sys

import numpy as np

from mechfmu.master.simulate import simulate

STIFF = {"spring2": {"stiffness": 1e6}}
RUNS = (("jacobi", {}), ("linear-implicit", {}), ("fixed-point", {}), ("fixed-point", {"order": "gauss-seidel"}),
        ("newton", {"coupling": "implicit"}))


def energy(d) -> np.ndarray:
    k, kc = 4 * math.pi ** 2, 1e6
    return (0.5 * d["mass1.v"] ** 2 + 0.5 * d["mass2.v"] ** 2 + 0.5 * k * d["mass1.s"] ** 2
            + 0.5 * kc * (d["mass2.s"] - d["mass1.s"]) ** 2 + 0.5 * k * d["mass2.s"] ** 2)


def main(local: bool) -> None:
    print(f"stiff two-mass oscillator, h = 1e-3 s, 2 s ({'in-process' if local else 'FMUs'})")
    with np.errstate(over="ignore", invalid="ignore"):
        for algorithm, options in RUNS:
            r = simulate("scenarios/two_mass_oscillator", algorithm=algorithm, step=1e-3, stop=2.0, local=local,
                         parameters=STIFF, **options)
            e = energy(r.data)
            drift = float(np.nanmax(np.abs(e - e[0])) / e[0])
            per_step = r.counters.get("iterations", r.counters["steps"]) / max(1, r.counters["steps"])
            print(f"  {algorithm:16s} {str(options):28s} {r.status:5s} energy drift {drift:9.1e}  "
                  f"{per_step:5.2f} evaluations/step  FMU calls {r.counters['fmu_calls']:>8d}  wall {r.wall_time:6.2f} s")
    from mechfmu.validation.opensim_model import opensim_solution
    times = np.linspace(0.0, 1.0, 1001)
    reference = opensim_solution("scenarios/ball_drop", times)
    print("ball_drop, same accuracy against OpenSim")
    costs = {}
    for algorithm, step in (("jacobi", 1e-4), ("fixed-point", 5e-4)):
        r = simulate("scenarios/ball_drop", algorithm=algorithm, step=step, local=local)
        pos = np.array([np.interp(times, r.data["time"], r.data[f"ball.position.{a}"]) for a in "xyz"]).T
        error = float(np.max(np.linalg.norm(pos - reference.bodies["ball"]["position"], axis=1)))
        costs[algorithm] = (r.counters["fmu_calls"], r.wall_time)
        print(f"  {algorithm:12s} h={step:<7g} max error {error:.2e} m  FMU calls {r.counters['fmu_calls']:>8d}  "
              f"wall {r.wall_time:6.2f} s")
    print(f"  fixed-point / jacobi: FMU calls x{costs['fixed-point'][0] / costs['jacobi'][0]:.2f}, "
          f"wall x{costs['fixed-point'][1] / costs['jacobi'][1]:.2f}")


if __name__ == "__main__":
    main("--local" in sys.argv[1:])
