/* sources: fmi3_functions.c glue.c runtime.c model.c text.c platform.c expression.c */
/* The FMI 3.0 glue's intermediate inputs: an instance whose importer lists inputs among requiredIntermediateVariables
 * steps by runtime_integrate, asking for its inputs at every stage. The bytes are the importer: which value
 * references it lists (inputs, parameters, outputs, time, none of this FMU's), the tolerance it initializes with, and
 * what its intermediate update does each time: the values it sets (any double: NaN, infinities, huge ones) and where
 * (an input, a parameter, an output, time, beyond the variables), the outputs it reads, the early return time it asks
 * for (before the step, inside it, at its end, after it, NaN), and calls it must not make there (a step, a state, a
 * free). Whatever it does, nothing crashes, reads out of bounds or hangs; an accepted step ends at a time inside
 * itself. The class is named after this program, as a glue finds it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fmi3Functions.h"
#include "fuzz_token.h"
#include "model.h"

static const NativeVariable variables[] = {
    /* name, unit, type, causality, start, text, has_min, has_max, min_exclusive, min, max, moves_state */
    {"m", "kg", NATIVE_REAL, NATIVE_PARAMETER, 1.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"f.x", "N", NATIVE_REAL, NATIVE_INPUT, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"f.y", "N", NATIVE_REAL, NATIVE_INPUT, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"f.z", "N", NATIVE_REAL, NATIVE_INPUT, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"u", "", NATIVE_REAL, NATIVE_INPUT, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"s", "m", NATIVE_REAL, NATIVE_OUTPUT, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"v", "m/s", NATIVE_REAL, NATIVE_OUTPUT, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"state.s", "m", NATIVE_REAL, NATIVE_LOCAL, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"state.v", "m/s", NATIVE_REAL, NATIVE_LOCAL, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
};
#define VARIABLES 9
static const double initial_state[] = {0.0, 0.0};
static const char *const continuous[] = {"s", "v"};
static unsigned char feedthrough[2 * 4];

static int outputs(NativeInstance *n, double *out) {
    out[0] = n->state[0], out[1] = n->state[1];
    return 0;
}

static int derivatives(NativeInstance *n, double *out) {
    out[0] = n->state[1];
    out[1] = (n->values[1] + n->values[2] * n->values[4]) / n->values[0];
    return 0;
}

static int advance(NativeInstance *n, double t, double h) {
    (void)t;
    n->state[0] += h * n->state[1];
    n->state[1] += h * n->values[1] / n->values[0];
    return 0;
}

static const NativeClass fuzz_class = {
    .name = "fuzz_fmi3_inputs", .variable_count = VARIABLES, .parameter_count = 1, .input_count = 4,
    .output_count = 2, .variables = variables, .state_count = 2, .initial_state = initial_state,
    .continuous_count = 2, .continuous_names = continuous, .outputs = outputs, .advance = advance,
    .derivatives = derivatives, .feedthrough = feedthrough,
};

const NativeClass *const native_classes[] = {&fuzz_class, NULL};

static void quiet(fmi3InstanceEnvironment environment, fmi3Status status, fmi3String category, fmi3String message) {
    (void)environment, (void)status, (void)category, (void)message;
}

/* the importer's program, read by its intermediate update */
static const uint8_t *program;
static size_t left;
static fmi3Instance instance;
static double step_start, step_end;
static unsigned long callbacks;

static unsigned next(void) {
    if (!left) return 0;
    --left;
    return *program++;
}

static double value_of(unsigned byte) {
    static const double special[] = {0.0, 1.0, -1.0, 1e300, -1e300, 1e-300, 5e-324, 0.5};
    switch (byte % 4) {
    case 0: return special[(byte / 4) % 8];
    case 1: return byte % 8 == 1 ? NAN : INFINITY;
    default: return (double)byte - 128.0;
    }
}

static void intermediate_update(fmi3InstanceEnvironment environment, fmi3Float64 time, fmi3Boolean setRequested,
                                fmi3Boolean getAllowed, fmi3Boolean finished, fmi3Boolean canReturnEarly,
                                fmi3Boolean *earlyReturnRequested, fmi3Float64 *earlyReturnTime) {
    (void)environment, (void)getAllowed, (void)finished;
    *earlyReturnRequested = fmi3False;
    if (++callbacks > 200000) return; /* a bound on the work per input, not on the FMU */
    const unsigned op = next();
    fmi3ValueReference vr[4];
    double values[4] = {0.0, 0.0, 0.0, 0.0};
    const size_t n = op % 5;
    for (size_t i = 0; i < n; ++i) vr[i] = next() % (VARIABLES + 3);
    for (size_t i = 0; i < n; ++i) values[i] = value_of(next());
    fmi3Boolean event, terminate, early;
    fmi3Float64 last;
    fmi3FMUState state = NULL;
    switch ((op / 5) % 8) {
    case 0: if (setRequested) fmi3SetFloat64(instance, vr, n, values, n); break;
    case 1: fmi3GetFloat64(instance, vr, n, values, n); break;
    case 2: fmi3DoStep(instance, time, 0.01, fmi3True, &event, &terminate, &early, &last); break;
    case 3: fmi3GetFMUState(instance, &state); break;
    case 4: fmi3FreeInstance(instance); break;
    default: break;
    }
    if (canReturnEarly && next() % 2) {
        static const double where[] = {-1.0, 0.0, 0.3, 0.5, 0.999, 1.0, 2.0};
        const unsigned k = next();
        *earlyReturnRequested = fmi3True;
        *earlyReturnTime = k % 9 == 7 ? NAN : k % 9 == 8 ? time : step_start + (step_end - step_start) * where[k % 7];
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    memset(feedthrough, 1, sizeof feedthrough);
    const char *resources = fuzz_resources("fuzz_fmi3_inputs");
    if (!resources) return 0;
    program = data, left = size, callbacks = 0;
    fmi3ValueReference required[6];
    const size_t listed = next() % 7;
    for (size_t i = 0; i < listed; ++i) required[i] = next() % (VARIABLES + 3);
    instance = fmi3InstantiateCoSimulation("fuzz", FUZZ_TOKEN, resources, fmi3False, fmi3False, fmi3True, fmi3True,
                                           required, listed, NULL, quiet, intermediate_update);
    if (!instance) abort(); /* the token and the class are there: instantiation must succeed */
    static const double tolerances[] = {1e-12, 1e-6, 0.0, -1.0, 1.0, 1e-300};
    const unsigned t_byte = next();
    fmi3EnterInitializationMode(instance, t_byte % 2, t_byte % 13 == 5 ? NAN : tolerances[t_byte % 6], 0.0,
                                fmi3False, 0.0);
    fmi3ExitInitializationMode(instance);
    fmi3Boolean update, terminate, nominals, values, defined, event, early;
    fmi3Float64 next_time, last;
    fmi3UpdateDiscreteStates(instance, &update, &terminate, &nominals, &values, &defined, &next_time);
    fmi3EnterStepMode(instance);
    double t = 0.0;
    for (int k = 0; k < 8 && left; ++k) {
        const double h = 0.001 * (double)(1 + next() % 100);
        step_start = t, step_end = t + h;
        const fmi3Status status = fmi3DoStep(instance, t, h, fmi3True, &event, &terminate, &early, &last);
        if (status == fmi3OK || status == fmi3Warning) {
            if (!(last > t && last <= t + h)) abort(); /* an accepted step ends inside itself */
            t = last;
        }
    }
    fmi3FreeInstance(instance);
    return 0;
}
