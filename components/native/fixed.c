/* Fixed and RotationalFixed (components/fixed.py): flange.s = s0 (phi0), flange.v = 0. */
#include "model.h"

int native_Fixed_outputs(NativeInstance *n, double *out) {
    out[0] = n->values[0];
    out[1] = 0.0;
    return 0;
}

int native_RotationalFixed_outputs(NativeInstance *n, double *out) { return native_Fixed_outputs(n, out); }
