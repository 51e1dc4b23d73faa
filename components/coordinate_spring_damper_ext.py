"""CoordinateSpringDamperExt: Exudyn ObjectConnectorCoordinateSpringDamperExt.

Follows exudyn 1.13.6's code. Marker m0 = ``flange_a``, marker m1 = ``flange_b``; factors f0, f1:

    q = f1·flange_b.s − f0·flange_a.s        (output s_rel, Exudyn Displacement)
    v = f1·flange_b.v − f0·flange_a.v        (output v_rel, Exudyn Velocity)
    f = k·(q − x_off) + d·(v − v_off) + f_friction + f_limitStop          (output f, tension positive)
    flange_a.f = −f0·f,  flange_b.f = +f1·f  (Modelica cut forces; Exudyn applies +f0·f on m0, −f1·f on m1)
    flange_x.c, flange_x.d, flange_x.f_rate  (tangents, components/connector.py: analytic, numerical
                                              for a user function)

f_friction and f_limitStop, and the end-of-step switching of the friction mode, last sticking position
and limit-stop state, are the law of ``spring_damper_ext_law`` (Stribeck and bristle friction, limit
stops, Exudyn's PostNewton step, and where this follows Exudyn's code rather than its documentation).

User function (``springForceUserFunction``, an expression): replaces the whole law (no friction, no
stops are added). Names: ``t``, ``itemNumber``, ``displacement`` (or ``u``), ``velocity`` (or ``v``),
``stiffness`` (``k``), ``damping`` (``d``), ``offset``, ``velocityOffset``, ``fDynamicFriction``,
``fStaticFrictionOffset``, ``exponentialDecayStatic``, ``fViscousFriction``, ``frictionProportionalZone``
— the 13 values Exudyn passes after ``mbs`` (14 arguments with ``mbs``).

Events (not in Exudyn): ``immediateSwitching`` (default false) makes the force use the state that
the end-of-step update gives at the inputs it is evaluated at, so a switch acts at the instant a
master steps to instead of from the next step, and sticking again preloads the bristles with the
slip force's limit at v = 0, ±(f_d + f_so) (Exudyn: the slip force of the last step). Event
indicators (components/ports.py), each 0 while its switch is off: ``indicator.lowerStop = q −
limitStopsLower``, ``indicator.upperStop = limitStopsUpper − q`` (< 0 in contact with that stop),
``indicator.friction`` [N] (bristle model): while sticking the margin ``f_d + f_so − |sticking
force|`` (>= 0; breakaway at 0), while slipping ``−(f_d + f_so)·|v|/v_exp`` (<= 0; sticks again where
v reaches 0), each at the switching state the end-of-step update gives at the current inputs. With
``immediateSwitching``, where that update sticks again (v has reversed against the stored slip) the
margin is 0 by the preload, so the indicator is the slipping value mirrored through v = 0,
``+(f_d + f_so)·|v|/v_exp`` (the locator interpolates to v's zero), and the sticking position is moved by
the fewest ulps that keep the bristle force within ±(f_d + f_so) (rounding left it up to 4e-12 N above:
a margin of −4e-14 N hid the switch, which then acted at the next step's end, up to a step late).
With ``immediateSwitching`` ``switchingError`` is that update's error at the current inputs (the force
jump of the switch the outputs make there; after a master's exchange, of a switch within the step
just taken), which a master with ``switching_tolerance`` reads (mechfmu/master/algorithms/events.py).

Model Exchange (FMI 2.0 §3; components/model_exchange.py): no continuous states; the friction mode, last
sticking position and limit-stop state are discrete states that change only in event mode
(``update_discrete_states``: the end-of-step update at the event's inputs, sticking again preloaded with
±(f_d + f_so) as with ``immediateSwitching``, which has no further effect here). Between events the force uses
the stored state. Each indicator announces the switch out of the stored mode, which happens where it is <= 0
(FMI 2.0's side of 0, so a solver stopping exactly on a zero loses no switch): free, a stop's as above; in
contact with it, the way back out, ``limitStopsLower − q`` or ``q − limitStopsUpper``; friction while sticking
the margin ``f_d + f_so − |sticking force|``, while slipping ``(f_d + f_so)·v·sign(frictionMode)/v_exp``
(> 0 while v keeps the slip's direction, <= 0 once it has stopped). So a stop acts exactly while q is beyond
it, slipping starts where the margin reaches 0 and sticking where v does: the laws Exudyn's end-of-step
switching approaches as its step shrinks (it switches up to one step late, and sticks again preloaded with
the last step's slip force, which tends to ±(f_d + f_so) as v -> 0); tests/test_model_exchange_ext.py
measures the convergence.

Units are translational (m, N); ``RotationalSpringDamperExt`` is the same law in rad, N.m.
Invariant: f0·flange_b.f + f1·flange_a.f = 0 (virtual work: the forces do no work through the gear).
"""
from __future__ import annotations

