"""The FMU profile (mechfmu/master/fmu_profile.py, fmu_calls.py, exchange_clock.py): per FMU, its FMI calls by kind,
counted exactly (against what the scenario's structure implies, and the same through the compiled exchange and
through Python), timed (>= 0, within the run's wall time), in ``Result.profile``, the summary, the MAT file after
``data_2`` and the JSON beside a CSV file (a failed run's too), and the CSV itself unchanged."""
from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
import scipy.io
from test_result_files import assert_same_bits, read_dymola

from mechfmu.master import exchange, fmu_profile
from mechfmu.master.fmu_profile import FmuProfile, Profile
from mechfmu.master.result_files import CsvWriter, MatWriter
from mechfmu.master.simulate import simulate
from mechfmu.ssp.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent
OSCILLATOR = ROOT / "scenarios" / "oscillator"
#: a spring law that fails at t = 0.25 s (tests/test_result_files.py): the run ends with an error
FAILING = {"spring": {"springForceUserFunction": "k*u + 1/(t - 0.25)"}}
#: the calls of every FMU's making, initialization and end (no instance pool: fmi2FreeInstance, not fmi2Reset)
ONCE = ("fmi2Instantiate", "fmi2SetupExperiment", "fmi2EnterInitializationMode", "fmi2ExitInitializationMode",
        "fmi2Terminate", "fmi2FreeInstance")


@pytest.fixture
def untimed():
    """Timing off (``MECHFMU_PROFILE=off``) from when the test calls it."""
    before = fmu_profile.TIMING[0]
    yield lambda: fmu_profile.TIMING.__setitem__(0, False)
    fmu_profile.TIMING[0] = before


def jacobi(stop: float, **options) -> object:
    return simulate(OSCILLATOR, "jacobi", stop=stop, estimate_error=False, **options)


def assert_consistent(result) -> None:
    """Counts add up to the run's counter, times are >= 0 and within its wall time."""
    profile = result.profile
    assert profile.total_calls == result.counters["fmu_calls"] > 0
    for fmu in profile.fmus.values():
        assert set(fmu.calls) == set(fmu.seconds) and all(c > 0 for c in fmu.calls.values()), fmu
        assert all(s >= 0 for s in fmu.seconds.values()) and fmu.setup >= fmu.load >= 0, fmu
        assert 0 < fmu.setup_calls <= fmu.total_calls
    assert 0 <= profile.total_seconds <= result.wall_time
    assert profile.setup_seconds <= result.wall_time


def test_jacobi_counts_each_fmus_calls_as_the_scenario_implies(fmus):
    """Each step: every FMU steps once (fmi2DoStep), every FMU whose outputs feed a connection is read once for the
    transfer and once for the recorded row (fmi2GetReal), every FMU with a connected input written once
    (fmi2SetReal); an FMU's making, initialization and end once each. Counted from runs of 40 and 140 steps."""
    short, long = jacobi(0.004), jacobi(0.014)
    assert short.ok and long.ok
    scenario = load_scenario(OSCILLATOR)
    sources = {c.source for c in scenario.connections}
    targets = {c.target for c in scenario.connections}
    assert set(long.profile.fmus) == set(scenario.components) == {"ground", "spring", "mass"}
    for name in scenario.components:
        few, many = short.profile.fmus[name], long.profile.fmus[name]
        assert few.fmi_version == 2 and many.calls["fmi2DoStep"] == 140 and few.calls["fmi2DoStep"] == 40
        per_step = {kind: (many.calls.get(kind, 0) - few.calls.get(kind, 0)) / 100 for kind in many.calls}
        expected = {"fmi2DoStep": 1, "fmi2GetReal": (name in sources) + 1, "fmi2SetReal": int(name in targets)}
        assert per_step == {**dict.fromkeys(many.calls, 0), **expected}, name
        assert all(many.calls[kind] == 1 for kind in ONCE), (name, many.calls)
    assert_consistent(long)


