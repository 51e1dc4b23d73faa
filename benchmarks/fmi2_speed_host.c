/*
 * The cost of one co-simulation step in a plain C host (dlopen with RTLD_NOW | RTLD_LOCAL, no Python in the
 * process unless the FMU brings it): per step, fmi2SetReal of the inputs, fmi2DoStep, fmi2GetReal of the outputs.
 *
 * Usage: fmi2_speed_host BINARY RESOURCE_URI GUID STEPS H NIN NOUT KINDS VR... (NIN input references, then NOUT
 * outputs; KINDS has a letter per input: 'v' a value that changes every step (a small motion, a force), 'c' one held
 * at 1000 + its index (a tangent stiffness or damping, which a linear contact keeps))
 * Prints "ns_per_step <x>" and "checksum <sum of the last outputs>" (so no call can be left out).
 */
#define _POSIX_C_SOURCE 199309L
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fmi2Functions.h"

static void logger(fmi2ComponentEnvironment env, fmi2String name, fmi2Status status, fmi2String category,
                   fmi2String message, ...) {
    (void)env, (void)category;
    va_list args;
    va_start(args, message);
    fprintf(stderr, "[%d] %s: ", status, name);
    vfprintf(stderr, message, args);
    fputc('\n', stderr);
    va_end(args);
}

#define LOAD(type, name)                                                                                    \
    type name = (type)dlsym(library, #name);                                                                \
    if (!name) {                                                                                            \
        fprintf(stderr, "no %s\n", #name);                                                                  \
        return 2;                                                                                           \
    }

int main(int argc, char **argv) {
    if (argc < 9) {
        fprintf(stderr, "usage: %s BINARY RESOURCE_URI GUID STEPS H NIN NOUT KINDS VR...\n", argv[0]);
        return 2;
    }
    void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    LOAD(fmi2InstantiateTYPE *, fmi2Instantiate)
    LOAD(fmi2SetupExperimentTYPE *, fmi2SetupExperiment)
    LOAD(fmi2EnterInitializationModeTYPE *, fmi2EnterInitializationMode)
    LOAD(fmi2ExitInitializationModeTYPE *, fmi2ExitInitializationMode)
    LOAD(fmi2SetRealTYPE *, fmi2SetReal)
    LOAD(fmi2GetRealTYPE *, fmi2GetReal)
    LOAD(fmi2DoStepTYPE *, fmi2DoStep)
    LOAD(fmi2TerminateTYPE *, fmi2Terminate)
    LOAD(fmi2FreeInstanceTYPE *, fmi2FreeInstance)
    const long steps = atol(argv[4]);
    const double h = atof(argv[5]);
    const size_t nin = (size_t)atol(argv[6]), nout = (size_t)atol(argv[7]);
    const char *kinds = argv[8];
    if (argc != 9 + (int)(nin + nout) || strlen(kinds) != nin) {
        fprintf(stderr, "expected %zu value references\n", nin + nout);
        return 2;
    }
    fmi2ValueReference *in = calloc(nin + 1, sizeof *in), *out = calloc(nout + 1, sizeof *out);
    double *inputs = calloc(nin + 1, sizeof *inputs), *outputs = calloc(nout + 1, sizeof *outputs);
    for (size_t i = 0; i < nin; ++i) in[i] = (fmi2ValueReference)atol(argv[9 + i]);
    for (size_t i = 0; i < nout; ++i) out[i] = (fmi2ValueReference)atol(argv[9 + nin + i]);
    fmi2CallbackFunctions callbacks = {logger, calloc, free, NULL, NULL};
    fmi2Component c = fmi2Instantiate("speed", fmi2CoSimulation, argv[3], argv[2], &callbacks, fmi2False, fmi2False);
    if (!c || fmi2SetupExperiment(c, fmi2False, 0.0, 0.0, fmi2False, 0.0) > fmi2Warning
        || fmi2EnterInitializationMode(c) > fmi2Warning || fmi2ExitInitializationMode(c) > fmi2Warning) {
        fprintf(stderr, "initialization failed\n");
        return 1;
    }
    struct timespec start, end;
    double t = 0.0;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (long k = 0; k < steps; ++k) {
        for (size_t i = 0; i < nin; ++i)
            inputs[i] = kinds[i] == 'c' ? 1000.0 + (double)i : 1e-3 * (double)((k + (long)i) % 7) - 2e-3;
        if (fmi2SetReal(c, in, nin, inputs) > fmi2Warning || fmi2DoStep(c, t, h, fmi2True) > fmi2Warning
            || fmi2GetReal(c, out, nout, outputs) > fmi2Warning) {
            fprintf(stderr, "step %ld failed\n", k);
            return 1;
        }
        t += h;
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    double elapsed = (double)(end.tv_sec - start.tv_sec) * 1e9 + (double)(end.tv_nsec - start.tv_nsec);
    double checksum = 0.0;
    for (size_t i = 0; i < nout; ++i) checksum += outputs[i];
    printf("ns_per_step %.1f\nchecksum %.17g\n", elapsed / (double)steps, checksum);
    fmi2Terminate(c);
    fmi2FreeInstance(c);
    return 0;
}
