"""The monolithic master beside the co-simulation masters, per scenario with an independent solution.

For each scenario: the largest error against its independent solution (closed form, scipy's piecewise
integration, OpenSim, the MSL examples' matrix exponentials; for stick_slip the largest error of its stick/slip
instants [s], located events for a master that locates them, else the first row with the new mode), the
component calls and the wall time of the monolithic run (in-process, Model Exchange form, ``ode_rtol``) and of
the best of the co-simulation masters at the scenario's step (in-process too, so the calls count the same
things), measured in this one run.

    python3 benchmarks/monolithic.py [--ode-rtol 1e-10] [--scenario NAME ...]
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from mechfmu.master.simulate import simulate  # noqa: E402
from mechfmu.validation.analytic import two_mass_oscillator_positions  # noqa: E402

CO_SIMULATION = [("jacobi", {}), ("gauss-seidel", {}), ("linear-implicit", {}), ("fixed-point", {}),
                 ("newton", {"coupling": "implicit"}), ("linear-implicit", {"events": "on"})]


def damped_oscillator(data: np.ndarray) -> dict[str, np.ndarray]:
    """scenarios/oscillator_linear from rest: m 5 kg, k 5000 N/m, d 80 N.s/m, F 1 N."""
    m, k, d, force = 5.0, 5000.0, 80.0, 1.0
    w0, zeta = math.sqrt(k / m), d / (2 * math.sqrt(k * m))
    wd, t = w0 * math.sqrt(1 - zeta ** 2), data["time"]
    return {"mass.s": force / k * (1 - np.exp(-zeta * w0 * t) * (np.cos(wd * t) + zeta * w0 / wd * np.sin(wd * t)))}


def two_masses(data: np.ndarray) -> dict[str, np.ndarray]:
    exact = two_mass_oscillator_positions(data["time"])
    return {"mass1.s": exact[0], "mass2.s": exact[1]}


def elastogap(data: np.ndarray) -> dict[str, np.ndarray]:
    from mechfmu.validation.event_references import monolithic_example
    return {k: v for k, v in monolithic_example(data["time"]).items() if k != "events"}


def ball_drop(data: np.ndarray) -> dict[str, np.ndarray]:
    from mechfmu.validation.event_references import ball_drop_positions
    centre = ball_drop_positions(data["time"])
    return {f"ball.position.{a}": centre[:, i] for i, a in enumerate("xyz")}


def limit_stops(data: np.ndarray) -> dict[str, np.ndarray]:
    from test_events import SHIPPED, piecewise_linear_motion
    return {"mass.s": piecewise_linear_motion(data["time"], **SHIPPED)[0]}


def msl_example(name: str) -> Callable[[np.ndarray], dict[str, np.ndarray]]:
    """The MSL example's compared signals from mechfmu/validation/msl_solutions.py (exact, matrix exponentials)."""
    def solved(data: np.ndarray) -> dict[str, np.ndarray]:
        from mechfmu.validation.msl_solutions import SOLUTIONS as MSL
        return MSL[name](data["time"])
    return solved


MSL_EXAMPLES = ("Accelerate", "Damper", "InitialConditions", "Oscillator", "Sensors", "SignConvention", "WhyArrows")
SOLUTIONS: dict[str, Callable[[np.ndarray], dict[str, np.ndarray]]] = {
    "oscillator_linear": damped_oscillator, "two_mass_oscillator": two_masses, "elastogap": elastogap,
    "ball_drop": ball_drop, "limit_stops": limit_stops, **{f"msl/{n}": msl_example(n) for n in MSL_EXAMPLES}}


def stick_slip_instants_error(result) -> float:
    """Largest |instant − reference| [s] of the stick/slip switches (``mechfmu/validation/stick_slip.py``'s scipy
    reference, this checkout's file: also where an earlier tree is under test)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("stick_slip_reference", ROOT / "mechfmu" / "validation" /
                                                  "stick_slip.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    reference = module.stick_slip_solution(result.end_time)[0]
    if result.events:
        instants = [t for t, _ in result.events]
    else:
        mode, t = result.data["friction.frictionMode"], result.data["time"]
        instants = list(t[1:][(mode[1:] == 0) != (mode[:-1] == 0)])
    if len(instants) != len(reference):
        return math.inf
    return max(abs(a - b) for a, b in zip(instants, reference))


SCENARIOS = sorted([*SOLUTIONS, "stick_slip"])


def measured(scenario: str, algorithm: str, options: dict) -> tuple[float, int, float, str]:
    """(largest error against the independent solution, component calls, wall s, status) of one run."""
    started = time.perf_counter()
    result = simulate(ROOT / "scenarios" / scenario, algorithm, local=True, **options)
    wall = time.perf_counter() - started
    if not result.ok:
        return math.nan, result.counters.get("fmu_calls", 0), wall, result.message.splitlines()[0][:60]
    if scenario == "stick_slip":
        return stick_slip_instants_error(result), result.counters.get("fmu_calls", 0), wall, "ok"
    exact = SOLUTIONS[scenario](result.data)
    error = max(float(np.max(np.abs(result.data[name] - values))) for name, values in exact.items())
    return error, result.counters.get("fmu_calls", 0), wall, "ok"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ode-rtol", type=float, default=1e-10, help="the monolithic integrator's rtol")
    parser.add_argument("--scenario", action="append", choices=SCENARIOS, help="default: all")
    args = parser.parse_args()
    print(f"{'scenario':<22}{'master':<44}{'error':>10}{'calls':>10}{'wall s':>8}")
    for scenario in args.scenario or SCENARIOS:
        mono = measured(scenario, "monolithic", {"ode_rtol": args.ode_rtol, "ode_atol": args.ode_rtol * 1e-2})
        runs = [(name + " events" * ("events" in options), measured(scenario, name, options))
                for name, options in CO_SIMULATION]
        ok = [(name, r) for name, r in runs if r[3] == "ok"]
        best_name, best = min(ok, key=lambda item: item[1][0]) if ok else ("none", (math.nan, 0, 0.0, ""))
        print(f"{scenario:<22}{'monolithic':<44}{mono[0]:>10.2e}{mono[1]:>10d}{mono[2]:>8.2f}")
        print(f"{'':<22}{'best co-simulation: ' + best_name:<44}{best[0]:>10.2e}{best[1]:>10d}{best[2]:>8.2f}"
              f"   error ratio {best[0] / mono[0] if mono[0] else math.inf:.1e}, wall ratio "
              f"{mono[2] / best[2] if best[2] else math.nan:.1f}")


if __name__ == "__main__":
    main()
