"""A connector is its law: a new one written here as an exercise (a linear damper, MSL's Damper) is
only its module. Dropped into a copy of components/, it is found by discovery, built into an FMU
(native loader, documentation), passes the generic FMU checks, and couples in the master, whose
linear-implicit algorithm picks up its tangents by name."""
import math
from pathlib import Path

import pytest
from conftest import components_with
from test_c_host import check_c_host
from test_fmu_documentation import check_documentation
from test_fmus import check_round_trip

from mechfmu.fmu.build import build, components_in
from mechfmu.master.simulate import simulate
from mechfmu.ssp.scenario import ComponentSpec, Connection, Scenario

LINEAR_DAMPER = '''"""LinearDamper: Modelica.Mechanics.Translational.Components.Damper.

    f = d·v_rel   (tension positive), flange_b.f = +f, flange_a.f = −f

Parameter ``d`` [N.s/m] (>= 0). Tangents: ∂f/∂s = 0, ∂f/∂v = d.
"""
from .base import Param
from .connector import Connector


class LinearDamper(Connector):
    description = "Linear damper f = d*v_rel"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Translational.Components.Damper"
    example_parameters = {"d": 25.0}
    force_description = "Damper force d*v_rel (positive = tension)"
    parameters = (Param("d", 0.0, "N.s/m", "Damping constant", min=0.0),)

    def element_force(self, q: float, v: float) -> float:
        return self.values["d"] * v
'''
D, M, V0 = 25.0, 5.0, 1.0  # the mass leaves the wall's damper at 1 m/s: v(t) = V0·exp(−D·t/M)


def damped_slide(wall: Path, damper: Path, mass: Path) -> Scenario:
    """A mass (M, leaving at V0) on a damper (D) to a wall, the FMUs given, 1 s at a step of 1e-3 s."""
    scenario = Scenario("damped_slide", Path("."), {
        "wall": ComponentSpec("wall", wall),
        "damper": ComponentSpec("damper", damper, {"d": D}),
        "mass": ComponentSpec("mass", mass, {"m": M, "v_start": V0}),
    }, [Connection(*a.split(".", 1), *b.split(".", 1)) for a, b in (
        ("wall.flange.s", "damper.flange_a.s"), ("wall.flange.v", "damper.flange_a.v"),
        ("mass.flange_a.s", "damper.flange_b.s"), ("mass.flange_a.v", "damper.flange_b.v"),
        ("damper.flange_b.f", "mass.flange_a.f"))])
    scenario.stop_time, scenario.step_size = 1.0, 1e-3
    return scenario


@pytest.fixture(scope="module")
def built(tmp_path_factory, fmus):
    work = tmp_path_factory.mktemp("new_connector")
    components = components_with(work, "linear_damper", LINEAR_DAMPER)
    found = components_in(components)
    paths = build(["LinearDamper", "Mass", "Fixed"], directory=work / "fmus", components_dir=components,
                  platforms=["linux64"])
    return found, {p.stem: p for p in paths}


@pytest.mark.slow
def test_discovered_and_built_with_documentation(built, tmp_path):
    found, paths = built
    cls = found["LinearDamper"]
    assert [o.name for o in cls.outputs][:3] == ["s_rel", "v_rel", "f"]  # the port algebra comes from the base
    check_documentation(paths["LinearDamper"], cls)


def test_passes_the_generic_fmu_checks(built, tmp_path):
    from fmpy.validation import validate_fmu
    found, paths = built
    assert validate_fmu(str(paths["LinearDamper"])) == []
    check_round_trip(paths["LinearDamper"], found["LinearDamper"], tmp_path)


def test_runs_in_the_c_host(built, host, tmp_path):
    found, paths = built
    check_c_host(paths["LinearDamper"], found["LinearDamper"].example_parameters, host[0], tmp_path)


def test_the_master_couples_it(built):
    """Through the FMUs: Jacobi converges to v(t) = V0·exp(−D·t/M) at first order; linear-implicit
    integrates a linear damper to a wall exactly (the body takes its tangent d), to round-off."""
    _, paths = built
    scenario = damped_slide(paths["Fixed"], paths["LinearDamper"], paths["Mass"])
    exact = V0 * math.exp(-D / M * 1.0)
    errors = {}
    for algorithm, h in (("jacobi", 1e-3), ("jacobi", 5e-4), ("linear-implicit", 1e-3)):
        result = simulate(scenario, algorithm=algorithm, step=h)
        assert result.ok, result.message
        errors[algorithm, h] = abs(result.data["mass.v"][-1] - exact)
    print(f"\nerrors at t = 1 s: {errors}")
    # explicit Euler on v' = −(D/M)·v: global error ≈ (D/M)²·h·t·exp(−D·t/M)/2 = 8.4e-5 at h = 1e-3
    assert errors["jacobi", 1e-3] < 2 * (D / M) ** 2 * 1e-3 * exact / 2
    assert 1.8 < errors["jacobi", 1e-3] / errors["jacobi", 5e-4] < 2.2  # first order
    assert errors["linear-implicit", 1e-3] < 1e-12
