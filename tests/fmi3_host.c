/*
 * A C host (no Python) of an FMI 3.0 co-simulation FMU of the Mass, for tests/test_fmi3.py. It drives it through
 * instantiate (event mode used, early return allowed), initialization, event mode, steps in which its intermediate
 * update asks for an early return, and FMU states taken, restored, serialized and deserialized, checking every
 * result against a second instance that steps exactly to the same times; then calls it as a careless host would
 * (NULL pointers and arrays, counts beyond any array, a call from inside the callback, a freed instance or state, a
 * state cut or changed, the other interface's calls), each of which must be refused without a crash. Last, an
 * instance given its force inside the step (requiredIntermediateVariables): a spring to s = 0.1 m set at every stage
 * must give the harmonic oscillator, an early return inside the integrated step must end there, and setting
 * anything but an input there must fail the step.
 *
 * Usage: fmi3_host BINARY RESOURCE_PATH TOKEN VR_F VR_S VR_V VR_TIME
 * Prints a line per check ("ok <what>" or "violation: <what>"), the motion after the early returns ("motion" and s,
 * v and the time in C99's hexadecimal floats, to compare platforms bit for bit) and at the end "violations <n>";
 * exit status 0 if there is none, 1 otherwise, 2 for a bad command line or a missing symbol.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi3Functions.h"
#include "host_check.h"
#include "host_dl.h"

static unsigned logged;

static void log_message(fmi3InstanceEnvironment environment, fmi3Status status, fmi3String category,
                        fmi3String message) {
    (void)environment, (void)category;
    ++logged;
    if (getenv("FMI3_HOST_VERBOSE")) fprintf(stderr, "[%d] %s\n", (int)status, message);
}

#define FUNCTIONS(X)                                                                                              \
    X(InstantiateCoSimulation) X(InstantiateModelExchange) X(FreeInstance) X(EnterInitializationMode)           \
    X(ExitInitializationMode) X(EnterEventMode) X(UpdateDiscreteStates) X(EnterStepMode) X(DoStep)                \
    X(GetFloat64) X(SetFloat64) X(GetFMUState) X(SetFMUState) X(FreeFMUState) X(SerializedFMUStateSize)          \
    X(SerializeFMUState) X(DeserializeFMUState) X(Terminate) X(GetDirectionalDerivative) X(SetContinuousStates)   \
    X(GetContinuousStateDerivatives) X(GetNumberOfContinuousStates) X(GetString) X(SetString)
#define DECLARE(name) static fmi3##name##TYPE *name;
FUNCTIONS(DECLARE)

static const char *token, *resources;
static fmi3ValueReference vr_f, vr_s, vr_v, vr_time;
/* the intermediate update: the early return time asked for (0: none), the instance to read in it */
static double ask;
static fmi3Instance reading;
static fmi3Status read_in_callback = fmi3OK, state_in_callback = fmi3OK;
/* the instance given its force inside the step: f = 100 N/m (s - 0.1 m), or a set of time where `bad_set` */
static fmi3Instance integrating;
static int stage_calls, bad_set;

static void intermediate_update(fmi3InstanceEnvironment environment, fmi3Float64 time, fmi3Boolean setRequested,
                                fmi3Boolean getAllowed, fmi3Boolean finished, fmi3Boolean canReturnEarly,
                                fmi3Boolean *earlyReturnRequested, fmi3Float64 *earlyReturnTime) {
    (void)environment, (void)time, (void)finished;
    if (setRequested && integrating) {
        double s = 0.0, f;
        GetFloat64(integrating, &vr_s, 1, &s, 1);
        f = 100.0 * (s - 0.1);
        SetFloat64(integrating, bad_set ? &vr_time : &vr_f, 1, &f, 1);
        ++stage_calls;
        *earlyReturnRequested = fmi3False;
        return;
    }
    if (reading && getAllowed) {
        double s;
        fmi3FMUState state = NULL;
        read_in_callback = GetFloat64(reading, &vr_s, 1, &s, 1);
        state_in_callback = GetFMUState(reading, &state); /* only the fmi3Get functions in the callback */
    }
    *earlyReturnRequested = canReturnEarly && ask > 0.0;
    *earlyReturnTime = ask;
}

static fmi3Instance instance(const char *name, int callback) {
    return InstantiateCoSimulation(name, token, resources, fmi3False, fmi3False, fmi3True, fmi3True, NULL, 0, NULL,
                                   log_message, callback ? intermediate_update : NULL);
}

/* initialized, in step mode, with a force on the mass */
static int started(fmi3Instance c, double force) {
    fmi3Boolean update, terminate, nominals, values, defined;
    fmi3Float64 next;
    return EnterInitializationMode(c, fmi3False, 0.0, 0.0, fmi3False, 0.0) == fmi3OK
           && SetFloat64(c, &vr_f, 1, &force, 1) == fmi3OK && ExitInitializationMode(c) == fmi3OK
           && UpdateDiscreteStates(c, &update, &terminate, &nominals, &values, &defined, &next) == fmi3OK
           && EnterStepMode(c) == fmi3OK;
}

