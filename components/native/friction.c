/* The friction elements of MSL (components/friction.py: the law, its state machine, its parameters and sources):
 * Interfaces.PartialFriction's discrete equations and the Clutch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connector.h"
#include "native_variables.h"
#include "table_rows.h"

#define V(name) n->values[Clutch__##name]
enum { BACKWARD = -1, STUCK = 0, FORWARD = 1, FREE = 2, UNKNOWN = 3 };
/* the hidden state's slots (components/friction.py DISCRETE) */
enum { MODE, LOCKED, START_FORWARD, START_BACKWARD, IS_FREE };
#define ITERATIONS 0              /* flags: consecutive event iterations that changed the discrete state */
#define MAX_ITERATIONS 100        /* ... after which the iteration is refused (a host that never settles) */

typedef struct {
    int mode, locked, start_forward, start_backward, free;
} Modes;

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

static Modes stored(const NativeInstance *n) {
    const double *s = n->state;
    return (Modes){(int)s[MODE], s[LOCKED] != 0.0, s[START_FORWARD] != 0.0, s[START_BACKWARD] != 0.0,
                   s[IS_FREE] != 0.0};
}

/* --- the table mu_pos ------------------------------------------------------------------------------------- */

typedef struct {
    char *text;          /* what the rows were read from, NULL: not read */
    double *w, *mu;
    size_t count;
} Rows;

static void release(void *data) {
    Rows *r = data;
    free(r->text);
    free(r->w);
    free(r->mu);
    free(r);
}

/* the rows of mu_pos, read again when the parameter's text changed: 0, or -1 after native_fail */
static int rows(NativeInstance *n, const Rows **out) {
    const char *text = n->strings[Clutch__mu_pos] ? n->strings[Clutch__mu_pos] : "";
    if (!n->data) {
        if (!(n->data = calloc(1, sizeof(Rows)))) return native_fail_text(n, 0, "out of memory");
        n->release = release;
    }
    Rows *r = n->data;
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
                    snprintf(problem, sizeof problem, "is not a valid table: w_rel of row %zu is not greater than "
                             "that of row %zu (the rows must increase strictly)", i + 1, i);
        }
        if (problem[0]) {
            native_rows_free(&parsed);
            native_repr_text(text, shown, sizeof shown);
            return native_fail_text(n, 0, "%s '%s': mu_pos = %s %s", n->cls->name, native_instance_name(n), shown,
                                    problem);
        }
        if (!(r->text = malloc(strlen(text) + 1))) {
            native_rows_free(&parsed);
            return native_fail_text(n, 0, "out of memory");
        }
        memcpy(r->text, text, strlen(text) + 1);
        r->w = parsed.times, r->mu = parsed.values, r->count = parsed.count;
    }
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

/* --- the Clutch ------------------------------------------------------------------------------------------- */

typedef struct {
    Modes m;
    double w, a, fn, mu0, tau0, tau0_max, mu, mu_slope, tau, sa;
} Point;

/* everything at the current inputs with the discrete state `m` held: 0, or -1 after native_fail */
static int evaluate(NativeInstance *n, const Modes *m, Point *p) {
    const Rows *r;
    if (rows(n, &r) != 0) return -1;
    double slope;
    p->m = *m;
    p->w = V(flange_b_w) - V(flange_a_w);
    p->a = V(flange_b_a) - V(flange_a_a);
    p->fn = V(fn_max) * V(f_normalized);
    p->mu0 = interpolate(r, 0.0, &slope);
    p->tau0 = p->mu0 * V(cgeo) * p->fn;
    p->tau0_max = V(peak) * p->tau0;
    const int s1 = m->start_forward || m->start_backward || m->mode == FORWARD ? 1 : -1;
    const int s2 = m->start_forward || (!m->start_backward && m->mode == FORWARD) ? 1 : -1;
    p->mu = s2 * interpolate(r, s1 * p->w, &slope);
    p->mu_slope = s1 * s2 * slope;
    p->tau = m->locked ? V(lambda) : m->free ? 0.0 : p->mu * V(cgeo) * p->fn;
    p->sa = m->locked                                ? p->tau
            : m->free                                ? p->a
            : m->start_forward || m->mode == FORWARD ? p->a + p->tau0_max
            : m->start_backward || m->mode == BACKWARD ? p->a - p->tau0_max
            : p->a + (p->w > 0 ? 1.0 : p->w < 0 ? -1.0 : 0.0) * p->tau0_max;
    return 0;
}

/* the discrete state the outputs use: the held one, or before the first event mode the initial equations' */
static Modes current(NativeInstance *n) {
    Modes m = stored(n);
    if (m.mode != UNKNOWN) return m;
    const double w = V(flange_b_w) - V(flange_a_w), fn = V(fn_max) * V(f_normalized);
    return next_modes(&m, 1, fn <= 0, w, 0.0, 0.0, 0.0, V(w_small));
}

