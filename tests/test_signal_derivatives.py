"""A signal's derivative is one physics under every master: a Position, Speed, Accelerate, Force or Torque whose
value input is wired from a signal source gets the source's derivative (``y_rate`` -> ``X_rate``) in every master,
as MSL's exact sources differentiate their reference; where the source gives none, the scenario warns before the
run, naming the input, the wire and the value it keeps; a derivative marked free or given a value is left alone."""
import numpy as np
import pytest
from mechfmu.components import COMPONENTS

from mechfmu import CoordinateSpringDamper, Mass, Position, Speed, System, Table
from mechfmu.ssp.scenario import load_scenario
from mechfmu.ssp.unconnected import derivative_inputs

#: the road: flat, then up 0.05 m in 0.1 s (0.5 m/s), flat, down in 0.1 s (-0.5 m/s)
ROAD = "0, 0; 0.1, 0; 0.2, 0.05; 0.4, 0.05; 0.5, 0"
MASTERS = [("auto", {}), ("monolithic", {}), ("jacobi", {}), ("gauss-seidel", {}), ("linear-implicit", {}),
           ("newton", {"coupling": "implicit"})]


def quarter_car(rate_wired: bool, algorithm: str, options: dict, free: bool = False) -> System:
    """Table -> Position (the road) -> tire (spring-damper) -> wheel -> suspension -> body."""
    s = System("quarter_car")
    table = s.add("road_table", Table(table=ROAD, extrapolation=1))  # held after the last row
    road = s.add("road", Position())
    tire = s.add("tire", CoordinateSpringDamper(stiffness=2e5, damping=50.0))
    wheel = s.add("wheel", Mass(m=40.0))
    suspension = s.add("suspension", CoordinateSpringDamper(stiffness=2e4, damping=1500.0))
    body = s.add("body", Mass(m=300.0))
    s.connect(table.y, road.s_ref)
    if rate_wired:
        s.connect(table.y_rate, road.s_ref_rate)
    if free:
        s.free(road.s_ref_rate)
    s.connect(road.flange, tire.flange_a)
    s.connect(tire.flange_b, wheel.flange_a)
    s.connect(wheel.flange_b, suspension.flange_a)
    s.connect(suspension.flange_b, body.flange_a)
    s.experiment(stop_time=0.3, step_size=1e-3, algorithm=algorithm, **options)
    return s


def road_speed(t: np.ndarray) -> np.ndarray:
    """The road's slope, from the right (the table's rows, written out here)."""
    return np.where((t >= 0.1) & (t < 0.2), 0.5, 0.0)


@pytest.mark.slow
@pytest.mark.parametrize("algorithm, options", MASTERS)
def test_an_unwired_rate_of_a_position_is_the_signals_derivative_under_every_master(algorithm, options):
    """Unwired, the road's s_ref_rate is the table's y_rate in every master: the road moves at the table's slope,
    and the run is the one with the rate wired, bit for bit (it was 0 under auto, monolithic, jacobi, gauss-seidel
    and newton)."""
    unwired = quarter_car(False, algorithm, options).run(local=True, estimate_error=False)
    wired = quarter_car(True, algorithm, options).run(local=True, estimate_error=False)
    assert unwired.ok and wired.ok, (unwired.message, wired.message)
    t = unwired.data["time"]
    inside = ~np.isin(np.round(t, 9), [0.1, 0.2])  # at a row the slope is the right one in one, not both
    assert np.array_equal(unwired.data["road.v"][inside], road_speed(t)[inside])
    assert np.max(np.abs(unwired.data["road.v"])) == 0.5
    for name in ("wheel.s", "body.s", "road.v", "tire.f"):
        if algorithm == "newton":  # its iteration takes the derived wire last, the scenario's where it is written:
            scale = np.max(np.abs(wired.data[name]))  # round-off apart (a force is a difference of positions)
            assert np.allclose(unwired.data[name], wired.data[name], rtol=0, atol=1e-9 * scale), name
        else:
            assert np.array_equal(unwired.data[name], wired.data[name]), name
    assert not [w for w in unwired.warnings if "s_ref_rate" in w]


