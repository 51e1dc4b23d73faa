"""Independent references for event location: the instants at which contacts change in
``scenarios/elastogap`` (scipy) and ``scenarios/ball_drop`` (OpenSim 4.6), and the solutions between
them. Nothing here uses mechfmu's components: the ElastoGap law is transcribed from MSL 4.0, the
ball's contact is Simbody's own (through OpenSim) and, as a cross-check, an independent transcription
of Simbody's normal force.

``python3 benchmarks/event_references_accuracy.py`` prints the accuracy study quoted in the docstrings.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

ROOT = Path(__file__).resolve().parents[2]  # the checkout, whose scenarios/ these references are of
ELASTOGAP = ROOT / "scenarios" / "elastogap"
BALL_DROP = ROOT / "scenarios" / "ball_drop"

# ---------------------------------------------------------------------------------------------------
# scenarios/elastogap: Modelica.Mechanics.Translational.Examples.ElastoGap
# ---------------------------------------------------------------------------------------------------

#: the MSL example's numbers (scenarios/elastogap: walls at -2 / +2 m, masses 1 kg starting at 2 m at
#: rest, springs and gaps c = 10 N/m, d = 1.5 N.s/m, spring offset 1 m, gap s_rel0 = 1.5 m, n = 1)
EXAMPLE = dict(wall_left=-2.0, wall_right=2.0, m=1.0, x0=2.0, c=10.0, d=1.5, s_rel0=1.5, n=1.0)
GAP_LABELS = ("elastoGap1.indicator.gap", "elastoGap2.indicator.gap")


def msl_elasto_gap(s_rel, v_rel, c=10.0, d=1.5, s_rel0=1.5, n=1.0):
    """MSL 4.0 ElastoGap equations, transcribed independently of components/."""
    if s_rel >= s_rel0:
        return 0.0
    f_c = -c * abs(s_rel - s_rel0) ** n
    f_d2 = d * v_rel
    f_d = f_c if f_d2 < f_c else (-f_c if f_d2 > -f_c else f_d2)
    return f_c + f_d


def monolithic_example(times: np.ndarray) -> dict[str, np.ndarray]:
    """The example's two decoupled ODEs with scipy at rtol 1e-12, restarted at every
    contact change so the integrator never steps across a kink of the contact law."""
    def mass1(t, y):
        x, v = y
        f_sd1 = 10.0 * ((x + 2.0) - 1.0) + 1.5 * v
        f_sd2 = 10.0 * ((2.0 - x) - 1.0) - 1.5 * v
        return [v, -f_sd1 + f_sd2]

    def mass2(t, y):
        x, v = y
        return [v, -msl_elasto_gap(x + 2.0, v) + msl_elasto_gap(2.0 - x, -v)]

    one = solve_ivp(mass1, (0, times[-1]), [2.0, 0.0], method="DOP853", rtol=1e-12, atol=1e-12, t_eval=times)
    events = [lambda t, y: y[0] + 0.5, lambda t, y: y[0] - 0.5]
    for event in events:
        event.terminal = True
    t0, y0, pieces, contact_changes = 0.0, [2.0, 0.0], [], []
    while t0 < times[-1]:
        inside = times[(times >= t0) & (times <= times[-1])]
        sol = solve_ivp(mass2, (t0, times[-1]), y0, method="DOP853", rtol=1e-12, atol=1e-12, events=events,
                        dense_output=True)
        end = sol.t[-1]
        chunk = inside[inside <= end]
        pieces.append(sol.sol(chunk))
        times_left = end < times[-1]
        if times_left:
            contact_changes.append(end)
            t0, y0 = end, sol.y[:, -1]
            # step just past the event so it does not trigger again at the restart
            sol2 = solve_ivp(mass2, (t0, t0 + 1e-9), y0, method="DOP853", rtol=1e-13, atol=1e-14)
            t0, y0 = sol2.t[-1], sol2.y[:, -1]
            times = times  # unchanged
        else:
            break
    two = np.concatenate(pieces, axis=1)
    return {"springDamper2.s_rel": 2.0 - one.y[0], "springDamper1.v_rel": one.y[1],
            "elastoGap2.s_rel": 2.0 - two[0], "elastoGap1.v_rel": two[1], "events": np.array(contact_changes)}


def elastogap_contact_changes(t_end: float = 5.0, rtol: float = 1e-12, atol: float = 1e-15,
                              method: str = "DOP853", with_modes: bool = False) -> list[tuple[float, str]]:
    """Instants [s] at which a contact of the ElastoGap example changes, with the gap's indicator label:
    the zeros of ``s_rel − s_rel0`` of elastoGap1 (``s_rel = x + 2``) or elastoGap2 (``s_rel = 2 − x``)
    along mass2's motion ``m·x'' = −f_1(x + 2, x') + f_2(2 − x, −x')`` (MSL 4.0 law,
    ``msl_elasto_gap``), up to ``t_end``.

    Method: the law is smooth except where a contact begins or ends and where the damping force
    meets its clamp ``|d·v_rel| = |f_c|`` (twice per contact). The motion is integrated piecewise, one
    smooth mode at a time (which gaps touch, which dampers are clamped, the smooth extension of that
    mode's law beyond its boundary), with solve_ivp's event location on every mode boundary (terminal,
    directed, so a restart on the boundary does not trigger it again); so no integrator step crosses a
    kink and each zero is found by Brent's method on the smooth dense output of the step containing it.
    ``with_modes`` also returns the clamp switches (labels ``elastoGapN.clamp``).

    Accuracy (``python3 -m mechfmu.validation.event_references``, measured): the six instants in 5 s change
    by at most 3.8e-12 s between rtol 1e-12 and 1e-13 (DOP853; 2.5e-10 s at rtol 1e-10), agree with
    Radau at rtol 1e-12 to 3.8e-12 s and with ``monolithic_example`` (restarts only at contacts, so
    it steps across the clamp kinks) to 1.7e-11 s: the instants are good to ~1e-11 s. They lie within
    4.2e-6 s of the Modelica Association's DASSL events (tolerance 1e-6), that reference's own
    accuracy."""
    p = EXAMPLE
    c, d, s0, n, m = p["c"], p["d"], p["s_rel0"], p["n"], p["m"]

    def gaps(x: float, v: float) -> tuple[tuple[float, float], tuple[float, float]]:
        """(indicator, v_rel) of each gap."""
        return (x - p["wall_left"] - s0, v), (p["wall_right"] - x - s0, -v)

    def spring(g: float) -> float:  # f_c and its smooth (odd) extension beyond the contact
        return c * math.copysign(abs(g) ** n, g)

    def gap_force(g: float, v_rel: float, touching: bool, clamp: float) -> float:
        """The law in a mode: clamp 0 = damper free, ±1 = clamped with v_rel of that sign."""
        if not touching:
            return 0.0
        f_c = spring(g)
        return f_c + (d * v_rel if clamp == 0 else -clamp * f_c)

    t, y = 0.0, np.array([p["x0"], 0.0])
    (g1, w1), (g2, w2) = gaps(*y)
    touching = [g1 < 0, g2 < 0]
    clamp = [0.0, 0.0]
    for i, (g, w) in enumerate(((g1, w1), (g2, w2))):
        if touching[i] and abs(d * w) > abs(spring(g)):
            clamp[i] = math.copysign(1.0, w)
    changes: list[tuple[float, str]] = []
    while t < t_end:
        mode_touching, mode_clamp = tuple(touching), tuple(clamp)

        def rhs(tt, z, touching=mode_touching, clamp=mode_clamp):
            (a, va), (b, vb) = gaps(z[0], z[1])
            f1, f2 = gap_force(a, va, touching[0], clamp[0]), gap_force(b, vb, touching[1], clamp[1])
            # flange forces as wired: mass2.flange_a.f = elastoGap1.flange_b.f = f1,
            # mass2.flange_b.f = elastoGap2.flange_a.f = -f2, m·a = -flange_a.f - flange_b.f
            return [z[1], (-f1 + f2) / m]

        events, kinds = [], []
        for i in range(2):
            def gap_event(tt, z, i=i):
                return gaps(z[0], z[1])[i][0]
            gap_event.terminal, gap_event.direction = True, (1 if mode_touching[i] else -1)
            events.append(gap_event)
            kinds.append(("gap", i))
            if mode_touching[i]:
                def clamp_event(tt, z, i=i, s=mode_clamp[i]):
                    g, w = gaps(z[0], z[1])[i]
                    return (s * d * w if s else d * abs(w)) - abs(spring(g))  # > 0 while clamped
                clamp_event.terminal = True
                clamp_event.direction = -1 if mode_clamp[i] else 1
                events.append(clamp_event)
                kinds.append(("clamp", i))
        sol = solve_ivp(rhs, (t, t_end), y, method=method, rtol=rtol, atol=atol, events=events)
        if sol.status != 1:
            break
        hits = [(float(te[0]), k) for te, k in zip(sol.t_events, range(len(events))) if len(te)]
        t_hit, k = min(hits)
        y = sol.y_events[k][0]
        t = t_hit
        kind, i = kinds[k]
        w = gaps(y[0], y[1])[i][1]
        if kind == "gap":
            touching[i] = not touching[i]
            clamp[i] = math.copysign(1.0, w) if touching[i] else 0.0  # f_c = 0 at the contact: clamped
            changes.append((t, GAP_LABELS[i]))
        else:
            clamp[i] = math.copysign(1.0, w) if clamp[i] == 0 else 0.0
            if with_modes:
                changes.append((t, f"elastoGap{i + 1}.clamp"))
    return changes


# ---------------------------------------------------------------------------------------------------
# scenarios/ball_drop: a ball dropped on a ground half-space (Simbody SmoothSphereHalfSpaceForce)
# ---------------------------------------------------------------------------------------------------

def _ball_drop_geometry(scenario) -> tuple[float, np.ndarray, np.ndarray, str]:
    """(radius, half-space point, normal into the solid, body) of a scenario with one sphere body and a
    half-space on ground; the distance sphere - half-space is ``-(c - point)·normal - radius``."""
    from scipy.spatial.transform import Rotation

    from mechfmu.ssp.scenario import Scenario, load_scenario

    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario, check=False)
    contacts = [s for s in scenario.components.values() if Path(s.fmu).stem == "SmoothSphereHalfSpaceForce"]
    if len(contacts) != 1:
        raise ValueError("one SmoothSphereHalfSpaceForce expected")
    spec = contacts[0]
    wired = {c.target_variable: c.source for c in scenario.connections if c.target == spec.name}
    if any(k.startswith("halfSpace.") for k in wired):
        raise ValueError("the half-space must be on ground (its inputs unconnected)")
    q = spec.parameters
    if any(q.get(f"sphereLocation.{a}", 0.0) for a in "xyz"):
        raise ValueError("the sphere must be centred on its body's origin")
    angles = [q.get(f"halfSpaceOrientation.{a}", 0.0) for a in "xyz"]
    normal = Rotation.from_euler("XYZ", angles).as_matrix()[:, 0]  # body-fixed X-Y-Z: the frame's x axis
    point = np.array([q.get(f"halfSpaceLocation.{a}", 0.0) for a in "xyz"])
    return float(q["radius"]), point, normal, wired["sphere.position.x"]


def _opensim_run(scenario, times: np.ndarray, accuracy: float):
    from .opensim_model import opensim_solution

    return opensim_solution(scenario, np.concatenate([[0.0], times[times > 0]]), accuracy=accuracy)


def _hermite_zero(t0, t1, d0, d1, r0, r1) -> float:
    """Zero in [t0, t1] of the cubic Hermite interpolant of a distance d with rates r."""
    h = t1 - t0

    def f(t):
        s = (t - t0) / h
        return ((2 * s**3 - 3 * s**2 + 1) * d0 + (s**3 - 2 * s**2 + s) * h * r0
                + (-2 * s**3 + 3 * s**2) * d1 + (s**3 - s**2) * h * r1)

    return brentq(f, t0, t1, xtol=1e-16, rtol=4 * np.finfo(float).eps)


def ball_drop_contact_changes(scenario=BALL_DROP, t_end: float = 1.0, accuracy: float = 1e-10,
                              coarse: float = 1e-4, fine: float = 1e-7) -> list[float]:
    """Instants [s] at which the sphere's distance to the half-space, ``−(c − p)·n − R``, crosses 0 in
    OpenSim 4.6's solution of the scenario (Simbody's SmoothSphereHalfSpaceForce, its variable-step
    integrator at ``accuracy``), up to ``t_end``: the first is the contact onset, then lift-offs and
    impacts alternate.

    Not analytic: the smooth contact force is not zero before the surfaces touch (the Hertz term is
    switched on by ``1/2 + tanh(bd·δ)/2`` with bd = 300 1/m, and √(δ² + cf) > 0), so the ball is
    decelerated during the last centimetres (about 125 N at δ = 0): the onset comes 5.7e-5 s after the
    free fall's √(2·0.4 m / g) (printed by the accuracy study), so free fall is not an option.
    Method: OpenSim's solution on a grid of ``coarse`` spacing brackets each crossing; a second run
    adds a grid of ``fine`` spacing inside each bracket; each zero is that of the cubic Hermite
    interpolant of the distance and its rate (−v·n) on the fine interval containing it (error
    ~h⁴/384·|d''''|, below 1e-20 m at h = 1e-7 s).

    Accuracy (``python3 -m mechfmu.validation.event_references``, measured): the onset (0.285674293598 s)
    changes by 4e-13 s between accuracy 1e-9 and 1e-10 and by 1e-14 s between 1e-10, 1e-11 and 1e-12;
    a fine grid of 1e-6 instead of 1e-7 moves it by 3e-16 s; an independent transcription of
    Simbody's normal force as a one-degree-of-freedom ODE (``ball_drop_onset_1dof``, scipy DOP853
    rtol 1e-13) agrees to 4.4e-15 s. So the onset is exact to ~1e-13 s, far better than 1e-8 s. The
    lift-off (0.329788274 s) agrees between accuracies to 2.6e-12 s. Within 1 s OpenSim has just
    these two crossings: the ball's second approach (t = 0.4336 s) stops 3.3e-5 m above the surface,
    held by the smooth force (it comes to rest 1.1 mm above it)."""
    radius, point, normal, body = _ball_drop_geometry(scenario)

    def distance(ref, mask=slice(None)):
        p, v = ref.bodies[body]["position"][mask], ref.bodies[body]["velocity"][mask]
        return -(p - point) @ normal - radius, -(v @ normal)

    grid = np.arange(0.0, t_end + 0.5 * coarse, coarse)
    first = _opensim_run(scenario, grid, accuracy)
    d, _ = distance(first)
    brackets = np.nonzero(np.diff(np.signbit(d)))[0]
    if not len(brackets):
        return []
    per_bracket = int(round(coarse / fine)) + 1
    fine_times = np.unique(np.concatenate([grid] + [np.linspace(grid[k], grid[k + 1], per_bracket) for k in brackets]))
    second = _opensim_run(scenario, fine_times, accuracy)
    t = second.time
    d, r = distance(second)
    crossings = []
    for k in np.nonzero(np.diff(np.signbit(d)))[0]:
        crossings.append(_hermite_zero(t[k], t[k + 1], d[k], d[k + 1], r[k], r[k + 1]))
    return crossings


def ball_drop_contact_onset(scenario=BALL_DROP, accuracy: float = 1e-10) -> float:
    """The first instant [s] at which the ball touches the ground in OpenSim's solution (distance 0):
    the first of ``ball_drop_contact_changes`` (see there for method and accuracy: < 1e-11 s)."""
    from mechfmu.ssp.scenario import load_scenario

    radius, point, normal, body = _ball_drop_geometry(scenario)
    spec = load_scenario(scenario, check=False).components[body].parameters
    c0 = np.array([spec.get(f"position_start.{a}", 0.0) for a in "xyz"])
    g = np.array([spec.get(f"gravity.{a}", (0.0, -9.81, 0.0)["xyz".index(a)]) for a in "xyz"])
    # free fall to the surface, then a margin for the pre-contact deceleration: only the window is searched
    t_free = free_fall_onset(-(c0 - point) @ normal - radius, float(np.dot(g, normal)),
                             -float(np.dot([spec.get(f"velocity_start.{a}", 0.0) for a in "xyz"], normal)))
    found = ball_drop_contact_changes(scenario, t_end=t_free + 0.01, accuracy=accuracy)
    if not found:
        raise RuntimeError("no contact in OpenSim's solution within 10 ms of the free fall's impact")
    return found[0]


def free_fall_onset(distance0: float, g_normal: float, rate0: float = 0.0) -> float:
    """When a free fall would close ``distance0`` [m] under ``g_normal`` [m/s²] (gravity's component
    along the normal into the solid) starting at distance rate ``rate0``: NOT the onset of a smooth
    contact (see ``ball_drop_contact_changes``); for comparison only."""
    # distance(t) = distance0 + rate0·t − g_normal·t²/2
    a, b, c = -0.5 * g_normal, rate0, distance0
    return (-b - math.sqrt(b * b - 4 * a * c)) / (2 * a)



# ---------------------------------------------------------------------------------------------------


def ball_drop_onset_1dof(scenario=BALL_DROP, rtol: float = 1e-13) -> float:
    """Cross-check of the onset, independent of OpenSim: the motion along the normal alone (the normal
    force does not depend on the tangential motion or the spin: ω × n is tangential), with Simbody
    3.7's normal force ``f = 4/3·k·√(R·k)·(δ² + cf)^(3/4)·(1/2 + tanh(bd·δ)/2)·(1 + 3/2·c·v_n)·(1/2 +
    tanh(bv·(v_n + 2/(3c)))/2)``, k = E^(2/3)/2, integrated by scipy (DOP853, ``rtol``, atol 1e-16)
    with event location on δ = 0. Agrees with OpenSim to 4.4e-15 s (measured)."""
    from mechfmu.ssp.scenario import load_scenario

    radius, point, normal, body = _ball_drop_geometry(scenario)
    specs = load_scenario(scenario, check=False).components
    ball = specs[body].parameters
    contact = next(s.parameters for s in specs.values() if Path(s.fmu).stem == "SmoothSphereHalfSpaceForce")
    E, c = contact.get("stiffness", 1.0), contact.get("dissipation", 0.0)
    cf, bd = contact.get("constantContactForce", 1e-5), contact.get("hertzSmoothing", 300.0)
    bv = contact.get("huntCrossleySmoothing", 50.0)
    k = 0.5 * E ** (2.0 / 3.0)
    m = ball["mass"]
    g = np.array([ball.get(f"gravity.{a}", (0.0, -9.81, 0.0)["xyz".index(a)]) for a in "xyz"])
    c0 = np.array([ball.get(f"position_start.{a}", 0.0) for a in "xyz"])
    v0 = np.array([ball.get(f"velocity_start.{a}", 0.0) for a in "xyz"])

    def rhs(t, z):  # z = (δ, v_n): indentation and its rate (sphere velocity along n)
        delta, vn = z
        f = 4.0 / 3.0 * k * math.sqrt(radius * k) * (delta * delta + cf) ** 0.75 * (0.5 + 0.5 * math.tanh(bd * delta))
        f *= (1.0 + 1.5 * c * vn) * (1.0 if c == 0 else 0.5 + 0.5 * math.tanh(bv * (vn + 2.0 / (3.0 * c))))
        return [vn, float(np.dot(g, normal)) - f / m]  # the force on the sphere is −f·n

    def touch(t, z):
        return z[0]
    touch.terminal, touch.direction = True, 1
    delta0 = (c0 - point) @ normal + radius
    sol = solve_ivp(rhs, (0.0, 10.0), [delta0, float(v0 @ normal)], method="DOP853", rtol=rtol, atol=1e-16,
                    events=touch)
    return float(sol.t_events[0][0])


def ball_drop_positions(times: np.ndarray, scenario=BALL_DROP, accuracy: float = 1e-10) -> np.ndarray:
    """The ball's centre [m] (shape (len(times), 3)) in OpenSim's solution (``opensim_solution``,
    variable step at ``accuracy``), integrated to each requested time itself (no interpolation; the
    times need not be uniform; duplicates allowed).

    Accuracy (``python3 -m mechfmu.validation.event_references``, measured): over 1 s (10,001 times) the
    positions at accuracy 1e-10 differ from those at 1e-12 by 5.7e-13 m, and a 1e-3 s output grid
    from a 1e-4 s one by 8.5e-12 m: exact to ~1e-11 m, far below the 1e-5 m acceptance."""
    times = np.asarray(times, dtype=float)
    unique, inverse = np.unique(times, return_inverse=True)
    _, _, _, body = _ball_drop_geometry(scenario)
    ref = _opensim_run(scenario, unique, accuracy)
    positions = ref.bodies[body]["position"]
    if unique[0] > 0:
        positions = positions[1:]  # the prepended start
    return positions[inverse]
