"""RigidBody: a free 6-DOF rigid body (Newton-Euler), world-frame ports.

    m·a_c = F + m·g                                  (centre of mass, world frame)
    I_c·ω̇_b + ω_b × I_c·ω_b = τ_b,   τ_b = Rᵀ·(M − (R·c) × F)     (body frame, about the centre of mass)
    q̇ = ½·q ⊗ (0, ω_b)                                (unit quaternion w, x, y, z: body -> world)

F = force_a + force_b and M = torque_a + torque_b are the forces and torques (about the body
origin) that attached elements exert on the body, world frame, held over a step (zero-order hold);
c is the centre of mass in the body frame, I_c the inertia about it in the body frame (full
symmetric tensor; positive definite, triangle inequalities), g the gravity vector.

Integration over a step h: the centre of mass moves exactly (constant force); rotation is integrated
with n = ceil(h / maxSubstepSize) substeps (at most MAX_SUBSTEPS = 100,000; a step needing more is
refused) of the Munthe-Kaas Runge-Kutta method of order 4 on the
rotation group (q = q_n ⊗ exp(θ), θ̇ = dexp⁻¹_θ(ω_b)); the quaternion is renormalized after each
substep. Torque-free rotation about a principal axis keeps ω_b constant and θ ∥ ω_b, so every
correction term vanishes and the step is exact (up to round-off) at any step size.

Model Exchange: the 13 continuous states p_c, v_c (world), q (w, x, y, z), ω_b, with

    ṗ_c = v_c,   v̇_c = F/m + g,   q̇ = ½·q̂ ⊗ (0, ω_b) + γ·(1 − |q|²)·q,   ω̇_b from Euler's equations at q̂

where q̂ = q/|q| is what the outputs and the law use. A solver's error moves q off the unit sphere; the
rotation term is orthogonal to q, so d|q|²/dt = 2γ·(1 − |q|²)·|q|²: the unit sphere attracts the state at the
rate 2γ (γ = ``QUATERNION_STABILIZATION`` = 10 1/s), and the orientation reported is a unit quaternion at
any norm.

Outputs: origin position, orientation quaternion, origin velocity, angular velocity (world frame),
kinetic energy ½m|v_c|² + ½ω_b·I_c·ω_b and gravitational potential energy −m·g·p_c [J].
"""
from __future__ import annotations

import math

from .base import Component, Input, Output, Param
from .base import vector_variables as _vec
from .spatial import (
    AXES,
    QUAT,
    Vec,
    VectorValues,
    add,
    cross,
    dot,
    mat_t_vec,
    mat_vec,
    quat_exp,
    quat_mul,
    quat_normalize,
    quat_to_matrix,
    scale,
    sub,
)

INERTIA = ("xx", "yy", "zz", "xy", "xz", "yz")

#: most rotation substeps in one communication step (a bound on the work of a step)
MAX_SUBSTEPS = 100_000
#: γ [1/s]: how fast a Model Exchange quaternion off the unit sphere is drawn back to it
QUATERNION_STABILIZATION = 10.0


def solve3(m: tuple, b: Vec) -> Vec:
    """Solve the symmetric 3x3 system m·x = b (Cramer's rule; m is positive definite)."""
    (a, b_, c), (_, d, e), (_, _, f) = m
    det = a * (d * f - e * e) - b_ * (b_ * f - c * e) + c * (b_ * e - c * d)
    inv = ((d * f - e * e, c * e - b_ * f, b_ * e - c * d),
           (c * e - b_ * f, a * f - c * c, b_ * c - a * e),
           (b_ * e - c * d, b_ * c - a * e, a * d - b_ * b_))
    return scale(1.0 / det, mat_vec(inv, b))


def dexp_inverse(theta: Vec, omega: Vec) -> Vec:
    """θ̇ for q = q_n ⊗ exp(θ) with body angular velocity ω (right trivialization, dexp⁻¹ at −θ), to the
    order RKMK4 needs: ω + ½θ×ω + θ×(θ×ω)/12."""
    t_w = cross(theta, omega)
    return add(add(omega, scale(0.5, t_w)), scale(1.0 / 12.0, cross(theta, t_w)))


