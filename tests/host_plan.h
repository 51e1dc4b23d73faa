/* What the C test hosts tests/fmi2_host.c, tests/fmi2_me_host.c and tests/fmi2_two_instance_host.c share: CHECK,
 * and their plans' lines (written by the tests; "param T VR VALUE" sets a parameter of type T: R, I, B or S). */
#ifndef MECHFMU_HOST_PLAN_H
#define MECHFMU_HOST_PLAN_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "host_dl.h"
#include "host_logger.h"

/* In a function returning int: a call that fails (above fmi2Warning) prints itself and returns 1. */
#define CHECK(call)                                                                                  \
    do {                                                                                             \
        fmi2Status s_ = (call);                                                                      \
        if (s_ > fmi2Warning) {                                                                      \
            printf("call failed: %s -> %s\n", #call, STATUS[s_]);                                    \
            return 1;                                                                                \
        }                                                                                            \
    } while (0)

/* In a function returning int, with the FMU's library `lib` open: `name` as a local pointer to the FMU's function
 * of that name (1 returned, printed, if the library lacks it); COMMON_SYMBOLS: those every host uses. */
#define SYMBOL(type, name)                                                                           \
    type *name = (type *)dlsym(lib, #name);                                                          \
    if (!name) { printf("missing symbol %s\n", #name); return 1; }
#define COMMON_SYMBOLS                                                                               \
    SYMBOL(fmi2InstantiateTYPE, fmi2Instantiate) SYMBOL(fmi2SetupExperimentTYPE, fmi2SetupExperiment)    \
    SYMBOL(fmi2EnterInitializationModeTYPE, fmi2EnterInitializationMode)                             \
    SYMBOL(fmi2ExitInitializationModeTYPE, fmi2ExitInitializationMode) SYMBOL(fmi2SetRealTYPE, fmi2SetReal) \
    SYMBOL(fmi2SetIntegerTYPE, fmi2SetInteger) SYMBOL(fmi2SetBooleanTYPE, fmi2SetBoolean)            \
    SYMBOL(fmi2SetStringTYPE, fmi2SetString) SYMBOL(fmi2GetRealTYPE, fmi2GetReal)

/* The FMU's parameter setters. */
typedef struct {
    fmi2SetRealTYPE *real;
    fmi2SetIntegerTYPE *integer;
    fmi2SetBooleanTYPE *boolean;
    fmi2SetStringTYPE *string;
} Setters;

/* A plan's "param T VR VALUE" line set on instance c (the line is cut at its newline). 0 on success, 1 for a
 * malformed line or a failed call (printed). */
static int set_plan_parameter(char *line, fmi2Component c, const Setters *set) {
    char type;
    unsigned vr;
    int offset;
    if (sscanf(line, "param %c %u %n", &type, &vr, &offset) < 2) { printf("bad line %s", line); return 1; }
    char *value = line + offset;
    value[strcspn(value, "\n")] = '\0';
    fmi2ValueReference ref = vr;
    fmi2Status status;
    const char *call;
    if (type == 'R') { fmi2Real v = strtod(value, NULL); status = set->real(c, &ref, 1, &v); call = "fmi2SetReal"; }
    else if (type == 'I') { fmi2Integer v = atoi(value); status = set->integer(c, &ref, 1, &v); call = "fmi2SetInteger"; }
    else if (type == 'B') { fmi2Boolean v = atoi(value); status = set->boolean(c, &ref, 1, &v); call = "fmi2SetBoolean"; }
    else { fmi2String v = value; status = set->string(c, &ref, 1, &v); call = "fmi2SetString"; }
    if (status > fmi2Warning) {
        printf("call failed: %s(vr %u = %s) -> %s\n", call, vr, value, STATUS[status]);
        return 1;
    }
    return 0;
}

#ifndef MAX_VARS
#define MAX_VARS 512
#endif

/* A plan's inputs, outputs and steps (and what one host reads that another ignores). */
typedef struct {
    size_t n_in, n_out, n_steps;
    fmi2ValueReference in[MAX_VARS], out[MAX_VARS];
    double h;
    double *inputs;  /* n_steps x n_in */
    long snapshot;   /* "snapshot <k>": -1 for none */
    size_t nx, ni;   /* "states <nx> <ni>": continuous states and event indicators (Model Exchange) */
} Plan;

/* Read the plan file: its "param" lines set on c, the rest into *plan. 0 on success, 1 (printed) otherwise. */
static int read_plan(const char *path, fmi2Component c, const Setters *set, Plan *plan) {
    FILE *file = fopen(path, "r");
    if (!file) { printf("cannot open %s\n", path); return 1; }
    static char line[65536];
    memset(plan, 0, sizeof *plan);
    plan->snapshot = -1;
    while (fgets(line, sizeof line, file)) {
        char kind[32];
        if (sscanf(line, "%31s", kind) != 1) continue;
        if (strcmp(kind, "param") == 0) {
            if (set_plan_parameter(line, c, set)) { fclose(file); return 1; }
        } else if (strcmp(kind, "states") == 0) {
            if (sscanf(line, "states %zu %zu", &plan->nx, &plan->ni) != 2 || plan->nx > MAX_VARS || plan->ni > MAX_VARS) {
                printf("bad line %s", line);
                fclose(file);
                return 1;
            }
        } else if (strcmp(kind, "inputs") == 0 || strcmp(kind, "outputs") == 0) {
            int is_in = kind[0] == 'i';
            char *p = line + strlen(kind);
            size_t n = strtoul(p, &p, 10);
            if (n > MAX_VARS) { printf("too many variables\n"); fclose(file); return 1; }
            for (size_t i = 0; i < n; ++i) (is_in ? plan->in : plan->out)[i] = strtoul(p, &p, 10);
            *(is_in ? &plan->n_in : &plan->n_out) = n;
        } else if (strcmp(kind, "snapshot") == 0) {
            plan->snapshot = atol(line + 8);
        } else if (strcmp(kind, "steps") == 0) {
            char *p = line + 5;
            plan->n_steps = strtoul(p, &p, 10);
            plan->h = strtod(p, NULL);
            plan->inputs = calloc(plan->n_steps * plan->n_in + 1, sizeof(double));
            for (size_t k = 0; k < plan->n_steps; ++k) {
                if (!fgets(line, sizeof line, file)) { printf("plan ends early\n"); fclose(file); return 1; }
                p = line;
                for (size_t i = 0; i < plan->n_in; ++i) plan->inputs[k * plan->n_in + i] = strtod(p, &p);
            }
        }
    }
    fclose(file);
    return 0;
}
#endif
