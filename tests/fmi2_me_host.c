/*
 * A plain C FMI 2.0 Model Exchange host: dlopen(binary, RTLD_NOW | RTLD_LOCAL) as OMSimulator loads FMUs, no
 * Python in the process, explicit Euler with event handling:
 *   initialization; event mode (fmi2NewDiscreteStates) and fmi2EnterContinuousTimeMode; then per step k at
 *   t_k = k*h: fmi2SetTime(t_k), the step's inputs, fmi2SetContinuousStates(x), fmi2GetDerivatives, the outputs
 *   written; x += h*dx; at t_{k+1} with the new states fmi2CompletedIntegratorStep and the event indicators:
 *   a change of domain (z > 0 or z <= 0) or a time event reached (nextEventTime <= t_{k+1}) goes through event
 *   mode (fmi2EnterEventMode, fmi2NewDiscreteStates, fmi2EnterContinuousTimeMode; the states read anew if the
 *   FMU changed them).
 *
 * Usage: fmi2_me_host BINARY RESOURCE_URI GUID PLAN OUTPUT
 * PLAN (text):   param R|I|B|S <vr> <value>; states <nx> <ni>; inputs <n> <vr>...; outputs <m> <vr>...;
 *                steps <N> <h> then N lines of n input values (C99 hex floats, Python float.hex)
 * OUTPUT:        per step the outputs then the states as %a; then "events <count>"
 * Exit status:   0 if every call returned fmi2OK/fmi2Warning, else 1 (the failing call is printed).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "host_logger.h"
#include "host_plan.h"

#define MAX_VARS 512

#define SYMBOL(type, name)                                                                           \
    type *name = (type *)dlsym(lib, #name);                                                          \
    if (!name) { printf("missing symbol %s\n", #name); return 1; }

int main(int argc, char **argv) {
    if (argc != 6) { printf("usage: fmi2_me_host BINARY RESOURCE_URI GUID PLAN OUTPUT\n"); return 2; }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { printf("dlopen failed: %s\n", dlerror()); return 1; }
    SYMBOL(fmi2InstantiateTYPE, fmi2Instantiate)
    SYMBOL(fmi2SetupExperimentTYPE, fmi2SetupExperiment)
    SYMBOL(fmi2EnterInitializationModeTYPE, fmi2EnterInitializationMode)
    SYMBOL(fmi2ExitInitializationModeTYPE, fmi2ExitInitializationMode)
    SYMBOL(fmi2SetRealTYPE, fmi2SetReal)
    SYMBOL(fmi2SetIntegerTYPE, fmi2SetInteger)
    SYMBOL(fmi2SetBooleanTYPE, fmi2SetBoolean)
    SYMBOL(fmi2SetStringTYPE, fmi2SetString)
    SYMBOL(fmi2GetRealTYPE, fmi2GetReal)
    SYMBOL(fmi2SetTimeTYPE, fmi2SetTime)
    SYMBOL(fmi2SetContinuousStatesTYPE, fmi2SetContinuousStates)
    SYMBOL(fmi2GetContinuousStatesTYPE, fmi2GetContinuousStates)
    SYMBOL(fmi2GetDerivativesTYPE, fmi2GetDerivatives)
    SYMBOL(fmi2GetEventIndicatorsTYPE, fmi2GetEventIndicators)
    SYMBOL(fmi2EnterEventModeTYPE, fmi2EnterEventMode)
    SYMBOL(fmi2NewDiscreteStatesTYPE, fmi2NewDiscreteStates)
    SYMBOL(fmi2EnterContinuousTimeModeTYPE, fmi2EnterContinuousTimeMode)
    SYMBOL(fmi2CompletedIntegratorStepTYPE, fmi2CompletedIntegratorStep)
    SYMBOL(fmi2TerminateTYPE, fmi2Terminate)
    SYMBOL(fmi2FreeInstanceTYPE, fmi2FreeInstance)

    fmi2CallbackFunctions callbacks = {logger, calloc, free, NULL, NULL};
    fmi2Component c = fmi2Instantiate("host", fmi2ModelExchange, argv[3], argv[2], &callbacks, fmi2False, fmi2False);
    if (!c) { printf("fmi2Instantiate failed\n"); return 1; }
    CHECK(fmi2SetupExperiment(c, fmi2False, 0.0, 0.0, fmi2False, 0.0));

    FILE *plan_file = fopen(argv[4], "r");
    if (!plan_file) { printf("cannot open %s\n", argv[4]); return 1; }
    size_t nx = 0, ni = 0, n_in = 0, n_out = 0, n_steps = 0;
    fmi2ValueReference in[MAX_VARS], out_vr[MAX_VARS];
    double h = 0.0, *inputs = NULL;
    static char line[65536];
    while (fgets(line, sizeof line, plan_file)) {
        char kind[32];
        if (sscanf(line, "%31s", kind) != 1) continue;
        if (strcmp(kind, "param") == 0) {
            Setters setters = {fmi2SetReal, fmi2SetInteger, fmi2SetBoolean, fmi2SetString};
            if (set_plan_parameter(line, c, &setters)) return 1;
        } else if (strcmp(kind, "states") == 0) {
            if (sscanf(line, "states %zu %zu", &nx, &ni) != 2 || nx > MAX_VARS || ni > MAX_VARS) return 1;
        } else if (strcmp(kind, "inputs") == 0 || strcmp(kind, "outputs") == 0) {
            int is_in = kind[0] == 'i';
            char *p = line + strlen(kind);
            size_t n = strtoul(p, &p, 10);
            if (n > MAX_VARS) { printf("too many variables\n"); return 1; }
            for (size_t i = 0; i < n; ++i) (is_in ? in : out_vr)[i] = strtoul(p, &p, 10);
            *(is_in ? &n_in : &n_out) = n;
        } else if (strcmp(kind, "steps") == 0) {
            char *p = line + 5;
            n_steps = strtoul(p, &p, 10);
            h = strtod(p, NULL);
            inputs = calloc(n_steps * n_in + 1, sizeof(double));
            for (size_t k = 0; k < n_steps; ++k) {
                if (!fgets(line, sizeof line, plan_file)) { printf("plan ends early\n"); return 1; }
                p = line;
                for (size_t i = 0; i < n_in; ++i) inputs[k * n_in + i] = strtod(p, &p);
            }
        }
    }
    fclose(plan_file);

    double x[MAX_VARS], dx[MAX_VARS], z[MAX_VARS], z_new[MAX_VARS], y[MAX_VARS];
    fmi2EventInfo info;
    CHECK(fmi2EnterInitializationMode(c));
    CHECK(fmi2ExitInitializationMode(c));
    CHECK(fmi2NewDiscreteStates(c, &info));
    CHECK(fmi2EnterContinuousTimeMode(c));
    CHECK(fmi2GetContinuousStates(c, x, nx));
    if (n_in) CHECK(fmi2SetReal(c, in, n_in, inputs));
    CHECK(fmi2GetEventIndicators(c, z, ni));
    FILE *out = fopen(argv[5], "w");
    if (!out) { printf("cannot write %s\n", argv[5]); return 1; }
    long events = 0;
    for (size_t k = 0; k < n_steps; ++k) {
        double t = k * h;
        CHECK(fmi2SetTime(c, t));
        if (n_in) CHECK(fmi2SetReal(c, in, n_in, inputs + k * n_in));
        CHECK(fmi2SetContinuousStates(c, x, nx));
        CHECK(fmi2GetDerivatives(c, dx, nx));
        CHECK(fmi2GetReal(c, out_vr, n_out, y));
        for (size_t j = 0; j < n_out; ++j) fprintf(out, j ? " %a" : "%a", y[j]);
        for (size_t j = 0; j < nx; ++j) fprintf(out, " %a", x[j]);
        fprintf(out, "\n");
        for (size_t j = 0; j < nx; ++j) x[j] += h * dx[j];
        double next = (k + 1) * h;
        CHECK(fmi2SetTime(c, next));
        CHECK(fmi2SetContinuousStates(c, x, nx));
        fmi2Boolean enter = fmi2False, terminate = fmi2False;
        CHECK(fmi2CompletedIntegratorStep(c, fmi2True, &enter, &terminate));
        CHECK(fmi2GetEventIndicators(c, z_new, ni));
        int crossed = 0;
        for (size_t j = 0; j < ni; ++j) crossed |= (z[j] > 0) != (z_new[j] > 0);
        if (crossed || enter || (info.nextEventTimeDefined && info.nextEventTime <= next)) {
            ++events;
            CHECK(fmi2EnterEventMode(c));
            CHECK(fmi2NewDiscreteStates(c, &info));
            CHECK(fmi2EnterContinuousTimeMode(c));
            if (info.valuesOfContinuousStatesChanged) CHECK(fmi2GetContinuousStates(c, x, nx));
            CHECK(fmi2GetEventIndicators(c, z_new, ni));
        }
        memcpy(z, z_new, ni * sizeof *z);
    }
    fprintf(out, "events %ld\n", events);
    fclose(out);
    CHECK(fmi2Terminate(c));
    fmi2FreeInstance(c);
    free(inputs);
    return 0;
}
