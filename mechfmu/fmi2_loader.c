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
 * No call sequence reaches pythonfmu's crashing paths. Each instance keeps its FMI 2.0 co-simulation
 * state (instantiated, initialization mode, step complete, step failed, terminated, error, fatal) and
 * every call is checked against the state table of FMI 2.0 section 4.2.4 (two relaxations: fmi2Terminate
 * is also accepted before initialization ended and in the error state, as a cleanup call; the fmi2Get
 * functions also in the instantiated state, where they read the start values). A refused
 * call logs an error naming the function and the reason (the current state, a NULL pointer, an unknown
 * FMU state, ...) and returns fmi2Error without calling into Python, the state unchanged; so does a call
 * whose value the component refused (it checks before it changes anything: see components/fmi.py).
 * An inner fmi2Error (a C++ exception in pythonfmu) enters the error state; an inner fmi2Fatal (an
 * exception escaped into pythonfmu, which then releases the instance's Python objects) makes the
 * instance fatal: every later call but fmi2FreeInstance is refused, and fmi2FreeInstance does not
 * call pythonfmu's destructor (it would release them again). Handles are checked: an instance or an FMU
 * state that this FMU did not hand out, or already freed, is refused, so a double free is harmless.
 * FMU states are wrapped (the FMI state they were taken in, restored by fmi2SetFMUstate); a serialized
 * state starts with a header (magic, FMI state) and its body is checked completely by the component
 * before fmi2DeSerializeFMUstate returns it. States not freed by the host are freed with the instance.
 * Not supported, refused with fmi2Error: directional and input/output derivatives, fmi2CancelStep (no
 * asynchronous steps); status queries return fmi2Discard (fmi2Terminated: false).
 *
 * Configuration (compiler -D, set by mechfmu.build): MECHFMU_PYTHON_VERSION ("3.11"),
 * MECHFMU_LIBPYTHON_PATH (the build machine's libpython, may be ""), MECHFMU_LIBPYTHON_SONAME.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
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

/* --- instances and their FMI 2.0 co-simulation state ------------------------------------------ */

/* The states of FMI 2.0 section 4.2.4 that this FMU can reach (no asynchronous steps: never
 * stepInProgress or stepCanceled, so fmi2CancelStep is never legal). */
enum {
    INSTANTIATED = 1, INITIALIZATION_MODE = 2, STEP_COMPLETE = 4, STEP_FAILED = 8, TERMINATED = 16, ERROR = 32,
    FATAL = 64
};
#define LIVE (INSTANTIATED | INITIALIZATION_MODE | STEP_COMPLETE | STEP_FAILED | TERMINATED | ERROR)

static const char *state_name(int state) {
    switch (state) {
    case INSTANTIATED: return "instantiated";
    case INITIALIZATION_MODE: return "initialization mode";
    case STEP_COMPLETE: return "step complete";
    case STEP_FAILED: return "step failed";
    case TERMINATED: return "terminated";
    case ERROR: return "error";
    default: return "fatal";
    }
}

/* An FMU state handed to the host: pythonfmu's state (a Python object) and the FMI state it was taken in. */
typedef struct Saved {
    fmi2FMUstate inner;
    int state;
    size_t inner_size; /* its serialized size once known (states never change), else 0 */
    struct Saved *next;
} Saved;

typedef struct Instance {
    fmi2Component inner;
    fmi2CallbackFunctions host;  /* the host's callbacks */
    fmi2CallbackFunctions own;   /* what the inner binary gets: our logger, the host's memory */
    fmi2Boolean debug_logging;   /* the host's wish for info messages */
    size_t n_categories;
    char **categories;           /* NULL = every category */
    fmi2Status logged;           /* worst status logged during the current call */
    char *name;
    int state;                   /* one of the states above */
    Saved *saved;                /* the FMU states handed out and not freed */
    struct Instance *next;       /* every live instance of this process (calls on others are refused) */
} Instance;

static pthread_mutex_t instances_lock = PTHREAD_MUTEX_INITIALIZER;
static Instance *instances;

/* The instance behind a host's handle, or NULL for a handle that is not (or no more) a live instance. */
static Instance *lookup(fmi2Component c) {
    pthread_mutex_lock(&instances_lock);
    Instance *w = instances;
    while (w && w != (Instance *)c) w = w->next;
    pthread_mutex_unlock(&instances_lock);
    return w;
}

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

/* Refuse a call: log why (naming the function) and return fmi2Error; the instance's state is unchanged. */
static fmi2Status refuse(const Instance *w, const char *function, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static fmi2Status refuse(const Instance *w, const char *function, const char *format, ...) {
    char text[MESSAGE_SIZE];
    int n = snprintf(text, sizeof text, "%s: ", function);
    va_list args;
    va_start(args, format);
    vsnprintf(text + n, sizeof text - n, format, args);
    va_end(args);
    host_log(w, w->name, fmi2Error, "logStatusError", text);
    return fmi2Error;
}

static void forward_log(fmi2ComponentEnvironment env, fmi2String instance, fmi2Status status,
                        fmi2String category, fmi2String message, ...) {
    Instance *w = (Instance *)env;
    if (status > w->logged) w->logged = status;
    if (status == fmi2OK && !category_enabled(w, category)) return;
    /* pythonfmu passes its (Python-formatted) text as the format with no arguments: take it literally */
    host_log(w, instance, status, category, message ? message : "");
}

/* The status of a forwarded call, and the state it leaves: an inner fmi2Fatal (or a logged fatal: an
 * exception escaped into pythonfmu, which then has released its Python objects) makes the instance
 * fatal for good; an inner fmi2Error (a C++ exception in pythonfmu) puts it in the error state. An error
 * the component logged is a refusal: the component checks before it changes anything, so the call
 * returns fmi2Error and the state stays (a warning: fmi2Warning). Otherwise the state becomes `next`. */
static fmi2Status finish(Instance *w, fmi2Status returned, int next) {
    if (returned == fmi2Fatal || w->logged == fmi2Fatal) {
        w->state = FATAL;
        return fmi2Fatal;
    }
    if (returned == fmi2Error) {
        w->state = ERROR;
        return fmi2Error;
    }
    if (returned == fmi2Discard) return fmi2Discard;
    if (w->logged >= fmi2Error) return fmi2Error;
    if (next) w->state = next;
    return w->logged == fmi2Warning ? fmi2Warning : returned;
}

/* Every entry point starts here: a live instance in one of the `allowed` states, else fmi2Error. */
#define ENTER(function, allowed)                                                                     \
    Instance *w = lookup(c);                                                                         \
    if (!w) return fmi2Error; /* not an instance of this FMU (e.g. freed): nowhere to log */        \
    if (!(w->state & (allowed)))                                                                     \
        return refuse(w, function, "not allowed in state %s%s", state_name(w->state),               \
                      w->state == FATAL ? " (after a fatal error only fmi2FreeInstance is allowed)" : ""); \
    w->logged = fmi2OK

#define NEED(condition, function, ...)                                                               \
    if (!(condition)) return refuse(w, function, __VA_ARGS__)

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
    if (fmuType != fmi2CoSimulation || !instanceName || !fmuGUID || !fmuResourceLocation) {
        refuse(w, "fmi2Instantiate", "%s", fmuType != fmi2CoSimulation
               ? "this FMU supports co-simulation only" : "instanceName, fmuGUID and fmuResourceLocation are required");
        release(functions, w->name);
        release(functions, w);
        return NULL;
    }
    if (python_note[0]) host_log(w, instanceName, fmi2Warning, "logStatusWarning", python_note);
    /* logging always on inside: errors must reach the host whatever loggingOn says */
    w->inner = inner.Instantiate(instanceName, fmuType, fmuGUID, fmuResourceLocation, &w->own, visible, fmi2True);
    if (!w->inner) {
        release(functions, w->name);
        release(functions, w);
        return NULL;
    }
    w->state = INSTANTIATED;
    pthread_mutex_lock(&instances_lock);
    w->next = instances;
    instances = w;
    pthread_mutex_unlock(&instances_lock);
    return w;
}

static void free_categories(Instance *w) {
    for (size_t i = 0; i < w->n_categories; ++i) release(&w->host, w->categories[i]);
    release(&w->host, w->categories);
    w->categories = NULL;
    w->n_categories = 0;
}

void fmi2FreeInstance(fmi2Component c) {
    Instance *w = lookup(c);
    if (!w) return; /* NULL, freed twice or not ours: nothing to do */
    pthread_mutex_lock(&instances_lock);
    Instance **link = &instances;
    while (*link != w) link = &(*link)->next;
    *link = w->next;
    pthread_mutex_unlock(&instances_lock);
    while (w->saved) { /* states the host did not free belong to the instance */
        Saved *s = w->saved;
        w->saved = s->next;
        inner.FreeFMUstate(w->inner, &s->inner); /* only drops pythonfmu's reference to a Python object */
        release(&w->host, s);
    }
    /* After a fatal error pythonfmu has already released the Python objects of this instance, and its
     * own destructor would release them again and crash the host: the inner instance is deliberately
     * leaked (a few hundred bytes, once per fatal instance). */
    if (w->state != FATAL) inner.FreeInstance(w->inner);
    free_categories(w);
    fmi2CallbackFunctions host = w->host;
    release(&host, w->name);
    release(&host, w);
}

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
                               const fmi2String categories[]) {
    ENTER("fmi2SetDebugLogging", LIVE);
    NEED(nCategories == 0 || categories, "fmi2SetDebugLogging", "categories is NULL with nCategories = %zu",
         nCategories);
    for (size_t i = 0; i < nCategories; ++i)
        NEED(categories[i], "fmi2SetDebugLogging", "categories[%zu] is NULL", i);
    w->debug_logging = loggingOn;
    free_categories(w);
    if (loggingOn && nCategories > 0) {
        w->categories = allocate(&w->host, nCategories, sizeof *w->categories);
        if (!w->categories) return fmi2Error;
        for (size_t i = 0; i < nCategories; ++i) w->categories[i] = copy_string(&w->host, categories[i]);
        w->n_categories = nCategories;
    }
    return fmi2OK;
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                               fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime) {
    ENTER("fmi2SetupExperiment", INSTANTIATED);
    NEED(startTime == startTime && startTime - startTime == 0, "fmi2SetupExperiment",
         "startTime = %g must be finite", startTime);
    NEED(!stopTimeDefined || stopTime >= startTime, "fmi2SetupExperiment", "stopTime = %g is before startTime = %g",
         stopTime, startTime);
    return finish(w, inner.SetupExperiment(w->inner, toleranceDefined, tolerance, startTime, stopTimeDefined,
                                           stopTime), 0);
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c) {
    ENTER("fmi2EnterInitializationMode", INSTANTIATED);
    return finish(w, inner.EnterInitializationMode(w->inner), INITIALIZATION_MODE);
}

/* An error logged here (a parameter rule) keeps initialization mode: the host may correct and retry. */
fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
    ENTER("fmi2ExitInitializationMode", INITIALIZATION_MODE);
    return finish(w, inner.ExitInitializationMode(w->inner), STEP_COMPLETE);
}

