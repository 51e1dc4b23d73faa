/*
 * The FMI 3.0 glue of a native mechfmu FMU: the binary's fmi3 entry points over the runtime of runtime.h, as
 * fmi2_functions.c is for FMI 2.0 (the same runtime and laws, so the same numbers).
 *
 * Every call is checked against the state machine of FMI 3.0 (Model Exchange: instantiated, initialization mode,
 * event mode, continuous-time mode, terminated; co-simulation: step mode in place of continuous-time mode, and event
 * mode only where the importer asked for it with eventModeUsed). A refused call logs an error naming the function
 * and why (the state, a NULL pointer, a count, an FMU state that is not this instance's) and returns fmi3Error with
 * the instance unchanged; so does a value the runtime refuses. An error of the runtime itself (out of memory) puts
 * the instance in the error state, a fatal one makes it fatal: every later call but fmi3FreeInstance is refused.
 * Two relaxations, as in the FMI 2.0 glue: the fmi3Get functions also in the instantiated state (they read the
 * start values), fmi3Terminate also before initialization ended and in the error state (a cleanup call).
 *
 * Co-simulation: a step calls the importer's intermediate update at its end (intermediateStepFinished; the outputs
 * may be read there, no input set), and returns early where the importer asks it to (earlyReturnAllowed): the
 * step is taken again from its start to the requested time, as a step of that size would have been, and
 * lastSuccessfulTime says where it ended. Event mode (eventModeUsed) gives the sources' next time event from
 * fmi3UpdateDiscreteStates. An importer that lists inputs among requiredIntermediateVariables (of an FMU with
 * continuous states: a Mass, a RigidBody) gives them inside the step: the step is then integrated as an ODE
 * (runtime_integrate), and before each stage the intermediate update asks for the inputs there
 * (intermediateVariableSetRequested; the outputs show the stage's states, only those inputs may be set); after each
 * internal step it may ask for an early return inside that internal step. The tolerance is fmi3EnterInitializationMode's
 * (1e-10 where it defines none). Handles are checked (glue.c): a freed or foreign instance or FMU state is refused, never
 * read. FMU states serialize with a header (magic, FMI state, CRC-32) and are checked whole before use.
 *
 * Not supported, refused with fmi3Error: scheduled execution, configuration mode (no structural parameters),
 * clocks, per-element dependencies, output derivatives; variables of types the FMU has none of (Float32, the
 * integers other than Int32, Binary, Clock).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi3Functions.h"
#include "glue.h"
#include "numbers.h"
#include "platform.h"
#include "runtime.h"

#define MESSAGE_SIZE 12288
/* more entries than a call's array may have: far above any component's, far below an overflow of the sizes */
#define MAX_VARIABLES 1000000

static platform_once_t load_once = PLATFORM_ONCE_INIT;
static char load_error[MESSAGE_SIZE]; /* empty when loading succeeded */

/* The runtime's class: the model identifier is this binary's name without its folder and extension. */
static void load_class(void) {
    char path[4096], model[4096];
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

/* --- instances and their FMI 3.0 state ---------------------------------------------------------------------- */

enum {
    INSTANTIATED = 1, INITIALIZATION_MODE = 2, EVENT_MODE = 4, STEP_MODE = 8, CONTINUOUS_TIME_MODE = 16,
    TERMINATED = 32, ERROR = 64, FATAL = 128, STEP_DISCARDED = 256
};
#define LIVE (INSTANTIATED | INITIALIZATION_MODE | EVENT_MODE | STEP_MODE | CONTINUOUS_TIME_MODE | TERMINATED | ERROR \
              | STEP_DISCARDED)

static const char *state_name(int state) {
    switch (state) {
    case INSTANTIATED: return "instantiated";
    case INITIALIZATION_MODE: return "initialization mode";
    case EVENT_MODE: return "event mode";
    case STEP_MODE: return "step mode";
    case CONTINUOUS_TIME_MODE: return "continuous-time mode";
    case TERMINATED: return "terminated";
    case ERROR: return "error";
    case FATAL: return "fatal";
    case STEP_DISCARDED: return "step mode after a discarded step";
    default: return "unknown";
    }
}

typedef struct Saved {
    void *object; /* the runtime's state */
    int state;    /* the FMI state it was taken in */
    size_t object_size;
    struct Saved *next;
} Saved;

typedef struct {
    Runtime *runtime;
    int state;
    fmi3Status logged;         /* worst status logged during the current call */
    int model_exchange;
    int event_mode_used, early_return_allowed;
    int discrete_in_event_mode; /* the discrete state updated in fmi3UpdateDiscreteStates (runtime.c) */
    fmi3Boolean debug_logging;
    size_t n_categories;
    char **categories;         /* NULL = every category */
    char *name;
    fmi3InstanceEnvironment environment;
    fmi3LogMessageCallback log_message;
    fmi3IntermediateUpdateCallback intermediate_update;
    int intermediate_inputs;   /* the importer gives inputs inside a step (runtime_integrate) */
    double tolerance;          /* of that integration: fmi3EnterInitializationMode's, or 0 (the default) */
    RuntimeLogger own;
    Saved *saved;
    void *library;
    struct {                   /* the step fmi3DoStep takes: its start and where its outputs go */
        double start;
        fmi3Boolean *early;
        fmi3Float64 *last;
        fmi3Boolean *event;    /* eventHandlingNeeded */
    } step;
    struct Expanded {          /* the last value references of fmi3GetFloat64 (0) and fmi3SetFloat64 (1) */
        size_t n, count, runs; /* n value references (0: none kept) for `count` values, in `runs` runs */
        fmi3ValueReference vr[64];
        RuntimeReference first[64]; /* the runs of consecutive runtime value references they stand for */
        unsigned char length[64];
        RuntimeReference elements[64]; /* room for the whole path's expansion */
    } expanded[2];
    size_t variable_count;     /* the runtime's variables; `time` is the next value reference */
    unsigned char *lengths;    /* per value reference its array length (vector_lengths); NULL: every one a scalar */
} Instance;

/* FMI 3.0 array variables: a run of Real variables of one causality named <stem>.w, <stem>.x, <stem>.y, <stem>.z (a
 * quaternion) or <stem>.x, <stem>.y, <stem>.z (a position, a velocity, a force, a torque) is one array variable of 4
 * or 3 elements, its value reference its first element's (mechfmu/fmu/fmi3.py writes the model description by the
 * same rule). The number of elements the run from `vr` matches, or 1. */
static size_t vector_length(const Runtime *r, RuntimeReference vr) {
    static const char *const patterns[2][5] = {{"w", "x", "y", "z", NULL}, {"x", "y", "z", NULL, NULL}};
    const char *name;
    int real, causality;
    if (runtime_variable(r, vr, &name, &real, &causality) != 0 || !real) return 1;
    const char *dot = strrchr(name, '.');
    if (!dot) return 1;
    const size_t stem = (size_t)(dot - name) + 1; /* with the dot */
    for (int p = 0; p < 2; ++p) {
        size_t k = 0;
        for (; patterns[p][k]; ++k) {
            const char *other;
            int other_real, other_causality;
            if (runtime_variable(r, vr + (RuntimeReference)k, &other, &other_real, &other_causality) != 0 || !other_real
                || other_causality != causality || strncmp(other, name, stem) != 0
                || strcmp(other + stem, patterns[p][k]) != 0)
                break;
        }
        if (!patterns[p][k]) return k;
    }
    return 1;
}

/* Per value reference (and `time` after them) its array length: 1 a scalar, 3 or 4 an array's first element, 0 a later
 * element (no variable of its own). 0, or -1 out of memory; w->lengths stays NULL where every variable is a scalar. */
static int vector_lengths(Instance *w) {
    double sizes[4];
    if (runtime_model_exchange(w->runtime, "sizes", "instantiation", NULL, 0, sizes, 4) != RUNTIME_OK) return -1;
    w->variable_count = (size_t)sizes[0];
    unsigned char *lengths = malloc(w->variable_count + 1);
    if (!lengths) return -1;
    int vectors = 0;
    for (size_t vr = 0; vr <= w->variable_count;) {
        size_t n = vr < w->variable_count ? vector_length(w->runtime, (RuntimeReference)vr) : 1;
        lengths[vr] = (unsigned char)n;
        for (size_t k = 1; k < n; ++k) lengths[vr + k] = 0;
        vectors |= n > 1;
        vr += n;
    }
    if (vectors) w->lengths = lengths;
    else free(lengths);
    return 0;
}

static int category_enabled(const Instance *w, const char *category) {
    return glue_category_enabled(w->debug_logging, w->categories, w->n_categories, category);
}

static void host_log(const Instance *w, fmi3Status status, const char *category, const char *text) {
    if (w->log_message) w->log_message(w->environment, status, category, text);
}

static fmi3Status refuse(const Instance *w, const char *function, const char *format, ...) PRINTF_LIKE(3, 4);
static fmi3Status refuse(const Instance *w, const char *function, const char *format, ...) {
    char text[MESSAGE_SIZE];
    int n = snprintf(text, sizeof text, "%s: %s: ", w->name, function);
    va_list args;
    va_start(args, format);
    vsnprintf(text + n, sizeof text - (size_t)n, format, args);
    va_end(args);
    host_log(w, fmi3Error, "logStatusError", text);
    return fmi3Error;
}

static void forward_log(void *environment, const char *instance, RuntimeStatus status, const char *category,
                        const char *message) {
    (void)instance;
    Instance *w = environment;
    if ((fmi3Status)status > w->logged) w->logged = (fmi3Status)status;
    if (status == RUNTIME_OK && !category_enabled(w, category)) return;
    host_log(w, (fmi3Status)status, category, message);
}

