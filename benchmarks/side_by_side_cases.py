"""The cases of ``benchmarks/side_by_side.py`` and their independent references.

- every shipped scenario: the references of ``benchmarks/auto_master.py`` (closed forms, scipy, OpenSim, Exudyn at
  1.25e-5 s, the reduced ODE of geared_masses; oscillator: scipy's Radau on the Model Exchange form at rtol 1e-12,
  read between its grid points by cubic Hermite interpolation on s and v); stick_slip: the mass's position by the
  scipy model of ``tests/test_events.py`` (bristle friction, Radau at rtol 1e-12, each stick and slip located);
  the MSL examples: the Modelica Association's reference at its rows, against its tube (``default_runs.py``);
- ``quarter_car``: written here with ``System``: a 250 kg body on a suspension spring-damper (16 kN/m, 1 kN.s/m) on
  a 35 kg wheel, the tyre a unilateral contact (ElastoGap, 160 kN/m, 50 N.s/m) on a road that rises 8 cm within
  50 ms and drops back 1 s later (a Table driving a Position), gravity on both masses, from rest in equilibrium;
  on the drop the wheel lifts off and lands again. Its reference: scipy's DOP853 at rtol 1e-12 restarted at each
  contact change, damper clamp and road corner (``default_runs.piecewise``).

``judge`` puts each tool's largest error against the reference into its cell (``side_by_side.py`` says how).
"""
from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
G = 9.81
QUARTER_CAR = dict(ms=250.0, mu=35.0, k=16e3, d=1e3, c=160e3, d_tyre=50.0, radius=0.3, length=0.5, stop=3.0,
                   step=1e-3)
ROAD = ((0.0, 0.0), (0.5, 0.0), (0.55, 0.08), (1.5, 0.08), (1.55, 0.0))
CONNECTORS = " (it records the SSD's connectors only)"
#: MSL examples not yet among the shipped scenarios, so not cases: Friction (the example of MassWithStopAndFriction,
#: components/mass_friction.py)
NOT_YET = ("not yet a scenario, so not a case: MSL's Translational.Examples.Friction (MassWithStopAndFriction)")


def quarter_car_start() -> tuple[float, float]:
    """The wheel's and the body's position at rest on the road: the tyre carries both weights, the spring the
    body's."""
    p = QUARTER_CAR
    wheel = p["radius"] - (p["ms"] + p["mu"]) * G / p["c"]
    return wheel, wheel + p["length"] - p["ms"] * G / p["k"]


def quarter_car():
    from mechfmu import Constant, CoordinateSpringDamper, ElastoGap, Mass, Position, System, Table
    p = QUARTER_CAR
    wheel_start, body_start = quarter_car_start()
    s = System("quarter_car", "Quarter car: a road bump; on its drop the wheel lifts off the road and lands again")
    profile = s.add("profile", Table(table="; ".join(f"{t}, {y}" for t, y in ROAD), extrapolation=1))
    road = s.add("road", Position())
    tyre = s.add("tyre", ElastoGap(c=p["c"], d=p["d_tyre"], s_rel0=p["radius"]))
    wheel = s.add("wheel", Mass(m=p["mu"], s_start=wheel_start))
    suspension = s.add("suspension", CoordinateSpringDamper(stiffness=p["k"], damping=p["d"], offset=p["length"]))
    body = s.add("body", Mass(m=p["ms"], s_start=body_start))
    for name, mass in (("wheel", wheel), ("body", body)):
        weight = s.add(f"{name}_weight", Constant(k=-p["mu" if name == "wheel" else "ms"] * G))
        s.connect(weight.y, mass.f_drive)
    s.connect(profile.y, road.s_ref)
    s.connect(profile.y_rate, road.s_ref_rate)
    s.connect(profile.y_rate_rate, road.s_ref_rate_rate)
    s.connect(road.flange, tyre.flange_a)
    s.connect(tyre.flange_b, wheel.flange_a)
    s.connect(wheel.flange_b, suspension.flange_a)
    s.connect(suspension.flange_b, body.flange_a)
    s.experiment(p["stop"], p["step"], "auto", tolerance=(1e-4, 1e-6))
    return s


