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

from .base import Component, ComponentError, Input, Output, Param
from .connector import CONNECTOR_INPUTS
from .expressions import Expression, ExpressionError
from .ports import ACTIVE, CONSTRAINT_EQUATION, LAMBDA, LAMBDA_RATE, VELOCITY_LEVEL, VELOCITY_RESIDUAL

USER_FUNCTION_NAMES = ("t", "lOffset", "itemNumber")


class CoordinateConstraint(Component):
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

    def __init__(self, instance_name: str | None = None):
        super().__init__(instance_name)
        self.lambda_driven = False  # lambda or lambda_rate written after initialization: a master solves them
        self._warned = False

    def set(self, name: str, value) -> None:
        super().set(name, value)
        if self.initialized and name in (LAMBDA, LAMBDA_RATE):
            self.lambda_driven = True

    def step_warnings(self) -> list[str]:
        """Once per instance: the constraint is violated beyond residualTolerance while nothing drives
        lambda (any host but a constraint-solving master), i.e. the bodies move unconstrained."""
        vals = self.values
        if self.lambda_driven or self._warned or not vals[ACTIVE]:
            return []
        try:
            residual, tolerance = self.get(CONSTRAINT_EQUATION), vals["residualTolerance"]
        except ComponentError:  # a user function failing at this time: reading the output says so (fmi2Error)
            return []
        if not abs(residual) > tolerance:
            return []
        self._warned = True
        unit = "m/s" if vals[VELOCITY_LEVEL] else "m"
        return [f"{type(self).__name__} '{self.instance_name}': the constraint is violated by {residual:.6g} {unit} "
                f"at t = {self.time:.9g} s (residualTolerance {tolerance:g} {unit}) and its force input lambda has "
                "not been driven since initialization. This FMU does not enforce its constraint: the master must "
                "solve lambda (and lambda_rate) at every step so that constraintEquation = 0, as mechfmu's "
                "'newton' algorithm does; with lambda left at its start value the connected bodies move "
                "unconstrained. (Warned once per instance.)"]

    def validate(self) -> None:
        for name in ("offsetUserFunction", "offsetUserFunction_t"):
            self.expression(name)

    def expression(self, name: str) -> Expression | None:
        return self.parsed_expression(name, USER_FUNCTION_NAMES)

    def evaluate(self, name: str) -> float:
        return self.call_expression(name, USER_FUNCTION_NAMES, t=self.time, lOffset=self.values["offset"],
                                    itemNumber=self.values["itemNumber"])

    def offset_derivative(self) -> float:
        """d off/dt of offsetUserFunction at the component's time, exact (automatic differentiation
        of the expression, components/dual.py)."""
        try:
            expression = self.expression("offsetUserFunction")
            assert expression is not None, "called only with an offsetUserFunction"
            return expression.derivative(
                "t", t=self.time, lOffset=self.values["offset"], itemNumber=self.values["itemNumber"])
        except ExpressionError as exc:
            raise self.error("offsetUserFunction", self.values["offsetUserFunction"],
                             f"has no time derivative here ({exc}); give offsetUserFunction_t") from None

    def offsets(self) -> tuple[float, float]:
        """(off(t), off_t(t)) at the component's time."""
        vals = self.values
        position = self.evaluate("offsetUserFunction") if self.expression("offsetUserFunction") else vals["offset"]
        if self.expression("offsetUserFunction_t"):
            velocity = self.evaluate("offsetUserFunction_t")
        elif vals[VELOCITY_LEVEL]:
            velocity = vals["offset"]
        else:  # the time derivative of the position offset: exact, 0 for a constant offset
            velocity = self.offset_derivative() if self.expression("offsetUserFunction") else 0.0
        return position, velocity

    def initialize(self, start_time: float = 0.0) -> None:
        super().initialize(start_time)
        self.state["step_start"] = self.time

    def advance(self, current_time: float, step_size: float) -> None:
        self.state["step_start"] = current_time

    def compute_outputs(self) -> dict[str, float]:
        vals = self.values
        k, rate = vals["factorValue1"], vals[LAMBDA_RATE]
        lam = vals[LAMBDA]
        f = lam + rate * (self.time - self.state["step_start"])
        s_rel, v_rel = vals["flange_b.s"] - vals["flange_a.s"], vals["flange_b.v"] - vals["flange_a.v"]
        if not vals[ACTIVE]:
            return {"s_rel": s_rel, "v_rel": v_rel, "residual": lam, VELOCITY_RESIDUAL: lam, CONSTRAINT_EQUATION: lam,
                    "f": f, "flange_a.f": 0.0, "flange_b.f": 0.0, "flange_a.f_rate": 0.0, "flange_b.f_rate": 0.0}
        off, off_t = self.offsets()
        residual = k * vals["flange_b.s"] - vals["flange_a.s"] - off
        residual_v = k * vals["flange_b.v"] - vals["flange_a.v"] - off_t
        return {"s_rel": s_rel, "v_rel": v_rel, "residual": residual, VELOCITY_RESIDUAL: residual_v,
                CONSTRAINT_EQUATION: residual_v if vals[VELOCITY_LEVEL] else residual,
                "f": f, "flange_a.f": -lam, "flange_b.f": k * lam,
                "flange_a.f_rate": -rate, "flange_b.f_rate": k * rate}
