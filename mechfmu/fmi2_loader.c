/*
 * mechfmu FMU binary: makes an FMU built with pythonfmu load in any FMI 2.0 host on Linux.
 *
 * pythonfmu 0.7.0's binary leaves every Python C-API symbol undefined and expects the host process
 * to provide them, so a C/C++ host (OMSimulator, the FMI compliance checker, ...) cannot load it,
 * and loading libpython next to it is not enough when the host opens the FMU with RTLD_LOCAL (the
 * interpreter's own extension modules then miss its symbols). This library is the FMU's
 * binaries/linux64/<modelIdentifier>.so. On the first fmi2Instantiate it
 *   1. uses the Python runtime already in the process if its symbols are global (a Python host,
 *      also one whose interpreter is linked statically, e.g. Debian's python3): no second
 *      interpreter is ever loaded;
 *   2. else promotes an already loaded libpython<VERSION> to the global scope, or loads it
 *      (the build machine's library first, then the soname through the normal library search path)
 *      with RTLD_GLOBAL;
 *   3. opens pythonfmu's binary (<modelIdentifier>.pythonfmu.so beside this file) with RTLD_LOCAL
 *      and forwards every fmi2 call to it.
 *
 * Errors reach every importer: the inner binary is instantiated with logging on and this layer
 * forwards its warnings and errors always (info messages only when the host enabled debug logging),
 * and a call during which the component logged an error returns fmi2Error (a warning: fmi2Warning)
 * unless the inner call itself already returned a worse status (e.g. fmi2Discard of a refused step).
 *
 * Configuration (compiler -D, set by mechfmu.build): MECHFMU_PYTHON_VERSION ("3.11"),
 * MECHFMU_LIBPYTHON_PATH (the build machine's libpython, may be ""), MECHFMU_LIBPYTHON_SONAME.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"

#ifndef MECHFMU_PYTHON_VERSION
#error "MECHFMU_PYTHON_VERSION must be defined"
#endif
#ifndef MECHFMU_LIBPYTHON_PATH
#define MECHFMU_LIBPYTHON_PATH ""
#endif
#ifndef MECHFMU_LIBPYTHON_SONAME
#error "MECHFMU_LIBPYTHON_SONAME must be defined"
#endif

#define INNER_SUFFIX ".pythonfmu.so"
#define PATH_SIZE 4096
#define MESSAGE_SIZE (3 * PATH_SIZE)

/* --- the inner (pythonfmu) binary --------------------------------------------------------- */

static struct {
    fmi2SetDebugLoggingTYPE *SetDebugLogging;
    fmi2InstantiateTYPE *Instantiate;
    fmi2FreeInstanceTYPE *FreeInstance;
    fmi2SetupExperimentTYPE *SetupExperiment;
    fmi2EnterInitializationModeTYPE *EnterInitializationMode;
    fmi2ExitInitializationModeTYPE *ExitInitializationMode;
    fmi2TerminateTYPE *Terminate;
    fmi2ResetTYPE *Reset;
    fmi2GetRealTYPE *GetReal;
    fmi2GetIntegerTYPE *GetInteger;
    fmi2GetBooleanTYPE *GetBoolean;
    fmi2GetStringTYPE *GetString;
    fmi2SetRealTYPE *SetReal;
    fmi2SetIntegerTYPE *SetInteger;
    fmi2SetBooleanTYPE *SetBoolean;
    fmi2SetStringTYPE *SetString;
    fmi2GetFMUstateTYPE *GetFMUstate;
    fmi2SetFMUstateTYPE *SetFMUstate;
    fmi2FreeFMUstateTYPE *FreeFMUstate;
    fmi2SerializedFMUstateSizeTYPE *SerializedFMUstateSize;
    fmi2SerializeFMUstateTYPE *SerializeFMUstate;
    fmi2DeSerializeFMUstateTYPE *DeSerializeFMUstate;
    fmi2GetDirectionalDerivativeTYPE *GetDirectionalDerivative;
    fmi2SetRealInputDerivativesTYPE *SetRealInputDerivatives;
    fmi2GetRealOutputDerivativesTYPE *GetRealOutputDerivatives;
    fmi2DoStepTYPE *DoStep;
    fmi2CancelStepTYPE *CancelStep;
    fmi2GetStatusTYPE *GetStatus;
    fmi2GetRealStatusTYPE *GetRealStatus;
    fmi2GetIntegerStatusTYPE *GetIntegerStatus;
    fmi2GetBooleanStatusTYPE *GetBooleanStatus;
    fmi2GetStringStatusTYPE *GetStringStatus;
} inner;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[MESSAGE_SIZE];  /* empty when loading succeeded */
static char python_note[MESSAGE_SIZE]; /* a warning for every instance (e.g. another Python version) */

