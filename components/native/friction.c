/* MSL's friction elements (components/friction.py: the law, its state machine, its parameters and sources):
 * Interfaces.PartialFriction's discrete equations and the Clutch, Brake, RotationalBrake, BearingFriction and
 * SupportFriction, one law with the class's parameters (Friction). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connector.h"
#include "friction.h"
#include "native_variables.h"
#include "table_rows.h"

/* a class: its parameters' value references, and table_signs[1] at startBackward */
typedef struct {
    int table, peak, cgeo, fn_max, small; /* cgeo, fn_max -1: the table is the force itself (never free) */
    int backward_sign;
} Friction;

static const Friction CLUTCH = {Clutch__mu_pos, Clutch__peak, Clutch__cgeo, Clutch__fn_max, Clutch__w_small, 1};
static const Friction ROTATIONAL_BRAKE = {RotationalBrake__mu_pos, RotationalBrake__peak, RotationalBrake__cgeo,
                                          RotationalBrake__fn_max, RotationalBrake__w_small, -1};
static const Friction BRAKE = {Brake__mu_pos, Brake__peak, Brake__cgeo, Brake__fn_max, Brake__v_small, -1};
static const Friction BEARING = {BearingFriction__tau_pos, BearingFriction__peak, -1, -1, BearingFriction__w_small,
                                 -1};
static const Friction SUPPORT = {SupportFriction__f_pos, SupportFriction__peak, -1, -1, SupportFriction__v_small, -1};

/* the inputs after the connector's six: f_normalized (with a normal force), lambda */
static double normalized(const Friction *k, const NativeInstance *n) {
    return k->fn_max >= 0 ? n->values[n->cls->parameter_count + 6] : 1.0;
}
static double lambda(const Friction *k, const NativeInstance *n) {
    return n->values[n->cls->parameter_count + (k->fn_max >= 0 ? 7 : 6)];
}
/* the relative speed and acceleration (the connector's flange inputs) */
static double speed(const NativeInstance *n) {
    const double *in = n->values + n->cls->parameter_count;
    return in[3] - in[1];
}
static double acceleration(const NativeInstance *n) {
    const double *in = n->values + n->cls->parameter_count;
    return in[5] - in[4];
}
/* fn (the table's scale 1 without a normal force) */
static double normal_force(const Friction *k, const NativeInstance *n) {
    return k->fn_max >= 0 ? n->values[k->fn_max] * normalized(k, n) : 1.0;
}

/* the hidden state's slots (components/friction.py DISCRETE) */
enum { MODE, LOCKED, START_FORWARD, START_BACKWARD, IS_FREE };
#define ITERATIONS 0              /* flags: consecutive event iterations that changed the discrete state */
#define DRIVEN 1                  /* ... lambda written after initialization */
#define WARNED 2                  /* ... the warning of an undriven locked element given */
#define MAX_ITERATIONS 100        /* ... after which the iteration is refused (a host that never settles) */

/* MSL PartialFriction's discrete equations, once, with `pre` the values before and sa the path parameter */
static Modes next_modes(const Modes *pre, int initial, int free, double w, double sa, double tau0, double tau0_max,
                        double w_small) {
    Modes m;
    m.free = free;
    m.start_forward = (pre->mode == STUCK && (sa > tau0_max || (pre->start_forward && sa > tau0)))
                      || (pre->mode == BACKWARD && w > w_small) || (initial && w > 0);
    m.start_backward = (pre->mode == STUCK && (sa < -tau0_max || (pre->start_backward && sa < -tau0)))
                       || (pre->mode == FORWARD && w < -w_small) || (initial && w < 0);
    m.locked = !free && !(pre->mode == FORWARD || m.start_forward || pre->mode == BACKWARD || m.start_backward);
    m.mode = free ? FREE
             : (pre->mode == FORWARD || pre->mode == FREE || m.start_forward) && w > 0 ? FORWARD
             : (pre->mode == BACKWARD || pre->mode == FREE || m.start_backward) && w < 0 ? BACKWARD
                                                                                        : STUCK;
    return m;
}

static Modes stored(const NativeInstance *n) { return held_modes(n->state + MODE); }

/* A discrete state a saved FMU state may hold (the class's rules, also of a restored state): `count` Booleans
 * from `first` (0 or 1) and, for PartialFriction's, a mode of MSL's that agrees with them (Free exactly when free;
 * unknown, before the first event mode, with none set). 0, or -1 after native_fail. */
