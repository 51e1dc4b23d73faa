"""MSL's friction elements between co-simulation FMUs (mechfmu/master/algorithms/friction_newton.py): the FMI 3.0
FMUs with event mode hold their modes over a step and switch in event mode; ``newton-friction`` solves the locked
torques and locates the switches, and the MSL examples through it lie inside the Modelica Association's tube."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import slow_but
from fmpy import simulate_fmu

from mechfmu.master.simulate import simulate
from mechfmu.validation.msl import event_times, read_msl_reference, tube_violation

#: a reference row within this of one of the reference's switches is not compared for the mode columns
SWITCH_WINDOW = 1e-6
#: how far an event of the co-simulation may lie from the monolithic run's [s]: the coupling's error in the relative
#: speeds (up to 6e-5 rad/s in CoupledClutches) over relative accelerations of several rad/s^2
EVENT_WINDOW = 2e-5
MODE_COLUMNS = ("mode", "startForward", "startBackward")


def clusters(events: list[tuple[float, str]]) -> list[float]:
    """The times of ``events``, those closer than 1e-6 s to the one before taken as one (an element that slips and
    iterates its modes: MSL's paired events)."""
    times: list[float] = []
    for t, _ in sorted(events):
        if not times or t - times[-1] > 1e-6:
            times.append(t)
    return times


@pytest.mark.parametrize("name", slow_but(["CoupledClutches", "Brake", "OneWayClutch"], "Brake"))
def test_msl_example_in_cosimulation_of_fmi3_fmus_inside_the_reference_tube(fmi3_fmus, name):
    """Every compared signal inside the Modelica Association's tube; every mode column equal to the reference's at
    each of its rows away from its switches; every event of the monolithic run within EVENT_WINDOW of one of ours;
    the locked torques held the elements at rest."""
    folder = f"scenarios/msl/{name}"
    path = f"{folder}/reference/{name}.csv"
    reference = read_msl_reference(path)
    compared = [c for c in open(f"{folder}/reference/comparisonSignals.txt").read().split() if c != "time"]
    result = simulate(folder, "newton-friction", fmi_version=3, estimate_error=False)
    assert result.ok, result.message
    d = result.data
    switches = event_times(path)
    for column in compared:
        if column.rsplit(".", 1)[1] in MODE_COLUMNS:
            rows = [(t, value) for t, value in zip(reference["time"], reference[column])
                    if np.min(np.abs(switches - t)) > SWITCH_WINDOW]
            ours = {t: v for t, v in zip(d["time"], d[column])}  # the last row at a time: after its event
            mismatched = [t for t, value in rows if t in ours and ours[t] != value]
            compared = sum(t in ours for t, _ in rows)
            assert not mismatched and compared >= 0.95 * len(np.intersect1d(d["time"], reference["time"])), \
                (column, mismatched[:5], compared)
        else:
            assert tube_violation(reference["time"], reference[column], d["time"], d[column]) == 0.0, column
    monolithic = simulate(folder, estimate_error=False)
    ours, theirs = np.array(clusters(result.events)), clusters(monolithic.events)
    assert theirs and all(np.min(np.abs(ours - t)) < EVENT_WINDOW for t in theirs), (ours, theirs)
    for element in {c.rsplit(".", 1)[0] for c in d.dtype.names if c.endswith(".locked")}:
        speed = next(f"{element}.{s}" for s in ("w_rel", "w", "v_rel", "v") if f"{element}.{s}" in d.dtype.names)
        locked = d[f"{element}.locked"] == 1  # at its first row, the speed the located lock left: the event
        assert np.max(np.abs(d[speed][locked]), initial=0.0) < 1e-7, element  # tolerance 1e-9 s times |a_rel|


def test_newton_friction_takes_fmi3_fmus_only():
    """An FMI 2.0 friction FMU switches inside its step, where no master can hold it: refused before the run,
    naming the FMUs and the way."""
    result = simulate("scenarios/msl/Brake", "newton-friction", estimate_error=False, stop=0.01)
    assert result.status == "error" and result.data is None
    assert "every FMU must be an FMI 3.0 co-simulation FMU" in result.message and "--fmi-version 3" in result.message
    assert "brake1" in result.message


def test_a_friction_fmu_with_event_mode_switches_in_event_mode(fmi3_fmus):
    """A Clutch in fmpy's FMI 3.0 co-simulation with event mode, its relative speed a ramp from -1 to 1 rad/s: MSL's
    initial event mode puts it in backward sliding; it stays there over every step, says eventHandlingNeeded after
    the step whose held speed is >= 0, and switches to stuck and locked there, in event mode (fmpy's two rows at
    one time: before -1, after 0)."""
    ramp = np.array([(0.0, -1.0, 1.0), (0.5, 1.0, 1.0)],
                    dtype=[("time", np.float64), ("flange_b.w", np.float64), ("f_normalized", np.float64)])
    result = simulate_fmu(str(fmi3_fmus["Clutch"]), fmi_type="CoSimulation", stop_time=0.5, output_interval=0.0125,
                          input=ramp, use_event_mode=True, start_values={"fn_max": 100.0},
                          output=["mode", "locked", "w_rel"])
    t, mode = result["time"], result["mode"]
    assert mode[0] == -1 and mode[-1] == 0 and result["locked"][-1] == 1
    repeated = np.nonzero(np.diff(t) == 0)[0]
    assert len(repeated) == 1, t[repeated]
    at = repeated[0]
    assert (mode[at], mode[at + 1]) == (-1, 0) and np.all(mode[:at + 1] == -1) and np.all(mode[at + 1:] == 0)
    step = 0.0125
    speed = -1.0 + 4.0 * np.arange(0.0, 0.5 + step / 2, step)  # the ramp at the output points
    first = int(np.argmax(speed >= 0.0))  # the first point whose speed is >= 0: its step says eventHandlingNeeded
    assert t[at] == pytest.approx((first + 1) * step, abs=1e-12), (t[at], first)


def test_without_friction_elements_newton_friction_is_newton():
    """The oscillator through the FMI 3.0 FMUs: newton-friction (no element to switch, no event) gives the bits of
    newton with the same coupling (implicit, velocity level)."""
    ours = simulate("scenarios/oscillator", "newton-friction", fmi_version=3, estimate_error=False)
    newton = simulate("scenarios/oscillator", "newton", fmi_version=3, estimate_error=False, coupling="implicit",
                      index="2")
    assert ours.ok and newton.ok and ours.data.dtype.names == newton.data.dtype.names
    assert all(np.array_equal(ours.data[n], newton.data[n]) for n in newton.data.dtype.names)
