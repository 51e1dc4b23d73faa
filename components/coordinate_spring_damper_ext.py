"""CoordinateSpringDamperExt: Exudyn ObjectConnectorCoordinateSpringDamperExt.

Follows exudyn 1.13.6's code. Marker m0 = ``flange_a``, marker m1 = ``flange_b``; factors f0, f1:

    q = f1·flange_b.s − f0·flange_a.s        (output s_rel, Exudyn Displacement)
    v = f1·flange_b.v − f0·flange_a.v        (output v_rel, Exudyn Velocity)
    f = k·(q − x_off) + d·(v − v_off) + f_friction + f_limitStop          (output f, tension positive)
    flange_a.f = −f0·f,  flange_b.f = +f1·f  (Modelica cut forces; Exudyn applies +f0·f on m0, −f1·f on m1)
    flange_x.c, flange_x.d, flange_x.f_rate  (tangents: analytic, central differences for a user function)

f_friction and f_limitStop, and the end-of-step switching of the friction mode, last sticking position
and limit-stop state, are below (Stribeck and bristle friction, limit stops, Exudyn's PostNewton step, and
where this follows Exudyn's code rather than its documentation); the law is components/native/
coordinate_spring_damper_ext.c.

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
Sign of ``offset`` (x_off), as CoordinateSpringDamper's and MSL's ``s_rel0``: the spring part is relaxed where
q = offset, q measured from flange_a to flange_b. E.g. stiffness 1000 N/m, a housing at 0 on flange_a, a flange
at 0.04 m on flange_b, factors 1: offset = 0.04 m is relaxed (k·(q − x_off) = 0); offset = −0.04 m is an 80 N
tension preload (1000·(0.04 + 0.04)). The factors act before the offset: with factor1 = 2 that position is
relaxed at offset = 0.08 m.
Invariant: f0·flange_b.f + f1·flange_a.f = 0 (virtual work: the forces do no work through the gear).

Friction (``fDynamicFriction`` f_d, ``fStaticFrictionOffset`` f_so, ``fViscousFriction`` f_v,
``exponentialDecayStatic`` v_exp, ``frictionProportionalZone`` v_reg), Stribeck law
``S(v) = (f_d+f_so)·v/v_reg`` for |v| <= v_reg, else ``sign(v)·(f_d + f_so·exp(−(|v|−v_reg)/v_exp) + f_v·(|v|−v_reg))``:

* v_reg != 0 (regularized): f_friction = S(v); no switching state.
* v_reg == 0 and (f_d or f_so != 0) (bristle model): with the friction mode s (0 = stick, else the
  signed slip force) and the last sticking position x_lsp,
  f_friction = (q − x_lsp)·stickingStiffness + v·stickingDamping if s == 0, else sign(s)·|S(v)|.

Limit stops (``useLimitStops``): with the limit-stop state c (0 free, <0 below ``limitStopsLower``,
>0 above ``limitStopsUpper``), f_limitStop = (q − s_lo)·k_ls + v·d_ls if c < 0, (q − s_up)·k_ls + v·d_ls
if c > 0, else 0. The force uses the stored state, not the current q (Exudyn's code).

End-of-step switching (Exudyn's PostNewton step): if the connector is active and discontinuous
(bristle friction or limit stops), every ``do_step`` ends with that update (``post_newton`` of the C law) at the
current inputs (the step's end point as the connector sees it: inputs are held over the step). It updates the data
values (friction mode, last sticking position, limit-stop state; outputs ``frictionMode``,
``lastStickingPosition``, ``limitStopState``, part of the FMU state) and outputs the switching error
``switchingError`` [N], the force jump the new state causes. Exudyn repeats a step while the largest
error exceeds ``discontinuous.iterationTolerance`` (1 N) and otherwise lets the new state act from
the next step; an iterative master can do the same with rollback. In Exudyn the start-of-step data
can differ from the current data after a repeated step; here a repeated step starts from the
restored state, so both are the data at the start of the step. Initial data values are the
parameters ``frictionMode_start``, ``lastStickingPosition_start``, ``limitStopState_start`` (Exudyn's
data node initial coordinates).

Exudyn's documentation vs its 1.13.6 code (this law follows the code):
1. The documentation's "CASE 2: frictionProportionalZone != 0" for the bristle model means == 0.
2. The documentation says sticking uses k_limits, d_limits; code and formula use stickingStiffness/Damping.
3. velocityOffset: 1.13.6 applies it to the damping term only (friction uses v, not v − v_off);
   exudyn 1.11.0 ignored it.
4. Limit-stop force from the stored state (switches one step late, may pull while leaving a stop
   until the next switching); the documentation writes it as a function of q.
5. Regularized friction with limit stops keeps the regularized force; the bristle bookkeeping
   still runs and can add (meaningless) switching error, as in the code.
6. Viscous friction alone (f_d = f_so = 0) in bristle mode is never applied.
7. The user function takes 14 arguments (documentation: "8 parameters"); friction and stops are not
   added to it, but switching still runs when friction or stop parameters are set.
8. exudyn 1.13.6 names: fDynamicFriction → dynamicFrictionForce, fStaticFrictionOffset →
   staticFrictionOffsetForce, fViscousFriction → viscousFrictionFactor (the documentation's names used here).
Exudyn's consistency checks are parameter errors here: factor0, factor1 != 0; stickingStiffness != 0
with f_d or f_so != 0 when v_reg == 0 or useLimitStops. One more (a division by zero in Exudyn):
frictionMode_start != 0 needs stickingStiffness != 0 when the connector switches.
"""
from __future__ import annotations

