"""The automatic master beside the scenario's hand-chosen master and Jacobi at the scenario's step, on all 20
shipped scenarios, each against a solution from outside our masters:
- closed forms, scipy's piecewise integration, OpenSim, the MSL examples' matrix exponentials (those of
  benchmarks/monolithic.py; stick_slip: its switch instants [s]);
- ball_on_moving_plate: OpenSim (Simbody's contact, accuracy 1e-9); belt_friction, friction_slide,
  geared_rotors: Exudyn at 1.25e-5 s; geared_masses: the reduced ODE (scipy, rtol 1e-12); prescribed_motion:
  the prescribed closed form; oscillator: scipy's Radau on the components' Model Exchange form (our monolithic
  master, ode_rtol 1e-12).

For each run: the largest position error [m or rad] against the solution (the positions the solution has), the
run's own error estimate (Result.accuracy, the same positions), the component calls of the run and of its
estimate's companion runs, and the wall time, in-process, measured in this one run. Then auto's calls over the
hand-chosen master's (run and estimate; the worst last), and whether auto is within the scenario's tolerance.

    python3 benchmarks/auto_master.py [--scenario NAME ...]
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from monolithic import SOLUTIONS, stick_slip_instants_error  # noqa: E402

from mechfmu.master.simulate import simulate  # noqa: E402
from mechfmu.ssp.scenario import load_scenario  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def prescribed(data: np.ndarray) -> dict[str, np.ndarray]:
    return {"mass.s": 0.05 * (1 - np.cos(2 * math.pi * 0.25 * data["time"]))}


def geared(data: np.ndarray) -> dict[str, np.ndarray]:
    from test_constraints import reduced_geared
    x, _ = reduced_geared(data["time"])
    return {"mass1.s": 2 * x, "mass2.s": x}


def exudyn(scenario: str) -> Callable[[np.ndarray], dict[str, np.ndarray]]:
    """Exudyn at 1.25e-5 s (its own step-halving difference is far below the errors compared): each body's
    position or angle."""
    def solved(data: np.ndarray) -> dict[str, np.ndarray]:
        from mechfmu.validation.exudyn_model import exudyn_solution
        solution = exudyn_solution(ROOT / "scenarios" / scenario, 1.25e-5)
        names = data.dtype.names or ()
        return {f"{body}.s" if f"{body}.s" in names else f"{body}.phi": np.interp(data["time"], solution.time, path)
                for body, (path, _) in solution.bodies.items()}
    return solved


def plate(data: np.ndarray) -> dict[str, np.ndarray]:
    from mechfmu.validation.opensim_model import opensim_solution
    solution = opensim_solution(ROOT / "scenarios" / "ball_on_moving_plate", data["time"], accuracy=1e-9)
    return {f"{body}.position.{a}": solution.bodies[body]["position"][:, i]
            for body in solution.bodies for i, a in enumerate("xyz")}


def radau(scenario: str) -> Callable[[np.ndarray], dict[str, np.ndarray]]:
    """scipy's Radau on the Model Exchange form (the monolithic master, ode_rtol 1e-12): every position."""
    def solved(data: np.ndarray) -> dict[str, np.ndarray]:
        result = simulate(ROOT / "scenarios" / scenario, "monolithic", local=True, ode_rtol=1e-12, ode_atol=1e-14,
                          estimate_error=False)
        return {n: np.interp(data["time"], result.data["time"], result.data[n]) for n in result.state_columns
                if "/s" not in result.units[n]}
    return solved


REFERENCES: dict[str, Callable[[np.ndarray], dict[str, np.ndarray]]] = {
    **SOLUTIONS, "prescribed_motion": prescribed, "geared_masses": geared, "ball_on_moving_plate": plate,
    "oscillator": radau("oscillator"), **{s: exudyn(s) for s in ("belt_friction", "friction_slide", "geared_rotors")}}
