/* MassWithStopAndFriction (components/mass_friction.py: the law, its state machine, its stops, its parameters and
 * sources): a body with its own friction to the housing, so that its locked force is local and its co-simulation step
 * is its hybrid motion integrated over the step (Dormand and Prince's RK5(4), its switches located). */
#include <math.h>
#include <string.h>

#include "dormand_prince.h"
#include "friction.h"
#include "model.h"
#include "native_variables.h"

#define V(name) n->values[MassWithStopAndFriction__##name]
/* the state's slots: the continuous states, then the discrete ones (components/mass_friction.py) */
enum { S, VEL, MODE, LOCKED, START_FORWARD, START_BACKWARD, IS_FREE, STOPPED };
#define LOADS 9           /* the inputs: flange_a.f, flange_b.f, f_drive, then the further ports' loads */
#define INDICATORS 4      /* lower, upper, v, slip */
#define MAX_SETTLE 16     /* event iterations at one instant, at most (the mixed system is the body's own) */

typedef struct {
    double force, f0, f0_max, f, a, sa; /* F (drive less loads), the friction at rest and its maximum, f, a, sa */
} Point;

static Modes stored(const NativeInstance *n) { return held_modes(n->state + MODE); }

static double lower_stop(const NativeInstance *n) { return V(smin) + V(L) / 2; }
static double upper_stop(const NativeInstance *n) { return V(smax) - V(L) / 2; }

/* F: the drive less the loads of every port */
static double applied(const NativeInstance *n) {
    const double *in = n->values + n->cls->parameter_count;
    double force = in[2] - in[0] - in[1];
    for (int i = 3; i < LOADS; ++i) force -= in[i];
    return force;
}

/* the friction force, acceleration and path parameter at (s, v) with `m` held */
static Point evaluate(const NativeInstance *n, const Modes *m, double v) {
    Point p;
    p.force = applied(n);
    p.f0 = V(F_Coulomb) + V(F_Stribeck);
    p.f0_max = p.f0 * 1.001;
    const double stribeck = V(F_Stribeck) * exp(-V(fexp) * fabs(v));
    p.f = m->locked ? p.force
          : m->free ? 0.0
          : m->start_forward ? V(F_prop) * v + V(F_Coulomb) + V(F_Stribeck)
          : m->start_backward ? V(F_prop) * v - V(F_Coulomb) - V(F_Stribeck)
          : m->mode == FORWARD ? V(F_prop) * v + V(F_Coulomb) + stribeck
                               : V(F_prop) * v - V(F_Coulomb) - stribeck;
    p.a = m->locked ? 0.0 : (p.force - p.f) / V(m);
    p.sa = m->locked                                ? p.force
           : m->free                                ? p.a
           : m->start_forward || m->mode == FORWARD ? p.a + p.f0_max
                                                    : p.a - p.f0_max;
    return p;
}

/* PartialFrictionWithStop's equations once, from `pre` at (s, v) */
static Modes next_modes(const NativeInstance *n, const Modes *pre, int initial, double s, double v) {
    const Point p = evaluate(n, pre, v);
    const int below_upper = s < upper_stop(n), above_lower = s > lower_stop(n);
    Modes m;
    m.free = p.f0 <= 0 && V(F_prop) <= 0 && above_lower && below_upper;
    m.start_forward = (pre->mode == STUCK && ((p.sa > p.f0_max && below_upper)
                                              || (pre->start_forward && p.sa > p.f0 && below_upper)))
                      || (pre->mode == BACKWARD && v > V(v_small)) || (initial && v > 0);
    m.start_backward = (pre->mode == STUCK && ((p.sa < -p.f0_max && above_lower)
                                               || (pre->start_backward && p.sa < -p.f0 && above_lower)))
                       || (pre->mode == FORWARD && v < -V(v_small)) || (initial && v < 0);
    m.locked = !m.free && !(pre->mode == FORWARD || m.start_forward || pre->mode == BACKWARD || m.start_backward);
    m.mode = m.free ? FREE
             : (pre->mode == FORWARD || pre->mode == FREE || m.start_forward) && v > 0 && below_upper ? FORWARD
             : (pre->mode == BACKWARD || pre->mode == FREE || m.start_backward) && v < 0 && above_lower ? BACKWARD
                                                                                                       : STUCK;
    return m;
}

static void store(NativeInstance *n, const Modes *m) {
    n->state[MODE] = m->mode, n->state[LOCKED] = m->locked, n->state[START_FORWARD] = m->start_forward;
    n->state[START_BACKWARD] = m->start_backward, n->state[IS_FREE] = m->free;
}

