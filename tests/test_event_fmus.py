"""Events, the adaptive step, switching errors and the energy audit through the FMUs (the default path of
`mechfmu run`): every trial step restores FMU states (fmi2SetFMUstate) and every event sets
immediateSwitching in the FMU, so the FMU path must give the in-process numbers bit for bit, every
located event, step size and audited energy included, under each algorithm."""
import numpy as np
import pytest
from conftest import slow_but

from mechfmu.master.simulate import simulate

CASES = [
    ("jacobi", "limit_stops", dict(events="on", adaptive="on", step=1e-2, stop=0.6)),
    ("gauss-seidel", "stick_slip", dict(events="on", step=1e-3, stop=1.5)),
    ("linear-implicit", "limit_stops", dict(switching_tolerance=1e-4, step=1e-3, stop=0.6)),
    ("linear-implicit", "elastogap", dict(events="on", adaptive="on", error_estimate="energy",
                                          energy_audit="columns", step=1e-2, stop=1.2)),
    ("fixed-point", "ball_drop", dict(events="on", adaptive="on", tolerance=1e-8, step=1e-2, stop=0.4)),
    ("newton", "stick_slip", dict(events="on", coupling="implicit", step=1e-3, stop=1.5)),
]


@pytest.mark.parametrize("algorithm, scenario, options",
                         slow_but(CASES, *(case for case in CASES if case[0] in ("jacobi", "linear-implicit"))),
                         ids=[f"{a}-{s}" for a, s, _ in CASES])
def test_the_fmus_locate_and_adapt_as_the_components_in_process(algorithm, scenario, options):
    local = simulate(f"scenarios/{scenario}", algorithm=algorithm, local=True, **options)
    fmus = simulate(f"scenarios/{scenario}", algorithm=algorithm, local=False, **options)
    assert local.ok and fmus.ok, (local.message, fmus.message)
    assert local.events and fmus.events == local.events
    assert fmus.steps == local.steps and fmus.energy == local.energy
    assert fmus.data.dtype.names == local.data.dtype.names
    assert all(np.array_equal(fmus.data[n], local.data[n]) for n in local.data.dtype.names)
    counted = {k: v for k, v in local.counters.items() if k not in ("fmu_calls", "estimate_fmu_calls")}
    assert {k: fmus.counters[k] for k in counted} == counted
