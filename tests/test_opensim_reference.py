"""SmoothSphereHalfSpaceForce against OpenSim 4.6 (Simbody's SmoothSphereHalfSpaceForce).

Two free bodies (gravity 0): the ball carries a ContactSphere, the plate a ContactHalfSpace. At random
poses and velocities of both, OpenSim's ``getRecordValues`` (force and torque on each body about its
origin, ground axes) and ``calcPotentialEnergy`` are compared with our component fed with the poses
and velocities read back from OpenSim. Tolerance 1e-12 relative to each vector's magnitude: both
evaluate the same formulas; only the operation order of the frame transforms differs.
"""
from __future__ import annotations

import math
import random

import numpy as np
import pytest
from mechfmu.components import SmoothSphereHalfSpaceForce

osim = pytest.importorskip("opensim")
assert osim.__version__ == "4.6", osim.__version__
osim.Logger.setLevelString("warn")

OSIM_NAMES = {"stiffness": "stiffness", "dissipation": "dissipation", "staticFriction": "static_friction",
              "dynamicFriction": "dynamic_friction", "viscousFriction": "viscous_friction",
              "transitionVelocity": "transition_velocity", "constantContactForce": "constant_contact_force",
              "hertzSmoothing": "hertz_smoothing", "huntCrossleySmoothing": "hunt_crossley_smoothing"}
PARAMETER_SETS = [
    # Simbody's defaults except stiffness; dissipation 0 (the C++ divides by zero there)
    {"stiffness": 1e6},
    {"stiffness": 1e6, "dissipation": 2.0, "staticFriction": 0.8, "dynamicFriction": 0.6, "viscousFriction": 0.1,
     "transitionVelocity": 0.1},
    {"stiffness": 5e7, "dissipation": 0.5, "staticFriction": 0.9, "dynamicFriction": 0.4, "viscousFriction": 0.0,
     "transitionVelocity": 0.01, "constantContactForce": 1e-6, "hertzSmoothing": 1000.0, "huntCrossleySmoothing": 10.0},
    {"stiffness": 2e5, "dissipation": 0.0, "staticFriction": 0.3, "dynamicFriction": 0.3, "viscousFriction": 0.5,
     "transitionVelocity": 0.05, "constantContactForce": 1e-4, "hertzSmoothing": 50.0, "huntCrossleySmoothing": 100.0},
    {"stiffness": 1e7, "dissipation": 10.0, "staticFriction": 1.0, "dynamicFriction": 0.8, "viscousFriction": 0.2,
     "transitionVelocity": 0.2},
]
STATES_PER_SET = 50  # 250 states


class OpenSimContact:
    """The OpenSim model of one parameter set and geometry."""

    def __init__(self, params, radius, sphere_location, half_space_location, half_space_orientation):
        model = osim.Model()
        model.setGravity(osim.Vec3(0, 0, 0))
        self.ball = osim.Body("ball", 2.0, osim.Vec3(0), osim.Inertia(0.1, 0.1, 0.1))
        self.plate = osim.Body("plate", 5.0, osim.Vec3(0), osim.Inertia(1, 1, 1))
        model.addBody(self.ball)
        model.addBody(self.plate)
        self.joints = [osim.FreeJoint("ball_joint", model.getGround(), self.ball),
                       osim.FreeJoint("plate_joint", model.getGround(), self.plate)]
        for joint in self.joints:
            model.addJoint(joint)
        sphere = osim.ContactSphere(radius, osim.Vec3(*sphere_location), self.ball, "sphere")
        half_space = osim.ContactHalfSpace(osim.Vec3(*half_space_location), osim.Vec3(*half_space_orientation),
                                           self.plate, "half_space")
        model.addContactGeometry(sphere)
        model.addContactGeometry(half_space)
        self.force = osim.SmoothSphereHalfSpaceForce("contact", sphere, half_space)
        for ours, theirs in OSIM_NAMES.items():
            if ours in params:
                getattr(self.force, f"set_{theirs}")(params[ours])
        model.addForce(self.force)
        self.model = model
        self.state = model.initSystem()

    def evaluate(self, coordinates, speeds):
        """Set both FreeJoints (rotations 0-2, translations 3-5); return record values, PE and the poses."""
        for joint, q, u in zip(self.joints, coordinates, speeds):
            for k in range(6):
                joint.upd_coordinates(k).setValue(self.state, q[k], False)
                joint.upd_coordinates(k).setSpeedValue(self.state, u[k])
        self.model.realizeDynamics(self.state)
        record = self.force.getRecordValues(self.state)
        values = [record.get(i) for i in range(record.size())]
        poses = []
        for body in (self.ball, self.plate):
            transform, velocity = body.getTransformInGround(self.state), body.getVelocityInGround(self.state)
            rotation = tuple(tuple(transform.R().get(i, j) for j in range(3)) for i in range(3))
            poses.append((tuple(transform.p().get(i) for i in range(3)), matrix_to_quat(rotation),
                          tuple(velocity.get(1).get(i) for i in range(3)),
                          tuple(velocity.get(0).get(i) for i in range(3))))
        return values, self.model.calcPotentialEnergy(self.state), poses


