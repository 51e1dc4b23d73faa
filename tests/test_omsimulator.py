"""Our exported archives in OpenModelica's OMSimulator (its command line, as a user runs it: no preload, no Python
variables), co-simulation and strongly coupled, against our own master.

- Co-simulation: every shipped scenario without a constraint, exported by ``export_ssp``, runs there (exit 0, no
  error line) and equals our ordered Jacobi (the same algorithm) to 1e-9 of each variable's range
  (``mechfmu.crosscheck.omsimulator.SAME_ALGORITHM``; force rates 1e-8). limit_stops equals it up to its first
  contact, which lands exactly on a communication point: there our mass is exactly at the stop and OMSimulator's,
  whose step times are sums of the step, 2e-15 m beyond it, so its contact starts one step earlier.
- A scenario with a constraint is refused by ``export_ssp`` (no other tool solves the constraint's force); written
  all the same, OMSimulator stops at its first step with the constraint's message.
- Strongly coupled: every ``strongly_coupled`` export runs there (CVODE on the Model Exchange FMUs), at CVODE order
  5 and, for limit_stops and stick_slip (exact zeros of their indicators), at OMSimulator's default order 2: the
  body states agree with our monolithic master within the scenario's tolerance and the events are as many.
- msl/PreLoad (``STIFF_AT_ITS_STEP``): at its 0.1 s step both co-simulations diverge (ours says so, OMSimulator's
  FMUs refuse the values); strongly coupled, its states at the stop time agree within the tolerance and the
  events after its first 0.01 s are as many (its first millisecond is finer than the grid the comparison uses).
- MSL's friction examples, exported strongly coupled (each friction element's lambda_loop wired to its lambda, so
  OMSimulator's loop solver finds the locked force), and its Backlash example run there at OMSimulator's defaults
  inside the Modelica Association's tube for every compared signal, their mode columns equal to the reference's at
  every reference row not within 1e-6 s of a switch of the reference.

OMSimulator is found as ``MECHFMU_OMSIMULATOR`` or on PATH; without it these tests skip saying so, except under
CI (``CI=true``), where its absence fails. Our runs are in-process (bit for bit the FMUs' runs:
tests/test_crosscheck.py, tests/test_model_exchange.py) while OMSimulator runs the archives in the background.
"""
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from conftest import omsimulator_program, slow_but

from mechfmu.crosscheck.omsimulator import (
    FAST_CVODE,
    at_times,
    body_states,
    cosimulation_agreement,
    event_instants,
    run_omsimulator,
    strongly_coupled_agreement,
)
from mechfmu.master.accuracy import scenario_tolerance
from mechfmu.master.simulate import simulate
from mechfmu.ssp.export import export_ssp, unsolved_constraints
from mechfmu.ssp.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted(str(p.parent.relative_to(ROOT / "scenarios"))
                   for p in (ROOT / "scenarios").glob("**/SystemStructure.ssd"))
#: the scenarios whose indicators land on exactly 0.0 in CVODE at OMSimulator's default order
DEFAULT_ORDER = ["limit_stops", "stick_slip"]
#: scenarios whose communication step (MSL's Interval) no explicit co-simulation takes, and whose first instants
#: (faster than that step) the strongly coupled comparison's grid cannot resolve: PreLoad's 10 g plates on 1e6 N/m
#: stops swing with a 0.6 ms period against its 0.1 s step; one plate snaps onto its stops within 1 ms of the start,
#: and two stops start exactly at their gap (indicators 0), on which CVODE chatters (22,301 events in 6e-10 s)
STIFF_AT_ITS_STEP = {"msl/PreLoad": 0.01}  # name -> the time after which events are compared


def _constrained(name: str) -> bool:
    """Read as the tests are collected, before any FMU is built: from the components' declarations."""
    return bool(unsolved_constraints(load_scenario(ROOT / "scenarios" / name, local=True).components))


@pytest.fixture(scope="module")
def omsimulator():
    return omsimulator_program()


