"""3D vector, rotation and quaternion helpers (standard library only).

Vectors are 3-tuples, rotation matrices 3x3 tuples of rows. Quaternions are (w, x, y, z), scalar
first (Simbody's order), unit length, and rotate body vectors into the world frame:
``v_world = R(q)·v_body``. Composition ``q_world_c = q_world_b ⊗ q_b_c``.
"""
from __future__ import annotations

import math
from typing import Any, overload

Vec = tuple[float, float, float]
Mat = tuple[Vec, Vec, Vec]
Quat = tuple[float, float, float, float]
AXES = ("x", "y", "z")
QUAT = ("w", "x", "y", "z")


class VectorValues:
    """Mixin for a component with vector variables ``prefix.x/y/z`` (quaternions ``prefix.w/x/y/z``)."""

    values: dict[str, Any]

    @overload
    def vector(self, prefix: str, names: tuple[str, str, str] = AXES) -> Vec: ...
    @overload
    def vector(self, prefix: str, names: tuple[str, str, str, str]) -> Quat: ...
    @overload
    def vector(self, prefix: str, names: tuple[str, ...]) -> tuple[float, ...]: ...

    def vector(self, prefix: str, names: tuple[str, ...] = AXES) -> tuple[float, ...]:
        """The values ``prefix.<name>`` for ``names``: a 3-vector by default, a quaternion for QUAT."""
        return tuple(self.values[f"{prefix}.{a}"] for a in names)


def add(a: Vec, b: Vec) -> Vec:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


def sub(a: Vec, b: Vec) -> Vec:
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def scale(s: float, a: Vec) -> Vec:
    return (s * a[0], s * a[1], s * a[2])


def dot(a: Vec, b: Vec) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross(a: Vec, b: Vec) -> Vec:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def norm(a: Vec) -> float:
    return math.sqrt(dot(a, a))


def mat_vec(m: Mat, v: Vec) -> Vec:
    return (dot(m[0], v), dot(m[1], v), dot(m[2], v))


def mat_t_vec(m: Mat, v: Vec) -> Vec:
    """mᵀ·v"""
    return (m[0][0] * v[0] + m[1][0] * v[1] + m[2][0] * v[2],
            m[0][1] * v[0] + m[1][1] * v[1] + m[2][1] * v[2],
            m[0][2] * v[0] + m[1][2] * v[1] + m[2][2] * v[2])


def mat_mul(a: Mat, b: Mat) -> Mat:
    return tuple(tuple(sum(a[i][k] * b[k][j] for k in range(3)) for j in range(3)) for i in range(3))  # type: ignore


def column(m: Mat, j: int) -> Vec:
    return (m[0][j], m[1][j], m[2][j])


def quat_to_matrix(q: Quat) -> Mat:
    """Rotation matrix of a unit quaternion (w, x, y, z)."""
    w, x, y, z = q
    return ((1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)),
            (2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)),
            (2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)))


def matrix_to_quat(m: Mat) -> Quat:
    """Unit quaternion (w >= 0) of a rotation matrix (Shepperd's method)."""
    trace = m[0][0] + m[1][1] + m[2][2]
    if trace > max(m[0][0], m[1][1], m[2][2]):
        s = 2.0 * math.sqrt(1.0 + trace)
        q = (0.25 * s, (m[2][1] - m[1][2]) / s, (m[0][2] - m[2][0]) / s, (m[1][0] - m[0][1]) / s)
    elif m[0][0] >= m[1][1] and m[0][0] >= m[2][2]:
        s = 2.0 * math.sqrt(1.0 + m[0][0] - m[1][1] - m[2][2])
        q = ((m[2][1] - m[1][2]) / s, 0.25 * s, (m[0][1] + m[1][0]) / s, (m[0][2] + m[2][0]) / s)
    elif m[1][1] >= m[2][2]:
        s = 2.0 * math.sqrt(1.0 + m[1][1] - m[0][0] - m[2][2])
        q = ((m[0][2] - m[2][0]) / s, (m[0][1] + m[1][0]) / s, 0.25 * s, (m[1][2] + m[2][1]) / s)
    else:
        s = 2.0 * math.sqrt(1.0 + m[2][2] - m[0][0] - m[1][1])
        q = ((m[1][0] - m[0][1]) / s, (m[0][2] + m[2][0]) / s, (m[1][2] + m[2][1]) / s, 0.25 * s)
    return q if q[0] >= 0 else (-q[0], -q[1], -q[2], -q[3])


def quat_mul(a: Quat, b: Quat) -> Quat:
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw)


def quat_normalize(q: Quat) -> Quat:
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    return (q[0] / n, q[1] / n, q[2] / n, q[3] / n)


def quat_exp(theta: Vec) -> Quat:
    """The unit quaternion of the rotation vector theta [rad] (axis·angle)."""
    angle = norm(theta)
    if angle < 1e-8:  # sin(a/2)/a by its series, exact to double precision here
        half = 0.5 - angle * angle / 48.0
        return (1.0 - angle * angle / 8.0, half * theta[0], half * theta[1], half * theta[2])
    half = math.sin(0.5 * angle) / angle
    return (math.cos(0.5 * angle), half * theta[0], half * theta[1], half * theta[2])


def body_xyz_rotation(ax: float, ay: float, az: float) -> Mat:
    """Body-fixed X-Y-Z rotation sequence (Simbody BodyRotationSequence, OpenSim orientations):
    R = Rx(ax)·Ry(ay)·Rz(az)."""
    cx, sx, cy, sy, cz, sz = math.cos(ax), math.sin(ax), math.cos(ay), math.sin(ay), math.cos(az), math.sin(az)
    rx = ((1.0, 0.0, 0.0), (0.0, cx, -sx), (0.0, sx, cx))
    ry = ((cy, 0.0, sy), (0.0, 1.0, 0.0), (-sy, 0.0, cy))
    rz = ((cz, -sz, 0.0), (sz, cz, 0.0), (0.0, 0.0, 1.0))
    return mat_mul(mat_mul(rx, ry), rz)