static int discrete_rules(NativeInstance *n, size_t first, size_t count, int mode_slot) {
    static const char *const PARTIAL[] = {"mode", "locked", "startForward", "startBackward", "free"};
    static const char *const ONE_WAY_NAMES[] = {"stuck", "locked", "startForward", "free", "initial"};
    const char *const *names = mode_slot ? PARTIAL : ONE_WAY_NAMES;
    for (size_t i = first; i < first + count; ++i)
        if (n->state[i] != 0.0 && n->state[i] != 1.0)
            return native_fail(n, names[i], n->state[i], "is not a Boolean (0 or 1) in the discrete state");
    if (!mode_slot) return 0;
    const double mode = n->state[MODE];
    if (held_mode(mode) != mode)
        return native_fail(n, "mode", mode, "is not one of MSL's modes (-1, 0, 1, 2, 3) in the discrete state");
    const Modes m = stored(n);
    if ((m.free != (m.mode == FREE)) || (m.mode == UNKNOWN && (m.locked || m.start_forward || m.start_backward)))
        return native_fail(n, "mode", mode, "contradicts free, locked, startForward or startBackward in the "
                           "discrete state (mode is 2 exactly when free; 3, before the first event mode, with none "
                           "set)");
    return 0;
}

/* --- the table mu_pos ------------------------------------------------------------------------------------- */

typedef struct {
    char *text;          /* what the rows were read from, NULL: not read */
    uint64_t texts;      /* the instance's `texts` when text was last found to be the parameter's */
    double *w, *mu;
    size_t count;
    /* the event iterations at one instant with the same inputs: the time, the inputs and the states seen */
    double time, inputs[8];
    size_t seen;
    int history[8][5];
    /* a host that iterates with the inputs held: the time of the last iteration that changed the state (changed),
     * whether an input was written since (passed), and whether the host was seen to hold them (holds_inputs); the
     * sign of w_rel where MSL's transient configuration (stuck, neither locked nor starting) was entered
     * (entry_signed) */
    double changed_time;
    int changed, passed, holds_inputs, entry_signed;
    double entry_sign;
} Rows;

static void release(void *data) {
    Rows *r = data;
    free(r->text);
    free(r->w);
    free(r->mu);
    free(r);
}

/* the rows of mu_pos, read again when the parameter's text changed: 0, or -1 after native_fail */
static int rows(const Friction *k, NativeInstance *n, const Rows **out) {
    const char *text = n->strings[k->table] ? n->strings[k->table] : "";
    if (!n->data) {
        if (!(n->data = calloc(1, sizeof(Rows)))) return native_fail_text(n, 0, "out of memory");
        n->release = release;
    }
    Rows *r = n->data;
    if (r->text && n->texts && r->texts == n->texts) { /* no text written since */
        *out = r;
        return 0;
    }
    if (!r->text || strcmp(r->text, text) != 0) {
        NativeRows parsed = {0};
        char why[400], problem[480], shown[8200];
        free(r->text), free(r->w), free(r->mu);
        memset(r, 0, sizeof *r);
        if (native_table_text(text, 2, &parsed, why, sizeof why) != 0) {
            snprintf(problem, sizeof problem, "is not a valid table: %s", why);
        } else {
            problem[0] = '\0';
            for (size_t i = 1; i < parsed.count && !problem[0]; ++i)
                if (!(parsed.times[i] > parsed.times[i - 1]))
                    snprintf(problem, sizeof problem, "is not a valid table: the speed of row %zu is not greater "
                             "than that of row %zu (the rows must increase strictly)", i + 1, i);
        }
        if (problem[0]) {
            native_rows_free(&parsed);
            native_repr_text(text, shown, sizeof shown);
            return native_fail_text(n, 0, "%s '%s': %s = %s %s", n->cls->name, native_instance_name(n),
                                    n->cls->variables[k->table].name, shown, problem);
        }
        if (!(r->text = malloc(strlen(text) + 1))) {
            native_rows_free(&parsed);
            return native_fail_text(n, 0, "out of memory");
        }
        memcpy(r->text, text, strlen(text) + 1);
        r->w = parsed.times, r->mu = parsed.values, r->count = parsed.count;
    }
    r->texts = n->texts;
    *out = r;
    return 0;
}

/* mu_pos at w (MSL's LinearSegments, LastTwoPoints), and its slope there (from the right at a row) */
static double interpolate(const Rows *r, double w, double *slope) {
    *slope = 0.0;
    if (r->count == 1) return r->mu[0];
    size_t i = 0;
    while (i + 2 < r->count && w >= r->w[i + 1]) ++i;
    *slope = (r->mu[i + 1] - r->mu[i]) / (r->w[i + 1] - r->w[i]);
    return r->mu[i] + *slope * (w - r->w[i]);
}

