/* CoordinateSpringDamperExt and RotationalSpringDamperExt (components/coordinate_spring_damper_ext.py declares them
 * and states the law): Exudyn's Stribeck and bristle friction, limit stops and end-of-step switching, the event
 * indicators and Model Exchange's event mode. */
#include <float.h>
#include <math.h>

#include "connector.h"
#include "expression.h"
#include "native_variables.h"

#define E(name) CoordinateSpringDamperExt__##name
#define V(name) n->values[E(name)]
#define USER_FUNCTION 0
#define NO_TIME (-1e308)

/* the two classes share one variable layout (the rotational one differs in units only) */
_Static_assert((int)E(immediateSwitching) == (int)RotationalSpringDamperExt__immediateSwitching, "one layout");
_Static_assert((int)E(flange_b_a) == (int)RotationalSpringDamperExt__flange_b_a, "one layout");
_Static_assert((int)E(indicator_friction) == (int)RotationalSpringDamperExt__indicator_friction, "one layout");

/* the hidden state's slots (initial_state's order) */
enum { MODE, STICKING, STOP, SWITCHING_ERROR, STOP_SWITCH_TIME, FRICTION_SWITCH_TIME };

typedef struct {
    double mode, sticking, stop; /* friction mode, last sticking position, limit-stop state */
} Switching;

typedef struct {
    double k, d, offset, velocity_offset, f_d, f_so, k_mu, d_mu, v_exp, f_v, v_reg, upper, lower, k_ls, d_ls;
    int stops;
} Law;

static Law law_of(const NativeInstance *n) {
    return (Law){V(stiffness), V(damping), V(offset), V(velocityOffset), V(fDynamicFriction),
                 V(fStaticFrictionOffset), V(stickingStiffness), V(stickingDamping), V(exponentialDecayStatic),
                 V(fViscousFriction), V(frictionProportionalZone), V(limitStopsUpper), V(limitStopsLower),
                 V(limitStopsStiffness), V(limitStopsDamping), V(useLimitStops) != 0.0};
}

static int bristle(const Law *l) { return l->v_reg == 0 && (l->f_d != 0 || l->f_so != 0); }
static int discontinuous(const Law *l) { return bristle(l) || l->stops; }
static double sign(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }

static double stribeck(const Law *l, double v) {
    if (l->v_reg != 0 && fabs(v) <= l->v_reg) return (l->f_d + l->f_so) * v / l->v_reg;
    const double w = fabs(v) - l->v_reg;
    const double stat = l->v_exp != 0 ? l->f_so * exp(-w / l->v_exp) : l->f_so;
    return sign(v) * (l->f_d + stat + l->f_v * w);
}

static double stribeck_slope(const Law *l, double v) {
    if (l->v_reg != 0 && fabs(v) <= l->v_reg) return (l->f_d + l->f_so) / l->v_reg;
    const double w = fabs(v) - l->v_reg;
    return l->f_v - (l->v_exp != 0 ? l->f_so / l->v_exp * exp(-w / l->v_exp) : 0.0);
}

static double sticking_force(const Law *l, double q, double v, double x_lsp) {
    return (q - x_lsp) * l->k_mu + v * l->d_mu;
}

static double friction_force(const Law *l, double q, double v, const Switching *s) {
    if (l->v_reg != 0) return stribeck(l, v);
    if (!bristle(l)) return 0.0;
    if (s->mode == 0) return sticking_force(l, q, v, s->sticking);
    return sign(s->mode) * fabs(stribeck(l, v));
}

static double limit_stop_force(const Law *l, double q, double v, const Switching *s) {
    if (!l->stops || s->stop == 0) return 0.0;
    const double stop = s->stop < 0 ? l->lower : l->upper;
    return (q - stop) * l->k_ls + v * l->d_ls;
}

/* x_lsp moved by the fewest ulps toward q so that the sticking force is within f_d + f_so (the law's comment) */
static double within_limit(const Law *l, double q, double v, double x_lsp, double preload) {
    const double limit = l->f_d + l->f_so, toward = preload > 0 ? INFINITY : -INFINITY;
    for (int i = 0; i < 64; ++i) {
        if (fabs(sticking_force(l, q, v, x_lsp)) <= limit) break;
        x_lsp = nextafter(x_lsp, toward);
    }
    return x_lsp;
}

