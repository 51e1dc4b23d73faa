/*
 * mechfmu FMU binary: makes an FMU built with pythonfmu load in any FMI 2.0 host, on Linux (x86_64, aarch64),
 * macOS (x86_64, arm64) and Windows (x86_64).
 *
 * pythonfmu 0.7.0's binary leaves every Python C-API symbol undefined and expects the host process
 * to provide them, so a C/C++ host (OMSimulator, the FMI compliance checker, ...) cannot load it,
 * and loading libpython next to it is not enough when the host opens the FMU with RTLD_LOCAL (the
 * interpreter's own extension modules then miss its symbols); it also crashes and bloats its hosts
 * (see python_runtime.c) and is not used. This library is the FMU's binaries/<platform>/<modelIdentifier>.so
 * (.dylib, .dll). On the first fmi2Instantiate it
 *   1. finds the Python runtime (platform.c): the one already in the process (a Python host, also one
 *      whose interpreter is linked statically, e.g. Debian's python3: no second interpreter is ever loaded),
 *      else the FMU's Python version where the platform's Python installs put it, made global on POSIX;
 *      if there is none, fmi2Instantiate fails with a message that lists what was tried and what to install;
 *   2. runs the model's pythonfmu slave class in that Python (python_runtime.c), and passes every fmi2
 *      call that its checks accept to it.
 *
 * Errors reach every importer: this layer forwards the slave's warnings and errors always (info
 * messages only when the host enabled debug logging), and a call during which the component logged
 * an error returns fmi2Error (a warning: fmi2Warning) unless the call itself already returned a worse
 * status (e.g. fmi2Discard of a refused step).
 *
 * No call sequence reaches a crashing path. Each instance keeps its FMI 2.0 state: co-simulation
 * (instantiated, initialization mode, step complete, step failed, terminated, error, fatal), or, instantiated as
 * fmi2ModelExchange (a component without a Model Exchange form refuses it, saying why), Model Exchange (event
 * mode, continuous-time mode instead of the step states), and
 * every call is checked against the state table of FMI 2.0 section 4.2.4 or 3.2.3 (two relaxations: fmi2Terminate
 * is also accepted before initialization ended and in the error state, as a cleanup call; the fmi2Get
 * functions also in the instantiated state, where they read the start values). A refused
 * call logs an error naming the function and the reason (the current state, a NULL pointer, an unknown
 * FMU state, ...) and returns fmi2Error without calling into Python, the state unchanged; so does a call
 * whose value the component refused (it checks before it changes anything: see components/fmi.py).
 * An fmi2Error of the Python side (out of memory) enters the error state; an fmi2Fatal (an exception
 * escaped the slave: a defect, logged with its traceback) makes the instance fatal: every later call
 * but fmi2FreeInstance is refused. Handles are checked: an instance or an FMU
 * state that this FMU did not hand out, or already freed, is refused, so a double free is harmless.
 * FMU states are wrapped (the FMI state they were taken in, restored by fmi2SetFMUstate); a serialized
 * state starts with a header (magic, FMI state) and its body is checked completely by the component
 * before fmi2DeSerializeFMUstate returns it (the header also carries a CRC-32 of the state: a changed byte is
 * refused, and the body's phase must agree with the header's FMI state and the instance's interface). States not freed by the host are freed with the instance.
 * Every live instance holds this library open, so a host that closes and reopens it between two
 * instantiations does not unload it under its first instance; the library unloads with the host's last
 * dlclose (FreeLibrary) after the last fmi2FreeInstance.
 * Not supported, refused with fmi2Error: directional and input/output derivatives, fmi2CancelStep (no
 * asynchronous steps); status queries return fmi2Discard (fmi2Terminated: false).
 *
 * Configuration (compiler -D, set by mechfmu.fmu.build): MECHFMU_PYTHON_VERSION ("3.11"); on POSIX also
 * MECHFMU_LIBPYTHON_PATH (the build machine's libpython, "" for another machine) and MECHFMU_LIBPYTHON_SONAME
 * (the library's name on the target: libpython3.11.so.1.0, libpython3.11.dylib).
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "glue.h"
#include "platform.h"
#include "runtime.h"
#include "numbers.h"

#if !defined(MECHFMU_PYTHON_VERSION) && !defined(MECHFMU_NATIVE)
#error "MECHFMU_PYTHON_VERSION (or MECHFMU_NATIVE: the component in C, runtime.c) must be defined"
#endif

#define PATH_SIZE 4096
#define MESSAGE_SIZE (3 * PATH_SIZE)
/* more entries than a call's array may have (value references, categories, states, indicators): far above any
 * component's, far below an overflow of the sizes; a larger count is refused before an entry is read */
