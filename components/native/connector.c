/* components/connector.py's Connector.compute_outputs for a law in C: the same operations in the same order. */
#include "connector.h"

int connector_outputs(NativeInstance *n, const ConnectorLaw *law, double *out) {
    const double *vals = n->values + n->cls->parameter_count; /* flange_a.s, .v, flange_b.s, .v, flange_a.a, .a */
    const double s_a = vals[0], v_a = vals[1], s_b = vals[2], v_b = vals[3], a_a = vals[4], a_b = vals[5];
    const double f0 = 1.0, f1 = 1.0;
    const double q = f1 * s_b - f0 * s_a, v = f1 * v_b - f0 * v_a;
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
    return law->indicators ? law->indicators(n, q, v, flange + 8) : 0;
}