/* The status of a call into the runtime and the state it leaves (as fmi2_functions.c finish). */
static fmi3Status finish(Instance *w, RuntimeStatus status, int next) {
    const fmi3Status returned = (fmi3Status)status; /* the same values */
    if (returned == fmi3Fatal || w->logged == fmi3Fatal) {
        w->state = FATAL;
        return fmi3Fatal;
    }
    if (returned == fmi3Error) {
        w->state = ERROR;
        return fmi3Error;
    }
    if (returned == fmi3Discard) return fmi3Discard;
    if (w->logged >= fmi3Error) return fmi3Error;
    if (next) w->state = next;
    return w->logged == fmi3Warning ? fmi3Warning : returned;
}

/* The state inside the importer's intermediate update (the instance's own state kept aside): only the fmi3Get functions,
 * whose allowed states carry it, may be called there. */
#define GETTABLE_IN_CALLBACK 4096
/* ... where the importer is asked for the inputs at a stage: fmi3GetFloat64, and fmi3SetFloat64 of inputs */
#define SETTABLE_IN_CALLBACK 8192

/* Why a call is refused on entry: inside the intermediate update, the other interface's, or in the wrong state. */
static fmi3Status refused_entry(const Instance *w, const char *function, int allowed, int interface, const char *why) {
    (void)allowed;
    if (w->state == GETTABLE_IN_CALLBACK || w->state == SETTABLE_IN_CALLBACK)
        return refuse(w, function, "not allowed in the intermediate update callback");
    if (!interface) return refuse(w, function, "%s", why);
    return refuse(w, function, "not allowed in state %s%s", state_name(w->state),
                  w->state == FATAL ? " (after a fatal error only fmi3FreeInstance is allowed)" : "");
}

#define ENTER(function, allowed) ENTER_AS(function, allowed, 1, "")
/* ENTER for a call of one interface: `interface` holds, else `why`; one test on the common path */
#define ENTER_AS(function, allowed, interface, why)                                                  \
    Instance *w = glue_find(instance);                                                               \
    if (!w) return fmi3Error; /* not an instance of this FMU (e.g. freed): nowhere to log */        \
    if (!((w->state & (allowed)) && (interface)))                                                    \
        return refused_entry(w, function, (allowed), (interface), why);                              \
    w->logged = fmi3OK

#define NEED(condition, function, ...)                                                               \
    if (!(condition)) return refuse(w, function, __VA_ARGS__)


#define ENTER_ME(function, allowed)                                                                  \
    ENTER_AS(function, allowed, w->model_exchange, "the instance was instantiated with fmi3InstantiateCoSimulation")
#define ENTER_CS(function, allowed)                                                                  \
    ENTER_AS(function, allowed, !w->model_exchange,                                                  \
             "the instance was instantiated with fmi3InstantiateModelExchange")

/* --- instantiation --------------------------------------------------------------------------------------------- */

const char *fmi3GetVersion(void) { return fmi3Version; }

static Instance *instantiate(const char *function, fmi3String instanceName, fmi3String instantiationToken,
                             fmi3String resourcePath, fmi3Boolean visible, fmi3Boolean loggingOn,
                             fmi3InstanceEnvironment environment, fmi3LogMessageCallback logMessage,
                             int model_exchange) {
    platform_once(&load_once, load_class);
    if (load_error[0]) {
        if (logMessage) logMessage(environment, fmi3Fatal, "logStatusFatal", load_error);
        return NULL;
    }
    Instance *w = platform_block_alloc(sizeof *w); /* beside its runtime's block: one place per instance */
    if (!w) return NULL;
    w->environment = environment;
    w->log_message = logMessage;
    w->debug_logging = loggingOn;
    w->model_exchange = model_exchange;
    w->own.log = forward_log;
    w->own.environment = w;
    w->name = platform_strndup(instanceName ? instanceName : "", SIZE_MAX);
    char why[1024];
    const char *problem = !w->name ? "out of memory"
                          : !instanceName || !instantiationToken ? "instanceName and instantiationToken are required"
                          : !resourcePath ? "resourcePath is NULL, but this FMU has resources" : NULL;
    if (!problem && glue_check_token(resourcePath, instantiationToken, "instantiationToken", "instantiation token",
                                     "resourcePath", why, sizeof why) != 0)
        problem = why;
    if (problem) {
        if (w->name) refuse(w, function, "%s", problem);
        free(w->name);
        platform_block_free(w);
        return NULL;
    }
    w->runtime = runtime_instantiate(instanceName, resourcePath, visible, &w->own, 3);
    if (w->runtime && model_exchange) {
        w->logged = fmi3OK;
        if (runtime_model_exchange(w->runtime, "me_open", function, NULL, 0, NULL, 0) != RUNTIME_OK
            || w->logged >= fmi3Error) {
            runtime_free(w->runtime);
            w->runtime = NULL;
        }
    }
    w->library = w->runtime ? platform_hold_own_library() : NULL;
    if (!w->runtime || vector_lengths(w) != 0 || glue_add(w) != 0) {
        if (w->runtime) refuse(w, function, "out of memory");
        runtime_free(w->runtime);
        if (w->library) platform_release_library(w->library);
        free(w->lengths);
        free(w->name);
        platform_block_free(w);
        return NULL;
    }
    w->state = INSTANTIATED;
    return w;
}

fmi3Instance fmi3InstantiateModelExchange(fmi3String instanceName, fmi3String instantiationToken,
                                          fmi3String resourcePath, fmi3Boolean visible, fmi3Boolean loggingOn,
                                          fmi3InstanceEnvironment instanceEnvironment,
                                          fmi3LogMessageCallback logMessage) {
    return instantiate("fmi3InstantiateModelExchange", instanceName, instantiationToken, resourcePath, visible,
                       loggingOn, instanceEnvironment, logMessage, 1);
}

fmi3Instance fmi3InstantiateCoSimulation(fmi3String instanceName, fmi3String instantiationToken,
                                         fmi3String resourcePath, fmi3Boolean visible, fmi3Boolean loggingOn,
                                         fmi3Boolean eventModeUsed, fmi3Boolean earlyReturnAllowed,
                                         const fmi3ValueReference requiredIntermediateVariables[],
                                         size_t nRequiredIntermediateVariables,
                                         fmi3InstanceEnvironment instanceEnvironment,
                                         fmi3LogMessageCallback logMessage,
                                         fmi3IntermediateUpdateCallback intermediateUpdate) {
    Instance *w = instantiate("fmi3InstantiateCoSimulation", instanceName, instantiationToken, resourcePath, visible,
                              loggingOn, instanceEnvironment, logMessage, 0);
    if (w) {
        w->event_mode_used = eventModeUsed;
        if (eventModeUsed) {
            double held = 0.0;
            if (runtime_model_exchange(w->runtime, "cs_event_mode_used", "fmi3InstantiateCoSimulation", NULL, 0,
                                       &held, 1) == RUNTIME_OK)
                w->discrete_in_event_mode = held != 0.0;
        }
        w->early_return_allowed = earlyReturnAllowed;
        w->intermediate_update = intermediateUpdate;
        /* every output is an intermediate variable; an input listed makes the step take inputs inside it */
        for (size_t i = 0; intermediateUpdate && requiredIntermediateVariables && i < nRequiredIntermediateVariables
                           && i < MAX_VARIABLES; ++i) {
            const char *name;
            int real, causality;
            if (runtime_variable(w->runtime, requiredIntermediateVariables[i], &name, &real, &causality) == 0
                && real && causality == 1 && runtime_integrates(w->runtime))
                w->intermediate_inputs = 1;
        }
    }
    return w;
}

fmi3Instance fmi3InstantiateScheduledExecution(fmi3String instanceName, fmi3String instantiationToken,
                                               fmi3String resourcePath, fmi3Boolean visible, fmi3Boolean loggingOn,
                                               fmi3InstanceEnvironment instanceEnvironment,
                                               fmi3LogMessageCallback logMessage, fmi3ClockUpdateCallback clockUpdate,
                                               fmi3LockPreemptionCallback lockPreemption,
                                               fmi3UnlockPreemptionCallback unlockPreemption) {
    (void)instantiationToken, (void)resourcePath, (void)visible, (void)loggingOn, (void)clockUpdate;
    (void)lockPreemption, (void)unlockPreemption;
    char text[512];
    snprintf(text, sizeof text, "%.200s: fmi3InstantiateScheduledExecution: this FMU provides Model Exchange and "
             "co-simulation only", instanceName ? instanceName : "?");
    if (logMessage) logMessage(instanceEnvironment, fmi3Error, "logStatusError", text);
    return NULL;
}

static void free_categories(Instance *w) {
    for (size_t i = 0; i < w->n_categories; ++i) free(w->categories[i]);
    free(w->categories);
    w->categories = NULL;
    w->n_categories = 0;
}

void fmi3FreeInstance(fmi3Instance instance) {
    Instance *w = glue_find(instance);
    if (!w || w->state == GETTABLE_IN_CALLBACK || w->state == SETTABLE_IN_CALLBACK || !glue_remove(w)) return;
    while (w->saved) {
        Saved *s = w->saved;
        w->saved = s->next;
        runtime_free_state(w->runtime, s->object);
        free(s);
    }
    runtime_free(w->runtime);
    free_categories(w);
    void *library = w->library;
    free(w->lengths);
    free(w->name);
    platform_block_free(w);
    if (library) platform_release_library(library);
}