def road(t: float) -> tuple[float, float]:
    """The road's height and speed at t (the Table's straight lines, held after the last row)."""
    times, heights = zip(*ROAD)
    i = min(max(int(np.searchsorted(times, t, side="right")) - 1, 0), len(ROAD) - 2)
    slope = (heights[i + 1] - heights[i]) / (times[i + 1] - times[i]) if t < times[-1] else 0.0
    return heights[i] + slope * (t - times[i]) if t < times[-1] else heights[-1], slope


def quarter_car_reference(times: np.ndarray) -> dict[str, np.ndarray]:
    from default_runs import gap_force, piecewise
    p = QUARTER_CAR

    def rhs(t, y):
        su, vu, ss, vs, _ = y
        height, speed = road(t)
        tyre = gap_force(su - height, vu - speed, p["c"], p["d_tyre"], p["radius"])  # < 0 pushes the wheel up
        spring = p["k"] * (ss - su - p["length"]) + p["d"] * (vs - vu)  # tension positive
        return [vu, (-tyre + spring) / p["mu"] - G, vs, -spring / p["ms"] - G, 1.0]

    def gap(y):
        return y[0] - road(y[4])[0] - p["radius"]

    def clamp(y):
        return abs(p["c"] * gap(y)) - abs(p["d_tyre"] * (y[1] - road(y[4])[1]))
    corners = [lambda y, t=t: y[4] - t for t, _ in ROAD[1:]]
    wheel, body = quarter_car_start()
    su, _, ss, _, _ = piecewise(rhs, [gap, clamp, *corners], [wheel, 0.0, body, 0.0, 0.0], times)
    return {"wheel.s": su, "body.s": ss}


def stick_slip_positions(times: np.ndarray) -> dict[str, np.ndarray]:
    """scenarios/stick_slip's mass position by ``mechfmu.validation.stick_slip`` (the model whose switching instants
    tests/test_events.py checks), its phases' dense output at ``times``."""
    from mechfmu.validation.stick_slip import stick_slip_solution
    return {"mass.s": stick_slip_solution(float(times[-1]), times)[1]}


def oscillator_hermite(times: np.ndarray) -> dict[str, np.ndarray]:
    """scenarios/oscillator by scipy's Radau on the Model Exchange form (our monolithic master, ode_rtol 1e-12,
    as auto_master.radau), between its grid points by cubic Hermite interpolation on s and v."""
    from scipy.interpolate import CubicHermiteSpline

    from mechfmu.master.simulate import simulate
    result = simulate(ROOT / "scenarios" / "oscillator", "monolithic", local=True, ode_rtol=1e-12, ode_atol=1e-14,
                      estimate_error=False)
    data = result.data
    _, last = np.unique(data["time"][::-1], return_index=True)  # one row per time, the last
    data = data[::-1][last]
    return {"mass.s": CubicHermiteSpline(data["time"], data["mass.s"], data["mass.v"])(times)}


def shipped() -> list[str]:
    return sorted(p.parent.relative_to(ROOT / "scenarios").as_posix()
                  for p in (ROOT / "scenarios").glob("**/SystemStructure.ssd"))


def reference(case: str, names: list[str]) -> Callable[[np.ndarray], dict[str, np.ndarray]] | None:
    """The case's reference as a function of the times (ascending) to the positions it has, by column name
    (``names``: the columns a run of the case records, which tell a body's translation from its rotation); None for
    an MSL example (its Modelica Association reference is read at its rows)."""
    if case.startswith("msl/"):
        return None
    if case == "quarter_car":
        return quarter_car_reference
    if case == "stick_slip":
        return stick_slip_positions
    if case == "oscillator":
        return oscillator_hermite
    from auto_master import REFERENCES
    solved = REFERENCES[case]
    dtype = [("time", float)] + [(n, float) for n in names if n != "time"]

    def at(times: np.ndarray) -> dict[str, np.ndarray]:
        data = np.zeros(len(times), dtype=dtype)
        data["time"] = times
        return solved(data)
    return at


