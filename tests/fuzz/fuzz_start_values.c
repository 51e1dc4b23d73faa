/* sources: mechfmu/fmu/fmi2_native.c mechfmu/fmu/fmi2_platform.c components/native/expression.c */
/* The reader of resources/start_values.json: any bytes are a JSON object of parameter values (applied, each checked as
 * the host's own fmi2Set would check it) or refused with a message; never a read outside the bytes, a leak or UB. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmi2_python.h"
#include "fuzz_class.h"

static void quiet(fmi2ComponentEnvironment environment, fmi2String name, fmi2Status status, fmi2String category,
                  fmi2String message, ...) {
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
        snprintf(folder, sizeof folder, "/tmp/mechfmu_fuzz_start_values_%ld", (long)getpid());
        mkdir(folder, 0700);
        slave_load("Fuzz", why, sizeof why);
    }
    char path[300], uri[300];
    snprintf(path, sizeof path, "%s/start_values.json", folder);
    FILE *file = fopen(path, "wb");
    if (!file) return 0;
    fwrite(data, 1, size, file);
    fclose(file);
    snprintf(uri, sizeof uri, "file://%s", folder);
    fmi2CallbackFunctions functions = {quiet, calloc, free, NULL, NULL};
    Slave *s = slave_instantiate("fuzz", uri, fmi2False, &functions);
    if (s) {
        fmi2ValueReference all[] = {0, 1, 2, 5, 6, 7};
        fmi2Real values[6];
        slave_get_real(s, all, 6, values);
        slave_free(s);
    }
    return 0;
}