@pytest.fixture(scope="module")
def oms_runs(request, omsimulator, fmus, tmp_path_factory):
    """The archives of the selected tests exported, and OMSimulator running them one after another in the
    background: (kind, scenario) -> a future of its run."""
    work = tmp_path_factory.mktemp("omsimulator")
    jobs = []
    for item in request.session.items:
        params = getattr(item, "callspec", None) and item.callspec.params
        if item.module is request.module and params and "name" in params:
            kind = params.get("kind") or ("cosim" if item.originalname.startswith("test_a_cosimulation") else None)
            jobs += [(kind, params["name"])] if kind else []
    pool = ThreadPoolExecutor(max_workers=1)
    futures = {}
    for kind, name in dict.fromkeys(jobs):
        options = FAST_CVODE if kind == "sc" else []  # sc-default, sc-msl: OMSimulator's own settings
        folder = work / kind / name.replace("/", "_")
        archive = export_ssp(ROOT / "scenarios" / name, folder / f"{folder.name}.ssp", strongly_coupled=kind != "cosim")
        futures[kind, name] = pool.submit(run_omsimulator, omsimulator, archive, folder, options)
    yield futures
    pool.shutdown(cancel_futures=True)


def finished(oms_runs, kind: str, name: str):
    run = oms_runs[kind, name].result()
    assert run.returncode == 0 and not run.errors, run.output[-2000:]
    assert run.signals, run.output[-2000:]
    return run


@pytest.mark.parametrize("name", slow_but([n for n in SCENARIOS if not _constrained(n)], "oscillator"))
def test_a_cosimulation_archive_runs_in_omsimulator_as_our_ordered_jacobi(oms_runs, name):
    ours = simulate(ROOT / "scenarios" / name, "jacobi", exchange="ordered", local=True, estimate_error=False)
    if name in STIFF_AT_ITS_STEP:  # both diverge at the step: ours says so, OMSimulator's FMUs refuse the values
        assert not ours.ok and "diverged" in ours.message and "too large for jacobi" in ours.message, ours.message
        assert any("is not finite" in line for line in oms_runs["cosim", name].result().errors)
        return
    assert ours.ok, ours.message
    oms = finished(oms_runs, "cosim", name)
    until = 0.1 if name == "limit_stops" else np.inf
    agreement = cosimulation_agreement(ours, oms, until)
    print(f"\n{name}: worst {agreement.worst:.3g} of the tolerance in {agreement.variable} at t = {agreement.time:.6g} "
          f"s ({agreement.compared} outputs); OMSimulator {oms.wall_time:.2f} s, ours {ours.wall_time:.2f} s")
    assert agreement.compared >= len(ours.data.dtype.names) - 1 - 2  # every output but a String parameter's
    assert agreement.worst <= 1.0, agreement
    if name == "limit_stops":  # from the first contact on: one step apart, for the reason the docstring gives
        at_stop = np.array([0.1])
        assert ours.data["mass.s"][np.searchsorted(ours.data["time"], 0.1)] == 0.1
        assert at_times(oms.signals, at_stop)["mass.s"][0] > 0.1
        assert cosimulation_agreement(ours, oms).worst > 1.0


@pytest.mark.parametrize("name", slow_but(sorted(n for n in SCENARIOS if _constrained(n)), "geared_masses"))
def test_a_scenario_with_a_constraint_is_refused_and_omsimulator_would_stop_at_once(omsimulator, fmus, tmp_path,
                                                                                       name):
    with pytest.raises(ValueError, match=r"needs its force lambda solved by the master.*--unsolved-constraints"):
        export_ssp(ROOT / "scenarios" / name, tmp_path / "refused.ssp")
    archive = export_ssp(ROOT / "scenarios" / name, tmp_path / f"{Path(name).name}.ssp",
                         unsolved_constraints_allowed=True)
    oms = run_omsimulator(omsimulator, archive, tmp_path)
    scenario = load_scenario(ROOT / "scenarios" / name)
    if any(is_friction(spec) for spec in scenario.components.values()):  # a friction element: locked, it says so
        assert "This FMU does not solve its locked force" in oms.output, oms.output[-2000:]
        return
    assert "This FMU does not enforce its constraint" in oms.output
    assert any("fmi2_doStep failed" in line for line in oms.errors), oms.output[-2000:]
    times = oms.signals["time"]  # the steps up to the failing one, then a stale row at the stop time
    assert times[-1] == scenario.stop_time and times[-2] < 0.1 * scenario.stop_time


def is_friction(spec) -> bool:
    """One of MSL's friction elements (components/friction.py)."""
    from mechfmu.components.friction import PartialFriction

    from mechfmu.ssp.scenario import component_class

    try:
        return issubclass(component_class(spec.fmu), PartialFriction)
    except ValueError:
        return False


@pytest.mark.parametrize("kind, name", slow_but([("sc", n) for n in SCENARIOS if not _constrained(n)]
                                                + [("sc-default", n) for n in DEFAULT_ORDER],
                                                ("sc-default", "limit_stops")))
