"""Cost of reaching a given accuracy on the Modelica ElastoGap example, through the FMUs.

For each (algorithm, step): max abs error over the four reference columns against the Modelica
Association result, FMU calls and wall time of the whole run (FMUs through fmpy; ``--local`` for
the in-process components, which give the same numbers bit for bit).

    python3 benchmarks/elastogap_cost.py [--local] [algorithm:step ...]

Default runs: linear-implicit at 2e-3 s and 1e-3 s, Jacobi at 3.125e-5 s (error 1e-3) and 3.125e-6 s
(error 1e-4; about 1.6 million steps, minutes through the FMUs).
"""
from __future__ import annotations

import sys

import numpy as np

from mechfmu.master.simulate import simulate
from mechfmu.validation.msl import read_msl_reference

REFERENCE = "scenarios/elastogap/reference/ElastoGap.csv"
COLUMNS = ("elastoGap1.v_rel", "elastoGap2.s_rel", "springDamper1.v_rel", "springDamper2.s_rel")
RUNS = ("linear-implicit:2e-3", "linear-implicit:1e-3", "jacobi:3.125e-5", "jacobi:3.125e-6")


def main(argv: list[str]) -> None:
    local = "--local" in argv
    runs = [a for a in argv if a != "--local"] or list(RUNS)
    reference = read_msl_reference(REFERENCE)
    rows = []
    for run in runs:
        algorithm, step = run.split(":")
        result = simulate("scenarios/elastogap", algorithm=algorithm, step=float(step), local=local)
        if not result.ok:
            print(f"{run}: {result.message}")
            continue
        error = max(float(np.max(np.abs(np.interp(reference["time"], result.data["time"], result.data[c])
                                         - reference[c]))) for c in COLUMNS)
        rows.append((algorithm, float(step), error, result.counters["fmu_calls"], result.wall_time))
        print(f"{algorithm:16s} h={float(step):<10g} max|error| {error:.2e}  FMU calls {result.counters['fmu_calls']:>10d}"
              f"  wall {result.wall_time:8.2f} s  ({'in-process' if local else 'FMUs'})", flush=True)
    best = {a: min((r for r in rows if r[0] == a and r[2] <= 1e-4), key=lambda r: r[4], default=None)
            for a in ("linear-implicit", "jacobi")}
    if best["linear-implicit"] and best["jacobi"]:
        li, ja = best["linear-implicit"], best["jacobi"]
        print(f"at max|error| <= 1e-4: Jacobi needs {ja[3] / li[3]:.0f}x the FMU calls and "
              f"{ja[4] / li[4]:.0f}x the wall time of linear-implicit")


if __name__ == "__main__":
    main(sys.argv[1:])
