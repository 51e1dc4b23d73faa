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
rate 2γ (γ = 10 1/s), and the orientation reported is a unit quaternion at
any norm.

Outputs: origin position, orientation quaternion, origin velocity, angular velocity (world frame),
kinetic energy ½m|v_c|² + ½ω_b·I_c·ω_b and gravitational potential energy −m·g·p_c [J].
"""
from __future__ import annotations

from .base import Component, Input, Output, Param
from .base import vector_variables as _vec
from .native_component import NativeComponent
from .partials import derivative_variable, state_variable
from .ports import AXES, QUAT, VectorValues

INERTIA = ("xx", "yy", "zz", "xy", "xz", "yz")


class RigidBody(NativeComponent, VectorValues, Component):
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
    continuous_states = tuple(f"{entry}[{i}]" for entry, n in (("p", 3), ("v", 3), ("q", 4), ("w", 3))
                              for i in range(n))
    state_units = ("m",) * 3 + ("m/s",) * 3 + ("1",) * 4 + ("rad/s",) * 3


def rigid_body_partials(cls: type[RigidBody]) -> tuple[tuple[str, str], ...]:
    """The analytic partials (components/partials.py; their values components/native/rigid_body.c): every state
    derivative on every state and every load input, then every output on every state (the outputs depend on the
    state alone)."""
    states = [state_variable(x) for x in cls.continuous_states]
    knowns = [*states, *(i.name for i in cls.inputs)]
    return (tuple((derivative_variable(x), k) for x in cls.continuous_states for k in knowns)
            + tuple((o.name, k) for o in cls.outputs for k in states))


RigidBody.partial_pattern = rigid_body_partials(RigidBody)


def rigid_body_state_outputs(cls: type[RigidBody]) -> dict[str, tuple[str, ...]]:
    """The states each output depends on (the module docstring's outputs: the origin p_c − R·c, the unit quaternion
    q̂, the origin's velocity v_c − (R·ω_b) × (R·c), R·ω_b, ½m|v_c|² + ½ω_b·I_c·ω_b and −m·g·p_c)."""
    def of(*entries: str, axis: str = "") -> tuple[str, ...]:  # with an axis: p[i], v[i] of that axis only
        return tuple(x for x in cls.continuous_states if x.split("[")[0] in entries
                     and (not axis or x.split("[")[0] not in ("p", "v") or x == f"{x[0]}[{AXES.index(axis)}]"))
    uses = {"orientation": of("q"), "angularVelocity": of("q", "w"), "kineticEnergy": of("v", "w"),
            "potentialEnergy": of("p")}
    return {o.name: uses.get(o.name) or uses.get(o.name.split(".")[0]) or (
        of("p", "q", axis=o.name[-1]) if o.name.startswith("position.") else of("v", "q", "w", axis=o.name[-1]))
        for o in cls.outputs}


RigidBody.outputs_on_states = rigid_body_state_outputs(RigidBody)


def rigid_body_derivative_knowns(cls: type[RigidBody]) -> dict[str, tuple[str, ...]]:
    """The knowns each state derivative depends on (the module docstring's equations): ṗ_c = v_c axis by axis,
    v̇_c = F/m + g axis by axis, q̇ on q and ω_b, ω̇_b (Euler's equations with τ_b = Rᵀ·(M − (R·c) × F)) on q, ω_b
    and every load."""
    states = {x: state_variable(x) for x in cls.continuous_states}
    loads = tuple(i.name for i in cls.inputs)
    of = {entry: tuple(v for x, v in states.items() if x.startswith(entry + "[")) for entry in "pvqw"}
    found: dict[str, tuple[str, ...]] = {}
    for i, axis in enumerate(AXES):
        found[f"p[{i}]"] = (state_variable(f"v[{i}]"),)
        found[f"v[{i}]"] = (f"force_a.{axis}", f"force_b.{axis}")
        found[f"w[{i}]"] = of["q"] + of["w"] + loads
    found.update({f"q[{j}]": of["q"] + of["w"] for j in range(4)})
    return found


RigidBody.derivatives_on = rigid_body_derivative_knowns(RigidBody)
