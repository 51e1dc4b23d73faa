/* CoordinateSpringDamper (components/coordinate_spring_damper.py): f = k*(s_rel - offset) + d*v_rel, or the
 * springForceUserFunction; tangents k and d, or central differences of the user function (connector.py). */
#include <math.h>

#include "connector.h"
#include "expression.h"
#include "native_variables.h"

#define DIFFERENCE_STEP 1e-7 /* connector.py: relative step of the central differences */
#define USER_FUNCTION 0      /* the instance's user-function slot */

static const char *const NAMES[] = {"t", "itemNumber", "u", "displacement", "v", "velocity", "k", "stiffness", "d",
                                    "damping", "offset"};

static int has_user_function(NativeInstance *n, const Expression **e) {
    return native_user_function(n, USER_FUNCTION, CoordinateSpringDamper__springForceUserFunction, NAMES, 11, e);
}

static int force(NativeInstance *n, double q, double v, double *f) {
    const double *vals = n->values;
    if (vals[CoordinateSpringDamper__activeConnector] == 0.0) {
        *f = 0.0;
        return 0;
    }
    const double k = vals[CoordinateSpringDamper__stiffness], d = vals[CoordinateSpringDamper__damping],
                 offset = vals[CoordinateSpringDamper__offset];
    const Expression *e;
    if (has_user_function(n, &e) != 0) return -1;
    if (!e) {
        *f = k * (q - offset) + d * v;
        return 0;
    }
    const double args[] = {n->time, vals[CoordinateSpringDamper__itemNumber], q, q, v, v, k, k, d, d, offset};
    return native_call_user_function(n, USER_FUNCTION, CoordinateSpringDamper__springForceUserFunction, NAMES, 11,
                                     args, NULL, f);
}

static int law(NativeInstance *n, double q, double v, double *f, double *parts) {
    (void)parts;
    return force(n, q, v, f);
}

static int derivatives(NativeInstance *n, double q, double v, double *f_q, double *f_v) {
    const double *vals = n->values;
    if (vals[CoordinateSpringDamper__activeConnector] == 0.0) {
        *f_q = *f_v = 0.0;
        return 0;
    }
    const Expression *e;
    if (has_user_function(n, &e) != 0) return -1;
    if (!e) {
        *f_q = vals[CoordinateSpringDamper__stiffness];
        *f_v = vals[CoordinateSpringDamper__damping];
        return 0;
    }
    const double dq = DIFFERENCE_STEP * fmax(1.0, fabs(q)), dv = DIFFERENCE_STEP * fmax(1.0, fabs(v));
    double a, b, c, d;
    if (force(n, q + dq, v, &a) != 0 || force(n, q - dq, v, &b) != 0 || force(n, q, v + dv, &c) != 0
        || force(n, q, v - dv, &d) != 0)
        return -1;
    *f_q = (a - b) / (2 * dq);
    *f_v = (c - d) / (2 * dv);
    return 0;
}

static const ConnectorLaw LAW = {law, derivatives, NULL, 0, 0, -1, -1, NULL, 0};

int native_CoordinateSpringDamper_outputs(NativeInstance *n, double *out) { return connector_outputs(n, &LAW, out); }

int native_CoordinateSpringDamper_validate(NativeInstance *n) {
    const Expression *e;
    return has_user_function(n, &e);
}
int native_CoordinateSpringDamper_partials(NativeInstance *n, double *out) { return connector_partials(n, &LAW, out); }
