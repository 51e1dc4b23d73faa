"""CoordinateSpringDamperExt: Exudyn ObjectConnectorCoordinateSpringDamperExt (seed 000, REFERENCES §1.3).

Follows exudyn 1.13.6's code. Marker m0 = ``flange_a``, marker m1 = ``flange_b``; factors f0, f1:

    q = f1·flange_b.s − f0·flange_a.s        (output s_rel, Exudyn Displacement)
    v = f1·flange_b.v − f0·flange_a.v        (output v_rel, Exudyn Velocity)
    f = k·(q − x_off) + d·(v − v_off) + f_friction + f_limitStop          (output f, tension positive)
    flange_a.f = −f0·f,  flange_b.f = +f1·f  (Modelica cut forces; Exudyn applies +f0·f on m0, −f1·f on m1)
    flange_x.c, flange_x.d, flange_x.f_rate  (tangents, components/connector.py: analytic, numerical
                                              for a user function)

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

User function (``springForceUserFunction``, an expression): replaces the whole law (no friction, no
stops are added). Names: ``t``, ``itemNumber``, ``displacement`` (or ``u``), ``velocity`` (or ``v``),
``stiffness`` (``k``), ``damping`` (``d``), ``offset``, ``velocityOffset``, ``fDynamicFriction``,
``fStaticFrictionOffset``, ``exponentialDecayStatic``, ``fViscousFriction``, ``frictionProportionalZone``
— the 13 values Exudyn passes after ``mbs`` (the seed's 14 arguments).

End-of-step switching (Exudyn's PostNewton step): if the connector is active and discontinuous
(bristle friction or limit stops), every ``do_step`` ends with ``post_newton`` at the current inputs (the
step's end point as the connector sees it: inputs are held over the step). It updates the data
values (friction mode, last sticking position, limit-stop state; outputs ``frictionMode``,
``lastStickingPosition``, ``limitStopState``, part of the FMU state) and outputs the switching error
``switchingError`` [N], the force jump the new state causes. Exudyn repeats a step while the largest
error exceeds ``discontinuous.iterationTolerance`` (1 N) and otherwise lets the new state act from
the next step; an iterative master can do the same with rollback. In Exudyn the start-of-step data
can differ from the current data after a repeated step; here a repeated step starts from the
restored state, so both are the data at the start of the step. Initial data values are the
parameters ``frictionMode_start``, ``lastStickingPosition_start``, ``limitStopState_start`` (Exudyn's
data node initial coordinates).

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
the stored state. The indicators are those of the stored state: the stops' as above; friction while sticking
the margin ``f_d + f_so − |sticking force|``, while slipping ``−(f_d + f_so)·v·sign(frictionMode)/v_exp``
(< 0 while v keeps the slip's direction, > 0 once it has reversed). So a stop acts exactly while q is beyond
it, slipping starts where the margin reaches 0 and sticking where v does: the laws Exudyn's end-of-step
switching approaches as its step shrinks (it switches up to one step late, and sticks again preloaded with
the last step's slip force, which tends to ±(f_d + f_so) as v -> 0); tests/test_model_exchange_ext.py
measures the convergence.

Seed text vs exudyn 1.13.6 code (this component follows the code):
1. The seed's "CASE 2: frictionProportionalZone != 0" for the bristle model means == 0.
2. The seed says sticking uses k_limits, d_limits; code and formula use stickingStiffness/Damping.
3. velocityOffset: 1.13.6 applies it to the damping term only (friction uses v, not v − v_off);
   exudyn 1.11.0 ignored it.
4. Limit-stop force from the stored state (switches one step late, may pull while leaving a stop
   until the next switching); the seed writes it as a function of q.
5. Regularized friction with limit stops keeps the regularized force; the bristle bookkeeping
   still runs and can add (meaningless) switching error, as in the code.
6. Viscous friction alone (f_d = f_so = 0) in bristle mode is never applied.
7. The user function takes 14 arguments (seed: "8 parameters"); friction and stops are not
   added to it, but switching still runs when friction or stop parameters are set.
8. exudyn 1.13.6 names: fDynamicFriction → dynamicFrictionForce, fStaticFrictionOffset →
   staticFrictionOffsetForce, fViscousFriction → viscousFrictionFactor (seed names used here).
Exudyn's consistency checks are parameter errors here: factor0, factor1 != 0; stickingStiffness != 0
with f_d or f_so != 0 when v_reg == 0 or useLimitStops. One more (a division by zero in Exudyn):
frictionMode_start != 0 needs stickingStiffness != 0 when the connector switches.

Units are translational (m, N); ``RotationalSpringDamperExt`` is the same law in rad, N.m.
Invariant: f0·flange_b.f + f1·flange_a.f = 0 (virtual work: the forces do no work through the gear).
"""
from __future__ import annotations

