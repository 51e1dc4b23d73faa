"""SmoothSphereHalfSpaceForce: Simbody 3.7 SimTK::SmoothSphereHalfSpaceForce.

Smooth Hunt-Crossley contact between a sphere (radius R, centre at ``sphereLocation`` in the sphere
body) and a half-space (the x > 0 side of a frame at ``halfSpaceLocation``/``halfSpaceOrientation`` in
the half-space body; the frame's x axis is the normal n, pointing from the sphere into the solid):

    δ  = (c_H − p_H)·x_H + R                  indentation (c_H: sphere centre in the half-space body)
    P  = c + R·n − δ/2·n                      contact point (world), midway between the surfaces
    v  = v_sphere(P) − v_halfSpace(P),  v_n = v·n,  v_t = v − v_n·n
    k  = E^(2/3)/2,  f_h = 4/3·k·√(R·k)·(√(δ² + cf))^(3/2)·(1/2 + tanh(bd·δ)/2)
    f_hc = f_h·(1 + 3/2·c·v_n)·(1/2 + tanh(bv·(v_n + 2/(3c)))/2)
    v_s = √(|v_t|² + cf),  v_r = v_s/v_tr
    f_f = f_hc·(min(v_r, 1)·(μd + 2(μs − μd)/(1 + v_r²)) + μv·v_s)
    F  = f_hc·n + f_f·v_t/v_s                 force on the half-space body at P; the sphere gets −F
    PE = 2/5·f_h·δ                            (Simbody's approximation; < 0 without contact)

Outputs per body: force and torque about the body origin, world frame (Simbody's body forces,
OpenSim's record values). Parameters are Simbody's nine (defaults: stiffness E 1 N/m², dissipation c
0 s/m, staticFriction μs 0, dynamicFriction μd 0, viscousFriction μv 0 s/m, transitionVelocity v_tr
0.01 m/s, constantContactForce cf 1e-5, hertzSmoothing bd 300 1/m, huntCrossleySmoothing bv 50 s/m),
plus ``radius`` [m], ``sphereLocation`` [m], ``halfSpaceLocation`` [m] and ``halfSpaceOrientation``
[rad] (body-fixed X-Y-Z angles, as OpenSim's ContactHalfSpace; (0, 0, −π/2) makes a ground plane
y = 0 with the solid below). Inputs: pose (position, unit quaternion w, x, y, z) and velocity (of
the body origin, angular, world frame) of the sphere body and of the half-space body; unconnected
half-space inputs keep the rest pose of ground.

Differences to the C++ code: with dissipation c = 0 the C++ evaluates tanh(bv·(v_n + 2/(3c))) =
tanh(+inf) = 1; here the factor is 1 directly (Python would divide by zero); for c < 0 (not
physical) the parameter is rejected. cf is also the slip-velocity regularizer (v_s >= √cf), as coded.
"""
from __future__ import annotations

import math
from typing import NamedTuple

from .base import Component, Input, Output, Param, vector_variables
from .ports import indicator
from .spatial import (
    AXES,
    QUAT,
    Vec,
    VectorValues,
    add,
    body_xyz_rotation,
    column,
    cross,
    dot,
    mat_t_vec,
    mat_vec,
    quat_normalize,
    quat_to_matrix,
    scale,
    sub,
)


class ContactParameters(NamedTuple):
    stiffness: float = 1.0
    dissipation: float = 0.0
    staticFriction: float = 0.0
    dynamicFriction: float = 0.0
    viscousFriction: float = 0.0
    transitionVelocity: float = 0.01
    constantContactForce: float = 1e-5
    hertzSmoothing: float = 300.0
    huntCrossleySmoothing: float = 50.0


class ContactResult(NamedTuple):
    sphere_force: Vec
    sphere_torque: Vec
    half_space_force: Vec
    half_space_torque: Vec
    indentation: float
    contact_point: Vec
    slip_velocity: float
    normal_force: float
    potential_energy: float


class BodyState(NamedTuple):
    """Pose and velocity of a body: origin position, rotation matrix (body -> world), origin velocity,
    angular velocity (world)."""
    position: Vec
    rotation: tuple
    velocity: Vec
    angular_velocity: Vec


def station_velocity(body: BodyState, point: Vec) -> Vec:
    """Velocity of the body's material point at the world point."""
    return add(body.velocity, cross(body.angular_velocity, sub(point, body.position)))


