/* RotationalSpringDamper (components/spring_damper.py: the law, its parameters and its sources). */
#include "connector.h"
#include "native_variables.h"

static int law(NativeInstance *n, double q, double v, double *f, double *parts) {
    const double *p = n->values;
    const double tau_d = p[RotationalSpringDamper__d] * v;
    *f = p[RotationalSpringDamper__c] * (q - p[RotationalSpringDamper__phi_rel0]) + tau_d;
    parts[0] = tau_d * v;
    return 0;
}

static int derivatives(NativeInstance *n, double q, double v, double *f_q, double *f_v) {
    (void)q, (void)v;
    *f_q = n->values[RotationalSpringDamper__c];
    *f_v = n->values[RotationalSpringDamper__d];
    return 0;
}

static const ConnectorLaw LAW = {law, derivatives, NULL, 1, 0, -1, -1, NULL, 0};

int native_RotationalSpringDamper_outputs(NativeInstance *n, double *out) { return connector_outputs(n, &LAW, out); }
int native_RotationalSpringDamper_partials(NativeInstance *n, double *out) {
    return connector_partials(n, &LAW, out);
}
