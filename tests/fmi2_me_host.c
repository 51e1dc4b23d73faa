/*
 * A plain C FMI 2.0 Model Exchange host: dlopen(binary, RTLD_NOW | RTLD_LOCAL) as OMSimulator loads FMUs, no
 * Python in the process, explicit Euler with event handling:
 *   initialization; event mode (fmi2NewDiscreteStates) and fmi2EnterContinuousTimeMode; then per step k at
 *   t_k = k*h: fmi2SetTime(t_k), the step's inputs, fmi2SetContinuousStates(x), fmi2GetDerivatives, the outputs
 *   written; x += h*dx; at t_{k+1} with the new states fmi2CompletedIntegratorStep and the event indicators:
 *   a change of domain (z > 0 or z <= 0) or a time event reached (nextEventTime <= t_{k+1}) goes through event
 *   mode (fmi2EnterEventMode, fmi2NewDiscreteStates until no new discrete states are needed,
 *   fmi2EnterContinuousTimeMode; the states read anew if the FMU changed them).
 *
 * Usage: fmi2_me_host BINARY RESOURCE_URI GUID PLAN OUTPUT
 * PLAN (text):   param R|I|B|S <vr> <value>; states <nx> <ni>; inputs <n> <vr>...; outputs <m> <vr>...;
 *                steps <N> <h> then N lines of n input values (C99 hex floats, Python float.hex)
 * OUTPUT:        per step the outputs then the states as %a; then "events <count>"
 * Exit status:   0 if every call returned fmi2OK/fmi2Warning, else 1 (the failing call is printed).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "host_dl.h"
#include "host_logger.h"
#include "host_plan.h"



int main(int argc, char **argv) {
    utf8_arguments(&argc, &argv);
    if (argc != 6) { printf("usage: fmi2_me_host BINARY RESOURCE_URI GUID PLAN OUTPUT\n"); return 2; }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { printf("dlopen failed: %s\n", dlerror()); return 1; }
    COMMON_SYMBOLS
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

    Plan plan;
    Setters setters = {fmi2SetReal, fmi2SetInteger, fmi2SetBoolean, fmi2SetString};
    if (read_plan(argv[4], c, &setters, &plan)) return 1;
    size_t nx = plan.nx, ni = plan.ni, n_in = plan.n_in, n_out = plan.n_out, n_steps = plan.n_steps;
    fmi2ValueReference *in = plan.in, *out_vr = plan.out;
    double h = plan.h, *inputs = plan.inputs;

    double x[MAX_VARS], dx[MAX_VARS], z[MAX_VARS], z_new[MAX_VARS], y[MAX_VARS];
    fmi2EventInfo info;
    CHECK(fmi2EnterInitializationMode(c));
    CHECK(fmi2ExitInitializationMode(c));
    do {
        CHECK(fmi2NewDiscreteStates(c, &info));
    } while (info.newDiscreteStatesNeeded);
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
            do {
                CHECK(fmi2NewDiscreteStates(c, &info));
            } while (info.newDiscreteStatesNeeded);
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