/* --- the law ---------------------------------------------------------------------------------------------- */

typedef struct {
    Modes m;
    double w, a, fn, tau0, tau0_max, mu, mu_slope, tau, sa; /* mu: the coefficient, or the table's force */
} Point;

static double sign(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }

/* sign(w_rel) in MSL's transient configuration (stuck, neither locked nor starting: one event iteration long in
 * MSL): the sign where it was entered, so that a host that holds it a while (passing the outputs on after the
 * event mode) reads the instant's */
static double transient_sign(const NativeInstance *n, const Modes *m, double w) {
    const Rows *d = n->data;
    return m->mode == STUCK && d && d->entry_signed ? d->entry_sign : sign(w);
}

/* the scale of the table's value: cgeo*fn, or 1 where the table is the force itself */
static double scale(const Friction *k, const NativeInstance *n, double fn) {
    return k->cgeo >= 0 ? n->values[k->cgeo] * fn : 1.0;
}

/* everything at the current inputs with the discrete state `m` held: 0, or -1 after native_fail */
static int evaluate(const Friction *k, NativeInstance *n, const Modes *m, Point *p) {
    const Rows *r;
    if (rows(k, n, &r) != 0) return -1;
    double slope;
    p->m = *m;
    p->w = speed(n);
    p->a = acceleration(n);
    p->fn = normal_force(k, n);
    p->tau0 = interpolate(r, 0.0, &slope) * scale(k, n, p->fn);
    p->tau0_max = n->values[k->peak] * p->tau0;
    const int s1 = m->start_forward ? 1 : m->start_backward ? k->backward_sign : m->mode == FORWARD ? 1 : -1;
    const int s2 = m->start_forward ? 1 : m->start_backward ? -1 : m->mode == FORWARD ? 1 : -1;
    p->mu = s2 * interpolate(r, s1 * p->w, &slope);
    p->mu_slope = s1 * s2 * slope;
    p->tau = m->locked ? lambda(k, n) : m->free ? 0.0 : p->mu * scale(k, n, p->fn);
    p->sa = m->locked                                  ? p->tau
            : m->free                                  ? p->a
            : m->start_forward || m->mode == FORWARD   ? p->a + p->tau0_max
            : m->start_backward || m->mode == BACKWARD ? p->a - p->tau0_max
            : p->a + transient_sign(n, m, p->w) * p->tau0_max;
    return 0;
}

/* the discrete state the outputs use: the held one, or before the first event mode the initial equations' */
static Modes current(const Friction *k, NativeInstance *n) {
    Modes m = stored(n);
    if (m.mode != UNKNOWN) return m;
    return next_modes(&m, 1, normal_force(k, n) <= 0, speed(n), 0.0, 0.0, 0.0, n->values[k->small]);
}

/* tau and the law's outputs (a_rel, sa, [mu, fn,] tau0, tau0_max, lossPower, residual_v, constraintEquation) */
static int law(const Friction *k, NativeInstance *n, double v, double *f, double *parts) {
    const Modes m = current(k, n);
    Point p;
    if (evaluate(k, n, &m, &p) != 0) return -1;
    *f = p.tau;
    *parts++ = p.a, *parts++ = p.sa;
    if (k->fn_max >= 0) *parts++ = p.mu, *parts++ = p.fn;
    *parts++ = p.tau0, *parts++ = p.tau0_max, *parts++ = p.tau * v;
    parts[0] = parts[1] = m.locked ? v : lambda(k, n);
    parts[2] = m.locked ? p.tau - p.a : 0.0;
    return 0;
}

static int slopes(const Friction *k, NativeInstance *n, double *f_q, double *f_v) {
    const Modes m = current(k, n);
    Point p;
    if (evaluate(k, n, &m, &p) != 0) return -1;
    *f_q = 0.0;
    *f_v = m.locked || m.free ? 0.0 : p.mu_slope * scale(k, n, p.fn);
    return 0;
}

/* the event indicator `resume`: 1, but where an event iteration was pending after the event mode at event_time
 * (the discrete state lags the inputs: a host iterated with them held) the time left until RESUME_DELAY after it */
#define RESUME_DELAY 1.0e-9 /* [s], relative to the time beyond 1 s */
static double resume_indicator(const NativeInstance *n) {
    return n->resume ? n->event_time + RESUME_DELAY * fmax(1.0, fabs(n->event_time)) - n->time : 1.0;
}