def position(name: str) -> bool:
    return not re.search(r"\.(v|w|v_rel|w_rel|velocity\.[xyz]|angularVelocity\.[xyz])$", name)


def judge(case, cells: list) -> None:
    """Each tool's largest error against the case's reference (see the module's text), into its cell."""
    if case.name.startswith("msl/"):
        return judge_msl(case, cells)
    from mechfmu.crosscheck.tool_results import values_at
    from mechfmu.ssp.scenario import load_scenario
    rtol, atol = load_scenario(case.source, check=False).tolerance
    ran = [c for c in cells if not c.refused]
    rows = {c.tool: c.columns["time"] <= case.stop * (1 + 1e-9) for c in ran}
    times = np.unique(np.concatenate([c.columns["time"][rows[c.tool]] for c in ran]))
    names = sorted({n for c in ran for n in c.columns})
    exact = {n: v for n, v in reference(case.name, names)(times).items() if position(n)}
    for c in ran:
        at = c.columns["time"][rows[c.tool]]
        worst = (-1.0, "", 0.0, 0.0)
        for name in [n for n in exact if n in c.columns]:
            error = float(np.max(np.abs(c.columns[name][rows[c.tool]] - values_at(at, times, exact[name])[0])))
            tolerance = atol + rtol * float(np.max(np.abs(exact[name])))
            worst = max(worst, (error / tolerance, name, error, tolerance))
        if not worst[1]:
            c.error = f"no position of {', '.join(exact)} in its result" + CONNECTORS * (c.tool == "fmpy")
            continue
        unit = "rad" if worst[1].endswith("phi") else "m"
        c.error, c.tolerance = f"{worst[2]:.1e} {unit} ({worst[1]})", f"{worst[3]:.1e} {unit}"


def judge_msl(case, cells: list) -> None:
    """At the reference's rows where the tool has a row (at least a tenth of them), else at the tool's rows with
    the reference interpolated linearly between its rows (OMSimulator's rows are CVODE's steps)."""
    from mechfmu.crosscheck.tool_results import values_at
    from mechfmu.validation.msl import read_msl_reference
    folder = case.source / "reference"
    exact = read_msl_reference(next(folder.glob("*.csv")))
    compared = [c for c in (folder / "comparisonSignals.txt").read_text().split()
                if c != "time" and c.rsplit(".", 1)[1] not in ("mode", "startForward", "startBackward", "locked")]
    for c in (c for c in cells if not c.refused):
        worst, had, times = (-1.0, ""), [n for n in compared if n in c.columns], c.columns["time"]
        hit, between = values_at(exact["time"], times, times)
        on_rows = np.sum(~between & ~np.isnan(hit)) >= 0.1 * len(exact)
        for name in had:
            if on_rows:
                theirs, ours = values_at(exact["time"], times, c.columns[name])[0], exact[name]
                theirs = np.where(between, np.nan, theirs)
            else:
                theirs, ours = values_at(times, exact["time"], exact[name])[0], c.columns[name]
            half = 2e-3 * max(float(np.ptp(exact[name])), 1e-3)
            worst = max(worst, (float(np.nanmax(np.abs(theirs - ours))) / half, name))
        if not had:
            c.error = f"none of the reference's {len(compared)} signals in its result" + CONNECTORS * (c.tool == "fmpy")
            continue
        c.error, c.tolerance = f"{worst[0]:.2g} of the tube ({worst[1]})", f"1 ({len(had)} of {len(compared)} signals)"
        if not on_rows:
            c.notes.append("compared at its rows, the reference interpolated linearly")
