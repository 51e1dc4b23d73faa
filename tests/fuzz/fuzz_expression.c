/* sources: expression.c model.c text.c */
/* The user-function evaluator (expression_parse, expression_value, expression_derivative, expression_repr): any bytes
 * are an expression of the grammar, parsed, evaluated and differentiated at a few arguments, or refused with a
 * message; never a read outside the text, a leak, undefined behaviour or a deep recursion. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expression.h"

const NativeClass *const native_classes[] = {NULL}; /* the runtime's class table: none needed here */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const names[] = {"t", "u", "v", "k"};
    static const double points[][4] = {{0.5, -1.25, 3.0, 2.0}, {0.0, -0.0, 1e308, -1e-310}, {-3.0, 7.0, 0.1, 1.0}};
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char why[1600], shown[4 * EXPRESSION_SHOWN_TEXT + 64];
    expression_repr(text, shown, sizeof shown);
    Expression *e = expression_parse(text, names, 4, why, sizeof why);
    if (e) {
        for (size_t p = 0; p < sizeof points / sizeof *points; ++p) {
            double value;
            expression_value(e, points[p], &value, why, sizeof why);
            for (size_t seed = 0; seed < 4; ++seed) expression_derivative(e, points[p], seed, &value, why, sizeof why);
        }
        expression_free(e);
    }
    free(text);
    return 0;
}
