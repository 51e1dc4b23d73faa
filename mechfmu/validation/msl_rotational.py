"""Independent transcriptions of MSL 4.1's Rotational compliant elements and a solution of
Modelica.Mechanics.Rotational.Examples.Backlash (scenarios/msl/Backlash), with numpy and scipy only (nothing of
mechfmu): the laws below are written from the Modelica text of ``SpringDamper``, ``ElastoBacklash`` and
``ElastoBacklash2`` (if-expressions in their order; ``initial()`` is the initialization's characteristic).

The example: three inertias (J = 5 kg.m2, phi(0) = pi/2, w(0) = 0), each at flange_b of an element whose
flange_a is a fixed housing at 0: phi_rel = phi, w_rel = w and J·der(w) = −tau(phi_rel, w_rel), for
springDamper (c = 2e4 N.m/rad, d = 50 N.m.s/rad), elastoBacklash and elastoBacklash2 (the same c and d, b = pi/4).
Each is integrated by itself (DOP853, rtol 1e-13), one smooth piece of its law at a time: the piece (gap, upper or
lower contact; in contact whether the element pulls, and ElastoBacklash's clamp of the damper at tau_c) is frozen
and its smooth extension integrated up to the zero of the first switching function (solve_ivp's event location),
where the next piece starts, so no step crosses a kink or a jump of the law.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.integrate import solve_ivp

B_EPS = 1e-10  # MSL's minimum backlash
#: the example's numbers
J, C, D, B, PHI0 = 5.0, 2e4, 50.0, math.pi / 4, math.pi / 2
RTOL, ATOL = 1e-13, 1e-15


def spring_damper(phi_rel, w_rel, c, d, phi_rel0=0.0):
    """MSL Rotational SpringDamper: (tau, lossPower)."""
    tau_c = c * (phi_rel - phi_rel0)
    tau_d = d * w_rel
    return tau_c + tau_d, tau_d * w_rel


def elasto_backlash(phi_rel, w_rel, c, d, b, phi_rel0=0.0, jumping=False, initial=False):
    """MSL Rotational ElastoBacklash (``jumping``: ElastoBacklash2): (tau, lossPower); ``initial``: the
    characteristic of ``initial()``."""
    b_max = b / 2
    b_min = -b_max
    phi_diff = phi_rel - phi_rel0
    tau_d = d * w_rel
    if initial:
        if phi_diff > 1.5 * b_max:
            tau_c = c * (phi_diff - b_max)
        elif phi_diff < 1.5 * b_min:
            tau_c = c * (phi_diff - b_min)
        else:
            tau_c = (c / 3) * phi_diff
        return tau_c + tau_d, tau_d * w_rel
    if abs(b) <= B_EPS:
        tau_c = c * phi_diff
    elif phi_diff > b_max:
        tau_c = c * (phi_diff - b_max)
    elif phi_diff < b_min:
        tau_c = c * (phi_diff - b_min)
    else:
        tau_c = 0.0
    if abs(b) <= B_EPS:
        return tau_c + tau_d, tau_d * w_rel
    if phi_diff > b_max:
        if tau_c + tau_d <= 0:
            return 0.0, 0.0
        return (tau_c + tau_d, tau_d * w_rel) if jumping else (tau_c + min(tau_c, tau_d), min(tau_c, tau_d) * w_rel)
    if phi_diff < b_min:
        if tau_c + tau_d >= 0:
            return 0.0, 0.0
        return (tau_c + tau_d, tau_d * w_rel) if jumping else (tau_c + max(tau_c, tau_d), max(tau_c, tau_d) * w_rel)
    return 0.0, 0.0


def _piece(phi, w, jumping):
    """The smooth piece of the law at (phi, w): (side, what the torque is there: 'none', 'both', 'spring')."""
    b_max = B / 2
    side = 1 if phi > b_max else -1 if phi < -b_max else 0
    if side == 0:
        return 0, "none"
    tau_c = C * (phi - side * b_max)
    tau_d = D * w
    if (tau_c + tau_d) * side <= 0:
        return side, "none"
    clamped = not jumping and (tau_c <= tau_d if side == 1 else tau_c >= tau_d)
    return side, "spring" if clamped else "both"


#: what each switching function of a piece stands for (MSL's relation, or ElastoBacklash's noEvent clamp)
SWITCHES = ("upper", "lower", "transmitting", "clamp")


def _piecewise(jumping, times):
    """(phi, w) of an inertia on elastoBacklash (``jumping``: elastoBacklash2) at ``times``, and its switches:
    (time, one of ``SWITCHES``)."""
    def law(t, y):
        return [y[1], -elasto_backlash(y[0], y[1], C, D, B, jumping=jumping)[0] / J]

    t0, y0, pieces, switches = 0.0, np.array([PHI0, 0.0]), [], []
    end_time = times[-1]
    while t0 < end_time:
        side, what = _piece(y0[0], y0[1], jumping)

        def rhs(t, y, side=side, what=what):
            tau_c = C * (y[0] - side * B / 2)
            tau = {"none": 0.0, "both": tau_c + D * y[1], "spring": 2 * tau_c}[what]
            return [y[1], -tau / J]

        events = [lambda t, y: y[0] - B / 2, lambda t, y: y[0] + B / 2]
        if side != 0:
            events.append(lambda t, y, side=side: C * (y[0] - side * B / 2) + D * y[1])
            if not jumping:
                events.append(lambda t, y, side=side: C * (y[0] - side * B / 2) - D * y[1])
        for event in events:
            event.terminal = True
        sol = solve_ivp(rhs, (t0, end_time), y0, method="DOP853", rtol=RTOL, atol=ATOL, events=events,
                        dense_output=True)
        end = sol.t[-1]
        inside = times[(times >= t0) & (times <= end)]
        if pieces and inside.size and inside[0] == pieces[-1][0][-1]:
            inside = inside[1:]
        pieces.append((inside, sol.sol(inside) if inside.size else np.zeros((2, 0))))
        if end >= end_time:
            break
        switches.append((end, SWITCHES[next(k for k, hit in enumerate(sol.t_events) if len(hit))]))
        # just past the switch with the law itself, so that the next piece does not stop at once
        past = solve_ivp(law, (end, end + 1e-9), sol.y[:, -1], method="DOP853", rtol=RTOL, atol=ATOL)
        t0, y0 = past.t[-1], past.y[:, -1]
    values = np.concatenate([p[1] for p in pieces], axis=1)
    return values, switches


def backlash_example(times) -> tuple[dict[str, np.ndarray], list[tuple[float, str]]]:
    """The example's signals at ``times`` [s] (ascending, from 0), each element's ``phi_rel`` and ``w_rel``, and
    the switches of elastoBacklash and elastoBacklash2 up to the last time: (time [s], ``element.switch``) in
    time order, ``switch`` one of ``SWITCHES``."""
    times = np.asarray(times, dtype=float)
    linear = solve_ivp(lambda t, y: [y[1], -spring_damper(y[0], y[1], C, D)[0] / J], (0.0, times[-1]),
                       [PHI0, 0.0], method="DOP853", rtol=RTOL, atol=ATOL, t_eval=times)
    out, switches = {}, []
    for name, jumping in (("elastoBacklash", False), ("elastoBacklash2", True)):
        (out[f"{name}.phi_rel"], out[f"{name}.w_rel"]), found = _piecewise(jumping, times)
        switches += [(t, f"{name}.{what}") for t, what in found]
    out["springDamper.phi_rel"], out["springDamper.w_rel"] = linear.y
    return out, sorted(switches)
