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
OpenSim's record values). Parameters are Simbody's nine (defaults: stiffness E 1 Pa (N/m²), dissipation c
0 s/m, staticFriction μs 0, dynamicFriction μd 0, viscousFriction μv 0 s/m, transitionVelocity v_tr
0.01 m/s, constantContactForce cf 1e-5, hertzSmoothing bd 300 1/m, huntCrossleySmoothing bv 50 s/m),
plus ``radius`` [m], ``sphereLocation`` [m], ``halfSpaceLocation`` [m] and ``halfSpaceOrientation``
[rad] (body-fixed X-Y-Z angles, as OpenSim's ContactHalfSpace; (0, 0, −π/2) makes a ground plane
y = 0 with the solid below). Inputs: pose (position, unit quaternion w, x, y, z) and velocity (of
the body origin, angular, world frame) of the sphere body and of the half-space body; unconnected
half-space inputs keep the rest pose of ground.

Differences to the C++ code: with dissipation c = 0 the C++ evaluates tanh(bv·(v_n + 2/(3c))) =
tanh(+inf) = 1; here the factor is 1 directly (no division by zero); for c < 0 (not
physical) the parameter is rejected. cf is also the slip-velocity regularizer (v_s >= √cf), as coded.
"""
from __future__ import annotations

from .base import Component, Input, Output, Param, vector_variables
from .native_component import NativeComponent
from .ports import QUAT, VectorValues, indicator


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


class SmoothSphereHalfSpaceForce(NativeComponent, VectorValues, Component):
    description = "Simbody SmoothSphereHalfSpaceForce: smooth Hunt-Crossley sphere / half-space contact with friction"
    source = "Simbody 3.7 SimTK::SmoothSphereHalfSpaceForce (forces equal to OpenSim 4.6's, which bundles Simbody)"
    example_parameters = {"stiffness": 1000000.0, "dissipation": 1.0, "staticFriction": 0.8, "dynamicFriction": 0.5,
                          "viscousFriction": 0.1, "radius": 0.5, "sphereLocation.x": 0.1,
                          "halfSpaceOrientation.z": -1.5707963267948966}
    parameters = (
        Param("stiffness", 1.0, "Pa", "Plane-strain modulus E of the contact (k = E^(2/3)/2)", min=0.0),
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


#: the analytic partials (components/partials.py; their values components/native/smooth_sphere_half_space.c): every
#: output on every input it depends on
SmoothSphereHalfSpaceForce.partial_pattern = tuple((o.name, k) for o in SmoothSphereHalfSpaceForce.outputs
                                                   for k in o.depends_on)