class RigidBody(VectorValues, Component):
    description = "Free 6-DOF rigid body with world-frame force/torque ports (Newton-Euler, Lie-group RK4)"
    source = "Newton-Euler rigid body (the free body of Simbody/OpenSim 4.6, against which it is validated)"
    example_parameters = {"mass": 2.0, "inertia.xx": 0.3, "inertia.yy": 0.4, "inertia.zz": 0.5, "inertia.xy": 0.01,
                          "centerOfMass.y": 0.1, "angularVelocity_start.x": 3.0, "velocity_start.z": 1.0,
                          "maxSubstepSize": 0.0005}
    parameters = ((Param("mass", 1.0, "kg", "Mass", min=0.0, min_exclusive=True),)
                  + tuple(Param(f"inertia.{c}", 1.0 if c in ("xx", "yy", "zz") else 0.0, "kg.m2",
                                f"Inertia tensor about the centre of mass, body frame ({c})") for c in INERTIA)
                  + _vec(Param, "centerOfMass", "m", "Centre of mass in the body frame")
                  + _vec(Param, "gravity", "m/s2", "Gravity acceleration, world frame", start=(0.0, -9.81, 0.0))
                  + _vec(Param, "position_start", "m", "Initial position of the body origin, world frame")
                  + _vec(Param, "orientation_start", "1", "Initial orientation quaternion (normalized)", QUAT,
                         (1.0, 0.0, 0.0, 0.0))
                  + _vec(Param, "velocity_start", "m/s", "Initial velocity of the body origin, world frame")
                  + _vec(Param, "angularVelocity_start", "rad/s", "Initial angular velocity, world frame")
                  + (Param("maxSubstepSize", 1e-3, "s", "Largest rotation substep within a communication step",
                           min=0.0, min_exclusive=True),))
    inputs = (_vec(Input, "force_a", "N", "Force on the body from element a, world frame")
              + _vec(Input, "torque_a", "N.m", "Torque on the body about its origin from element a, world frame")
              + _vec(Input, "force_b", "N", "Force on the body from element b, world frame")
              + _vec(Input, "torque_b", "N.m", "Torque on the body about its origin from element b, world frame"))
    outputs = (tuple(Output(f"position.{a}", "m", f"Body origin, world frame ({a})") for a in AXES)
               + tuple(Output(f"orientation.{a}", "1", f"Orientation quaternion body -> world ({a})") for a in QUAT)
               + tuple(Output(f"velocity.{a}", "m/s", f"Velocity of the body origin, world frame ({a})") for a in AXES)
               + tuple(Output(f"angularVelocity.{a}", "rad/s", f"Angular velocity, world frame ({a})") for a in AXES)
               + (Output("kineticEnergy", "J", "Kinetic energy"),
                  Output("potentialEnergy", "J", "Gravitational potential energy -m*g.p_com")))
    initial_state = {"p": [0.0, 0.0, 0.0], "v": [0.0, 0.0, 0.0], "q": [1.0, 0.0, 0.0, 0.0], "w": [0.0, 0.0, 0.0]}

    def inertia(self) -> tuple:
        xx, yy, zz, xy, xz, yz = self.vector("inertia", INERTIA)
        return ((xx, xy, xz), (xy, yy, yz), (xz, yz, zz))

    def validate(self) -> None:
        xx, yy, zz, xy, xz, yz = self.vector("inertia", INERTIA)
        m = self.inertia()
        minors = (xx, xx * yy - xy * xy,
                  xx * (yy * zz - yz * yz) - xy * (xy * zz - yz * xz) + xz * (xy * yz - yy * xz))
        if not all(x > 0 for x in minors):
            raise self.error("inertia", (xx, yy, zz, xy, xz, yz), "is not positive definite")
        principal = _eigenvalues(m)
        if any(principal[i] > principal[(i + 1) % 3] + principal[(i + 2) % 3] * (1 + 1e-12) for i in range(3)):
            raise self.error("inertia", (xx, yy, zz, xy, xz, yz),
                             "violates the triangle inequality of principal moments (no real body has it)")
        for name, scale_ in (("angularVelocity_start", max(principal)), ("velocity_start", self.values["mass"])):
            if not math.isfinite(sum(x * x for x in self.vector(name)) * scale_):
                raise self.error(name, self.vector(name), "gives a kinetic energy beyond the largest real number")
        q = self.vector("orientation_start", QUAT)
        if sum(x * x for x in q) == 0.0:
            raise self.error("orientation_start", q, "is not a rotation quaternion (zero)")
        if not math.isfinite(sum(x * x for x in q)):
            raise self.error("orientation_start", q, "is too large to normalize (its squared norm overflows): give "
                             "a unit quaternion")

    def __init__(self, instance_name: str | None = None):
        super().__init__(instance_name)
        self.parameter_changed("")

    def parameter_changed(self, name: str) -> None:
        """The initial state (centre of mass, body angular velocity) from the start parameters."""
        q = self.vector("orientation_start", QUAT)
        if not 0.0 < sum(x * x for x in q) < math.inf:
            return  # reported by validate
        q = quat_normalize(q)
        rotation = quat_to_matrix(q)
        offset = mat_vec(rotation, self.vector("centerOfMass"))
        omega = self.vector("angularVelocity_start")
        self.state["q"] = list(q)
        self.state["p"] = list(add(self.vector("position_start"), offset))
        self.state["v"] = list(add(self.vector("velocity_start"), cross(omega, offset)))
        self.state["w"] = list(mat_t_vec(rotation, omega))

    def loads(self) -> tuple[Vec, Vec]:
        return (add(self.vector("force_a"), self.vector("force_b")),
                add(self.vector("torque_a"), self.vector("torque_b")))

    def angular_acceleration(self, q, w: Vec, force: Vec, torque: Vec) -> Vec:
        rotation = quat_to_matrix(q)
        inertia = self.inertia()
        torque_com = sub(torque, cross(mat_vec(rotation, self.vector("centerOfMass")), force))
        tau_b = mat_t_vec(rotation, torque_com)
        return solve3(inertia, sub(tau_b, cross(w, mat_vec(inertia, w))))

    def advance(self, current_time: float, step_size: float) -> None:
        n = step_size / self.values["maxSubstepSize"]
        if not n <= MAX_SUBSTEPS:
            raise self.error("maxSubstepSize", self.values["maxSubstepSize"],
                             f"needs {n:.3g} rotation substeps in a step of {step_size!r} s, more than {MAX_SUBSTEPS}: "
                             "raise maxSubstepSize or take smaller communication steps")
        n = max(1, math.ceil(n - 1e-9))
        st = self.state
        force, torque = self.loads()
        m = self.values["mass"]
        a = add(scale(1.0 / m, force), self.vector("gravity"))
        p, v = tuple(st["p"]), tuple(st["v"])
        p_new = list(add(add(p, scale(step_size, v)), scale(0.5 * step_size * step_size, a)))
        v_new = list(add(v, scale(step_size, a)))
        h = step_size / n
        q, w = tuple(st["q"]), tuple(st["w"])
        try:
            for _ in range(n):
                q, w = self.rkmk4(q, w, h, force, torque)
        except (ArithmeticError, ValueError):  # overflow, then inf - inf: a rotation too fast for the substep
            w = tuple(math.nan for _ in w)
        if not all(math.isfinite(x) for x in (*q, *w)):
            raise self.error("angularVelocity", mat_vec(quat_to_matrix(st["q"]), st["w"]),
                             f"cannot be integrated over a substep of {h!r} s (the rotation diverges): lower "
                             "maxSubstepSize or the torques")
        st["p"], st["v"], st["q"], st["w"] = p_new, v_new, list(q), list(w)

    def rkmk4(self, q, w: Vec, h: float, force: Vec, torque: Vec):
        """One Munthe-Kaas RK4 step of the rotation (q, ω_b) with world force/torque held."""
        k1t, k1w = w, self.angular_acceleration(q, w, force, torque)
        t2, w2 = scale(0.5 * h, k1t), add(w, scale(0.5 * h, k1w))
        k2t, k2w = dexp_inverse(t2, w2), self.angular_acceleration(quat_mul(q, quat_exp(t2)), w2, force, torque)
        t3, w3 = scale(0.5 * h, k2t), add(w, scale(0.5 * h, k2w))
        k3t, k3w = dexp_inverse(t3, w3), self.angular_acceleration(quat_mul(q, quat_exp(t3)), w3, force, torque)
        t4, w4 = scale(h, k3t), add(w, scale(h, k3w))
        k4t, k4w = dexp_inverse(t4, w4), self.angular_acceleration(quat_mul(q, quat_exp(t4)), w4, force, torque)
        theta = scale(h / 6.0, add(add(k1t, scale(2.0, add(k2t, k3t))), k4t))
        w_new = add(w, scale(h / 6.0, add(add(k1w, scale(2.0, add(k2w, k3w))), k4w)))
        return quat_normalize(quat_mul(q, quat_exp(theta))), w_new

    continuous_states = tuple(f"{entry}[{i}]" for entry, n in (("p", 3), ("v", 3), ("q", 4), ("w", 3))
                              for i in range(n))
    state_units = ("m",) * 3 + ("m/s",) * 3 + ("1",) * 4 + ("rad/s",) * 3
    #: Model Exchange: the state's quaternion is the solver's, normalized where it is used
    _solver_quaternion = False

    def set_continuous_states(self, values: list[float]) -> None:
        super().set_continuous_states(values)
        if sum(x * x for x in self.state["q"]) == 0.0:
            raise self.error("state q", list(self.state["q"]), "is not a rotation quaternion (zero)")
        self._solver_quaternion = True

    def derivatives(self) -> list[float]:
        st = self.state
        q_raw = tuple(st["q"])
        q = quat_normalize(q_raw)
        w = tuple(st["w"])
        force, torque = self.loads()
        a = add(scale(1.0 / self.values["mass"], force), self.vector("gravity"))
        pull = QUATERNION_STABILIZATION * (1.0 - sum(x * x for x in q_raw))
        q_dot = [0.5 * r + pull * x for r, x in zip(quat_mul(q, (0.0, *w)), q_raw)]
        return [*st["v"], *a, *q_dot, *self.angular_acceleration(q, w, force, torque)]

    def compute_outputs(self) -> dict[str, float]:
        st = self.state
        q = quat_normalize(tuple(st["q"])) if self._solver_quaternion else tuple(st["q"])
        rotation = quat_to_matrix(q)
        offset = mat_vec(rotation, self.vector("centerOfMass"))
        omega = mat_vec(rotation, tuple(st["w"]))
        position = sub(tuple(st["p"]), offset)
        velocity = sub(tuple(st["v"]), cross(omega, offset))
        w = tuple(st["w"])
        m = self.values["mass"]
        out = {"kineticEnergy": 0.5 * m * dot(st["v"], st["v"]) + 0.5 * dot(w, mat_vec(self.inertia(), w)),
               "potentialEnergy": -m * dot(self.vector("gravity"), tuple(st["p"]))}
        out.update({f"position.{a}": x for a, x in zip(AXES, position)})
        out.update({f"orientation.{a}": x for a, x in zip(QUAT, q)})
        out.update({f"velocity.{a}": x for a, x in zip(AXES, velocity)})
        out.update({f"angularVelocity.{a}": x for a, x in zip(AXES, omega)})
        return out


