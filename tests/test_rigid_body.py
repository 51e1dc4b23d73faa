"""RigidBody: exact cases, invariants and convergence of the Lie-group integrator, parameter errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
from mechfmu.components import ComponentError, RigidBody
from scipy.spatial.transform import Rotation


def quat_mul(a, b):
    """Hamilton product of quaternions (w, x, y, z)."""
    aw, av, bw, bv = a[0], np.asarray(a[1:]), b[0], np.asarray(b[1:])
    return (aw * bw - av @ bv, *(aw * bv + bw * av + np.cross(av, bv)))


def quat_exp(theta):
    """The unit quaternion (w, x, y, z) of the rotation vector theta [rad]."""
    angle = np.linalg.norm(theta)
    return (math.cos(0.5 * angle), *(math.sin(0.5 * angle) / angle * np.asarray(theta)))


def quat_to_matrix(q):
    return Rotation.from_quat(q, scalar_first=True).as_matrix()


def mat_vec(m, v):
    return tuple(np.asarray(m) @ np.asarray(v))


Q0 = tuple(np.array((math.cos(0.3), 0.1, -0.2, math.sin(0.3))) / np.linalg.norm((math.cos(0.3), 0.1, -0.2,
                                                                                    math.sin(0.3))))


def body(**values) -> RigidBody:
    b = RigidBody("body")
    for name, value in values.items():
        b.set(name.replace("__", "."), value)
    b.initialize()
    return b


def vector(b, prefix, axes="xyz"):
    return tuple(b.get(f"{prefix}.{a}") for a in axes)


def start(prefix, vec, axes="xyz"):
    return {f"{prefix}__{a}": x for a, x in zip(axes, vec)}


@pytest.mark.parametrize("axis", [(7.0, 0.0, 0.0), (0.0, 0.0, -12.0)])
def test_torque_free_rotation_about_a_principal_axis_is_exact(axis):
    """Minor and major axes (the intermediate one is unstable: round-off grows as e^(3 t))."""
    omega = mat_vec(quat_to_matrix(Q0), axis)
    b = body(inertia__xx=1.0, inertia__yy=2.0, inertia__zz=2.5, gravity__y=0.0, **start("orientation_start", Q0, "wxyz"),
             **start("angularVelocity_start", omega), maxSubstepSize=0.05)
    for n in range(200):
        b.do_step(n * 0.05, 0.05)
    exact = quat_mul(Q0, quat_exp(tuple(10.0 * x for x in axis)))
    assert max(abs(a - c) for a, c in zip(vector(b, "orientation", "wxyz"), exact)) < 1e-13
    assert max(abs(a - c) for a, c in zip(vector(b, "angularVelocity"), omega)) < 1e-12


def test_free_flight_of_the_centre_of_mass_is_exact_with_offset_centre_of_mass():
    """Gravity only: the centre of mass follows the parabola exactly; the origin follows it rigidly."""
    c = (0.1, -0.05, 0.2)
    b = body(**start("centerOfMass", c), **start("velocity_start", (1.0, 2.0, 0.5)),
             **start("angularVelocity_start", (0.0, 0.0, 3.0)), inertia__xx=1.0, inertia__yy=1.0, inertia__zz=1.0)
    p0 = mat_vec(quat_to_matrix((1.0, 0.0, 0.0, 0.0)), c)
    v_com0 = (1.0 - 3.0 * c[1], 2.0 + 3.0 * c[0], 0.5)  # v_origin + ω × c
    for n in range(100):
        b.do_step(n * 0.01, 0.01)
    t = 1.0
    com = tuple(p + v * t + 0.5 * g * t * t for p, v, g in zip(p0, v_com0, (0.0, -9.81, 0.0)))
    rotation = quat_to_matrix(vector(b, "orientation", "wxyz"))
    origin = tuple(a - r for a, r in zip(com, mat_vec(rotation, c)))
    assert max(abs(a - e) for a, e in zip(vector(b, "position"), origin)) < 1e-12


def rigid_top(h, substep):
    b = body(inertia__xx=2.0, inertia__yy=2.5, inertia__zz=3.0, inertia__xy=0.1, inertia__yz=-0.2, gravity__y=0.0,
             **start("orientation_start", Q0, "wxyz"), **start("angularVelocity_start", (0.3, 5.0, -1.0)),
             maxSubstepSize=substep)
    steps = round(2.0 / h)
    for n in range(steps):
        b.do_step(n * h, h)
    return b


def world_angular_momentum(b):
    rotation = quat_to_matrix(vector(b, "orientation", "wxyz"))
    xx, yy, zz, xy, xz, yz = (b.values[f"inertia.{c}"] for c in ("xx", "yy", "zz", "xy", "xz", "yz"))
    inertia = ((xx, xy, xz), (xy, yy, yz), (xz, yz, zz))
    w_body = mat_vec(np.transpose(rotation), vector(b, "angularVelocity"))
    return mat_vec(rotation, mat_vec(inertia, w_body))


def test_asymmetric_top_conserves_energy_and_momentum_and_converges_fourth_order():
    """Torque-free tumbling about no principal axis: kinetic energy and world angular momentum are
    invariants; halving the substep divides the orientation error by about 16 (RKMK4)."""
    reference = rigid_top(0.01, 0.01 / 64)
    h0 = body(inertia__xx=2.0, inertia__yy=2.5, inertia__zz=3.0, inertia__xy=0.1, inertia__yz=-0.2, gravity__y=0.0,
              **start("orientation_start", Q0, "wxyz"), **start("angularVelocity_start", (0.3, 5.0, -1.0)))
    energy0, momentum0 = h0.get("kineticEnergy"), world_angular_momentum(h0)
    errors = []
    for substep in (0.01, 0.005, 0.0025):
        b = rigid_top(0.01, substep)
        errors.append(max(abs(a - r) for a, r in zip(vector(b, "orientation", "wxyz"),
                                                      vector(reference, "orientation", "wxyz"))))
        # RK4 with ω·h_sub <= 0.05 over 2 s: relative errors of order (ω·h_sub)^4·ω·T/120 ~ 1e-7 at most
        assert abs(b.get("kineticEnergy") - energy0) < 1e-7 * energy0
        scale = math.sqrt(sum(x * x for x in momentum0))
        assert max(abs(a - m) for a, m in zip(world_angular_momentum(b), momentum0)) < 1e-7 * scale
    ratios = [errors[i] / errors[i + 1] for i in range(2)]
    print(f"\norientation errors {errors}, ratios {ratios}")
    assert all(12.0 < r < 20.0 for r in ratios)  # fourth order: 16 per halving, ± higher-order terms


def test_force_at_the_origin_with_offset_centre_of_mass_spins_the_body():
    """A force at the origin of a body whose centre of mass is elsewhere produces the torque
    −(R·c) × F about the centre of mass: check the first step's angular acceleration."""
    c = (0.0, 0.5, 0.0)
    b = body(**start("centerOfMass", c), gravity__y=0.0, inertia__xx=0.2, inertia__yy=0.3, inertia__zz=0.4,
             maxSubstepSize=1e-6)
    b.set("force_a.x", 2.0)
    b.do_step(0.0, 1e-6)
    alpha = tuple(w / 1e-6 for w in vector(b, "angularVelocity"))
    expected = tuple(t / i for t, i in zip(np.cross(tuple(-x for x in c), (2.0, 0.0, 0.0)), (0.2, 0.3, 0.4)))
    # over h = 1e-6 s the angular velocity grows by α·h; the finite-step estimate of α is exact to O(h)
    # relative (|α| ~ 5 rad/s2): 1e-6 leaves room for that and round-off in w/h (1e-16/1e-6)
    assert max(abs(a - e) for a, e in zip(alpha, expected)) < 1e-6