def test_a_strongly_coupled_archive_runs_in_omsimulator_as_our_monolithic_master(oms_runs, kind, name):
    scenario = load_scenario(ROOT / "scenarios" / name)
    ours = simulate(scenario, "monolithic", local=True, estimate_error=False)
    assert ours.ok, ours.message
    oms = finished(oms_runs, kind, name)
    rtol, atol = scenario_tolerance(scenario, None, None)
    if name in STIFF_AT_ITS_STEP:  # the states at the stop time, where both are exactly; the events after the start
        assert oms.returncode == 0 and not oms.errors, oms.output[-2000:]
        for state in body_states(list(ours.data.dtype.names), scenario):
            tolerance = atol + rtol * float(np.max(np.abs(ours.data[state])))
            assert abs(ours.data[state][-1] - oms.signals[state][-1]) <= tolerance, state
        start = STIFF_AT_ITS_STEP[name]
        time = oms.signals["time"]
        assert event_instants(time[time >= start]) == sum(t >= start for t, _ in ours.events) > 0
        return
    agreement = strongly_coupled_agreement(ours, oms, scenario, rtol, atol)
    print(f"\n{name} ({'order 2' if kind == 'sc-default' else 'order 5'}): worst {agreement.worst:.3g} of the "
          f"tolerance in {agreement.variable} at t = {agreement.time:.6g} s; events {agreement.oms_events} "
          f"(ours {agreement.our_events}); OMSimulator {oms.wall_time:.2f} s, ours {ours.wall_time:.2f} s")
    assert agreement.compared > 0
    assert agreement.worst <= 1.0, agreement
    assert agreement.oms_events == agreement.our_events


#: the mode columns, compared by value at the reference's rows (MSL's constants)
MODES = ("mode", "startForward", "startBackward")
#: within this of a reference switch either mode counts (the reference's own resolution of an instant)
SWITCH_WINDOW = 1e-6


@pytest.mark.parametrize("kind, name", slow_but([("sc-msl", f"msl/{n}") for n in ("Brake", "CoupledClutches",
                                                                                    "OneWayClutch", "Backlash")],
                                                ("sc-msl", "msl/Brake")))
def test_msl_friction_examples_run_strongly_coupled_in_omsimulator_inside_the_reference_tube(oms_runs, kind, name):
    from mechfmu.validation.msl import event_times, read_msl_reference, tube_violation

    folder = ROOT / "scenarios" / name
    path = folder / "reference" / f"{folder.name}.csv"
    reference = read_msl_reference(path)
    compared = [c for c in (folder / "reference" / "comparisonSignals.txt").read_text().split() if c != "time"]
    oms = finished(oms_runs, kind, name)
    time = oms.signals["time"]
    switches = event_times(path)
    away = np.array([switches.size == 0 or np.min(np.abs(switches - t)) > SWITCH_WINDOW for t in reference["time"]])
    last = np.searchsorted(time, reference["time"], side="right") - 1  # OMSimulator's last row at or before each
    errors = {}
    for column in compared:
        if column.rsplit(".", 1)[1] in MODES:
            mismatched = reference["time"][away & (oms.signals[column][last] != reference[column])]
            assert mismatched.size == 0, (column, mismatched[:5])
        else:
            assert tube_violation(reference["time"], reference[column], time, oms.signals[column]) == 0.0, column
            errors[column] = float(np.max(np.abs(np.interp(time, reference["time"], reference[column])
                                                 - oms.signals[column])))  # at its rows (CVODE's steps)
    print(f"\n{name}: OMSimulator {oms.wall_time:.2f} s; max abs error {errors}")


def test_omsimulator_does_not_apply_a_linear_transformation(omsimulator, fmus, tmp_path):
    """What ``export-ssp`` says of OMSimulator 2.1.3 and a transformed connection (a sine in kN into a Force in N,
    x 1000): it delivers the sine unchanged, so the mass moves 1000 times less than in mechfmu."""
    from test_connection_maps import force_on_mass
    archive = export_ssp(force_on_mass(tmp_path, 1.0, "kN"), tmp_path / "kN.ssp")
    run = run_omsimulator(omsimulator, archive, tmp_path / "oms")
    assert run.returncode == 0 and run.signals, run.output[-2000:]
    assert np.ptp(run.signals["sine.y"]) > 1.9
    assert np.isin(run.signals["force.f"], run.signals["sine.y"]).all()  # its rows: before and after an exchange
    ours = simulate(archive, "jacobi", exchange="ordered", local=True, estimate_error=False)
    np.testing.assert_allclose(run.signals["mass.flange_a.s"][-1] * 1000, ours.final["mass.flange_a.s"], rtol=1e-9)