/* the discrete state the outputs use: the held one, or before the first event mode the initial equations' */
static Modes current(const NativeInstance *n) {
    const Modes m = stored(n);
    return m.mode == UNKNOWN ? next_modes(n, &m, 1, n->state[S], n->state[VEL]) : m;
}

/* Event mode at the current point: the stops (a new one resets s onto it and v to 0), then the friction's equations
 * until they settle: 0, NATIVE_STATES_CHANGED after a reset, or -1 after native_fail. */
static int settle(NativeInstance *n) {
    int changed = 0;
    const double s = n->state[S];
    const int stopped = s <= lower_stop(n) ? -1 : s >= upper_stop(n) ? 1 : 0;
    if (stopped != 0 && n->state[STOPPED] == 0.0) {
        n->state[S] = stopped < 0 ? lower_stop(n) : upper_stop(n);
        n->state[VEL] = 0.0;
        changed = NATIVE_STATES_CHANGED;
    }
    n->state[STOPPED] = stopped;
    for (int i = 0; i < MAX_SETTLE; ++i) {
        const Modes pre = stored(n);
        const Modes m = next_modes(n, &pre, pre.mode == UNKNOWN, n->state[S], n->state[VEL]);
        if (!memcmp(&m, &pre, sizeof m)) return changed;
        store(n, &m);
    }
    return native_fail_text(n, 0, "%s '%s': the friction mode does not settle at t = %.17g s in %d event iterations "
                            "(mode %g, locked %g)", n->cls->name, native_instance_name(n), n->time, MAX_SETTLE,
                            n->state[MODE], n->state[LOCKED]);
}

/* the event indicators at (s, v) with `m` held (components/mass_friction.py) */
static void indicators_at(const NativeInstance *n, const Modes *m, double s, double v, double *z) {
    const Point p = evaluate(n, m, v);
    z[0] = s - lower_stop(n);
    z[1] = upper_stop(n) - s;
    z[2] = m->locked || m->free ? 1.0 : v;
    const int at_upper = !(s < upper_stop(n)), at_lower = !(s > lower_stop(n)); /* a start that way is blocked */
    z[3] = m->locked && at_upper ? p.force + p.f0_max
           : m->locked && at_lower ? p.f0_max - p.force
           : m->locked             ? p.f0_max - fabs(p.force)
           : m->start_forward  ? p.sa - p.f0
           : m->start_backward ? -p.f0 - p.sa
           : m->mode == FORWARD ? 1.0 + v / V(v_small)
           : m->mode == BACKWARD ? 1.0 - v / V(v_small)
                                 : 1.0;
}

int native_MassWithStopAndFriction_outputs(NativeInstance *n, double *out) {
    const Modes m = current(n);
    const double s = n->state[S], v = n->state[VEL], half = V(L) / 2;
    const Point p = evaluate(n, &m, v);
    const double values[] = {s, v, p.a, s - half, v, s + half, v, p.a, p.a, p.f, p.sa, p.f0, p.f0_max, p.f * v,
                             m.mode, m.locked, m.start_forward, m.start_backward, m.free, n->state[STOPPED]};
    memcpy(out, values, sizeof values);
    indicators_at(n, &m, s, v, out + sizeof values / sizeof *values);
    return 0;
}

int native_MassWithStopAndFriction_derivatives(NativeInstance *n, double *out) {
    const Modes m = current(n);
    out[0] = n->state[VEL];
    out[1] = evaluate(n, &m, n->state[VEL]).a;
    return 0;
}

int native_MassWithStopAndFriction_update_discrete_states(NativeInstance *n) { return settle(n); }

/* MSL's asserts of the initial position, and the stops' order */
int native_MassWithStopAndFriction_validate(NativeInstance *n) {
    if (!(lower_stop(n) <= upper_stop(n)))
        return native_fail(n, "smax", V(smax), "leaves no room between the stops: smax - L/2 must be >= smin + L/2");
    const double s = n->state[S], v = n->state[VEL];
    if (!(s > lower_stop(n) || (s >= lower_stop(n) && v >= 0)))
        return native_fail(n, "s_start", s, "puts the mass beyond the lower stop: s - L/2 must be >= smin (and v >= 0 "
                           "at it)");
    if (!(s < upper_stop(n) || (s <= upper_stop(n) && v <= 0)))
        return native_fail(n, "s_start", s, "puts the mass beyond the upper stop: s + L/2 must be <= smax (and v <= 0 "
                           "at it)");
    const double mode = n->state[MODE];
    if (held_mode(mode) != mode)
        return native_fail(n, "mode", mode, "is not one of MSL's modes (-1, 0, 1, 2, 3) in the discrete state");
    for (int i = LOCKED; i <= IS_FREE; ++i)
        if (n->state[i] != 0.0 && n->state[i] != 1.0)
            return native_fail(n, "locked", n->state[i], "is not a Boolean (0 or 1) in the discrete state");
    if (n->state[STOPPED] != -1.0 && n->state[STOPPED] != 0.0 && n->state[STOPPED] != 1.0)
        return native_fail(n, "stopped", n->state[STOPPED], "is not -1, 0 or 1 in the discrete state");
    return 0;
}