def _eigenvalues(m: tuple) -> tuple[float, float, float]:
    """Eigenvalues of a symmetric 3x3 matrix (trigonometric closed form)."""
    p1 = m[0][1] ** 2 + m[0][2] ** 2 + m[1][2] ** 2
    trace = m[0][0] + m[1][1] + m[2][2]
    if p1 == 0:
        return tuple(sorted((m[0][0], m[1][1], m[2][2])))  # type: ignore
    q = trace / 3.0
    p2 = (m[0][0] - q) ** 2 + (m[1][1] - q) ** 2 + (m[2][2] - q) ** 2 + 2 * p1
    p = math.sqrt(p2 / 6.0)
    b = tuple(tuple((m[i][j] - (q if i == j else 0.0)) / p for j in range(3)) for i in range(3))
    det_b = (b[0][0] * (b[1][1] * b[2][2] - b[1][2] * b[2][1]) - b[0][1] * (b[1][0] * b[2][2] - b[1][2] * b[2][0])
             + b[0][2] * (b[1][0] * b[2][1] - b[1][1] * b[2][0]))
    phi = math.acos(max(-1.0, min(1.0, det_b / 2.0))) / 3.0
    e1 = q + 2 * p * math.cos(phi)
    e3 = q + 2 * p * math.cos(phi + 2 * math.pi / 3)
    return tuple(sorted((e1, 3 * q - e1 - e3, e3)))  # type: ignore
