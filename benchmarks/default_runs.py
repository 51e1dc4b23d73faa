"""Fast and accurate by default: runs as a new user makes them (no master named, the default tolerance, through the
FMUs), each against a solution from outside our masters, this tree beside an earlier revision, in one run.

Cases:
- ``impact``: two bodies, 1 kg at 2 m/s towards 2 kg at rest 0.5 m ahead, an ElastoGap between them (s_rel0 0.1 m,
  c = 1e5 N/m, d = 50 N.s/m), 1 s at a step of 1e-3 s; both positions against scipy (``impact_reference``).
  Target: within 1e-6 m, at most 1 s of wall time.
- ``two_mass``: written with ``System`` and run with ``run()``: a 50 N, 2 Hz sine force on 1 kg, an ElastoGap with
  a 1 cm gap to a 2 kg mass, that mass on a spring (100 N/m, 1 N.s/m) to ground; 2 s at a step of 1e-3 s; both
  positions against scipy (``two_mass_reference``). Target: within the run's tolerance, no warning, at most 2 s.
- every shipped scenario with its ``mechfmu:Master`` (master and tolerance) removed, so auto at the default
  tolerance, against the references of ``benchmarks/auto_master.py``: within the scenario's declared tolerance
  (stick_slip: its switch instants within 1e-6 s). Target: the total wall time at most 1/20 of the earlier
  revision's.

Each tree runs in its own process (this tree's code measures, the tree's ``mechfmu`` runs); ``--before REV`` checks
out and builds REV's FMUs for this machine (``benchmarks/fmu_bit_identity.checkout``). Wall times are the runs'
``simulate`` calls, FMUs built beforehand.

    python3 benchmarks/default_runs.py [--before REV] [--case NAME ...]
    python3 benchmarks/default_runs.py --profile two_mass    (where the time of one run goes)
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
IMPACT = dict(m1=1.0, m2=2.0, v1=2.0, s2=0.5, s_rel0=0.1, c=1e5, d=50.0, stop=1.0)
TWO_MASS = dict(m1=1.0, m2=2.0, amplitude=50.0, f=2.0, s_rel0=0.0, gap=0.01, k=100.0, d_spring=1.0, c=1e5,
                d=50.0, stop=2.0)


def gap_force(s_rel: float, v_rel: float, c: float, d: float, s_rel0: float) -> float:
    """MSL 4.0's ElastoGap (n = 1), transcribed from the Modelica source: tension positive, 0 out of contact."""
    if s_rel >= s_rel0:
        return 0.0
    f_c = c * (s_rel - s_rel0)
    f_d = min(max(d * v_rel, f_c), -f_c)
    return f_c + f_d


def piecewise(rhs, kinks, y0: list[float], times: np.ndarray) -> np.ndarray:
    """scipy's DOP853 at rtol 1e-12 on ``rhs``, restarted at every zero of a ``kinks`` function (where the law is not
    smooth: a contact begins or ends, a damper meets its clamp), so no step crosses a kink; the states at ``times``."""
    from scipy.integrate import solve_ivp
    events = []
    for kink in kinks:
        def event(t, y, kink=kink):
            return kink(y)
        event.terminal = True
        events.append(event)
    t0, y, pieces = 0.0, np.array(y0, dtype=float), []
    while True:
        solution = solve_ivp(rhs, (t0, times[-1]), y, method="DOP853", rtol=1e-12, atol=1e-14, events=events,
                             dense_output=True)
        inside = times[(times >= t0) & (times <= solution.t[-1])]
        if len(inside):
            pieces.append((inside, solution.sol(inside)))
        if solution.status != 1:
            break
        t0, y = solution.t[-1], solution.y[:, -1]
        step = solve_ivp(rhs, (t0, t0 + 1e-9), y, method="DOP853", rtol=1e-13, atol=1e-15,
                         dense_output=True)  # past the kink
        within = times[(times > t0) & (times < step.t[-1])]  # a grid point just after the kink (the piece ends there)
        if len(within):
            pieces.append((within, step.sol(within)))
        t0, y = step.t[-1], step.y[:, -1]
    kept: dict[float, np.ndarray] = {}
    for at, values in pieces:
        for i, t in enumerate(at):
            kept.setdefault(float(t), values[:, i])
    return np.array([kept[float(t)] for t in times]).T


def impact_reference(times: np.ndarray) -> dict[str, np.ndarray]:
    p = IMPACT

    def rhs(t, y):
        s1, v1, s2, v2 = y
        f = gap_force(s2 - s1, v2 - v1, p["c"], p["d"], p["s_rel0"])
        return [v1, f / p["m1"], v2, -f / p["m2"]]
    kinks = [lambda y: y[2] - y[0] - p["s_rel0"],
             lambda y: abs(p["c"] * (y[2] - y[0] - p["s_rel0"])) - abs(p["d"] * (y[3] - y[1]))]
    s1, _, s2, _ = piecewise(rhs, kinks, [0.0, p["v1"], p["s2"], 0.0], times)
    return {"body1.s": s1, "body2.s": s2}


