"""parameter studies (mechfmu/studies/study.py, mechfmu/studies/runner.py, ``mechfmu sweep``). The
expectations are independent runs: a study's row equals ``simulate`` of that point alone, whatever
the workers, their order, a killed worker or an interrupted and resumed study."""
import csv
import os
import signal
import stat
import subprocess
import sys
import time

import numpy as np
import pytest

from mechfmu.master.simulate import simulate
from mechfmu.studies.runner import run_study
from mechfmu.studies.study import Metric, Study, grid_values, load_study

#: limit_stops in-process, 0.5 s (0.2-0.4 s a run): mass and stop stiffness on a grid, two couplings
GRID = {"mass.m": "0.5:2:3", "algorithm": "jacobi,linear-implicit"}
METRICS = {"v_end": "final(mass.v)", "peak_mm": "1000 * max(mass.s)", "contact": "maxabs(stops.f)"}


def study(**changes):
    return Study(**{"scenario": "scenarios/limit_stops", "metrics": dict(METRICS), "grid": dict(GRID),
                    "fixed": {"stop": 0.5}, "local": True, **changes})


def rows(path, drop_wall=True):
    """The table's lines (header first), without the wall-time column: the one that differs by run."""
    with open(path, newline="") as f:
        lines = list(csv.reader(f))
    assert lines[0][-1] == "wall_s"
    return [line[:-1] for line in lines] if drop_wall else lines


def test_points_are_the_grid_product_and_seeded_samples():
    s = study()
    points = s.points()
    assert [(p["mass.m"], p["algorithm"]) for p in points] == [
        (m, a) for m in (0.5, 1.25, 2.0) for a in ("jacobi", "linear-implicit")]
    sampled = Study("scenarios/limit_stops", {"v": "final(mass.v)"}, grid={"algorithm": ["jacobi"]},
                    ranges={"mass.m": (0.5, 2.0), "stops.limitStopsStiffness": (1e3, 1e5)}, samples=8, seed=7)
    again = Study.from_definition(sampled.definition()).points()
    assert sampled.points() == again and len(again) == 8
    values = np.array([[p["mass.m"], p["stops.limitStopsStiffness"]] for p in again])
    assert np.all((values >= [0.5, 1e3]) & (values <= [2.0, 1e5]))
    # space-filling: Sobol puts one of 8 points in each eighth of every axis
    assert sorted(np.floor((values[:, 0] - 0.5) / 1.5 * 8).astype(int)) == list(range(8))
    lhs = Study("scenarios/limit_stops", {"v": "final(mass.v)"}, ranges={"mass.m": (0.5, 2.0)}, samples=5,
                method="lhs", seed=1).points()
    assert sorted(int((p["mass.m"] - 0.5) / 1.5 * 5) for p in lhs) == list(range(5))


def test_metrics_aggregate_recorded_outputs():
    r = simulate("scenarios/limit_stops", local=True, stop=0.5)
    assert Metric("m", "final(mass.v)")(r.data) == r.data["mass.v"][-1]
    assert Metric("m", "1000 * max(mass.s) - min(mass.s)")(r.data) == pytest.approx(
        1000 * r.data["mass.s"].max() - r.data["mass.s"].min(), rel=1e-15)
    assert Metric("m", "maxabs(stops.f) / initial(mass.v)")(r.data) == np.abs(r.data["stops.f"]).max() / 1.0
    for text, message in [("mass.v", "it uses no output"), ("final(mass.v) + open(1)", "call of 'open'"),
                          ("final(mass.v", "no output")]:
        with pytest.raises(ValueError, match=message):
            Metric("m", text)
    with pytest.raises(ValueError, match="no recorded output 'mass.x'"):
        Metric("m", "final(mass.x)")(r.data)


@pytest.mark.parametrize("name", ["index", "status", "wall_s"])
def test_a_metric_named_like_a_column_of_the_table_is_refused(name):
    """A metric named ``index`` overwrote the run index (a resumed study then lost its rows): refused by name."""
    with pytest.raises(ValueError, match=rf"metric '{name}': the table has a column of that name already"):
        Study("scenarios/limit_stops", {name: "final(mass.v)"}, grid={"mass.m": [1.0, 2.0]})


def expected_row(point):
    """The row's metrics from simulate of that point alone."""
    overrides = {"mass": {"m": point["mass.m"]}}
    r = simulate("scenarios/limit_stops", algorithm=point["algorithm"], stop=0.5, local=True, parameters=overrides)
    return [repr(float(r.data["mass.v"][-1])), repr(float(1000 * r.data["mass.s"].max())),
            repr(float(np.abs(r.data["stops.f"]).max()))]