#define MAX_VARIABLES 1000000

/* --- the Python runtime ------------------------------------------------------------------ */

static platform_once_t load_once = PLATFORM_ONCE_INIT;
static char load_error[MESSAGE_SIZE];  /* empty when loading succeeded */
static char python_note[MESSAGE_SIZE]; /* a warning for every instance (e.g. another Python version) */

/* The Python runtime, then the slave's: the model identifier is this binary's name without its folder and its
 * extension (.so, .dylib, .dll). */
static void load_python(void) {
#ifndef MECHFMU_NATIVE /* a native FMU looks for no Python */
    if (platform_load_python(MECHFMU_PYTHON_VERSION, load_error, sizeof load_error, python_note,
                             sizeof python_note) != 0)
        return;
#endif
    char path[PATH_SIZE], model[PATH_SIZE];
    if (platform_own_path(path, sizeof path) != 0) {
        snprintf(load_error, sizeof load_error, "cannot locate this FMU binary");
        return;
    }
    const char *base = path;
    for (const char *p = path; *p; ++p)
        if (*p == '/' || *p == '\\') base = p + 1;
    snprintf(model, sizeof model, "%s", base);
    char *extension = strrchr(model, '.');
    if (extension && (!strcmp(extension, ".so") || !strcmp(extension, ".dylib") || !strcmp(extension, ".dll")
                      || !strcmp(extension, ".DLL")))
        *extension = '\0';
    runtime_load(model, load_error, sizeof load_error);
}

/* --- instances and their FMI 2.0 co-simulation state ------------------------------------------ */

/* The states of FMI 2.0 section 4.2.4 that this FMU can reach (no asynchronous steps: never
 * stepInProgress or stepCanceled, so fmi2CancelStep is never legal). */
enum {
    INSTANTIATED = 1, INITIALIZATION_MODE = 2, STEP_COMPLETE = 4, STEP_FAILED = 8, TERMINATED = 16, ERROR = 32,
    FATAL = 64, EVENT_MODE = 128, CONTINUOUS_TIME_MODE = 256 /* the last two: Model Exchange (section 3.2.3) */
};
#define LIVE (INSTANTIATED | INITIALIZATION_MODE | STEP_COMPLETE | STEP_FAILED | TERMINATED | ERROR | EVENT_MODE \
              | CONTINUOUS_TIME_MODE)

static const char *state_name(int state) {
    switch (state) {
    case INSTANTIATED: return "instantiated";
    case INITIALIZATION_MODE: return "initialization mode";
    case STEP_COMPLETE: return "step complete";
    case STEP_FAILED: return "step failed";
    case TERMINATED: return "terminated";
    case ERROR: return "error";
    case EVENT_MODE: return "event mode";
    case CONTINUOUS_TIME_MODE: return "continuous-time mode";
    default: return "fatal";
    }
}

/* An FMU state handed to the host: the slave's state (a Python object) and the FMI state it was taken in. */
typedef struct Saved {
    void *object;
    int state;
    size_t object_size; /* its serialized size once known (states never change), else 0 */
    struct Saved *next;
} Saved;