def two_mass_reference(times: np.ndarray) -> dict[str, np.ndarray]:
    p = TWO_MASS

    def rhs(t, y):
        s1, v1, s2, v2 = y
        force = p["amplitude"] * math.sin(2 * math.pi * p["f"] * t)
        f = gap_force(s2 - s1, v2 - v1, p["c"], p["d"], p["s_rel0"])
        spring = p["k"] * (p["gap"] - s2) - p["d_spring"] * v2  # to ground at the start position
        return [v1, (force + f) / p["m1"], v2, (-f + spring) / p["m2"]]
    kinks = [lambda y: y[2] - y[0] - p["s_rel0"],
             lambda y: abs(p["c"] * (y[2] - y[0] - p["s_rel0"])) - abs(p["d"] * (y[3] - y[1]))]
    s1, _, s2, _ = piecewise(rhs, kinks, [0.0, 0.0, p["gap"], 0.0], times)
    return {"m1.s": s1, "m2.s": s2}


def impact_run():
    from mechfmu import ElastoGap, Mass, System
    p = IMPACT
    s = System("impact")
    body1 = s.add("body1", Mass(m=p["m1"], v_start=p["v1"]))
    gap = s.add("gap", ElastoGap(c=p["c"], d=p["d"], s_rel0=p["s_rel0"]))
    body2 = s.add("body2", Mass(m=p["m2"], s_start=p["s2"]))
    s.connect(body1.flange_b, gap.flange_a)
    s.connect(gap.flange_b, body2.flange_a)
    s.experiment(stop_time=p["stop"], step_size=1e-3)
    return s


def two_mass_run():
    from mechfmu import CoordinateSpringDamper, ElastoGap, Fixed, Force, Mass, Sine, System
    p = TWO_MASS
    s = System("two_mass")
    sine = s.add("sine", Sine(amplitude=p["amplitude"], f=p["f"]))
    force = s.add("force", Force())
    m1 = s.add("m1", Mass(m=p["m1"]))
    gap = s.add("gap", ElastoGap(c=p["c"], d=p["d"], s_rel0=p["s_rel0"]))
    m2 = s.add("m2", Mass(m=p["m2"], s_start=p["gap"]))
    spring = s.add("spring", CoordinateSpringDamper(stiffness=p["k"], damping=p["d_spring"]))
    ground = s.add("ground", Fixed(s0=p["gap"]))
    s.connect(sine.y, force.f)
    s.connect(force.flange, m1.flange_a)
    s.connect(m1.flange_b, gap.flange_a)
    s.connect(gap.flange_b, m2.flange_a)
    s.connect(m2.flange_b, spring.flange_a)
    s.connect(spring.flange_b, ground.flange)
    s.experiment(stop_time=p["stop"], step_size=1e-3)
    return s


def without_master(scenario: str, folder: Path, fmu_dir: Path) -> Path:
    """A copy of a shipped scenario's SSD with its mechfmu:Master removed and its FMU sources made absolute."""
    text = (ROOT / "scenarios" / scenario / "SystemStructure.ssd").read_text()
    text = re.sub(r"<mechfmu:Master[^>]*/>", "", text)
    text = re.sub(r'source="(\.\./)+fmus/', f'source="{fmu_dir.as_posix()}/', text)
    target = folder / scenario.replace("/", "_")
    target.mkdir(parents=True)
    for path in (ROOT / "scenarios" / scenario).iterdir():  # parameter sets, tables
        if path.is_file() and path.name != "SystemStructure.ssd":
            (target / path.name).write_bytes(path.read_bytes())
    (target / "SystemStructure.ssd").write_text(text)
    return target


def shipped() -> list[str]:
    return sorted(p.parent.relative_to(ROOT / "scenarios").as_posix()
                  for p in (ROOT / "scenarios").glob("**/SystemStructure.ssd"))


