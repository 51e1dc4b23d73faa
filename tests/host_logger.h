/* The FMI logger of the C test hosts (tests/fmi2_host.c, tests/fmi2_fault_host.c): one line per message,
 * "[STATUS] instance: text", newlines in the text flattened, flushed at once (a crash keeps the lines). */
#ifndef MECHFMU_HOST_LOGGER_H
#define MECHFMU_HOST_LOGGER_H
#include <stdarg.h>
#include <stdio.h>

#include "fmi2Functions.h"

static const char *STATUS[] = {"OK", "WARNING", "DISCARD", "ERROR", "FATAL", "PENDING"};

static void logger(fmi2ComponentEnvironment env, fmi2String instance, fmi2Status status, fmi2String category,
                   fmi2String message, ...) {
    (void)env; (void)category;
    char text[8192];
    va_list args;
    va_start(args, message);
    vsnprintf(text, sizeof text, message, args);
    va_end(args);
    for (char *p = text; *p; ++p) if (*p == '\n') *p = ' ';
    printf("[%s] %s: %s\n", status <= fmi2Pending ? STATUS[status] : "?", instance ? instance : "(null)", text);
    fflush(stdout);
}
#endif
