/*
 * A plain C FMI 2.0 co-simulation host, as OMSimulator and the FMI compliance checker load FMUs:
 * dlopen(binary, RTLD_NOW | RTLD_LOCAL), no Python in the process (unless the process is a Python
 * host that calls run_host() from this file built as a shared library).
 *
 * Usage: fmi2_host BINARY RESOURCE_URI GUID PLAN OUTPUT
 * PLAN (text):   param R|I|B|S <vr> <value>         (S: the rest of the line)
 *                inputs <n> <vr>...                   (inputs set before every step)
 *                outputs <m> <vr>...                  (read after every step)
 *                steps <N> <h>                        then N lines of n input values each
 *                snapshot <k>                         (optional) getFMUstate after step k, replay the rest
 * Values are C99 hex floats (Python float.hex), written back the same way.
 * OUTPUT:        one line per step: the outputs as %a; then "replay_equal 0|1", "serialized_equal 0|1",
 *                "libpython_mappings <count>"; FMU log messages go to stdout as "[STATUS] text".
 * Exit status:   0 if every call returned fmi2OK/fmi2Warning, else 1 (the failing call is printed).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "host_dl.h"
#include "host_logger.h"
#include "host_plan.h"


#ifndef _WIN32
/* How many distinct libpython files (by device and inode) the process has mapped. */
static int libpython_mappings(void) {
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096], seen[16][64];
    int count = 0;
    if (!maps) return -1;
    while (fgets(line, sizeof line, maps)) {
        char device[32], path[4096] = "";
        unsigned long inode;
        if (sscanf(line, "%*s %*s %*s %31s %lu %4095s", device, &inode, path) < 3) continue;
        const char *base = strrchr(path, '/');
        if (!base || strncmp(base + 1, "libpython", 9) != 0) continue;
        char key[64];
        snprintf(key, sizeof key, "%s:%lu", device, inode);
        int known = 0;
        for (int i = 0; i < count; ++i) known |= strcmp(seen[i], key) == 0;
        if (!known && count < 16) snprintf(seen[count++], sizeof seen[0], "%s", key);
    }
    fclose(maps);
    return count;
}
#endif



int run_host(const char *binary, const char *resources, const char *guid, const char *plan_path,
             const char *output_path) {
    printf("libpython_mappings_before %d\n", libpython_mappings());
    void *lib = dlopen(binary, RTLD_NOW | RTLD_LOCAL);
    if (!lib) { printf("dlopen failed: %s\n", dlerror()); return 1; }
    COMMON_SYMBOLS
    SYMBOL(fmi2DoStepTYPE, fmi2DoStep)
    SYMBOL(fmi2GetFMUstateTYPE, fmi2GetFMUstate)
    SYMBOL(fmi2SetFMUstateTYPE, fmi2SetFMUstate)
    SYMBOL(fmi2FreeFMUstateTYPE, fmi2FreeFMUstate)
    SYMBOL(fmi2SerializedFMUstateSizeTYPE, fmi2SerializedFMUstateSize)
    SYMBOL(fmi2SerializeFMUstateTYPE, fmi2SerializeFMUstate)
    SYMBOL(fmi2DeSerializeFMUstateTYPE, fmi2DeSerializeFMUstate)
    SYMBOL(fmi2TerminateTYPE, fmi2Terminate)
    SYMBOL(fmi2FreeInstanceTYPE, fmi2FreeInstance)

    fmi2CallbackFunctions callbacks = {logger, calloc, free, NULL, NULL};
    fmi2Component c = fmi2Instantiate("host", fmi2CoSimulation, guid, resources, &callbacks, fmi2False, fmi2False);
    if (!c) { printf("fmi2Instantiate failed\n"); return 1; }
    CHECK(fmi2SetupExperiment(c, fmi2False, 0.0, 0.0, fmi2False, 0.0));

    Plan plan;
    Setters setters = {fmi2SetReal, fmi2SetInteger, fmi2SetBoolean, fmi2SetString};
    if (read_plan(plan_path, c, &setters, &plan)) return 1;

    CHECK(fmi2EnterInitializationMode(c));
    CHECK(fmi2ExitInitializationMode(c));
    FILE *out = fopen(output_path, "w");
    if (!out) { printf("cannot write %s\n", output_path); return 1; }
    double *rows = calloc(plan.n_steps * plan.n_out + 1, sizeof(double));
    fmi2FMUstate state = NULL;
    for (size_t k = 0; k < plan.n_steps; ++k) {
        if (plan.n_in) CHECK(fmi2SetReal(c, plan.in, plan.n_in, plan.inputs + k * plan.n_in));
        CHECK(fmi2DoStep(c, k * plan.h, plan.h, fmi2True));
        CHECK(fmi2GetReal(c, plan.out, plan.n_out, rows + k * plan.n_out));
        for (size_t j = 0; j < plan.n_out; ++j) fprintf(out, j ? " %a" : "%a", rows[k * plan.n_out + j]);
        fprintf(out, "\n");
        if ((long)k == plan.snapshot) CHECK(fmi2GetFMUstate(c, &state));
    }
    if (state) { /* restore, replay the rest; then the same through serialize / deserialize */
        size_t size = 0;
        CHECK(fmi2SerializedFMUstateSize(c, state, &size));
        char *bytes = malloc(size + 1);
        CHECK(fmi2SerializeFMUstate(c, state, bytes, size));
        for (int pass = 0; pass < 2; ++pass) {
            fmi2FMUstate restored = state;
            if (pass == 1) CHECK(fmi2DeSerializeFMUstate(c, bytes, size, &restored));
            CHECK(fmi2SetFMUstate(c, restored));
            int equal = 1;
            double row[MAX_VARS];
            for (size_t k = plan.snapshot + 1; k < plan.n_steps; ++k) {
                if (plan.n_in) CHECK(fmi2SetReal(c, plan.in, plan.n_in, plan.inputs + k * plan.n_in));
                CHECK(fmi2DoStep(c, k * plan.h, plan.h, fmi2True));
                CHECK(fmi2GetReal(c, plan.out, plan.n_out, row));
                equal &= memcmp(row, rows + k * plan.n_out, plan.n_out * sizeof(double)) == 0;
            }
            fprintf(out, pass ? "serialized_equal %d\n" : "replay_equal %d\n", equal);
            if (pass == 1) CHECK(fmi2FreeFMUstate(c, &restored));
        }
        CHECK(fmi2FreeFMUstate(c, &state));
        free(bytes);
    }
    CHECK(fmi2Terminate(c));
    fmi2FreeInstance(c);
    fprintf(out, "libpython_mappings %d\n", libpython_mappings());
    fclose(out);
    free(rows);
    free(plan.inputs);
    return 0;
}

#ifndef HOST_LIBRARY
int main(int argc, char **argv) {
    utf8_arguments(&argc, &argv);
    if (argc != 6) {
        fprintf(stderr, "usage: %s BINARY RESOURCE_URI GUID PLAN OUTPUT\n", argv[0]);
        return 2;
    }
    return run_host(argv[1], argv[2], argv[3], argv[4], argv[5]);
}
#endif
