/*
 * A plain C FMI 2.0 co-simulation host that drives two instances of one FMU the way ecos 0.7.2 does
 * (its FMU library, fmi4c, and its fixed-step algorithm): one unzipped FMU, both instances given the
 * same instance name; the library closed and opened again between the two fmi2Instantiate calls
 * ("reopen": fmi4c reloads the library at every instantiation, calling both instances through the
 * functions of the second load); each step runs the two instances at the same time on a pool of two
 * threads, each instance's inputs, step and outputs on one of them, the threads swapping instances
 * from step to step (std::execution::par).
 *
 * Usage: fmi2_two_instance_host BINARY RESOURCE_URI GUID PLAN_A PLAN_B OUTPUT_A OUTPUT_B once|reopen
 * PLAN: as tests/fmi2_host.c (param, inputs, outputs, steps; snapshot is ignored).
 * OUTPUT: one line per step, the instance's outputs as %a. After both instances are freed and the
 * library closed, prints "binary_mapped_after_close <mappings of BINARY left in the process>".
 * Exit status: 0 if every call returned fmi2OK/fmi2Warning, else 1 (the failing call is printed).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "host_logger.h"
#include "host_plan.h"

typedef struct {
    fmi2InstantiateTYPE *instantiate;
    fmi2SetupExperimentTYPE *setup_experiment;
    fmi2EnterInitializationModeTYPE *enter_initialization_mode;
    fmi2ExitInitializationModeTYPE *exit_initialization_mode;
    fmi2SetRealTYPE *set_real;
    fmi2SetIntegerTYPE *set_integer;
    fmi2SetBooleanTYPE *set_boolean;
    fmi2SetStringTYPE *set_string;
    fmi2GetRealTYPE *get_real;
    fmi2DoStepTYPE *do_step;
    fmi2TerminateTYPE *terminate;
    fmi2FreeInstanceTYPE *free_instance;
} Functions;

typedef struct {
    Plan plan;
    double *rows; /* n_steps x n_out */
    fmi2Component c;
    int failed;
} Instance;

static Functions fmi;

static int resolve(void *lib) {
#define RESOLVE(field, name)                                                                          \
    if (!(*(void **)&fmi.field = dlsym(lib, name))) {                                                 \
        printf("missing symbol %s\n", name);                                                          \
        return 1;                                                                                     \
    }
    RESOLVE(instantiate, "fmi2Instantiate") RESOLVE(setup_experiment, "fmi2SetupExperiment")
    RESOLVE(enter_initialization_mode, "fmi2EnterInitializationMode")
    RESOLVE(exit_initialization_mode, "fmi2ExitInitializationMode") RESOLVE(set_real, "fmi2SetReal")
    RESOLVE(set_integer, "fmi2SetInteger") RESOLVE(set_boolean, "fmi2SetBoolean") RESOLVE(set_string, "fmi2SetString")
    RESOLVE(get_real, "fmi2GetReal") RESOLVE(do_step, "fmi2DoStep") RESOLVE(terminate, "fmi2Terminate")
    RESOLVE(free_instance, "fmi2FreeInstance")
#undef RESOLVE
    return 0;
}

/* The plan's parameters are set on the instance; inputs, outputs and steps are kept (host_plan.h). */
static int read_instance_plan(const char *path, Instance *x) {
    Setters setters = {fmi.set_real, fmi.set_integer, fmi.set_boolean, fmi.set_string};
    if (read_plan(path, x->c, &setters, &x->plan)) return 1;
    x->rows = calloc(x->plan.n_steps * x->plan.n_out + 1, sizeof(double));
    return 0;
}

/* One step of one instance, as ecos's algorithm takes it: inputs, step, outputs. */
static int step(Instance *x, size_t k) {
    if (x->plan.n_in) CHECK(fmi.set_real(x->c, x->plan.in, x->plan.n_in, x->plan.inputs + k * x->plan.n_in));
    CHECK(fmi.do_step(x->c, k * x->plan.h, x->plan.h, fmi2True));
    CHECK(fmi.get_real(x->c, x->plan.out, x->plan.n_out, x->rows + k * x->plan.n_out));
    return 0;
}

typedef struct {
    int worker;
    Instance *instances;
    size_t n_steps;
    pthread_barrier_t *barrier;
} Worker;

/* Worker w takes instance (w + k) % 2 in step k: the two instances step at the same time, and each
 * is called from both threads in turn. */