/* Exudyn's PostNewtonStep: the new switching state and the switching error at (q, v) */
static double post_newton(const Law *l, double q, double v, const Switching *data, const Switching *start,
                          int immediate, int closed, Switching *out) {
    double error = 0.0, new_mode, new_x;
    const double mode = data->mode, x_lsp = data->sticking;
    if (mode == 0) {
        new_x = x_lsp;
        const double f_stick = sticking_force(l, q, v, x_lsp), limit = l->f_d + l->f_so;
        if (fabs(f_stick) > limit || (closed && fabs(f_stick) == limit && limit > 0)) {
            const double slip = stribeck(l, v);
            error += fabs(f_stick) - fabs(slip);
            new_mode = slip != 0 || !closed ? slip : copysign(limit, f_stick);
        } else {
            new_mode = 0.0;
        }
    } else {
        const double slip = stribeck(l, v);
        new_x = q, new_mode = slip;
        if (v * mode < 0 || (closed && v == 0)) {
            if (start->mode == 0) {
                new_x = start->sticking, new_mode = 0.0;
                error += fabs(fabs(slip) - fabs(sticking_force(l, q, v, x_lsp)));
            } else {
                const double preload = immediate ? copysign(l->f_d + l->f_so, start->mode) : start->mode;
                new_x = q - (preload - v * l->d_mu) / l->k_mu;
                if (immediate) new_x = within_limit(l, q, v, new_x, preload);
                error += fabs(start->mode - slip);
                new_mode = 0.0;
            }
        }
    }
    double contact = 0.0;
    if (l->stops) {
        const double c = data->stop, k_ls = l->k_ls;
        if (c < 0) {
            contact = q > l->lower ? 0.0 : q - l->lower;
            if (q > l->lower) error += fabs(c * k_ls);
        } else if (c > 0) {
            contact = q < l->upper ? 0.0 : q - l->upper;
            if (q < l->upper) error += fabs(c * k_ls);
        } else if (q > l->upper) {
            contact = q - l->upper;
            error += fabs(contact * k_ls);
        } else if (q < l->lower) {
            contact = q - l->lower;
            error += fabs(contact * k_ls);
        }
    }
    *out = (Switching){new_mode, new_x, contact};
    return error;
}

static Switching stored(const NativeInstance *n) {
    return (Switching){n->state[MODE], n->state[STICKING], n->state[STOP]};
}

/* the end-of-step update of the stored state at (q, v) and its switching error */
static double updated_state(const NativeInstance *n, const Law *l, double q, double v, Switching *out) {
    const Switching data = stored(n);
    const int immediate = V(immediateSwitching) != 0.0 || n->in_model_exchange;
    return post_newton(l, q, v, &data, &data, immediate, n->in_model_exchange, out);
}

/* the switching state the force uses: the stored one, or with immediateSwitching the updated one */
static Switching acting_state(const NativeInstance *n, const Law *l, double q, double v) {
    Switching s = stored(n);
    if (V(immediateSwitching) != 0.0 && discontinuous(l) && !n->in_model_exchange) updated_state(n, l, q, v, &s);
    return s;
}

static const char *const NAMES[] = {"t", "itemNumber", "displacement", "velocity", "stiffness", "damping", "offset",
                                    "velocityOffset", "fDynamicFriction", "fStaticFrictionOffset",
                                    "exponentialDecayStatic", "fViscousFriction", "frictionProportionalZone", "u",
                                    "v", "k", "d"};
/* the order the arguments are passed in (an error message lists them so) */
static const int CALL_ORDER[] = {4, 5, 6, 7, 8, 9, 10, 11, 12, 0, 1, 2, 3, 13, 14, 15, 16};

static int user_function(NativeInstance *n, const Expression **e) {
    return native_user_function(n, USER_FUNCTION, E(springForceUserFunction), NAMES, 17, e);
}

