/* sources: fmi3_functions.c glue.c runtime.c model.c text.c platform.c expression.c */
/* The FMI 3.0 glue's array variables (a run of x, y, z or w, x, y, z is one variable) through the calls a host makes
 * with value reference lists it chose: fmi3GetFloat64 and fmi3SetFloat64, the directional and adjoint derivatives,
 * with any value references (an array's, an element's own, a scalar's, none of this FMU's), any nValues, nSeed and
 * nSensitivity, repeated lists (the glue keeps the last expansion), in initialization and step mode. The bytes are a
 * program: per call an operation, a list of value references and the counts. A call the glue accepts must have had
 * exactly the elements the class's arrays give (checked here against the layout written below); whatever it refuses,
 * nothing crashes or reads out of bounds. The class is named after this program, as a glue finds it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi3Functions.h"
#include "fuzz_token.h"
#include "model.h"

static const NativeVariable variables[] = {
    /* name, unit, type, causality, start, text, has_min, has_max, min_exclusive, min, max, moves_state */
    {"k", "", NATIVE_REAL, NATIVE_PARAMETER, 2.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"v_start.x", "m/s", NATIVE_REAL, NATIVE_PARAMETER, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"v_start.y", "m/s", NATIVE_REAL, NATIVE_PARAMETER, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"v_start.z", "m/s", NATIVE_REAL, NATIVE_PARAMETER, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"odd.x", "", NATIVE_REAL, NATIVE_PARAMETER, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1}, /* x, y only: scalars */
    {"odd.y", "", NATIVE_REAL, NATIVE_PARAMETER, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"p.x", "m", NATIVE_REAL, NATIVE_INPUT, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"p.y", "m", NATIVE_REAL, NATIVE_INPUT, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"p.z", "m", NATIVE_REAL, NATIVE_INPUT, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"q.w", "", NATIVE_REAL, NATIVE_INPUT, 1.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"q.x", "", NATIVE_REAL, NATIVE_INPUT, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"q.y", "", NATIVE_REAL, NATIVE_INPUT, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"q.z", "", NATIVE_REAL, NATIVE_INPUT, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"u", "", NATIVE_REAL, NATIVE_INPUT, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"f.x", "N", NATIVE_REAL, NATIVE_OUTPUT, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"f.y", "N", NATIVE_REAL, NATIVE_OUTPUT, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"f.z", "N", NATIVE_REAL, NATIVE_OUTPUT, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"e", "", NATIVE_REAL, NATIVE_OUTPUT, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"state.s", "m", NATIVE_REAL, NATIVE_LOCAL, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"der(state.s)", "m/s", NATIVE_REAL, NATIVE_LOCAL, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
};
#define VARIABLES 20
/* per value reference (time the last) the elements the glue must take for it: 0 an element's own */
static const unsigned char LENGTHS[VARIABLES + 1] = {1, 3, 0, 0, 1, 1, 3, 0, 0, 4, 0, 0, 0, 1, 3, 0, 0, 1, 1, 1, 1};
static const double initial_state[] = {0.0};
static const char *const continuous[] = {"s"};
static unsigned char feedthrough[4 * 8];

static int outputs(NativeInstance *n, double *out) {
    const double *v = n->values;
    for (int i = 0; i < 3; ++i) out[i] = v[0] * v[6 + i] + v[10 + i] * v[13];
    out[3] = v[9] + n->state[0];
    return 0;
}

static int derivatives(NativeInstance *n, double *out) {
    out[0] = n->values[1];
    return 0;
}

static int advance(NativeInstance *n, double t, double h) {
    (void)t;
    n->state[0] += h * n->values[1];
    return 0;
}

static const NativeClass fuzz_class = {
    .name = "fuzz_fmi3_arrays", .variable_count = VARIABLES, .parameter_count = 6, .input_count = 8,
    .output_count = 4, .variables = variables, .state_count = 1, .initial_state = initial_state,
    .continuous_count = 1, .continuous_names = continuous, .outputs = outputs, .advance = advance,
    .derivatives = derivatives, .feedthrough = feedthrough,
};

