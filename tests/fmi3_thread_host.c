/*
 * A C host (no Python) running FMI 3.0 co-simulation instances of RigidBody on several threads at once, for
 * tests/test_fmi3_arrays.py under ThreadSanitizer: each thread instantiates its own body, steps it with a force that
 * changes every step (an array written whole), asks for an early return inside every third step from its intermediate
 * update, reads position and velocity (two arrays in one call), takes, serializes, deserializes and restores its state
 * every tenth step, and instantiates and frees a second instance now and then (the glue's set of live instances
 * changing under the other threads). Every thread's trajectory must equal, bit for bit, the one the host computed
 * first on one thread.
 *
 * Usage: fmi3_thread_host BINARY RESOURCE_PATH TOKEN VR_POSITION_START VR_FORCE VR_POSITION VR_VELOCITY THREADS STEPS
 * Prints "ok <what>" or "violation: <what>" per check and "violations <n>"; exit status 0 if there is none, 1
 * otherwise, 2 for a bad command line or a missing symbol.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi3Functions.h"
#include "host_dl.h"

#define FUNCTIONS(X)                                                                                              \
    X(InstantiateCoSimulation) X(FreeInstance) X(EnterInitializationMode) X(ExitInitializationMode)              \
    X(DoStep) X(GetFloat64) X(SetFloat64) X(GetFMUState) X(SetFMUState) X(FreeFMUState)                         \
    X(SerializedFMUStateSize) X(SerializeFMUState) X(DeserializeFMUState)
#define DECLARE(name) static fmi3##name##TYPE *name;
FUNCTIONS(DECLARE)

static const char *token, *resources;
static fmi3ValueReference position_start, force, motion[2];
static long steps;

typedef struct {
    int index;
    double ask;      /* the early return the intermediate update asks for (0: none) */
    double *samples; /* per step: position and velocity (6 values) */
    int failed;      /* a call that did not return fmi3OK, the first step it happened in + 1 */
} Run;

static void quiet(fmi3InstanceEnvironment environment, fmi3Status status, fmi3String category, fmi3String message) {
    (void)environment, (void)category;
    if (getenv("FMI3_HOST_VERBOSE")) fprintf(stderr, "[%d] %s\n", (int)status, message);
}

static void intermediate_update(fmi3InstanceEnvironment environment, fmi3Float64 time, fmi3Boolean setRequested,
                                fmi3Boolean getAllowed, fmi3Boolean finished, fmi3Boolean canReturnEarly,
                                fmi3Boolean *earlyReturnRequested, fmi3Float64 *earlyReturnTime) {
    (void)time, (void)setRequested, (void)getAllowed, (void)finished;
    Run *run = environment;
    *earlyReturnRequested = canReturnEarly && run->ask > 0.0;
    *earlyReturnTime = run->ask;
    run->ask = 0.0; /* once: the step ends there */
}

static fmi3Instance body(Run *run, const char *name) {
    return InstantiateCoSimulation(name, token, resources, fmi3False, fmi3False, fmi3False, fmi3True, NULL, 0, run,
                                   quiet, intermediate_update);
}