/* FMI 2.0 allows fmi2Terminate after a step only; it is also accepted before initialization ended and
 * in the error state, where hosts (our master among them) call it while cleaning up: nothing to undo. */
fmi2Status fmi2Terminate(fmi2Component c) {
    ENTER("fmi2Terminate", INSTANTIATED | INITIALIZATION_MODE | STEP_COMPLETE | STEP_FAILED | ERROR);
    return finish(w, inner.Terminate(w->inner), TERMINATED);
}

fmi2Status fmi2Reset(fmi2Component c) {
    ENTER("fmi2Reset", LIVE);
    return finish(w, inner.Reset(w->inner), INSTANTIATED);
}

/* FMI 2.0 allows the fmi2Get functions from initialization mode on; reading in the instantiated state is harmless
 * (the values are the start values) and our master reads parameters there: also accepted */
#define GETTABLE (INSTANTIATED | INITIALIZATION_MODE | STEP_COMPLETE | STEP_FAILED | TERMINATED | ERROR)
#define SETTABLE (INSTANTIATED | INITIALIZATION_MODE | STEP_COMPLETE)
#define ARRAYS(function)                                                                             \
    NEED(nvr == 0 || (vr && value), function, "%s is NULL with nvr = %zu", vr ? "value" : "vr", nvr); \
    if (nvr == 0) return fmi2OK

