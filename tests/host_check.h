/* A C test host's checks: each printed as "ok <what>" or "violation: <what>", the violations counted for the exit
 * status and the closing "violations <n>" line. */
#ifndef MECHFMU_HOST_CHECK_H
#define MECHFMU_HOST_CHECK_H

#include <stdio.h>

static int violations;

static void check(int ok, const char *what) {
    printf("%s %s\n", ok ? "ok" : "violation:", what);
    violations += !ok;
}

#endif