/* An indicator's zero, for a host that holds the inputs through event mode (OMSimulator, fmpy: CVODE's root
 * finding), as the smallest negative normal number: FMI's domains are z > 0 and z <= 0 (free where fn <= 0, no
 * longer sliding forward where w_rel <= 0), and CVODE takes an exact 0, where a located root can land (a speed held
 * by the locked phase, then leaving it linearly), as no sign at all and misses the crossing that follows. (A master
 * that passes the outputs on between the iterations, mechfmu's, reads the zero itself.) */
static double below_zero(const NativeInstance *n, double z) {
    const Rows *d = n->data;
    return z != 0.0 || !d || !d->holds_inputs ? z : -DBL_MIN;
}

/* [fn,] the speed while sliding or starting, the slip, resume (components/friction.py) */
static int indicators(const Friction *k, NativeInstance *n, double v, double *out) {
    const Modes m = current(k, n);
    Point p;
    if (evaluate(k, n, &m, &p) != 0) return -1;
    if (k->fn_max >= 0) *out++ = below_zero(n, p.fn);
    out[0] = m.locked || m.free ? 1.0 : below_zero(n, v);
    out[1] = m.locked           ? p.tau0_max - fabs(p.tau)
             : m.start_forward  ? p.sa - p.tau0
             : m.start_backward ? -p.tau0 - p.sa
             : m.mode == FORWARD ? 1.0 + v / n->values[k->small]
             : m.mode == BACKWARD ? 1.0 - v / n->values[k->small]
                                 : 1.0;
    out[2] = resume_indicator(n);
    return 0;
}

static const int STATE_OUTPUTS[] = {MODE, LOCKED, START_FORWARD, START_BACKWARD, IS_FREE};

/* the connector's outputs, the discrete ones those the outputs use (the initial equations' before the first event
 * mode) */
static int outputs(const Friction *k, const ConnectorLaw *l, NativeInstance *n, double *out) {
    if (connector_outputs(n, l, out) != 0) return -1;
    const Modes m = current(k, n);
    double *discrete = out + 3 + l->part_count + 8;
    discrete[0] = m.mode, discrete[1] = m.locked, discrete[2] = m.start_forward, discrete[3] = m.start_backward;
    discrete[4] = m.free;
    return 0;
}

/* An event iteration from the discrete state `pre` to `next` (its values as five ints): NATIVE_DISCRETE_NEEDED if
 * another is needed, 0
 * if not: unchanged, or a state already seen at this instant with these inputs (the iteration cycles where the
 * inputs stay, as for a host that does not pass the outputs on: it cannot settle by itself, so it ends there with
 * `next`); -1 after native_fail when MAX_ITERATIONS at one instant changed it. */
static int iteration(NativeInstance *n, const int pre[5], const int next[5], int locked) {
    Rows *d = n->data; /* there: every update evaluated the law first */
    const double *in = n->values + n->cls->parameter_count;
    const size_t count = n->cls->input_count < 8 ? n->cls->input_count : 8, size = 5 * sizeof(int);
    if (d->time != n->time) n->flags[ITERATIONS] = 0;
    if (d->time != n->time || d->seen == 0 || memcmp(d->inputs, in, count * sizeof *in) != 0
        || memcmp(d->history[d->seen - 1], pre, size) != 0) {
        d->time = n->time, d->seen = 1;
        memcpy(d->inputs, in, count * sizeof *in);
        memcpy(d->history[0], pre, size);
    }
    d->changed = 0;
    if (!memcmp(next, pre, size)) {
        n->flags[ITERATIONS] = 0;
        return 0;
    }
    for (size_t i = 0; i < d->seen; ++i)
        if (!memcmp(d->history[i], next, size)) return 0;
    if (d->seen < 8) memcpy(d->history[d->seen++], next, size);
    if (++n->flags[ITERATIONS] <= MAX_ITERATIONS) {
        d->changed = 1, d->changed_time = n->time, d->passed = 0;
        return NATIVE_DISCRETE_NEEDED;
    }
    n->flags[ITERATIONS] = 0;
    native_fail_text(n, 0, "%s '%s': the friction mode does not settle at t = %.17g s: %d event iterations changed "
                     "it (locked %d); the master must pass the outputs on between the iterations", n->cls->name,
                     native_instance_name(n), n->time, MAX_ITERATIONS, locked);
    return -1;
}

/* Model Exchange's event mode with the inputs held (OMSimulator's and fmpy's: one FMU at a time, the loop solved
 * after): the last iteration at this instant changed the discrete state and no input was written since, so the
 * next would read the other FMUs' outputs of before the change (the host is marked as one that holds them). Where
 * that iteration reads sa (stuck: sa follows from the whole system's accelerations and lambda) it ends there; the
 * `resume` indicator asks for the rest once the outputs are passed on. (Co-simulation's event mode iterates at its
 * inputs, as its master gives them.) */