fmi3Status fmi3SetDebugLogging(fmi3Instance instance, fmi3Boolean loggingOn, size_t nCategories,
                               const fmi3String categories[]) {
    ENTER("fmi3SetDebugLogging", LIVE);
    NEED(nCategories == 0 || categories, "fmi3SetDebugLogging", "categories is NULL with nCategories = %zu",
         nCategories);
    NEED(nCategories <= MAX_VARIABLES, "fmi3SetDebugLogging", "nCategories = %zu: more than any host has (%d)",
         nCategories, MAX_VARIABLES);
    for (size_t i = 0; i < nCategories; ++i) NEED(categories[i], "fmi3SetDebugLogging", "categories[%zu] is NULL", i);
    w->debug_logging = loggingOn;
    free_categories(w);
    if (loggingOn && nCategories > 0) {
        w->categories = calloc(nCategories, sizeof *w->categories);
        NEED(w->categories, "fmi3SetDebugLogging", "out of memory");
        w->n_categories = nCategories;
        for (size_t i = 0; i < nCategories; ++i) {
            w->categories[i] = platform_strndup(categories[i], SIZE_MAX);
            NEED(w->categories[i], "fmi3SetDebugLogging", "out of memory");
        }
    }
    return fmi3OK;
}

/* --- the phases ------------------------------------------------------------------------------------------------ */

fmi3Status fmi3EnterInitializationMode(fmi3Instance instance, fmi3Boolean toleranceDefined, fmi3Float64 tolerance,
                                       fmi3Float64 startTime, fmi3Boolean stopTimeDefined, fmi3Float64 stopTime) {
    ENTER("fmi3EnterInitializationMode", INSTANTIATED);
    NEED(!toleranceDefined || (tolerance > 0.0 && tolerance < 1.0), "fmi3EnterInitializationMode",
         "tolerance = %g must be > 0 and < 1", tolerance);
    w->tolerance = toleranceDefined ? tolerance : 0.0;
    NEED(startTime == startTime && startTime - startTime == 0, "fmi3EnterInitializationMode",
         "startTime = %s must be finite", startTime > 0 ? "inf" : startTime < 0 ? "-inf" : "nan");
    NEED(!stopTimeDefined || stopTime == stopTime, "fmi3EnterInitializationMode", "stopTime = nan must be a number");
    if (stopTimeDefined && stopTime < startTime) {
        char stop[40], start[40];
        int digits = 6;
        do {
            native_format_g(stopTime, digits, stop, sizeof stop);
            native_format_g(startTime, digits, start, sizeof start);
        } while (!strcmp(stop, start) && ++digits <= 17);
        return refuse(w, "fmi3EnterInitializationMode", "stopTime = %s s is before startTime = %s s", stop, start);
    }
    fmi3Status status = finish(w, runtime_setup_experiment(w->runtime, startTime), 0);
    if (status > fmi3Warning) return status;
    return finish(w, runtime_call(w->runtime, "enter_initialization_mode", "fmi3EnterInitializationMode"),
                  INITIALIZATION_MODE);
}

/* An error logged here (a parameter rule) keeps initialization mode: the importer may correct and retry. */
fmi3Status fmi3ExitInitializationMode(fmi3Instance instance) {
    ENTER("fmi3ExitInitializationMode", INITIALIZATION_MODE);
    return finish(w, runtime_call(w->runtime, "exit_initialization_mode", "fmi3ExitInitializationMode"),
                  w->model_exchange || w->event_mode_used ? EVENT_MODE : STEP_MODE);
}

fmi3Status fmi3EnterEventMode(fmi3Instance instance) {
    ENTER("fmi3EnterEventMode", EVENT_MODE | CONTINUOUS_TIME_MODE | STEP_MODE);
    NEED(w->model_exchange || w->event_mode_used, "fmi3EnterEventMode",
         "the instance was instantiated with eventModeUsed = false");
    NEED(w->model_exchange ? w->state != STEP_MODE : w->state != CONTINUOUS_TIME_MODE, "fmi3EnterEventMode",
         "not allowed in state %s", state_name(w->state));
    w->state = EVENT_MODE;
    return fmi3OK;
}

fmi3Status fmi3Terminate(fmi3Instance instance) {
    ENTER("fmi3Terminate", INSTANTIATED | INITIALIZATION_MODE | EVENT_MODE | STEP_MODE | CONTINUOUS_TIME_MODE | ERROR
                           | STEP_DISCARDED);
    return finish(w, runtime_call(w->runtime, "terminate", "fmi3Terminate"), TERMINATED);
}

fmi3Status fmi3Reset(fmi3Instance instance) {
    ENTER("fmi3Reset", LIVE);
    fmi3Status status = finish(w, runtime_reset(w->runtime), INSTANTIATED);
    if (status <= fmi3Warning && w->model_exchange)
        status = finish(w, runtime_model_exchange(w->runtime, "me_open", "fmi3Reset", NULL, 0, NULL, 0), 0);
    return status;
}

fmi3Status fmi3EnterConfigurationMode(fmi3Instance instance) {
    ENTER("fmi3EnterConfigurationMode", LIVE);
    return refuse(w, "fmi3EnterConfigurationMode", "this FMU has no structural parameters");
}

fmi3Status fmi3ExitConfigurationMode(fmi3Instance instance) {
    ENTER("fmi3ExitConfigurationMode", LIVE);
    return refuse(w, "fmi3ExitConfigurationMode", "this FMU has no structural parameters");
}

/* --- variables ------------------------------------------------------------------------------------------------- */

#define GETTABLE (INSTANTIATED | INITIALIZATION_MODE | EVENT_MODE | STEP_MODE | CONTINUOUS_TIME_MODE | TERMINATED \
                  | ERROR | STEP_DISCARDED | GETTABLE_IN_CALLBACK | SETTABLE_IN_CALLBACK)
#define SETTABLE (INSTANTIATED | INITIALIZATION_MODE | EVENT_MODE | STEP_MODE | CONTINUOUS_TIME_MODE)
#define ARRAYS(function)                                                                             \
    NEED(nValueReferences == 0 || (valueReferences && values), function, "%s is NULL with nValueReferences = %zu", \
         valueReferences ? "values" : "valueReferences", nValueReferences);                          \
    NEED(nValueReferences <= MAX_VARIABLES, function, "nValueReferences = %zu: more than any FMU has (%d)", \
         nValueReferences, MAX_VARIABLES);                                                           \
    NEED(nValues == nValueReferences, function, "nValues = %zu, but this FMU's variables are scalars: %zu values " \
         "for %zu value references", nValues, nValueReferences, nValueReferences);                   \
    if (nValueReferences == 0) return fmi3OK

/* Room for the elements of a call's arrays without allocating (a larger call allocates); the same as an Expanded's. */
#define LOCAL_ELEMENTS 64

/* The array length of value reference `vr` (1 beyond the variables: the runtime refuses it). */
static size_t length_of(const Instance *w, fmi3ValueReference vr) {
    return vr <= w->variable_count ? w->lengths[vr] : 1;
}

/* The runtime's value references for the FMI 3.0 ones `vr[0..n)`, each array's elements for its value reference, into
 * `local` (LOCAL_ELEMENTS long) or, for more, a new buffer the caller frees (*count of them); NULL after refusing: an
 * element's own value reference, a count other than `limit` (the values the caller passes). */
static RuntimeReference *elements(Instance *w, const char *function, const char *what, const fmi3ValueReference vr[],
                                  size_t n, size_t limit, size_t *count, RuntimeReference *local) {
    RuntimeReference *out = local;
    size_t k = 0, capacity = LOCAL_ELEMENTS;
    for (size_t i = 0; i < n; ++i) {
        const size_t length = length_of(w, vr[i]);
        if (length == 0) {
            RuntimeReference first = vr[i];
            while (first > 0 && w->lengths[first] == 0) --first;
            if (out != local) free(out);
            refuse(w, function, "%s[%zu] = %u is an element of the array variable with valueReference %u, not a "
                   "variable: give the array's value reference", what, i, vr[i], first);
            return NULL;
        }
        if (k + length > capacity) { /* more than the local room: all of them counted, then allocated */
            size_t total = k;
            for (size_t j = i; j < n; ++j) total += length_of(w, vr[j]) ? length_of(w, vr[j]) : 1;
            RuntimeReference *grown = out == local ? malloc(total * sizeof *grown) : NULL;
            if (!grown) {
                if (out != local) free(out);
                refuse(w, function, "out of memory");
                return NULL;
            }
            memcpy(grown, local, k * sizeof *grown);
            out = grown, capacity = total;
        }
        for (size_t e = 0; e < length; ++e) out[k++] = vr[i] + (RuntimeReference)e;
    }
    *count = k;
    if (k != limit) {
        if (out != local) free(out);
        refuse(w, function, "%zu values for the %zu value references in %s, whose variables have %zu elements", limit,
               n, what, k);
        return NULL;
    }
    return out;
}

_Static_assert(sizeof(((struct Expanded *)0)->elements) == LOCAL_ELEMENTS * sizeof(RuntimeReference),
               "an expansion fits where elements() puts it");
_Static_assert(sizeof(((struct Expanded *)0)->length) == LOCAL_ELEMENTS
               && sizeof(((struct Expanded *)0)->vr) == LOCAL_ELEMENTS * sizeof(fmi3ValueReference),
               "remember() keeps up to LOCAL_ELEMENTS value references and runs");

/* Keep the value references of a Float64 call that the whole path checked (`which`: 0 get, 1 set), and the runs of
 * consecutive runtime value references they stand for (all[0..count)), for the next call with the same ones. */
static void remember(Instance *w, int which, const fmi3ValueReference vr[], size_t n, const RuntimeReference all[],
                     size_t count) {
    struct Expanded *e = &w->expanded[which];
    e->n = e->count = e->runs = 0;
    if (n > LOCAL_ELEMENTS || count > LOCAL_ELEMENTS) return;
    size_t r = 0;
    for (size_t i = 0; i < count; ++i) {
        if (r && all[i] > e->first[r - 1] && all[i] - e->first[r - 1] == e->length[r - 1] && e->length[r - 1] < 255)
            ++e->length[r - 1];
        else
            e->first[r] = all[i], e->length[r++] = 1;
    }
    memcpy(e->vr, vr, n * sizeof *vr);
    e->n = n, e->count = count, e->runs = r;
}