@pytest.mark.parametrize("scenario, algorithm, stop, kinds", [
    ("oscillator", "jacobi", 0.02, {"fmi2DoStep", "fmi2GetReal", "fmi2SetReal"}),
    ("geared_masses", "newton", 0.1, {"fmi2GetFMUstate", "fmi2SetFMUstate", "fmi2FreeFMUstate"}),  # iterations
    ("two_mass_oscillator", "monolithic", 0.1, {"fmi2SetTime", "fmi2SetContinuousStates", "fmi2GetDerivatives",
                                                "fmi2CompletedIntegratorStep", "fmi2NewDiscreteStates"}),
])
def test_the_compiled_exchange_and_python_count_the_same_calls(fmus, monkeypatch, scenario, algorithm, stop, kinds):
    """The compiled exchange promises the Python path's calls: the same counts, kind by kind, FMU by FMU."""
    compiled = simulate(ROOT / "scenarios" / scenario, algorithm, stop=stop, estimate_error=False)
    assert compiled.profile.compiled_runs > 0, "the compiled exchange ran"
    monkeypatch.setenv(exchange.VARIABLE, "python")
    python = simulate(ROOT / "scenarios" / scenario, algorithm, stop=stop, estimate_error=False)
    assert python.profile.compiled_runs == 0
    counts = [{name: fmu.calls for name, fmu in result.profile.fmus.items()} for result in (compiled, python)]
    assert counts[0] == counts[1]
    assert kinds <= {kind for fmu in compiled.profile.fmus.values() for kind in fmu.calls}
    for result in (compiled, python):
        assert_consistent(result)


def test_the_error_estimates_companion_and_reused_instances_keep_the_counts_exact(fmus):
    """With the error estimate the run takes its instances from the companion's pool (fmi2Reset stands for
    fmi2Instantiate) or hands them on: its profile still adds up to its own counter."""
    result = simulate(OSCILLATOR, "jacobi", stop=0.02)
    assert result.ok and result.counters["estimate_fmu_calls"] > 0
    assert_consistent(result)
    for fmu in result.profile.fmus.values():
        assert fmu.calls.get("fmi2Instantiate", 0) + fmu.calls.get("fmi2Reset", 0) >= 1


def test_an_fmi3_run_names_the_fmi3_functions(fmus):
    result = simulate(OSCILLATOR, "jacobi", stop=0.01, estimate_error=False, fmi_version=3)
    assert result.ok, result.message
    mass = result.profile.fmus["mass"]
    assert mass.fmi_version == 3 and mass.calls["fmi3DoStep"] == 100
    assert {"fmi3InstantiateCoSimulation", "fmi3GetFloat64", "fmi3SetFloat64", "fmi3ExitInitializationMode"} <= set(
        mass.calls)
    assert not any(kind.startswith("fmi2") for fmu in result.profile.fmus.values() for kind in fmu.calls)
    assert_consistent(result)


def test_timing_off_keeps_the_counts(fmus, untimed):
    timed = jacobi(0.01)
    untimed()
    counted = jacobi(0.01)
    assert {n: f.calls for n, f in timed.profile.fmus.items()} == {n: f.calls for n, f in counted.profile.fmus.items()}
    assert counted.profile.total_seconds == 0 and not counted.profile.timed and counted.profile.compiled_runs == 0
    assert "not timed" in counted.summary()


def test_the_summary_lists_the_fmus_by_time_and_at_most_ten():
    profile = Profile({f"fmu{k}": FmuProfile(f"fmu{k}", 2, {"fmi2DoStep": 10, "fmi2GetReal": 20},
                                             {"fmi2DoStep": k * 1e-3, "fmi2GetReal": 1e-4}, 2e-3, 5)
                       for k in range(12)})
    lines = profile.describe().splitlines()
    assert lines[0].startswith("time in the FMUs: ") and "360 calls" in lines[0]
    assert [line.split()[0] for line in lines[1:11]] == [f"fmu{k}" for k in range(11, 1, -1)]
    assert "fmi2DoStep 11 ms (10), fmi2GetReal 0.1 ms (20)" in lines[1]
    assert lines[11] == "  and 2 more FMUs: 1.2 ms (60 calls), setup 4 ms"
    summary = jacobi(0.01).summary().splitlines()
    first = next(k for k, line in enumerate(summary) if line.startswith("time in the FMUs: "))
    assert len(summary) == first + 4 and summary[first + 1].startswith("  ")  # the totals, one line per FMU