import math
from typing import NamedTuple

from .base import Output, Param, rotational_variant
from .connector import FLANGE_INPUT_NAMES, UserFunctionConnector
from .ports import IMMEDIATE_SWITCHING, SWITCHING_ERROR, indicator

USER_FUNCTION_NAMES = ("t", "itemNumber", "displacement", "velocity", "stiffness", "damping", "offset",
                       "velocityOffset", "fDynamicFriction", "fStaticFrictionOffset",
                       "exponentialDecayStatic", "fViscousFriction", "frictionProportionalZone")
USER_FUNCTION_ALIASES = {"u": "displacement", "v": "velocity", "k": "stiffness", "d": "damping"}


class SwitchingState(NamedTuple):
    """Exudyn's data node: friction mode [N] (0 = stick, else signed slip force), last sticking
    position [m], limit-stop state [m] (0 free, <0 / >0 penetration below / above the stops)."""
    friction_mode: float
    last_sticking_position: float
    limit_stop_state: float


class ExtLaw(NamedTuple):
    """The force-law parameters (Exudyn's names and units)."""
    stiffness: float = 0.0
    damping: float = 0.0
    offset: float = 0.0
    velocityOffset: float = 0.0
    fDynamicFriction: float = 0.0
    fStaticFrictionOffset: float = 0.0
    stickingStiffness: float = 0.0
    stickingDamping: float = 0.0
    exponentialDecayStatic: float = 1e-3
    fViscousFriction: float = 0.0
    frictionProportionalZone: float = 0.0
    limitStopsUpper: float = 0.0
    limitStopsLower: float = 0.0
    limitStopsStiffness: float = 0.0
    limitStopsDamping: float = 0.0
    useLimitStops: bool = False

    @property
    def bristle_friction(self) -> bool:
        return self.frictionProportionalZone == 0 and (self.fDynamicFriction != 0 or self.fStaticFrictionOffset != 0)

    @property
    def discontinuous(self) -> bool:
        """Exudyn's HasDiscontinuousIteration: the connector has switching state."""
        return self.bristle_friction or self.useLimitStops


def _sign(x: float) -> float:
    return 1.0 if x > 0 else (-1.0 if x < 0 else 0.0)


def stribeck(v: float, f_d: float, f_so: float, f_v: float, v_exp: float, v_reg: float) -> float:
    """Regularized Stribeck friction force [N] at relative velocity v [m/s] (ExuPhysics::StribeckFunction)."""
    if v_reg != 0 and abs(v) <= v_reg:
        return (f_d + f_so) * v / v_reg
    w = abs(v) - v_reg
    static = f_so * math.exp(-w / v_exp) if v_exp != 0 else f_so
    return _sign(v) * (f_d + static + f_v * w)


def stribeck_slope(v: float, f_d: float, f_so: float, f_v: float, v_exp: float, v_reg: float) -> float:
    """dS/dv [N.s/m] of ``stribeck`` (at v = 0 with v_reg = 0, where S jumps, the slope beside it)."""
    if v_reg != 0 and abs(v) <= v_reg:
        return (f_d + f_so) / v_reg
    w = abs(v) - v_reg
    return f_v - (f_so / v_exp * math.exp(-w / v_exp) if v_exp != 0 else 0.0)


def law_stribeck(law: ExtLaw, v: float) -> float:
    return stribeck(v, law.fDynamicFriction, law.fStaticFrictionOffset, law.fViscousFriction,
                    law.exponentialDecayStatic, law.frictionProportionalZone)