/* fmi2GetX / fmi2SetX for the types without extra checks (fmi2SetString validates its text below) */
#define ACCESS(name, allowed, type)                                                                  \
    fmi2Status fmi2##name(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, type value[]) { \
        ENTER("fmi2" #name, allowed);                                                                \
        ARRAYS("fmi2" #name);                                                                        \
        return finish(w, inner.name(w->inner, vr, nvr, value), 0);                                   \
    }
ACCESS(GetReal, GETTABLE, fmi2Real)
ACCESS(GetInteger, GETTABLE, fmi2Integer)
ACCESS(GetBoolean, GETTABLE, fmi2Boolean)
ACCESS(GetString, GETTABLE, fmi2String)
ACCESS(SetReal, SETTABLE, const fmi2Real)
ACCESS(SetInteger, SETTABLE, const fmi2Integer)
ACCESS(SetBoolean, SETTABLE, const fmi2Boolean)
#undef ACCESS

/* Valid UTF-8 (Python decodes the text; an invalid byte sequence would reach pythonfmu as a NULL object). */
static int utf8_valid(const unsigned char *s) {
    while (*s) {
        int n = *s < 0x80 ? 0 : (*s >> 5) == 6 ? 1 : (*s >> 4) == 14 ? 2 : (*s >> 3) == 30 ? 3 : -1;
        if (n < 0) return 0;
        ++s;
        while (n-- > 0)
            if ((*s++ & 0xC0) != 0x80) return 0;
    }
    return 1;
}

fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2String value[]) {
    ENTER("fmi2SetString", SETTABLE);
    ARRAYS("fmi2SetString");
    for (size_t i = 0; i < nvr; ++i) {
        NEED(value[i], "fmi2SetString", "value[%zu] (valueReference %u) is NULL", i, vr[i]);
        NEED(utf8_valid((const unsigned char *)value[i]), "fmi2SetString",
             "value[%zu] (valueReference %u) is not valid UTF-8", i, vr[i]);
    }
    return finish(w, inner.SetString(w->inner, vr, nvr, value), 0);
}