/* tau and the law's outputs (a_rel, sa, mu, fn, tau0, tau0_max, lossPower, residual_v, constraintEquation) */
static int law(NativeInstance *n, double q, double v, double *f, double *parts) {
    (void)q;
    const Modes m = current(n);
    Point p;
    if (evaluate(n, &m, &p) != 0) return -1;
    *f = p.tau;
    parts[0] = p.a, parts[1] = p.sa, parts[2] = p.mu, parts[3] = p.fn, parts[4] = p.tau0, parts[5] = p.tau0_max;
    parts[6] = p.tau * v;
    parts[7] = parts[8] = m.locked ? v : V(lambda);
    return 0;
}

static int slopes(NativeInstance *n, double q, double v, double *f_q, double *f_v) {
    (void)q, (void)v;
    const Modes m = current(n);
    Point p;
    if (evaluate(n, &m, &p) != 0) return -1;
    *f_q = 0.0;
    *f_v = m.locked || m.free ? 0.0 : p.mu_slope * V(cgeo) * p.fn;
    return 0;
}

static int indicators(NativeInstance *n, double q, double v, double *out) {
    (void)q;
    const Modes m = current(n);
    Point p;
    if (evaluate(n, &m, &p) != 0) return -1;
    out[0] = p.fn;
    out[1] = m.locked || m.free ? 1.0 : v;
    out[2] = m.locked           ? p.tau0_max - fabs(p.tau)
             : m.start_forward  ? p.sa - p.tau0
             : m.start_backward ? -p.tau0 - p.sa
                                : 1.0 - fabs(v) / V(w_small);
    return 0;
}

static const int STATE_OUTPUTS[] = {MODE, LOCKED, START_FORWARD, START_BACKWARD, IS_FREE};
static const ConnectorLaw LAW = {law, slopes, indicators, 9, 3, -1, -1, STATE_OUTPUTS, 5};

/* the connector's outputs, the discrete ones those the outputs use (the initial equations' before the first event
 * mode) */
int native_Clutch_outputs(NativeInstance *n, double *out) {
    if (connector_outputs(n, &LAW, out) != 0) return -1;
    const Modes m = current(n);
    double *discrete = out + 3 + LAW.part_count + 8;
    discrete[0] = m.mode, discrete[1] = m.locked, discrete[2] = m.start_forward, discrete[3] = m.start_backward;
    discrete[4] = m.free;
    return 0;
}

int native_Clutch_validate(NativeInstance *n) {
    const Rows *r;
    return rows(n, &r);
}

/* one event iteration (module docstring of components/friction.py): 1 if the discrete state changed (another
 * iteration is needed), 0 if not, -1 after native_fail */
int native_Clutch_update_discrete_states(NativeInstance *n) {
    const Modes pre = stored(n);
    Point p;
    if (evaluate(n, &pre, &p) != 0) return -1;
    const int initial = pre.mode == UNKNOWN;
    const Modes m = next_modes(&pre, initial, p.fn <= 0, p.w, p.sa, p.tau0, p.tau0_max, V(w_small));
    if (!memcmp(&m, &pre, sizeof m)) {
        n->flags[ITERATIONS] = 0;
        return 0;
    }
    if (++n->flags[ITERATIONS] > MAX_ITERATIONS) {
        n->flags[ITERATIONS] = 0;
        return native_fail_text(n, 0, "%s '%s': the friction mode does not settle at t = %.17g s: %d event "
                                "iterations changed it (mode %d, locked %d); the master must pass the outputs on "
                                "between the iterations", n->cls->name, native_instance_name(n), n->time,
                                MAX_ITERATIONS, m.mode, m.locked);
    }
    n->state[MODE] = m.mode, n->state[LOCKED] = m.locked, n->state[START_FORWARD] = m.start_forward;
    n->state[START_BACKWARD] = m.start_backward, n->state[IS_FREE] = m.free;
    return 1;
}

/* co-simulation: the event iterations at the step's end, with the inputs held */
int native_Clutch_advance(NativeInstance *n, double t, double h) {
    (void)t, (void)h;
    for (int i = 0; i < 8; ++i) {
        const int changed = native_Clutch_update_discrete_states(n);
        if (changed <= 0) return changed;
    }
    n->flags[ITERATIONS] = 0;
    return 0;
}

/* the connector's partials, then d(tau, flange taus)/d lambda and d(residual_v, constraintEquation)/d(w_a, w_b,
 * lambda) (components/friction.py Clutch.partial_pattern) */
int native_Clutch_partials(NativeInstance *n, double *out) {
    if (connector_partials(n, &LAW, out) != 0) return -1;
    const double locked = current(n).locked ? 1.0 : 0.0;
    double *extra = out + 18;
    extra[0] = locked, extra[1] = -locked, extra[2] = locked;
    for (int i = 0; i < 2; ++i) extra[3 + 3 * i] = -locked, extra[4 + 3 * i] = locked, extra[5 + 3 * i] = 1.0 - locked;
    return 0;
}