typedef struct Instance {
    Runtime *runtime;            /* first the fields every call reads (one cache line) */
    int state;                   /* one of the states above */
    fmi2Status logged;           /* worst status logged during the current call */
    int model_exchange;          /* instantiated as fmi2ModelExchange */
    fmi2Boolean debug_logging;   /* the host's wish for info messages */
    fmi2CallbackFunctions host;  /* the host's callbacks */
    RuntimeLogger own;           /* what the runtime gets: our logger */
    size_t n_categories;
    char **categories;           /* NULL = every category */
    char *name;
    Saved *saved;                /* the FMU states handed out and not freed */
    void *library;               /* this binary, held open while the instance lives (NULL if that failed) */
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
    return glue_category_enabled(w->debug_logging, w->categories, w->n_categories, category);
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
static fmi2Status refuse(const Instance *w, const char *function, const char *format, ...) PRINTF_LIKE(3, 4);
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

static void forward_log(void *env, const char *instance, RuntimeStatus status, const char *category,
                        const char *message) {
    Instance *w = (Instance *)env;
    if ((fmi2Status)status > w->logged) w->logged = (fmi2Status)status;
    if (status == RUNTIME_OK && !category_enabled(w, category)) return;
    host_log(w, instance, (fmi2Status)status, category, message);
}

/* The status of a call into the slave, and the state it leaves: an fmi2Fatal (or a logged fatal: an
 * exception escaped the slave) makes the instance fatal for good; an fmi2Error of the Python side
 * (out of memory) puts it in the error state. An error
 * the component logged is a refusal: the component checks before it changes anything, so the call
 * returns fmi2Error and the state stays (a warning: fmi2Warning). Otherwise the state becomes `next`. */
static fmi2Status finish(Instance *w, RuntimeStatus status, int next) {
    const fmi2Status returned = (fmi2Status)status; /* the same values */
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
    Instance *w = glue_find(c);                                                                         \
    if (!w) return fmi2Error; /* not an instance of this FMU (e.g. freed): nowhere to log */        \
    if (!(w->state & (allowed)))                                                                     \
        return refuse(w, function, "not allowed in state %s%s", state_name(w->state),               \
                      w->state == FATAL ? " (after a fatal error only fmi2FreeInstance is allowed)" : ""); \
    w->logged = fmi2OK

#define NEED(condition, function, ...)                                                               \
    if (!(condition)) return refuse(w, function, __VA_ARGS__)

/* Two times as an engineer writes them (%.6g, '.' whatever the locale), with more digits where six show them equal. */
static void times_apart(double a, double b, char *text_a, char *text_b, size_t size) {
    int digits = 6;
    do {
        native_format_g(a, digits, text_a, size);
        native_format_g(b, digits, text_b, size);
    } while (!strcmp(text_a, text_b) && a != b && ++digits <= 17);
}

/* --- the fmi2 API --------------------------------------------------------------------------- */

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }

const char *fmi2GetVersion(void) { return fmi2Version; }

/* Whether the host instantiates this FMU: fmuResourceLocation is a file URI and fmuGUID is the GUID the FMU
 * was packed with (glue_check_token). 0 with the resources folder in *resources (freed by the caller), or -1 with
 * `why` set. */
static int check_location(const char *location, const char *guid, char **resources, char *why, size_t size) {
    *resources = platform_resource_path(location, why, size);
    return *resources ? glue_check_token(*resources, guid, "fmuGUID", "GUID", "fmuResourceLocation", why, size) : -1;
}

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String fmuResourceLocation, const fmi2CallbackFunctions *functions,
                              fmi2Boolean visible, fmi2Boolean loggingOn) {
    platform_once(&load_once, load_python);
    if (load_error[0]) {
        if (functions && functions->logger)
            functions->logger(functions->componentEnvironment, instanceName, fmi2Fatal, "logStatusFatal", "%s",
                              load_error);
        return NULL;
    }
    Instance *w = platform_block_alloc(sizeof *w); /* zeroed, beside its runtime's block: one place per instance */
    if (!w) return NULL;
    if (functions) w->host = *functions;
    w->own.log = forward_log;
    w->own.environment = w;
    w->debug_logging = loggingOn;
    w->name = copy_string(functions, instanceName);
    if ((fmuType != fmi2CoSimulation && fmuType != fmi2ModelExchange) || !instanceName || !fmuGUID
        || !fmuResourceLocation) {
        refuse(w, "fmi2Instantiate", "%s", fmuType != fmi2CoSimulation && fmuType != fmi2ModelExchange
               ? "fmuType is neither fmi2ModelExchange nor fmi2CoSimulation"
               : "instanceName, fmuGUID and fmuResourceLocation are required");
        release(functions, w->name);
        platform_block_free(w);
        return NULL;
    }
    char why[1024], *resources = NULL;
    if (check_location(fmuResourceLocation, fmuGUID, &resources, why, sizeof why) != 0) {
        refuse(w, "fmi2Instantiate", "%s", why);
        free(resources);
        release(functions, w->name);
        platform_block_free(w);
        return NULL;
    }
    if (python_note[0]) host_log(w, instanceName, fmi2Warning, "logStatusWarning", python_note);
    w->runtime = runtime_instantiate(instanceName, resources, visible, &w->own, 2);
    free(resources);
    if (!w->runtime) {
        release(functions, w->name);
        platform_block_free(w);
        return NULL;
    }
    w->state = INSTANTIATED;
    w->model_exchange = fmuType == fmi2ModelExchange;
    if (w->model_exchange) { /* a component without a Model Exchange form refuses it, saying why (logged) */
        w->logged = fmi2OK;
        if (runtime_model_exchange(w->runtime, "me_open", "fmi2Instantiate", NULL, 0, NULL, 0) != RUNTIME_OK
            || w->logged >= fmi2Error) {
            runtime_free(w->runtime);
            release(functions, w->name);
            platform_block_free(w);
            return NULL;
        }
    }
    /* A host may close the library while an instance lives and open it again for the next one (ecos,
     * through fmi4c, does at every fmi2Instantiate): unloaded, this binary would come back without its
     * live instances (every call on the first one refused) while their Python objects live on. So each
     * instance holds the library open; fmi2FreeInstance lets go. */
    w->library = platform_hold_own_library();
    if (glue_add(w) != 0) {
        refuse(w, "fmi2Instantiate", "out of memory");
        runtime_free(w->runtime);
        if (w->library) platform_release_library(w->library);
        release(functions, w->name);
        platform_block_free(w);
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
    if (!glue_remove(c)) return; /* NULL, freed twice or not ours: nothing to do */
    Instance *w = (Instance *)c;
    while (w->saved) { /* states the host did not free belong to the instance */
        Saved *s = w->saved;
        w->saved = s->next;
        runtime_free_state(w->runtime, s->object);
        release(&w->host, s);
    }
    runtime_free(w->runtime);
    free_categories(w);
    fmi2CallbackFunctions host = w->host;
    void *library = w->library;
    release(&host, w->name);
    platform_block_free(w);
    if (library) platform_release_library(library); /* the host's own handle keeps the code of this call loaded */
}

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
                               const fmi2String categories[]) {
    ENTER("fmi2SetDebugLogging", LIVE);
    NEED(nCategories == 0 || categories, "fmi2SetDebugLogging", "categories is NULL with nCategories = %zu",
         nCategories);
    NEED(nCategories <= MAX_VARIABLES, "fmi2SetDebugLogging", "nCategories = %zu: more than any host has (%d)",
         nCategories, MAX_VARIABLES);
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
         "startTime = %s must be finite", startTime > 0 ? "inf" : startTime < 0 ? "-inf" : "nan");
    NEED(!stopTimeDefined || stopTime == stopTime, "fmi2SetupExperiment", "stopTime = nan must be a number");
    if (stopTimeDefined && stopTime < startTime) {
        char stop[40], start[40];
        times_apart(stopTime, startTime, stop, start, sizeof stop);
        return refuse(w, "fmi2SetupExperiment", "stopTime = %s s is before startTime = %s s", stop, start);
    }
    (void)toleranceDefined, (void)tolerance; /* pythonfmu passes the start time only */
    return finish(w, runtime_setup_experiment(w->runtime, startTime), 0);
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c) {
    ENTER("fmi2EnterInitializationMode", INSTANTIATED);
    return finish(w, runtime_call(w->runtime, "enter_initialization_mode", "fmi2EnterInitializationMode"), INITIALIZATION_MODE);
}