/* --- FMU states: only states handed out by this instance are accepted ------------------------- */

/* A serialized state: this header, then pythonfmu's bytes (the component's JSON). */
#define STATE_MAGIC "mechfmu\x01"
#define HEADER_SIZE (sizeof STATE_MAGIC - 1 + 1) /* magic, FMI state */

static Saved *find_saved(const Instance *w, fmi2FMUstate state) {
    Saved *s = w->saved;
    while (s && s != (Saved *)state) s = s->next;
    return s;
}

#define KNOWN_STATE(function, state)                                                                 \
    Saved *saved = find_saved(w, state);                                                             \
    NEED(saved, function, "%s is not an FMU state of this instance (never handed out, or already freed)", \
         state ? "the FMUstate" : "FMUstate NULL")

static fmi2Status track(Instance *w, fmi2FMUstate inner_state, int state, fmi2FMUstate *out) {
    Saved *s = allocate(&w->host, 1, sizeof *s);
    if (!s) {
        inner.FreeFMUstate(w->inner, &inner_state);
        return refuse(w, "fmi2GetFMUstate", "out of memory");
    }
    s->inner = inner_state;
    s->state = state;
    s->inner_size = 0;
    s->next = w->saved;
    w->saved = s;
    *out = s;
    return fmi2OK;
}

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *state) {
    ENTER("fmi2GetFMUstate", LIVE);
    NEED(state, "fmi2GetFMUstate", "FMUstate* is NULL");
    fmi2FMUstate fresh = NULL;
    fmi2Status status = finish(w, inner.GetFMUstate(w->inner, &fresh), 0);
    if (status > fmi2Warning || !fresh) return status > fmi2Warning ? status : refuse(w, "fmi2GetFMUstate", "no state");
    Saved *old = *state ? find_saved(w, *state) : NULL;
    if (old) { /* FMI: *state is a state of ours to be overwritten */
        inner.FreeFMUstate(w->inner, &old->inner);
        old->inner = fresh;
        old->state = w->state;
        old->inner_size = 0;
        return status;
    }
    fmi2Status tracked = track(w, fresh, w->state, state);
    return tracked > status ? tracked : status;
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate state) {
    ENTER("fmi2SetFMUstate", LIVE);
    KNOWN_STATE("fmi2SetFMUstate", state);
    return finish(w, inner.SetFMUstate(w->inner, saved->inner), saved->state);
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *state) {
    ENTER("fmi2FreeFMUstate", LIVE);
    NEED(state, "fmi2FreeFMUstate", "FMUstate* is NULL");
    if (!*state) return fmi2OK; /* FMI: a NULL state is ignored */
    KNOWN_STATE("fmi2FreeFMUstate", *state);
    Saved **link = &w->saved;
    while (*link != saved) link = &(*link)->next;
    *link = saved->next;
    fmi2Status status = finish(w, inner.FreeFMUstate(w->inner, &saved->inner), 0);
    release(&w->host, saved);
    *state = NULL;
    return status;
}