@pytest.mark.slow
def test_the_implicit_masters_end_where_the_monolithic_one_does_with_the_rate_unwired():
    """One physics: linear-implicit and newton (second order in the step) end within 5e-6 m of the monolithic
    master at h = 1e-3 s (measured: 1.1e-7 and 2.1e-6 m); with the rate left at 0, auto and monolithic ended about
    1e-4 m away from linear-implicit, which wired it."""
    finals = {name: quarter_car(False, name, options).run(local=True, estimate_error=False).final
              for name, options in MASTERS if name in ("auto", "monolithic", "linear-implicit", "newton")}
    for name, final in finals.items():
        for body in ("wheel.s", "body.s"):
            assert abs(final[body] - finals["monolithic"][body]) < 5e-6, (name, body, final[body])


@pytest.mark.slow
def test_a_rate_marked_free_is_held_by_every_master():
    """Marked free, s_ref_rate keeps its start value 0 under linear-implicit too (it used to wire it anyway)."""
    for algorithm in ("linear-implicit", "monolithic"):
        r = quarter_car(False, algorithm, {}, free=True).run(local=True, estimate_error=False)
        assert r.ok and np.all(r.data["road.v"] == 0.0), algorithm


def test_a_signal_without_a_derivative_is_warned_before_the_run(tmp_path):
    """A Speed driven by a body's velocity (a Mass outputs no v_rate): its v_ref_rate cannot be derived; the
    scenario says so, naming the input, the wire and the value it keeps."""
    s = System("driven")
    mass = s.add("mass", Mass(m=1.0, f_drive=1.0))
    speed = s.add("speed", Speed())
    s.connect(mass.v, speed.v_ref)
    s.experiment(stop_time=0.01, step_size=1e-3)
    s.write(tmp_path / "driven")
    warnings = load_scenario(tmp_path / "driven", local=True).warnings
    found = [w for w in warnings if w.startswith("speed.v_ref_rate is not connected")]
    assert len(found) == 1 and "mass.v -> speed.v_ref" in found[0] and "keeps its start value 0 m/s2" in found[0]
    assert "mass.v_rate" in found[0] and "speed.v_ref_rate" in found[0]


def test_the_derivative_inputs_are_the_signal_inputs_with_a_rate():
    """By name, from the port vocabulary: a signal input beside its _rate (and that one's), not a port's rate or a
    constraint's lambda."""
    assert derivative_inputs(i.name for i in COMPONENTS["Position"].inputs) == {"s_ref": "s_ref_rate",
                                                                     "s_ref_rate": "s_ref_rate_rate"}
    assert derivative_inputs(i.name for i in COMPONENTS["Speed"].inputs) == {"v_ref": "v_ref_rate"}
    assert derivative_inputs(i.name for i in COMPONENTS["Accelerate"].inputs) == {"a_ref": "a_ref_rate"}
    assert derivative_inputs(i.name for i in COMPONENTS["Force"].inputs) == {"f": "f_rate"}
    assert derivative_inputs(i.name for i in COMPONENTS["Mass"].inputs) == {}
    assert derivative_inputs(["lambda", "lambda_rate"]) == {}


def test_an_exported_archive_carries_the_derived_wire_and_omsimulator_moves_the_road(fmus, tmp_path):
    """Another tool derives nothing: the export writes the derivative every mechfmu master wires as a connection
    of the archive, so the archive read back has it wired (and nothing left to derive), and OMSimulator moves the
    road at the table's slope (it ran the road at 0 m/s from an archive without the wire)."""
    from conftest import omsimulator_program

    from mechfmu.crosscheck.omsimulator import run_omsimulator
    system = quarter_car(False, "jacobi", {})
    archive = system.export_ssp(tmp_path / "quarter_car.ssp")
    archive = getattr(archive, "path", archive)
    back = load_scenario(archive)
    assert back.derived == []
    wires = {str(c) for c in back.connections}
    assert "road_table.y_rate -> road.s_ref_rate" in wires
    ours = system.run(estimate_error=False)
    assert ours.ok and np.max(np.abs(ours.data["road.v"])) == 0.5
    run = run_omsimulator(omsimulator_program(), archive, tmp_path / "oms")
    assert run.returncode == 0 and run.signals, run.output[-2000:]
    speed = next(v for k, v in run.signals.items() if k.endswith("road.v"))
    t = next(v for k, v in run.signals.items() if k == "time")
    inside = (t > 0.12) & (t < 0.18)
    assert np.allclose(speed[inside], 0.5, rtol=0, atol=1e-12), speed[inside]
