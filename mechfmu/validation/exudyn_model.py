"""A 1D scenario translated to exudyn and solved monolithically (validation; test extra).

``exudyn_solution(scenario, step)`` builds the same model from the same SSD (parameter values,
initial states, wiring) as one exudyn multibody system and solves it with exudyn's implicit
GeneralizedAlpha solver (full Newton, ``useModifiedNewton=False``), returning the
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

from mechfmu.components.expressions import Expression
from mechfmu.components.ports import IMMEDIATE_SWITCHING
from mechfmu.ssp.scenario import Scenario, load_scenario

BODIES = ("Mass", "Inertia")
CONNECTORS = ("CoordinateSpringDamper", "CoordinateSpringDamperExt", "RotationalSpringDamperExt",
              "CoordinateConstraint")
#: our (exudyn 1.11) parameter names -> exudyn 1.13.6 names
EXUDYN_EXT_NAMES = {"fDynamicFriction": "dynamicFrictionForce", "fStaticFrictionOffset": "staticFrictionOffsetForce",
                    "fViscousFriction": "viscousFrictionFactor"}


@dataclass
class ReferenceSolution:
    time: np.ndarray
    #: body name -> (position, velocity) arrays at ``time``
    bodies: dict[str, tuple[np.ndarray, np.ndarray]]


def model_name(spec) -> str:
    return Path(spec.fmu).stem


def component(model: str, params: dict[str, Any]):
    from mechfmu.components import COMPONENTS
    component = COMPONENTS[model]("reference")
    for name, value in params.items():
        component.set(name, value)
    component.check_parameters()
    return component


#: the names a user function may use, per connector (the values exudyn passes it, and their short aliases)
USER_FUNCTION_NAMES = {
    "CoordinateSpringDamper": ("t", "itemNumber", "u", "displacement", "v", "velocity", "k", "stiffness", "d",
                               "damping", "offset"),
    "CoordinateSpringDamperExt": ("t", "itemNumber", "displacement", "velocity", "stiffness", "damping", "offset",
                                  "velocityOffset", "fDynamicFriction", "fStaticFrictionOffset",
                                  "exponentialDecayStatic", "fViscousFriction", "frictionProportionalZone", "u", "v",
                                  "k", "d"),
    "CoordinateConstraint": ("t", "lOffset", "itemNumber"),
}


def user_function(text: str, names: tuple[str, ...]) -> Expression | None:
    """A user function's expression (our evaluator: the grammar and float semantics of the FMUs'), None if empty."""
    return Expression(text, names) if text.strip() else None


def exudyn_solution(scenario: Scenario | str | Path, step: float, stop: float | None = None,
                    settings: dict[str, Any] | None = None) -> ReferenceSolution:
    """Solve the scenario with exudyn at a fixed ``step`` [s] up to ``stop`` (default: the scenario's)."""
    import exudyn as exu
    from exudyn.itemInterface import (
        CoordinateConstraint,
        CoordinateSpringDamper,
        CoordinateSpringDamperExt,
        LoadCoordinate,
        MarkerNodeCoordinate,
        Mass1D,
        Node1D,
        NodeGenericData,
        NodePointGround,
        SensorNode,
    )

    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario, check=False)
    stop = scenario.stop_time if stop is None else stop
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    ground = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=mbs.AddNode(NodePointGround()), coordinate=0))
    nodes: dict[str, int] = {}
    specs = scenario.components
    for name, spec in specs.items():
        model = model_name(spec)
        comp = component(model, spec.parameters)
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
        if not feeding or model_name(specs[feeding[0].source]) == "Fixed":
            return ground
        body = feeding[0].source
        if body not in markers:
            markers[body] = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nodes[body], coordinate=0))
        return markers[body]

    for name, spec in specs.items():
        model = model_name(spec)
        if model not in CONNECTORS:
            continue
        comp = component(model, spec.parameters)
        vals = comp.values
        pair = [flange_marker(name, "flange_a"), flange_marker(name, "flange_b")]
        user = user_function(vals.get("springForceUserFunction", ""), USER_FUNCTION_NAMES.get(model, ()))
        if model == "CoordinateConstraint":
            kwargs = {"offset": vals["offset"], "factor1": vals["factorValue1"], "velocityLevel": vals["velocityLevel"],
                      "activeConnector": vals["activeConnector"]}
            for key in ("offsetUserFunction", "offsetUserFunction_t"):
                function = user_function(vals[key], USER_FUNCTION_NAMES[model])
                if function is not None:
                    kwargs[key] = lambda mbs, t, i, off, f=function, n=vals["itemNumber"]: f(
                        t=t, lOffset=off, itemNumber=n)
            mbs.AddObject(CoordinateConstraint(markerNumbers=pair, **kwargs))
        elif model == "CoordinateSpringDamper":
            kwargs = {k: vals[k] for k in ("stiffness", "damping", "offset", "activeConnector")}
            if user is not None:
                kwargs["springForceUserFunction"] = lambda mbs, t, i, u, v, k, d, off, f=user, n=vals["itemNumber"]: f(
                    t=t, itemNumber=n, u=u, displacement=u, v=v, velocity=v, k=k, stiffness=k, d=d, damping=d,
                    offset=off)
            mbs.AddObject(CoordinateSpringDamper(markerNumbers=pair, **kwargs))
        else:
            bristle = vals["frictionProportionalZone"] == 0 and (vals["fDynamicFriction"] != 0
                                                                 or vals["fStaticFrictionOffset"] != 0)
            if bristle or vals["useLimitStops"]:  # exudyn's HasDiscontinuousIteration: switching state
                kwargs_data = {"nodeNumber": mbs.AddNode(NodeGenericData(numberOfDataCoordinates=3, initialCoordinates=[
                    vals["frictionMode_start"], vals["lastStickingPosition_start"], vals["limitStopState_start"]]))}
            else:
                kwargs_data = {}
            if vals.get(IMMEDIATE_SWITCHING):
                raise ValueError(f"{comp.name}: {IMMEDIATE_SWITCHING} = true (switching at the inputs, for event "
                                 "location) has no exudyn counterpart")
            skip = ("springForceUserFunction", "itemNumber", "frictionMode_start", "lastStickingPosition_start",
                    "limitStopState_start", IMMEDIATE_SWITCHING)
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
        if model_name(specs[name]) in BODIES:
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
