"""A RigidBody / SmoothSphereHalfSpaceForce scenario translated to OpenSim 4.6 (which bundles Simbody)
and integrated there (validation; test extra ``opensim``)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mechfmu.ssp.scenario import Scenario, load_scenario

from .exudyn_model import component, model_name

OSIM_CONTACT_NAMES = {"stiffness": "stiffness", "dissipation": "dissipation", "staticFriction": "static_friction",
                      "dynamicFriction": "dynamic_friction", "viscousFriction": "viscous_friction",
                      "transitionVelocity": "transition_velocity", "constantContactForce": "constant_contact_force",
                      "hertzSmoothing": "hertz_smoothing", "huntCrossleySmoothing": "hunt_crossley_smoothing"}


@dataclass
class RigidReferenceSolution:
    time: np.ndarray
    #: body name -> {"position", "velocity", "angularVelocity"} arrays of shape (len(time), 3)
    bodies: dict[str, dict[str, np.ndarray]]
    #: total mechanical energy (kinetic + gravity + contact potential energies) [J]
    energy: np.ndarray


def opensim_solution(scenario: Scenario | str | Path, times: np.ndarray,
                     accuracy: float = 1e-9) -> RigidReferenceSolution:
    """Solve a scenario of ``RigidBody`` and ``SmoothSphereHalfSpaceForce`` components with OpenSim 4.6
    (Simbody's own SmoothSphereHalfSpaceForce and variable-step integrator at ``accuracy``).

    Translation: every RigidBody becomes an OpenSim Body on a FreeJoint (initial orientation must be
    the identity: FreeJoint angles and our quaternion then agree); a contact's half-space sits on the
    body wired to its ``halfSpace`` inputs, or on ground if they are unconnected. OpenSim has one
    gravity vector: it takes the first body's, and a body with another gravity gets the difference
    as a constant force at its centre of mass (e.g. a carried plate with gravity 0)."""
    import opensim as osim

    osim.Logger.setLevelString("warn")
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario, check=False)
    specs = scenario.components
    model = osim.Model()
    bodies, joints, gravity = {}, {}, None
    for name, spec in specs.items():
        if model_name(spec) != "RigidBody":
            continue
        comp = component("RigidBody", spec.parameters)
        v = comp.values
        if comp.vector("orientation_start", ("w", "x", "y", "z")) != (1.0, 0.0, 0.0, 0.0):
            raise ValueError(f"{name}: only the identity initial orientation is translated")
        xx, yy, zz, xy, xz, yz = comp.vector("inertia", ("xx", "yy", "zz", "xy", "xz", "yz"))
        body = osim.Body(name, v["mass"], osim.Vec3(*comp.vector("centerOfMass")), osim.Inertia(xx, yy, zz, xy, xz, yz))
        model.addBody(body)
        joint = osim.FreeJoint(f"{name}_joint", model.getGround(), body)
        model.addJoint(joint)
        bodies[name], joints[name] = (body, comp), joint
        g = comp.vector("gravity")
        if gravity is None:
            gravity = g
            model.setGravity(osim.Vec3(*g))
    for name, (body, comp) in bodies.items():
        extra = [comp.values["mass"] * (a - b) for a, b in zip(comp.vector("gravity"), gravity)]
        if any(extra):
            force = osim.PrescribedForce(f"{name}_gravity_difference", body)
            force.setForceFunctions(*(osim.Constant(x) for x in extra))
            force.setPointFunctions(*(osim.Constant(x) for x in comp.vector("centerOfMass")))
            force.setForceIsInGlobalFrame(True)
            force.setPointIsInGlobalFrame(False)
            model.addForce(force)
    for name, spec in specs.items():
        kind = model_name(spec)
        if kind == "RigidBody":
            continue
        if kind != "SmoothSphereHalfSpaceForce":
            raise ValueError(f"{name}: {kind} has no OpenSim translation")
        comp = component(kind, spec.parameters)

        def wired_body(side: str, name: str = name):
            feeding = [c.source for c in scenario.connections if c.target == name
                       and c.target_variable == f"{side}.position.x"]
            return bodies[feeding[0]][0] if feeding else model.getGround()

        sphere = osim.ContactSphere(comp.values["radius"], osim.Vec3(*comp.vector("sphereLocation")),
                                    wired_body("sphere"), f"{name}_sphere")
        half_space = osim.ContactHalfSpace(osim.Vec3(*comp.vector("halfSpaceLocation")),
                                           osim.Vec3(*comp.vector("halfSpaceOrientation")), wired_body("halfSpace"),
                                           f"{name}_half_space")
        model.addContactGeometry(sphere)
        model.addContactGeometry(half_space)
        force = osim.SmoothSphereHalfSpaceForce(name, sphere, half_space)
        for ours, theirs in OSIM_CONTACT_NAMES.items():
            getattr(force, f"set_{theirs}")(comp.values[ours])
        model.addForce(force)
    state = model.initSystem()
    for name, (_, comp) in bodies.items():
        joint = joints[name]
        values = comp.vector("angularVelocity_start") + comp.vector("velocity_start")
        for k, value in enumerate(comp.vector("position_start")):
            joint.upd_coordinates(3 + k).setValue(state, value, False)
        for k in range(3):
            joint.upd_coordinates(k).setValue(state, 0.0, False)
        for k, value in enumerate(values):
            joint.upd_coordinates(k).setSpeedValue(state, value)
    model.realizeVelocity(state)
    for name, (body, comp) in bodies.items():  # the speeds mean what we think: world angular and origin velocity
        velocity = body.getVelocityInGround(state)
        got = [velocity.get(0).get(i) for i in range(3)] + [velocity.get(1).get(i) for i in range(3)]
        want = list(comp.vector("angularVelocity_start") + comp.vector("velocity_start"))
        if max(abs(a - b) for a, b in zip(got, want)) > 1e-12:
            raise RuntimeError(f"{name}: OpenSim initial velocity {got} differs from {want}")
    manager = osim.Manager(model)
    manager.setIntegratorAccuracy(accuracy)
    state.setTime(float(times[0]))
    manager.initialize(state)
    records = {name: {"position": [], "velocity": [], "angularVelocity": []} for name in bodies}
    energy = []
    for t in times:
        if t > times[0]:
            state = manager.integrate(float(t))
        model.realizeDynamics(state)
        energy.append(model.calcKineticEnergy(state) + model.calcPotentialEnergy(state))
        for name, (body, _) in bodies.items():
            transform, velocity = body.getTransformInGround(state), body.getVelocityInGround(state)
            records[name]["position"].append([transform.p().get(i) for i in range(3)])
            records[name]["velocity"].append([velocity.get(1).get(i) for i in range(3)])
            records[name]["angularVelocity"].append([velocity.get(0).get(i) for i in range(3)])
    return RigidReferenceSolution(np.asarray(times, dtype=float),
                                  {n: {k: np.array(v) for k, v in r.items()} for n, r in records.items()},
                                  np.array(energy))