static int version_matches(const char *version) {
    size_t n = strlen(MECHFMU_PYTHON_VERSION);
    return strncmp(version, MECHFMU_PYTHON_VERSION, n) == 0 && (version[n] < '0' || version[n] > '9');
}

/* Make the Python C API global in this process; 0 on success, else load_error says why. */
static int ensure_python(void) {
    const char *(*get_version)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "Py_GetVersion");
    if (get_version) { /* a Python host: use its interpreter, never load a second one */
        const char *version = get_version();
        if (!version_matches(version))
            snprintf(python_note, sizeof python_note,
                     "this FMU was built for Python %s; the host process runs Python %.20s "
                     "(it runs if that Python can execute the FMU's standard-library-only code)",
                     MECHFMU_PYTHON_VERSION, version);
        return 0;
    }
    const char *candidates[] = {MECHFMU_LIBPYTHON_PATH, MECHFMU_LIBPYTHON_SONAME};
    char tried[PATH_SIZE] = "";
    for (int load = 0; load < 2; ++load) { /* first promote a library already loaded locally */
        for (size_t i = 0; i < sizeof candidates / sizeof *candidates; ++i) {
            if (!candidates[i][0]) continue;
            void *handle = dlopen(candidates[i], RTLD_NOW | RTLD_GLOBAL | (load ? 0 : RTLD_NOLOAD));
            if (handle) return 0; /* kept open for the life of the process */
            if (load) {
                size_t used = strlen(tried);
                snprintf(tried + used, sizeof tried - used, "%s%s", used ? "; " : "", dlerror());
            }
        }
    }
    snprintf(load_error, sizeof load_error,
             "no Python %s runtime: this FMU runs its model in Python %s and needs its shared library "
             "(%s, e.g. Debian's libpython%s package or any Python %s built with --enable-shared; "
             "a library outside the default search path can be named in LD_LIBRARY_PATH). Tried: %s",
             MECHFMU_PYTHON_VERSION, MECHFMU_PYTHON_VERSION, MECHFMU_LIBPYTHON_SONAME,
             MECHFMU_PYTHON_VERSION, MECHFMU_PYTHON_VERSION, tried);
    return -1;
}

static void load_inner(void) {
    if (ensure_python() != 0) return;
    Dl_info info;
    if (!dladdr((void *)&load_inner, &info) || !info.dli_fname) {
        snprintf(load_error, sizeof load_error, "cannot locate this FMU binary (dladdr failed)");
        return;
    }
    char path[PATH_SIZE];
    const char *self = info.dli_fname;
    size_t n = strlen(self);
    if (n > 3 && strcmp(self + n - 3, ".so") == 0) n -= 3;
    if (n + sizeof INNER_SUFFIX > sizeof path) {
        snprintf(load_error, sizeof load_error, "FMU path too long: %s", self);
        return;
    }
    memcpy(path, self, n);
    memcpy(path + n, INNER_SUFFIX, sizeof INNER_SUFFIX);
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(load_error, sizeof load_error, "cannot load the model binary %s: %s", path, dlerror());
        return;
    }
