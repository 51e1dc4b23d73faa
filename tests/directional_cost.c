/* What fmi2GetDirectionalDerivative costs the runtime (components/native/runtime.c), for tests/test_fmu_states.py: a
 * request of argv[1] unknowns and as many knowns, each list repeating the class's (tests/fuzz/fuzz_class.h) two
 * unknowns (y, der(state.s)) and two knowns (u, state.s), every seed 1. Prints the law's evaluations and the sum of
 * the results. */
#include <stdio.h>
#include <stdlib.h>

#include "runtime.h"
#include "fuzz/fuzz_class.h"

static void quiet(void *environment, const char *name, RuntimeStatus status, const char *category,
                  const char *message) {
    (void)environment, (void)name, (void)status, (void)category, (void)message;
}

int main(int argc, char **argv) {
    char why[256];
    size_t count = argc == 2 ? (size_t)strtoul(argv[1], NULL, 10) : 0;
    if (!count || runtime_load("Fuzz", why, sizeof why) != 0) return 2;
    RuntimeLogger functions = {quiet, NULL};
    Runtime *s = runtime_instantiate("cost", "", 0, &functions, 2);
    double *in = malloc((2 + 3 * count) * sizeof *in), *out = malloc(count * sizeof *out);
    if (!s || !in || !out) return 2;
    in[0] = (double)count, in[1] = (double)count;
    for (size_t i = 0; i < count; ++i) {
        in[2 + i] = i % 2 ? 9 : 6;                 /* der(state.s), y */
        in[2 + count + i] = i % 3 ? 8 : 5;         /* state.s, u */
        in[2 + 2 * count + i] = 1.0;
    }
    fuzz_evaluations = 0;
    RuntimeStatus status = runtime_model_exchange(s, "directional_derivative", "cost", in, 2 + 3 * count, out, count);
    double sum = 0.0;
    for (size_t i = 0; i < count; ++i) sum += out[i];
    printf("%d %lu %.17g\n", (int)status, fuzz_evaluations, sum);
    free(in), free(out);
    runtime_free(s);
    return 0;
}
