"""The law of CoordinateSpringDamperExt (``coordinate_spring_damper_ext``): Stribeck and bristle
friction, limit stops, and Exudyn's end-of-step switching of its data node (``post_newton``), as
exudyn 1.13.6's ObjectConnectorCoordinateSpringDamperExt computes them. q is the displacement
(``f1·flange_b.s − f0·flange_a.s``), v its rate.

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

import math
from typing import NamedTuple


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
                start: SwitchingState, immediate: bool = False, closed: bool = False) -> tuple[SwitchingState, float]:
    """Exudyn's PostNewtonStep: new switching state and the switching error [N] at (q, v).

    ``data`` is the current state, ``start`` the state at the start of the step. The friction
    state machine runs whenever this is called (also with zero friction parameters); the error may
    be negative when sticking switches to slipping (Exudyn's solver takes max(0, error)). Sticking
    again preloads the bristles with the last slip force (``start``'s mode, Exudyn's rule), or with
    ``immediate`` (the switch located at v = 0) with its limit there, ±(f_d + f_so). ``closed`` (Model
    Exchange's event mode): each switch is taken where the quantity that announces it reaches its threshold,
    not only past it (FMI 2.0 puts an indicator's 0 on its z <= 0 side): slipping from a sticking force of
    exactly f_d + f_so (in the bristle force's direction where v = 0), sticking again at v = 0."""
    error = 0.0
    mode, x_lsp = data.friction_mode, data.last_sticking_position
    if mode == 0:
        new_x = x_lsp
        f_stick = sticking_force(law, q, v, x_lsp)
        limit = law.fDynamicFriction + law.fStaticFrictionOffset
        if abs(f_stick) > limit or (closed and abs(f_stick) == limit and limit > 0):
            slip = law_stribeck(law, v)
            error += abs(f_stick) - abs(slip)
            new_mode = slip if slip != 0 or not closed else math.copysign(limit, f_stick)
        else:
            new_mode = 0.0
    else:
        slip = law_stribeck(law, v)
        new_x, new_mode = q, slip
        if v * mode < 0 or (closed and v == 0):
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
