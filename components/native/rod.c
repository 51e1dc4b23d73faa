/* Rod (components/rod.py): flange_b.s = flange_a.s + L, the motion and the load passed through. */
#include "model.h"
#include "native_variables.h"

int native_Rod_outputs(NativeInstance *n, double *out) {
    const double *v = n->values;
    out[0] = v[Rod__flange_a_s] + v[Rod__L];
    out[1] = v[Rod__flange_a_v];
    out[2] = v[Rod__flange_a_a];
    out[3] = v[Rod__flange_b_f];
    out[4] = v[Rod__flange_b_c];
    out[5] = v[Rod__flange_b_d];
    out[6] = v[Rod__flange_b_f_rate];
    return 0;
}