/* An error logged here (a parameter rule) keeps initialization mode: the host may correct and retry. */
fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
    ENTER("fmi2ExitInitializationMode", INITIALIZATION_MODE);
    return finish(w, runtime_call(w->runtime, "exit_initialization_mode", "fmi2ExitInitializationMode"),
                  w->model_exchange ? EVENT_MODE : STEP_COMPLETE);
}

/* FMI 2.0 allows fmi2Terminate after a step only; it is also accepted before initialization ended and
 * in the error state, where hosts (our master among them) call it while cleaning up: nothing to undo. */
fmi2Status fmi2Terminate(fmi2Component c) {
    ENTER("fmi2Terminate", INSTANTIATED | INITIALIZATION_MODE | STEP_COMPLETE | STEP_FAILED | ERROR | EVENT_MODE
                           | CONTINUOUS_TIME_MODE);
    return finish(w, runtime_call(w->runtime, "terminate", "fmi2Terminate"), TERMINATED);
}

fmi2Status fmi2Reset(fmi2Component c) {
    ENTER("fmi2Reset", LIVE);
    fmi2Status status = finish(w, runtime_reset(w->runtime), INSTANTIATED);
    if (status <= fmi2Warning && w->model_exchange) /* the new slave object is in Model Exchange use too */
        status = finish(w, runtime_model_exchange(w->runtime, "me_open", "fmi2Reset", NULL, 0, NULL, 0), 0);
    return status;
}

/* FMI 2.0 allows the fmi2Get functions from initialization mode on; reading in the instantiated state is harmless
 * (the values are the start values) and our master reads parameters there: also accepted */
#define GETTABLE (INSTANTIATED | INITIALIZATION_MODE | STEP_COMPLETE | STEP_FAILED | TERMINATED | ERROR | EVENT_MODE \
                  | CONTINUOUS_TIME_MODE)
#define SETTABLE (INSTANTIATED | INITIALIZATION_MODE | STEP_COMPLETE | EVENT_MODE | CONTINUOUS_TIME_MODE)
#define ARRAYS(function)                                                                             \
    NEED(nvr == 0 || (vr && value), function, "%s is NULL with nvr = %zu", vr ? "value" : "vr", nvr); \
    NEED(nvr <= MAX_VARIABLES, function, "nvr = %zu: more than any FMU has (%d)", nvr, MAX_VARIABLES); \
    if (nvr == 0) return fmi2OK