#define RESOLVE(name)                                                                                \
    if (!(*(void **)&inner.name = dlsym(handle, "fmi2" #name))) {                                    \
        snprintf(load_error, sizeof load_error, "%s does not export fmi2" #name, path);              \
        return;                                                                                      \
    }
    RESOLVE(SetDebugLogging) RESOLVE(Instantiate) RESOLVE(FreeInstance) RESOLVE(SetupExperiment)
    RESOLVE(EnterInitializationMode) RESOLVE(ExitInitializationMode) RESOLVE(Terminate) RESOLVE(Reset)
    RESOLVE(GetReal) RESOLVE(GetInteger) RESOLVE(GetBoolean) RESOLVE(GetString)
    RESOLVE(SetReal) RESOLVE(SetInteger) RESOLVE(SetBoolean) RESOLVE(SetString)
    RESOLVE(GetFMUstate) RESOLVE(SetFMUstate) RESOLVE(FreeFMUstate) RESOLVE(SerializedFMUstateSize)
    RESOLVE(SerializeFMUstate) RESOLVE(DeSerializeFMUstate) RESOLVE(GetDirectionalDerivative)
    RESOLVE(SetRealInputDerivatives) RESOLVE(GetRealOutputDerivatives) RESOLVE(DoStep) RESOLVE(CancelStep)
    RESOLVE(GetStatus) RESOLVE(GetRealStatus) RESOLVE(GetIntegerStatus) RESOLVE(GetBooleanStatus)
    RESOLVE(GetStringStatus)
#undef RESOLVE
}

/* --- instances ------------------------------------------------------------------------------ */

typedef struct {
    fmi2Component inner;
    fmi2CallbackFunctions host;  /* the host's callbacks */
    fmi2CallbackFunctions own;   /* what the inner binary gets: our logger, the host's memory */
    fmi2Boolean debug_logging;   /* the host's wish for info messages */
    size_t n_categories;
    char **categories;           /* NULL = every category */
    fmi2Status logged;           /* worst status logged during the current call */
    char *name;
} Instance;

static void *allocate(const fmi2CallbackFunctions *cb, size_t n, size_t size) {
    return cb && cb->allocateMemory ? cb->allocateMemory(n, size) : calloc(n, size);
}

static void release(const fmi2CallbackFunctions *cb, void *p) {
    if (!p) return;
    if (cb && cb->freeMemory) cb->freeMemory(p);
    else free(p);
}

static char *copy_string(const fmi2CallbackFunctions *cb, const char *text) {
    size_t n = strlen(text ? text : "") + 1;
    char *copy = allocate(cb, n, 1);
    if (copy) memcpy(copy, text ? text : "", n);
    return copy;
}

static int category_enabled(const Instance *w, fmi2String category) {
    if (!w->debug_logging) return 0;
    if (!w->categories) return 1;
    for (size_t i = 0; i < w->n_categories; ++i)
        if (strcmp(w->categories[i], "logAll") == 0 || (category && strcmp(w->categories[i], category) == 0))
            return 1;
    return 0;
}

/* Pass a message to the host with '%' escaped: an FMI logger's message is a format string. */
static void host_log(const Instance *w, fmi2String instance, fmi2Status status, fmi2String category,
                     const char *text) {
    if (!w->host.logger) return;
    size_t n = strlen(text), percents = 0;
    for (size_t i = 0; i < n; ++i) percents += text[i] == '%';
    char *escaped = malloc(n + percents + 1);
    if (!escaped) return;
    char *out = escaped;
    for (size_t i = 0; i < n; ++i) {
        *out++ = text[i];
        if (text[i] == '%') *out++ = '%';
    }
    *out = '\0';
    w->host.logger(w->host.componentEnvironment, instance, status, category, escaped);
    free(escaped);
}

static void forward_log(fmi2ComponentEnvironment env, fmi2String instance, fmi2Status status,
                        fmi2String category, fmi2String message, ...) {
    Instance *w = (Instance *)env;
    if (status > w->logged) w->logged = status;
    if (status == fmi2OK && !category_enabled(w, category)) return;
    /* pythonfmu passes its (Python-formatted) text as the format with no arguments: take it literally */
    host_log(w, instance, status, category, message ? message : "");
}

/* The status a call returns: the inner status, raised to the worst status logged during the call. */
static fmi2Status combine(fmi2Status returned, fmi2Status logged) {
    if (returned > fmi2Warning) return returned;
    if (logged >= fmi2Error) return fmi2Error;
    if (logged == fmi2Warning) return fmi2Warning;
    return returned;
}

#define FORWARD(call)                                                                                \
    do {                                                                                             \
        Instance *w = (Instance *)c;                                                                 \
        if (!w) return fmi2Error;                                                                    \
        w->logged = fmi2OK;                                                                          \
        fmi2Status status = inner.call;                                                              \
        return combine(status, w->logged);                                                           \
    } while (0)

/* --- the fmi2 API --------------------------------------------------------------------------- */

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }

const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String fmuResourceLocation, const fmi2CallbackFunctions *functions,
                              fmi2Boolean visible, fmi2Boolean loggingOn) {
    pthread_once(&load_once, load_inner);
    if (load_error[0]) {
        if (functions && functions->logger)
            functions->logger(functions->componentEnvironment, instanceName, fmi2Fatal, "logStatusFatal", "%s",
                              load_error);
        return NULL;
    }
    Instance *w = allocate(functions, 1, sizeof *w);
    if (!w) return NULL;
    memset(w, 0, sizeof *w);
    if (functions) w->host = *functions;
    w->own = w->host;
    w->own.logger = forward_log;
    w->own.componentEnvironment = w;
    w->debug_logging = loggingOn;
    w->name = copy_string(functions, instanceName);
    if (python_note[0]) host_log(w, instanceName, fmi2Warning, "logStatusWarning", python_note);
    /* logging always on inside: errors must reach the host whatever loggingOn says */
    w->inner = inner.Instantiate(instanceName, fmuType, fmuGUID, fmuResourceLocation, &w->own, visible, fmi2True);
    if (!w->inner) {
        release(functions, w->name);
        release(functions, w);
        return NULL;
    }
    return w;
}

