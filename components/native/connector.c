/* components/connector.py's Connector.compute_outputs for a law in C: the same operations in the same order. */
#include "connector.h"

static void factors(const NativeInstance *n, const ConnectorLaw *law, double *f0, double *f1) {
    *f0 = law->factor0 >= 0 ? n->values[law->factor0] : 1.0;
    *f1 = law->factor1 >= 0 ? n->values[law->factor1] : 1.0;
}

void connector_relative(const NativeInstance *n, const ConnectorLaw *law, double *q, double *v) {
    const double *vals = n->values + n->cls->parameter_count; /* flange_a.s, .v, flange_b.s, .v */
    double f0, f1;
    factors(n, law, &f0, &f1);
    *q = f1 * vals[2] - f0 * vals[0];
    *v = f1 * vals[3] - f0 * vals[1];
}

int connector_outputs(NativeInstance *n, const ConnectorLaw *law, double *out) {
    const double *vals = n->values + n->cls->parameter_count; /* flange_a.s, .v, flange_b.s, .v, flange_a.a, .a */
    const double v_a = vals[1], v_b = vals[3], a_a = vals[4], a_b = vals[5];
    double f0, f1, q, v;
    factors(n, law, &f0, &f1);
    connector_relative(n, law, &q, &v);
    double f, f_q, f_v;
    out[0] = q;
    out[1] = v;
    if (law->law(n, q, v, &f, out + 3) != 0 || law->derivatives(n, q, v, &f_q, &f_v) != 0) return -1;
    out[2] = f;
    double *flange = out + 3 + law->part_count;
    const double aa = f0 * f0, bb = f1 * f1, ab = -f0 * f1;
    flange[0] = -f0 * f;
    flange[1] = f1 * f;
    flange[2] = ab * (f_q * v_b + f_v * a_b);
    flange[3] = ab * (f_q * v_a + f_v * a_a);
    flange[4] = aa * f_q;
    flange[5] = aa * f_v;
    flange[6] = bb * f_q;
    flange[7] = bb * f_v;
    for (size_t i = 0; i < law->state_output_count; ++i) flange[8 + i] = n->state[law->state_outputs[i]];
    return law->indicators ? law->indicators(n, q, v, flange + 8 + law->state_output_count) : 0;
}

int connector_partials(NativeInstance *n, const ConnectorLaw *law, double *out) {
    double f0, f1, q, v, f_q, f_v;
    factors(n, law, &f0, &f1);
    connector_relative(n, law, &q, &v);
    if (law->derivatives(n, q, v, &f_q, &f_v) != 0) return -1;
    const double aa = f0 * f0, bb = f1 * f1, ab = -f0 * f1;
    const double values[] = {-f0, f1, -f0, f1,
                             -f0 * f_q, f1 * f_q, -f0 * f_v, f1 * f_v,
                             aa * f_q, ab * f_q, aa * f_v, ab * f_v,
                             ab * f_q, bb * f_q, ab * f_v, bb * f_v,
                             ab * f_v, ab * f_v};
    for (size_t i = 0; i < sizeof values / sizeof *values; ++i) out[i] = values[i];
    return 0;
}
