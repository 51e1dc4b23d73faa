"""Reference solutions: a 1D scenario translated to exudyn and solved monolithically.

``exudyn_solution(scenario, step)`` builds the same model from the same SSD (parameter values,
initial states, wiring) as one exudyn multibody system and solves it with exudyn's implicit
GeneralizedAlpha solver (full Newton, ``useModifiedNewton=False``; REFERENCES §1.7), returning the
body positions and velocities at every step. It validates our components and master against the
system their physics comes from. Needs the test extra (``exudyn==1.13.6``).

Translation (Exudyn marker m0 = our flange_a, m1 = flange_b):
- ``Mass`` (L = 0), ``Inertia`` -> ``Node1D`` (reference 0, initial s/v) with ``Mass1D``;
- ``Fixed`` (s0 = 0) and an unconnected connector flange (its inputs stay 0) -> ground marker;
- ``ConstantSpeed`` -> ``Node1D`` driven by a ``CoordinateConstraint`` to ground with the offset
  ``s_start + v_fixed·t`` (offsetUserFunction);
- ``CoordinateSpringDamper``, ``CoordinateSpringDamperExt``, ``RotationalSpringDamperExt`` -> the
  exudyn connector with the same parameters (user functions evaluated by our expression evaluator)
  and, for Ext, a 3-coordinate ``NodeGenericData`` with the ``*_start`` data values.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .scenario import Scenario, load_scenario

BODIES = ("Mass", "Inertia")
CONNECTORS = ("CoordinateSpringDamper", "CoordinateSpringDamperExt", "RotationalSpringDamperExt", "CoordinateConstraint")
#: seed (exudyn 1.11) parameter names -> exudyn 1.13.6 names
EXUDYN_EXT_NAMES = {"fDynamicFriction": "dynamicFrictionForce", "fStaticFrictionOffset": "staticFrictionOffsetForce",
                    "fViscousFriction": "viscousFrictionFactor"}


@dataclass
class ReferenceSolution:
    time: np.ndarray
    #: body name -> (position, velocity) arrays at ``time``
    bodies: dict[str, tuple[np.ndarray, np.ndarray]]


def _model_name(spec) -> str:
    return Path(spec.fmu).stem


def _component(model: str, params: dict[str, Any]):
    from mechfmu_components import COMPONENTS
    component = COMPONENTS[model]("reference")
    for name, value in params.items():
        component.set(name, value)
    component.check_parameters()
    return component


def exudyn_solution(scenario: Scenario | str | Path, step: float, stop: float | None = None,
                    settings: dict[str, Any] | None = None) -> ReferenceSolution:
    """Solve the scenario with exudyn at a fixed ``step`` [s] up to ``stop`` (default: the scenario's)."""
    import exudyn as exu
    from exudyn.itemInterface import (CoordinateConstraint, CoordinateSpringDamper, CoordinateSpringDamperExt,
                                      LoadCoordinate, Mass1D, MarkerNodeCoordinate, Node1D, NodeGenericData,
                                      NodePointGround, SensorNode)

    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario, check=False)
    stop = scenario.stop_time if stop is None else stop
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    ground = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=mbs.AddNode(NodePointGround()), coordinate=0))
    nodes: dict[str, int] = {}
    specs = scenario.components
    for name, spec in specs.items():
        model = _model_name(spec)
        comp = _component(model, spec.parameters)
        vals = comp.values
        if model in BODIES:
            if vals.get("L", 0.0) != 0.0:
                raise ValueError(f"{name}: L = {vals['L']} is not translated (flange offsets)")
            inertia = vals["m"] if model == "Mass" else vals["J"]
            nodes[name] = mbs.AddNode(Node1D(referenceCoordinates=[0], initialCoordinates=[comp.state["s"]],
                                             initialVelocities=[comp.state["v"]]))
            mbs.AddObject(Mass1D(nodeNumber=nodes[name], mass=inertia))
            drive = vals["f_drive" if model == "Mass" else "tau_drive"]
            if drive:
                marker = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nodes[name], coordinate=0))
                mbs.AddLoad(LoadCoordinate(markerNumber=marker, load=drive))
        elif model == "ConstantSpeed":
            s0, v = vals["s_start"], vals["v_fixed"]
            nodes[name] = mbs.AddNode(Node1D(referenceCoordinates=[0], initialCoordinates=[s0], initialVelocities=[v]))
            mbs.AddObject(Mass1D(nodeNumber=nodes[name], mass=1.0))
            marker = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nodes[name], coordinate=0))
            mbs.AddObject(CoordinateConstraint(markerNumbers=[ground, marker],
                                               offsetUserFunction=lambda mbs, t, i, off, s0=s0, v=v: s0 + v * t,
                                               offsetUserFunction_t=lambda mbs, t, i, off, v=v: v))
        elif model == "Fixed":
            if vals["s0"] != 0.0:
                raise ValueError(f"{name}: s0 = {vals['s0']} is not translated (exudyn ground coordinates are 0)")
        elif model not in CONNECTORS:
            raise ValueError(f"{name}: {model} has no exudyn translation")
    markers: dict[str, int] = {}

    def flange_marker(connector: str, flange: str) -> int:
        feeding = [c for c in scenario.connections if c.target == connector and c.target_variable == f"{flange}.s"]
        if not feeding or _model_name(specs[feeding[0].source]) == "Fixed":
            return ground
        body = feeding[0].source
        if body not in markers:
            markers[body] = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nodes[body], coordinate=0))
        return markers[body]

    for name, spec in specs.items():
        model = _model_name(spec)
        if model not in CONNECTORS:
            continue
        comp = _component(model, spec.parameters)
        vals = comp.values
        pair = [flange_marker(name, "flange_a"), flange_marker(name, "flange_b")]
        user = comp.user_function() if model != "CoordinateConstraint" else None
        if model == "CoordinateConstraint":
            kwargs = {"offset": vals["offset"], "factor1": vals["factorValue1"], "velocityLevel": vals["velocityLevel"],
                      "activeConnector": vals["activeConnector"]}
            for key in ("offsetUserFunction", "offsetUserFunction_t"):
                if comp.expression(key) is not None:
                    kwargs[key] = lambda mbs, t, i, off, f=comp.expression(key), n=vals["itemNumber"]: f(
                        t=t, lOffset=off, itemNumber=n)
            mbs.AddObject(CoordinateConstraint(markerNumbers=pair, **kwargs))
        elif model == "CoordinateSpringDamper":
            kwargs = {k: vals[k] for k in ("stiffness", "damping", "offset", "activeConnector")}
            if user is not None:
                kwargs["springForceUserFunction"] = lambda mbs, t, i, u, v, k, d, off, f=user, n=vals["itemNumber"]: f(
                    t=t, itemNumber=n, u=u, displacement=u, v=v, velocity=v, k=k, stiffness=k, d=d, damping=d, offset=off)
            mbs.AddObject(CoordinateSpringDamper(markerNumbers=pair, **kwargs))
        else:
            if comp.law().discontinuous:
                kwargs_data = {"nodeNumber": mbs.AddNode(NodeGenericData(numberOfDataCoordinates=3, initialCoordinates=[
                    vals["frictionMode_start"], vals["lastStickingPosition_start"], vals["limitStopState_start"]]))}
            else:
                kwargs_data = {}
            skip = ("springForceUserFunction", "itemNumber", "frictionMode_start", "lastStickingPosition_start",
                    "limitStopState_start")
            parameter_names = {p.name for p in comp.parameters}
            kwargs = {EXUDYN_EXT_NAMES.get(k, k): v for k, v in vals.items() if k not in skip and k in parameter_names}
            if user is not None:
                def uf(mbs, t, i, u, v, k, d, off, v_off, f_d, f_so, v_exp, f_v, v_reg, f=user, n=vals["itemNumber"]):
                    return f(t=t, itemNumber=n, displacement=u, u=u, velocity=v, v=v, stiffness=k, k=k, damping=d, d=d,
                             offset=off, velocityOffset=v_off, fDynamicFriction=f_d, fStaticFrictionOffset=f_so,
                             exponentialDecayStatic=v_exp, fViscousFriction=f_v, frictionProportionalZone=v_reg)
                kwargs["springForceUserFunction"] = uf
            mbs.AddObject(CoordinateSpringDamperExt(markerNumbers=pair, **kwargs_data, **kwargs))
    sensors = {}
    for name in nodes:
        if _model_name(specs[name]) in BODIES:
            sensors[name] = [mbs.AddSensor(SensorNode(nodeNumber=nodes[name], storeInternal=True, outputVariableType=o))
                             for o in (exu.OutputVariableType.Coordinates, exu.OutputVariableType.Coordinates_t)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mbs.Assemble()
    sim = exu.SimulationSettings()
    n_steps = int(round((stop - scenario.start_time) / step))
    sim.timeIntegration.numberOfSteps = n_steps
    sim.timeIntegration.startTime = scenario.start_time
    sim.timeIntegration.endTime = scenario.start_time + n_steps * step
    sim.timeIntegration.newton.useModifiedNewton = False
    sim.timeIntegration.verboseMode = 0
    sim.solution.file.write = False
    sim.solution.sensors.writePeriod = step
    sim.show.computationTime = False
    sim.show.statistics = False
    for key, value in (settings or {}).items():  # e.g. {"timeIntegration.discontinuous.iterationTolerance": 1e-6}
        target = sim
        *path, last = key.split(".")
        for part in path:
            target = getattr(target, part)
        setattr(target, last, value)
    if not mbs.SolveDynamic(sim, solverType=exu.DynamicSolverType.GeneralizedAlpha):
        raise RuntimeError(f"exudyn could not solve {scenario.name} at step {step}")
    bodies = {}
    time = None
    for name, (pos, vel) in sensors.items():
        p, v = mbs.GetSensorStoredData(pos), mbs.GetSensorStoredData(vel)
        time = p[:, 0]
        if len(time) != n_steps + 1:
            raise RuntimeError(f"exudyn stored {len(time)} samples for {n_steps} steps")
        bodies[name] = (p[:, 1].copy(), v[:, 1].copy())
    return ReferenceSolution(time, bodies)


# --- Modelica Association reference results ------------------------------------------------------

def read_msl_reference(path: str | Path) -> np.ndarray:
    """An MSL reference CSV as a structured array (fmpy's reader) with event rows collapsed: of the
    rows sharing a time stamp the last (post-event) one is kept."""
    from fmpy.util import read_csv

    data = read_csv(str(path))
    keep = np.append(np.diff(data["time"]) != 0, True)
    return data[keep]


def event_times(path: str | Path) -> np.ndarray:
    """The event instants of an MSL reference CSV: time stamps that appear twice, except StopTime."""
    from fmpy.util import read_csv

    time = read_csv(str(path))["time"]
    duplicated = time[:-1][np.diff(time) == 0]
    return duplicated[duplicated < time[-1]]


def tube_violation(ref_time: np.ndarray, ref_values: np.ndarray, time: np.ndarray, values: np.ndarray,
                   tolerance: float = 2e-3) -> float:
    """How far ``values`` leave the tube around the reference (0 = inside), in units of the signal.

    The tube follows the Modelica Association's regression check (csv-compare): around every
    reference point a rectangle of half-width ``tolerance·(t_end − t_start)`` in time and half-height
    ``tolerance·(max − min)`` of the signal (at least ``tolerance``·1e-3 for a constant signal); a
    test value must lie within the union of the rectangles at its time. Test values are compared at
    their own time stamps inside the reference's time range."""
    dt = tolerance * (ref_time[-1] - ref_time[0])
    dy = max(tolerance * (np.max(ref_values) - np.min(ref_values)), tolerance * 1e-3)
    inside = (time >= ref_time[0]) & (time <= ref_time[-1])
    time, values = time[inside], values[inside]
    order = np.argsort(ref_time, kind="stable")
    ref_time, ref_values = ref_time[order], ref_values[order]
    # the reference is piecewise linear: its extremes over [t − dt, t + dt] lie at the window's ends or
    # at the reference points inside
    low = np.minimum(np.interp(time - dt, ref_time, ref_values), np.interp(time + dt, ref_time, ref_values))
    high = np.maximum(np.interp(time - dt, ref_time, ref_values), np.interp(time + dt, ref_time, ref_values))
    first = np.searchsorted(ref_time, time - dt, side="left")
    end = np.searchsorted(ref_time, time + dt, side="right")
    for k in range(int(np.max(end - first, initial=0))):
        index = first + k
        valid = index < end
        point = ref_values[np.minimum(index, len(ref_values) - 1)]
        low = np.where(valid, np.minimum(low, point), low)
        high = np.where(valid, np.maximum(high, point), high)
    return float(max(0.0, np.max(low - dy - values, initial=0.0), np.max(values - high - dy, initial=0.0)))


# --- OpenSim (Simbody) reference for RigidBody / SmoothSphereHalfSpaceForce scenarios -------------------

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


def opensim_solution(scenario: Scenario | str | Path, times: np.ndarray, accuracy: float = 1e-9) -> RigidReferenceSolution:
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
        if _model_name(spec) != "RigidBody":
            continue
        comp = _component("RigidBody", spec.parameters)
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
        model_name = _model_name(spec)
        if model_name == "RigidBody":
            continue
        if model_name != "SmoothSphereHalfSpaceForce":
            raise ValueError(f"{name}: {model_name} has no OpenSim translation")
        comp = _component(model_name, spec.parameters)

        def wired_body(side: str):
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
    for name, (body, comp) in bodies.items():
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
