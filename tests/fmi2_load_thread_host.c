/*
 * A plain C FMI 2.0 co-simulation host that loads FMU instances from several threads at once, each load with
 * its own parameters (a Table with its own file, another component), so that whatever the runtime shares between
 * instances (a static buffer, strtok's position, the locale, a global error) shows as a wrong value or a refused
 * call: each of THREADS threads makes LOADS instances one after the other, the k-th of job (thread + k) % jobs;
 * it sets the job's parameters, initializes, reads the output, steps STEPS times (h) reading it after each step,
 * and frees the instance. Every reading must equal the job's expected values bit for bit.
 *
 * Usage: fmi2_load_thread_host PLAN THREADS LOADS [LOCALE [uselocale]]
 * LOCALE: setlocale(LC_ALL, LOCALE) before the threads start (as a host with a German locale does), or with
 * "uselocale" each thread's own locale (newlocale/uselocale); exit 3 if the locale is not there.
 * PLAN, one item a line, fields separated by tabs:
 *   steps   N  h                          (h a hexadecimal float, as every Real here)
 *   job     BINARY  RESOURCE_URI  GUID  OUTPUT_VR
 *   set     S|B|I|R  VR  VALUE             (the last job's parameter; S: the rest of the line is the text)
 *   expect  y0 y1 ... yN                   (the last job's output after initialization and after each step)
 * Prints "loads N" and exits 0, or prints each failing call or reading (at most 20) and exits 1.
 */
#define _GNU_SOURCE /* newlocale, uselocale */
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "host_dl.h"

#define MAX_JOBS 16
#define MAX_SETS 16

typedef struct {
    char kind;
    fmi2ValueReference vr;
    char *text;
    double real;
    int integer;
} Set;

typedef struct {
    fmi2InstantiateTYPE *instantiate;
    fmi2SetupExperimentTYPE *setup_experiment;
    fmi2EnterInitializationModeTYPE *enter;
    fmi2ExitInitializationModeTYPE *exit;
    fmi2SetRealTYPE *set_real;
    fmi2SetIntegerTYPE *set_integer;
    fmi2SetBooleanTYPE *set_boolean;
    fmi2SetStringTYPE *set_string;
    fmi2GetRealTYPE *get_real;
    fmi2DoStepTYPE *do_step;
    fmi2FreeInstanceTYPE *free_instance;
    char *resources, *guid;
    fmi2ValueReference output;
    Set sets[MAX_SETS];
    int set_count;
    double *expected;
} Job;

static Job jobs[MAX_JOBS];
static int job_count, steps, loads;
static double h;
static const char *thread_locale;
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static int reports;

static void report(const char *format, const char *a, int thread, int load) {
    pthread_mutex_lock(&report_lock);
    if (reports++ < 20) {
        printf(format, a, thread, load);
        printf("\n");
    }
    pthread_mutex_unlock(&report_lock);
}

static void logger(fmi2ComponentEnvironment env, fmi2String instance, fmi2Status status, fmi2String category,
                   fmi2String message, ...) {
    (void)env, (void)category, (void)instance;
    if (status > fmi2Warning) report("[log] %s (thread %d, load %d)", message, -1, -1);
}

static const fmi2CallbackFunctions CALLBACKS = {logger, calloc, free, NULL, NULL};

#define SYMBOL(field, name)                                                                           \
    if (!(*(void **)&j->field = dlsym(library, name))) {                                              \
        printf("%s: no %s\n", binary, name);                                                          \
        exit(2);                                                                                      \
    }

static void load_job(Job *j, const char *binary) {
    void *library = dlopen(binary, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        printf("dlopen: %s\n", dlerror());
        exit(2);
    }
    SYMBOL(instantiate, "fmi2Instantiate") SYMBOL(setup_experiment, "fmi2SetupExperiment")
    SYMBOL(enter, "fmi2EnterInitializationMode") SYMBOL(exit, "fmi2ExitInitializationMode")
    SYMBOL(set_real, "fmi2SetReal") SYMBOL(set_integer, "fmi2SetInteger") SYMBOL(set_boolean, "fmi2SetBoolean")
    SYMBOL(set_string, "fmi2SetString") SYMBOL(get_real, "fmi2GetReal") SYMBOL(do_step, "fmi2DoStep")
    SYMBOL(free_instance, "fmi2FreeInstance")
}

static char *field(char **rest) { /* the next tab-separated field, NULL at the line's end */
    if (!*rest || !**rest) return NULL;
    char *start = *rest, *tab = strchr(start, '\t');
    if (tab) *tab = '\0', *rest = tab + 1;
    else *rest = start + strlen(start);
    return start;
}

static void read_plan(const char *path) {
    FILE *file = fopen(path, "r");
    if (!file) {
        printf("cannot read the plan %s\n", path);
        exit(2);
    }
    char *line = NULL;
    size_t size = 0;
    while (getline(&line, &size, file) > 0) {
        line[strcspn(line, "\n")] = '\0';
        char *rest = line, *key = field(&rest);
        Job *j = job_count ? &jobs[job_count - 1] : NULL;
        if (!key) continue;
        if (!strcmp(key, "steps")) {
            steps = atoi(field(&rest));
            h = strtod(field(&rest), NULL); /* hexadecimal: no decimal point, the same in every locale */
        } else if (!strcmp(key, "job") && job_count < MAX_JOBS) {
            j = &jobs[job_count++];
            load_job(j, field(&rest));
            j->resources = strdup(field(&rest));
            j->guid = strdup(field(&rest));
            j->output = (fmi2ValueReference)strtoul(field(&rest), NULL, 10);
        } else if (!strcmp(key, "set") && j && j->set_count < MAX_SETS) {
            Set *s = &j->sets[j->set_count++];
            s->kind = field(&rest)[0];
            s->vr = (fmi2ValueReference)strtoul(field(&rest), NULL, 10);
            char *value = rest;
            s->text = strdup(value);
            s->real = strtod(value, NULL);
            s->integer = atoi(value);
        } else if (!strcmp(key, "expect") && j) {
            j->expected = calloc((size_t)steps + 1, sizeof *j->expected);
            for (int k = 0; k <= steps; ++k) j->expected[k] = strtod(field(&rest), NULL);
        }
    }
    free(line);
    fclose(file);
}