static void free_categories(Instance *w) {
    for (size_t i = 0; i < w->n_categories; ++i) release(&w->host, w->categories[i]);
    release(&w->host, w->categories);
    w->categories = NULL;
    w->n_categories = 0;
}

void fmi2FreeInstance(fmi2Component c) {
    Instance *w = (Instance *)c;
    if (!w) return;
    inner.FreeInstance(w->inner);
    free_categories(w);
    fmi2CallbackFunctions host = w->host;
    release(&host, w->name);
    release(&host, w);
}

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
                               const fmi2String categories[]) {
    Instance *w = (Instance *)c;
    if (!w) return fmi2Error;
    w->debug_logging = loggingOn;
    free_categories(w);
    if (loggingOn && nCategories > 0 && categories) {
        w->categories = allocate(&w->host, nCategories, sizeof *w->categories);
        if (!w->categories) return fmi2Error;
        for (size_t i = 0; i < nCategories; ++i) w->categories[i] = copy_string(&w->host, categories[i]);
        w->n_categories = nCategories;
    }
    return fmi2OK;
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                               fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime) {
    FORWARD(SetupExperiment(w->inner, toleranceDefined, tolerance, startTime, stopTimeDefined, stopTime));
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c) { FORWARD(EnterInitializationMode(w->inner)); }
fmi2Status fmi2ExitInitializationMode(fmi2Component c) { FORWARD(ExitInitializationMode(w->inner)); }
fmi2Status fmi2Terminate(fmi2Component c) { FORWARD(Terminate(w->inner)); }
fmi2Status fmi2Reset(fmi2Component c) { FORWARD(Reset(w->inner)); }

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Real value[]) {
    FORWARD(GetReal(w->inner, vr, nvr, value));
}
fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Integer value[]) {
    FORWARD(GetInteger(w->inner, vr, nvr, value));
}
fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Boolean value[]) {
    FORWARD(GetBoolean(w->inner, vr, nvr, value));
}
fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2String value[]) {
    FORWARD(GetString(w->inner, vr, nvr, value));
}
fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Real value[]) {
    FORWARD(SetReal(w->inner, vr, nvr, value));
}
fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Integer value[]) {
    FORWARD(SetInteger(w->inner, vr, nvr, value));
}
fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Boolean value[]) {
    FORWARD(SetBoolean(w->inner, vr, nvr, value));
}
fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2String value[]) {
    FORWARD(SetString(w->inner, vr, nvr, value));
}

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *state) { FORWARD(GetFMUstate(w->inner, state)); }
fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate state) { FORWARD(SetFMUstate(w->inner, state)); }
fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *state) { FORWARD(FreeFMUstate(w->inner, state)); }
fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate state, size_t *size) {
    FORWARD(SerializedFMUstateSize(w->inner, state, size));
}
fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate state, fmi2Byte bytes[], size_t size) {
    FORWARD(SerializeFMUstate(w->inner, state, bytes, size));
}
fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte bytes[], size_t size, fmi2FMUstate *state) {
    FORWARD(DeSerializeFMUstate(w->inner, bytes, size, state));
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vUnknown[], size_t nUnknown,
                                        const fmi2ValueReference vKnown[], size_t nKnown, const fmi2Real dvKnown[],
                                        fmi2Real dvUnknown[]) {
    FORWARD(GetDirectionalDerivative(w->inner, vUnknown, nUnknown, vKnown, nKnown, dvKnown, dvUnknown));
}

fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                       const fmi2Integer order[], const fmi2Real value[]) {
    FORWARD(SetRealInputDerivatives(w->inner, vr, nvr, order, value));
}
fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                        const fmi2Integer order[], fmi2Real value[]) {
    FORWARD(GetRealOutputDerivatives(w->inner, vr, nvr, order, value));
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real currentCommunicationPoint, fmi2Real communicationStepSize,
                      fmi2Boolean noSetFMUStatePriorToCurrentPoint) {
    FORWARD(DoStep(w->inner, currentCommunicationPoint, communicationStepSize, noSetFMUStatePriorToCurrentPoint));
}
fmi2Status fmi2CancelStep(fmi2Component c) { FORWARD(CancelStep(w->inner)); }

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *value) {
    FORWARD(GetStatus(w->inner, s, value));
}
fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *value) {
    FORWARD(GetRealStatus(w->inner, s, value));
}
fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *value) {
    FORWARD(GetIntegerStatus(w->inner, s, value));
}
fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value) {
    FORWARD(GetBooleanStatus(w->inner, s, value));
}
fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *value) {
    FORWARD(GetStringStatus(w->inner, s, value));
}
