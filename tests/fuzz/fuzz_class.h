/* A small native class for the runtime's harnesses (fuzz_state.c, fuzz_start_values.c, tests/start_values_reader.c):
 * a parameter of every type, a parameter that moves the state, an input, two outputs and one continuous state, so
 * that the runtime's readers of outside bytes (serialized FMU states, resources/start_values.json) meet every kind of
 * variable without the generated tables of the shipped classes. */
#ifndef MECHFMU_FUZZ_CLASS_H
#define MECHFMU_FUZZ_CLASS_H

#include <stddef.h>

#include "model.h"

/* the class's name: a harness of a glue layer, which finds its class by the binary's name, names it after itself */
#ifndef FUZZ_CLASS_NAME
#define FUZZ_CLASS_NAME "Fuzz"
#endif

static const NativeVariable fuzz_variables[] = {
    /* name, unit, type, causality, start, text, has_min, has_max, min_exclusive, min, max, moves_state */
    {"m", "kg", NATIVE_REAL, NATIVE_PARAMETER, 1.0, NULL, 1, 0, 1, 0.0, 0.0, -1},
    {"n", "", NATIVE_INTEGER, NATIVE_PARAMETER, 3.0, NULL, 1, 1, 0, -5.0, 100.0, -1},
    {"flag", "", NATIVE_BOOLEAN, NATIVE_PARAMETER, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"text", "", NATIVE_STRING, NATIVE_PARAMETER, 0.0, "abc", 0, 0, 0, 0.0, 0.0, -1},
    {"s_start", "m", NATIVE_REAL, NATIVE_PARAMETER, 0.0, NULL, 0, 0, 0, 0.0, 0.0, 0},
    {"u", "N", NATIVE_REAL, NATIVE_INPUT, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"y", "N", NATIVE_REAL, NATIVE_OUTPUT, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"s", "m", NATIVE_REAL, NATIVE_OUTPUT, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"state.s", "m", NATIVE_REAL, NATIVE_LOCAL, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
    {"der(state.s)", "m/s", NATIVE_REAL, NATIVE_LOCAL, 0.0, NULL, 0, 0, 0, 0.0, 0.0, -1},
};
static const double fuzz_initial_state[] = {0.0};
static const char *const fuzz_continuous[] = {"s"};
static const unsigned char fuzz_feedthrough[] = {1, 0};

/* how many times the law was evaluated (outputs or derivatives): what a call costs */
static unsigned long fuzz_evaluations;

static int fuzz_outputs(NativeInstance *n, double *out) {
    ++fuzz_evaluations;
    out[0] = n->values[0] * n->values[5] * (double)n->values[1];
    out[1] = n->state[0];
    return 0;
}

static int fuzz_derivatives(NativeInstance *n, double *out) {
    ++fuzz_evaluations;
    out[0] = n->values[5] / n->values[0];
    return 0;
}

static int fuzz_advance(NativeInstance *n, double t, double h) {
    (void)t;
    n->state[0] += h * n->values[5] / n->values[0];
    return 0;
}

static const NativeClass fuzz_class = {
    .name = FUZZ_CLASS_NAME, .variable_count = 10, .parameter_count = 5, .input_count = 1, .output_count = 2,
    .variables = fuzz_variables, .state_count = 1, .initial_state = fuzz_initial_state, .continuous_count = 1,
    .continuous_names = fuzz_continuous, .outputs = fuzz_outputs, .advance = fuzz_advance,
    .derivatives = fuzz_derivatives, .feedthrough = fuzz_feedthrough,
};

const NativeClass *const native_classes[] = {&fuzz_class, NULL};

#endif