static int held(const NativeInstance *n) {
    Rows *d = n->data;
    if (!n->in_model_exchange || !d || !d->changed || d->changed_time != n->time || d->passed) return 0;
    d->changed = 0, d->holds_inputs = 1;
    return 1;
}

/* one event iteration (components/friction.py): NATIVE_DISCRETE_NEEDED if the discrete state changed (another
 * iteration is needed), 0 if not, -1 after native_fail; `event_mode`: FMI's, where the inputs may be held */
static int update(const Friction *k, NativeInstance *n, int event_mode) {
    const Modes pre = stored(n);
    if (event_mode && held(n) && pre.mode == STUCK) return 0;
    Point p;
    if (evaluate(k, n, &pre, &p) != 0) return -1;
    const int initial = pre.mode == UNKNOWN;
    const Modes m = next_modes(&pre, initial, p.fn <= 0, p.w, p.sa, p.tau0, p.tau0_max, n->values[k->small]);
    const int before[5] = {pre.mode, pre.locked, pre.start_forward, pre.start_backward, pre.free};
    const int after[5] = {m.mode, m.locked, m.start_forward, m.start_backward, m.free};
    const int needed = iteration(n, before, after, m.locked);
    if (needed < 0) return -1;
    Rows *d = n->data;
    const int transient = m.mode == STUCK && !m.locked && !m.start_forward && !m.start_backward && !m.free;
    if (!transient) d->entry_signed = 0;
    else if (memcmp(before, after, sizeof before)) d->entry_signed = 1, d->entry_sign = sign(p.w);
    n->state[MODE] = m.mode, n->state[LOCKED] = m.locked, n->state[START_FORWARD] = m.start_forward;
    n->state[START_BACKWARD] = m.start_backward, n->state[IS_FREE] = m.free;
    return needed;
}

/* whether an event iteration now would change the discrete state (event_pending: no side effect) */
static int pending(const Friction *k, NativeInstance *n) {
    const Modes pre = stored(n);
    Point p;
    if (evaluate(k, n, &pre, &p) != 0) return -1;
    const Modes m = next_modes(&pre, pre.mode == UNKNOWN, p.fn <= 0, p.w, p.sa, p.tau0, p.tau0_max,
                               n->values[k->small]);
    return m.mode != pre.mode || m.locked != pre.locked || m.start_forward != pre.start_forward
           || m.start_backward != pre.start_backward || m.free != pre.free;
}

/* co-simulation: the event iterations at the step's end, with the inputs held */
static int advance(const Friction *k, NativeInstance *n) {
    for (int i = 0; i < 8; ++i) {
        const int changed = update(k, n, 0);
        if (changed <= 0) return changed;
    }
    n->flags[ITERATIONS] = 0;
    return 0;
}

/* the connector's partials, then d(force, flange forces)/d lambda and d(residual_v, constraintEquation)/d(v_a, v_b,
 * lambda) (components/friction.py friction_partials) */
static int partials(const Friction *k, const ConnectorLaw *l, NativeInstance *n, double *out) {
    if (connector_partials(n, l, out) != 0) return -1;
    const double locked = current(k, n).locked ? 1.0 : 0.0;
    double *extra = out + 18;
    extra[0] = locked, extra[1] = -locked, extra[2] = locked;
    for (int i = 0; i < 2; ++i) extra[3 + 3 * i] = -locked, extra[4 + 3 * i] = locked, extra[5 + 3 * i] = 1.0 - locked;
    extra[9] = locked, extra[10] = -locked, extra[11] = locked; /* lambda_loop on flange_a.a, flange_b.a, lambda */
    return 0;
}

/* lambda written after initialization: a host that solves the locked force */
static void written(const Friction *k, NativeInstance *n, size_t index) {
    if (n->initialized && index == n->cls->parameter_count + (k->fn_max >= 0 ? 7 : 6)) n->flags[DRIVEN] = 1;
    if (n->data && index >= n->cls->parameter_count) ((Rows *)n->data)->passed = 1;
}

/* after a co-simulation step: the warning, once, that the host has not driven the locked force (it cannot lock
 * the element where it should: MSL's stuck phase needs the master) */