#define CHECK(call, what)                                                                             \
    if ((call) != fmi2OK) {                                                                           \
        report("%s failed (thread %d, load %d)", what, number, load);                                 \
        ++*failures;                                                                                  \
        j->free_instance(c);                                                                          \
        continue;                                                                                     \
    }

typedef struct {
    int number, failures;
} Worker;

static void *work(void *argument) {
    Worker *w = argument;
    const int number = w->number;
    int *failures = &w->failures;
    locale_t own = (locale_t)0;
    if (thread_locale) {
        own = newlocale(LC_ALL_MASK, thread_locale, (locale_t)0);
        if (!own) {
            report("newlocale(%s) failed (thread %d, load %d)", thread_locale, number, -1);
            ++*failures;
            return NULL;
        }
        uselocale(own);
    }
    double *readings = calloc((size_t)steps + 1, sizeof *readings);
    char name[64];
    for (int load = 0; load < loads; ++load) {
        Job *j = &jobs[(number + load) % job_count];
        snprintf(name, sizeof name, "t%d_%d", number, load);
        fmi2Component c = j->instantiate(name, fmi2CoSimulation, j->guid, j->resources, &CALLBACKS, fmi2False,
                                         fmi2False);
        if (!c) {
            report("%s failed (thread %d, load %d)", "fmi2Instantiate", number, load);
            ++*failures;
            continue;
        }
        int set_failed = 0;
        for (int i = 0; i < j->set_count && !set_failed; ++i) {
            const Set *s = &j->sets[i];
            fmi2Boolean b = s->integer != 0;
            fmi2String text = s->text;
            fmi2Status status = s->kind == 'S' ? j->set_string(c, &s->vr, 1, &text)
                                : s->kind == 'B' ? j->set_boolean(c, &s->vr, 1, &b)
                                : s->kind == 'I' ? j->set_integer(c, &s->vr, 1, &s->integer)
                                : j->set_real(c, &s->vr, 1, &s->real);
            set_failed = status != fmi2OK;
        }
        CHECK(set_failed ? fmi2Error : fmi2OK, "a parameter's fmi2Set")
        CHECK(j->setup_experiment(c, fmi2False, 0.0, 0.0, fmi2False, 0.0), "fmi2SetupExperiment")
        CHECK(j->enter(c), "fmi2EnterInitializationMode")
        CHECK(j->exit(c), "fmi2ExitInitializationMode")
        CHECK(j->get_real(c, &j->output, 1, &readings[0]), "fmi2GetReal")
        int k = 0;
        for (; k < steps; ++k)
            if (j->do_step(c, k * h, h, fmi2True) > fmi2Warning /* a warning is a step taken */
                || j->get_real(c, &j->output, 1, &readings[k + 1]) != fmi2OK)
                break;
        CHECK(k == steps ? fmi2OK : fmi2Error, "fmi2DoStep")
        if (memcmp(readings, j->expected, ((size_t)steps + 1) * sizeof *readings) != 0) {
            report("%s: readings differ from the expected ones (thread %d, load %d)", j->resources, number, load);
            ++*failures;
        }
        j->free_instance(c);
    }
    free(readings);
    if (own) {
        uselocale(LC_GLOBAL_LOCALE);
        freelocale(own);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        printf("usage: fmi2_load_thread_host PLAN THREADS LOADS [LOCALE [uselocale]]\n");
        return 2;
    }
    read_plan(argv[1]);
    const int threads = atoi(argv[2]);
    loads = atoi(argv[3]);
    if (argc > 4 && argc > 5 && !strcmp(argv[5], "uselocale")) {
        locale_t probe = newlocale(LC_ALL_MASK, argv[4], (locale_t)0);
        if (!probe) return printf("no locale %s\n", argv[4]), 3;
        freelocale(probe);
        thread_locale = argv[4];
    } else if (argc > 4 && !setlocale(LC_ALL, argv[4])) {
        return printf("no locale %s\n", argv[4]), 3;
    }
    if (!job_count) return printf("no job in the plan\n"), 2;
    for (int i = 0; i < job_count; ++i)
        if (!jobs[i].expected) return printf("job %d has no expected values\n", i), 2;
    pthread_t *ids = calloc((size_t)threads, sizeof *ids);
    Worker *workers = calloc((size_t)threads, sizeof *workers);
    for (int t = 0; t < threads; ++t) {
        workers[t].number = t;
        pthread_create(&ids[t], NULL, work, &workers[t]);
    }
    int failures = 0;
    for (int t = 0; t < threads; ++t) {
        pthread_join(ids[t], NULL);
        failures += workers[t].failures;
    }
    free(ids);
    free(workers);
    printf("loads %d failures %d\n", threads * loads, failures);
    return failures != 0;
}
