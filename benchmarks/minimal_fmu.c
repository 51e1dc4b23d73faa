/*
 * The reference of benchmarks/native_speed.py: a minimal FMI 2.0 co-simulation FMU of the same interface as a
 * measured FMU (the same modelDescription.xml: the same variables, value references and causalities), as a competent
 * hand-written FMU has it and no more. Its step does the least sensible work for a body: one explicit Euler step of
 * one mass, s += h*v, v += h*f/m, with f the sum of the force inputs; its outputs are s, v and a, in turn. Its
 * fmi2SetReal and fmi2GetReal are the straightforward loops: a value reference is an index into the values, checked
 * against the variable count and its causality; the instance is checked for NULL and its state.
 *
 * Built by the benchmark at run time, with interface.h written from the model description, which defines:
 *   VARIABLES, CAUSALITIES (per value reference: 0 parameter, 1 input, 2 output, 3 other), STARTS (per value
 *   reference), FORCES and FORCE_COUNT (the force inputs' value references), MASS (the mass's value reference),
 *   FIRST_OUTPUT and OUTPUTS (the outputs are the value references FIRST_OUTPUT to FIRST_OUTPUT + OUTPUTS - 1), GUID.
 */
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "interface.h"

enum { INSTANTIATED = 1, INITIALIZATION_MODE = 2, STEP_COMPLETE = 4, TERMINATED = 8 };
enum { PARAMETER, INPUT, OUTPUT, OTHER };

static const unsigned char causality[VARIABLES] = CAUSALITIES;
static const double start[VARIABLES] = STARTS;
static const fmi2ValueReference forces[FORCE_COUNT] = FORCES;

typedef struct {
    int state;
    double s, v, a, time;
    double values[VARIABLES];
    fmi2CallbackFunctions host;
    char *name;
} Instance;

static fmi2Status fail(Instance *w, const char *message) {
    if (w->host.logger) w->host.logger(w->host.componentEnvironment, w->name, fmi2Error, "logStatusError", message);
    return fmi2Error;
}

#define ENTER(allowed)                                                                                      \
    Instance *w = (Instance *)c;                                                                            \
    if (!w) return fmi2Error;                                                                               \
    if (!(w->state & (allowed))) return fail(w, "not allowed in this state")

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String resources,
                              const fmi2CallbackFunctions *functions, fmi2Boolean visible, fmi2Boolean logging) {
    (void)resources, (void)visible, (void)logging;
    if (!name || !guid || type != fmi2CoSimulation || strcmp(guid, GUID) != 0) return NULL;
    Instance *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    if (functions) w->host = *functions;
    w->name = strdup(name);
    memcpy(w->values, start, sizeof start);
    w->state = INSTANTIATED;
    return w;
}

void fmi2FreeInstance(fmi2Component c) {
    Instance *w = (Instance *)c;
    if (!w) return;
    free(w->name);
    free(w);
}

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String categories[]) {
    (void)on, (void)n, (void)categories;
    ENTER(INSTANTIATED | INITIALIZATION_MODE | STEP_COMPLETE | TERMINATED);
    return fmi2OK;
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance, fmi2Real startTime,
                               fmi2Boolean stopTimeDefined, fmi2Real stopTime) {
    (void)toleranceDefined, (void)tolerance, (void)stopTimeDefined, (void)stopTime;
    ENTER(INSTANTIATED);
    w->time = startTime;
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c) {
    ENTER(INSTANTIATED);
    w->state = INITIALIZATION_MODE;
    return fmi2OK;
}

static void outputs(Instance *w) {
    const double shown[3] = {w->s, w->v, w->a};
    for (int k = 0; k < OUTPUTS; ++k) w->values[FIRST_OUTPUT + k] = shown[k % 3];
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
    ENTER(INITIALIZATION_MODE);
    if (!(w->values[MASS] > 0.0)) return fail(w, "the mass must be > 0");
    outputs(w);
    w->state = STEP_COMPLETE;
    return fmi2OK;
}

