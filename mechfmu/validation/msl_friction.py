"""MSL 4.1's friction equations transcribed from its Modelica source (Interfaces.PartialFriction of both domains,
Rotational.Components.Clutch, Brake and BearingFriction, Translational.Components.Brake and SupportFriction), written
apart from our C law (components/native/friction.c) to check it.

Modes: −1 backward sliding, 0 stuck, 1 forward sliding, 2 free, 3 unknown (MSL's constants). ``Discrete`` is the
state MSL's pre() reads: (mode, startForward, startBackward, locked, free).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

UNKNOWN, FREE, FORWARD, STUCK, BACKWARD = 3, 2, 1, 0, -1


class Discrete(NamedTuple):
    mode: int
    start_forward: bool
    start_backward: bool
    locked: bool
    free: bool


def table_value(rows: np.ndarray, u: float) -> float:
    """MSL's CombiTable1D with smoothness LinearSegments and extrapolation LastTwoPoints: rows (u_i, y_i) with u
    increasing; one row: constant."""
    u_rows, y_rows = rows[:, 0], rows[:, 1]
    if len(u_rows) == 1:
        return float(y_rows[0])
    if u <= u_rows[0]:
        i = 0
    elif u >= u_rows[-1]:
        i = len(u_rows) - 2
    else:
        i = int(np.searchsorted(u_rows, u, side="right")) - 1
    return float(y_rows[i] + (y_rows[i + 1] - y_rows[i]) / (u_rows[i + 1] - u_rows[i]) * (u - u_rows[i]))


def friction_force(d: Discrete, w_rel: float, rows: np.ndarray, scale: float, lam: float,
                   backward: tuple[int, int] = (-1, -1)) -> float:
    """Clutch, Brake: f = if locked then sa (the reaction, lambda) elseif free then 0 else mu*cgeo*fn (``scale`` =
    cgeo*fn), mu = table_signs[2]*table(table_signs[1]*w_rel) with table_signs = {1,1} startForward, ``backward``
    startBackward (the Clutch's {1,-1}, the others' {-1,-1}), {1,1} pre(mode) == Forward, else {-1,-1};
    BearingFriction and SupportFriction: the same with the table the force (``scale`` = 1) and never free."""
    if d.locked:
        return lam
    if d.free:
        return 0.0
    signs = ((1, 1) if d.start_forward else backward if d.start_backward else (1, 1) if d.mode == FORWARD
             else (-1, -1))
    return signs[1] * table_value(rows, signs[0] * w_rel) * scale


def transient(d: Discrete) -> bool:
    """MSL's transient configuration: stuck, neither locked nor starting nor free (one event iteration long in MSL)."""
    return d.mode == STUCK and not (d.locked or d.start_forward or d.start_backward or d.free)


def path_parameter(d: Discrete, w_rel: float, a_rel: float, tau: float, tau0_max: float,
                   entry_sign: float | None = None) -> float:
    """sa from a_relfric = (if locked then 0 elseif free then sa elseif startForward then sa - tau0_max elseif
    startBackward then sa + tau0_max elseif pre(mode) == Forward then sa - tau0_max elseif pre(mode) == Backward
    then sa + tau0_max else sa - sign(w_relfric)*tau0_max), and tau = sa*unitTorque where locked. In the
    ``transient`` configuration, ``entry_sign``: sign(w_relfric) where it was entered, which the elements hold for a
    host that holds the configuration while its inputs move on (MSL's instant sees one w_relfric; None: w_rel's)."""
    if d.locked:
        return tau
    if d.free:
        return a_rel
    if d.start_forward or d.mode == FORWARD:
        return a_rel + tau0_max
    if d.start_backward or d.mode == BACKWARD:
        return a_rel - tau0_max
    return a_rel + (float(np.sign(w_rel)) if entry_sign is None else entry_sign) * tau0_max


def event_iteration(pre: Discrete, initial: bool, free: bool, w: float, sa: float, tau0: float, tau0_max: float,
                    w_small: float) -> Discrete:
    """PartialFriction's equations for startForward, startBackward, locked and mode, once."""
    start_forward = (pre.mode == STUCK and (sa > tau0_max or pre.start_forward and sa > tau0)
                     or pre.mode == BACKWARD and w > w_small or initial and w > 0)
    start_backward = (pre.mode == STUCK and (sa < -tau0_max or pre.start_backward and sa < -tau0)
                      or pre.mode == FORWARD and w < -w_small or initial and w < 0)
    locked = not free and not (pre.mode == FORWARD or start_forward or pre.mode == BACKWARD or start_backward)
    if free:
        mode = FREE
    elif (pre.mode in (FORWARD, FREE) or start_forward) and w > 0:
        mode = FORWARD
    elif (pre.mode in (BACKWARD, FREE) or start_backward) and w < 0:
        mode = BACKWARD
    else:
        mode = STUCK
    return Discrete(mode, bool(start_forward), bool(start_backward), locked, free)


class OneWay(NamedTuple):
    """OneWayClutch's discrete state: (stuck, locked, startForward, free)."""
    stuck: bool
    locked: bool
    start_forward: bool
    free: bool


#: MSL OneWayClutch's relative hysteresis epsilon
EPS0 = 1.0e-4


def one_way_point(d: OneWay, u: float, w_rel: float, a_rel: float, lam: float, rows: np.ndarray, peak: float,
                  cgeo: float, fn_max: float) -> dict[str, float]:
    """OneWayClutch's continuous equations with ``d`` held: fn = if free then 0 else fn_max*u; tau0 = mu0*cgeo*fn;
    tau0_max = if free then eps0*mu0*cgeo*fn_max else max(peak, 1 + eps0)*tau0; mu = table(w_rel); a_rel = if
    locked then 0 else sa - tau0; tau = if locked then sa else if free then 0 else mu*cgeo*fn; lossPower = if stuck
    then 0 else tau*w_rel."""
    mu0 = table_value(rows, 0.0)
    fn = 0.0 if d.free else fn_max * u
    tau0 = mu0 * cgeo * fn
    tau0_max = EPS0 * mu0 * cgeo * fn_max if d.free else max(peak, 1 + EPS0) * tau0
    tau = lam if d.locked else 0.0 if d.free else table_value(rows, w_rel) * cgeo * fn
    sa = tau if d.locked else a_rel + tau0
    return {"fn": fn, "tau0": tau0, "tau0_max": tau0_max, "tau": tau, "sa": sa,
            "lossPower": 0.0 if d.stuck else tau * w_rel}


def one_way_iteration(pre: OneWay, initial: bool, w_rel: float, point: dict[str, float], w_small: float,
                      free: bool) -> OneWay:
    """startForward = pre(stuck) and (sa > tau0_max or pre(startForward) and sa > tau0 or w_rel > w_small) or
    initial() and w_rel > 0; locked = pre(stuck) and not startForward; stuck = locked or w_rel <= 0."""
    sa, tau0, tau0_max = point["sa"], point["tau0"], point["tau0_max"]
    start_forward = (pre.stuck and (sa > tau0_max or pre.start_forward and sa > tau0 or w_rel > w_small)
                     or initial and w_rel > 0)
    locked = pre.stuck and not start_forward
    return OneWay(locked or w_rel <= 0, locked, bool(start_forward), free)