@pytest.mark.slow
def test_a_study_on_two_workers_equals_the_runs_alone(tmp_path):
    s = study()
    counts = run_study(s, tmp_path / "dask.csv", workers=2)
    assert counts == {"runs": 6, "done_before": 0, "computed": 6, "failed": 0}
    run_study(s, tmp_path / "here.csv", workers=0)
    table = rows(tmp_path / "dask.csv")
    assert table == rows(tmp_path / "here.csv")
    assert table[0] == ["index", "mass.m", "algorithm", "v_end", "peak_mm", "contact", "status", "message", "counters",
                        "error_estimate", "error_ratio", "error_variable"]
    for line, point in zip(table[1:], s.points()):
        assert line[3:6] == expected_row(point) and line[6] == "ok"
        assert float(line[9]) >= 0 and float(line[10]) >= 0 and line[11].startswith("mass.")  # each run's estimate


@pytest.mark.slow
def test_a_study_runs_the_monolithic_master_as_the_runs_alone(tmp_path):
    """The monolithic master is a study setting like any algorithm: each row equals simulate of its point."""
    s = study(grid={"mass.m": "0.5:2:2", "algorithm": "monolithic"})
    assert run_study(s, tmp_path / "m.csv", workers=0)["computed"] == 2
    table = rows(tmp_path / "m.csv")
    for line, point in zip(table[1:], s.points()):
        assert line[3:6] == expected_row(point) and line[6] == "ok"
        assert "derivative_evaluations" in line[8]


def test_a_failing_run_is_recorded_and_the_study_goes_on(tmp_path):
    """A gear factor of 0 passes the declared range (checked before the study) and is refused by the
    component's cross-parameter rules at initialization: a run that fails while the others go on."""
    s = Study("scenarios/limit_stops", {"v": "final(mass.v)"}, grid={"stops.factor0": [1.0, 0.0, 2.0]},
              fixed={"stop": 0.05}, local=True)
    counts = run_study(s, tmp_path / "t.csv", workers=0)
    table = rows(tmp_path / "t.csv")
    assert counts["failed"] == 1 and [line[3] for line in table[1:]] == ["ok", "error", "ok"]
    assert "factor0 = 0 may not be zero" in table[2][4] and table[2][2] == "nan"


def test_a_value_out_of_the_declared_range_is_refused_before_any_run(tmp_path):
    s = Study("scenarios/limit_stops", {"v": "final(mass.v)"}, grid={"mass.m": [1.0, -1.0, 2.0]},
              fixed={"stop": 0.05}, local=True)
    with pytest.raises(ValueError, match=r"1 problem\(s\), nothing was run:\n  - mass: parameter m = -1 is out"):
        run_study(s, tmp_path / "t.csv", workers=0)
    assert not (tmp_path / "t.csv").exists()


@pytest.mark.slow
def test_a_killed_worker_loses_no_run(tmp_path):
    """One of two workers is killed (SIGKILL) once the first run is in: Dask runs its task again on the
    restarted worker, and every run has its row, equal to the runs done here."""
    from distributed import get_client
    killed = []

    def kill_one(row):
        if not killed:
            pids = get_client().run(os.getpid)
            killed.append(next(iter(pids.values())))
            os.kill(killed[0], signal.SIGKILL)

    s = study(grid={"mass.m": "0.5:2:5", "algorithm": "jacobi,linear-implicit"})
    counts = run_study(s, tmp_path / "dask.csv", workers=2, on_row=kill_one)
    assert killed and counts == {"runs": 10, "done_before": 0, "computed": 10, "failed": 0}
    run_study(s, tmp_path / "here.csv", workers=0)
    assert rows(tmp_path / "dask.csv") == rows(tmp_path / "here.csv")


def sweep(out, *extra):
    return [sys.executable, "-m", "mechfmu.cli", "sweep", "scenarios/limit_stops", "--local", "--stop", "0.5",
            "--grid", "mass.m=0.5:2:6", "--grid", "algorithm=jacobi,linear-implicit", "--metric", "v=final(mass.v)",
            "--out", str(out), "--workers", "1", *extra]