/* (f, f_friction, f_limitStop) */
static int forces(NativeInstance *n, double q, double v, double *f, double *parts) {
    parts[0] = parts[1] = 0.0;
    if (V(activeConnector) == 0.0) {
        *f = 0.0;
        return 0;
    }
    const Expression *e;
    if (user_function(n, &e) != 0) return -1;
    if (!e) {
        const Law l = law_of(n);
        const Switching s = acting_state(n, &l, q, v);
        parts[0] = friction_force(&l, q, v, &s);
        parts[1] = limit_stop_force(&l, q, v, &s);
        *f = l.k * (q - l.offset) + l.d * (v - l.velocity_offset) + parts[0] + parts[1];
        return 0;
    }
    const double args[] = {n->time, V(itemNumber), q, v, V(stiffness), V(damping), V(offset), V(velocityOffset),
                           V(fDynamicFriction), V(fStaticFrictionOffset), V(exponentialDecayStatic),
                           V(fViscousFriction), V(frictionProportionalZone), q, v, V(stiffness), V(damping)};
    return native_call_user_function(n, USER_FUNCTION, E(springForceUserFunction), NAMES, 17, args, CALL_ORDER, f);
}

static int law(NativeInstance *n, double q, double v, double *f, double *parts) { return forces(n, q, v, f, parts); }

#define DIFFERENCE_STEP 1e-7

static int derivatives(NativeInstance *n, double q, double v, double *f_q, double *f_v) {
    *f_q = *f_v = 0.0;
    if (V(activeConnector) == 0.0) return 0;
    const Expression *e;
    if (user_function(n, &e) != 0) return -1;
    if (e) { /* connector.py: central differences of the element force */
        const double dq = DIFFERENCE_STEP * fmax(1.0, fabs(q)), dv = DIFFERENCE_STEP * fmax(1.0, fabs(v));
        double a, b, c, d, parts[2];
        if (forces(n, q + dq, v, &a, parts) != 0 || forces(n, q - dq, v, &b, parts) != 0
            || forces(n, q, v + dv, &c, parts) != 0 || forces(n, q, v - dv, &d, parts) != 0)
            return -1;
        *f_q = (a - b) / (2 * dq);
        *f_v = (c - d) / (2 * dv);
        return 0;
    }
    const Law l = law_of(n);
    const Switching s = acting_state(n, &l, q, v);
    *f_q = l.k, *f_v = l.d;
    const double slope = stribeck_slope(&l, v);
    if (l.v_reg != 0) {
        *f_v += slope;
    } else if (bristle(&l)) {
        if (s.mode == 0) {
            *f_q += l.k_mu;
            *f_v += l.d_mu;
        } else {
            *f_v += sign(s.mode) * sign(stribeck(&l, v)) * slope;
        }
    }
    if (l.stops && s.stop != 0) {
        *f_q += l.k_ls;
        *f_v += l.d_ls;
    }
    return 0;
}

static int indicators(NativeInstance *n, double q, double v, double *out) {
    const Law l = law_of(n);
    double lower = 0.0, upper = 0.0, friction = 0.0;
    const int active = V(activeConnector) != 0.0;
    if (active && l.stops) {
        lower = q - l.lower, upper = l.upper - q;
        if (n->in_model_exchange) { /* in contact: the penetration (<= 0: out); a stop reached exactly (its contact
                                     * the least double) stays on the contact side at 0, so that going on into it
                                     * is no crossing */
            const double contact = n->state[STOP];
            lower = contact < 0 ? (lower == 0.0 && contact == -5e-324 ? DBL_MIN : -lower) : lower;
            upper = contact > 0 ? (upper == 0.0 && contact == 5e-324 ? DBL_MIN : -upper) : upper;
        }
    }
    if (active && bristle(&l)) {
        const double f_max = l.f_d + l.f_so;
        if (n->in_model_exchange) {
            const Switching data = stored(n);
            friction = data.mode == 0 ? f_max - fabs(sticking_force(&l, q, v, data.sticking))
                                      : f_max * v * sign(data.mode) / l.v_exp;
        } else {
            Switching data;
            updated_state(n, &l, q, v, &data);
            if (data.mode != 0) friction = -f_max * fabs(v) / l.v_exp;
            else if (V(immediateSwitching) != 0.0 && n->state[MODE] != 0) friction = f_max * fabs(v) / l.v_exp;
            else friction = f_max - fabs(sticking_force(&l, q, v, data.sticking));
        }
    }
    out[0] = lower, out[1] = upper, out[2] = friction;
    return 0;
}

static const int STATE_OUTPUTS[] = {MODE, STICKING, STOP, SWITCHING_ERROR};
static const ConnectorLaw LAW = {law, derivatives, indicators, 2, 3, E(factor0), E(factor1), STATE_OUTPUTS, 4};