/* --- co-simulation: the hybrid motion over a step, the loads held ------------------------------------------ */

#define TOLERANCE 1e-10

/* one Dormand-Prince step of size h from x with `m` held (the motion is autonomous: no nodes): the new states and
 * the error estimate's norm */
static double dp_step(const NativeInstance *n, const Modes *m, const double x[2], double h, double y[2]) {
    double k[7][2];
    for (int i = 0; i < 7; ++i) {
        double stage[2] = {x[0], x[1]};
        for (int j = 0; j < i; ++j) stage[0] += h * DP_A[i][j] * k[j][0], stage[1] += h * DP_A[i][j] * k[j][1];
        k[i][0] = stage[1];
        k[i][1] = evaluate(n, m, stage[1]).a;
        if (i == 6) break;
    }
    double error = 0.0;
    for (int c = 0; c < 2; ++c) {
        y[c] = x[c];
        double e = 0.0;
        for (int j = 0; j < 6; ++j) y[c] += h * DP_A[6][j] * k[j][c];
        for (int j = 0; j < 7; ++j) e += h * DP_E[j] * k[j][c];
        const double scale = TOLERANCE * (1.0 + fmax(fabs(x[c]), fabs(y[c])));
        error = fmax(error, fabs(e) / scale);
    }
    return error;
}

static int crossed(const double *before, const double *after) {
    for (int i = 0; i < INDICATORS; ++i)
        if ((before[i] > 0) != (after[i] > 0)) return 1;
    return 0;
}

/* From (t, x) over at most `size`, the states at the end of an accepted step or at the first switch in it (just past
 * it: every indicator that switched strictly on its new side), the time reached in *reached, 1 if a switch */
static int advance_piece(NativeInstance *n, const Modes *m, double x[2], double t, double end, double *size,
                         double *reached) {
    double z0[INDICATORS], z1[INDICATORS], y[2];
    indicators_at(n, m, x[0], x[1], z0);
    for (;;) {
        const double h = fmin(*size, end - t);
        const double error = dp_step(n, m, x, h, y);
        if (!(error <= 1.0) && h > 1e-14 * fmax(1.0, fabs(t))) {
            *size = h * fmax(0.2, 0.9 * pow(error, -0.2));
            continue;
        }
        indicators_at(n, m, y[0], y[1], z1);
        if (!crossed(z0, z1)) {
            x[0] = y[0], x[1] = y[1];
            *reached = t + h;
            *size = h * fmin(5.0, error > 0 ? 0.9 * pow(error, -0.2) : 5.0);
            return 0;
        }
        double low = 0.0, high = h; /* the switch by bisection on the step from x: past it at `high` */
        for (int i = 0; i < 200 && high - low > 4 * 2.22e-16 * fmax(1.0, fabs(t + high)); ++i) {
            const double mid = 0.5 * (low + high);
            dp_step(n, m, x, mid, y);
            indicators_at(n, m, y[0], y[1], z1);
            if (crossed(z0, z1)) high = mid;
            else low = mid;
        }
        dp_step(n, m, x, high, y);
        x[0] = y[0], x[1] = y[1];
        *reached = t + high;
        return 1;
    }
}

int native_MassWithStopAndFriction_advance(NativeInstance *n, double t, double h) {
    double x[2] = {n->state[S], n->state[VEL]}, now = t, size = h, reached;
    const double end = t + h;
    if (settle(n) < 0) return -1; /* the loads may have jumped since the last step: an event at its start */
    x[0] = n->state[S], x[1] = n->state[VEL];
    for (int pieces = 0; now < end; ++pieces) {
        if (pieces > 10000)
            return native_fail_text(n, 0, "%s '%s': more than 10000 switches in one step from t = %.17g s",
                                    n->cls->name, native_instance_name(n), t);
        const Modes m = stored(n);
        const int switched = advance_piece(n, &m, x, now, end, &size, &reached);
        now = reached;
        n->state[S] = x[0], n->state[VEL] = x[1];
        if (switched) {
            const double before = n->time;
            n->time = now;
            const int changed = settle(n);
            n->time = before;
            if (changed < 0) return -1;
            x[0] = n->state[S], x[1] = n->state[VEL];
            size = fmax(size, 1e-6 * h);
        }
    }
    return 0;
}