SCENARIOS = sorted([*REFERENCES, "stick_slip"])
_cache: dict[str, dict[str, np.ndarray]] = {}


def measured(scenario: str, algorithm: str | None) -> dict:
    started = time.perf_counter()
    result = simulate(ROOT / "scenarios" / scenario, algorithm, local=True)
    run = {"wall": time.perf_counter() - started, "calls": result.counters.get("fmu_calls", 0),
           "estimate_calls": result.counters.get("estimate_fmu_calls", 0), "status": result.status,
           "algorithm": result.algorithm + (f" x{result.substeps}" if result.substeps > 1 else ""),
           "error": math.nan, "estimate": math.nan, "tolerance": math.nan, "warned": any(
               "estimated error" in w for w in result.warnings)}
    if not result.ok:
        run["status"] = result.message.splitlines()[0][:60]
        return run
    if scenario == "stick_slip":
        run["error"] = stick_slip_instants_error(result)  # [s]
        run["estimate"], run["tolerance"] = result.accuracy.estimate, result.accuracy.tolerance
        return run
    if scenario not in _cache:
        _cache[scenario] = REFERENCES[scenario](result.data)
    exact = {n: v for n, v in _cache[scenario].items() if n in result.units and "/s" not in result.units[n]}
    errors = {n: float(np.max(np.abs(result.data[n] - v))) for n, v in exact.items()}
    worst = max(errors, key=errors.__getitem__)
    component = worst.split(".")[0]
    run["error"] = errors[worst]
    states = result.accuracy.states  # the estimate of the compared positions, else of the component's of that unit
    same = [states[n] for n in exact if n in states] or [
        e for n, e in states.items() if n.startswith(component + ".") and result.units[n] == result.units[worst]]
    run["estimate"] = max(same, default=result.accuracy.estimate)
    run["tolerance"] = result.accuracy.atol + result.accuracy.rtol * float(np.max(np.abs(result.data[worst])))
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="append", choices=SCENARIOS, help="default: all")
    args = parser.parse_args()
    print(f"{'scenario':<22}{'master':<36}{'error':>10}{'estimate':>10}{'tolerance':>10}{'calls':>10}"
          f"{'+estimate':>10}{'wall s':>8}")
    ratios, misses = [], []
    for scenario in args.scenario or SCENARIOS:
        hand = load_scenario(ROOT / "scenarios" / scenario, check=False).algorithm
        runs = [("auto", measured(scenario, "auto")), (f"hand-chosen: {hand}", measured(scenario, None)),
                ("jacobi", measured(scenario, "jacobi"))]
        for i, (label, r) in enumerate(runs):
            if label == "auto":
                label = f"auto: {r['algorithm']}"
            print(f"{scenario if i == 0 else '':<22}{label:<36}{r['error']:>10.2e}{r['estimate']:>10.2e}"
                  f"{r['tolerance']:>10.2e}{r['calls']:>10d}{r['estimate_calls']:>10d}{r['wall']:>8.2f}"
                  + (" warned" if r["warned"] else "") + ("" if r["status"] == "ok" else f"  {r['status']}"))
        auto, own = runs[0][1], runs[1][1]
        ratios.append(((auto["calls"] + auto["estimate_calls"]) / (own["calls"] + own["estimate_calls"]),
                       auto["calls"] / own["calls"], scenario))
        if not auto["error"] <= (auto["tolerance"] if scenario != "stick_slip" else 1e-6):
            misses.append(scenario)
    worst = max(ratios)
    print(f"auto's calls / the hand-chosen master's, each with its estimate: {min(ratios)[0]:.2f} to {worst[0]:.2f} "
          f"({worst[2]}); runs alone: {min(r[1] for r in ratios):.2f} to {max(r[1] for r in ratios):.2f}")
    print(f"auto beyond the scenario's tolerance (stick_slip: instants beyond 1e-6 s): {', '.join(misses) or 'none'}")


if __name__ == "__main__":
    main()
