"""what a study's worker and its user get besides the runs: FMU instances reused across runs
(fmi2Reset), integral and time-window metrics, tied settings and ``mechfmu plot-study``. Expectations
are independent: a run on reused instances equals one on fresh instances bit for bit; an integral of
a velocity equals the displacement; a picture is a PNG of the size asked for."""
import json
import subprocess
import sys

import numpy as np
import pytest

from mechfmu.master.simulate import InstancePool, simulate
from mechfmu.studies.runner import instance_pool, run_point, run_study
from mechfmu.studies.study import Metric, Study

LIMIT_STOPS = "scenarios/limit_stops"


@pytest.mark.slow
def test_reset_instances_give_the_runs_of_fresh_ones():
    """Three FMUs (Fixed, Mass, CoordinateSpringDamperExt, the last with hidden stick/stop state): a run
    on instances reset after a run with other parameters equals a run on fresh instances, values and
    counters; a run that failed gives its instances back to no one. (Without the error estimate, whose companion
    runs would take instances from the pool too.)"""
    pool = InstancePool()
    try:
        first = simulate(LIMIT_STOPS, stop=0.3, estimate_error=False, pool=pool, parameters={"mass": {"m": 0.5}})
        assert first.ok and pool.reused == 0
        reused = simulate(LIMIT_STOPS, stop=0.3, estimate_error=False, pool=pool, parameters={"mass": {"m": 2.0}})
        assert pool.reused == 3
        fresh = simulate(LIMIT_STOPS, stop=0.3, estimate_error=False, parameters={"mass": {"m": 2.0}})
        assert reused.ok and fresh.ok
        assert reused.data.dtype == fresh.data.dtype and np.array_equal(reused.data, fresh.data)
        assert reused.counters == fresh.counters
        assert not np.array_equal(first.data["mass.s"], reused.data["mass.s"])  # the reset took the new mass
        failed = simulate(LIMIT_STOPS, stop=0.3, estimate_error=False, pool=pool, divergence_factor=1.01)
        assert failed.status == "error" and "diverged" in failed.message and pool.reused == 6
        again = simulate(LIMIT_STOPS, stop=0.3, estimate_error=False, pool=pool, parameters={"mass": {"m": 2.0}})
        assert pool.reused == 6 and np.array_equal(again.data, fresh.data)  # fresh instances after the failure
    finally:
        pool.close()


def test_a_study_on_fmus_equals_the_runs_alone(tmp_path):
    """The FMU path with reused instances: each row's metric and counters equal simulate of the point alone."""
    s = Study(LIMIT_STOPS, {"v": "final(mass.v)"}, grid={"mass.m": [0.5, 1.0, 2.0]}, fixed={"stop": 0.2})
    before = instance_pool().reused
    rows = [run_point(s, i, p) for i, p in enumerate(s.points())]
    assert instance_pool().reused - before >= 6  # the 2nd and 3rd runs on the 1st run's three instances
    instance_pool().close()
    for row, point in zip(rows, s.points()):
        alone = simulate(LIMIT_STOPS, stop=0.2, parameters={"mass": {"m": point["mass.m"]}},
                         output_variables=["mass.v"])  # a study records only what its metrics read
        assert row["status"] == "ok" and row["v"] == alone.final["mass.v"]
        assert row["counters"] == json.dumps(alone.counters, sort_keys=True)


def test_integral_and_window_metrics():
    """oscillator (a spring and a mass, h = 1e-4 s): the trapezoidal integral of the velocity is the
    displacement to within the rule's error, (h^2/12)·max|a|·T ≈ 1e-8 m here; windows take exactly the
    points inside them."""
    r = simulate("scenarios/oscillator", local=True)
    d, t = r.data, r.data["time"]
    displacement = d["mass.s"][-1] - d["mass.s"][0]
    assert Metric("m", "integral(mass.v)")(d) == pytest.approx(displacement, abs=1e-7)
    inside = (t >= 0.25) & (t <= 0.5)
    assert Metric("m", "max(mass.s, 0.25, 0.5)")(d) == d["mass.s"][inside].max()
    assert Metric("m", "min(mass.s, 0.5)")(d) == d["mass.s"][t >= 0.5].min()
    half = Metric("m", "integral(mass.v, 0.25, 0.5)")(d)
    assert half == pytest.approx(d["mass.s"][inside][-1] - d["mass.s"][inside][0], abs=1e-7)
    with pytest.raises(ValueError, match="needs start < end"):
        Metric("m", "max(mass.s, 0.5, 0.25)")
    with pytest.raises(ValueError, match=r"no recorded point of mass.s in \[2.0, inf\]"):
        Metric("m", "max(mass.s, 2)")(d)


