/* What the C test hosts tests/fmi2_host.c and tests/fmi2_two_instance_host.c share: CHECK, and their plans'
 * lines (written by tests/fmu_roundtrip.py; "param T VR VALUE" sets a parameter of type T: R, I, B or S). */
#ifndef MECHFMU_HOST_PLAN_H
#define MECHFMU_HOST_PLAN_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
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
#endif