def sticking_force(law: ExtLaw, q: float, v: float, x_lsp: float) -> float:
    """Bristle force [N] while sticking at x_lsp."""
    return (q - x_lsp) * law.stickingStiffness + v * law.stickingDamping


def friction_force(law: ExtLaw, q: float, v: float, data: SwitchingState) -> float:
    """Friction part of f [N] during a step (the slip direction is frozen to the stored mode)."""
    if law.frictionProportionalZone != 0:
        return law_stribeck(law, v)
    if not law.bristle_friction:
        return 0.0
    if data.friction_mode == 0:
        return sticking_force(law, q, v, data.last_sticking_position)
    return _sign(data.friction_mode) * abs(law_stribeck(law, v))


def limit_stop_force(law: ExtLaw, q: float, v: float, data: SwitchingState) -> float:
    """Limit-stop part of f [N], from the stored limit-stop state."""
    if not law.useLimitStops or data.limit_stop_state == 0:
        return 0.0
    stop = law.limitStopsLower if data.limit_stop_state < 0 else law.limitStopsUpper
    return (q - stop) * law.limitStopsStiffness + v * law.limitStopsDamping


def ext_force(law: ExtLaw, q: float, v: float, data: SwitchingState) -> tuple[float, float, float]:
    """(f, f_friction, f_limitStop) [N] of an active connector without user function."""
    f_friction = friction_force(law, q, v, data)
    f_stop = limit_stop_force(law, q, v, data)
    return (law.stiffness * (q - law.offset) + law.damping * (v - law.velocityOffset) + f_friction + f_stop,
            f_friction, f_stop)


def ext_force_derivatives(law: ExtLaw, q: float, v: float, data: SwitchingState) -> tuple[float, float]:
    """(∂f/∂q, ∂f/∂v) of ``ext_force`` with the switching state held."""
    f_q, f_v = law.stiffness, law.damping
    slope = stribeck_slope(v, law.fDynamicFriction, law.fStaticFrictionOffset, law.fViscousFriction,
                           law.exponentialDecayStatic, law.frictionProportionalZone)
    if law.frictionProportionalZone != 0:
        f_v += slope
    elif law.bristle_friction:
        if data.friction_mode == 0:
            f_q += law.stickingStiffness
            f_v += law.stickingDamping
        else:
            f_v += _sign(data.friction_mode) * _sign(law_stribeck(law, v)) * slope
    if law.useLimitStops and data.limit_stop_state != 0:
        f_q += law.limitStopsStiffness
        f_v += law.limitStopsDamping
    return f_q, f_v


def _within_limit(law: ExtLaw, q: float, v: float, x_lsp: float, preload: float) -> float:
    """x_lsp moved by the fewest ulps toward q so that the sticking force at (q, v) is at most the
    limit f_d + f_so (the preload ±(f_d + f_so) of sticking again, ``immediate``). Rounding can leave it a
    few ulps above: the sticking margin, the friction event indicator, would then be negative (-4e-14 N)
    where it is 0, hiding the switch from the event locator, and the next update at the same inputs would
    slip again."""
    limit = law.fDynamicFriction + law.fStaticFrictionOffset
    toward = math.inf if preload > 0 else -math.inf  # a larger x_lsp lowers (q - x_lsp)·k_mu
    for _ in range(64):
        if abs(sticking_force(law, q, v, x_lsp)) <= limit:
            break
        x_lsp = math.nextafter(x_lsp, toward)
    return x_lsp