static int step_warning(NativeInstance *n, int locked, char *out, size_t size) {
    if (n->flags[DRIVEN] || n->flags[WARNED]) return 0;
    n->flags[WARNED] = 1;
    char time[40];
    native_measured(n->time, time, sizeof time);
    snprintf(out, size, "%s '%s': its force input lambda has not been driven since initialization (t = %s s, %s). "
             "This FMU does not solve its locked force: whenever the element locks (MSL's stuck phase), the master "
             "must solve lambda so that the relative speed stays 0, and locate the switches, as mechfmu's monolithic "
             "master does; a co-simulation host that leaves lambda at its start value gets a friction force that "
             "does not hold the element at rest. (Warned once per instance.)", n->cls->name,
             native_instance_name(n), time, locked ? "locked now" : "not locked now");
    return 1;
}

/* a class's law: PARTS, INDICATORS its law outputs and indicators (10 and 4 with a normal force, else 8 and 3) */
#define FRICTION_CLASS(Name, SPEC, PARTS, INDICATORS)                                                              \
    static int Name##_law(NativeInstance *n, double q, double v, double *f, double *parts) {                        \
        (void)q;                                                                                                    \
        return law(&SPEC, n, v, f, parts);                                                                          \
    }                                                                                                               \
    static int Name##_slopes(NativeInstance *n, double q, double v, double *f_q, double *f_v) {                     \
        (void)q, (void)v;                                                                                           \
        return slopes(&SPEC, n, f_q, f_v);                                                                          \
    }                                                                                                               \
    static int Name##_indicators(NativeInstance *n, double q, double v, double *out) {                              \
        (void)q;                                                                                                    \
        return indicators(&SPEC, n, v, out);                                                                        \
    }                                                                                                               \
    static const ConnectorLaw Name##_LAW = {Name##_law, Name##_slopes, Name##_indicators,                           \
                                            PARTS, INDICATORS, -1, -1,                                              \
                                            STATE_OUTPUTS, 5};                                                      \
    int native_##Name##_outputs(NativeInstance *n, double *out) { return outputs(&SPEC, &Name##_LAW, n, out); }     \
    int native_##Name##_validate(NativeInstance *n) {                                                               \
        const Rows *r;                                                                                              \
        return rows(&SPEC, n, &r) != 0 ? -1 : discrete_rules(n, LOCKED, 4, 1);                                      \
    }                                                                                                               \
    int native_##Name##_update_discrete_states(NativeInstance *n) { return update(&SPEC, n, 1); }                    \
    int native_##Name##_event_pending(NativeInstance *n) { return pending(&SPEC, n); }                           \
    int native_##Name##_advance(NativeInstance *n, double t, double h) {                                            \
        (void)t, (void)h;                                                                                           \
        return advance(&SPEC, n);                                                                                   \
    }                                                                                                               \
    int native_##Name##_partials(NativeInstance *n, double *out) { return partials(&SPEC, &Name##_LAW, n, out); }  \
    void native_##Name##_written(NativeInstance *n, size_t index) { written(&SPEC, n, index); }                     \
    int native_##Name##_step_warning(NativeInstance *n, char *out, size_t size) {                                   \
        return step_warning(n, current(&SPEC, n).locked, out, size);                                                \
    }

FRICTION_CLASS(Clutch, CLUTCH, 10, 4)
FRICTION_CLASS(RotationalBrake, ROTATIONAL_BRAKE, 10, 4)
FRICTION_CLASS(Brake, BRAKE, 10, 4)
FRICTION_CLASS(BearingFriction, BEARING, 8, 3)
FRICTION_CLASS(SupportFriction, SUPPORT, 8, 3)

/* --- OneWayClutch: a freewheel in parallel with a clutch (its own state machine) ---------------------------- */

#define W(name) n->values[OneWayClutch__##name]
/* its hidden state's slots (components/friction.py ONE_WAY) */
enum { ONE_WAY_STUCK, ONE_WAY_LOCKED, ONE_WAY_START_FORWARD, ONE_WAY_FREE, ONE_WAY_INITIAL };
#define EPS0 1.0e-4 /* MSL's relative hysteresis epsilon */

typedef struct {
    int stuck, locked, start_forward, free;
} OneWay;

typedef struct {
    OneWay m;
    double w, a, u, fn, mu0, tau0, tau0_max, mu, mu_slope, tau, sa;
} OneWayPoint;

static const Friction ONE_WAY = {OneWayClutch__mu_pos, OneWayClutch__peak, OneWayClutch__cgeo, OneWayClutch__fn_max,
                                 OneWayClutch__w_small, 1};

static OneWay one_way_stored(const NativeInstance *n) {
    const double *s = n->state;
    return (OneWay){s[ONE_WAY_STUCK] != 0.0, s[ONE_WAY_LOCKED] != 0.0, s[ONE_WAY_START_FORWARD] != 0.0,
                    s[ONE_WAY_FREE] != 0.0};
}

