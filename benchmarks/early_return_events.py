"""Event location by FMI 3.0 early return against event location by rollback, side by side in one run, with the
monolithic master's event times as the reference.

For each scenario (default: ball_drop, elastogap, limit_stops, stick_slip) through the FMI 3.0 FMUs (``mechfmu build
--fmi-version 3`` first), three runs:

- the monolithic master (Model Exchange, Radau at ode_rtol 1e-12, ode_atol 1e-14): the reference event times;
- co-simulation with ``events=rollback``: each event bracketed by steps of every FMU taken again from saved states;
- co-simulation with ``events=on``: each event bracketed inside the moving body's fmi3DoStep by repeated early
  returns, the other FMUs' steps ending at its ``lastSuccessfulTime``.

Both co-simulation runs take the same algorithm, step and ``event_tolerance`` (``--algorithm``, default
linear-implicit; ``--step``, default 1e-3 s; ``--tolerance``, default 1e-10 s). Printed per run: the events, the
rollbacks the location needed (``event_rollbacks``), the FMU calls, and per event its distance to the nearest
monolithic event of the same indicator; then the ratio of FMU calls (early return / rollback).

Targets: every event within 1e-9 s of the monolithic run's, 0 rollbacks with early return, fewer FMU calls than by
rollback. An event whose time the coupling itself moves (a force that acts before the contact, a body driven
through a spring) lies as far from the monolithic one under both locators: that distance is the coupling's, and
it shrinks with the step (``--step``).

    python3 benchmarks/early_return_events.py [--scenario S ...] [--algorithm A] [--step H] [--tolerance T]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mechfmu.master.simulate import simulate  # noqa: E402

SCENARIOS = ("ball_drop", "elastogap", "limit_stops", "stick_slip")
TARGET = 1e-9


def distances(events: list[tuple[float, str]], reference: list[tuple[float, str]]) -> list[float]:
    """Per event, the distance [s] to the nearest reference event with an indicator in common (any, where none)."""
    found = []
    for time_, what in events:
        names = set(what.split(", "))
        same = [t for t, w in reference if names & set(w.split(", "))] or [t for t, _ in reference]
        found.append(min((abs(time_ - t) for t in same), default=float("nan")))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", action="append", choices=SCENARIOS)
    parser.add_argument("--algorithm", default="linear-implicit")
    parser.add_argument("--step", type=float, default=1e-3)
    parser.add_argument("--tolerance", default="1e-10")
    args = parser.parse_args()
    print(f"{'scenario':12} {'location':9} {'events':>6} {'rollbacks':>9} {'FMU calls':>10} {'seconds':>7}  "
          f"max |t - t_monolithic| [s] (first events)")
    for name in args.scenario or SCENARIOS:
        folder = ROOT / "scenarios" / name
        reference = simulate(folder, algorithm="monolithic", fmi_version=3, ode_rtol="1e-12", ode_atol="1e-14",
                             estimate_error=False)
        if reference.status != "ok":
            print(f"{name:12} monolithic failed: {reference.message}")
            continue
        calls = {}
        for how in ("rollback", "on"):
            started = time.perf_counter()
            result = simulate(folder, algorithm=args.algorithm, step=args.step, fmi_version=3, events=how,
                              event_tolerance=args.tolerance, estimate_error=False)
            seconds = time.perf_counter() - started
            if result.status != "ok":
                print(f"{name:12} {how:9} failed: {result.message}")
                continue
            far = distances(result.events, reference.events)
            calls[how] = result.counters["fmu_calls"]
            label = "early-ret" if how == "on" else how
            first = ", ".join(f"{d:.1e}" for d in far[:4])
            print(f"{name:12} {label:9} {len(result.events):6d} {result.counters['event_rollbacks']:9d} "
                  f"{calls[how]:10d} {seconds:7.2f}  {max(far, default=0.0):.2e} ({first}); "
                  f"within {TARGET:g} s: {sum(d <= TARGET for d in far)} of {len(far)}")
        if len(calls) == 2:
            print(f"{'':12} FMU calls early return / rollback: {calls['on'] / calls['rollback']:.3f} "
                  f"(monolithic: {len(reference.events)} events)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
