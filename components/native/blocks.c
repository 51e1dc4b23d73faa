/* Product (components/blocks.py): y = u1*u2 and its time derivatives from the inputs'. */
#include "model.h"
#include "native_variables.h"

int native_Product_outputs(NativeInstance *n, double *out) {
    const double *v = n->values;
    const double u1 = v[Product__u1], u2 = v[Product__u2], r1 = v[Product__u1_rate], r2 = v[Product__u2_rate];
    out[0] = u1 * u2;
    out[1] = r1 * u2 + u1 * r2;
    out[2] = v[Product__u1_rate_rate] * u2 + 2 * r1 * r2 + u1 * v[Product__u2_rate_rate];
    return 0;
}