def measure(case: str, work: Path, compare: bool = True) -> dict:
    """One case run by the ``mechfmu`` this process imports: wall time, calls, what auto chose, the error against the
    case's solution and the tolerance it is held to (``compare``)."""
    from mechfmu.fmu.build import FMU_DIR
    from mechfmu.master.simulate import simulate
    started = time.perf_counter()
    if case in ("impact", "two_mass"):
        system = impact_run() if case == "impact" else two_mass_run()
        started = time.perf_counter()
        result = system.run()
    else:
        folder = without_master(case, work, Path(FMU_DIR))
        started = time.perf_counter()
        result = simulate(folder)
    wall = time.perf_counter() - started
    row = {"case": case, "wall": wall, "status": result.status, "algorithm": result.algorithm,
           "substeps": result.substeps, "calls": result.counters.get("fmu_calls", 0),
           "estimate_calls": result.counters.get("estimate_fmu_calls", 0),
           "warned": any("estimated error" in w for w in result.warnings),
           "estimate": result.accuracy.estimate if result.accuracy else math.nan}
    if not result.ok or not compare:
        row["error"] = math.nan
        return row
    if case == "impact":
        exact, limit = impact_reference(result.data["time"]), None
    elif case == "two_mass":
        exact, limit = two_mass_reference(result.data["time"]), None
    else:
        exact, limit = scenario_reference(case, result)
    if case == "stick_slip":
        row["error"], row["tolerance"] = exact, 1e-6
        return row
    if limit == "tube":  # an MSL example: at the reference's rows, against the tube's half-height
        worst = max(exact, key=lambda n: exact[n][0] / exact[n][1])
        row.update(error=exact[worst][0], tolerance=exact[worst][1], variable=worst)
        return row
    errors = {n: float(np.max(np.abs(result.data[n] - v))) for n, v in exact.items()}
    tolerances = {n: (limit or (result.accuracy.rtol, result.accuracy.atol))[1]
                  + (limit or (result.accuracy.rtol, result.accuracy.atol))[0] * float(np.max(np.abs(result.data[n])))
                  for n in exact}
    worst = max(errors, key=lambda n: errors[n] / tolerances[n])
    row.update(error=errors[worst], tolerance=tolerances[worst], variable=worst)
    if case == "impact":
        row["tolerance"] = 1e-6
    return row


def scenario_reference(scenario: str, result) -> tuple:
    """The shipped scenario's solution (benchmarks/auto_master.py's) at the run's times, and the (rtol, atol) its SSD
    declares; for stick_slip the error of its switch instants [s]."""
    sys.path.insert(0, str(ROOT / "tests"))
    from auto_master import REFERENCES, stick_slip_instants_error

    from mechfmu.ssp.scenario import load_scenario
    declared = load_scenario(ROOT / "scenarios" / scenario, check=False).tolerance
    if scenario == "stick_slip":
        return stick_slip_instants_error(result), declared
    if scenario not in REFERENCES:
        return msl_reference(scenario, result), "tube"
    exact = REFERENCES[scenario](result.data)
    return {n: v for n, v in exact.items() if n in result.units and "/s" not in result.units[n]}, declared


def msl_reference(scenario: str, result) -> dict[str, tuple[float, float]]:
    """An MSL example without a solution of ours: per compared continuous signal of its Modelica Association
    reference, the largest difference at the reference's rows and the half-height of the reference's tube there
    (2e-3 of the signal's range: MSL's regression check)."""
    from mechfmu.validation.msl import read_msl_reference
    folder = ROOT / "scenarios" / scenario / "reference"
    reference = read_msl_reference(next(folder.glob("*.csv")))
    compared = [c for c in (folder / "comparisonSignals.txt").read_text().split()
                if c != "time" and c.rsplit(".", 1)[1] not in ("mode", "startForward", "startBackward", "locked")]
    ours = np.isin(result.data["time"], reference["time"])
    last = np.append(np.diff(result.data["time"][ours]) != 0, True)  # after an event at a row: its later value
    theirs = np.isin(reference["time"], result.data["time"][ours][last])
    return {c: (float(np.max(np.abs(result.data[c][ours][last] - reference[c][theirs]))),
                2e-3 * max(float(np.ptp(reference[c])), 1e-3)) for c in compared}


def child(cases: list[str]) -> None:
    """Measure ``cases`` with the ``mechfmu`` on the path (imported before the benchmarks' helpers put this tree on
    it), one JSON line each."""
    import scipy.integrate  # noqa: F401 - once per process, before the first case's clock (a run imports it once)

    import mechfmu  # noqa: F401 - the tree under test, before any helper inserts this tree's path
    from mechfmu.fmu.build import build
    sys.path.insert(1, str(HERE))
    build(platforms=["linux64"]) if "platforms" in build.__code__.co_varnames else build()
    with tempfile.TemporaryDirectory(prefix="mechfmu_defaults_") as tmp:
        for case in cases:
            try:
                row = measure(case, Path(tmp))
            except Exception as exc:  # a case this tree cannot run (an earlier revision without its components)
                row = {"case": case, "failed": f"{type(exc).__name__}: {exc}".splitlines()[0][:200]}
            print(json.dumps(row), flush=True)