/* the run: steps of 1e-3 s, a force changing every step, an early return in every third, states every tenth */
static void *simulate(void *argument) {
    Run *run = argument;
    char name[32];
    snprintf(name, sizeof name, "body%d", run->index);
    fmi3Instance c = body(run, name);
    const double start[3] = {0.0, 0.5, 0.0};
    if (!c || EnterInitializationMode(c, fmi3False, 0.0, 0.0, fmi3False, 0.0) != fmi3OK
        || SetFloat64(c, &position_start, 1, start, 3) != fmi3OK || ExitInitializationMode(c) != fmi3OK) {
        run->failed = 1;
        if (c) FreeInstance(c);
        return NULL;
    }
    double t = 0.0;
    for (long k = 0; k < steps && !run->failed; ++k) {
        const double f[3] = {0.5 * (double)(k % 7) - 1.0, 9.0 + 0.1 * (double)(k % 5), 0.25 * (double)(k % 3)};
        const double h = 1e-3;
        run->ask = k % 3 == 0 ? t + 0.5 * h : 0.0;
        fmi3Boolean event, terminate, early;
        fmi3Float64 last = 0.0;
        if (SetFloat64(c, &force, 1, f, 3) != fmi3OK
            || DoStep(c, t, h, fmi3True, &event, &terminate, &early, &last) != fmi3OK
            || GetFloat64(c, motion, 2, run->samples + 6 * k, 6) != fmi3OK) {
            run->failed = (int)k + 1;
            break;
        }
        t = last;
        if (k % 10 == 9) { /* a state taken, serialized, read back and restored: the run goes on from it unchanged */
            fmi3FMUState state = NULL, copy = NULL;
            size_t size = 0;
            unsigned char *bytes = NULL;
            int ok = GetFMUState(c, &state) == fmi3OK && SerializedFMUStateSize(c, state, &size) == fmi3OK
                     && (bytes = malloc(size)) != NULL && SerializeFMUState(c, state, bytes, size) == fmi3OK
                     && DeserializeFMUState(c, bytes, size, &copy) == fmi3OK && SetFMUState(c, copy) == fmi3OK;
            free(bytes);
            if (state) FreeFMUState(c, &state);
            if (copy) FreeFMUState(c, &copy);
            if (!ok) run->failed = (int)k + 1;
        }
        if (k % 25 == 0) { /* another instance made and freed beside it */
            fmi3Instance other = body(run, "other");
            if (!other) run->failed = (int)k + 1;
            else FreeInstance(other);
        }
    }
    FreeInstance(c);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 10) {
        fprintf(stderr, "usage: fmi3_thread_host BINARY RESOURCE_PATH TOKEN VR_POSITION_START VR_FORCE VR_POSITION "
                        "VR_VELOCITY THREADS STEPS\n");
        return 2;
    }
    void *library = host_open(argv[1]);
    if (!library) return 2;
    FUNCTIONS(HOST_LOAD_FMI3)
    resources = argv[2], token = argv[3];
    position_start = (fmi3ValueReference)atoi(argv[4]), force = (fmi3ValueReference)atoi(argv[5]);
    motion[0] = (fmi3ValueReference)atoi(argv[6]), motion[1] = (fmi3ValueReference)atoi(argv[7]);
    const int threads = atoi(argv[8]);
    steps = atol(argv[9]);
    if (threads < 1 || threads > 64 || steps < 1 || steps > 1000000) return 2;
    int violations = 0;

    Run reference = {.index = 0, .samples = calloc((size_t)steps * 6, sizeof(double))};
    simulate(&reference);
    printf("%s the run on one thread\n", reference.failed || !reference.samples ? "violation:" : "ok");
    violations += reference.failed != 0;

    Run *runs = calloc((size_t)threads, sizeof *runs);
    pthread_t *ids = calloc((size_t)threads, sizeof *ids);
    if (!runs || !ids || !reference.samples) return 2;
    for (int i = 0; i < threads; ++i) {
        runs[i] = (Run){.index = i + 1, .samples = calloc((size_t)steps * 6, sizeof(double))};
        if (!runs[i].samples || pthread_create(&ids[i], NULL, simulate, &runs[i]) != 0) return 2;
    }
    int equal = 1, failed = 0;
    for (int i = 0; i < threads; ++i) {
        pthread_join(ids[i], NULL);
        failed |= runs[i].failed != 0;
        equal &= !memcmp(runs[i].samples, reference.samples, (size_t)steps * 6 * sizeof(double));
        free(runs[i].samples);
    }
    printf("%s every call on %d threads returned fmi3OK\n", failed ? "violation:" : "ok", threads);
    printf("%s every thread's trajectory is the one-thread run's, bit for bit\n", equal ? "ok" : "violation:");
    violations += failed + !equal;
    free(runs), free(ids), free(reference.samples);
    printf("violations %d\n", violations);
    return violations ? 1 : 0;
}
