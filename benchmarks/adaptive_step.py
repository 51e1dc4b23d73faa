"""Error against FMU calls, fixed against adaptive macro steps, per algorithm.

two_mass_oscillator (smooth, linear, undamped) against its closed form (mechfmu/validation/analytic.py): max
position error over the 2 s run and the counted calls, in-process (the FMU path counts the same calls
plus fmpy's own), for fixed steps h and for the adaptive step (``adaptive="on"``, rtol = atol = tol,
communication grid 1e-2 s).

    python3 benchmarks/adaptive_step.py [ALGORITHM ...]
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from mechfmu.master.simulate import simulate  # noqa: E402
from mechfmu.validation.analytic import two_mass_oscillator_positions  # noqa: E402


def error(result) -> float:
    x = two_mass_oscillator_positions(result.data["time"])
    return float(max(np.max(np.abs(result.data["mass1.s"] - x[0])), np.max(np.abs(result.data["mass2.s"] - x[1]))))


def main(algorithms: list[str]) -> None:
    print(f"{'algorithm':16s} {'mode':9s} {'h or tol':>9s} {'max error [m]':>14s} {'FMU calls':>10s} "
          f"{'accepted':>9s} {'rejected':>9s}")
    for algorithm in algorithms:
        for h in (1e-3, 2.5e-4, 6.25e-5):
            r = simulate("scenarios/two_mass_oscillator", algorithm=algorithm, local=True, step=h)
            print(f"{algorithm:16s} {'fixed':9s} {h:9.3g} {error(r):14.3e} {r.counters['fmu_calls']:10d}")
        for tol in (1e-3, 1e-4, 1e-5, 1e-6):
            r = simulate("scenarios/two_mass_oscillator", algorithm=algorithm, local=True, step=1e-2, adaptive="on",
                         rtol=tol, atol=tol)
            print(f"{algorithm:16s} {'adaptive':9s} {tol:9.3g} {error(r):14.3e} {r.counters['fmu_calls']:10d} "
                  f"{r.counters['accepted_steps']:9d} {r.counters['rejected_steps']:9d}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["jacobi", "gauss-seidel", "linear-implicit", "fixed-point"])