/* fmi2GetX / fmi2SetX for the types without extra checks (fmi2SetString validates its text below) */
#define ACCESS(name, allowed, type, runtime_function)                                                  \
    fmi2Status fmi2##name(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, type value[]) { \
        ENTER("fmi2" #name, allowed);                                                                \
        ARRAYS("fmi2" #name);                                                                        \
        return finish(w, runtime_function(w->runtime, vr, nvr, value), 0);                               \
    }
ACCESS(GetReal, GETTABLE, fmi2Real, runtime_get_real)
ACCESS(GetInteger, GETTABLE, fmi2Integer, runtime_get_integer)
ACCESS(GetBoolean, GETTABLE, fmi2Boolean, runtime_get_boolean)
ACCESS(GetString, GETTABLE, fmi2String, runtime_get_string)
ACCESS(SetReal, SETTABLE, const fmi2Real, runtime_set_real)
ACCESS(SetInteger, SETTABLE, const fmi2Integer, runtime_set_integer)
ACCESS(SetBoolean, SETTABLE, const fmi2Boolean, runtime_set_boolean)
#undef ACCESS

fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2String value[]) {
    ENTER("fmi2SetString", SETTABLE);
    ARRAYS("fmi2SetString");
    for (size_t i = 0; i < nvr; ++i) {
        NEED(value[i], "fmi2SetString", "value[%zu] (valueReference %u) is NULL", i, vr[i]);
        NEED(glue_utf8_valid((const unsigned char *)value[i]), "fmi2SetString", /* Python decodes it */
             "value[%zu] (valueReference %u) is not valid UTF-8", i, vr[i]);
    }
    return finish(w, runtime_set_string(w->runtime, vr, nvr, value), 0);
}

/* --- FMU states: only states handed out by this instance are accepted ------------------------- */

/* A serialized state: this header, then the slave's bytes (the component's). The FMI state is a bit of the enum
 * above; the header holds its index (0 to 8: CONTINUOUS_TIME_MODE, 256, does not fit a byte) and the CRC-32 of that
 * index and the slave's bytes (4 bytes, little-endian): a state changed after it was serialized is refused whole.
 * The format before this one (magic "mechfmu\x02", no checksum) is refused as another version's. */
#define STATE_MAGIC "mechfmu\x03"
#define OLD_STATE_MAGIC "mechfmu\x02"
#define HEADER_SIZE GLUE_HEADER_SIZE /* magic, the FMI state's bit index, the checksum */

static Saved *find_saved(const Instance *w, fmi2FMUstate state) {
    Saved *s = w->saved;
    while (s && s != (Saved *)state) s = s->next;
    return s;
}

#define KNOWN_STATE(function, state)                                                                 \
    Saved *saved = find_saved(w, state);                                                             \
    NEED(saved, function, "%s is not an FMU state of this instance (never handed out, or already freed)", \
         state ? "the FMUstate" : "FMUstate NULL")

static fmi2Status track(Instance *w, void *object, int state, fmi2FMUstate *out) {
    Saved *s = allocate(&w->host, 1, sizeof *s);
    if (!s) {
        runtime_free_state(w->runtime, object);
        return refuse(w, "fmi2GetFMUstate", "out of memory");
    }
    s->object = object;
    s->state = state;
    s->object_size = 0;
    s->next = w->saved;
    w->saved = s;
    *out = s;
    return fmi2OK;
}

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *state) {
    ENTER("fmi2GetFMUstate", LIVE);
    NEED(state, "fmi2GetFMUstate", "FMUstate* is NULL");
    void *fresh = NULL;
    fmi2Status status = finish(w, runtime_get_state(w->runtime, &fresh), 0);
    if (status > fmi2Warning) return status;
    Saved *old = *state ? find_saved(w, *state) : NULL;
    if (old) { /* FMI: *state is a state of ours to be overwritten */
        runtime_free_state(w->runtime, old->object);
        old->object = fresh;
        old->state = w->state;
        old->object_size = 0;
        return status;
    }
    fmi2Status tracked = track(w, fresh, w->state, state);
    return tracked > status ? tracked : status;
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate state) {
    ENTER("fmi2SetFMUstate", LIVE);
    KNOWN_STATE("fmi2SetFMUstate", state);
    return finish(w, runtime_set_state(w->runtime, saved->object), saved->state);
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *state) {
    ENTER("fmi2FreeFMUstate", LIVE);
    NEED(state, "fmi2FreeFMUstate", "FMUstate* is NULL");
    if (!*state) return fmi2OK; /* FMI: a NULL state is ignored */
    KNOWN_STATE("fmi2FreeFMUstate", *state);
    Saved **link = &w->saved;
    while (*link != saved) link = &(*link)->next;
    *link = saved->next;
    runtime_free_state(w->runtime, saved->object);
    release(&w->host, saved);
    *state = NULL;
    return fmi2OK;
}