/* MSL's OneWayClutch equations at the inputs with `m` held: 0, or -1 after native_fail */
static int one_way_evaluate(NativeInstance *n, const OneWay *m, OneWayPoint *p) {
    const Rows *r;
    if (rows(&ONE_WAY, n, &r) != 0) return -1;
    double slope;
    p->m = *m;
    p->w = speed(n);
    p->a = acceleration(n);
    p->u = W(f_normalized);
    p->fn = m->free ? 0.0 : W(fn_max) * p->u;
    p->mu0 = interpolate(r, 0.0, &slope);
    p->tau0 = p->mu0 * W(cgeo) * p->fn;
    const double peak2 = W(peak) > 1 + EPS0 ? W(peak) : 1 + EPS0;
    p->tau0_max = m->free ? EPS0 * p->mu0 * W(cgeo) * W(fn_max) : peak2 * p->tau0;
    p->mu = interpolate(r, p->w, &p->mu_slope);
    p->tau = m->locked ? W(lambda) : m->free ? 0.0 : p->mu * W(cgeo) * p->fn;
    p->sa = m->locked ? p->tau : p->a + p->tau0;
    return 0;
}

/* startForward, locked, stuck and free once, from `pre` and the point (evaluated with free the inputs') */
static OneWay one_way_next(const OneWay *pre, int initial, const OneWayPoint *p, double w_small) {
    OneWay m;
    m.free = p->m.free;
    m.start_forward = (pre->stuck && (p->sa > p->tau0_max || (pre->start_forward && p->sa > p->tau0) || p->w > w_small))
                      || (initial && p->w > 0);
    m.locked = pre->stuck && !m.start_forward;
    m.stuck = m.locked || p->w <= 0;
    return m;
}

/* the state the outputs use: the held one, or before the first event mode the initial equations' */
static OneWay one_way_current(NativeInstance *n, OneWayPoint *p) {
    OneWay m = one_way_stored(n);
    if (n->state[ONE_WAY_INITIAL] == 0.0) return m;
    m.free = W(f_normalized) <= 0;
    if (one_way_evaluate(n, &m, p) != 0) return m;
    return one_way_next(&m, 1, p, W(w_small));
}

/* the outputs at the held state: 0, or -1 after native_fail */
static int one_way_point(NativeInstance *n, OneWayPoint *p) {
    const OneWay m = one_way_current(n, p);
    return one_way_evaluate(n, &m, p);
}

static int one_way_law(NativeInstance *n, double q, double v, double *f, double *parts) {
    (void)q;
    OneWayPoint p;
    if (one_way_point(n, &p) != 0) return -1;
    *f = p.tau;
    parts[0] = p.a, parts[1] = p.sa, parts[2] = p.mu, parts[3] = p.fn, parts[4] = p.tau0, parts[5] = p.tau0_max;
    parts[6] = p.m.stuck ? 0.0 : p.tau * v;
    parts[7] = parts[8] = p.m.locked ? v : W(lambda);
    parts[9] = p.m.locked ? p.tau - p.a : 0.0;
    return 0;
}

static int one_way_slopes(NativeInstance *n, double q, double v, double *f_q, double *f_v) {
    (void)q, (void)v;
    OneWayPoint p;
    if (one_way_point(n, &p) != 0) return -1;
    *f_q = 0.0;
    *f_v = p.m.locked || p.m.free ? 0.0 : p.mu_slope * W(cgeo) * p.fn;
    return 0;
}

/* f_normalized (free where <= 0); w_rel unless locked (stuck = w_rel <= 0); the slip while stuck: tau0_max -
 * lambda locked, max(sa - tau0, w_rel/w_small - 1) in startForward, 1 - w_rel/w_small else; 1 sliding */
static int one_way_indicators(NativeInstance *n, double q, double v, double *out) {
    (void)q;
    OneWayPoint p;
    if (one_way_point(n, &p) != 0) return -1;
    out[0] = below_zero(n, p.u);
    out[1] = p.m.locked ? 1.0 : below_zero(n, v);
    out[2] = !p.m.stuck          ? 1.0
             : p.m.locked        ? p.tau0_max - p.tau
             : p.m.start_forward ? fmax(p.sa - p.tau0, v / W(w_small) - 1.0)
                                 : 1.0 - v / W(w_small);
    out[3] = resume_indicator(n);
    return 0;
}

static const int ONE_WAY_OUTPUTS[] = {ONE_WAY_STUCK, ONE_WAY_LOCKED, ONE_WAY_START_FORWARD, ONE_WAY_FREE};
static const ConnectorLaw ONE_WAY_LAW = {one_way_law, one_way_slopes, one_way_indicators, 10, 4, -1, -1,
                                         ONE_WAY_OUTPUTS, 4};