static int motion(fmi3Instance c, double out[3]) {
    fmi3ValueReference vrs[3] = {vr_s, vr_v, vr_time};
    return GetFloat64(c, vrs, 3, out, 3) == fmi3OK;
}

static fmi3Status step(fmi3Instance c, double t, double h, fmi3Boolean *early, double *last) {
    fmi3Boolean event, terminate;
    return DoStep(c, t, h, fmi3True, &event, &terminate, early, last);
}

int main(int argc, char **argv) {
    if (argc != 8) {
        fprintf(stderr, "usage: fmi3_host BINARY RESOURCE_PATH TOKEN VR_F VR_S VR_V VR_TIME\n");
        return 2;
    }
    void *library = host_open(argv[1]);
    if (!library) return 2;
    FUNCTIONS(HOST_LOAD_FMI3)
    resources = argv[2], token = argv[3];
    vr_f = (fmi3ValueReference)atoi(argv[4]), vr_s = (fmi3ValueReference)atoi(argv[5]);
    vr_v = (fmi3ValueReference)atoi(argv[6]), vr_time = (fmi3ValueReference)atoi(argv[7]);

    /* --- a run with early returns, against an instance that steps exactly there ------------------------------- */
    fmi3Instance c = instance("host", 1), exact = instance("exact", 0);
    check(c && exact, "instantiated");
    if (!c || !exact) return 1;
    check(started(c, 2.0) && started(exact, 2.0), "initialized, through event mode into step mode");
    const double h = 0.01;
    double t = 0.0, a[3], b[3];
    int equal = 1, early_everywhere = 1;
    for (int k = 0; k < 20; ++k) {
        fmi3Boolean early = fmi3False, other = fmi3False;
        double last = -1.0, exact_last = -1.0;
        ask = t + (0.25 + 0.025 * k) * h;
        reading = c;
        fmi3Status status = step(c, t, h, &early, &last);
        reading = NULL;
        const double end = t + (ask - t); /* where a step of size ask - t from t ends */
        early_everywhere &= status == fmi3OK && early && last == end;
        step(exact, t, ask - t, &other, &exact_last);
        equal &= motion(c, a) && motion(exact, b) && !memcmp(a, b, sizeof a) && a[2] == end && !other;
        t = last;
    }
    ask = 0.0;
    printf("motion %a %a %a\n", a[0], a[1], a[2]);
    check(early_everywhere, "every step returned early at the time asked, lastSuccessfulTime that time");
    check(equal, "the early-returned steps equal steps of that size, to the bit");
    check(read_in_callback == fmi3OK, "the outputs are read inside the intermediate update");
    check(state_in_callback == fmi3Error, "fmi3GetFMUState inside the intermediate update is refused");

    /* --- event mode between steps ------------------------------------------------------------------------------ */
    fmi3Boolean update, terminate, nominals, values, defined;
    fmi3Float64 next;
    check(EnterEventMode(c) == fmi3OK && UpdateDiscreteStates(c, &update, &terminate, &nominals, &values, &defined,
                                                               &next) == fmi3OK && !defined && EnterStepMode(c) == fmi3OK,
          "event mode and back to step mode (no time event ahead)");

    /* --- FMU states ---------------------------------------------------------------------------------------------- */
    fmi3FMUState saved = NULL, copy = NULL;
    size_t size = 0;
    double here[3], later[3], back[3];
    check(GetFMUState(c, &saved) == fmi3OK && motion(c, here), "a state taken");
    fmi3Boolean early;
    double last;
    check(step(c, t, h, &early, &last) == fmi3OK && motion(c, later) && later[2] == t + h, "a step after it");
    check(SetFMUState(c, saved) == fmi3OK && motion(c, back) && !memcmp(back, here, sizeof here),
          "the state restored: the values it was taken with");
    check(SerializedFMUStateSize(c, saved, &size) == fmi3OK && size > 13, "its serialized size");
    unsigned char *bytes = malloc(size);
    check(bytes && SerializeFMUState(c, saved, bytes, size) == fmi3OK, "serialized");
    check(step(c, t, h, &early, &last) == fmi3OK, "a step again");
    check(DeserializeFMUState(c, bytes, size, &copy) == fmi3OK && SetFMUState(c, copy) == fmi3OK
          && motion(c, back) && !memcmp(back, here, sizeof here), "deserialized and restored: the same values");
    check(step(c, t, h, &early, &last) == fmi3OK && motion(c, back) && !memcmp(back, later, sizeof later),
          "the step from the restored state: the same values");

    /* --- a careless host ------------------------------------------------------------------------------------------ */
    unsigned before = logged;
    double x = 1.0;
    fmi3FMUState foreign = NULL;
    check(GetFloat64(NULL, &vr_s, 1, &x, 1) == fmi3Error, "GetFloat64 of a NULL instance");
    check(GetFloat64(c, NULL, 1, &x, 1) == fmi3Error, "GetFloat64 with NULL value references");
    check(GetFloat64(c, &vr_s, 1, NULL, 1) == fmi3Error, "GetFloat64 with NULL values");
    check(GetFloat64(c, &vr_s, (size_t)1 << 62, &x, (size_t)1 << 62) == fmi3Error, "GetFloat64 of 2^62 values");
    fmi3ValueReference outside = 1000000;
    check(GetFloat64(c, &outside, 1, &x, 1) == fmi3Error, "GetFloat64 of a value reference beyond the variables");
    check(SetFloat64(c, &vr_time, 1, &x, 1) == fmi3Error, "SetFloat64 of time");
    fmi3String text = NULL;
    check(SetString(c, &vr_s, 1, &text, 1) == fmi3Error, "SetString of NULL");
    check(DoStep(c, t + h, h, fmi3True, NULL, NULL, NULL, NULL) == fmi3Error, "DoStep with NULL outputs");
    check(step(c, 1e9, h, &early, &last) == fmi3Error, "DoStep at another time");
    check(step(c, t + h, -1.0, &early, &last) == fmi3Error, "DoStep of a negative size");
    check(GetFMUState(c, NULL) == fmi3Error, "GetFMUState to NULL");
    check(SetFMUState(c, (fmi3FMUState)bytes) == fmi3Error, "SetFMUState of a state never handed out");
    check(SerializeFMUState(c, saved, bytes, size - 1) == fmi3Error, "SerializeFMUState into a short buffer");
    check(DeserializeFMUState(c, bytes, size - 1, &foreign) == fmi3Error, "DeserializeFMUState of a cut state");
    bytes[size - 1] ^= 0x10;
    check(DeserializeFMUState(c, bytes, size, &foreign) == fmi3Error, "DeserializeFMUState of a changed state");
    fmi3Float64 seed = 1.0, sensitivity;
    check(GetDirectionalDerivative(c, &vr_s, 1, &vr_f, 1, &seed, 2, &sensitivity, 1) == fmi3Error,
          "GetDirectionalDerivative with nSeed != nKnowns");
    size_t states;
    check(GetNumberOfContinuousStates(c, &states) == fmi3OK && states == 2, "two continuous states (s, v)");
    double derivatives[2];
    check(GetContinuousStateDerivatives(c, derivatives, 2) == fmi3Error, "a Model Exchange call on co-simulation");
    check(SetContinuousStates(c, derivatives, 2) == fmi3Error, "another Model Exchange call on co-simulation");
    check(FreeFMUState(c, &saved) == fmi3OK && saved == NULL && FreeFMUState(c, &copy) == fmi3OK,
          "the states freed");
    check(SetFMUState(c, copy) == fmi3Error, "a freed state refused");
    check(logged > before, "each refusal logged");
    check(Terminate(c) == fmi3OK && Terminate(c) == fmi3Error, "terminated, and not twice");
    FreeInstance(c);
    check(GetFloat64(c, &vr_s, 1, &x, 1) == fmi3Error, "a freed instance refused, not read");
    FreeInstance(c); /* twice: ignored */
    check(InstantiateCoSimulation("wrong", "not the token", resources, fmi3False, fmi3False, fmi3False, fmi3False,
                                  NULL, 0, NULL, log_message, NULL) == NULL, "a wrong instantiation token refused");
    check(InstantiateModelExchange("no resources", token, NULL, fmi3False, fmi3False, NULL, log_message) == NULL,
          "a NULL resource path refused");
    FreeInstance(exact);
    free(bytes);

    /* --- intermediate inputs: the force at every stage of the step ------------------------------------------------ */
    fmi3Instance g = InstantiateCoSimulation("inputs", token, resources, fmi3False, fmi3False, fmi3True, fmi3True,
                                             &vr_f, 1, NULL, log_message, intermediate_update);
    integrating = g;
    check(g && started(g, 0.0), "an instance with its force among requiredIntermediateVariables, initialized");
    t = 0.0;
    int stepped = 1;
    for (int k = 0; g && k < 100; ++k, t += 0.01) stepped &= step(g, t, 0.01, &early, &last) == fmi3OK && !early;
    double oscillator[3] = {0.0, 0.0, 0.0};
    stepped &= g && motion(g, oscillator);
    const double off = oscillator[0] - 0.18390715290764524; /* 0.1 (1 - cos 10) at t = 1 s: cos 10 = -0.83907... */
    check(stepped && t > 0.999999 && off < 1e-8 && off > -1e-8 && stage_calls >= 600,
          "the force asked for at every stage: s = 0.1 (1 - cos 10t) to 1e-8 m after 1 s");
    ask = t + 0.004;
    check(step(g, t, 0.01, &early, &last) == fmi3OK && early && last == ask && motion(g, oscillator)
          && oscillator[2] == ask, "an early return inside the integrated step ends it there");
    ask = 0.0, bad_set = 1, t = last;
    check(step(g, t, 0.01, &early, &last) == fmi3Discard && last == t,
          "setting time where the inputs are asked for fails the step");
    integrating = NULL;
    FreeInstance(g);
    printf("violations %d\n", violations);
    return violations ? 1 : 0;
}