def post_newton(law: ExtLaw, q: float, v: float, data: SwitchingState,
                start: SwitchingState, immediate: bool = False) -> tuple[SwitchingState, float]:
    """Exudyn's PostNewtonStep: new switching state and the switching error [N] at (q, v).

    ``data`` is the current state, ``start`` the state at the start of the step. The friction
    state machine runs whenever this is called (also with zero friction parameters); the error may
    be negative when sticking switches to slipping (Exudyn's solver takes max(0, error)). Sticking
    again preloads the bristles with the last slip force (``start``'s mode, Exudyn's rule), or with
    ``immediate`` (the switch located at v = 0) with its limit there, ±(f_d + f_so)."""
    error = 0.0
    mode, x_lsp = data.friction_mode, data.last_sticking_position
    if mode == 0:
        new_x = x_lsp
        f_stick = sticking_force(law, q, v, x_lsp)
        if abs(f_stick) > law.fDynamicFriction + law.fStaticFrictionOffset:
            slip = law_stribeck(law, v)
            error += abs(f_stick) - abs(slip)
            new_mode = slip
        else:
            new_mode = 0.0
    else:
        slip = law_stribeck(law, v)
        new_x, new_mode = q, slip
        if v * mode < 0:
            if start.friction_mode == 0:
                new_x, new_mode = start.last_sticking_position, 0.0
                error += abs(abs(slip) - abs(sticking_force(law, q, v, x_lsp)))
            else:
                preload = (math.copysign(law.fDynamicFriction + law.fStaticFrictionOffset, start.friction_mode)
                           if immediate else start.friction_mode)
                new_x = q - (preload - v * law.stickingDamping) / law.stickingStiffness
                if immediate:
                    new_x = _within_limit(law, q, v, new_x, preload)
                error += abs(start.friction_mode - slip)
                new_mode = 0.0
    contact = 0.0
    if law.useLimitStops:
        c, k_ls = data.limit_stop_state, law.limitStopsStiffness
        if c < 0:
            contact = 0.0 if q > law.limitStopsLower else q - law.limitStopsLower
            if q > law.limitStopsLower:
                error += abs(c * k_ls)
        elif c > 0:
            contact = 0.0 if q < law.limitStopsUpper else q - law.limitStopsUpper
            if q < law.limitStopsUpper:
                error += abs(c * k_ls)
        elif q > law.limitStopsUpper:
            contact = q - law.limitStopsUpper
            error += abs(contact * k_ls)
        elif q < law.limitStopsLower:
            contact = q - law.limitStopsLower
            error += abs(contact * k_ls)
    return SwitchingState(new_mode, new_x, contact), error


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
        Output(indicator("lowerStop"), "m", "Event indicator q - limitStopsLower (< 0 in contact; 0 without stops)",
               ("flange_a.s", "flange_b.s")),
        Output(indicator("upperStop"), "m", "Event indicator limitStopsUpper - q (< 0 in contact; 0 without stops)",
               ("flange_a.s", "flange_b.s")),
        Output(indicator("friction"), "N", "Event indicator of stick/slip (bristle model): sticking margin "
               "f_d + f_so - |sticking force| >= 0, or -(f_d + f_so)*|v|/v_exp while slipping (immediateSwitching: "
               "+(f_d + f_so)*|v|/v_exp where v has reversed and it sticks again); 0 without",
               FLANGE_INPUT_NAMES),
    )
    initial_state = {"frictionMode": 0.0, "lastStickingPosition": 0.0, "limitStopState": 0.0,
                     SWITCHING_ERROR: 0.0}

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
        return post_newton(law, q, v, data, data, immediate=immediate)

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
        if self.values["activeConnector"] and law.bristle_friction:
            f_max = law.fDynamicFriction + law.fStaticFrictionOffset
            if self.in_model_exchange:
                data = self.switching_state()
                friction = (f_max - abs(sticking_force(law, q, v, data.last_sticking_position))
                            if data.friction_mode == 0 else
                            -f_max * v * _sign(data.friction_mode) / law.exponentialDecayStatic)
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
        """Event mode: the end-of-step update at the current inputs becomes the stored state. A stop is in
        contact from q = limitStopsUpper (or Lower) on, where its indicator is 0 and so, for FMI 2.0, on the
        contact side (Exudyn's update frees it there): a penetration of 0 is stored as the least double of the
        stop's sign."""
        self.advance(self.time, 0.0)
        law = self.law()
        if law.useLimitStops and self.values["activeConnector"] and self.state["limitStopState"] == 0:
            q = self.relative()[0]
            if q == law.limitStopsUpper or q == law.limitStopsLower:
                self.state["limitStopState"] = math.copysign(5e-324, 1.0 if q == law.limitStopsUpper else -1.0)
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
