/*
 * The cost of one co-simulation step of an FMI 3.0 FMU in a plain C host (dlopen with RTLD_NOW | RTLD_LOCAL), as
 * fmi2_speed_host.c measures an FMI 2.0 one: per step, fmi3SetFloat64 of the inputs, fmi3DoStep, fmi3GetFloat64 of
 * the outputs; instantiated with event mode used and early return allowed, and, with CALLBACK 1, an intermediate
 * update callback (which asks for nothing) called at every step's end.
 *
 * Usage: fmi3_speed_host BINARY RESOURCE_PATH TOKEN CALLBACK STEPS H NIN NOUT VIN VOUT KINDS VR... (NIN input
 * references holding VIN values, then NOUT outputs holding VOUT: an array variable is one reference, its elements
 * values; KINDS has a letter per input value: 'v' a value that changes every step (a small motion, a force), 'c' one
 * held at 1000 + its index (a tangent stiffness or damping, which a linear contact keeps))
 * Prints "ns_per_step <x>" and "checksum <sum of the last outputs>" (so no call can be left out).
 */
#define _POSIX_C_SOURCE 199309L
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fmi3Functions.h"

static void logger(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category, fmi3String message) {
    (void)env, (void)category;
    fprintf(stderr, "[%d] %s\n", status, message);
}

static void update(fmi3InstanceEnvironment env, fmi3Float64 time, fmi3Boolean set, fmi3Boolean get,
                   fmi3Boolean finished, fmi3Boolean can, fmi3Boolean *requested, fmi3Float64 *when) {
    (void)env, (void)time, (void)set, (void)get, (void)finished, (void)can, (void)when;
    *requested = fmi3False;
}

#define LOAD(type, name)                                                                                    \
    type name = (type)dlsym(library, #name);                                                                \
    if (!name) {                                                                                            \
        fprintf(stderr, "no %s\n", #name);                                                                  \
        return 2;                                                                                           \
    }

int main(int argc, char **argv) {
    if (argc < 10) {
        fprintf(stderr, "usage: %s BINARY RESOURCE_PATH TOKEN CALLBACK STEPS H NIN NOUT VIN VOUT KINDS VR...\n",
                argv[0]);
        return 2;
    }
    void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    LOAD(fmi3InstantiateCoSimulationTYPE *, fmi3InstantiateCoSimulation)
    LOAD(fmi3EnterInitializationModeTYPE *, fmi3EnterInitializationMode)
    LOAD(fmi3ExitInitializationModeTYPE *, fmi3ExitInitializationMode)
    LOAD(fmi3UpdateDiscreteStatesTYPE *, fmi3UpdateDiscreteStates)
    LOAD(fmi3EnterStepModeTYPE *, fmi3EnterStepMode)
    LOAD(fmi3SetFloat64TYPE *, fmi3SetFloat64)
    LOAD(fmi3GetFloat64TYPE *, fmi3GetFloat64)
    LOAD(fmi3DoStepTYPE *, fmi3DoStep)
    LOAD(fmi3TerminateTYPE *, fmi3Terminate)
    LOAD(fmi3FreeInstanceTYPE *, fmi3FreeInstance)
    const int callback = atoi(argv[4]);
    const long steps = atol(argv[5]);
    const double h = atof(argv[6]);
    const size_t nin = (size_t)atol(argv[7]), nout = (size_t)atol(argv[8]);
    const size_t vin = (size_t)atol(argv[9]), vout = (size_t)atol(argv[10]);
    const char *kinds = argv[11];
    if (argc != 12 + (int)(nin + nout) || strlen(kinds) != vin) {
        fprintf(stderr, "expected %zu value references and %zu kinds\n", nin + nout, vin);
        return 2;
    }
    fmi3ValueReference *in = calloc(nin + 1, sizeof *in), *out = calloc(nout + 1, sizeof *out);
    double *inputs = calloc(vin + 1, sizeof *inputs), *outputs = calloc(vout + 1, sizeof *outputs);
    for (size_t i = 0; i < nin; ++i) in[i] = (fmi3ValueReference)atol(argv[12 + i]);
    for (size_t i = 0; i < nout; ++i) out[i] = (fmi3ValueReference)atol(argv[12 + nin + i]);
    fmi3Instance c = fmi3InstantiateCoSimulation("speed", argv[3], argv[2], fmi3False, fmi3False, fmi3True, fmi3True,
                                                 NULL, 0, NULL, logger, callback ? update : NULL);
    fmi3Boolean a, b, d, e, f;
    fmi3Float64 next;
    if (!c || fmi3EnterInitializationMode(c, fmi3False, 0.0, 0.0, fmi3False, 0.0) > fmi3Warning
        || fmi3ExitInitializationMode(c) > fmi3Warning
        || fmi3UpdateDiscreteStates(c, &a, &b, &d, &e, &f, &next) > fmi3Warning || fmi3EnterStepMode(c) > fmi3Warning) {
        fprintf(stderr, "initialization failed\n");
        return 1;
    }
    struct timespec start, end;
    double t = 0.0;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (long k = 0; k < steps; ++k) {
        for (size_t i = 0; i < vin; ++i)
            inputs[i] = kinds[i] == 'c' ? 1000.0 + (double)i : 1e-3 * (double)((k + (long)i) % 7) - 2e-3;
        fmi3Boolean event, terminate, early;
        fmi3Float64 last;
        if (fmi3SetFloat64(c, in, nin, inputs, vin) > fmi3Warning
            || fmi3DoStep(c, t, h, fmi3True, &event, &terminate, &early, &last) > fmi3Warning
            || fmi3GetFloat64(c, out, nout, outputs, vout) > fmi3Warning) {
            fprintf(stderr, "step %ld failed\n", k);
            return 1;
        }
        t += h;
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    double elapsed = (double)(end.tv_sec - start.tv_sec) * 1e9 + (double)(end.tv_nsec - start.tv_nsec);
    double checksum = 0.0;
    for (size_t i = 0; i < vout; ++i) checksum += outputs[i];
    printf("ns_per_step %.1f\nchecksum %.17g\n", elapsed / (double)steps, checksum);
    fmi3Terminate(c);
    fmi3FreeInstance(c);
    return 0;
}