@pytest.mark.parametrize("values, fragment", [
    ({"inertia.xx": -1.0}, "inertia = .* is not positive definite"),
    ({"inertia.xx": 1.0, "inertia.yy": 1.0, "inertia.zz": 5.0}, "inertia = .* violates the triangle inequality"),
    ({"orientation_start.w": 0.0}, "orientation_start = .* is not a rotation quaternion"),
    ({"orientation_start.w": 1e200, "orientation_start.x": 1e200}, "orientation_start = .* is too large to normalize"),
    ({"angularVelocity_start.x": 1e200}, r"angularVelocity_start = \(1e\+200, 0, 0\) gives a kinetic energy "
                                          "beyond the largest real number"),  # was a raw "math domain error"
    ({"velocity_start.z": -1e160, "mass": 1e30}, "velocity_start = .* gives a kinetic energy beyond"),
    ({"mass": 0.0}, "mass = 0 is out of range: must be > 0 kg"),
    ({"maxSubstepSize": 0.0}, "maxSubstepSize = 0 is out of range"),
])
def test_bad_parameters_are_named(values, fragment):
    b = RigidBody("ball")
    with pytest.raises(ComponentError, match="RigidBody 'ball': " + fragment):
        for name, value in values.items():  # ranges are checked when written, the rest at initialization
            b.set(name, value)
        b.initialize()



def test_a_rotation_that_diverges_in_a_substep_is_named():
    """A finite but enormous spin off a principal axis overflows within one RK4 substep: the step fails naming
    the angular velocity and the substep, not with a bare math error, and the state stays the last good one."""
    b = RigidBody("top")
    for name, value in {"angularVelocity_start.x": 1e150, "angularVelocity_start.y": 1e150, "inertia.xy": 0.1,
                        "inertia.yy": 1.5}.items():
        b.set(name, value)
    b.initialize()
    before = dict(b.state)
    with pytest.raises(ComponentError, match=r"RigidBody 'top': angularVelocity = \(1e\+150, 1e\+150, 0\) cannot be "
                                             r"integrated over a substep of 0.001 s \(the rotation diverges\)"):
        b.do_step(0.0, 1e-3)
    assert b.state == before