def smooth_sphere_half_space(p: ContactParameters, radius: float, sphere_location: Vec, sphere: BodyState,
                             half_space_rotation: tuple, half_space_location: Vec,
                             half_space: BodyState) -> ContactResult:
    """Simbody's calcForce with its potential energy (see the module docstring)."""
    centre = add(sphere.position, mat_vec(sphere.rotation, sphere_location))
    centre_in_half_space_body = mat_t_vec(half_space.rotation, sub(centre, half_space.position))
    x_h = column(half_space_rotation, 0)
    indentation = -(dot(sub(centre_in_half_space_body, half_space_location), scale(-1.0, x_h)) - radius)
    normal = mat_vec(half_space.rotation, x_h)
    point = sub(add(centre, scale(radius, normal)), scale(0.5 * indentation, normal))
    v = sub(station_velocity(sphere, point), station_velocity(half_space, point))
    v_normal = dot(v, normal)
    v_tangent = sub(v, scale(v_normal, normal))
    k = 0.5 * p.stiffness ** (2.0 / 3.0)
    cf = p.constantContactForce
    fh_pos = (4.0 / 3.0) * k * math.sqrt(radius * k) * math.sqrt(indentation * indentation + cf) ** 1.5
    fh_smooth = fh_pos * (0.5 + 0.5 * math.tanh(p.hertzSmoothing * indentation))
    pe = 0.4 * fh_smooth * indentation
    c = p.dissipation
    fhc_pos = fh_smooth * (1.0 + 1.5 * c * v_normal)
    switch = 1.0 if c == 0 else 0.5 + 0.5 * math.tanh(p.huntCrossleySmoothing * (v_normal + 2.0 / (3.0 * c)))
    fhc_smooth = fhc_pos * switch
    force = scale(fhc_smooth, normal)
    v_slip = (dot(v_tangent, v_tangent) + cf) ** 0.5
    v_rel = v_slip / p.transitionVelocity
    ff = fhc_smooth * (min(v_rel, 1.0) * (p.dynamicFriction + 2 * (p.staticFriction - p.dynamicFriction)
                                          / (1 + v_rel * v_rel)) + p.viscousFriction * v_slip)
    force = add(force, scale(1.0 / v_slip, scale(ff, v_tangent)))
    on_sphere = scale(-1.0, force)
    return ContactResult(on_sphere, cross(sub(point, sphere.position), on_sphere),
                         force, cross(sub(point, half_space.position), force),
                         indentation, point, v_slip, fhc_smooth, pe)


def _vector_outputs(prefix: str, unit: str, description: str, depends_on=()):
    return vector_variables(Output, prefix, unit, description, depends_on=depends_on)


def body_inputs(prefix: str, which: str) -> tuple[Input, ...]:
    return (vector_variables(Input, f"{prefix}.position", "m", f"Origin of the {which} body, world frame")
            + vector_variables(Input, f"{prefix}.orientation", "1", f"Orientation quaternion of the {which} body",
                      QUAT, (1.0, 0.0, 0.0, 0.0))
            + vector_variables(Input, f"{prefix}.velocity", "m/s", f"Velocity of the {which} body origin, world frame")
            + vector_variables(Input, f"{prefix}.angularVelocity", "rad/s",
                               f"Angular velocity of the {which} body, world frame"))


SPHERE_INPUTS = body_inputs("sphere", "sphere")
HALF_SPACE_INPUTS = body_inputs("halfSpace", "half-space")
ALL_INPUTS = tuple(i.name for i in SPHERE_INPUTS + HALF_SPACE_INPUTS)
POSE_INPUTS = tuple(n for n in ALL_INPUTS if ".position." in n or ".orientation." in n)


