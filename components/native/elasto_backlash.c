/* ElastoBacklash and ElastoBacklash2 (components/elasto_backlash.py: the law, its parameters and its sources). */
#include <math.h>

#include "connector.h"
#include "native_variables.h"

#define B_EPS 1e-10 /* MSL's minimum backlash */

_Static_assert((int)ElastoBacklash__c == (int)ElastoBacklash2__c && (int)ElastoBacklash__d == (int)ElastoBacklash2__d
                   && (int)ElastoBacklash__b == (int)ElastoBacklash2__b
                   && (int)ElastoBacklash__phi_rel0 == (int)ElastoBacklash2__phi_rel0,
               "both classes have the same parameters");

typedef struct {
    double c, d, b_max, phi_diff, tau_c, tau_d;
    int side; /* 0 without backlash, 1 upper contact, -1 lower contact, 2 in the gap, 3 initialization */
} Backlash;

/* MSL's tau_c and tau_d at (q, v), and which branch of the law applies (`initial`: MSL's initial()) */
static Backlash branch(const NativeInstance *n, double q, double v, int initial) {
    const double *p = n->values;
    Backlash k = {p[ElastoBacklash__c], p[ElastoBacklash__d], p[ElastoBacklash__b] / 2, q - p[ElastoBacklash__phi_rel0],
                  0.0, 0.0, 2};
    const double b_min = -k.b_max;
    k.tau_d = k.d * v;
    if (initial) { /* the strictly monotone characteristic */
        k.side = 3;
        k.tau_c = k.phi_diff > 1.5 * k.b_max ? k.c * (k.phi_diff - k.b_max)
                  : k.phi_diff < 1.5 * b_min ? k.c * (k.phi_diff - b_min)
                                             : (k.c / 3) * k.phi_diff;
    } else if (fabs(p[ElastoBacklash__b]) <= B_EPS) {
        k.side = 0;
        k.tau_c = k.c * k.phi_diff;
    } else if (k.phi_diff > k.b_max) {
        k.side = 1;
        k.tau_c = k.c * (k.phi_diff - k.b_max);
    } else if (k.phi_diff < b_min) {
        k.side = -1;
        k.tau_c = k.c * (k.phi_diff - b_min);
    }
    return k;
}

/* whether the contact pulls (its torque is then 0) */
static int pulls(const Backlash *k) {
    return k->side == 1 ? k->tau_c + k->tau_d <= 0 : k->side == -1 ? k->tau_c + k->tau_d >= 0 : 0;
}

/* ElastoBacklash: tau and lossPower with the damper clamped (tau_c + min(tau_c, tau_d) above, max below) */
static int clamped(NativeInstance *n, double q, double v, double *f, double *parts) {
    const Backlash k = branch(n, q, v, !n->initialized);
    double damper = k.tau_d;
    if (k.side == 1) damper = k.tau_c < k.tau_d ? k.tau_c : k.tau_d;
    if (k.side == -1) damper = k.tau_c > k.tau_d ? k.tau_c : k.tau_d;
    if (k.side == 2 || pulls(&k)) {
        *f = parts[0] = 0.0;
    } else {
        *f = k.tau_c + damper;
        parts[0] = damper * v;
    }
    return 0;
}

/* ElastoBacklash2: tau_c + tau_d, 0 where that pulls */
static int jumping(NativeInstance *n, double q, double v, double *f, double *parts) {
    const Backlash k = branch(n, q, v, !n->initialized);
    if (k.side == 2 || pulls(&k)) {
        *f = parts[0] = 0.0;
    } else {
        *f = k.tau_c + k.tau_d;
        parts[0] = k.tau_d * v;
    }
    return 0;
}

/* (dtau/dphi_rel, dtau/dw_rel) of either: the spring and damper, c/3 in the middle of the initial characteristic,
 * 2c and no damping where ElastoBacklash's damper is clamped at tau_c */
static int slopes(NativeInstance *n, double q, double v, double *f_q, double *f_v, int clamp) {
    const Backlash k = branch(n, q, v, !n->initialized);
    *f_q = *f_v = 0.0;
    if (k.side == 2 || pulls(&k)) return 0;
    const int middle = k.side == 3 && !(k.phi_diff > 1.5 * k.b_max) && !(k.phi_diff < -1.5 * k.b_max);
    const int at_spring = clamp && ((k.side == 1 && !(k.tau_d < k.tau_c)) || (k.side == -1 && !(k.tau_d > k.tau_c)));
    *f_q = middle ? k.c / 3 : at_spring ? k.c + k.c : k.c;
    *f_v = at_spring ? 0.0 : k.d;
    return 0;
}
static int clamped_slopes(NativeInstance *n, double q, double v, double *f_q, double *f_v) {
    return slopes(n, q, v, f_q, f_v, 1);
}
static int jumping_slopes(NativeInstance *n, double q, double v, double *f_q, double *f_v) {
    return slopes(n, q, v, f_q, f_v, 0);
}

/* upper and lower contact (> 0 exactly in it) and ElastoBacklash2's transmitting, MSL's tau_c + tau_d (continuous:
 * tau_c is 0 in the gap; > 0 in upper contact, < 0 in lower contact exactly while it transmits), all of the law after
 * initialization; all 0 without backlash, which switches nothing */
static int contact_indicators(const NativeInstance *n, double q, double v, double *out, int transmitting) {
    const Backlash k = branch(n, q, v, 0);
    const int none = fabs(n->values[ElastoBacklash__b]) <= B_EPS;
    out[0] = none ? 0.0 : k.phi_diff - k.b_max;
    out[1] = none ? 0.0 : -k.b_max - k.phi_diff;
    if (transmitting) out[2] = none ? 0.0 : k.tau_c + k.tau_d;
    return 0;
}
static int clamped_indicators(NativeInstance *n, double q, double v, double *out) {
    return contact_indicators(n, q, v, out, 0);
}
static int jumping_indicators(NativeInstance *n, double q, double v, double *out) {
    return contact_indicators(n, q, v, out, 1);
}

static const ConnectorLaw CLAMPED = {clamped, clamped_slopes, clamped_indicators, 1, 2, -1, -1, NULL, 0};
static const ConnectorLaw JUMPING = {jumping, jumping_slopes, jumping_indicators, 1, 3, -1, -1, NULL, 0};

int native_ElastoBacklash_outputs(NativeInstance *n, double *out) { return connector_outputs(n, &CLAMPED, out); }
int native_ElastoBacklash_partials(NativeInstance *n, double *out) { return connector_partials(n, &CLAMPED, out); }
int native_ElastoBacklash2_outputs(NativeInstance *n, double *out) { return connector_outputs(n, &JUMPING, out); }
int native_ElastoBacklash2_partials(NativeInstance *n, double *out) { return connector_partials(n, &JUMPING, out); }