static fmi2Status inner_size(Instance *w, Saved *saved) {
    if (saved->inner_size) return fmi2OK;
    size_t size = 0;
    fmi2Status status = finish(w, inner.SerializedFMUstateSize(w->inner, saved->inner, &size), 0);
    if (status <= fmi2Warning) saved->inner_size = size;
    return status;
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate state, size_t *size) {
    ENTER("fmi2SerializedFMUstateSize", LIVE);
    KNOWN_STATE("fmi2SerializedFMUstateSize", state);
    NEED(size, "fmi2SerializedFMUstateSize", "size is NULL");
    fmi2Status status = inner_size(w, saved);
    if (status <= fmi2Warning) *size = HEADER_SIZE + saved->inner_size;
    return status;
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate state, fmi2Byte bytes[], size_t size) {
    ENTER("fmi2SerializeFMUstate", LIVE);
    KNOWN_STATE("fmi2SerializeFMUstate", state);
    NEED(bytes, "fmi2SerializeFMUstate", "serializedState is NULL");
    fmi2Status status = inner_size(w, saved);
    if (status > fmi2Warning) return status;
    NEED(size == HEADER_SIZE + saved->inner_size, "fmi2SerializeFMUstate",
         "size = %zu, but fmi2SerializedFMUstateSize gives %zu", size, HEADER_SIZE + saved->inner_size);
    memcpy(bytes, STATE_MAGIC, HEADER_SIZE - 1);
    bytes[HEADER_SIZE - 1] = (fmi2Byte)saved->state;
    return finish(w, inner.SerializeFMUstate(w->inner, saved->inner, bytes + HEADER_SIZE, saved->inner_size), 0);
}

/* The blob is checked here (header) and completely by the component (components/fmi.py), which hands
 * back a rejection, not a state, for a blob it does not accept: its serialization is a NUL byte and
 * the reason. Nothing touches the instance until fmi2SetFMUstate of an accepted state. */
fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte bytes[], size_t size, fmi2FMUstate *state) {
    ENTER("fmi2DeSerializeFMUstate", LIVE);
    NEED(bytes && state, "fmi2DeSerializeFMUstate", "%s is NULL", bytes ? "FMUstate*" : "serializedState");
    int kind = size >= HEADER_SIZE ? (unsigned char)bytes[HEADER_SIZE - 1] : 0;
    NEED(size > HEADER_SIZE && memcmp(bytes, STATE_MAGIC, HEADER_SIZE - 1) == 0, "fmi2DeSerializeFMUstate",
         "the %zu bytes are not a serialized state of this FMU (no mechfmu state header)", size);
    NEED(kind & LIVE && !(kind & (kind - 1)), "fmi2DeSerializeFMUstate", "the state header names no FMI state (%d)",
         kind);
    fmi2FMUstate fresh = NULL;
    fmi2Status status = finish(w, inner.DeSerializeFMUstate(w->inner, bytes + HEADER_SIZE, size - HEADER_SIZE,
                                                            &fresh), 0);
    if (status > fmi2Warning) return status;
    if (!fresh) return refuse(w, "fmi2DeSerializeFMUstate", "no state");
    size_t n = 0;
    status = finish(w, inner.SerializedFMUstateSize(w->inner, fresh, &n), 0);
    char *check = status <= fmi2Warning && n ? malloc(n + 1) : NULL;
    if (check) status = finish(w, inner.SerializeFMUstate(w->inner, fresh, check, n), 0);
    if (status > fmi2Warning || !check || check[0] == '\0') {
        if (check && status <= fmi2Warning) check[n] = '\0';
        fmi2Status refused = w->state == FATAL ? fmi2Fatal : refuse(w, "fmi2DeSerializeFMUstate", "%s",
            check && status <= fmi2Warning ? check + 1 : "the component could not check the state");
        free(check);
        if (w->state != FATAL) inner.FreeFMUstate(w->inner, &fresh);
        return refused;
    }
    free(check);
    /* always a new state (FMI: "constructs a copy"; unlike fmi2GetFMUstate, *state is not reused) */
    fmi2Status tracked = track(w, fresh, kind, state);
    if (tracked == fmi2OK) ((Saved *)*state)->inner_size = n;
    return tracked > status ? tracked : status;
}

