"""Independent solutions of the MSL 4.1 Translational examples shipped as scenarios (scenarios/msl): the
compared signals (``reference/comparisonSignals.txt``) at any times, from the Modelica models' equations
written out by hand below, with numpy and scipy only (nothing of mechfmu).

Modelica.Mechanics.Translational's laws used (SI units: m, m/s, N, kg, N/m, N.s/m):

- a Mass (m, length L) with centre s has flanges at s − L/2 (flange_a) and s + L/2 (flange_b);
  m·der(v) = flange_a.f + flange_b.f, der(s) = v;
- a Spring / Damper / SpringDamper from flange_a to flange_b: s_rel = flange_b.s − flange_a.s,
  v_rel = der(s_rel), f = c·(s_rel − s_rel0) + d·v_rel, flange_b.f = f, flange_a.f = −f;
- connected flanges share s and their forces sum to zero: a mass holding an element's flange_a is
  pushed by +f, one holding its flange_b by −f; a Force source pushes its flange by +f (flange.f = −f);
  a Fixed housing holds its flange at s0;
- Sine: y = amplitude·sin(2π·f·t) (offset, phase and startTime 0, so no event); Constant: y = k.

Every example is then linear with constant coefficients once its sources are states too: 1 for
constants (forces, spring lengths, housing positions) and [sin ωt, cos ωt] for a sine (sin' = ω·cos,
cos' = −ω·sin). So z' = M·z and z(t) = z* + exp(M·t)·(z(0) − z*) exactly, z* a rest point (M·z* = 0)
where there is one. M is read off the hand-written right-hand side (its columns are rhs of the unit
vectors); exp(M·t) is scipy's ``expm`` at each requested time by itself (no stepping, nothing accumulated;
nothing is discontinuous in time), of M balanced (M = D·B·D⁻¹, D diagonal).

- Accelerate: s'' = a_ref = 1, s(0) = v(0) = 0 (the source's own start values): s = t²/2, v = t.
- SignConvention: three 1 kg masses pushed by 1 N (force1 on flange_a, force2 and force3 on flange_b):
  a = +1 m/s² each, s = t²/2, v = t.
- Sensors: 1 kg, F = 10·sin(8π·t) N from rest at 0: v = (10/ω)(1 − cos ωt), s = (10/ω)(t − sin(ωt)/ω).
- WhyArrows: 1 kg (L = 2 m) at flange_b on a spring (c = 11, s_rel0 = 2) from a housing at −1.9 m, from
  rest at s = 0: s'' = −11·(s + 0.9), s = −0.9 + 0.9·cos(√11·t).
- Damper: three 1 kg masses (L = 1, s(0) = 3, v(0) = 10) hold at flange_b an element whose flange_b is
  a housing at 4.5 m: s_rel = 4 − s, v_rel = −v; damper1 (d = 25): s'' = −25·v; damper2 ∥ spring2 and
  springDamper3 (c = 1, s_rel0 = 1, d = 25): s'' = (3 − s) − 25·v.
- Oscillator: 1 kg masses (L = 1, s(0) = −0.5, v(0) = 0), F = sin(ωt) N on flange_a, ω = 2π·15.9155 rad/s,
  at flange_b a spring (c = 1e4, s_rel0 = 1) to a housing at 1 m, mass2 also a damper (d = 10) to it:
  s1'' = sin ωt − 1e4·(s1 + 0.5); s2'' = sin ωt − 1e4·(s2 + 0.5) − 10·v2; damper1.s_rel = 0.5 − s2.
- InitialConditions: two chains housing (s0) — spring (c_a, r_a) — mass A (L_A) — springDamper (c, r, d) —
  mass B (L_B): f_a = c_a·((s_A − L_A/2) − s0 − r_a), f = c·((s_B − L_B/2) − (s_A + L_A/2) − r) + d·(v_B − v_A),
  m_A·a_A = f − f_a, m_B·a_B = −f. Chain 1 (fixed2 1 m, s2 1e3/2 m, m3 3 m at 4.5, sd2 111/4 m/1, m4 5 m at
  12.5) starts, and stays, at rest. Chain 2 (fixed1 −1 m, s1 1e3/1 m, m1 1 m, sd1 111/1 m/1, m2 2 m) starts
  from s1.s_rel = 0.5 and sd1.s_rel = 1 at rest: s_m1(0) = −1 + 0.5 + 0.5 = 0, s_m2(0) = 0.5 + 1 + 1 = 2.5.

Accuracy (``cross_check()``, run by hand, nothing at import; each scenario's 1 ms grid): these agree
with the closed forms above to 3.6e-15 (Oscillator's mass1: 1.7e-16 m, 1.2e-14 m/s); with the eigenvector
solution, where M's eigenvectors are well conditioned (WhyArrows, Damper, InitialConditions), to 3.4e-13
(InitialConditions' sd1.v_rel, |v| up to 20 m/s; 3.6e-15 elsewhere); with DOP853 at rtol 1e-13 and Radau
at 1e-12 to 7.9e-12 and 3.6e-12 (theirs). expm's rounding moves InitialConditions' resting chain by up to
1.4e-12 m/s. So the solutions are exact to about 1.6e-12 (1e-13 of each signal's range).
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
from scipy.integrate import solve_ivp
from scipy.linalg import expm, matrix_balance

Rhs = Callable[[np.ndarray], list]
Read = Callable[[np.ndarray], dict]


def _element(s_a, s_b, v_a, v_b, c=0.0, s_rel0=0.0, d=0.0):
    """Spring/Damper/SpringDamper force f = c·(s_rel − s_rel0) + d·v_rel [N], s_rel = s_b − s_a [m]."""
    return c * ((s_b - s_a) - s_rel0) + d * (v_b - v_a)


# -- Accelerate: z = [s, v, 1] -------------------------------------------------------------------------
def _accelerate(z):
    s, v, one = z
    return [v, 1.0 * one, 0.0 * one]  # a = a_ref = constantAcc.k = 1 m/s²


ACCELERATE = (_accelerate, [0.0, 0.0, 1.0], lambda z: {"accelerate.s": z[0], "accelerate.v": z[1]})


# -- SignConvention: z = [s1, v1, s2, v2, s3, v3, 1] ---------------------------------------------------
def _sign_convention(z):
    m, k = 1.0, 1.0  # masses 1 kg, constants k = 1 N
    one = z[6]
    force1 = k * one  # force1 on mass1.flange_a: flange.f = −k, mass1.flange_a.f = +k
    force2 = k * one  # force2 on mass2.flange_b: the same
    force3 = k * one  # force3 (support fixed) on mass3.flange_b: the same
    return [z[1], force1 / m, z[3], force2 / m, z[5], force3 / m, 0.0 * one]


SIGN_CONVENTION = (_sign_convention, [0.0] * 6 + [1.0],
                   lambda z: {f"mass{i + 1}.{q}": z[2 * i + j] for i in range(3) for j, q in enumerate("sv")})

# -- Sensors: z = [s, v, sin ωt, cos ωt] ---------------------------------------------------------------
SENSORS_OMEGA = 2 * math.pi * 4.0  # sineForce.f = 4 Hz


def _sensors(z):
    s, v, sin, cos = z
    return [v, 10.0 * sin / 1.0, SENSORS_OMEGA * cos, -SENSORS_OMEGA * sin]  # amplitude 10 N, m = 1 kg


SENSORS = (_sensors, [0.0, 0.0, 0.0, 1.0], lambda z: {"mass.s": z[0], "mass.v": z[1]})


# -- WhyArrows: z = [s_mass1, v_mass1, s_inertia2, v_inertia2, 1] -----------------------------------------
def _why_arrows(z):
    m, half, s0 = 1.0, 1.0, -1.9  # m = 1 kg, L/2 = 1 m, fixed1/fixed2 at −1.9 m
    one = z[4]
    out = []
    for s, v in ((z[0], z[1]), (z[2], z[3])):
        f = _element(s0 * one, s + half * one, 0.0, v, c=11.0, s_rel0=2.0 * one)  # spring to the mass's flange_b
        out += [v, -f / m]
    return out + [0.0 * one]


WHY_ARROWS = (_why_arrows, [0.0, 0.0, 0.0, 0.0, 1.0],
              lambda z: {"mass1.s": z[0], "mass1.v": z[1], "inertia2.s": z[2], "inertia2.v": z[3]})


# -- Damper: z = [s1, v1, s2, v2, s3, v3, 1] -------------------------------------------------------------
def _damper(z):
    m, half, s0 = 1.0, 0.5, 4.5  # m = 1 kg, L/2 = 0.5 m, housings at 4.5 m
    one = z[6]
    (s1, v1), (s2, v2), (s3, v3) = (z[0], z[1]), (z[2], z[3]), (z[4], z[5])
    f1 = _element(s1 + half * one, s0 * one, v1, 0.0, d=25.0)  # damper1
    f2 = (_element(s2 + half * one, s0 * one, v2, 0.0, d=25.0)  # damper2 ∥ spring2
          + _element(s2 + half * one, s0 * one, v2, 0.0, c=1.0, s_rel0=1.0 * one))
    f3 = _element(s3 + half * one, s0 * one, v3, 0.0, c=1.0, s_rel0=1.0 * one, d=25.0)  # springDamper3
    return [v1, f1 / m, v2, f2 / m, v3, f3 / m, 0.0 * one]  # each mass holds its element's flange_a: +f


def _damper_signals(z):
    """s_rel = 4.5 − (s + 0.5) [m], v_rel = −v [m/s] of each element (mass1, mass2, mass3)."""
    return {f"{e}.{q}": (4.0 - z[2 * i]) if q == "s_rel" else -z[2 * i + 1]
            for i, e in enumerate(("damper1", "damper2", "springDamper3")) for q in ("s_rel", "v_rel")}


DAMPER = (_damper, [3.0, 10.0] * 3 + [1.0], _damper_signals)

# -- Oscillator: z = [s1, v1, s2, v2, sin ωt, cos ωt, 1] -------------------------------------------------
OSCILLATOR_OMEGA = 2 * math.pi * 15.9155  # sine1.f = sine2.f = 15.9155 Hz, amplitude 1 N


def _oscillator(z):
    m, half, s0 = 1.0, 0.5, 1.0  # m = 1 kg, L/2 = 0.5 m, fixed1/fixed2 at 1 m
    (s1, v1), (s2, v2), sin, cos, one = (z[0], z[1]), (z[2], z[3]), z[4], z[5], z[6]
    f1 = _element(s1 + half * one, s0 * one, v1, 0.0, c=1e4, s_rel0=1.0 * one)  # spring1
    f2 = (_element(s2 + half * one, s0 * one, v2, 0.0, c=1e4, s_rel0=1.0 * one)  # spring2
          + _element(s2 + half * one, s0 * one, v2, 0.0, d=10.0))  # damper1
    return [v1, (sin + f1) / m, v2, (sin + f2) / m, OSCILLATOR_OMEGA * cos, -OSCILLATOR_OMEGA * sin, 0.0 * one]


OSCILLATOR = (_oscillator, [-0.5, 0.0, -0.5, 0.0, 0.0, 1.0, 1.0],
              lambda z: {"mass1.s": z[0], "mass1.v": z[1], "damper1.s_rel": 0.5 - z[2], "damper1.v_rel": -z[3]})


# -- InitialConditions: z = [s_m3, v_m3, s_m4, v_m4, s_m1, v_m1, s_m2, v_m2, 1] --------------------------------
def _chain(s_a, v_a, s_b, v_b, one, s0, spring, half_a, damper, half_b):
    """housing (s0) — spring (c, s_rel0) — mass A — springDamper (c, s_rel0, d) — mass B, 1 kg masses."""
    f_a = _element(s0 * one, s_a - half_a * one, 0.0, v_a, c=spring[0], s_rel0=spring[1] * one)
    f = _element(s_a + half_a * one, s_b - half_b * one, v_a, v_b, c=damper[0], s_rel0=damper[1] * one, d=damper[2])
    return [v_a, f - f_a, v_b, -f]


def _initial_conditions(z):
    one = z[8]
    return (_chain(*z[0:4], one, 1.0, (1e3, 2.0), 1.5, (111.0, 4.0, 1.0), 2.5)  # fixed2, s2, m3, sd2, m4
            + _chain(*z[4:8], one, -1.0, (1e3, 1.0), 0.5, (111.0, 1.0, 1.0), 1.0)  # fixed1, s1, m1, sd1, m2
            + [0.0 * one])


def _initial_conditions_signals(z):
    """m3, m1 as they are; sd2.s_rel = (s_m4 − 2.5) − (s_m3 + 1.5), sd1.s_rel = (s_m2 − 1) − (s_m1 + 0.5) [m]."""
    return {"m3.s": z[0], "m3.v": z[1], "m1.s": z[4], "m1.v": z[5],
            "sd2.s_rel": z[2] - z[0] - 4.0, "sd2.v_rel": z[3] - z[1],
            "sd1.s_rel": z[6] - z[4] - 1.5, "sd1.v_rel": z[7] - z[5]}


INITIAL_CONDITIONS = (_initial_conditions, [4.5, 0.0, 12.5, 0.0, 0.0, 0.0, 2.5, 0.0, 1.0],
                      _initial_conditions_signals)

MODELS: dict[str, tuple[Rhs, list, Read]] = {
    "Accelerate": ACCELERATE, "SignConvention": SIGN_CONVENTION, "Sensors": SENSORS, "WhyArrows": WHY_ARROWS,
    "Damper": DAMPER, "Oscillator": OSCILLATOR, "InitialConditions": INITIAL_CONDITIONS}


def system_matrix(rhs: Rhs, n: int) -> np.ndarray:
    """M of z' = M·z: column k is rhs(e_k) (rhs is linear in z by construction)."""
    return np.column_stack([np.asarray(rhs(np.eye(n)[k]), dtype=float) for k in range(n)])


