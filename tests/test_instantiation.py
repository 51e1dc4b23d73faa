"""A default run whose master auto chooses is the monolithic one instantiates each FMU once, for Model Exchange: the
choice is made on the instances the run then takes (with the error estimate, its companion takes them again, reset);
every instance made is freed by the end of the run; a caller's pool lends the choice its instances and gets them
back. The run's results and counted calls are those of a run on instances made for it alone."""
import re

import numpy as np
import pytest

from mechfmu.master.fmu_slave import FmuSlave
from mechfmu.master.instance_pool import InstancePool
from mechfmu.master.simulate import simulate
from mechfmu.ssp.scenario import load_scenario

SCENARIO = "scenarios/oscillator"  # every component has a Model Exchange form: auto chooses the monolithic master


@pytest.fixture
def instances(monkeypatch):
    """(made: (name, for Model Exchange) per FmuSlave made, freed: name per fmi2FreeInstance)."""
    made: list[tuple[str, bool]] = []
    freed: list[str] = []
    make, release = FmuSlave.__init__, FmuSlave.release

    def counted_make(self, name, fmu, model_exchange=False):
        made.append((name, model_exchange))
        make(self, name, fmu, model_exchange)

    def counted_release(self):
        freed.append(self.name)
        release(self)

    monkeypatch.setattr(FmuSlave, "__init__", counted_make)
    monkeypatch.setattr(FmuSlave, "release", counted_release)
    return made, freed


@pytest.mark.parametrize("estimate", [False, True])
def test_each_fmu_is_instantiated_once_and_freed(fmus, instances, estimate, monkeypatch):
    monkeypatch.setenv("MECHFMU_COMPANION_BESIDE", "0")  # a companion beside the run makes instances of its own
    made, freed = instances
    names = sorted(load_scenario(SCENARIO).components)
    result = simulate(SCENARIO, algorithm="auto", estimate_error=estimate)
    assert result.ok and result.algorithm == "monolithic", result.message
    assert sorted(name for name, _ in made) == names and all(me for _, me in made), made
    assert sorted(freed) == names


def test_the_run_on_the_choice_instances_is_the_run_on_its_own(fmus):
    """The same rows and calls as the run with its master named (no choice, so instances made for the run)."""
    chosen = simulate(SCENARIO, algorithm="auto", estimate_error=False)
    assert chosen.algorithm == "monolithic", chosen.choice
    tolerances = dict(re.findall(r"(ode_[ra]tol)=(\S+?)[ :]", chosen.choice))
    assert set(tolerances) == {"ode_rtol", "ode_atol"}, chosen.choice
    named = simulate(SCENARIO, algorithm="monolithic", estimate_error=False, **tolerances)
    assert chosen.data.tobytes() == named.data.tobytes()
    assert chosen.counters["fmu_calls"] == named.counters["fmu_calls"]
    assert {n: f.calls for n, f in chosen.profile.fmus.items()} == {n: f.calls for n, f in named.profile.fmus.items()}


def test_a_pool_lends_the_choice_its_instances(fmus, instances):
    made, freed = instances
    names = sorted(load_scenario(SCENARIO).components)
    pool = InstancePool()
    try:
        runs = [simulate(SCENARIO, algorithm="auto", estimate_error=False, pool=pool) for _ in range(3)]
        assert all(r.ok for r in runs)
        assert sorted(name for name, _ in made) == names  # the first run's, reused by the two after it
        assert pool.reused == 2 * len(names)
        assert not freed
        assert all(np.array_equal(runs[0].data, r.data) for r in runs[1:])
    finally:
        pool.close()
    assert sorted(freed) == names