/* The checks of a Float64 call on the whole path; `scalars`: the FMU has no array variable. */
#define FLOAT64_ARRAYS(function)                                                                     \
    NEED(nValueReferences == 0 || (valueReferences && values), function, "%s is NULL with nValueReferences = %zu", \
         valueReferences ? "values" : "valueReferences", nValueReferences);                          \
    NEED(nValueReferences <= MAX_VARIABLES, function, "nValueReferences = %zu: more than any FMU has (%d)", \
         nValueReferences, MAX_VARIABLES);                                                           \
    const int scalars = !w->lengths;                                                                 \
    NEED(!scalars || nValues == nValueReferences, function, "nValues = %zu, but this FMU's variables are scalars: " \
         "%zu values for %zu value references", nValues, nValueReferences, nValueReferences);       \
    NEED(nValueReferences > 0 || nValues == 0, function, "nValues = %zu for no value references", nValues); \
    if (nValueReferences == 0) return fmi3OK

/* the runtime's status as the call's: OK at once on the common path */
#define RETURN_FINISHED(call)                                                                        \
    do {                                                                                             \
        const RuntimeStatus done_ = (call);                                                          \
        return done_ == RUNTIME_OK && w->logged == fmi3OK ? fmi3OK : finish(w, done_, 0);          \
    } while (0)

/* fmi3GetFloat64 (which = 0) and fmi3SetFloat64 (1) on the whole path: scalars straight to the runtime, arrays by
 * their elements; the value references kept for the next call (remember). */
#define FLOAT64_BODY(name, type, runtime_function, which)                                             \
    FLOAT64_ARRAYS("fmi3" #name);                                                                    \
    size_t count = nValueReferences;                                                                 \
    RuntimeReference *own = scalars ? NULL                                                           \
        : elements(w, "fmi3" #name, "valueReferences", valueReferences, nValueReferences, nValues, &count, \
                   w->expanded[which].elements);                                                     \
    if (!scalars && !own) return fmi3Error;                                                          \
    const RuntimeReference *all = scalars ? valueReferences : own;                                   \
    remember(w, which, valueReferences, nValueReferences, all, count);                               \
    fmi3Status status = finish(w, runtime_function(w->runtime, all, count, values), 0);             \
    if (own != w->expanded[which].elements) free(own);                                               \
    return status

/* A Float64 call on its common path: in an `allowed` state, the value references of the last call of its kind (`which`)
 * with as many values, taken as the runs they were checked to stand for. Any other call takes the whole path (`slow`:
 * every check, a message for each). */
#define FLOAT64_CALL(allowed, which, runtime_runs, slow)                                             \
    Instance *w = glue_find(instance);                                                               \
    if (w && (w->state & (allowed))) {                                                               \
        const struct Expanded *e = &w->expanded[which];                                              \
        if (nValueReferences == e->n && nValues == e->count && valueReferences && values             \
            && !memcmp(valueReferences, e->vr, nValueReferences * sizeof *valueReferences)) {        \
            w->logged = fmi3OK;                                                                      \
            RETURN_FINISHED(runtime_runs(w->runtime, e->first, e->length, e->runs, values));         \
        }                                                                                            \
    }                                                                                                \
    return slow(instance, valueReferences, nValueReferences, values, nValues)

/* fmi3GetFloat64 off its common path: every check, arrays by their elements */
NOINLINE static fmi3Status get_float64(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                       size_t nValueReferences, fmi3Float64 values[], size_t nValues) {
    ENTER("fmi3GetFloat64", GETTABLE);
    FLOAT64_BODY(GetFloat64, fmi3Float64, runtime_get_real, 0); /* time too */
}

fmi3Status fmi3GetFloat64(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences,
                          fmi3Float64 values[], size_t nValues) {
    FLOAT64_CALL(GETTABLE, 0, runtime_get_real_runs, get_float64);
}

/* fmi3SetFloat64 inside the intermediate update where the inputs are asked for (SETTABLE_IN_CALLBACK): inputs only. */
static fmi3Status set_inputs(Instance *w, const fmi3ValueReference valueReferences[], size_t nValueReferences,
                             const fmi3Float64 values[], size_t nValues) {
    for (size_t i = 0; valueReferences && i < nValueReferences && i < MAX_VARIABLES; ++i) {
        const char *name;
        int real, causality;
        if (runtime_variable(w->runtime, valueReferences[i], &name, &real, &causality) != 0 || causality != 1)
            return refuse(w, "fmi3SetFloat64", "valueReferences[%zu] = %u is not an input: only inputs may be set "
                          "in the intermediate update", i, valueReferences[i]);
    }
    FLOAT64_BODY(SetFloat64, const fmi3Float64, runtime_set_real, 1);
}

/* set_inputs, a refusal failing the step that asked (refresh_inputs) */
NOINLINE static fmi3Status set_intermediate(Instance *w, const fmi3ValueReference valueReferences[], size_t nValueReferences,
                                   const fmi3Float64 values[], size_t nValues) {
    const fmi3Status status = set_inputs(w, valueReferences, nValueReferences, values, nValues);
    if (status > fmi3Warning && w->logged < fmi3Error) w->logged = fmi3Error;
    return status;
}

/* fmi3SetFloat64 off its common path: every check, arrays by their elements, the intermediate update's inputs */
NOINLINE static fmi3Status set_float64(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                       size_t nValueReferences, const fmi3Float64 values[], size_t nValues) {
    Instance *w = glue_find(instance);
    if (!w) return fmi3Error;
    if (!(w->state & SETTABLE)) {
        if (w->state == SETTABLE_IN_CALLBACK) {
            w->logged = fmi3OK;
            return set_intermediate(w, valueReferences, nValueReferences, values, nValues);
        }
        return refused_entry(w, "fmi3SetFloat64", SETTABLE, 1, ""); /* never time */
    }
    w->logged = fmi3OK;
    FLOAT64_BODY(SetFloat64, const fmi3Float64, runtime_set_real, 1);
}

fmi3Status fmi3SetFloat64(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences,
                          const fmi3Float64 values[], size_t nValues) {
    FLOAT64_CALL(SETTABLE, 1, runtime_set_real_runs, set_float64);
}
#undef FLOAT64_CALL
#undef FLOAT64_BODY

_Static_assert(sizeof(fmi3Int32) == sizeof(int), "an FMI Int32 is the runtime's int");
_Static_assert(sizeof(fmi3ValueReference) == sizeof(RuntimeReference), "a value reference is the runtime's");

fmi3Status fmi3GetInt32(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences,
                        fmi3Int32 values[], size_t nValues) {
    ENTER("fmi3GetInt32", GETTABLE);
    ARRAYS("fmi3GetInt32");
    return finish(w, runtime_get_integer(w->runtime, valueReferences, nValueReferences, (int *)values), 0);
}

fmi3Status fmi3SetInt32(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences,
                        const fmi3Int32 values[], size_t nValues) {
    ENTER("fmi3SetInt32", SETTABLE);
    ARRAYS("fmi3SetInt32");
    return finish(w, runtime_set_integer(w->runtime, valueReferences, nValueReferences, (const int *)values), 0);
}

fmi3Status fmi3GetBoolean(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences,
                          fmi3Boolean values[], size_t nValues) {
    ENTER("fmi3GetBoolean", GETTABLE);
    ARRAYS("fmi3GetBoolean");
    int *truth = malloc(nValueReferences * sizeof *truth);
    NEED(truth, "fmi3GetBoolean", "out of memory");
    fmi3Status status = finish(w, runtime_get_boolean(w->runtime, valueReferences, nValueReferences, truth), 0);
    if (status <= fmi3Warning)
        for (size_t i = 0; i < nValueReferences; ++i) values[i] = truth[i] != 0;
    free(truth);
    return status;
}

fmi3Status fmi3SetBoolean(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences,
                          const fmi3Boolean values[], size_t nValues) {
    ENTER("fmi3SetBoolean", SETTABLE);
    ARRAYS("fmi3SetBoolean");
    int *truth = malloc(nValueReferences * sizeof *truth);
    NEED(truth, "fmi3SetBoolean", "out of memory");
    for (size_t i = 0; i < nValueReferences; ++i) truth[i] = values[i] ? 1 : 0;
    fmi3Status status = finish(w, runtime_set_boolean(w->runtime, valueReferences, nValueReferences, truth), 0);
    free(truth);
    return status;
}

fmi3Status fmi3GetString(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences,
                         fmi3String values[], size_t nValues) {
    ENTER("fmi3GetString", GETTABLE);
    ARRAYS("fmi3GetString");
    return finish(w, runtime_get_string(w->runtime, valueReferences, nValueReferences, values), 0);
}

fmi3Status fmi3SetString(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences,
                         const fmi3String values[], size_t nValues) {
    ENTER("fmi3SetString", SETTABLE);
    ARRAYS("fmi3SetString");
    for (size_t i = 0; i < nValueReferences; ++i) {
        NEED(values[i], "fmi3SetString", "values[%zu] (valueReference %u) is NULL", i, valueReferences[i]);
        NEED(glue_utf8_valid((const unsigned char *)values[i]), "fmi3SetString",
             "values[%zu] (valueReference %u) is not valid UTF-8", i, valueReferences[i]);
    }
    return finish(w, runtime_set_string(w->runtime, valueReferences, nValueReferences, values), 0);
}

/* The types this FMU has no variable of: a call with value references is refused, naming the type. */
#define NONE_OF(name, type, allowed, kind)                                                           \
    fmi3Status fmi3##name(fmi3Instance instance, const fmi3ValueReference valueReferences[],         \
                          size_t nValueReferences, type values[], size_t nValues) {                  \
        ENTER("fmi3" #name, allowed);                                                                \
        (void)valueReferences, (void)values, (void)nValues;                                         \
        NEED(nValueReferences == 0, "fmi3" #name, "valueReference %u: this FMU has no " kind " variables", \
             valueReferences ? valueReferences[0] : 0u);                                             \
        return fmi3OK;                                                                               \
    }
NONE_OF(GetFloat32, fmi3Float32, GETTABLE, "Float32")
NONE_OF(GetInt8, fmi3Int8, GETTABLE, "Int8")
NONE_OF(GetUInt8, fmi3UInt8, GETTABLE, "UInt8")
NONE_OF(GetInt16, fmi3Int16, GETTABLE, "Int16")
NONE_OF(GetUInt16, fmi3UInt16, GETTABLE, "UInt16")
NONE_OF(GetUInt32, fmi3UInt32, GETTABLE, "UInt32")
NONE_OF(GetInt64, fmi3Int64, GETTABLE, "Int64")
NONE_OF(GetUInt64, fmi3UInt64, GETTABLE, "UInt64")
NONE_OF(SetFloat32, const fmi3Float32, SETTABLE, "Float32")
NONE_OF(SetInt8, const fmi3Int8, SETTABLE, "Int8")
NONE_OF(SetUInt8, const fmi3UInt8, SETTABLE, "UInt8")
NONE_OF(SetInt16, const fmi3Int16, SETTABLE, "Int16")
NONE_OF(SetUInt16, const fmi3UInt16, SETTABLE, "UInt16")
NONE_OF(SetUInt32, const fmi3UInt32, SETTABLE, "UInt32")
NONE_OF(SetInt64, const fmi3Int64, SETTABLE, "Int64")
NONE_OF(SetUInt64, const fmi3UInt64, SETTABLE, "UInt64")
#undef NONE_OF

fmi3Status fmi3GetClock(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences,
                        fmi3Clock values[]) {
    ENTER("fmi3GetClock", GETTABLE);
    (void)values;
    NEED(nValueReferences == 0, "fmi3GetClock", "valueReference %u: this FMU has no clocks",
         valueReferences ? valueReferences[0] : 0u);
    return fmi3OK;
}

fmi3Status fmi3SetClock(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences,
                        const fmi3Clock values[]) {
    ENTER("fmi3SetClock", SETTABLE);
    (void)values;
    NEED(nValueReferences == 0, "fmi3SetClock", "valueReference %u: this FMU has no clocks",
         valueReferences ? valueReferences[0] : 0u);
    return fmi3OK;
}

fmi3Status fmi3GetBinary(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences,
                         size_t valueSizes[], fmi3Binary values[], size_t nValues) {
    ENTER("fmi3GetBinary", GETTABLE);
    (void)valueSizes, (void)values, (void)nValues;
    NEED(nValueReferences == 0, "fmi3GetBinary", "valueReference %u: this FMU has no Binary variables",
         valueReferences ? valueReferences[0] : 0u);
    return fmi3OK;
}

fmi3Status fmi3SetBinary(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences,
                         const size_t valueSizes[], const fmi3Binary values[], size_t nValues) {
    ENTER("fmi3SetBinary", SETTABLE);
    (void)valueSizes, (void)values, (void)nValues;
    NEED(nValueReferences == 0, "fmi3SetBinary", "valueReference %u: this FMU has no Binary variables",
         valueReferences ? valueReferences[0] : 0u);
    return fmi3OK;
}

fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance instance, fmi3ValueReference valueReference,
                                               size_t *nDependencies) {
    ENTER("fmi3GetNumberOfVariableDependencies", LIVE);
    (void)valueReference, (void)nDependencies;
    return refuse(w, "fmi3GetNumberOfVariableDependencies", "not supported (providesPerElementDependencies = false: "
                  "the model description's ModelStructure holds the dependencies)");
}

