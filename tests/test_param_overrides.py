"""``--param COMPONENT.PARAMETER=VALUE`` and ``simulate(parameters=...)`` set a
parameter as an edited SSD would (bit-identical results), typed and range-checked like SSD values,
unknown names refused with the valid ones listed."""
import numpy as np
import pytest
from test_bad_inputs import cli, edited

from mechfmu import System, Table
from mechfmu.master.simulate import simulate
from mechfmu.ssp.scenario import ScenarioError


def read_csv(path):
    return np.genfromtxt(path, delimiter=",", names=True, deletechars="")


@pytest.mark.parametrize("local", [True, False], ids=["in-process", "fmu"])
def test_an_override_equals_the_edited_ssd(fmus, tmp_path, local):
    """The oscillator's mass 5 kg -> 2.5 kg and its spring's user function replaced: the run equals,
    bit for bit, the run of a copy of the SSD edited by hand (what users did before)."""
    folder = edited(tmp_path, lambda text: text.replace('name="m"><ssv:Real value="5.0"/>',
                                                        'name="m"><ssv:Real value="2.5"/>')
                    .replace('value="0.1*k*u + k*u**3 + v*d"', 'value="k*u + v*d"'))
    by_hand = simulate(folder, stop=0.2, local=local)
    overrides = {"mass": {"m": 2.5}, "spring": {"springForceUserFunction": "k*u + v*d"}}
    overridden = simulate("scenarios/oscillator", stop=0.2, local=local, parameters=overrides)
    plain = simulate("scenarios/oscillator", stop=0.2, local=local)
    assert by_hand.ok and overridden.ok
    assert all((by_hand.data[n] == overridden.data[n]).all() for n in by_hand.data.dtype.names)
    assert not (plain.data["mass.s"] == overridden.data["mass.s"]).all()


def test_the_command_line_sets_parameters(fmus, tmp_path):
    out = tmp_path / "r.csv"
    proc = cli("run", "scenarios/oscillator", "--stop", "0.2", "--out", out, "--param", "mass.m=2.5",
               "--param", "spring.springForceUserFunction=k*u + v*d")
    assert proc.returncode == 0, proc.stderr
    expected = simulate("scenarios/oscillator", stop=0.2,
                        parameters={"mass": {"m": 2.5}, "spring": {"springForceUserFunction": "k*u + v*d"}})
    written = read_csv(out)
    assert np.array_equal(written["mass.s"], expected.data["mass.s"])  # the CSV keeps 17 digits


@pytest.mark.slow
def test_bad_overrides_are_refused_with_every_problem(fmus):
    proc = cli("run", "scenarios/limit_stops", "--stop", "0.1", "--param", "mass.m=-2", "--param", "stops.foo=1",
               "--param", "stops.useLimitStops=maybe", "--param", "nobody.x=1", "--param", "mass.v_start=abc",
               "--param", "stops.itemNumber=2.5", "--param", "mass.m")
    assert proc.returncode == 2 and "mass.m': use COMPONENT.PARAMETER=VALUE" in proc.stderr
    proc = cli("run", "scenarios/limit_stops", "--stop", "0.1", "--param", "mass.m=-2", "--param", "stops.foo=1",
               "--param", "stops.useLimitStops=maybe", "--param", "nobody.x=1", "--param", "mass.v_start=abc",
               "--param", "stops.itemNumber=2.5", "--param", "stops.s_rel=1")
    assert proc.returncode == 2 and "7 problem(s)" in proc.stderr, proc.stderr
    for expected in ("mass: parameter m = -2 is out of range", "stops.foo: unknown parameter; the parameters of "
                     "stops are activeConnector, damping,", "stops.useLimitStops = 'maybe': 'maybe' is not a Boolean",
                     "unknown component 'nobody'; the scenario's components are ground, mass, stops",
                     "mass.v_start = 'abc': not a Real", "stops.itemNumber = '2.5': not an Integer",
                     "stops.s_rel: output (not settable)"):
        assert expected in proc.stderr, (expected, proc.stderr)
    assert "limit_stops (" not in proc.stdout  # nothing ran


@pytest.mark.parametrize("value, message", [(float("nan"), "must be finite"), ("inf", "mass.m = 'inf' is a string, not a Real"),
                                            (True, "mass.m = True is a Boolean, not a Real"), (1e400, "must be finite")])
def test_simulate_checks_values_alike(value, message):
    with pytest.raises(ScenarioError, match=message):
        simulate("scenarios/limit_stops", local=True, stop=0.01, parameters={"mass": {"m": value}})


@pytest.mark.parametrize("local", [True, False], ids=["in-process", "fmu"])
def test_a_malformed_table_or_user_function_override_is_refused_before_the_run(fmus, tmp_path, local):
    """A table's rows and a user function's syntax are checked where the override is given, with the scenario's
    other values, as the component would at its initialization: a ScenarioError naming the component, parameter
    and value, before any instance is made."""
    s = System("road")
    s.add("road", Table(table="0, 0; 1, 2"))
    s.experiment(stop_time=0.5, step_size=0.1)
    ssd = s.export_ssp(tmp_path / "road.ssp").path
    assert simulate(ssd, local=local, estimate_error=False).ok
    for parameters, said in (({"road": {"table": "0, 0; 1"}}, r"Table 'road': table = '0, 0; 1' is not a valid "
                                                               r"table: .*row 2 has 1 values"),
                             ({"road": {"table": "1, 0; 0, 1"}}, "Table 'road': table = '1, 0; 0, 1' .*not monotonic"),
                             ({"road": {"timeScale": 2.0, "table": "0, 0; 0, 1; 0, 2"}}, "road.*table")):
        with pytest.raises(ScenarioError, match=said):
            simulate(ssd, local=local, estimate_error=False, parameters=parameters)


def test_the_command_line_refuses_a_user_function_it_cannot_read_before_the_run(fmus):
    proc = cli("run", "scenarios/oscillator", "--stop", "0.1", "--param", "spring.springForceUserFunction=k*u +")
    assert proc.returncode == 2, proc.stderr
    assert "CoordinateSpringDamper 'spring': springForceUserFunction = 'k*u +'" in proc.stderr, proc.stderr
    assert "oscillator (" not in proc.stdout  # nothing ran