int native_OneWayClutch_outputs(NativeInstance *n, double *out) {
    if (connector_outputs(n, &ONE_WAY_LAW, out) != 0) return -1;
    OneWayPoint p;
    const OneWay m = one_way_current(n, &p);
    double *discrete = out + 3 + ONE_WAY_LAW.part_count + 8;
    discrete[0] = m.stuck, discrete[1] = m.locked, discrete[2] = m.start_forward, discrete[3] = m.free;
    return 0;
}

int native_OneWayClutch_validate(NativeInstance *n) {
    const Rows *r;
    if (rows(&ONE_WAY, n, &r) != 0 || discrete_rules(n, ONE_WAY_STUCK, 5, 0) != 0) return -1;
    if (n->state[ONE_WAY_LOCKED] != 0.0 && n->state[ONE_WAY_STUCK] == 0.0)
        return native_fail(n, "locked", 1.0, "contradicts stuck = 0 in the discrete state (locked implies stuck)");
    return 0;
}

/* MSL's equations once at the current point: the relations (free) at the inputs, sa of the held configuration `pre`
 * (*initial: the first event mode); the modes they give in *next; 0, or -1 after native_fail */
static int one_way_iterate(NativeInstance *n, OneWay *pre, int *initial, OneWay *next) {
    *pre = one_way_stored(n);
    *initial = n->state[ONE_WAY_INITIAL] != 0.0;
    OneWay at = *pre;
    at.free = W(f_normalized) <= 0;
    OneWayPoint p;
    if (one_way_evaluate(n, &at, &p) != 0) return -1;
    *next = one_way_next(pre, *initial, &p, W(w_small));
    return 0;
}

/* one event iteration; `event_mode`: FMI's, where the inputs may be held (held) */
static int one_way_update(NativeInstance *n, int event_mode) {
    if (event_mode && held(n) && n->state[ONE_WAY_STUCK] != 0.0) return 0;
    OneWay pre, m;
    int initial;
    if (one_way_iterate(n, &pre, &initial, &m) != 0) return -1;
    const int before[5] = {pre.stuck, pre.locked, pre.start_forward, pre.free, initial};
    const int after[5] = {m.stuck, m.locked, m.start_forward, m.free, 0};
    const int needed = iteration(n, before, after, m.locked);
    if (needed < 0) return -1;
    n->state[ONE_WAY_STUCK] = m.stuck, n->state[ONE_WAY_LOCKED] = m.locked;
    n->state[ONE_WAY_START_FORWARD] = m.start_forward, n->state[ONE_WAY_FREE] = m.free;
    n->state[ONE_WAY_INITIAL] = 0.0;
    return needed;
}

int native_OneWayClutch_update_discrete_states(NativeInstance *n) { return one_way_update(n, 1); }

/* whether an event iteration now would change the discrete state (no side effect) */
int native_OneWayClutch_event_pending(NativeInstance *n) {
    OneWay pre, m;
    int initial;
    if (one_way_iterate(n, &pre, &initial, &m) != 0) return -1;
    return initial || m.stuck != pre.stuck || m.locked != pre.locked || m.start_forward != pre.start_forward
           || m.free != pre.free;
}

int native_OneWayClutch_advance(NativeInstance *n, double t, double h) {
    (void)t, (void)h;
    for (int i = 0; i < 8; ++i) {
        const int changed = one_way_update(n, 0);
        if (changed <= 0) return changed;
    }
    n->flags[ITERATIONS] = 0;
    return 0;
}

int native_OneWayClutch_partials(NativeInstance *n, double *out) {
    if (connector_partials(n, &ONE_WAY_LAW, out) != 0) return -1;
    OneWayPoint p;
    const double locked = one_way_current(n, &p).locked ? 1.0 : 0.0;
    double *extra = out + 18;
    extra[0] = locked, extra[1] = -locked, extra[2] = locked;
    for (int i = 0; i < 2; ++i) extra[3 + 3 * i] = -locked, extra[4 + 3 * i] = locked, extra[5 + 3 * i] = 1.0 - locked;
    extra[9] = locked, extra[10] = -locked, extra[11] = locked; /* lambda_loop on flange_a.a, flange_b.a, lambda */
    return 0;
}

void native_OneWayClutch_written(NativeInstance *n, size_t index) { written(&ONE_WAY, n, index); }

int native_OneWayClutch_step_warning(NativeInstance *n, char *out, size_t size) {
    OneWayPoint p;
    return step_warning(n, one_way_current(n, &p).locked, out, size);
}