class SmoothSphereHalfSpaceForce(VectorValues, Component):
    description = "Simbody SmoothSphereHalfSpaceForce: smooth Hunt-Crossley sphere / half-space contact with friction"
    source = "Simbody 3.7 SimTK::SmoothSphereHalfSpaceForce (forces equal to OpenSim 4.6's, which bundles Simbody)"
    example_parameters = {"stiffness": 1000000.0, "dissipation": 1.0, "staticFriction": 0.8, "dynamicFriction": 0.5,
                          "viscousFriction": 0.1, "radius": 0.5, "sphereLocation.x": 0.1,
                          "halfSpaceOrientation.z": -1.5707963267948966}
    parameters = (
        Param("stiffness", 1.0, "N/m2", "Plane-strain modulus E of the contact (k = E^(2/3)/2)", min=0.0),
        Param("dissipation", 0.0, "s/m", "Hunt-Crossley dissipation c", min=0.0),
        Param("staticFriction", 0.0, "1", "Static friction coefficient (peak at the transition velocity)", min=0.0),
        Param("dynamicFriction", 0.0, "1", "Dynamic friction coefficient", min=0.0),
        Param("viscousFriction", 0.0, "s/m", "Viscous friction coefficient (times the normal force)", min=0.0),
        Param("transitionVelocity", 0.01, "m/s", "Slip velocity of the static-friction peak", min=0.0,
              min_exclusive=True),
        Param("constantContactForce", 1e-5, "1", "Smoothing constant cf added to δ² and to the slip velocity²",
              min=0.0),
        Param("hertzSmoothing", 300.0, "1/m", "Steepness bd of the tanh switching the Hertz force on", min=0.0),
        Param("huntCrossleySmoothing", 50.0, "s/m", "Steepness bv of the tanh switching the Hunt-Crossley force off",
              min=0.0),
        Param("radius", 0.1, "m", "Sphere radius", min=0.0, min_exclusive=True),
    ) + vector_variables(Param, "sphereLocation", "m", "Sphere centre in the sphere body frame") \
      + vector_variables(Param, "halfSpaceLocation", "m", "Half-space frame origin in the half-space body frame") \
      + vector_variables(Param, "halfSpaceOrientation", "rad",
                "Half-space frame orientation in its body, body-fixed X-Y-Z angles; solid side is x > 0")
    inputs = SPHERE_INPUTS + HALF_SPACE_INPUTS
    outputs = (_vector_outputs("sphere.force", "N", "Force on the sphere body, world frame", ALL_INPUTS)
               + _vector_outputs("sphere.torque", "N.m", "Torque on the sphere body about its origin, world frame",
                                 ALL_INPUTS)
               + _vector_outputs("halfSpace.force", "N", "Force on the half-space body, world frame", ALL_INPUTS)
               + _vector_outputs("halfSpace.torque", "N.m",
                                 "Torque on the half-space body about its origin, world frame", ALL_INPUTS)
               + (Output("indentation", "m", "Indentation δ of the sphere into the half-space", POSE_INPUTS),)
               + _vector_outputs("contactPoint", "m", "Contact point P, world frame", POSE_INPUTS)
               + (Output("slipVelocity", "m/s", "Regularized slip velocity sqrt(|v_t|² + cf)", ALL_INPUTS),
                  Output("normalForce", "N", "Smoothed Hunt-Crossley normal force f_hc", ALL_INPUTS),
                  Output("potentialEnergy", "J", "Potential energy 2/5·f_h·δ (Simbody's approximation)",
                         POSE_INPUTS),
                  Output(indicator("distance"), "m", "Event indicator: distance -δ of the sphere from the "
                         "half-space (< 0 while it indents it; the smoothed force sets in around 0)", POSE_INPUTS)))

    def contact_parameters(self) -> ContactParameters:
        return ContactParameters(**{name: self.values[name] for name in ContactParameters._fields})

    def body(self, prefix: str) -> BodyState:
        q = self.vector(f"{prefix}.orientation", QUAT)
        if not all(math.isfinite(x) for x in q) or sum(x * x for x in q) == 0.0:
            raise self.error(f"{prefix}.orientation", q, "is not a rotation quaternion")
        return BodyState(self.vector(f"{prefix}.position"), quat_to_matrix(quat_normalize(q)),
                         self.vector(f"{prefix}.velocity"), self.vector(f"{prefix}.angularVelocity"))

    def compute_outputs(self) -> dict[str, float]:
        r = smooth_sphere_half_space(self.contact_parameters(), self.values["radius"],
                                     self.vector("sphereLocation"), self.body("sphere"),
                                     body_xyz_rotation(*self.vector("halfSpaceOrientation")),
                                     self.vector("halfSpaceLocation"), self.body("halfSpace"))
        out = {"indentation": r.indentation, "slipVelocity": r.slip_velocity, "normalForce": r.normal_force,
               "potentialEnergy": r.potential_energy, indicator("distance"): -r.indentation}
        for prefix, vec in (("sphere.force", r.sphere_force), ("sphere.torque", r.sphere_torque),
                            ("halfSpace.force", r.half_space_force), ("halfSpace.torque", r.half_space_torque),
                            ("contactPoint", r.contact_point)):
            out.update({f"{prefix}.{a}": x for a, x in zip(AXES, vec)})
        return out