static void *work(void *arg) {
    Worker *worker = arg;
    for (size_t k = 0; k < worker->n_steps; ++k) {
        Instance *x = &worker->instances[(worker->worker + k) % 2];
        if (!x->failed && step(x, k) != 0) x->failed = 1;
        pthread_barrier_wait(worker->barrier);
    }
    return NULL;
}

static int mappings_of(const char *binary) {
    char real[4096];
    if (!realpath(binary, real)) return -1;
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps) return -1;
    char line[8192];
    int count = 0;
    while (fgets(line, sizeof line, maps)) {
        line[strcspn(line, "\n")] = '\0';
        const char *path = strchr(line, '/');
        count += path && strcmp(path, real) == 0;
    }
    fclose(maps);
    return count;
}

static int write_rows(const Instance *x, const char *path) {
    FILE *out = fopen(path, "w");
    if (!out) { printf("cannot write %s\n", path); return 1; }
    for (size_t k = 0; k < x->plan.n_steps; ++k) {
        for (size_t j = 0; j < x->plan.n_out; ++j) fprintf(out, j ? " %a" : "%a", x->rows[k * x->plan.n_out + j]);
        fprintf(out, "\n");
    }
    fclose(out);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 9 || (strcmp(argv[8], "once") != 0 && strcmp(argv[8], "reopen") != 0)) {
        fprintf(stderr, "usage: %s BINARY RESOURCE_URI GUID PLAN_A PLAN_B OUTPUT_A OUTPUT_B once|reopen\n", argv[0]);
        return 2;
    }
    const char *binary = argv[1], *resources = argv[2], *guid = argv[3];
    void *lib = dlopen(binary, RTLD_NOW | RTLD_LOCAL);
    if (!lib || resolve(lib) != 0) { printf("dlopen failed: %s\n", dlerror()); return 1; }
    fmi2CallbackFunctions callbacks = {logger, calloc, free, NULL, NULL};
    Instance instances[2];
    memset(instances, 0, sizeof instances);
    for (int i = 0; i < 2; ++i) {
        if (i == 1 && strcmp(argv[8], "reopen") == 0) { /* fmi4c: dlclose, dlopen, every function again */
            dlclose(lib);
            lib = dlopen(binary, RTLD_NOW | RTLD_LOCAL);
            if (!lib || resolve(lib) != 0) { printf("dlopen failed: %s\n", dlerror()); return 1; }
        }
        instances[i].c = fmi.instantiate("instance", fmi2CoSimulation, guid, resources, &callbacks, fmi2False,
                                         fmi2False);
        if (!instances[i].c) { printf("fmi2Instantiate failed for instance %d\n", i); return 1; }
    }
    for (int i = 0; i < 2; ++i) {
        CHECK(fmi.setup_experiment(instances[i].c, fmi2False, 0.0, 0.0, fmi2False, 0.0));
        CHECK(fmi.enter_initialization_mode(instances[i].c));
        if (read_instance_plan(argv[4 + i], &instances[i]) != 0) return 1;
    }
    for (int i = 0; i < 2; ++i) CHECK(fmi.exit_initialization_mode(instances[i].c));
    size_t n_steps = instances[0].plan.n_steps < instances[1].plan.n_steps ? instances[0].plan.n_steps
                                                                  : instances[1].plan.n_steps;
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 2);
    Worker workers[2];
    pthread_t threads[2];
    for (int w = 0; w < 2; ++w) {
        workers[w] = (Worker){w, instances, n_steps, &barrier};
        pthread_create(&threads[w], NULL, work, &workers[w]);
    }
    for (int w = 0; w < 2; ++w) pthread_join(threads[w], NULL);
    pthread_barrier_destroy(&barrier);
    if (instances[0].failed || instances[1].failed) return 1;
    for (int i = 0; i < 2; ++i) {
        CHECK(fmi.terminate(instances[i].c));
        if (write_rows(&instances[i], argv[6 + i]) != 0) return 1;
    }
    fmi.free_instance(instances[1].c); /* ecos frees the later instance first */
    fmi.free_instance(instances[0].c);
    dlclose(lib);
    printf("binary_mapped_after_close %d\n", mappings_of(binary));
    for (int i = 0; i < 2; ++i) {
        free(instances[i].plan.inputs);
        free(instances[i].rows);
    }
    return 0;
}