static int outputs(NativeInstance *n, double *out) {
    if (connector_outputs(n, &LAW, out) != 0) return -1;
    const Law l = law_of(n);
    if (V(immediateSwitching) != 0.0 && discontinuous(&l) && V(activeConnector) != 0.0 && !n->in_model_exchange) {
        double q, v;
        Switching s;
        connector_relative(n, &LAW, &q, &v);
        out[E(switchingError) - E(s_rel)] = updated_state(n, &l, q, v, &s);
    }
    return 0;
}

static int validate(NativeInstance *n) {
    const char *factors[] = {"factor0", "factor1"};
    const double values[] = {V(factor0), V(factor1)};
    for (int i = 0; i < 2; ++i)
        if (values[i] == 0) return native_fail(n, factors[i], values[i], "may not be zero");
    const Law l = law_of(n);
    const int friction = l.f_d != 0 || l.f_so != 0;
    if ((l.v_reg == 0 || l.stops) && friction && l.k_mu == 0)
        return native_fail(n, "stickingStiffness", 0.0, "may not be zero with fDynamicFriction or "
                           "fStaticFrictionOffset != 0 when frictionProportionalZone = 0 or useLimitStops");
    if (discontinuous(&l) && V(frictionMode_start) != 0 && l.k_mu == 0)
        return native_fail(n, "stickingStiffness", 0.0, "may not be zero with frictionMode_start != 0 "
                           "(a switch to sticking divides by it)");
    const Expression *e;
    return user_function(n, &e);
}

static int advance(NativeInstance *n) {
    const Law l = law_of(n);
    if (!(discontinuous(&l) && V(activeConnector) != 0.0)) return 0;
    double q, v;
    Switching s;
    connector_relative(n, &LAW, &q, &v);
    const double error = updated_state(n, &l, q, v, &s);
    n->state[MODE] = s.mode, n->state[STICKING] = s.sticking, n->state[STOP] = s.stop;
    n->state[SWITCHING_ERROR] = error;
    return 0;
}

/* Model Exchange's event mode (fmi2NewDiscreteStates) */
static int update_discrete_states(NativeInstance *n) {
    const Law l = law_of(n);
    const Switching before = stored(n);
    const int stop_kept = n->state[STOP_SWITCH_TIME] == n->time, friction_kept = n->state[FRICTION_SWITCH_TIME] == n->time;
    advance(n);
    if (l.stops && V(activeConnector) != 0.0) {
        double q, v;
        connector_relative(n, &LAW, &q, &v);
        const int touching = q == l.upper || q == l.lower;
        if (before.stop == 0 && n->state[STOP] == 0 && touching)
            n->state[STOP] = copysign(5e-324, q == l.upper ? 1.0 : -1.0);
    }
    const Switching after = stored(n);
    if ((after.stop == 0) != (before.stop == 0)) {
        if (stop_kept) n->state[STOP] = before.stop;
        n->state[STOP_SWITCH_TIME] = n->time;
    }
    if ((after.mode == 0) != (before.mode == 0)) {
        if (friction_kept) n->state[MODE] = before.mode, n->state[STICKING] = before.sticking;
        n->state[FRICTION_SWITCH_TIME] = n->time;
    }
    return 0;
}

int native_CoordinateSpringDamperExt_outputs(NativeInstance *n, double *out) { return outputs(n, out); }
int native_CoordinateSpringDamperExt_validate(NativeInstance *n) { return validate(n); }
int native_CoordinateSpringDamperExt_advance(NativeInstance *n, double t, double h) { (void)t, (void)h; return advance(n); }
int native_CoordinateSpringDamperExt_update_discrete_states(NativeInstance *n) { return update_discrete_states(n); }
int native_RotationalSpringDamperExt_outputs(NativeInstance *n, double *out) { return outputs(n, out); }
int native_RotationalSpringDamperExt_validate(NativeInstance *n) { return validate(n); }
int native_RotationalSpringDamperExt_advance(NativeInstance *n, double t, double h) { (void)t, (void)h; return advance(n); }
int native_RotationalSpringDamperExt_update_discrete_states(NativeInstance *n) { return update_discrete_states(n); }
int native_CoordinateSpringDamperExt_partials(NativeInstance *n, double *out) { return connector_partials(n, &LAW, out); }
int native_RotationalSpringDamperExt_partials(NativeInstance *n, double *out) { return connector_partials(n, &LAW, out); }
