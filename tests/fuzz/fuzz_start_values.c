/* sources: runtime.c model.c text.c platform.c expression.c */
/* The reader of resources/start_values.json: any bytes are a JSON object of parameter values (applied, each checked as
 * the host's own fmi2Set would check it) or refused with a message; never a read outside the bytes, a leak or UB. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime.h"
#include "fuzz_class.h"

static void quiet(void *environment, const char *name, RuntimeStatus status, const char *category,
                  const char *message) {
    (void)environment, (void)name, (void)status, (void)category, (void)message;
}

static char folder[256];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    JsonMember *members = NULL;
    size_t count = 0;
    char why[2048];
    if (native_json_object((const char *)data, size, &members, &count, why, sizeof why) != 0) return 0;
    native_json_free(members, count);
    /* an object: the same bytes as an FMU's resources/start_values.json, applied at instantiation */
    if (!folder[0]) {
        char here[128]; /* the working directory: the test's own temporary folder, removed after it */
        snprintf(folder, sizeof folder, "%s/mechfmu_fuzz_start_values_%ld", getcwd(here, sizeof here) ? here : "/tmp",
                 (long)getpid());
        mkdir(folder, 0700);
        runtime_load("Fuzz", why, sizeof why);
    }
    char path[300];
    snprintf(path, sizeof path, "%s/start_values.json", folder);
    FILE *file = fopen(path, "wb");
    if (!file) return 0;
    fwrite(data, 1, size, file);
    fclose(file);
    RuntimeLogger functions = {quiet, NULL};
    Runtime *s = runtime_instantiate("fuzz", folder, 0, &functions, 2);
    if (s) {
        RuntimeReference all[] = {0, 1, 2, 5, 6, 7};
        double values[6];
        runtime_get_real(s, all, 6, values);
        runtime_free(s);
    }
    return 0;
}