/* The slave's serialization of a state (a new buffer, freed by the caller) and its size. */
static fmi2Status serialized(Instance *w, void *object, char **bytes, size_t *size) {
    fmi2Status status = finish(w, runtime_serialize(w->runtime, object, bytes, size), 0);
    if (status > fmi2Warning) {
        free(*bytes);
        *bytes = NULL;
    }
    return status;
}

static fmi2Status object_size(Instance *w, Saved *saved) {
    if (saved->object_size) return fmi2OK;
    char *bytes = NULL;
    size_t size = 0;
    fmi2Status status = serialized(w, saved->object, &bytes, &size);
    free(bytes);
    if (status <= fmi2Warning) saved->object_size = size;
    return status;
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate state, size_t *size) {
    ENTER("fmi2SerializedFMUstateSize", LIVE);
    KNOWN_STATE("fmi2SerializedFMUstateSize", state);
    NEED(size, "fmi2SerializedFMUstateSize", "size is NULL");
    fmi2Status status = object_size(w, saved);
    if (status <= fmi2Warning) *size = HEADER_SIZE + saved->object_size;
    return status;
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate state, fmi2Byte bytes[], size_t size) {
    ENTER("fmi2SerializeFMUstate", LIVE);
    KNOWN_STATE("fmi2SerializeFMUstate", state);
    NEED(bytes, "fmi2SerializeFMUstate", "serializedState is NULL");
    char *body = NULL;
    size_t n = 0;
    fmi2Status status = serialized(w, saved->object, &body, &n);
    if (status > fmi2Warning) return status;
    if (size != HEADER_SIZE + n) {
        free(body);
        return refuse(w, "fmi2SerializeFMUstate", "size = %zu, but fmi2SerializedFMUstateSize gives %zu", size,
                      HEADER_SIZE + n);
    }
    glue_write_state((unsigned char *)bytes, STATE_MAGIC, saved->state, body, n);
    free(body);
    return status;
}

/* The blob is checked here (header) and completely by the component (components/fmi.py), which hands
 * back a rejection, not a state, for a blob it does not accept: its serialization is a NUL byte and
 * the reason. Nothing touches the instance until fmi2SetFMUstate of an accepted state. */
fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte bytes[], size_t size, fmi2FMUstate *state) {
    ENTER("fmi2DeSerializeFMUstate", LIVE);
    NEED(bytes && state, "fmi2DeSerializeFMUstate", "%s is NULL", bytes ? "FMUstate*" : "serializedState");
    NEED(size < GLUE_MAGIC_SIZE || memcmp(bytes, OLD_STATE_MAGIC, GLUE_MAGIC_SIZE) != 0, "fmi2DeSerializeFMUstate",
         "the state was serialized by an earlier version of this FMU (state format 2, without a checksum): this "
         "version cannot read it; serialize the state again with this FMU");
    int kind = 0;
    const char *header = glue_read_state((const unsigned char *)bytes, size, STATE_MAGIC, &kind);
    NEED(!header || strcmp(header, "checksum"), "fmi2DeSerializeFMUstate", "the state's checksum does not match its "
         "%zu bytes (changed or damaged after it was serialized): refused", size);
    NEED(!header, "fmi2DeSerializeFMUstate", "the %zu bytes are not a serialized state of this FMU (%s)", size, header);
    NEED(kind & LIVE, "fmi2DeSerializeFMUstate", "the state header names no FMI state (%d)",
         (unsigned char)bytes[GLUE_MAGIC_SIZE]);
    NEED(!(kind & (w->model_exchange ? (STEP_COMPLETE | STEP_FAILED) : (EVENT_MODE | CONTINUOUS_TIME_MODE))),
         "fmi2DeSerializeFMUstate", "the state was saved by a %s instance (in %s); this instance is %s",
         w->model_exchange ? "Co-Simulation" : "Model Exchange", state_name(kind),
         w->model_exchange ? "Model Exchange" : "Co-Simulation");
    void *fresh = NULL;
    fmi2Status status = finish(w, runtime_deserialize(w->runtime, bytes + HEADER_SIZE, size - HEADER_SIZE, &fresh), 0);
    if (status > fmi2Warning) return status;
    char *check = NULL;
    size_t n = 0;
    status = serialized(w, fresh, &check, &n);
    if (status > fmi2Warning || n == 0 || check[0] == '\0') {
        char *reason = status <= fmi2Warning && n > 1 ? platform_strndup(check + 1, n - 1) : NULL;
        fmi2Status refused = w->state == FATAL ? fmi2Fatal : refuse(w, "fmi2DeSerializeFMUstate", "%s",
            reason ? reason : "the component could not check the state");
        free(reason);
        free(check);
        runtime_free_state(w->runtime, fresh);
        return refused;
    }
    /* the body's phase agrees with the header's FMI state and with this instance's interface */
    const char *contradiction = glue_contradiction(check, n, w->model_exchange, kind, INSTANTIATED | INITIALIZATION_MODE,
                                                   STEP_COMPLETE | STEP_FAILED | EVENT_MODE | CONTINUOUS_TIME_MODE);
    free(check);
    if (contradiction) {
        runtime_free_state(w->runtime, fresh);
        return refuse(w, "fmi2DeSerializeFMUstate", "the state's header says %s, but %s: refused", state_name(kind),
                      contradiction);
    }
    /* always a new state (FMI: "constructs a copy"; unlike fmi2GetFMUstate, *state is not reused) */
    fmi2Status tracked = track(w, fresh, kind, state);
    if (tracked == fmi2OK) ((Saved *)*state)->object_size = n;
    return tracked > status ? tracked : status;
}

