/*
 * A plain C FMI 2.0 co-simulation host that makes, steps and frees instances of one FMU from several threads at
 * once, so that instances are added to and taken out of the library's set of live instances while other threads'
 * calls look theirs up: each of THREADS threads, ROUNDS times, makes HELD instances, initializes them, steps each
 * STEPS times from t = 0 with h = 1e-3 s reading output VR after each step, and frees them. Every call must return
 * fmi2OK and every instance's readings must equal the first instance's (one FMU, the same start values). After
 * every thread has ended, a freed handle of each thread must be refused (fmi2Error) without being read.
 *
 * Usage: fmi2_thread_host BINARY RESOURCE_URI GUID VR THREADS ROUNDS HELD STEPS
 * Prints "instances N" (how many were made) and exits 0, or prints the failing call and exits 1.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"

static fmi2InstantiateTYPE *instantiate;
static fmi2SetupExperimentTYPE *setup_experiment;
static fmi2EnterInitializationModeTYPE *enter_initialization_mode;
static fmi2ExitInitializationModeTYPE *exit_initialization_mode;
static fmi2GetRealTYPE *get_real;
static fmi2DoStepTYPE *do_step;
static fmi2FreeInstanceTYPE *free_instance;

static const char *resources, *guid;
static fmi2ValueReference vr;
static int rounds, held, steps;
static double *expected; /* the first instance's readings */
static pthread_mutex_t expected_lock = PTHREAD_MUTEX_INITIALIZER;
static int expected_set;

static void logger(fmi2ComponentEnvironment env, fmi2String instance, fmi2Status status, fmi2String category,
                   fmi2String message, ...) {
    (void)env, (void)category;
    if (status > fmi2Warning) printf("[%d] %s: %s\n", (int)status, instance ? instance : "?", message);
}

static const fmi2CallbackFunctions CALLBACKS = {logger, calloc, free, NULL, NULL};

typedef struct {
    int number;
    int failed;
    fmi2Component last_freed;
} Worker;

#define CHECK(call, what)                                                                             \
    if ((call) != fmi2OK) {                                                                           \
        printf("thread %d round %d instance %d: %s failed\n", w->number, round, i, what);              \
        w->failed = 1;                                                                                \
        return NULL;                                                                                  \
    }

static void *work(void *argument) {
    Worker *w = argument;
    fmi2Component *instances = calloc((size_t)held, sizeof *instances);
    double *readings = calloc((size_t)steps, sizeof *readings);
    char name[64];
    for (int round = 0; round < rounds; ++round) {
        for (int i = 0; i < held; ++i) {
            snprintf(name, sizeof name, "t%d_%d_%d", w->number, round, i);
            instances[i] = instantiate(name, fmi2CoSimulation, guid, resources, &CALLBACKS, fmi2False, fmi2False);
            if (!instances[i]) {
                printf("thread %d round %d instance %d: fmi2Instantiate failed\n", w->number, round, i);
                w->failed = 1;
                return NULL;
            }
            CHECK(setup_experiment(instances[i], fmi2False, 0.0, 0.0, fmi2False, 0.0), "fmi2SetupExperiment")
            CHECK(enter_initialization_mode(instances[i]), "fmi2EnterInitializationMode")
            CHECK(exit_initialization_mode(instances[i]), "fmi2ExitInitializationMode")
        }
        for (int i = 0; i < held; ++i) {
            for (int k = 0; k < steps; ++k) {
                CHECK(do_step(instances[i], k * 1e-3, 1e-3, fmi2True), "fmi2DoStep")
                CHECK(get_real(instances[i], &vr, 1, &readings[k]), "fmi2GetReal")
            }
            pthread_mutex_lock(&expected_lock);
            if (!expected_set) {
                memcpy(expected, readings, (size_t)steps * sizeof *readings);
                expected_set = 1;
            }
            int same = !memcmp(expected, readings, (size_t)steps * sizeof *readings);
            pthread_mutex_unlock(&expected_lock);
            if (!same) {
                printf("thread %d round %d instance %d: readings differ from the first instance's\n", w->number,
                       round, i);
                w->failed = 1;
                return NULL;
            }
        }
        for (int i = 0; i < held; ++i) free_instance(instances[i]);
        w->last_freed = instances[held - 1];
    }
    free(instances);
    free(readings);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 9) {
        printf("usage: fmi2_thread_host BINARY RESOURCE_URI GUID VR THREADS ROUNDS HELD STEPS\n");
        return 2;
    }
    void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        printf("dlopen: %s\n", dlerror());
        return 1;
    }
    *(void **)&instantiate = dlsym(library, "fmi2Instantiate");
    *(void **)&setup_experiment = dlsym(library, "fmi2SetupExperiment");
    *(void **)&enter_initialization_mode = dlsym(library, "fmi2EnterInitializationMode");
    *(void **)&exit_initialization_mode = dlsym(library, "fmi2ExitInitializationMode");
    *(void **)&get_real = dlsym(library, "fmi2GetReal");
    *(void **)&do_step = dlsym(library, "fmi2DoStep");
    *(void **)&free_instance = dlsym(library, "fmi2FreeInstance");
    resources = argv[2], guid = argv[3];
    vr = (fmi2ValueReference)atoi(argv[4]);
    int threads = atoi(argv[5]);
    rounds = atoi(argv[6]), held = atoi(argv[7]), steps = atoi(argv[8]);
    expected = calloc((size_t)steps, sizeof *expected);
    pthread_t *ids = calloc((size_t)threads, sizeof *ids);
    Worker *workers = calloc((size_t)threads, sizeof *workers);
    for (int t = 0; t < threads; ++t) {
        workers[t].number = t;
        pthread_create(&ids[t], NULL, work, &workers[t]);
    }
    int failed = 0;
    for (int t = 0; t < threads; ++t) {
        pthread_join(ids[t], NULL);
        failed |= workers[t].failed;
    }
    for (int t = 0; t < threads && !failed; ++t) {
        if (do_step(workers[t].last_freed, 0.0, 1e-3, fmi2True) != fmi2Error) {
            printf("thread %d: a freed instance was not refused\n", t);
            failed = 1;
        }
    }
    printf("instances %d\n", threads * rounds * held);
    return failed;
}