def test_a_csv_result_gets_the_profile_beside_it_and_stays_as_it_was(fmus, tmp_path, untimed):
    result = simulate(OSCILLATOR, "jacobi", stop=0.02, estimate_error=False, observers=[CsvWriter(tmp_path / "x.csv")])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.csv", "x.profile.json"]
    document = json.loads((tmp_path / "x.profile.json").read_text())
    assert document["status"] == "ok" and document["result"] == "x.csv" and document["end_time"] == 0.02
    assert document["calls"] == result.counters["fmu_calls"] == sum(f["calls"] for f in document["fmus"].values())
    assert document["fmus"]["mass"]["kinds"]["fmi2DoStep"]["calls"] == 200
    untimed()
    simulate(OSCILLATOR, "jacobi", stop=0.02, estimate_error=False, observers=[CsvWriter(tmp_path / "y.csv")])
    assert (tmp_path / "x.csv").read_bytes() == (tmp_path / "y.csv").read_bytes()


def test_a_failed_run_leaves_its_profile_up_to_the_failure_beside_the_partial_csv(fmus, tmp_path):
    result = simulate(OSCILLATOR, "jacobi", stop=0.5, estimate_error=False, parameters=FAILING,
                      observers=[CsvWriter(tmp_path / "x.csv")])
    assert result.status == "error"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.partial.csv", "x.partial.profile.json"]
    document = json.loads((tmp_path / "x.partial.profile.json").read_text())
    assert document["status"] == "error" and document["calls"] == result.counters["fmu_calls"]
    steps = round(result.end_time / 1e-4)
    assert document["fmus"]["mass"]["kinds"]["fmi2DoStep"]["calls"] in (steps, steps + 1)  # the failing step's too


def test_a_mat_result_carries_the_profile_after_data_2(fmus, tmp_path):
    result = simulate(OSCILLATOR, "jacobi", stop=0.02, estimate_error=False,
                      observers=[MatWriter(tmp_path / "x.mat"), CsvWriter(tmp_path / "x.csv")])
    data = (tmp_path / "x.mat").read_bytes()
    at, names = 0, []
    while at < len(data):  # the matrices in order, as a reader that walks the file (OpenModelica's) sees them
        kind, rows, columns, _, length = struct.unpack_from("<5i", data, at)
        names.append(data[at + 20:at + 19 + length].decode())
        at += 20 + length + rows * columns * {0: 8, 20: 4, 51: 1}[kind]
    assert names == ["Aclass", "name", "description", "dataInfo", "data_1", "data_2", "profile_name", "profile_data"]
    trajectory = read_dymola(tmp_path / "x.mat")
    assert_same_bits(trajectory, tmp_path / "x.csv")  # the trajectory as before
    mat = scipy.io.loadmat(tmp_path / "x.mat", chars_as_strings=False)
    entries = ["".join(column).rstrip("\0") for column in mat["profile_name"].T]
    values = dict(zip(entries, mat["profile_data"].T.tolist()))
    assert mat["profile_data"].shape == (2, len(entries))
    assert values["mass.fmi2DoStep"][0] == 200 and values["mass.total"][0] == result.profile.fmus["mass"].total_calls
    assert sum(values[f"{name}.total"][0] for name in result.profile.fmus) == result.counters["fmu_calls"]
    assert all(seconds >= 0 for _, seconds in values.values())
    dymat = pytest.importorskip("DyMat")  # a reader by the format's names: the profile's matrices are not its
    assert set(dymat.DyMatFile(str(tmp_path / "x.mat")).names()) == set(trajectory) - {"time"}