fmi2Status fmi2Terminate(fmi2Component c) {
    ENTER(STEP_COMPLETE);
    w->state = TERMINATED;
    return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component c) {
    ENTER(INSTANTIATED | INITIALIZATION_MODE | STEP_COMPLETE | TERMINATED);
    memcpy(w->values, start, sizeof start);
    w->s = w->v = w->a = w->time = 0.0;
    w->state = INSTANTIATED;
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Real value[]) {
    ENTER(INSTANTIATED | INITIALIZATION_MODE | STEP_COMPLETE);
    if (nvr && (!vr || !value)) return fail(w, "NULL array");
    for (size_t i = 0; i < nvr; ++i) {
        if (vr[i] >= VARIABLES || !(causality[vr[i]] == INPUT
                                    || (causality[vr[i]] == PARAMETER && w->state != STEP_COMPLETE)))
            return fail(w, "fmi2SetReal: a value reference that cannot be set");
        w->values[vr[i]] = value[i];
    }
    return fmi2OK;
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Real value[]) {
    ENTER(INITIALIZATION_MODE | STEP_COMPLETE | TERMINATED);
    if (nvr && (!vr || !value)) return fail(w, "NULL array");
    for (size_t i = 0; i < nvr; ++i) {
        if (vr[i] >= VARIABLES) return fail(w, "fmi2GetReal: no such value reference");
        value[i] = w->values[vr[i]];
    }
    return fmi2OK;
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean noSetFMUStatePriorToCurrentPoint) {
    (void)noSetFMUStatePriorToCurrentPoint;
    ENTER(STEP_COMPLETE);
    if (!(h > 0.0) || t != w->time) return fail(w, "fmi2DoStep: a step that does not start at the current time");
    double f = 0.0;
    for (int k = 0; k < FORCE_COUNT; ++k) f += w->values[forces[k]];
    w->a = f / w->values[MASS];
    w->s += h * w->v;
    w->v += h * w->a;
    w->time = t + h;
    outputs(w);
    return fmi2OK;
}

/* what the reference has no use for */
#define REFUSED(name, ...)                                                                                  \
    fmi2Status fmi2##name(fmi2Component c, __VA_ARGS__) {                                                   \
        ENTER(0);                                                                                           \
        return fmi2Error;                                                                                   \
    }
#define UNUSED_ARRAYS(type) const fmi2ValueReference vr[], size_t nvr, type value[]
#pragma GCC diagnostic ignored "-Wunused-parameter"
REFUSED(GetInteger, UNUSED_ARRAYS(fmi2Integer))
REFUSED(GetBoolean, UNUSED_ARRAYS(fmi2Boolean))
REFUSED(GetString, UNUSED_ARRAYS(fmi2String))
REFUSED(SetInteger, UNUSED_ARRAYS(const fmi2Integer))
REFUSED(SetBoolean, UNUSED_ARRAYS(const fmi2Boolean))
REFUSED(SetString, UNUSED_ARRAYS(const fmi2String))
REFUSED(GetFMUstate, fmi2FMUstate *state)
REFUSED(SetFMUstate, fmi2FMUstate state)
REFUSED(FreeFMUstate, fmi2FMUstate *state)
REFUSED(SerializedFMUstateSize, fmi2FMUstate state, size_t *size)
REFUSED(SerializeFMUstate, fmi2FMUstate state, fmi2Byte bytes[], size_t size)
REFUSED(DeSerializeFMUstate, const fmi2Byte bytes[], size_t size, fmi2FMUstate *state)
REFUSED(GetDirectionalDerivative, const fmi2ValueReference u[], size_t nu, const fmi2ValueReference k[], size_t nk,
        const fmi2Real dk[], fmi2Real du[])
REFUSED(SetRealInputDerivatives, const fmi2ValueReference vr[], size_t nvr, const fmi2Integer order[],
        const fmi2Real value[])
REFUSED(GetRealOutputDerivatives, const fmi2ValueReference vr[], size_t nvr, const fmi2Integer order[],
        fmi2Real value[])
REFUSED(GetStatus, const fmi2StatusKind s, fmi2Status *value)
REFUSED(GetRealStatus, const fmi2StatusKind s, fmi2Real *value)
REFUSED(GetIntegerStatus, const fmi2StatusKind s, fmi2Integer *value)
REFUSED(GetBooleanStatus, const fmi2StatusKind s, fmi2Boolean *value)
REFUSED(GetStringStatus, const fmi2StatusKind s, fmi2String *value)

fmi2Status fmi2CancelStep(fmi2Component c) {
    ENTER(0);
    return fmi2Error;
}
