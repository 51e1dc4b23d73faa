/* The runtime of a mechfmu FMU, which knows no FMI version: a glue layer per FMI version (fmi2_functions.c,
 * fmi3_functions.c) checks each call against its standard's state machine and passes it here. Two runtimes give it:
 * runtime.c runs a component class written in C (model.h; the shipped FMUs, no Python anywhere), python_runtime.c
 * runs a component's Python class in an embedded interpreter (an FMU built from a user's Python component).
 *
 * Types are plain C: a status is one of RuntimeStatus (FMI 2.0's and FMI 3.0's statuses have these values), a value
 * reference an unsigned int, a Boolean an int (0 or 1), an Integer an int (32 bits). Every message goes to the
 * instance's logger, finished (no format); a status other than RUNTIME_OK has been logged there. An FMI 3.0
 * instance's value reference after its variables' is the independent variable time (read as a Real, never set). */
#ifndef MECHFMU_RUNTIME_H
#define MECHFMU_RUNTIME_H

#include <stddef.h>

typedef enum { RUNTIME_OK, RUNTIME_WARNING, RUNTIME_DISCARD, RUNTIME_ERROR, RUNTIME_FATAL } RuntimeStatus;
/* me_new_discrete_states' first output: a sum of these flags (FMI's valuesOfContinuousStatesChanged and
 * newDiscreteStatesNeeded) */
#define RUNTIME_STATES_CHANGED 1.0
#define RUNTIME_DISCRETE_STATES_NEEDED 2.0
typedef unsigned int RuntimeReference;

/* Where an instance's messages go: log(environment, instance name, status, category, message). */
typedef struct {
    void (*log)(void *environment, const char *instance, RuntimeStatus status, const char *category,
                const char *message);
    void *environment;
} RuntimeLogger;

typedef struct Runtime Runtime;

/* The runtime_* calls are the API of the host library (runtime.c built with MECHFMU_HOST_LIBRARY): exported there,
 * internal to an FMU's binary. */
#if defined(MECHFMU_HOST_LIBRARY) && defined(_WIN32)
#define RUNTIME_API __declspec(dllexport)
#elif defined(MECHFMU_HOST_LIBRARY)
#define RUNTIME_API __attribute__((visibility("default")))
#else
#define RUNTIME_API
/* The phase of an FMU state of runtime.c (runtime_get_state or runtime_deserialize): 0 with its flags (initialized;
 * in Model Exchange use), or -1 for a refused serialized state. (The glue reads the same flags from the serialized
 * body.) */
int runtime_state_modes(void *state, int *initialized, int *model_exchange);

#endif

/* Ready the runtime for the model identifier `model` (the class's name); the Python runtime finds the Python C API
 * (made global by the glue) and starts an interpreter if the process has none. 0, or -1 with `error` set. */
RUNTIME_API int runtime_load(const char *model, char *error, size_t size);

/* A new instance, or NULL (logged); `fmi_version` (2 or 3) names the functions of messages ("fmi2DoStep",
 * "fmi3DoStep"); `resource_location` is the resources folder as the standard passes it (FMI 2.0: a file URI, FMI
 * 3.0: a path). */
RUNTIME_API Runtime *runtime_instantiate(const char *instance_name, const char *resource_location, int visible,
                                         const RuntimeLogger *logger, int fmi_version);
RUNTIME_API void runtime_free(Runtime *s);

RUNTIME_API RuntimeStatus runtime_setup_experiment(Runtime *s, double startTime);
/* A method without arguments (enter_initialization_mode, exit_initialization_mode, terminate); `what` names the FMI
 * function in messages. */
RUNTIME_API RuntimeStatus runtime_call(Runtime *s, const char *method, const char *what);
RUNTIME_API RuntimeStatus runtime_reset(Runtime *s);
RUNTIME_API RuntimeStatus runtime_do_step(Runtime *s, double t, double h);
/* The last step again from its start, to end earlier: at t + h with 0 < h < its size (FMI 3.0's early return, just
 * after runtime_do_step; runtime.c only); again as often as asked, each time anywhere inside the whole step. */
RUNTIME_API RuntimeStatus runtime_shorten_step(Runtime *s, double h);

/* A step with inputs that move inside it (FMI 3.0's intermediate update with intermediateVariableSetRequested): the
 * importer's `refresh` sets the inputs at `time`, where the outputs show the stage's states (0, or -1 to end the
 * step, failed); `reached` sees each accepted internal step's end `time` and answers 1 with *at inside that internal
 * step to end the step there instead (again at *at, as often as asked), else 0. */
