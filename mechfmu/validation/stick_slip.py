"""An independent solution of ``scenarios/stick_slip`` (scipy): m·x'' = −k·(x − v_d·t) − d·(x' − v_d) − f with
bristle friction f = k_b·(x − x_s) + d_b·x' while sticking (slip when |f| > f_d + f_so, in the direction of x'),
f = sign(x')·(f_d + f_so·exp(−|x'|/v_exp)) while slipping (stick where x' reaches 0, the bristles preloaded with
±(f_d + f_so)); the mass starts sticking at rest. Each phase is integrated by Radau at rtol 1e-12 (at most 1e-3 s a
step), its switch located by ``solve_ivp``'s event location."""
from __future__ import annotations

import math

import numpy as np


def stick_slip_solution(t_end: float, times: np.ndarray | None = None) -> tuple[list[float], np.ndarray | None]:
    """(the switching instants up to ``t_end`` [s], the mass position [m] at ``times`` (ascending, within
    [0, t_end]) from each phase's dense output; None without ``times``)."""
    from scipy.integrate import solve_ivp
    m, k, d, v_d, f_d, f_so, v_exp, k_b, d_b = 1.0, 100.0, 0.5, 0.1, 5.0, 5.0, 0.05, 1e4, 200.0
    f_max = f_d + f_so
    t, x, v, slip, x_s, instants = 0.0, 0.0, 0.0, 0.0, 0.0, []
    position = None if times is None else np.full(len(times), np.nan)
    while t < t_end:
        if slip == 0:
            def rhs(tt, z, x_s=x_s):
                return [z[1], (-k * (z[0] - v_d * tt) - d * (z[1] - v_d) - k_b * (z[0] - x_s) - d_b * z[1]) / m]

            def event(tt, z, x_s=x_s):
                return f_max - abs(k_b * (z[0] - x_s) + d_b * z[1])
        else:
            def rhs(tt, z, s=slip):
                friction = s * (f_d + f_so * math.exp(-abs(z[1]) / v_exp))
                return [z[1], (-k * (z[0] - v_d * tt) - d * (z[1] - v_d) - friction) / m]

            def event(tt, z, s=slip):
                return s * z[1]
        event.terminal, event.direction = True, -1  # type: ignore[attr-defined]
        sol = solve_ivp(rhs, (t, t_end), [x, v], method="Radau", rtol=1e-12, atol=1e-14, events=event, max_step=1e-3,
                        dense_output=times is not None)
        if times is not None and position is not None and (inside := (times >= t) & (times <= sol.t[-1])).any():
            position[inside] = sol.sol(times[inside])[0]
        if sol.status != 1:
            break
        t, (x, v) = float(sol.t_events[0][0]), map(float, sol.y_events[0][0])
        instants.append(t)
        if slip == 0:
            slip = math.copysign(1.0, v)
        else:
            x_s, slip = x - (slip * f_max - v * d_b) / k_b, 0.0
    return instants, position
