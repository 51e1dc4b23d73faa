/*
 * Every FMI 2.0 function of an FMU called as a careless or hostile host would (tests/test_fmi_null_arguments.py):
 * a NULL or freed component, NULL arrays with n > 0, counts far beyond any array, value references out of range,
 * NULL strings and pointers, calls in the wrong state or of the other interface. Each must return fmi2Error (or,
 * where FMI says so, be ignored) and never crash; the test runs this host under AddressSanitizer and UBSan (the FMU
 * built with them too) and under valgrind. Prints one line per call, "<call> => <STATUS>", and a line "violation"
 * for each call whose status is not the expected one; exits with the number of violations.
 *
 * Usage: fmi2_null_host BINARY RESOURCE_URI GUID REAL_VR
 * (REAL_VR: the value reference of a Real parameter.)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "host_dl.h"
#include "host_logger.h"

static int violations;

static void expect(const char *call, fmi2Status status, fmi2Status wanted) {
    printf("%s => %s\n", call, status <= fmi2Pending ? STATUS[status] : "?");
    if (status != wanted) {
        printf("violation: %s returned %d, expected %d\n", call, (int)status, (int)wanted);
        ++violations;
    }
    fflush(stdout);
}

#define LOAD(name) fmi2##name##TYPE *name = (fmi2##name##TYPE *)dlsym(library, "fmi2" #name); \
    if (!name) { printf("missing fmi2" #name "\n"); return 100; }

int main(int argc, char **argv) {
    if (argc != 5) return 100;
    void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!library) { printf("dlopen: %s\n", dlerror()); return 100; }
    const char *uri = argv[2], *guid = argv[3];
    const fmi2ValueReference real = (fmi2ValueReference)strtoul(argv[4], NULL, 10);
    LOAD(GetTypesPlatform) LOAD(GetVersion) LOAD(SetDebugLogging) LOAD(Instantiate) LOAD(FreeInstance)
    LOAD(SetupExperiment) LOAD(EnterInitializationMode) LOAD(ExitInitializationMode) LOAD(Terminate) LOAD(Reset)
    LOAD(GetReal) LOAD(GetInteger) LOAD(GetBoolean) LOAD(GetString) LOAD(SetReal) LOAD(SetInteger) LOAD(SetBoolean)
    LOAD(SetString) LOAD(GetFMUstate) LOAD(SetFMUstate) LOAD(FreeFMUstate) LOAD(SerializedFMUstateSize)
    LOAD(SerializeFMUstate) LOAD(DeSerializeFMUstate) LOAD(GetDirectionalDerivative) LOAD(SetRealInputDerivatives)
    LOAD(GetRealOutputDerivatives) LOAD(DoStep) LOAD(CancelStep) LOAD(GetStatus) LOAD(GetRealStatus)
    LOAD(GetIntegerStatus) LOAD(GetBooleanStatus) LOAD(GetStringStatus) LOAD(EnterEventMode) LOAD(NewDiscreteStates)
    LOAD(EnterContinuousTimeMode) LOAD(CompletedIntegratorStep) LOAD(SetTime) LOAD(SetContinuousStates)
    LOAD(GetDerivatives) LOAD(GetEventIndicators) LOAD(GetContinuousStates) LOAD(GetNominalsOfContinuousStates)
    printf("platform %s version %s\n", GetTypesPlatform(), GetVersion());

    const size_t HUGE_COUNT = SIZE_MAX / 2 + 3; /* an overflow of count * 8 */
    fmi2ValueReference vr[2] = {real, real};
    fmi2Real r[2] = {1.0, 1.0};
    fmi2Integer i[2] = {0, 0};
    fmi2Boolean b[2] = {0, 0};
    fmi2String s[2] = {"a", "b"};
    fmi2String null_strings[1] = {NULL};
    fmi2FMUstate state = NULL;
    fmi2Byte bytes[64] = {0};
    size_t size = 0;
    fmi2EventInfo info;
    fmi2Boolean flag;
    fmi2Status status_value;
    fmi2Integer integer_value;
    fmi2String string_value;

    /* a NULL component: every function */
    fmi2Component none = NULL;
    expect("null SetDebugLogging", SetDebugLogging(none, fmi2True, 0, NULL), fmi2Error);
    expect("null SetupExperiment", SetupExperiment(none, fmi2False, 0, 0, fmi2False, 1), fmi2Error);
    expect("null EnterInitializationMode", EnterInitializationMode(none), fmi2Error);
    expect("null ExitInitializationMode", ExitInitializationMode(none), fmi2Error);
    expect("null Terminate", Terminate(none), fmi2Error);
    expect("null Reset", Reset(none), fmi2Error);
    expect("null GetReal", GetReal(none, vr, 1, r), fmi2Error);
    expect("null GetInteger", GetInteger(none, vr, 1, i), fmi2Error);
    expect("null GetBoolean", GetBoolean(none, vr, 1, b), fmi2Error);
    expect("null GetString", GetString(none, vr, 1, s), fmi2Error);
    expect("null SetReal", SetReal(none, vr, 1, r), fmi2Error);
    expect("null SetInteger", SetInteger(none, vr, 1, i), fmi2Error);
    expect("null SetBoolean", SetBoolean(none, vr, 1, b), fmi2Error);
    expect("null SetString", SetString(none, vr, 1, s), fmi2Error);
    expect("null GetFMUstate", GetFMUstate(none, &state), fmi2Error);
    expect("null SetFMUstate", SetFMUstate(none, state), fmi2Error);
    expect("null FreeFMUstate", FreeFMUstate(none, &state), fmi2Error);
    expect("null SerializedFMUstateSize", SerializedFMUstateSize(none, state, &size), fmi2Error);
    expect("null SerializeFMUstate", SerializeFMUstate(none, state, bytes, sizeof bytes), fmi2Error);
    expect("null DeSerializeFMUstate", DeSerializeFMUstate(none, bytes, sizeof bytes, &state), fmi2Error);
    expect("null GetDirectionalDerivative", GetDirectionalDerivative(none, vr, 1, vr, 1, r, r), fmi2Error);
    expect("null SetRealInputDerivatives", SetRealInputDerivatives(none, vr, 1, i, r), fmi2Error);
    expect("null GetRealOutputDerivatives", GetRealOutputDerivatives(none, vr, 1, i, r), fmi2Error);
    expect("null DoStep", DoStep(none, 0, 1e-3, fmi2True), fmi2Error);
    expect("null CancelStep", CancelStep(none), fmi2Error);
    expect("null GetStatus", GetStatus(none, fmi2DoStepStatus, &status_value), fmi2Error);
    expect("null GetRealStatus", GetRealStatus(none, fmi2LastSuccessfulTime, r), fmi2Error);
    expect("null GetIntegerStatus", GetIntegerStatus(none, fmi2LastSuccessfulTime, &integer_value), fmi2Error);
    expect("null GetBooleanStatus", GetBooleanStatus(none, fmi2Terminated, &flag), fmi2Error);
    expect("null GetStringStatus", GetStringStatus(none, fmi2PendingStatus, &string_value), fmi2Error);
    expect("null EnterEventMode", EnterEventMode(none), fmi2Error);
    expect("null NewDiscreteStates", NewDiscreteStates(none, &info), fmi2Error);
    expect("null EnterContinuousTimeMode", EnterContinuousTimeMode(none), fmi2Error);
    expect("null CompletedIntegratorStep", CompletedIntegratorStep(none, fmi2True, &flag, &flag), fmi2Error);
    expect("null SetTime", SetTime(none, 0.0), fmi2Error);
    expect("null SetContinuousStates", SetContinuousStates(none, r, 1), fmi2Error);
    expect("null GetDerivatives", GetDerivatives(none, r, 1), fmi2Error);
    expect("null GetEventIndicators", GetEventIndicators(none, r, 1), fmi2Error);
    expect("null GetContinuousStates", GetContinuousStates(none, r, 1), fmi2Error);
    expect("null GetNominalsOfContinuousStates", GetNominalsOfContinuousStates(none, r, 1), fmi2Error);
    FreeInstance(none);

    /* fmi2Instantiate with NULL strings, a wrong type, a wrong GUID or location: NULL, no crash */
    fmi2CallbackFunctions callbacks = {logger, calloc, free, NULL, NULL};
    int refused = !Instantiate(NULL, fmi2CoSimulation, guid, uri, &callbacks, fmi2False, fmi2False)
                  && !Instantiate("x", fmi2CoSimulation, NULL, uri, &callbacks, fmi2False, fmi2False)
                  && !Instantiate("x", fmi2CoSimulation, guid, NULL, &callbacks, fmi2False, fmi2False)
                  && !Instantiate("x", (fmi2Type)7, guid, uri, &callbacks, fmi2False, fmi2False)
                  && !Instantiate("x", fmi2CoSimulation, "{not the guid}", uri, &callbacks, fmi2False, fmi2False)
                  && !Instantiate("x", fmi2CoSimulation, guid, "file:///no/such/folder", NULL, fmi2False, fmi2False)
                  && !Instantiate("x", fmi2CoSimulation, guid, "http://host/x", &callbacks, fmi2False, fmi2False);
    expect("Instantiate with NULL or wrong arguments", refused ? fmi2Error : fmi2OK, fmi2Error);

    fmi2Component c = Instantiate("careless", fmi2CoSimulation, guid, uri, &callbacks, fmi2False, fmi2True);
    if (!c) { printf("instantiate failed\n"); return 100; }
    /* NULL arrays with n > 0, counts beyond any array, references out of range, NULL strings */
    expect("SetDebugLogging categories NULL", SetDebugLogging(c, fmi2True, 2, NULL), fmi2Error);
    expect("SetDebugLogging a category NULL", SetDebugLogging(c, fmi2True, 1, null_strings), fmi2Error);
    expect("SetDebugLogging huge count", SetDebugLogging(c, fmi2True, HUGE_COUNT, s), fmi2Error);
    expect("GetReal vr NULL", GetReal(c, NULL, 1, r), fmi2Error);
    expect("GetReal value NULL", GetReal(c, vr, 1, NULL), fmi2Error);
    expect("GetReal huge count", GetReal(c, vr, HUGE_COUNT, r), fmi2Error);
    expect("GetReal count 2^32", GetReal(c, vr, (size_t)1 << 32, r), fmi2Error);
    expect("GetInteger vr NULL", GetInteger(c, NULL, 2, i), fmi2Error);
    expect("GetBoolean value NULL", GetBoolean(c, vr, 2, NULL), fmi2Error);
    expect("GetString value NULL", GetString(c, vr, 1, NULL), fmi2Error);
    expect("GetString huge count", GetString(c, vr, HUGE_COUNT, s), fmi2Error);
    expect("SetReal vr NULL", SetReal(c, NULL, 1, r), fmi2Error);
    expect("SetReal huge count", SetReal(c, vr, HUGE_COUNT, r), fmi2Error);
    expect("SetInteger value NULL", SetInteger(c, vr, 1, NULL), fmi2Error);
    expect("SetBoolean vr NULL", SetBoolean(c, NULL, 3, b), fmi2Error);
    expect("SetString value NULL", SetString(c, vr, 1, NULL), fmi2Error);
    expect("SetString a NULL string", SetString(c, vr, 1, null_strings), fmi2Error);
    expect("SetString huge count", SetString(c, vr, HUGE_COUNT, s), fmi2Error);
    expect("GetReal n = 0, NULL arrays", GetReal(c, NULL, 0, NULL), fmi2OK);
    fmi2ValueReference outside[4] = {0xffffffffu, 100000u, 0x7fffffffu, 0x80000000u};
    fmi2Real four[4];
    fmi2Integer four_i[4] = {0, 0, 0, 0};
    fmi2Boolean four_b[4] = {0, 0, 0, 0};
    fmi2String four_s[4] = {"", "", "", ""};
    expect("GetReal out of range", GetReal(c, outside, 4, four), fmi2Error);
    expect("GetInteger out of range", GetInteger(c, outside, 4, four_i), fmi2Error);
    expect("GetBoolean out of range", GetBoolean(c, outside, 4, four_b), fmi2Error);
    expect("GetString out of range", GetString(c, outside, 4, four_s), fmi2Error);
    expect("SetReal out of range", SetReal(c, outside, 4, four), fmi2Error);
    expect("SetInteger out of range", SetInteger(c, outside, 4, four_i), fmi2Error);
    expect("SetBoolean out of range", SetBoolean(c, outside, 4, four_b), fmi2Error);
    expect("SetString out of range", SetString(c, outside, 4, four_s), fmi2Error);
    expect("GetInteger of a Real", GetInteger(c, vr, 1, i), fmi2Error);
    expect("SetString of a Real", SetString(c, vr, 1, s), fmi2Error);
    /* the wrong order and the other interface */
    expect("ExitInitializationMode before Enter", ExitInitializationMode(c), fmi2Error);
    expect("DoStep before initialization", DoStep(c, 0.0, 1e-3, fmi2True), fmi2Error);
    expect("CancelStep", CancelStep(c), fmi2Error);
    expect("GetStatus before a step", GetStatus(c, fmi2DoStepStatus, &status_value), fmi2Error);
    expect("SetTime on Co-Simulation", SetTime(c, 0.0), fmi2Error);
    expect("EnterEventMode on Co-Simulation", EnterEventMode(c), fmi2Error);
    expect("NewDiscreteStates on Co-Simulation", NewDiscreteStates(c, &info), fmi2Error);
    expect("EnterContinuousTimeMode on Co-Simulation", EnterContinuousTimeMode(c), fmi2Error);
    expect("CompletedIntegratorStep on Co-Simulation", CompletedIntegratorStep(c, fmi2True, &flag, &flag), fmi2Error);
    expect("SetContinuousStates on Co-Simulation", SetContinuousStates(c, r, 1), fmi2Error);
    expect("GetDerivatives on Co-Simulation", GetDerivatives(c, r, 1), fmi2Error);
    expect("GetEventIndicators on Co-Simulation", GetEventIndicators(c, r, 1), fmi2Error);
    expect("GetContinuousStates on Co-Simulation", GetContinuousStates(c, r, 1), fmi2Error);
    expect("GetNominals on Co-Simulation", GetNominalsOfContinuousStates(c, r, 1), fmi2Error);
    expect("SetupExperiment start NaN", SetupExperiment(c, fmi2False, 0, 0.0 / 0.0, fmi2False, 0), fmi2Error);
    expect("SetupExperiment stop before start", SetupExperiment(c, fmi2False, 0, 1.0, fmi2True, 0.0), fmi2Error);
    expect("SetupExperiment", SetupExperiment(c, fmi2False, 0, 0.0, fmi2False, 0), fmi2OK);
    expect("EnterInitializationMode", EnterInitializationMode(c), fmi2OK);
    expect("ExitInitializationMode", ExitInitializationMode(c), fmi2OK);
    expect("DoStep NaN", DoStep(c, 0.0 / 0.0, 1e-3, fmi2True), fmi2Error);
    expect("DoStep h < 0", DoStep(c, 0.0, -1.0, fmi2True), fmi2Error);
    expect("DoStep at another time", DoStep(c, 5.0, 1e-3, fmi2True), fmi2Error);
    expect("DoStep", DoStep(c, 0.0, 1e-3, fmi2True), fmi2OK);
    expect("GetBooleanStatus value NULL", GetBooleanStatus(c, fmi2Terminated, NULL), fmi2Error);
    expect("GetDirectionalDerivative NULL arrays", GetDirectionalDerivative(c, NULL, 1, vr, 1, r, r), fmi2Error);
    expect("GetDirectionalDerivative dvKnown NULL", GetDirectionalDerivative(c, vr, 1, vr, 1, NULL, r), fmi2Error);
    expect("GetDirectionalDerivative huge counts", GetDirectionalDerivative(c, vr, HUGE_COUNT, vr, HUGE_COUNT, r, r),
           fmi2Error);
    expect("GetDirectionalDerivative out of range", GetDirectionalDerivative(c, outside, 4, outside, 4, four, four),
           fmi2Error);
    expect("SetRealInputDerivatives", SetRealInputDerivatives(c, NULL, HUGE_COUNT, NULL, NULL), fmi2Error);
    expect("GetRealOutputDerivatives", GetRealOutputDerivatives(c, NULL, HUGE_COUNT, NULL, NULL), fmi2Error);
    /* FMU states: NULL pointers, sizes that lie, bytes that are not a state */
    expect("GetFMUstate NULL", GetFMUstate(c, NULL), fmi2Error);
    expect("SetFMUstate NULL", SetFMUstate(c, NULL), fmi2Error);
    expect("SetFMUstate never handed out", SetFMUstate(c, (fmi2FMUstate)bytes), fmi2Error);
    expect("FreeFMUstate NULL pointer", FreeFMUstate(c, NULL), fmi2Error);
    expect("FreeFMUstate of NULL (ignored)", FreeFMUstate(c, &state), fmi2OK);
    expect("SerializedFMUstateSize of NULL", SerializedFMUstateSize(c, NULL, &size), fmi2Error);
    expect("GetFMUstate", GetFMUstate(c, &state), fmi2OK);
    expect("SerializedFMUstateSize size NULL", SerializedFMUstateSize(c, state, NULL), fmi2Error);
    expect("SerializeFMUstate bytes NULL", SerializeFMUstate(c, state, NULL, 100), fmi2Error);
    expect("SerializeFMUstate size too small", SerializeFMUstate(c, state, bytes, sizeof bytes), fmi2Error);
    expect("SerializedFMUstateSize", SerializedFMUstateSize(c, state, &size), fmi2OK);
    fmi2Byte *blob = malloc(size);
    if (!blob) return 100;
    expect("SerializeFMUstate", SerializeFMUstate(c, state, blob, size), fmi2OK);
    fmi2FMUstate copy = NULL;
    expect("DeSerializeFMUstate bytes NULL", DeSerializeFMUstate(c, NULL, size, &copy), fmi2Error);
    expect("DeSerializeFMUstate state NULL", DeSerializeFMUstate(c, blob, size, NULL), fmi2Error);
    expect("DeSerializeFMUstate size 0", DeSerializeFMUstate(c, blob, 0, &copy), fmi2Error);
    for (size_t cut = 1; cut < size; cut += cut < 32 ? 1 : 17) {
        fmi2Byte *part = malloc(cut); /* exactly `cut` bytes: a read past them is ASan's to see */
        if (!part) return 100;
        memcpy(part, blob, cut);
        if (DeSerializeFMUstate(c, part, cut, &copy) != fmi2Error) expect("DeSerializeFMUstate cut", fmi2OK, fmi2Error);
        free(part);
    }
    expect("DeSerializeFMUstate", DeSerializeFMUstate(c, blob, size, &copy), fmi2OK);
    expect("SetFMUstate", SetFMUstate(c, copy), fmi2OK);
    expect("FreeFMUstate", FreeFMUstate(c, &copy), fmi2OK);
    fmi2FMUstate freed = state;
    expect("FreeFMUstate", FreeFMUstate(c, &state), fmi2OK);
    expect("SetFMUstate freed", SetFMUstate(c, freed), fmi2Error);
    expect("FreeFMUstate freed", FreeFMUstate(c, &freed), fmi2Error);
    expect("SetReal a parameter after initialization", SetReal(c, vr, 1, r), fmi2Error);
    expect("Terminate", Terminate(c), fmi2OK);
    expect("Terminate twice", Terminate(c), fmi2Error);
    expect("DoStep after Terminate", DoStep(c, 1e-3, 1e-3, fmi2True), fmi2Error);
    /* a second instance's state on the first */
    fmi2Component other = Instantiate("other", fmi2CoSimulation, guid, uri, &callbacks, fmi2False, fmi2False);
    fmi2FMUstate foreign = NULL;
    if (other && GetFMUstate(other, &foreign) == fmi2OK)
        expect("SetFMUstate of another instance", SetFMUstate(c, foreign), fmi2Error);
    FreeInstance(other);
    FreeInstance(c);
    expect("GetReal on a freed instance", GetReal(c, vr, 1, r), fmi2Error);
    expect("DoStep on a freed instance", DoStep(c, 0.0, 1e-3, fmi2True), fmi2Error);
    FreeInstance(c); /* twice: ignored */

    /* Model Exchange: NULL arrays, counts that are not the model's, huge counts */
    fmi2Component m = Instantiate("careless me", fmi2ModelExchange, guid, uri, &callbacks, fmi2False, fmi2False);
    if (m) {
        expect("ME DoStep", DoStep(m, 0.0, 1e-3, fmi2True), fmi2Error);
        expect("ME SetupExperiment", SetupExperiment(m, fmi2False, 0, 0.0, fmi2False, 0), fmi2OK);
        expect("ME EnterInitializationMode", EnterInitializationMode(m), fmi2OK);
        expect("ME ExitInitializationMode", ExitInitializationMode(m), fmi2OK);
        expect("ME NewDiscreteStates NULL", NewDiscreteStates(m, NULL), fmi2Error);
        expect("ME EnterContinuousTimeMode", EnterContinuousTimeMode(m), fmi2OK);
        expect("ME CompletedIntegratorStep NULL", CompletedIntegratorStep(m, fmi2True, NULL, &flag), fmi2Error);
        expect("ME SetTime NaN", SetTime(m, 0.0 / 0.0), fmi2Error);
        expect("ME SetContinuousStates x NULL", SetContinuousStates(m, NULL, 2), fmi2Error);
        expect("ME SetContinuousStates huge", SetContinuousStates(m, r, HUGE_COUNT), fmi2Error);
        expect("ME GetDerivatives NULL", GetDerivatives(m, NULL, 2), fmi2Error);
        expect("ME GetDerivatives huge", GetDerivatives(m, r, HUGE_COUNT), fmi2Error);
        expect("ME GetDerivatives 2^40", GetDerivatives(m, r, (size_t)1 << 40), fmi2Error);
        expect("ME GetEventIndicators huge", GetEventIndicators(m, r, HUGE_COUNT), fmi2Error);
        expect("ME GetContinuousStates huge", GetContinuousStates(m, r, HUGE_COUNT), fmi2Error);
        expect("ME GetNominals NULL", GetNominalsOfContinuousStates(m, NULL, 1), fmi2Error);
        expect("ME GetDirectionalDerivative out of range",
               GetDirectionalDerivative(m, outside, 4, outside, 4, four, four), fmi2Error);
        FreeInstance(m);
    }
    free(blob);
    dlclose(library);
    printf("violations %d\n", violations);
    return violations;
}