typedef struct {
    int (*refresh)(void *environment, double time);
    int (*reached)(void *environment, double time, double *at);
    void *environment;
} RuntimeInputs;
/* 1 where runtime_integrate can take a step (continuous states and a Model Exchange form; runtime.c only), else 0. */
RUNTIME_API int runtime_integrates(const Runtime *s);
/* The step from t by h as an ODE of the continuous states with the inputs `inputs` gives at every stage: embedded
 * Runge-Kutta of Dormand and Prince, order 5(4), each state's error estimate at most tolerance·(1 + |x|); the time
 * it ended at in *ended (t + h, or an earlier time `reached` asked for). */
RUNTIME_API RuntimeStatus runtime_integrate(Runtime *s, double t, double h, double tolerance,
                                            const RuntimeInputs *inputs, double *ended);
/* The variable at value reference `vr`: its name, whether it is a Real, and whether parameter, input, output or other
 * (0, 1, 2, 3); 0, or -1 past the last variable (runtime.c only: the FMI 3.0 glue makes its vectors of them). */
RUNTIME_API int runtime_variable(const Runtime *s, RuntimeReference vr, const char **name, int *real, int *causality);

RUNTIME_API RuntimeStatus runtime_get_real(Runtime *s, const RuntimeReference vr[], size_t nvr, double values[]);
/* runtime_get_real and runtime_set_real of `n` runs of consecutive value references, run i from first[i] with
 * length[i] of them, values in order (an FMI 3.0 array variable is such a run). */
RUNTIME_API RuntimeStatus runtime_get_real_runs(Runtime *s, const RuntimeReference first[], const unsigned char length[],
                                                size_t n, double values[]);
RUNTIME_API RuntimeStatus runtime_set_real_runs(Runtime *s, const RuntimeReference first[], const unsigned char length[],
                                                size_t n, const double values[]);
RUNTIME_API RuntimeStatus runtime_get_integer(Runtime *s, const RuntimeReference vr[], size_t nvr, int values[]);
RUNTIME_API RuntimeStatus runtime_get_boolean(Runtime *s, const RuntimeReference vr[], size_t nvr, int values[]);
RUNTIME_API RuntimeStatus runtime_get_string(Runtime *s, const RuntimeReference vr[], size_t nvr,
                                             const char *values[]);
RUNTIME_API RuntimeStatus runtime_set_real(Runtime *s, const RuntimeReference vr[], size_t nvr,
                                           const double values[]);
RUNTIME_API RuntimeStatus runtime_set_integer(Runtime *s, const RuntimeReference vr[], size_t nvr,
                                              const int values[]);
RUNTIME_API RuntimeStatus runtime_set_boolean(Runtime *s, const RuntimeReference vr[], size_t nvr,
                                              const int values[]);
RUNTIME_API RuntimeStatus runtime_set_string(Runtime *s, const RuntimeReference vr[], size_t nvr,
                                             const char *const values[]);

/* A Model Exchange call: the instance's `method`(values of in[0..nin), nout) returns nout values into out, or
 * refuses after logging why (the returned status is then that of the logged error); `what` names the FMI function
 * in messages. runtime.c also answers, in any mode, "sizes" (nout 4: the numbers of variables, continuous states and
 * event indicators, and the time) and "next_time_event" (nout 2: whether a time event follows the current time,
 * and when; the current time becomes the last event). */
RUNTIME_API RuntimeStatus runtime_model_exchange(Runtime *s, const char *method, const char *what, const double in[],
                                                 size_t nin, double out[], size_t nout);

/* FMU states are the runtime's objects (freed by runtime_free_state). */
RUNTIME_API RuntimeStatus runtime_get_state(Runtime *s, void **state);
RUNTIME_API RuntimeStatus runtime_set_state(Runtime *s, void *state);
RUNTIME_API void runtime_free_state(Runtime *s, void *state);
/* The state's bytes in a new malloc'd buffer of *size bytes (the caller frees it). */
RUNTIME_API RuntimeStatus runtime_serialize(Runtime *s, void *state, char **bytes, size_t *size);
RUNTIME_API RuntimeStatus runtime_deserialize(Runtime *s, const char *bytes, size_t size, void **state);

/* The phase of an FMU state of runtime.c (runtime_get_state or runtime_deserialize): 0 with its flags (initialized;
 * in Model Exchange use), or -1 for a refused serialized state. (The glue reads the same flags from the serialized
 * body.) */
int runtime_state_modes(void *state, int *initialized, int *model_exchange);

#endif