fmi3Status fmi3GetVariableDependencies(fmi3Instance instance, fmi3ValueReference dependent,
                                       size_t elementIndicesOfDependent[], fmi3ValueReference independents[],
                                       size_t elementIndicesOfIndependents[], fmi3DependencyKind dependencyKinds[],
                                       size_t nDependencies) {
    ENTER("fmi3GetVariableDependencies", LIVE);
    (void)dependent, (void)elementIndicesOfDependent, (void)independents, (void)elementIndicesOfIndependents;
    (void)dependencyKinds, (void)nDependencies;
    return refuse(w, "fmi3GetVariableDependencies", "not supported (providesPerElementDependencies = false: the "
                  "model description's ModelStructure holds the dependencies)");
}

/* --- FMU states ------------------------------------------------------------------------------------------------ */

/* A serialized state: glue_write_state's header with this magic, then the runtime's bytes. */
#define STATE_MAGIC "mechfmu3"
#define HEADER_SIZE GLUE_HEADER_SIZE

static Saved *find_saved(const Instance *w, fmi3FMUState state) {
    Saved *s = w->saved;
    while (s && s != (Saved *)state) s = s->next;
    return s;
}

#define KNOWN_STATE(function, state)                                                                 \
    Saved *saved = find_saved(w, state);                                                             \
    NEED(saved, function, "%s is not an FMU state of this instance (never handed out, or already freed)", \
         state ? "the FMUState" : "FMUState NULL")

static fmi3Status track(Instance *w, void *object, int state, fmi3FMUState *out) {
    Saved *s = calloc(1, sizeof *s);
    if (!s) {
        runtime_free_state(w->runtime, object);
        return refuse(w, "fmi3GetFMUState", "out of memory");
    }
    s->object = object;
    s->state = state;
    s->next = w->saved;
    w->saved = s;
    *out = s;
    return fmi3OK;
}

#define STATEFUL (LIVE & ~(ERROR))

fmi3Status fmi3GetFMUState(fmi3Instance instance, fmi3FMUState *FMUState) {
    ENTER("fmi3GetFMUState", STATEFUL);
    NEED(FMUState, "fmi3GetFMUState", "FMUState* is NULL");
    void *fresh = NULL;
    fmi3Status status = finish(w, runtime_get_state(w->runtime, &fresh), 0);
    if (status > fmi3Warning) return status;
    Saved *old = *FMUState ? find_saved(w, *FMUState) : NULL;
    if (old) { /* FMI: *FMUState is a state of ours to be overwritten */
        runtime_free_state(w->runtime, old->object);
        old->object = fresh, old->state = w->state, old->object_size = 0;
        return status;
    }
    fmi3Status tracked = track(w, fresh, w->state, FMUState);
    return tracked > status ? tracked : status;
}

fmi3Status fmi3SetFMUState(fmi3Instance instance, fmi3FMUState FMUState) {
    ENTER("fmi3SetFMUState", STATEFUL);
    KNOWN_STATE("fmi3SetFMUState", FMUState);
    return finish(w, runtime_set_state(w->runtime, saved->object), saved->state);
}

fmi3Status fmi3FreeFMUState(fmi3Instance instance, fmi3FMUState *FMUState) {
    ENTER("fmi3FreeFMUState", LIVE);
    NEED(FMUState, "fmi3FreeFMUState", "FMUState* is NULL");
    if (!*FMUState) return fmi3OK;
    KNOWN_STATE("fmi3FreeFMUState", *FMUState);
    Saved **link = &w->saved;
    while (*link != saved) link = &(*link)->next;
    *link = saved->next;
    runtime_free_state(w->runtime, saved->object);
    free(saved);
    *FMUState = NULL;
    return fmi3OK;
}

static fmi3Status serialized(Instance *w, void *object, char **bytes, size_t *size) {
    fmi3Status status = finish(w, runtime_serialize(w->runtime, object, bytes, size), 0);
    if (status > fmi3Warning) free(*bytes), *bytes = NULL;
    return status;
}

fmi3Status fmi3SerializedFMUStateSize(fmi3Instance instance, fmi3FMUState FMUState, size_t *size) {
    ENTER("fmi3SerializedFMUStateSize", LIVE);
    KNOWN_STATE("fmi3SerializedFMUStateSize", FMUState);
    NEED(size, "fmi3SerializedFMUStateSize", "size is NULL");
    if (!saved->object_size) {
        char *bytes = NULL;
        size_t n = 0;
        fmi3Status status = serialized(w, saved->object, &bytes, &n);
        free(bytes);
        if (status > fmi3Warning) return status;
        saved->object_size = n;
    }
    *size = HEADER_SIZE + saved->object_size;
    return fmi3OK;
}

fmi3Status fmi3SerializeFMUState(fmi3Instance instance, fmi3FMUState FMUState, fmi3Byte serializedState[],
                                 size_t size) {
    ENTER("fmi3SerializeFMUState", LIVE);
    KNOWN_STATE("fmi3SerializeFMUState", FMUState);
    NEED(serializedState, "fmi3SerializeFMUState", "serializedState is NULL");
    char *body = NULL;
    size_t n = 0;
    fmi3Status status = serialized(w, saved->object, &body, &n);
    if (status > fmi3Warning) return status;
    if (size != HEADER_SIZE + n) {
        free(body);
        return refuse(w, "fmi3SerializeFMUState", "size = %zu, but fmi3SerializedFMUStateSize gives %zu", size,
                      HEADER_SIZE + n);
    }
    glue_write_state(serializedState, STATE_MAGIC, saved->state, body, n);
    free(body);
    return status;
}

/* The header, then the body wholly by the runtime (which hands back a rejection, not a state, for one it does not
 * accept: its serialization is a NUL byte and the reason), then the body's phase against the header's state and this
 * instance's interface. Nothing touches the instance until fmi3SetFMUState of an accepted state. */
