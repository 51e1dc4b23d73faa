"""``Rod`` (a rigid length between flanges) and ``RotationalFixed``. Expectations: the
MSL laws in closed form; a body carrying an element through a rod of length L moves as the body with the
element wired to it directly and the element's offset shifted by L (the same equations; the sums differ
only in their rounding); a rotational connector grounded by RotationalFixed(phi0 = 0) runs as grounded
by its unwired inputs, bit for bit."""
import numpy as np
import pytest
from mechfmu.components import COMPONENTS

from mechfmu.master.simulate import simulate
from mechfmu.ssp import write_scenario

L = 0.35


def test_rod_law_is_msl_rod_with_the_force_passed_to_the_body():
    rod = COMPONENTS["Rod"]("rod")
    rod.set("L", L)
    values = {"flange_a.s": 1.25, "flange_a.v": -0.5, "flange_a.a": 3.0, "flange_b.f": 7.5, "flange_b.c": 100.0,
              "flange_b.d": 2.0, "flange_b.f_rate": -4.0}
    for name, value in values.items():
        rod.set(name, value)
    rod.initialize(0.0)
    assert rod.get("flange_b.s") == 1.25 + L
    assert (rod.get("flange_b.v"), rod.get("flange_b.a")) == (-0.5, 3.0)
    # MSL: 0 = flange_a.f + flange_b.f, and flange_b.f (the rod's) = -(the element's cut force at that flange)
    assert [rod.get(f"flange_a.{q}") for q in ("f", "c", "d", "f_rate")] == [7.5, 100.0, 2.0, -4.0]


def chain(tmp_path, name, algorithm, with_rod):
    """A mass on a spring-damper to a wall; the spring's flange_b on the mass through a rod of length L, or
    directly with the spring's offset shifted by L (s_rel = s + L − offset either way)."""
    spring = {"stiffness": 400.0, "damping": 3.0, "offset": 0.5 - (0.0 if with_rod else L)}
    components = [("wall", "Fixed", {}), ("spring", "CoordinateSpringDamper", spring),
                  ("mass", "Mass", {"m": 2.0, "s_start": 0.4})]
    wires = ["wall.flange.s -> spring.flange_a.s", "wall.flange.v -> spring.flange_a.v"]
    if with_rod:
        components.append(("rod", "Rod", {"L": L}))
        wires += ["mass.flange_a.s -> rod.flange_a.s", "mass.flange_a.v -> rod.flange_a.v",
                  "rod.flange_b.s -> spring.flange_b.s", "rod.flange_b.v -> spring.flange_b.v",
                  "spring.flange_b.f -> rod.flange_b.f", "rod.flange_a.f -> mass.flange_a.f"]
    else:
        wires += ["mass.flange_a.s -> spring.flange_b.s", "mass.flange_a.v -> spring.flange_b.v",
                  "spring.flange_b.f -> mass.flange_a.f"]
    return write_scenario(tmp_path / name, name, components, wires, 1.0, 1e-3, algorithm=algorithm).parent


@pytest.mark.parametrize("algorithm", ["jacobi", "linear-implicit"])
def test_a_body_through_a_rod_moves_as_with_the_element_shifted(tmp_path, algorithm):
    """1,000 steps of a damped oscillation (0.1 m amplitude): the two wirings differ by the rounding of
    (s + L) − offset against s − (offset − L), about 1e-16 m a step, damped by the oscillator: 1e-12 m
    bounds it with room. Under linear-implicit the rod passes the spring's tangents to the mass (a
    linear spring to a wall is then integrated without coupling error in both)."""
    runs = {}
    for with_rod in (True, False):
        folder = chain(tmp_path, f"{algorithm}_{with_rod}", algorithm, with_rod)
        runs[with_rod] = simulate(folder, local=True)
        assert runs[with_rod].ok, runs[with_rod].message
    rod, direct = runs[True].data, runs[False].data
    assert np.max(np.abs(rod["mass.s"] - direct["mass.s"])) < 1e-12
    assert np.max(np.abs(rod["mass.v"] - direct["mass.v"])) < 1e-10
    assert np.ptp(direct["mass.s"]) > 0.05  # it moves
    assert np.array_equal(rod["rod.flange_b.s"], rod["mass.flange_a.s"] + L)
    fmu = simulate(chain(tmp_path, f"{algorithm}_fmu", algorithm, True))
    assert fmu.ok and np.array_equal(fmu.data, rod)  # the FMU and the component, bit for bit


def rotors(tmp_path, name, phi0, phi_start=0.2):
    """scenarios/geared_rotors' brake (a rotational spring-damper from rotor2 to ground), grounded by
    RotationalFixed (phi0) or (None) by leaving its flange_a unwired (inputs 0)."""
    components = [("rotor", "Inertia", {"J": 0.5, "phi_start": phi_start}),
                  ("brake", "RotationalSpringDamperExt", {"stiffness": 50.0, "damping": 0.5})]
    wires = ["rotor.flange_b.phi -> brake.flange_b.s", "rotor.flange_b.w -> brake.flange_b.v",
             "brake.flange_b.f -> rotor.flange_b.tau"]
    if phi0 is not None:
        components.append(("housing", "RotationalFixed", {"phi0": phi0}))
        wires += ["housing.flange.phi -> brake.flange_a.s", "housing.flange.w -> brake.flange_a.v"]
    return write_scenario(tmp_path / name, name, components, wires, 1.0, 1e-3).parent


def test_rotational_fixed_grounds_a_rotational_connector(tmp_path):
    """phi0 = 0 is the unwired ground, bit for bit; a housing turned by phi0 with the rotor started phi0
    further turns the whole motion by phi0 (to the rounding of phi − phi0: 1e-15 rad a step, 1e-12 bounds
    it over 1,000 damped steps of a fixed-step master; an adaptive integrator's steps would follow the turned values)."""
    unwired = simulate(rotors(tmp_path, "unwired", None), "linear-implicit", local=True)
    fixed = simulate(rotors(tmp_path, "fixed", 0.0), "linear-implicit", local=True)
    assert unwired.ok and fixed.ok
    assert np.array_equal(fixed.data["rotor.phi"], unwired.data["rotor.phi"])
    assert np.array_equal(fixed.data["brake.flange_b.f"], unwired.data["brake.flange_b.f"])
    turned = simulate(rotors(tmp_path, "turned", 0.3, phi_start=0.5), "linear-implicit", local=True)
    assert turned.ok
    assert np.max(np.abs((turned.data["rotor.phi"] - 0.3) - fixed.data["rotor.phi"])) < 1e-12
    assert np.ptp(fixed.data["rotor.phi"]) > 0.1  # it moves
    assert turned.units["housing.flange.phi"] == "rad" and turned.final["housing.flange.w"] == 0.0