def profiled(case: str) -> None:
    """cProfile of one case's run (after an unprofiled one: imports, FMUs unpacked, library loaded): the functions
    with the most own time, and the share of the FMUs' C (the compiled exchange's calls, ``exchange_run``)."""
    import cProfile
    import pstats
    with tempfile.TemporaryDirectory(prefix="mechfmu_defaults_") as tmp:
        measure(case, Path(tmp) / "warm", compare=False)
        profile = cProfile.Profile()
        profile.enable()
        row = measure(case, Path(tmp) / "profiled", compare=False)
        profile.disable()
    stats = pstats.Stats(profile)
    total = stats.total_tt  # type: ignore[attr-defined]
    print(f"{case}: {row['wall']:.2f} s, {row['calls']} FMU calls ({row['algorithm']}); profiled {total:.2f} s")
    compiled = sum(tt for (file, _, name), (_, _, tt, _, _) in stats.stats.items()  # type: ignore[attr-defined]
                   if name == "run" and file.endswith("exchange.py"))
    print(f"the compiled exchange (its Python call and the FMUs' C behind it): {compiled:.2f} s "
          f"({100 * compiled / total:.0f} %)")
    stats.sort_stats("tottime").print_stats(15)


def measured_in(tree: Path | None, env: dict | None, cases: list[str]) -> list[dict]:
    command = [sys.executable, str(HERE / "default_runs.py"), "--child", *cases]
    proc = subprocess.run(command, cwd=tree or ROOT, env=env, capture_output=True, text=True)
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0:
        raise SystemExit(f"the run in {tree or ROOT} stopped after {len(rows)} of {len(cases)} cases:\n"
                         f"{proc.stderr[-2000:]}")
    return rows


def describe(row: dict) -> str:
    if "failed" in row:
        return f"failed: {row['failed']}"
    master = row["algorithm"] + (f" x{row['substeps']}" if row.get("substeps", 1) > 1 else "")
    verdict = "ok" if row.get("error", math.nan) <= row.get("tolerance", math.nan) else "MISSED"
    return (f"{master:<22}{row['wall']:>9.2f}{row['calls']:>11d}{row['estimate_calls']:>10d}"
            f"{row.get('error', math.nan):>10.2e}{row.get('estimate', math.nan):>10.2e}"
            f"{row.get('tolerance', math.nan):>10.2e} {verdict}"
            + (" warned" if row["warned"] else "") + ("" if row["status"] == "ok" else f" {row['status']}"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="REV", help="an earlier revision measured beside this tree")
    parser.add_argument("--case", action="append", help="impact, two_mass or a shipped scenario (default: all)")
    parser.add_argument("--profile", metavar="CASE", help="print where the time of one case goes (cProfile) and stop")
    parser.add_argument("--child", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child)
        return
    if args.profile:
        profiled(args.profile)
        return
    cases = args.case or ["impact", "two_mass", *shipped()]
    now = {r["case"]: r for r in measured_in(None, None, cases)}
    before: dict[str, dict] = {}
    if args.before:
        from fmu_bit_identity import checkout
        with tempfile.TemporaryDirectory(prefix="mechfmu_before_") as tmp, checkout(args.before, Path(tmp)) as (
                tree, env):
            before = {r["case"]: r for r in measured_in(tree, {**env, "MECHFMU_FMU_DIR": str(tree / "fmus")}, cases)}
    head = f"{'master':<22}{'wall s':>9}{'calls':>11}{'+estim.':>10}{'error':>10}{'estimate':>10}{'tolerance':>10}"
    print(f"{'case':<26}{'tree':<8}{head}")
    for case in cases:
        for label, rows in (("now", now), (args.before or "", before)):
            if case in rows:
                print(f"{case if label == 'now' else '':<26}{label[:7]:<8}{describe(rows[case])}")
    scenarios = [c for c in cases if c not in ("impact", "two_mass") and "failed" not in now.get(c, {"failed": 1})]
    total = sum(now[c]["wall"] for c in scenarios)
    print(f"shipped scenarios at the defaults: {total:.2f} s in all ({len(scenarios)})", end="")
    both = [c for c in scenarios if "failed" not in before.get(c, {"failed": 1})]
    if both:
        old, new = sum(before[c]["wall"] for c in both), sum(now[c]["wall"] for c in both)
        print(f"; the {len(both)} that {args.before} runs too: {new:.2f} s against {old:.2f} s, "
              f"{old / new:.1f}x faster (target >= 20x)")
    else:
        print()
    for case, target in (("impact", 1.0), ("two_mass", 2.0)):
        if case in now and "failed" not in now[case]:
            row = now[case]
            print(f"{case}: {row['wall']:.2f} s (target <= {target:g} s), error {row.get('error', math.nan):.2e} "
                  f"against {row.get('tolerance', math.nan):.2e}, {'a warning' if row['warned'] else 'no warning'}")
    if any("failed" in row for row in now.values()):
        raise SystemExit("this tree failed a case (above)")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
