/* Product (components/blocks.py): y = u1*u2 and its time derivatives from the inputs'. */
#include <math.h>
#include <stdio.h>

#include "model.h"
#include "native_variables.h"

/* a product that overflows: the output, its formula and the inputs it is made of */
static int overflows(NativeInstance *n, const char *what, const char *formula, const int *inputs, size_t count) {
    char text[400];
    size_t used = (size_t)snprintf(text, sizeof text, "%s = %s overflows (", what, formula);
    for (size_t i = 0; i < count && used < sizeof text; ++i) {
        char number[40];
        native_number(n->values[inputs[i]], number, sizeof number);
        used += (size_t)snprintf(text + used, sizeof text - used, "%s%s = %s", i ? ", " : "",
                                 n->cls->variables[inputs[i]].name, number);
    }
    return native_fail_text(n, 0, "%s '%s': %s)", n->cls->name, native_instance_name(n), text);
}

int native_Product_outputs(NativeInstance *n, double *out) {
    const double *v = n->values;
    const double u1 = v[Product__u1], u2 = v[Product__u2], r1 = v[Product__u1_rate], r2 = v[Product__u2_rate];
    out[0] = u1 * u2;
    out[1] = r1 * u2 + u1 * r2;
    out[2] = v[Product__u1_rate_rate] * u2 + 2 * r1 * r2 + u1 * v[Product__u2_rate_rate];
    static const int Y[] = {Product__u1, Product__u2},
                     RATE[] = {Product__u1, Product__u2, Product__u1_rate, Product__u2_rate},
                     SECOND[] = {Product__u1, Product__u2, Product__u1_rate, Product__u2_rate, Product__u1_rate_rate,
                                 Product__u2_rate_rate};
    if (!isfinite(out[0])) return overflows(n, "y", "u1*u2", Y, 2);
    if (!isfinite(out[1])) return overflows(n, "y_rate", "u1_rate*u2 + u1*u2_rate", RATE, 4);
    if (!isfinite(out[2]))
        return overflows(n, "y_rate_rate", "u1_rate_rate*u2 + 2*u1_rate*u2_rate + u1*u2_rate_rate", SECOND, 6);
    return 0;
}
