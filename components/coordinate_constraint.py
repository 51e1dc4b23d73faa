"""CoordinateConstraint: Exudyn ObjectConnectorCoordinate, for co-simulation.

Marker m0 = ``flange_a``, marker m1 = ``flange_b``; factor k = ``factorValue1`` (its documented name, exudyn 1.11;
exudyn 1.13.6 calls it ``factor1``):

    c  = k·flange_b.s − flange_a.s − off(t)        output ``residual`` [m] (position level, index 3)
    ċ  = k·flange_b.v − flange_a.v − off_t(t)      output ``residual_v`` [m/s] (velocity level, index 2)
    off(t)   = offsetUserFunction(t, lOffset) if given, else offset
    off_t(t) = offsetUserFunction_t(t, lOffset) if given, else offset if velocityLevel,
               else d off/dt (exact: automatic differentiation of offsetUserFunction; 0 for a constant)
    flange_a.f = −λ,  flange_b.f = +k·λ             (cut forces: +λ acts on the body at flange_a,
                                                     −k·λ on the body at flange_b, as in exudyn)

The constraint force is a coupling unknown that the master solves for (``mechfmu`` algorithm
``newton``) so that the constraint holds at the end of every step; the component only evaluates.
Over a step it is ``λ(τ) = lambda + lambda_rate·τ`` (inputs): the cut forces hold λ and their rates
``flange_x.f_rate`` carry λ̇ to bodies that accept a force rate (Mass, Inertia), so position AND
velocity constraint can both hold at every communication point; bodies without rate inputs see λ
held (then only one of them can). Output ``f`` is the force at the component's time (exudyn's Force). With
``velocityLevel`` the velocity residual is the one to enforce (exudyn then ignores offsetUserFunction).
Without ``velocityLevel`` the constraint is at position level and, as in exudyn (index 3), needs no
offsetUserFunction_t: ċ is then the exact time derivative of c, which the master enforces with λ̇ so
that velocities are consistent with the prescribed position. Deliberate deviation: exudyn's index-2
form without offsetUserFunction_t uses off_t = 0 (a wrong velocity and a force
growing as 1/h in a co-simulation); here ``residual_v`` (and newton's index 2) uses d off/dt. If
``activeConnector`` is false the forces are 0 and both residuals are reported as λ itself (exudyn's
c(λ) = λ = 0), so a master drives λ to 0. User-function names: ``t`` [s] (the component's time:
the end of the last step), ``lOffset``, ``itemNumber``. ``s_rel``/``v_rel`` are flange_b − flange_a
without the factor (exudyn's Displacement/Velocity).
Invariant (virtual work): λ·ċ-power balance, flange_a.f·v_a + flange_b.f·v_b = λ·(k·v_b − v_a).

Outside a constraint-solving master (OMSimulator, libcosim, fmpy) nothing writes ``lambda`` and the
bodies move unconstrained: the FMU then warns once through the FMI logger (residual, time, what the
master must do) when, after a step, |constraintEquation| exceeds ``residualTolerance`` while
``lambda``/``lambda_rate`` have not been written since initialization.
"""
from __future__ import annotations

from .base import Component, Input, Output, Param
from .connector import CONNECTOR_INPUTS
from .native_component import NativeComponent
from .ports import ACTIVE, CONSTRAINT_EQUATION, LAMBDA, LAMBDA_RATE, VELOCITY_LEVEL, VELOCITY_RESIDUAL


class CoordinateConstraint(NativeComponent, Component):
    description = "Exudyn CoordinateConstraint: k*q_b - q_a = offset(t); the constraint force lambda is an input"
    source = "Exudyn 1.13.6 ObjectConnectorCoordinate (constraint equation equal to exudyn's ConstraintEquation)"
    example_parameters = {"factorValue1": 2.0, "offset": 0.1, "offsetUserFunction": "lOffset*sin(t)",
                          "offsetUserFunction_t": "lOffset*cos(t)"}
    parameters = (
        Param("offset", 0.0, "m", "Offset l_off (velocity offset [m/s] if velocityLevel)"),
        Param("factorValue1", 1.0, "1", "Factor k on the flange_b coordinate (exudyn 1.13.6: factor1)"),
        Param(VELOCITY_LEVEL, False, type="Boolean", description="If true, the constraint acts on velocities"),
        Param("offsetUserFunction", "", type="String", description="Expression in t, lOffset, itemNumber for off(t)"),
        Param("offsetUserFunction_t", "", type="String",
              description="Expression in t, lOffset, itemNumber for the time derivative off_t(t)"),
        Param(ACTIVE, True, type="Boolean", description="If false, lambda is driven to 0"),
        Param("itemNumber", 0, type="Integer", description="Item number passed to the user functions"),
        Param("residualTolerance", 1e-6, "m", "Residual (m/s if velocityLevel) above which the FMU warns once "
              "that no master drives lambda", min=0.0),
    )
    inputs = CONNECTOR_INPUTS[:4] + (
        Input(LAMBDA, 0.0, "N", "Constraint force λ at the start of the step (solved by the master)"),
        Input(LAMBDA_RATE, 0.0, "N/s", "Rate of λ over the step (solved by the master; 0 = held)"),
    )
    outputs = (
        Output("s_rel", "m", "flange_b.s - flange_a.s (no factor)", ("flange_a.s", "flange_b.s")),
        Output("v_rel", "m/s", "flange_b.v - flange_a.v (no factor)", ("flange_a.v", "flange_b.v")),
        Output("residual", "m", "Position-level constraint k*q_b - q_a - off(t)", ("flange_a.s", "flange_b.s", LAMBDA)),
        Output(VELOCITY_RESIDUAL, "m/s", "Velocity-level constraint k*v_b - v_a - off_t(t)",
               ("flange_a.v", "flange_b.v", LAMBDA)),
        Output(CONSTRAINT_EQUATION, "1", "The equation to enforce: residual, or residual_v if velocityLevel "
               "(exudyn's ConstraintEquation)", ("flange_a.s", "flange_b.s", "flange_a.v", "flange_b.v", LAMBDA)),
        Output("f", "N", "Constraint force at the component's time: lambda + lambda_rate*(t - start of the last step)",
               (LAMBDA, LAMBDA_RATE)),
        Output("flange_a.f", "N", "Cut force at flange_a (= -lambda)", (LAMBDA,)),
        Output("flange_b.f", "N", "Cut force at flange_b (= +factorValue1*lambda)", (LAMBDA,)),
        Output("flange_a.f_rate", "N/s", "Rate of flange_a.f over the step (= -lambda_rate)", (LAMBDA_RATE,)),
        Output("flange_b.f_rate", "N/s", "Rate of flange_b.f over the step (= +factorValue1*lambda_rate)",
               (LAMBDA_RATE,)),
    )
    co_simulation_only = ("an algebraic constraint between bodies has no ODE form: its force lambda is the "
                          "unknown a master solves so that the constraint holds, which a Model Exchange model "
                          "cannot state (an index-3 DAE); use a solving co-simulation master (newton)")
    initial_state = {"step_start": 0.0}


#: the analytic partials (components/partials.py; their values components/native/coordinate_constraint.c, the outputs
#: being linear in the inputs): every output on every input it depends on
CoordinateConstraint.partial_pattern = tuple((o.name, k) for o in CoordinateConstraint.outputs for k in o.depends_on)