import math

from .base import Output, Param, rotational_variant
from .connector import FLANGE_INPUT_NAMES, UserFunctionConnector
from .model_exchange import NO_TIME
from .ports import IMMEDIATE_SWITCHING, SWITCHING_ERROR, indicator
from .spring_damper_ext_law import (
    ExtLaw,
    SwitchingState,
    _sign,
    ext_force,
    ext_force_derivatives,
    post_newton,
    sticking_force,
)

USER_FUNCTION_NAMES = ("t", "itemNumber", "displacement", "velocity", "stiffness", "damping", "offset",
                       "velocityOffset", "fDynamicFriction", "fStaticFrictionOffset",
                       "exponentialDecayStatic", "fViscousFriction", "frictionProportionalZone")
USER_FUNCTION_ALIASES = {"u": "displacement", "v": "velocity", "k": "stiffness", "d": "damping"}


class CoordinateSpringDamperExt(UserFunctionConnector):
    description = ("Exudyn CoordinateSpringDamperExt: spring-damper with gear factors, Stribeck or bristle "
                   "stick/slip friction and limit stops")
    source = ("Exudyn 1.13.6 ObjectConnectorCoordinateSpringDamperExt "
              "(force and end-of-step switching equal to exudyn's)")
    #: bristle friction and limit stops: random inputs switch stick/slip and the stops many times
    example_parameters = {"stiffness": 100.0, "damping": 2.0, "fDynamicFriction": 3.0, "fStaticFrictionOffset": 1.0,
                          "stickingStiffness": 10000.0, "stickingDamping": 10.0, "fViscousFriction": 0.5,
                          "exponentialDecayStatic": 0.05, "useLimitStops": True, "limitStopsUpper": 1.5,
                          "limitStopsLower": -1.5, "limitStopsStiffness": 10000.0, "limitStopsDamping": 5.0,
                          "lastStickingPosition_start": 0.2}
    parameters = (
        Param("stiffness", 0.0, "N/m", "Spring stiffness k; acts against the relative coordinate"),
        Param("damping", 0.0, "N.s/m", "Damping d; acts against the relative velocity minus velocityOffset"),
        Param("offset", 0.0, "m", "Offset x_off between the two coordinates (reference length of the spring)"),
        Param("velocityOffset", 0.0, "m/s", "Velocity offset v_off for the damping term (D-control of a drive)"),
        Param("factor0", 1.0, "1", "Factor f0 on the flange_a (marker 0) coordinate; != 0"),
        Param("factor1", 1.0, "1", "Factor f1 on the flange_b (marker 1) coordinate; != 0"),
        Param("fDynamicFriction", 0.0, "N", "Dynamic friction force f_d (= mu_d*F_N) when sliding", min=0.0),
        Param("fStaticFrictionOffset", 0.0, "N", "Static friction offset force f_so; sticking holds up to f_d + f_so",
              min=0.0),
        Param("stickingStiffness", 0.0, "N/m", "Bristle stiffness k_mu while sticking", min=0.0),
        Param("stickingDamping", 0.0, "N.s/m", "Bristle damping d_mu while sticking", min=0.0),
        Param("exponentialDecayStatic", 1e-3, "m/s", "Velocity v_exp of the exponential decay of f_so", min=0.0,
              min_exclusive=True),
        Param("fViscousFriction", 0.0, "N.s/m", "Viscous friction coefficient f_v in the sliding case"),
        Param("frictionProportionalZone", 0.0, "m/s",
              "Regularization velocity v_reg; != 0: regularized Stribeck law, 0: bristle model", min=0.0),
        Param("limitStopsUpper", 0.0, "m", "Upper limit s_upper of the relative coordinate"),
        Param("limitStopsLower", 0.0, "m", "Lower limit s_lower of the relative coordinate"),
        Param("limitStopsStiffness", 0.0, "N/m", "Contact stiffness k_limits of the limit stops", min=0.0),
        Param("limitStopsDamping", 0.0, "N.s/m", "Contact damping d_limits of the limit stops", min=0.0),
        Param("useLimitStops", False, type="Boolean", description="If true, the limit stops act"),
        Param("activeConnector", True, type="Boolean", description="If false, the connector force is zero"),
        Param("springForceUserFunction", "", type="String",
              description="Expression replacing the force law, in t, u (displacement), v (velocity), k, d, offset and "
                        "the friction and stop parameters by name; empty = none"),
        Param("itemNumber", 0, type="Integer", description="Item number passed to the user function"),
        Param("frictionMode_start", 0.0, "N", "Initial friction mode (0 = stick, else signed slip force)",
              moves_state="frictionMode"),
        Param("lastStickingPosition_start", 0.0, "m", "Initial last sticking position (relative coordinate)",
              moves_state="lastStickingPosition"),
        Param("limitStopState_start", 0.0, "m", "Initial limit-stop state (0 free, <0 lower, >0 upper)",
              moves_state="limitStopState"),
        Param(IMMEDIATE_SWITCHING, False, type="Boolean",
              description="If true, the force uses the switching state of the end-of-step update at the current "
                          "inputs (a switch acts at once; set by an event-locating master) and switchingError is "
                          "that switch's; false: Exudyn's, from the next step"),
    )
    geared = True
    force_description = "Connector force f_SD (positive = tension), all parts"
    law_outputs = (
        Output("f_friction", "N", "Friction part of f", FLANGE_INPUT_NAMES),
        Output("f_limitStop", "N", "Limit-stop part of f", FLANGE_INPUT_NAMES),
    )
    state_outputs = (
        Output("frictionMode", "N", "Friction mode after the last switching (0 = stick, else signed slip force)"),
        Output("lastStickingPosition", "m", "Last sticking position after the last switching"),
        Output("limitStopState", "m", "Limit-stop state after the last switching"),
        Output(SWITCHING_ERROR, "N", "Switching error of the last step's end-of-step update (Exudyn PostNewton); "
               "with immediateSwitching, of the update at the current inputs", FLANGE_INPUT_NAMES),
    )
    indicator_outputs = (
        Output(indicator("lowerStop"), "m", "Event indicator q - limitStopsLower (< 0 in contact; 0 without stops; "
               "Model Exchange in contact: limitStopsLower - q, <= 0 out of it)", ("flange_a.s", "flange_b.s")),
        Output(indicator("upperStop"), "m", "Event indicator limitStopsUpper - q (< 0 in contact; 0 without stops; "
               "Model Exchange in contact: q - limitStopsUpper, <= 0 out of it)", ("flange_a.s", "flange_b.s")),
        Output(indicator("friction"), "N", "Event indicator of stick/slip (bristle model): sticking margin "
               "f_d + f_so - |sticking force| >= 0, or -(f_d + f_so)*|v|/v_exp while slipping (immediateSwitching: "
               "+(f_d + f_so)*|v|/v_exp where v has reversed and it sticks again; Model Exchange while slipping: "
               "(f_d + f_so)*v*sign(frictionMode)/v_exp, <= 0 where it sticks again); 0 without",
               FLANGE_INPUT_NAMES),
    )
    #: Model Exchange: the time [s] of the last switch of the stops' and of the friction's mode (NO_TIME: none)
    initial_state = {"frictionMode": 0.0, "lastStickingPosition": 0.0, "limitStopState": 0.0,
                     SWITCHING_ERROR: 0.0, "stopSwitchTime": NO_TIME, "frictionSwitchTime": NO_TIME}

    user_function_names = USER_FUNCTION_NAMES + tuple(USER_FUNCTION_ALIASES)

    def law(self) -> ExtLaw:
        return ExtLaw(**{name: self.values[name] for name in ExtLaw._fields})

    def switching_state(self) -> SwitchingState:
        st = self.state
        return SwitchingState(st["frictionMode"], st["lastStickingPosition"], st["limitStopState"])

    def updated_state(self, law: ExtLaw, q: float, v: float) -> tuple[SwitchingState, float]:
        """The end-of-step update (``post_newton``) of the stored state at (q, v), and its switching error."""
        data = self.switching_state()
        immediate = bool(self.values[IMMEDIATE_SWITCHING]) or self.in_model_exchange
        return post_newton(law, q, v, data, data, immediate=immediate, closed=self.in_model_exchange)

    def acting_state(self, law: ExtLaw, q: float, v: float) -> SwitchingState:
        """The switching state the force uses at (q, v): the stored one, or with ``immediateSwitching``
        the one the end-of-step update gives there (in co-simulation)."""
        if self.values[IMMEDIATE_SWITCHING] and law.discontinuous and not self.in_model_exchange:
            return self.updated_state(law, q, v)[0]
        return self.switching_state()

    def indicators(self, q: float, v: float) -> dict[str, float]:
        law = self.law()
        lower = upper = friction = 0.0
        if self.values["activeConnector"] and law.useLimitStops:
            lower, upper = q - law.limitStopsLower, law.limitStopsUpper - q
            if self.in_model_exchange:  # in contact: the distance back to the stop, <= 0 once out of it
                contact = self.state["limitStopState"]
                lower, upper = (-lower if contact < 0 else lower), (-upper if contact > 0 else upper)
        if self.values["activeConnector"] and law.bristle_friction:
            f_max = law.fDynamicFriction + law.fStaticFrictionOffset
            if self.in_model_exchange:
                data = self.switching_state()
                friction = (f_max - abs(sticking_force(law, q, v, data.last_sticking_position))
                            if data.friction_mode == 0 else
                            f_max * v * _sign(data.friction_mode) / law.exponentialDecayStatic)
                return {indicator("lowerStop"): lower, indicator("upperStop"): upper, indicator("friction"): friction}
            data = self.updated_state(law, q, v)[0]
            if data.friction_mode != 0:
                friction = -f_max * abs(v) / law.exponentialDecayStatic
            elif self.values[IMMEDIATE_SWITCHING] and self.state["frictionMode"] != 0:
                # sticking again here: the margin is 0 (preload at the limit); the slipping value mirrored
                # through v = 0 instead, so the locator interpolates to the zero of v
                friction = f_max * abs(v) / law.exponentialDecayStatic
            else:
                friction = f_max - abs(sticking_force(law, q, v, data.last_sticking_position))
        return {indicator("lowerStop"): lower, indicator("upperStop"): upper, indicator("friction"): friction}

    def validate(self) -> None:
        vals, law = self.values, self.law()
        for name in ("factor0", "factor1"):
            if vals[name] == 0:
                raise self.error(name, vals[name], "may not be zero")
        friction = law.fDynamicFriction != 0 or law.fStaticFrictionOffset != 0
        if (law.frictionProportionalZone == 0 or law.useLimitStops) and friction and law.stickingStiffness == 0:
            raise self.error("stickingStiffness", 0.0, "may not be zero with fDynamicFriction or "
                             "fStaticFrictionOffset != 0 when frictionProportionalZone = 0 or useLimitStops")
        if law.discontinuous and vals["frictionMode_start"] != 0 and law.stickingStiffness == 0:
            raise self.error("stickingStiffness", 0.0, "may not be zero with frictionMode_start != 0 "
                             "(a switch to sticking divides by it)")
        super().validate()

    def factors(self) -> tuple[float, float]:
        return self.values["factor0"], self.values["factor1"]

    def element_force(self, q: float, v: float) -> float:
        return self.forces(q, v)[0]

    def law_parts(self, q: float, v: float) -> tuple[float, dict[str, float]]:
        f, f_friction, f_stop = self.forces(q, v)
        return f, {"f_friction": f_friction, "f_limitStop": f_stop}

    def force_derivatives(self, q: float, v: float) -> tuple[float, float]:
        if not self.values["activeConnector"]:
            return 0.0, 0.0
        if self.user_function() is not None:
            return super().force_derivatives(q, v)
        law = self.law()
        return ext_force_derivatives(law, q, v, self.acting_state(law, q, v))

    def forces(self, q: float, v: float) -> tuple[float, float, float]:
        vals = self.values
        if not vals["activeConnector"]:
            return 0.0, 0.0, 0.0
        if self.user_function() is None:
            law = self.law()
            return ext_force(law, q, v, self.acting_state(law, q, v))
        arguments = {name: vals[name] for name in USER_FUNCTION_NAMES[4:]}
        arguments.update(t=self.time, itemNumber=vals["itemNumber"], displacement=q, velocity=v)
        arguments.update({alias: arguments[name] for alias, name in USER_FUNCTION_ALIASES.items()})
        return self.call_user_function(**arguments), 0.0, 0.0

    def advance(self, current_time: float, step_size: float) -> None:
        law = self.law()
        if not (law.discontinuous and self.values["activeConnector"]):
            return
        q, v = self.relative()
        new, error = self.updated_state(law, q, v)
        self.state.update(frictionMode=new.friction_mode, lastStickingPosition=new.last_sticking_position,
                          limitStopState=new.limit_stop_state)
        self.state[SWITCHING_ERROR] = error

    def update_discrete_states(self) -> bool:
        """Event mode: the end-of-step update at the current inputs becomes the stored state, each switch taken
        where its indicator is <= 0 (FMI 2.0's side of 0): a stop is in contact from q = limitStopsUpper (or
        Lower) on (a penetration of 0 is stored as the least double of the stop's sign) and leaves it at q =
        limitStopsUpper again; sticking slips at a margin of 0 and slipping sticks at v = 0. A mode switched at
        this instant is not switched back at it (its new indicator may be 0 there too): so an importer that
        stops exactly on a zero (CVODE) finds the mode of the side the motion goes to, and no zero it would
        not report is left behind."""
        law = self.law()
        before = self.switching_state()
        stop_kept, friction_kept = (self.state["stopSwitchTime"] == self.time,
                                    self.state["frictionSwitchTime"] == self.time)
        self.advance(self.time, 0.0)
        if law.useLimitStops and self.values["activeConnector"]:
            q = self.relative()[0]
            touching = q == law.limitStopsUpper or q == law.limitStopsLower
            if before.limit_stop_state == 0 and self.state["limitStopState"] == 0 and touching:
                self.state["limitStopState"] = math.copysign(5e-324, 1.0 if q == law.limitStopsUpper else -1.0)
        after = self.switching_state()
        if (after.limit_stop_state == 0) != (before.limit_stop_state == 0):
            if stop_kept:
                self.state["limitStopState"] = before.limit_stop_state
            self.state["stopSwitchTime"] = self.time
        if (after.friction_mode == 0) != (before.friction_mode == 0):
            if friction_kept:
                self.state.update(frictionMode=before.friction_mode, lastStickingPosition=before.last_sticking_position)
            self.state["frictionSwitchTime"] = self.time
        return super().update_discrete_states()

    def compute_outputs(self) -> dict[str, float]:
        outputs = super().compute_outputs()
        law = self.law()
        if (self.values[IMMEDIATE_SWITCHING] and law.discontinuous and self.values["activeConnector"]
                and not self.in_model_exchange):
            outputs[SWITCHING_ERROR] = self.updated_state(law, *self.relative())[1]
        return outputs


RotationalSpringDamperExt = rotational_variant(
    CoordinateSpringDamperExt, "RotationalSpringDamperExt",
    "CoordinateSpringDamperExt for rotational coordinates: angles [rad], torques [N.m]",
    example_parameters={"stiffness": 50.0, "factor0": 2.0, "factor1": 0.5, "frictionProportionalZone": 0.05,
                        "fDynamicFriction": 2.0, "stickingStiffness": 100.0, "useLimitStops": True,
                        "limitStopsUpper": 1.0, "limitStopsLower": -1.0, "limitStopsStiffness": 1000.0,
                        "velocityOffset": 0.3, "itemNumber": 4})
