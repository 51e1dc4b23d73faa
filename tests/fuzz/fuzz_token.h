/* The resources folder a harness of the FMI 3.0 glue instantiates with: a folder of its own in the working directory holding the
 * instantiation token's file as a packed FMU has it ("fuzz-token"), made once per process. NULL if it cannot be
 * written. */
#ifndef MECHFMU_FUZZ_TOKEN_H
#define MECHFMU_FUZZ_TOKEN_H

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#define FUZZ_TOKEN "fuzz-token"

static const char *fuzz_resources(const char *harness) {
    static char resources[256];
    if (!resources[0]) {
        char folder[256], path[300];
        char here[128]; /* the working directory: the test's own temporary folder, removed after it */
        snprintf(folder, sizeof folder, "%s/mechfmu_%s_%ld/", getcwd(here, sizeof here) ? here : "/tmp", harness,
                 (long)getpid());
        mkdir(folder, 0700);
        snprintf(path, sizeof path, "%smechfmu_guid.txt", folder);
        FILE *file = fopen(path, "w");
        if (!file) return NULL;
        fputs(FUZZ_TOKEN "\n", file);
        fclose(file);
        snprintf(resources, sizeof resources, "%s", folder);
    }
    return resources;
}

#endif