/* --- the rest ------------------------------------------------------------------------------ */

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vUnknown[], size_t nUnknown,
                                        const fmi2ValueReference vKnown[], size_t nKnown, const fmi2Real dvKnown[],
                                        fmi2Real dvUnknown[]) {
    ENTER("fmi2GetDirectionalDerivative", GETTABLE & ~INSTANTIATED);
    NEED((vUnknown && dvUnknown) || nUnknown == 0, "fmi2GetDirectionalDerivative", "%s is NULL with nUnknown = %zu",
         vUnknown ? "dvUnknown" : "vUnknown", nUnknown);
    NEED((vKnown && dvKnown) || nKnown == 0, "fmi2GetDirectionalDerivative", "%s is NULL with nKnown = %zu",
         vKnown ? "dvKnown" : "vKnown", nKnown);
    NEED(nUnknown <= MAX_VARIABLES && nKnown <= MAX_VARIABLES, "fmi2GetDirectionalDerivative",
         "nUnknown = %zu, nKnown = %zu: more than any FMU has (%d)", nUnknown, nKnown, MAX_VARIABLES);
    /* one array to the component: nUnknown, nKnown, the value references, the seeds (components/partials.py) */
    size_t count = 2 + nUnknown + 2 * nKnown;
    fmi2Real *in = malloc(count * sizeof *in), *out = nUnknown ? malloc(nUnknown * sizeof *out) : NULL;
    if (!in || (nUnknown && !out)) {
        free(in), free(out);
        return refuse(w, "fmi2GetDirectionalDerivative", "out of memory");
    }
    in[0] = (fmi2Real)nUnknown, in[1] = (fmi2Real)nKnown;
    for (size_t i = 0; i < nUnknown; ++i) in[2 + i] = vUnknown[i];
    for (size_t j = 0; j < nKnown; ++j) in[2 + nUnknown + j] = vKnown[j], in[2 + nUnknown + nKnown + j] = dvKnown[j];
    fmi2Status status = finish(w, runtime_model_exchange(w->runtime, "directional_derivative",
                                                       "fmi2GetDirectionalDerivative", in, count, out, nUnknown), 0);
    if (status <= fmi2Warning && nUnknown) memcpy(dvUnknown, out, nUnknown * sizeof *out);
    free(in), free(out);
    return status;
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
    (void)noSetFMUStatePriorToCurrentPoint;
    RuntimeStatus status = runtime_do_step(w->runtime, currentCommunicationPoint, communicationStepSize);
    if (status == RUNTIME_DISCARD && w->logged != fmi2Fatal) {
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

/* --- Model Exchange (FMI 2.0 section 3): the state machine of section 3.2.3 ------------------------ */

/* A Model Exchange call of a Model Exchange instance in one of the `allowed` states. */
#define ENTER_ME(function, allowed)                                                                  \
    ENTER(function, allowed);                                                                        \
    NEED(w->model_exchange, function, "the instance was instantiated as fmi2CoSimulation")

#define EVALUABLE (INITIALIZATION_MODE | EVENT_MODE | CONTINUOUS_TIME_MODE | TERMINATED | ERROR)

fmi2Status fmi2EnterEventMode(fmi2Component c) {
    ENTER_ME("fmi2EnterEventMode", CONTINUOUS_TIME_MODE | EVENT_MODE);
    w->state = EVENT_MODE;
    return fmi2OK;
}

fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *eventInfo) {
    ENTER_ME("fmi2NewDiscreteStates", EVENT_MODE);
    NEED(eventInfo, "fmi2NewDiscreteStates", "eventInfo is NULL");
    fmi2Real update[3] = {0.0, 0.0, 0.0}; /* runtime.h's flags, next event time defined, next event time */
    fmi2Status status = finish(w, runtime_model_exchange(w->runtime, "me_new_discrete_states", "fmi2NewDiscreteStates",
                                                       NULL, 0, update, 3), 0);
    if (status > fmi2Warning) return status;
    const int flags = update[0] >= 0.0 && update[0] <= 3.0 ? (int)update[0] : 0;
    eventInfo->newDiscreteStatesNeeded = flags & (int)RUNTIME_DISCRETE_STATES_NEEDED ? fmi2True : fmi2False;
    eventInfo->terminateSimulation = fmi2False;
    eventInfo->nominalsOfContinuousStatesChanged = fmi2False;
    eventInfo->valuesOfContinuousStatesChanged = flags & (int)RUNTIME_STATES_CHANGED ? fmi2True : fmi2False;
    eventInfo->nextEventTimeDefined = update[1] != 0.0 ? fmi2True : fmi2False;
    eventInfo->nextEventTime = update[2];
    return status;
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) {
    ENTER_ME("fmi2EnterContinuousTimeMode", EVENT_MODE);
    w->state = CONTINUOUS_TIME_MODE;
    return fmi2OK;
}

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi2Boolean *enterEventMode, fmi2Boolean *terminateSimulation) {
    ENTER_ME("fmi2CompletedIntegratorStep", CONTINUOUS_TIME_MODE);
    NEED(enterEventMode && terminateSimulation, "fmi2CompletedIntegratorStep", "%s is NULL",
         enterEventMode ? "terminateSimulation" : "enterEventMode");
    (void)noSetFMUStatePriorToCurrentPoint;
    fmi2Status status = finish(w, runtime_model_exchange(w->runtime, "me_completed_step", "fmi2CompletedIntegratorStep",
                                                       NULL, 0, NULL, 0), 0);
    *enterEventMode = fmi2False;
    *terminateSimulation = fmi2False;
    return status;
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time) {
    ENTER_ME("fmi2SetTime", EVENT_MODE | CONTINUOUS_TIME_MODE);
    NEED(time == time && time - time == 0, "fmi2SetTime", "time = %s must be finite",
         time > 0 ? "inf" : time < 0 ? "-inf" : "nan");
    return finish(w, runtime_model_exchange(w->runtime, "me_set_time", "fmi2SetTime", &time, 1, NULL, 0), 0);
}

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx) {
    ENTER_ME("fmi2SetContinuousStates", CONTINUOUS_TIME_MODE);
    NEED(x || nx == 0, "fmi2SetContinuousStates", "x is NULL with nx = %zu", nx);
    NEED(nx <= MAX_VARIABLES, "fmi2SetContinuousStates", "nx = %zu: more than any FMU has (%d)", nx, MAX_VARIABLES);
    return finish(w, runtime_model_exchange(w->runtime, "me_set_states", "fmi2SetContinuousStates", x, nx, NULL, 0), 0);
}