fmi3Status fmi3DeserializeFMUState(fmi3Instance instance, const fmi3Byte serializedState[], size_t size,
                                   fmi3FMUState *FMUState) {
    ENTER("fmi3DeserializeFMUState", LIVE);
    NEED(serializedState && FMUState, "fmi3DeserializeFMUState", "%s is NULL",
         serializedState ? "FMUState*" : "serializedState");
    const char *bytes = (const char *)serializedState;
    int kind = 0;
    const char *header = glue_read_state(serializedState, size, STATE_MAGIC, &kind);
    NEED(!header || strcmp(header, "checksum"), "fmi3DeserializeFMUState", "the state's checksum does not match its "
         "%zu bytes (changed or damaged after it was serialized): refused", size);
    NEED(!header, "fmi3DeserializeFMUState", "the %zu bytes are not a serialized state of this FMU (no mechfmu FMI 3.0 "
         "state header)", size);
    NEED(kind & STATEFUL, "fmi3DeserializeFMUState", "the state header names no FMI state (%d)",
         serializedState[GLUE_MAGIC_SIZE]);
    NEED(!(kind & (w->model_exchange ? (STEP_MODE | STEP_DISCARDED) : CONTINUOUS_TIME_MODE)),
         "fmi3DeserializeFMUState", "the state was saved by a %s instance (in %s); this instance is %s",
         w->model_exchange ? "co-simulation" : "Model Exchange", state_name(kind),
         w->model_exchange ? "Model Exchange" : "co-simulation");
    void *fresh = NULL;
    fmi3Status status = finish(w, runtime_deserialize(w->runtime, bytes + HEADER_SIZE, size - HEADER_SIZE, &fresh),
                               0);
    if (status > fmi3Warning) return status;
    char *check = NULL;
    size_t n = 0;
    status = serialized(w, fresh, &check, &n);
    if (status > fmi3Warning || n == 0 || check[0] == '\0') {
        char *reason = status <= fmi3Warning && n > 1 ? platform_strndup(check + 1, n - 1) : NULL;
        fmi3Status refused = w->state == FATAL ? fmi3Fatal : refuse(w, "fmi3DeserializeFMUState", "%s",
            reason ? reason : "the component could not check the state");
        free(reason), free(check);
        runtime_free_state(w->runtime, fresh);
        return refused;
    }
    const char *contradiction = glue_contradiction(check, n, w->model_exchange, kind, INSTANTIATED | INITIALIZATION_MODE,
                                                   EVENT_MODE | STEP_MODE | STEP_DISCARDED | CONTINUOUS_TIME_MODE);
    free(check);
    if (contradiction) {
        runtime_free_state(w->runtime, fresh);
        return refuse(w, "fmi3DeserializeFMUState", "the state's header says %s, but %s: refused", state_name(kind),
                      contradiction);
    }
    fmi3Status tracked = track(w, fresh, kind, FMUState);
    if (tracked == fmi3OK) ((Saved *)*FMUState)->object_size = n;
    return tracked > status ? tracked : status;
}

/* --- derivatives ----------------------------------------------------------------------------------------------- */

#define DIFFERENTIABLE (INITIALIZATION_MODE | EVENT_MODE | STEP_MODE | CONTINUOUS_TIME_MODE | TERMINATED)

/* The runtime's directional derivative: d unknowns / d knowns in the direction `seed`, into `out`. */
static fmi3Status directional(Instance *w, const char *function, const RuntimeReference unknowns[], size_t nUnknowns,
                              const RuntimeReference knowns[], size_t nKnowns, const double seed[], double out[]) {
    size_t count = 2 + nUnknowns + 2 * nKnowns;
    double *in = malloc(count * sizeof *in);
    NEED(in, function, "out of memory");
    in[0] = (double)nUnknowns, in[1] = (double)nKnowns;
    for (size_t i = 0; i < nUnknowns; ++i) in[2 + i] = unknowns[i];
    for (size_t j = 0; j < nKnowns; ++j) in[2 + nUnknowns + j] = knowns[j], in[2 + nUnknowns + nKnowns + j] = seed[j];
    fmi3Status status = finish(w, runtime_model_exchange(w->runtime, "directional_derivative", function, in, count,
                                                         out, nUnknowns), 0);
    free(in);
    return status;
}

#define DERIVATIVE_ARRAYS(function)                                                                  \
    NEED((unknowns || nUnknowns == 0) && (knowns || nKnowns == 0) && (seed || nSeed == 0)           \
         && (sensitivity || nSensitivity == 0), function, "an array is NULL with its count > 0");   \
    NEED(nUnknowns <= MAX_VARIABLES && nKnowns <= MAX_VARIABLES, function,                           \
         "nUnknowns = %zu, nKnowns = %zu: more than any FMU has (%d)", nUnknowns, nKnowns, MAX_VARIABLES)

/* d unknowns / d knowns in the direction `seed` (runtime value references, one value each) into `sensitivity`. */
static fmi3Status directional_product(Instance *w, const RuntimeReference unknowns[], size_t nUnknowns,
                                      const RuntimeReference knowns[], size_t nKnowns, const fmi3Float64 seed[],
                                      fmi3Float64 sensitivity[]) {
    if (!nUnknowns) return fmi3OK;
    double *out = malloc(nUnknowns * sizeof *out);
    NEED(out, "fmi3GetDirectionalDerivative", "out of memory");
    fmi3Status status = directional(w, "fmi3GetDirectionalDerivative", unknowns, nUnknowns, knowns, nKnowns, seed,
                                    out);
    if (status <= fmi3Warning) memcpy(sensitivity, out, nUnknowns * sizeof *out);
    free(out);
    return status;
}

/* The transposed product: sensitivity[j] = sum over i of seed[i] * d unknowns[i] / d knowns[j], a column of
 * partials per known (the runtime's analytic ones where it has them). */
static fmi3Status adjoint_product(Instance *w, const RuntimeReference unknowns[], size_t nUnknowns,
                                  const RuntimeReference knowns[], size_t nKnowns, const fmi3Float64 seed[],
                                  fmi3Float64 sensitivity[]) {
    if (!nKnowns) return fmi3OK;
    double *column = nUnknowns ? malloc(nUnknowns * sizeof *column) : NULL, *result = malloc(nKnowns * sizeof *result);
    if ((nUnknowns && !column) || !result) {
        free(column), free(result);
        return refuse(w, "fmi3GetAdjointDerivative", "out of memory");
    }
    const double one = 1.0;
    fmi3Status worst = fmi3OK;
    for (size_t j = 0; j < nKnowns && worst <= fmi3Warning; ++j) {
        fmi3Status status = nUnknowns ? directional(w, "fmi3GetAdjointDerivative", unknowns, nUnknowns, &knowns[j], 1,
                                                    &one, column) : fmi3OK;
        double sum = 0.0;
        for (size_t i = 0; i < nUnknowns && status <= fmi3Warning; ++i) sum += seed[i] * column[i];
        result[j] = sum;
        if (status > worst) worst = status;
    }
    if (worst <= fmi3Warning) memcpy(sensitivity, result, nKnowns * sizeof *result);
    free(column), free(result);
    return worst;
}

/* A derivative call's value references as the runtime's (every array's elements for its value reference: the seed
 * and the sensitivity hold an array's elements in order, as FMI 3.0 lays them out), then the product. */
static fmi3Status derivative(Instance *w, int adjoint, const fmi3ValueReference unknowns[], size_t nUnknowns,
                             const fmi3ValueReference knowns[], size_t nKnowns, const fmi3Float64 seed[], size_t nSeed,
                             fmi3Float64 sensitivity[], size_t nSensitivity) {
    const char *function = adjoint ? "fmi3GetAdjointDerivative" : "fmi3GetDirectionalDerivative";
    size_t n_unknown_values = adjoint ? nSeed : nSensitivity, n_known_values = adjoint ? nSensitivity : nSeed;
    if (!w->lengths) {
        NEED(n_known_values == nKnowns && n_unknown_values == nUnknowns, function, "nSeed = %zu and nSensitivity = %zu "
             "must equal %s = %zu and %s = %zu (this FMU's variables are scalars)", nSeed, nSensitivity,
             adjoint ? "nUnknowns" : "nKnowns", adjoint ? nUnknowns : nKnowns, adjoint ? "nKnowns" : "nUnknowns",
             adjoint ? nKnowns : nUnknowns);
        return (adjoint ? adjoint_product : directional_product)(w, unknowns, nUnknowns, knowns, nKnowns, seed,
                                                                  sensitivity);
    }
    size_t nu, nk;
    RuntimeReference local_u[LOCAL_ELEMENTS], local_k[LOCAL_ELEMENTS];
    RuntimeReference *u = elements(w, function, "unknowns", unknowns, nUnknowns, n_unknown_values, &nu, local_u);
    if (!u) return fmi3Error;
    RuntimeReference *k = elements(w, function, "knowns", knowns, nKnowns, n_known_values, &nk, local_k);
    fmi3Status status = !k ? fmi3Error
                           : (adjoint ? adjoint_product : directional_product)(w, u, nu, k, nk, seed, sensitivity);
    if (u != local_u) free(u);
    if (k && k != local_k) free(k);
    return status;
}

fmi3Status fmi3GetDirectionalDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[], size_t nUnknowns,
                                        const fmi3ValueReference knowns[], size_t nKnowns, const fmi3Float64 seed[],
                                        size_t nSeed, fmi3Float64 sensitivity[], size_t nSensitivity) {
    ENTER("fmi3GetDirectionalDerivative", DIFFERENTIABLE);
    DERIVATIVE_ARRAYS("fmi3GetDirectionalDerivative");
    return derivative(w, 0, unknowns, nUnknowns, knowns, nKnowns, seed, nSeed, sensitivity, nSensitivity);
}