/* --- the rest ------------------------------------------------------------------------------ */

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vUnknown[], size_t nUnknown,
                                        const fmi2ValueReference vKnown[], size_t nKnown, const fmi2Real dvKnown[],
                                        fmi2Real dvUnknown[]) {
    (void)vUnknown, (void)nUnknown, (void)vKnown, (void)nKnown, (void)dvKnown, (void)dvUnknown;
    ENTER("fmi2GetDirectionalDerivative", GETTABLE & ~INSTANTIATED);
    return refuse(w, "fmi2GetDirectionalDerivative", "not provided (providesDirectionalDerivative = false)");
}

fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                       const fmi2Integer order[], const fmi2Real value[]) {
    (void)vr, (void)nvr, (void)order, (void)value;
    ENTER("fmi2SetRealInputDerivatives", INSTANTIATED | INITIALIZATION_MODE | STEP_COMPLETE);
    return refuse(w, "fmi2SetRealInputDerivatives", "not supported (canInterpolateInputs = false)");
}
fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                        const fmi2Integer order[], fmi2Real value[]) {
    (void)vr, (void)nvr, (void)order, (void)value;
    ENTER("fmi2GetRealOutputDerivatives", STEP_COMPLETE | STEP_FAILED | TERMINATED | ERROR);
    return refuse(w, "fmi2GetRealOutputDerivatives", "not supported (maxOutputDerivativeOrder = 0)");
}

/* The step's arguments are checked by the component (finite, h > 0, t = the instance's time): an
 * argument it refuses is logged and the call returns fmi2Error with the state unchanged; a step the
 * component cannot take returns fmi2Discard (state step failed: restore a state, or terminate). */
fmi2Status fmi2DoStep(fmi2Component c, fmi2Real currentCommunicationPoint, fmi2Real communicationStepSize,
                      fmi2Boolean noSetFMUStatePriorToCurrentPoint) {
    ENTER("fmi2DoStep", STEP_COMPLETE);
    fmi2Status status = inner.DoStep(w->inner, currentCommunicationPoint, communicationStepSize,
                                     noSetFMUStatePriorToCurrentPoint);
    if (status == fmi2Discard && w->logged != fmi2Fatal) {
        w->state = STEP_FAILED;
        return fmi2Discard;
    }
    return finish(w, status, STEP_COMPLETE);
}

fmi2Status fmi2CancelStep(fmi2Component c) {
    ENTER("fmi2CancelStep", 0); /* only legal while an asynchronous step runs: never here */
    return fmi2Error;
}

/* Status queries are answered here: no step is ever pending, the slave never asks to terminate. */
#define STATUS_STATES (STEP_COMPLETE | STEP_FAILED | TERMINATED)
fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *value) {
    (void)s, (void)value;
    ENTER("fmi2GetStatus", STATUS_STATES);
    return fmi2Discard;
}
fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *value) {
    (void)s, (void)value;
    ENTER("fmi2GetRealStatus", STATUS_STATES);
    return fmi2Discard;
}
fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *value) {
    (void)s, (void)value;
    ENTER("fmi2GetIntegerStatus", STATUS_STATES);
    return fmi2Discard;
}
fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value) {
    ENTER("fmi2GetBooleanStatus", STATUS_STATES);
    NEED(value, "fmi2GetBooleanStatus", "value is NULL");
    if (s != fmi2Terminated) return fmi2Discard;
    *value = fmi2False;
    return fmi2OK;
}
fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *value) {
    (void)s, (void)value;
    ENTER("fmi2GetStringStatus", STATUS_STATES);
    return fmi2Discard;
}