/* fmi2GetDerivatives, fmi2GetEventIndicators, fmi2GetContinuousStates, fmi2GetNominalsOfContinuousStates: n values
 * (the component refuses another count, naming its states or indicators); nothing is written on a refusal. */
#define EVALUATE(name, array, count, method)                                                         \
    fmi2Status fmi2##name(fmi2Component c, fmi2Real array[], size_t count) {                         \
        ENTER_ME("fmi2" #name, EVALUABLE);                                                           \
        NEED(array || count == 0, "fmi2" #name, #array " is NULL with " #count " = %zu", count);      \
        NEED(count <= MAX_VARIABLES, "fmi2" #name, #count " = %zu: more than any FMU has (%d)", count,  \
             MAX_VARIABLES);                                                                         \
        fmi2Real *values = count ? malloc(count * sizeof *values) : NULL;                            \
        NEED(values || count == 0, "fmi2" #name, "out of memory");                                   \
        fmi2Status status = finish(w, runtime_model_exchange(w->runtime, method, "fmi2" #name, NULL, 0, values, count), 0); \
        if (status <= fmi2Warning && count) memcpy(array, values, count * sizeof *values);          \
        free(values);                                                                                \
        return status;                                                                               \
    }
EVALUATE(GetDerivatives, derivatives, nx, "me_derivatives")
EVALUATE(GetEventIndicators, eventIndicators, ni, "me_indicators")
EVALUATE(GetContinuousStates, x, nx, "me_get_states")
EVALUATE(GetNominalsOfContinuousStates, x_nominal, nx, "me_nominals")
#undef EVALUATE