fmi3Status fmi3GetAdjointDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[], size_t nUnknowns,
                                    const fmi3ValueReference knowns[], size_t nKnowns, const fmi3Float64 seed[],
                                    size_t nSeed, fmi3Float64 sensitivity[], size_t nSensitivity) {
    ENTER("fmi3GetAdjointDerivative", DIFFERENTIABLE);
    DERIVATIVE_ARRAYS("fmi3GetAdjointDerivative");
    return derivative(w, 1, unknowns, nUnknowns, knowns, nKnowns, seed, nSeed, sensitivity, nSensitivity);
}

fmi3Status fmi3GetOutputDerivatives(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                    size_t nValueReferences, const fmi3Int32 orders[], fmi3Float64 values[],
                                    size_t nValues) {
    ENTER("fmi3GetOutputDerivatives", GETTABLE);
    (void)valueReferences, (void)nValueReferences, (void)orders, (void)values, (void)nValues;
    return refuse(w, "fmi3GetOutputDerivatives", "not supported (maxOutputDerivativeOrder = 0)");
}

/* --- clocks and partitions: none ------------------------------------------------------------------------------- */

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter" /* the arguments of the calls this FMU refuses whole */

#define NO_CLOCKS(name, ...)                                                                         \
    fmi3Status fmi3##name(fmi3Instance instance, __VA_ARGS__) {                                      \
        ENTER("fmi3" #name, LIVE);                                                                   \
        return refuse(w, "fmi3" #name, "this FMU has no clocks");                                    \
    }
NO_CLOCKS(GetIntervalDecimal, const fmi3ValueReference valueReferences[], size_t nValueReferences,
          fmi3Float64 intervals[], fmi3IntervalQualifier qualifiers[])
NO_CLOCKS(GetIntervalFraction, const fmi3ValueReference valueReferences[], size_t nValueReferences,
          fmi3UInt64 counters[], fmi3UInt64 resolutions[], fmi3IntervalQualifier qualifiers[])
NO_CLOCKS(GetShiftDecimal, const fmi3ValueReference valueReferences[], size_t nValueReferences, fmi3Float64 shifts[])
NO_CLOCKS(GetShiftFraction, const fmi3ValueReference valueReferences[], size_t nValueReferences,
          fmi3UInt64 counters[], fmi3UInt64 resolutions[])
NO_CLOCKS(SetIntervalDecimal, const fmi3ValueReference valueReferences[], size_t nValueReferences,
          const fmi3Float64 intervals[])
NO_CLOCKS(SetIntervalFraction, const fmi3ValueReference valueReferences[], size_t nValueReferences,
          const fmi3UInt64 counters[], const fmi3UInt64 resolutions[])
NO_CLOCKS(SetShiftDecimal, const fmi3ValueReference valueReferences[], size_t nValueReferences,
          const fmi3Float64 shifts[])
NO_CLOCKS(SetShiftFraction, const fmi3ValueReference valueReferences[], size_t nValueReferences,
          const fmi3UInt64 counters[], const fmi3UInt64 resolutions[])
NO_CLOCKS(ActivateModelPartition, fmi3ValueReference clockReference, fmi3Float64 activationTime)
#undef NO_CLOCKS
#pragma GCC diagnostic pop

fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance instance) {
    ENTER("fmi3EvaluateDiscreteStates", INITIALIZATION_MODE | EVENT_MODE | STEP_MODE | CONTINUOUS_TIME_MODE);
    return fmi3OK; /* no clocked partitions: nothing to evaluate */
}

/* --- event mode ------------------------------------------------------------------------------------------------ */

fmi3Status fmi3UpdateDiscreteStates(fmi3Instance instance, fmi3Boolean *discreteStatesNeedUpdate,
                                    fmi3Boolean *terminateSimulation, fmi3Boolean *nominalsOfContinuousStatesChanged,
                                    fmi3Boolean *valuesOfContinuousStatesChanged, fmi3Boolean *nextEventTimeDefined,
                                    fmi3Float64 *nextEventTime) {
    ENTER("fmi3UpdateDiscreteStates", EVENT_MODE);
    NEED(discreteStatesNeedUpdate && terminateSimulation && nominalsOfContinuousStatesChanged
         && valuesOfContinuousStatesChanged && nextEventTimeDefined && nextEventTime, "fmi3UpdateDiscreteStates",
         "an output argument is NULL");
    double update[3] = {0.0, 0.0, 0.0}; /* runtime.h's flags, next event time defined, next event time */
    fmi3Status status = w->model_exchange || w->discrete_in_event_mode
        ? finish(w, runtime_model_exchange(w->runtime, "me_new_discrete_states", "fmi3UpdateDiscreteStates", NULL, 0,
                                           update, 3), 0)
        : finish(w, runtime_model_exchange(w->runtime, "next_time_event", "fmi3UpdateDiscreteStates", NULL, 0,
                                           update + 1, 2), 0);
    if (status > fmi3Warning) return status;
    const int flags = update[0] >= 0.0 && update[0] <= 3.0 ? (int)update[0] : 0;
    *discreteStatesNeedUpdate = (flags & (int)RUNTIME_DISCRETE_STATES_NEEDED) != 0;
    *terminateSimulation = *nominalsOfContinuousStatesChanged = false;
    *valuesOfContinuousStatesChanged = (flags & (int)RUNTIME_STATES_CHANGED) != 0;
    *nextEventTimeDefined = update[1] != 0.0;
    *nextEventTime = update[2];
    return status;
}

/* --- Model Exchange -------------------------------------------------------------------------------------------- */

fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance instance) {
    ENTER_ME("fmi3EnterContinuousTimeMode", EVENT_MODE);
    w->state = CONTINUOUS_TIME_MODE;
    return fmi3OK;
}

fmi3Status fmi3CompletedIntegratorStep(fmi3Instance instance, fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi3Boolean *enterEventMode, fmi3Boolean *terminateSimulation) {
    ENTER_ME("fmi3CompletedIntegratorStep", CONTINUOUS_TIME_MODE);
    NEED(enterEventMode && terminateSimulation, "fmi3CompletedIntegratorStep", "%s is NULL",
         enterEventMode ? "terminateSimulation" : "enterEventMode");
    (void)noSetFMUStatePriorToCurrentPoint;
    fmi3Status status = finish(w, runtime_model_exchange(w->runtime, "me_completed_step", "fmi3CompletedIntegratorStep",
                                                         NULL, 0, NULL, 0), 0);
    *enterEventMode = *terminateSimulation = false;
    return status;
}

fmi3Status fmi3SetTime(fmi3Instance instance, fmi3Float64 time) {
    ENTER_ME("fmi3SetTime", EVENT_MODE | CONTINUOUS_TIME_MODE);
    NEED(time == time && time - time == 0, "fmi3SetTime", "time = %s must be finite",
         time > 0 ? "inf" : time < 0 ? "-inf" : "nan");
    return finish(w, runtime_model_exchange(w->runtime, "me_set_time", "fmi3SetTime", &time, 1, NULL, 0), 0);
}

fmi3Status fmi3SetContinuousStates(fmi3Instance instance, const fmi3Float64 continuousStates[],
                                   size_t nContinuousStates) {
    ENTER_ME("fmi3SetContinuousStates", CONTINUOUS_TIME_MODE);
    NEED(continuousStates || nContinuousStates == 0, "fmi3SetContinuousStates",
         "continuousStates is NULL with nContinuousStates = %zu", nContinuousStates);
    NEED(nContinuousStates <= MAX_VARIABLES, "fmi3SetContinuousStates", "nContinuousStates = %zu: more than any FMU "
         "has (%d)", nContinuousStates, MAX_VARIABLES);
    return finish(w, runtime_model_exchange(w->runtime, "me_set_states", "fmi3SetContinuousStates", continuousStates,
                                            nContinuousStates, NULL, 0), 0);
}

#define EVALUABLE (INITIALIZATION_MODE | EVENT_MODE | CONTINUOUS_TIME_MODE | TERMINATED | ERROR)
#define EVALUATE(name, array, count, method, allowed)                                                \
    fmi3Status fmi3##name(fmi3Instance instance, fmi3Float64 array[], size_t count) {                \
        ENTER_ME("fmi3" #name, allowed);                                                             \
        NEED(array || count == 0, "fmi3" #name, #array " is NULL with " #count " = %zu", count);      \
        NEED(count <= MAX_VARIABLES, "fmi3" #name, #count " = %zu: more than any FMU has (%d)", count, \
             MAX_VARIABLES);                                                                         \
        double *values = count ? malloc(count * sizeof *values) : NULL;                              \
        NEED(values || count == 0, "fmi3" #name, "out of memory");                                   \
        fmi3Status status = finish(w, runtime_model_exchange(w->runtime, method, "fmi3" #name, NULL, 0, values, \
                                                             count), 0);                             \
        if (status <= fmi3Warning && count) memcpy(array, values, count * sizeof *values);          \
        free(values);                                                                                \
        return status;                                                                               \
    }
EVALUATE(GetContinuousStateDerivatives, derivatives, nContinuousStates, "me_derivatives", EVALUABLE)
EVALUATE(GetEventIndicators, eventIndicators, nEventIndicators, "me_indicators", EVALUABLE)
EVALUATE(GetContinuousStates, continuousStates, nContinuousStates, "me_get_states", EVALUABLE | INSTANTIATED)
EVALUATE(GetNominalsOfContinuousStates, nominals, nContinuousStates, "me_nominals", EVALUABLE | INSTANTIATED)
#undef EVALUATE

/* The number of continuous states (`which` 1) or of event indicators (2). */
static fmi3Status count_of(fmi3Instance instance, const char *function, int which, size_t *count) {
    ENTER(function, LIVE);
    NEED(count, function, "the count's pointer is NULL");
    double sizes[4];
    fmi3Status status = finish(w, runtime_model_exchange(w->runtime, "sizes", function, NULL, 0, sizes, 4), 0);
    if (status <= fmi3Warning) *count = (size_t)sizes[which];
    return status;
}

fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance instance, size_t *nContinuousStates) {
    return count_of(instance, "fmi3GetNumberOfContinuousStates", 1, nContinuousStates);
}

fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance instance, size_t *nEventIndicators) {
    return count_of(instance, "fmi3GetNumberOfEventIndicators", 2, nEventIndicators);
}