def test_tied_settings_follow_their_axis():
    """A tied setting (here the ground's position takes the mass's value: any parameter serves) is set in
    every run: each row equals simulate with both set; ties to what is not varied are refused."""
    s = Study(LIMIT_STOPS, {"v": "final(mass.v)"}, grid={"mass.m": [0.5, 2.0]}, fixed={"stop": 0.2},
              tied={"ground.s0": "mass.m"}, local=True)
    for i, point in enumerate(s.points()):
        row = run_point(s, i, point)
        alone = simulate(LIMIT_STOPS, stop=0.2, local=True,
                         parameters={"mass": {"m": point["mass.m"]}, "ground": {"s0": point["mass.m"]}})
        assert row["status"] == "ok" and row["v"] == alone.final["mass.v"]
    with pytest.raises(ValueError, match="'stop' is not a varied setting"):
        Study(LIMIT_STOPS, {"v": "final(mass.v)"}, grid={"mass.m": [1.0]}, tied={"ground.s0": "stop"})
    with pytest.raises(ValueError, match="already varied or fixed"):
        Study(LIMIT_STOPS, {"v": "final(mass.v)"}, grid={"mass.m": [1.0]}, fixed={"ground.s0": 0.0},
              tied={"ground.s0": "mass.m"})


def plot(*args):
    return subprocess.run([sys.executable, "-m", "mechfmu.cli", "plot-study", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_plot_study_draws_a_metric_over_one_or_two_settings(tmp_path):
    import matplotlib.image
    s = Study(LIMIT_STOPS, {"v": "final(mass.v)", "peak": "max(mass.s)"},
              grid={"mass.m": "0.5:2:3", "stops.limitStopsStiffness": [1e3, 1e4], "algorithm": "jacobi"},
              fixed={"stop": 0.2}, local=True)
    run_study(s, tmp_path / "t.csv", workers=0)
    for args, png in [(("v", "mass.m"), tmp_path / "t.v.png"),
                      (("peak", "mass.m", "stops.limitStopsStiffness", "--out", tmp_path / "two.png",
                        "--log", "stops.limitStopsStiffness"), tmp_path / "two.png")]:
        done = plot(tmp_path / "t.csv", *args)
        assert done.returncode == 0, done.stderr
        assert f"plot written to {png}" in done.stdout
        image = matplotlib.image.imread(png)
        assert image.shape[:2] == (550, 770)  # 7 x 5 in at 110 dpi
        assert image[..., :3].std() > 0.05  # something is drawn
    done = plot(tmp_path / "t.csv", "peak", "mass.m", "stops.limitStopsStiffness", "--out", tmp_path / "t.svg")
    svg = (tmp_path / "t.svg").read_text()  # the README's pictures: text, all vectors, no date
    assert done.returncode == 0 and svg.startswith("<?xml") and "data:image" not in svg and "<dc:date>" not in svg
    wrong = plot(tmp_path / "t.csv", "speed", "mass.m")
    assert wrong.returncode == 2 and "no metric 'speed'; the table has v, peak" in wrong.stderr
    wrong = plot(tmp_path / "t.csv", "v", "mass.m", "algorithm")
    assert wrong.returncode == 2 and "algorithm is not numeric" in wrong.stderr


def test_model_exchange_instances_are_reused_by_the_next_monolithic_run_and_never_by_co_simulation():
    """A pool keeps instances per interface: a monolithic run (Model Exchange FMUs) on instances reset after an
    earlier monolithic run equals a run on fresh ones, values and counters; a co-simulation run after it gets
    co-simulation instances (an instance made for Model Exchange cannot take a co-simulation step)."""
    pool = InstancePool()
    try:
        first = simulate(LIMIT_STOPS, "monolithic", stop=0.3, estimate_error=False, pool=pool,
                         parameters={"mass": {"m": 0.5}})
        assert first.ok and pool.reused == 0
        reused = simulate(LIMIT_STOPS, "monolithic", stop=0.3, estimate_error=False, pool=pool,
                          parameters={"mass": {"m": 2.0}})
        assert pool.reused == 3
        fresh = simulate(LIMIT_STOPS, "monolithic", stop=0.3, estimate_error=False, parameters={"mass": {"m": 2.0}})
        assert reused.ok and fresh.ok
        assert reused.data.dtype == fresh.data.dtype and np.array_equal(reused.data, fresh.data)
        assert reused.counters == fresh.counters
        co_simulation = simulate(LIMIT_STOPS, "jacobi", stop=0.3, estimate_error=False, pool=pool)
        assert co_simulation.ok and pool.reused == 3, co_simulation.message
    finally:
        pool.close()
