/* ElastoGap (components/elasto_gap.py: the law, its parameters and its sources). */
#include <math.h>

#include "connector.h"
#include "native_variables.h"

#define F_REF_FROM_C (-1.0)

static double param(const NativeInstance *n, int index) { return n->values[index]; }

/* (d, s_rel0, n, f_ref, s_ref) with f_ref resolved */
static double f_ref(const NativeInstance *n) {
    return param(n, ElastoGap__f_ref) == F_REF_FROM_C ? param(n, ElastoGap__c) * param(n, ElastoGap__s_ref)
                                                        : param(n, ElastoGap__f_ref);
}

/* (f, f_c, f_d) of MSL's ElastoGap */
static int force(NativeInstance *n, double q, double v, double *f, double *f_c, double *f_d) {
    const double d = param(n, ElastoGap__d), s_rel0 = param(n, ElastoGap__s_rel0);
    if (!(q < s_rel0)) {
        *f = *f_c = *f_d = 0.0;
        return 0;
    }
    double power;
    if (native_pow(n, fabs((q - s_rel0) / param(n, ElastoGap__s_ref)), param(n, ElastoGap__n), &power) != 0) return -1;
    *f_c = -f_ref(n) * power;
    const double damper = d * v, clamp = *f_c > damper ? *f_c : damper; /* MSL's min(max(d*v, f_c), -f_c) */
    *f_d = -*f_c < clamp ? -*f_c : clamp;
    *f = *f_c + *f_d;
    return 0;
}

static int law(NativeInstance *n, double q, double v, double *f, double *parts) {
    double f_c, f_d;
    if (force(n, q, v, f, &f_c, &f_d) != 0) return -1;
    parts[0] = q < param(n, ElastoGap__s_rel0) ? 1.0 : 0.0;
    parts[1] = f_d * v;
    return 0;
}

static int derivatives(NativeInstance *n, double q, double v, double *f_q, double *f_v) {
    const double d = param(n, ElastoGap__d), s_rel0 = param(n, ElastoGap__s_rel0), s_ref = param(n, ElastoGap__s_ref);
    const double exponent = param(n, ElastoGap__n), reference = f_ref(n);
    *f_q = *f_v = 0.0;
    if (!(q < s_rel0)) return 0;
    const double ratio = fabs((q - s_rel0) / s_ref);
    double power, slope;
    if (native_pow(n, ratio, exponent, &power) != 0 || native_pow(n, ratio, exponent - 1, &slope) != 0) return -1;
    const double f_c = -reference * power, df_c = reference * exponent * slope / s_ref, f_d2 = d * v;
    if (f_d2 < f_c) {
        *f_q = df_c + df_c;
    } else if (!(f_d2 > -f_c)) {
        *f_q = df_c;
        *f_v = d;
    }
    return 0;
}

static int indicators(NativeInstance *n, double q, double v, double *out) {
    double f, f_c, f_d;
    if (force(n, q, v, &f, &f_c, &f_d) != 0) return -1;
    const double s_rel0 = param(n, ElastoGap__s_rel0);
    out[0] = q - s_rel0;
    /* 0 while the clamp is off: out of contact, and without a damper (d = 0: f_d = 0, no clamp to switch; |f_c|
     * would leave 0 for > 0 at every contact, a crossing in FMI's domains z > 0, z <= 0 named as a clamp) */
    const double d = param(n, ElastoGap__d);
    out[1] = q < s_rel0 && d != 0.0 ? fabs(f_c) - fabs(d * v) : 0.0;
    return 0;
}

static const ConnectorLaw LAW = {law, derivatives, indicators, 2, 2, -1, -1, NULL, 0};

int native_ElastoGap_outputs(NativeInstance *n, double *out) { return connector_outputs(n, &LAW, out); }

int native_ElastoGap_validate(NativeInstance *n) {
    const double value = param(n, ElastoGap__f_ref);
    if (value < 0 && value != F_REF_FROM_C) return native_fail(n, "f_ref", value, "is out of range: must be >= 0 N, or -1 for c*s_ref");
    return 0;
}
int native_ElastoGap_partials(NativeInstance *n, double *out) { return connector_partials(n, &LAW, out); }