def rest_point(matrix: np.ndarray, z0: np.ndarray) -> np.ndarray:
    """A state z* with M·z* = 0 and z0's constant (the last state, where its row of M is zero): the rest
    point of x' = A·x + b (least squares where A is singular); zeros where there is none (b not in A's range)."""
    if matrix[-1].any():
        return np.zeros_like(z0)
    a, b = matrix[:-1, :-1], matrix[:-1, -1] * z0[-1]
    x = np.zeros_like(b)
    for _ in range(3):  # least squares with iterative refinement
        x -= np.linalg.lstsq(a, a @ x + b, rcond=None)[0]
    scale = np.max(np.abs(a)) * np.max(np.abs(x), initial=1.0) + np.max(np.abs(b))
    return np.append(x, z0[-1]) if np.max(np.abs(a @ x + b)) <= 1e-14 * scale else np.zeros_like(z0)


def solution(name: str, times, method: str = "expm") -> dict[str, np.ndarray]:
    """The compared signals of example ``name`` at ``times`` [s] (ascending, from 0): the exact
    z(t) = z* + exp(M·t)·(z(0) − z*) about a rest point z* (rounding then scales with the motion, not with
    the positions), or for the cross-check: "eig" the same through M's eigenvectors (diagonalizable M only),
    "DOP853"/"Radau" solve_ivp on the same equations at rtol 1e-13 / 1e-12."""
    rhs, z0, read = MODELS[name]
    t, z0 = np.asarray(times, dtype=float), np.asarray(z0, dtype=float)
    matrix = system_matrix(rhs, len(z0))
    rest = rest_point(matrix, z0)
    if method == "expm":  # M balanced: M = D·B·D⁻¹, D diagonal (powers of 2), B's rows and columns alike
        balanced, (scale, _) = matrix_balance(matrix, permute=False, separate=True)
        z = rest[:, None] + scale[:, None] * (expm(balanced[None] * t[:, None, None]) @ ((z0 - rest) / scale)).T
    elif method == "eig":
        values, vectors = np.linalg.eig(matrix)
        modes = np.linalg.solve(vectors, (z0 - rest).astype(complex))
        z = rest[:, None] + (vectors @ (modes[:, None] * np.exp(values[:, None] * t[None]))).real
    else:
        rtol = 1e-13 if method == "DOP853" else 1e-12
        jac = {"jac": matrix} if method == "Radau" else {}
        ivp = solve_ivp(lambda _, y: matrix @ y, (0.0, float(t[-1])), z0, method=method, t_eval=t, rtol=rtol,
                        atol=1e-15, **jac)
        assert ivp.success, ivp.message
        z = ivp.y
    return {k: np.asarray(v, dtype=float) * np.ones(len(t)) for k, v in read(z).items()}