const NativeClass *const native_classes[] = {&fuzz_class, NULL};

static void quiet(fmi3InstanceEnvironment environment, fmi3Status status, fmi3String category, fmi3String message) {
    (void)environment, (void)status, (void)category, (void)message;
}

/* the elements `vr[0..n)` take in this class, or -1 where one is an element's own (beyond the variables: 1) */
static long elements_of(const fmi3ValueReference *vr, size_t n) {
    long total = 0;
    for (size_t i = 0; i < n; ++i) {
        const long length = vr[i] <= VARIABLES ? LENGTHS[vr[i]] : 1;
        if (length == 0) return -1;
        total += length;
    }
    return total;
}

static size_t next(const uint8_t **data, size_t *size) {
    if (!*size) return 0;
    --*size;
    return *(*data)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    memset(feedthrough, 1, sizeof feedthrough);
    const char *resources = fuzz_resources("fuzz_fmi3_arrays");
    if (!resources) return 0;
    fmi3Instance c = fmi3InstantiateCoSimulation("fuzz", FUZZ_TOKEN, resources, fmi3False, fmi3False, fmi3False,
                                                 fmi3False, NULL, 0, NULL, quiet, NULL);
    if (!c) abort(); /* the token and the class are there: instantiation must succeed */
    int initialized = 0;
    fmi3EnterInitializationMode(c, fmi3False, 0.0, 0.0, fmi3False, 0.0);
    double t = 0.0;
    while (size) {
        const size_t op = next(&data, &size) % 6, n = next(&data, &size) % 7;
        fmi3ValueReference vr[6], other[6];
        for (size_t i = 0; i < n; ++i) vr[i] = (fmi3ValueReference)(next(&data, &size) % 24);
        for (size_t i = 0; i < n; ++i) other[i] = (fmi3ValueReference)(next(&data, &size) % 24);
        const size_t count = next(&data, &size) % 30, count2 = next(&data, &size) % 30;
        double *values = calloc(count + 1, sizeof *values), *out = calloc(count2 + 1, sizeof *out);
        if (!values || !out) abort();
        for (size_t i = 0; i < count; ++i) values[i] = (double)next(&data, &size) - 100.0;
        fmi3Status status = fmi3OK;
        long expected = elements_of(vr, n);
        switch (op) {
        case 0: status = fmi3GetFloat64(c, vr, n, values, count); break;
        case 1: status = fmi3SetFloat64(c, vr, n, values, count); break;
        case 2: /* d vr / d other: seed over other's elements, sensitivity over vr's */
            status = fmi3GetDirectionalDerivative(c, vr, n, other, n, values, count, out, count2);
            if (status == fmi3OK && (elements_of(other, n) != (long)count || expected != (long)count2)) abort();
            expected = -2;
            break;
        case 3:
            status = fmi3GetAdjointDerivative(c, vr, n, other, n, values, count, out, count2);
            if (status == fmi3OK && (expected != (long)count || elements_of(other, n) != (long)count2)) abort();
            expected = -2;
            break;
        case 4:
            if (!initialized) {
                initialized = fmi3ExitInitializationMode(c) == fmi3OK;
            } else {
                fmi3Boolean event, terminate, early;
                fmi3Float64 last;
                if (fmi3DoStep(c, t, 0.01, fmi3True, &event, &terminate, &early, &last) == fmi3OK) t = last;
            }
            expected = -2;
            break;
        default: /* the same list again: the glue's kept expansion */
            status = fmi3GetFloat64(c, vr, n, values, count);
            if (status == fmi3OK && expected != (long)count) abort();
            status = fmi3GetFloat64(c, vr, n, values, count);
            break;
        }
        /* an accepted get or set took exactly its variables' elements; one with an element's own reference is not */
        if (expected != -2 && status == fmi3OK && n > 0 && expected != (long)count) abort();
        free(values), free(out);
    }
    fmi3FreeInstance(c);
    return 0;
}