def matrix_to_quat(m):
    """Unit quaternion (w, x, y, z; w >= 0) of a rotation matrix (Shepperd's method: the largest of the four
    squares first, which keeps the division well-conditioned)."""
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


def ours(params, radius, sphere_location, half_space_location, half_space_orientation, poses):
    c = SmoothSphereHalfSpaceForce("contact")
    for name, value in params.items():
        c.set(name, value)
    c.set("radius", radius)
    for prefix, vec in (("sphereLocation", sphere_location), ("halfSpaceLocation", half_space_location),
                        ("halfSpaceOrientation", half_space_orientation)):
        for axis, value in zip("xyz", vec):
            c.set(f"{prefix}.{axis}", value)
    c.initialize()
    for prefix, (position, quaternion, velocity, angular) in zip(("sphere", "halfSpace"), poses):
        for axis, value in zip("xyz", position):
            c.set(f"{prefix}.position.{axis}", value)
        for axis, value in zip("wxyz", quaternion):
            c.set(f"{prefix}.orientation.{axis}", value)
        for axis, value in zip("xyz", velocity):
            c.set(f"{prefix}.velocity.{axis}", value)
        for axis, value in zip("xyz", angular):
            c.set(f"{prefix}.angularVelocity.{axis}", value)
    names = [f"{body}.{kind}.{axis}" for body in ("sphere", "halfSpace") for kind in ("force", "torque")
             for axis in "xyz"]
    return [c.get(n) for n in names], c.get("potentialEnergy"), c.get("indentation")


@pytest.mark.parametrize("set_index", range(len(PARAMETER_SETS)))
def test_forces_torques_and_energy_equal_opensim(set_index):
    params = PARAMETER_SETS[set_index]
    rng = random.Random(f"opensim-{set_index}")
    radius = rng.uniform(0.02, 0.3)
    geometry = (radius, tuple(rng.uniform(-0.1, 0.1) for _ in range(3)), tuple(rng.uniform(-0.2, 0.2) for _ in range(3)),
                tuple(rng.uniform(-math.pi, math.pi) for _ in range(3)))
    model = OpenSimContact(params, *geometry)
    worst, contact, no_contact = 0.0, 0, 0
    for _ in range(STATES_PER_SET):
        plate_q = [rng.uniform(-math.pi, math.pi) for _ in range(3)] + [rng.uniform(-0.5, 0.5) for _ in range(3)]
        ball_q = [rng.uniform(-math.pi, math.pi) for _ in range(3)] + [rng.uniform(-0.5, 0.5) for _ in range(3)]
        speeds = [[rng.uniform(-3, 3) for _ in range(6)] for _ in range(2)]
        # place the ball so that the indentation is in [-R/2, R/2] (contact and no contact)
        values, _, poses = model.evaluate([ball_q, plate_q], speeds)
        _, _, depth = ours(params, *geometry, poses)
        target = rng.uniform(-0.5, 0.5) * radius
        normal = _normal(poses[1][1], geometry[3])
        for k in range(3):  # translations of the ball: move along the normal by (target − depth)
            ball_q[3 + k] += (target - depth) * normal[k]
        values, pe, poses = model.evaluate([ball_q, plate_q], speeds)
        mine, my_pe, depth = ours(params, *geometry, poses)
        assert depth == pytest.approx(target, abs=1e-12)
        contact += depth > 0
        no_contact += depth <= 0
        for i in range(0, 12, 3):
            scale = max(math.sqrt(sum(x * x for x in values[i:i + 3])), 1e-300)
            worst = max(worst, max(abs(a - b) for a, b in zip(mine[i:i + 3], values[i:i + 3])) / scale)
        worst = max(worst, abs(my_pe - pe) / max(abs(pe), 1e-300))
    print(f"\nparameter set {set_index}: {contact} states in contact, {no_contact} without; "
          f"max relative difference to OpenSim {worst:.1e}")
    assert contact >= 10 and no_contact >= 10
    assert worst <= 1e-12


def _normal(plate_quaternion, orientation):
    """The half-space's normal (its frame's x axis) in the world: body-fixed X-Y-Z angles (Rx·Ry·Rz) in a body at
    the pose (w, x, y, z)."""
    (cx, cy, cz), (sx, sy, sz) = np.cos(orientation), np.sin(orientation)
    x_axis = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]]) @ np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]]) @ (
        np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]]))[:, 0]
    w, x, y, z = plate_quaternion
    rotation = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                         [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                         [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    return tuple(rotation @ x_axis)