/* --- co-simulation --------------------------------------------------------------------------------------------- */

fmi3Status fmi3EnterStepMode(fmi3Instance instance) {
    ENTER_CS("fmi3EnterStepMode", EVENT_MODE);
    w->state = STEP_MODE;
    return fmi3OK;
}

/* The importer's intermediate update at the end of a step from `start` to `end` (the outputs readable there, no
 * call but the fmi3Get functions), and the early return it asks for: the step taken again from its start to that
 * time, then the intermediate update there, and so on while the importer asks for another time inside the whole step
 * (a root finder brackets an event so, no state restored); at most EARLY_ROUNDS times. Apart from fmi3DoStep, so
 * that its common path stays small. */
#define EARLY_ROUNDS 200
NOINLINE static fmi3Status intermediate_update(Instance *w, double currentCommunicationPoint, double end, fmi3Status status,
                                      fmi3Boolean *earlyReturn, fmi3Float64 *lastSuccessfulTime) {
    double now = end; /* where the step ends now */
    for (int round = 0; round < EARLY_ROUNDS; ++round) {
        fmi3Boolean requested = false;
        fmi3Float64 at = now;
        fmi3Status logged = w->logged;
        const int state = w->state;
        w->state = GETTABLE_IN_CALLBACK;
        w->intermediate_update(w->environment, now, false, true, true, w->early_return_allowed, &requested, &at);
        if (w->state == GETTABLE_IN_CALLBACK) w->state = state; /* else a call there failed: its state stays */
        w->logged = logged;
        if (!(requested && w->early_return_allowed) || at == now || !(at < end)) return status;
        if (!(at > currentCommunicationPoint)) { /* not inside the step: it ends where it is */
            char when[40], start[40], text[400];
            native_format_g(at, 17, when, sizeof when);
            native_format_g(currentCommunicationPoint, 17, start, sizeof start);
            snprintf(text, sizeof text, "%s: fmi3DoStep: earlyReturnTime = %s is not after the step's start %s: the "
                     "step ends where it is", w->name, when, start);
            host_log(w, fmi3Warning, "logStatusWarning", text);
            return fmi3Warning;
        }
        fmi3Status shortened = finish(w, runtime_shorten_step(w->runtime, at - currentCommunicationPoint), STEP_MODE);
        if (shortened > fmi3Warning) return shortened;
        double sizes[4];
        if (runtime_model_exchange(w->runtime, "sizes", "fmi3DoStep", NULL, 0, sizes, 4) == RUNTIME_OK)
            now = sizes[3]; /* the time the step ended at, to the bit */
        *earlyReturn = true;
        *lastSuccessfulTime = now;
        if (shortened > status) status = shortened;
    }
    return status;
}

/* The status of a step the runtime took (`done`), lastSuccessfulTime the step's start where it failed: *failed and
 * fmi3Discard (step discarded) or the failure's status, else OK or a warning. */
static fmi3Status step_status(Instance *w, RuntimeStatus done, int *failed) {
    *failed = 0;
    if (done == RUNTIME_OK && w->logged == fmi3OK) return fmi3OK;
    const double end = *w->step.last;
    *w->step.last = w->step.start;
    *failed = 1;
    if (done == RUNTIME_DISCARD && w->logged != fmi3Fatal) {
        w->state = STEP_DISCARDED;
        return fmi3Discard;
    }
    const fmi3Status status = finish(w, done, STEP_MODE);
    if (status > fmi3Warning) return status;
    *failed = 0;
    *w->step.last = end;
    return status;
}

/* fmi3DoStep after the runtime's step, off the common path (a refusal, a warning, a failure, an intermediate update):
 * the step's start and outputs as fmi3DoStep left them in the instance (w->step). */
NOINLINE static fmi3Status stepped(Instance *w, RuntimeStatus done) {
    const double start = w->step.start, end = *w->step.last; /* fmi3DoStep wrote the end there */
    int failed;
    const fmi3Status status = step_status(w, done, &failed);
    if (failed) return status;
    if (!w->intermediate_update) return status;
    return intermediate_update(w, start, end, status, w->step.early, w->step.last);
}

/* runtime_integrate's refresh: the importer's intermediate update asking for the inputs at a stage's `time`. A call
 * there that fails (an error logged) fails the step. */
static int refresh_inputs(void *environment, double time) {
    Instance *w = environment;
    fmi3Boolean requested = false;
    fmi3Float64 at = time;
    const int state = w->state;
    w->state = SETTABLE_IN_CALLBACK;
    w->intermediate_update(w->environment, time, true, true, false, false, &requested, &at);
    if (w->state == SETTABLE_IN_CALLBACK) w->state = state;
    return w->logged >= fmi3Error ? -1 : 0;
}

/* runtime_integrate's reached: the intermediate update at an internal step's end, and the early return it asks for. */
static int reached_time(void *environment, double time, double *at) {
    Instance *w = environment;
    fmi3Boolean requested = false;
    fmi3Float64 when = time;
    const int state = w->state;
    const fmi3Status logged = w->logged;
    w->state = GETTABLE_IN_CALLBACK;
    w->intermediate_update(w->environment, time, false, true, true, w->early_return_allowed, &requested, &when);
    if (w->state == GETTABLE_IN_CALLBACK) w->state = state;
    w->logged = logged;
    if (!(requested && w->early_return_allowed)) return 0;
    *at = when;
    return 1;
}

/* fmi3DoStep of an instance given its inputs inside the step (intermediate_inputs): integrated by the runtime, the
 * importer asked for the inputs at each stage and for an early return after each internal step. */
NOINLINE static fmi3Status integrated_step(Instance *w, double start, double size) {
    const RuntimeInputs inputs = {refresh_inputs, reached_time, w};
    double ended = start;
    const RuntimeStatus done = runtime_integrate(w->runtime, start, size, w->tolerance, &inputs, &ended);
    int failed;
    const fmi3Status status = step_status(w, done, &failed);
    if (failed) return status;
    *w->step.early = ended < start + size;
    *w->step.last = ended;
    return status;
}

/* fmi3DoStep of an instance with an intermediate update callback, off the common path. */
NOINLINE static fmi3Status updated_step(Instance *w, double start, double size, fmi3Boolean *earlyReturn,
                                        fmi3Float64 *lastSuccessfulTime) {
    w->step.start = start, w->step.early = earlyReturn, w->step.last = lastSuccessfulTime;
    if (w->intermediate_inputs) return integrated_step(w, start, size);
    return stepped(w, runtime_do_step(w->runtime, start, size));
}

/* fmi3DoStep after the runtime's step, off the common path: where the discrete state is held (event mode used), whether
 * it would change (eventHandlingNeeded), then as stepped. */
NOINLINE static fmi3Status stepped_in_event_mode(Instance *w, RuntimeStatus done) {
    if (done == RUNTIME_OK && w->discrete_in_event_mode) { /* the held discrete state would change: event mode */
        double needed = 0.0;
        if (runtime_model_exchange(w->runtime, "cs_event_needed", "fmi3DoStep", NULL, 0, &needed, 1) == RUNTIME_OK)
            *w->step.event = needed != 0.0;
    }
    if (done == RUNTIME_OK && w->logged == fmi3OK) return fmi3OK;
    return stepped(w, done);
}

/* fmi3DoStep with an output argument NULL: refused, the instance as it was. */
NOINLINE static fmi3Status null_output(fmi3Instance instance) {
    ENTER("fmi3DoStep", STEP_MODE);
    return refuse(w, "fmi3DoStep", "an output argument is NULL");
}

/* A step the runtime cannot take returns fmi3Discard (step mode after a discarded step: restore a state, or
 * terminate); arguments it refuses return fmi3Error with the state unchanged. At the step's end the importer's
 * intermediate update sees the outputs there; an early return it asks for ends the step at that time instead. The
 * outputs are written before the instance is looked up (on a refused call too), so that only the instance is kept
 * across the lookup and the step. */
fmi3Status fmi3DoStep(fmi3Instance instance, fmi3Float64 currentCommunicationPoint, fmi3Float64 communicationStepSize,
                      fmi3Boolean noSetFMUStatePriorToCurrentPoint, fmi3Boolean *eventHandlingNeeded,
                      fmi3Boolean *terminateSimulation, fmi3Boolean *earlyReturn, fmi3Float64 *lastSuccessfulTime) {
    (void)noSetFMUStatePriorToCurrentPoint;
    if (!(eventHandlingNeeded && terminateSimulation && earlyReturn && lastSuccessfulTime))
        return null_output(instance);
    *eventHandlingNeeded = *terminateSimulation = *earlyReturn = false;
    *lastSuccessfulTime = currentCommunicationPoint + communicationStepSize;
    ENTER("fmi3DoStep", STEP_MODE); /* a co-simulation instance's state only */
    if (w->intermediate_update) /* (intermediate_inputs only with it) */
        return updated_step(w, currentCommunicationPoint, communicationStepSize, earlyReturn, lastSuccessfulTime);
    w->step.start = currentCommunicationPoint, w->step.early = earlyReturn, w->step.last = lastSuccessfulTime;
    w->step.event = eventHandlingNeeded;
    const RuntimeStatus done = runtime_do_step(w->runtime, currentCommunicationPoint, communicationStepSize);
    if (done == RUNTIME_OK && w->logged == fmi3OK && !w->discrete_in_event_mode) return fmi3OK;
    return stepped_in_event_mode(w, done);
}
