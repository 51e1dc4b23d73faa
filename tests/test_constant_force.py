"""ConstantForce (MSL Translational.Sources.ConstantForce): a weight on a mass from rest falls as s = -g t²/2,
v = -g t, in-process and through the FMUs, under the default master and Jacobi; a positive f_constant drives in
+s as MSL's does; mechfmu info answers to MSL's name."""
import numpy as np
import pytest

from mechfmu import ConstantForce, Mass, System
from mechfmu.fmu.modelica_names import lookup

G, M = 9.81, 2.0


def falling(f_constant: float = -M * G) -> System:
    s = System("weight")
    mass = s.add("mass", Mass(m=M))
    gravity = s.add("gravity", ConstantForce(f_constant=f_constant))
    s.connect(gravity.flange, mass.flange_a)
    s.experiment(stop_time=1.0, step_size=1e-2)
    return s


@pytest.mark.parametrize("algorithm", ["jacobi", "auto"])
def test_a_weight_makes_a_mass_fall_as_the_analytic_solution_in_process(algorithm):
    """Jacobi integrates a constant force exactly (round-off); auto's monolithic master within its ODE tolerance
    (rtol 1e-7 of |s| <= 4.9 m)."""
    result = falling().run(local=True, algorithm=algorithm, estimate_error=False)
    t = result.data["time"]
    tolerance = 1e-12 if algorithm == "jacobi" else 1e-6
    assert np.allclose(result.data["mass.s"], -G * t ** 2 / 2, rtol=0, atol=tolerance)
    assert np.allclose(result.data["mass.v"], -G * t, rtol=0, atol=tolerance)
    assert np.all(result.data["gravity.flange.f"] == M * G)  # MSL: flange.f = -f_constant


def test_through_the_fmus_and_a_positive_force_drives_in_plus_s(fmus):
    result = falling(f_constant=4.0).run(algorithm="jacobi", estimate_error=False)  # a = 2 m/s²
    t = result.data["time"]
    assert np.allclose(result.data["mass.s"], t ** 2, rtol=0, atol=1e-12)
    assert result.final["mass.v"] == pytest.approx(2.0, abs=1e-12)


def test_mechfmu_info_answers_to_msls_name():
    for name in ("ConstantForce", "Translational.Sources.ConstantForce",
                 "Modelica.Mechanics.Translational.Sources.ConstantForce"):
        found = lookup(name)
        assert found is not None and found[0] == "ConstantForce", name
    assert [p.name for p in ConstantForce.implementation.parameters] == ["f_constant"]


def test_a_constant_torque_spins_an_inertia_up_as_the_analytic_solution(fmus):
    """ConstantTorque (MSL Rotational.Sources.ConstantTorque) on an Inertia (J = 0.5 kg.m2) from rest: w = tau/J·t,
    phi = tau/J·t²/2, through the FMUs under Jacobi (a held torque is integrated exactly: round-off) and
    in-process under auto (within its ODE tolerance); MSL's flange.tau = -tau_constant; mechfmu info answers to
    MSL's name."""
    from mechfmu import ConstantTorque, Inertia
    tau, J = 3.0, 0.5
    s = System("spin")
    inertia = s.add("inertia", Inertia(J=J))
    motor = s.add("motor", ConstantTorque(tau_constant=tau))
    s.connect(motor.flange, inertia.flange_a)
    s.experiment(stop_time=1.0, step_size=1e-2)
    for local, algorithm, tolerance in ((False, "jacobi", 1e-12), (True, "auto", 1e-6)):
        result = s.run(local=local, algorithm=algorithm, estimate_error=False)
        t = result.data["time"]
        assert np.allclose(result.data["inertia.w"], tau / J * t, rtol=0, atol=tolerance)
        assert np.allclose(result.data["inertia.phi"], tau / J * t ** 2 / 2, rtol=0, atol=tolerance)
        assert np.all(result.data["motor.flange.tau"] == -tau)
    assert lookup("Rotational.Sources.ConstantTorque")[0] == "ConstantTorque"