@pytest.mark.slow
def test_an_interrupted_study_resumes_without_computing_a_run_twice(tmp_path):
    """Ctrl-C after 3 rows; the same command again computes only the runs not in the table; the final
    table equals an uninterrupted study's (wall times aside)."""
    out = tmp_path / "t.csv"
    proc = subprocess.Popen(sweep(out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and (not out.exists() or len(out.read_text().splitlines()) < 4):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    done = len(rows(out)) - 1
    assert 3 <= done < 12
    resumed = subprocess.run(sweep(out), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"12 runs, {done} already in {out}, {12 - done} computed, 0 failed" in resumed.stdout
    whole = subprocess.run(sweep(tmp_path / "whole.csv"), capture_output=True, text=True, timeout=300)
    assert whole.returncode == 0, whole.stderr
    assert rows(out) == rows(tmp_path / "whole.csv")


@pytest.mark.slow
def test_a_table_of_another_study_is_not_resumed(tmp_path):
    run_study(study(), tmp_path / "t.csv", workers=0)
    with pytest.raises(ValueError, match="holds another study's runs"):
        run_study(study(fixed={"stop": 0.4}), tmp_path / "t.csv", workers=0)


def test_parquet_tables_and_study_files(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    (tmp_path / "s.toml").write_text(
        'scenario = "%s"\nlocal = true\n[metrics]\nv = "final(mass.v)"\n[grid]\n"mass.m" = [1.0, 2.0]\n'
        '[fixed]\nstop = 0.2\n' % os.path.abspath("scenarios/limit_stops"))
    s = load_study(tmp_path / "s.toml", grid={"algorithm": "jacobi,linear-implicit"})
    run_study(s, tmp_path / "t.parquet", workers=0)
    table = pq.read_table(tmp_path / "t.parquet").to_pylist()
    assert [(r["index"], r["mass.m"], r["algorithm"], r["status"]) for r in table] == [
        (0, 1.0, "jacobi", "ok"), (1, 1.0, "linear-implicit", "ok"), (2, 2.0, "jacobi", "ok"),
        (3, 2.0, "linear-implicit", "ok")]
    alone = simulate("scenarios/limit_stops", algorithm="linear-implicit", stop=0.2, local=True,
                     parameters={"mass": {"m": 2.0}})
    assert table[3]["v"] == alone.final["mass.v"]
    assert run_study(s, tmp_path / "t.parquet", workers=0)["computed"] == 0  # finished: nothing to do


def test_an_axis_text_with_a_colon_must_be_start_stop_n():
    """``1:2`` (N forgotten) used to become one run with the text "1:2" as its value."""
    for spec in ("1:2", "1:2:3:4", "a:2:3", "1:2:x"):
        with pytest.raises(ValueError, match=rf"grid mass.m = '{spec}': use START:STOP:N \(N evenly spaced"):
            grid_values("mass.m", spec)
    assert grid_values("mass.m", "0.5:2:4") == [0.5, 1.0, 1.5, 2.0]
    proc = subprocess.run([sys.executable, "-m", "mechfmu.cli", "sweep", "scenarios/oscillator", "--grid", "mass.m=1:2",
                           "--metric", "v=final(mass.v)", "--out", "never.csv", "--workers", "0", "--local"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "use START:STOP:N" in proc.stderr and not os.path.exists("never.csv")


def test_a_study_beyond_the_run_limit_is_refused_before_any_point_is_made(tmp_path):
    """10,000 x 10,000 = 1e8 runs: counted from the axes (making the points alone would take minutes and
    gigabytes), refused with the way to allow it; a study within the limit runs."""
    huge = Study("scenarios/oscillator", {"v": "final(mass.v)"}, grid={"mass.m": "1:2:10000", "mass.L": "0:1:10000"},
                 local=True)
    assert huge.run_count == 100_000_000
    with pytest.raises(ValueError, match=r"100,000,000 runs is more than the 100,000 allowed; .* --max-runs N"):
        run_study(huge, tmp_path / "huge.csv", workers=0)
    assert not (tmp_path / "huge.csv").exists()
    small = Study("scenarios/oscillator", {"v": "final(mass.v)"}, grid={"mass.m": "1:2:3"}, fixed={"stop": 0.01},
                  local=True)
    with pytest.raises(ValueError, match="3 runs is more than the 2 allowed"):
        run_study(small, tmp_path / "small.csv", workers=0, max_runs=2)
    assert run_study(small, tmp_path / "small.csv", workers=0, max_runs=3)["computed"] == 3


def test_a_study_table_must_be_a_regular_file(tmp_path):
    """A device target would be replaced by the finished table, and a table is read back to resume: refused
    before anything runs (a FIFO stands in for /dev/null: the test never touches the machine's own nodes)."""
    fifo = tmp_path / "table.csv"
    os.mkfifo(fifo)
    s = Study("scenarios/oscillator", {"v": "final(mass.v)"}, grid={"mass.m": [1.0]}, fixed={"stop": 0.01}, local=True)
    with pytest.raises(ValueError, match="a study's table is read back to resume the study; give a regular file"):
        run_study(s, fifo, workers=0)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and not (tmp_path / "table.csv.study.json").exists()


def test_a_step_that_does_not_divide_a_runs_stop_is_refused_before_the_study(tmp_path):
    """Each such run would fail alike; the study says so once, before anything runs."""
    s = Study("scenarios/oscillator", {"v": "final(mass.v)"}, grid={"step": [1e-3, 3e-3]}, fixed={"stop": 0.01},
              local=True)
    with pytest.raises(ValueError, match=r"1 problem\(s\), nothing was run:\n  - step 0.003 s does not divide the run"):
        run_study(s, tmp_path / "t.csv", workers=0)
    assert not (tmp_path / "t.csv").exists()