SOLUTIONS: dict[str, Callable[[np.ndarray], dict[str, np.ndarray]]] = {
    name: functools.partial(solution, name) for name in MODELS}


def closed_forms(t: np.ndarray) -> dict[str, dict[str, np.ndarray]]:
    """The closed forms stated in the module docstring, for the examples (and signals) that have a short one."""
    # Oscillator's mass1, y = s1 + 0.5 from rest, y'' + w0²·y = sin ωt: y = (sin ωt − (ω/w0)·sin w0t)/(w0² − ω²),
    # written without the cancellation near resonance (δ = ω − w0 = 3.5e-5 rad/s)
    w, w0 = OSCILLATOR_OMEGA, 100.0
    delta, mean = w - w0, (w + w0) * t / 2
    beat = np.sin(delta * t / 2) / delta
    y1 = (np.sin(w0 * t) / w0 - 2 * np.cos(mean) * beat) / (w + w0)
    dy1 = 2 * w * np.sin(mean) * beat / (w + w0)
    # Damper's mass2 and mass3, y = s − 3 from y' = 10: y'' + 25·y' + y = 0, roots λ± = (−25 ± √621)/2
    up, down = (-25 + math.sqrt(621.0)) / 2, (-25 - math.sqrt(621.0)) / 2
    y23 = 10 * (np.exp(up * t) - np.exp(down * t)) / (up - down)
    dy23 = 10 * (up * np.exp(up * t) - down * np.exp(down * t)) / (up - down)
    ws, wa = SENSORS_OMEGA, math.sqrt(11.0)
    rest = np.ones_like(t)
    return {
        "Accelerate": {"accelerate.s": t * t / 2, "accelerate.v": t},
        "SignConvention": {f"mass{i}.{q}": t * t / 2 if q == "s" else t for i in (1, 2, 3) for q in "sv"},
        "Sensors": {"mass.s": 10 / ws * (t - np.sin(ws * t) / ws), "mass.v": 10 / ws * (1 - np.cos(ws * t))},
        "WhyArrows": {f"{b}.{q}": -0.9 + 0.9 * np.cos(wa * t) if q == "s" else -0.9 * wa * np.sin(wa * t)
                      for b in ("mass1", "inertia2") for q in "sv"},
        "Damper": {"damper1.s_rel": 4 - (3 + 0.4 * (1 - np.exp(-25 * t))), "damper1.v_rel": -10 * np.exp(-25 * t),
                   **{f"{e}.{q}": 1 - y23 if q == "s_rel" else -dy23 for e in ("damper2", "springDamper3")
                      for q in ("s_rel", "v_rel")}},
        "Oscillator": {"mass1.s": y1 - 0.5, "mass1.v": dy1},
        "InitialConditions": {"m3.s": 4.5 * rest, "m3.v": 0 * rest, "sd2.s_rel": 4 * rest, "sd2.v_rel": 0 * rest},
    }


def cross_check(step: float = 1e-3) -> dict[str, dict[str, tuple[float, ...]]]:
    """Per example and signal: max |solution − x| for x = DOP853, Radau, eig (where M's
    eigenvectors have a condition number under 1e3) and the closed form (nan where there is none), over the
    scenario's grid (StopTime 5 s for InitialConditions, 1 s otherwise)."""
    out = {}
    for name, (rhs, z0, _) in MODELS.items():
        stop = 5.0 if name == "InitialConditions" else 1.0
        t = np.linspace(0.0, stop, round(stop / step) + 1)
        well_conditioned = np.linalg.cond(np.linalg.eig(system_matrix(rhs, len(z0)))[1]) < 1e3
        others = [solution(name, t, method) for method in ("DOP853", "Radau")]
        others += [solution(name, t, "eig") if well_conditioned else {}, closed_forms(t)[name]]
        exact = solution(name, t)
        out[name] = {k: tuple(float(np.max(np.abs(v - o[k]))) if k in o else math.nan for o in others)
                     for k, v in exact.items()}
    return out