from .base import Output, Param, rotational_variant
from .connector import FLANGE_INPUT_NAMES, Connector
from .model_exchange import NO_TIME
from .modelica import ModelicaEquivalent
from .native_component import NativeComponent
from .ports import IMMEDIATE_SWITCHING, SWITCHING_ERROR, indicator


class CoordinateSpringDamperExt(NativeComponent, Connector):
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
        Param("offset", 0.0, "m", "Offset x_off: the spring part is relaxed where q = offset (MSL s_rel0)"),
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
    modelica = (ModelicaEquivalent(
        "Modelica.Mechanics.Translational.Components.MassWithStopAndFriction",
        (("m", "Mass.m"), ("L", "Mass.L"), ("s.start", "Mass.s_start"), ("v.start", "Mass.v_start"),
         ("smin", "limitStopsLower"), ("smax - L", "limitStopsUpper"), ("F_Coulomb", "fDynamicFriction"),
         ("F_Stribeck", "fStaticFrictionOffset"), ("F_prop", "fViscousFriction"), ("1/fexp", "exponentialDecayStatic")),
        (("useLimitStops", "true"), ("frictionProportionalZone", "0"), ("stiffness", "0"), ("damping", "0")),
        "three FMUs: a Fixed (s0 = 0) wired to flange_a, a Mass whose flange_a is wired to flange_b, so q = s - L/2 "
        "(MSL's stops hold s - L/2 >= smin and s + L/2 <= smax). MSL's stops are hard and inelastic (v reset to 0) "
        "and its stuck phase exact; here the stops are stiff spring-dampers (limitStopsStiffness, "
        "limitStopsDamping) and sticking is the bristle model (stickingStiffness, stickingDamping): choose them "
        "stiff. v_small has no counterpart; fexp = 0 (no decay) is a very large exponentialDecayStatic; with "
        "F_Coulomb = F_Stribeck = 0 give F_prop as damping (the bristle model applies no viscous friction alone)",
        ("Modelica.Mechanics.Translational.Stop",)),)
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


RotationalSpringDamperExt = rotational_variant(
    CoordinateSpringDamperExt, "RotationalSpringDamperExt",
    "CoordinateSpringDamperExt for rotational coordinates: angles [rad], torques [N.m]",
    example_parameters={"stiffness": 50.0, "factor0": 2.0, "factor1": 0.5, "frictionProportionalZone": 0.05,
                        "fDynamicFriction": 2.0, "stickingStiffness": 100.0, "useLimitStops": True,
                        "limitStopsUpper": 1.0, "limitStopsLower": -1.0, "limitStopsStiffness": 1000.0,
                        "velocityOffset": 0.3, "itemNumber": 4})
