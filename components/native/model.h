/* The model code of a native mechfmu FMU: a component class as C, run by the runtime (runtime.c, which knows no FMI
 * version) under a glue layer per FMI version. No Python anywhere: the C runtime (libc, libm) only. The services a law
 * calls (native_fail, native_current_outputs, ...) are the runtime's; the law knows nothing else of it.
 *
 * A class is its variable table (generated from the Python declarations at build time: mechfmu/fmu/native_tables.py,
 * in value-reference order: parameters, inputs, outputs, then the Model Exchange states and derivatives) and its
 * law: functions that read `values` (a double per variable; Integer and Boolean as exact doubles) and `state` (the
 * hidden state, doubles). A law that fails sets the message with native_fail and returns -1; the runtime logs it as
 * the Python component would have raised it, with the same words. */
#ifndef MECHFMU_MODEL_H
#define MECHFMU_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "text.h"

enum { NATIVE_REAL, NATIVE_INTEGER, NATIVE_BOOLEAN, NATIVE_STRING };
enum { NATIVE_PARAMETER, NATIVE_INPUT, NATIVE_OUTPUT, NATIVE_LOCAL };

typedef struct {
    const char *name, *unit;
    int type, causality;
    double start;          /* Real, Integer, Boolean start value */
    const char *text;      /* String start value */
    int has_min, has_max, min_exclusive;
    double min, max;
    int moves_state;       /* the hidden state a start parameter sets when written, or -1 */
} NativeVariable;

typedef struct NativeInstance NativeInstance;

/* the user functions (String parameters holding expressions) an instance keeps parsed */
#define NATIVE_USER_FUNCTIONS 4

typedef struct NativeClass {
    const char *name;                        /* the class name of messages ("ElastoGap") */
    const char *co_simulation_only;          /* why it has no Model Exchange form, or NULL */
    size_t variable_count, parameter_count, input_count, output_count;
    const NativeVariable *variables;
    size_t state_count;                      /* hidden state: initial values */
    const double *initial_state;
    size_t continuous_count;                 /* Model Exchange: the continuous states are state[0..n) */
    const char *const *continuous_names;     /* their names ("s", "v") */
    size_t indicator_count;                  /* the last indicator_count outputs are the event indicators */
    /* cross-parameter rules (after the ranges); 0, or -1 after native_fail */
    int (*validate)(NativeInstance *);
    /* every output, in declaration order, from values, state and time; 0, or -1 after native_fail */
    int (*outputs)(NativeInstance *, double *out);
    /* the state over one step (inputs held); NULL: no dynamics. It may also leave every output at the step's end
     * (the new state, time t + h) in n->outputs, exactly as `outputs` gives them, and set n->cached: a law that
     * computes part of its outputs for the step anyway then does not compute them again when they are read */
    int (*advance)(NativeInstance *, double t, double h);
    /* d/dt of the continuous states (no side effect); NULL: none */
    int (*derivatives)(NativeInstance *, double *out);
    /* after the parameters were checked and the time set, at the end of initialization; NULL: nothing */
    int (*initialize)(NativeInstance *);
    /* the times [s] where the outputs jump (Model Exchange time events), sorted, in *events (memory the law
     * keeps); their count (0 also when they cannot be made: the outputs say why) */
    size_t (*time_events)(NativeInstance *, const double **events);
    /* after a parameter or input (value reference `index`) was written; NULL: nothing */
    void (*written)(NativeInstance *, size_t index);
    /* after a completed step: 1 with a warning the host must see in `out`, else 0; NULL: none */
    int (*step_warning)(NativeInstance *, char *out, size_t size);
    /* after a parameter was written, and at instantiation: an initial state that follows from several
     * parameters (components/base.py parameter_changed); NULL: none */
    void (*parameter_changed)(NativeInstance *);
    /* after Model Exchange set the continuous states: 0, or -1 after native_fail (they stay set); NULL: none */
    int (*states_set)(NativeInstance *);
    /* Model Exchange's event mode: one event iteration, committing the modes the current point implies (before
     * the point is accepted); 0, a sum of NATIVE_STATES_CHANGED (the continuous states were set anew: a reinit)
     * and NATIVE_DISCRETE_NEEDED (another iteration is needed; the host passes the outputs on first), or -1
     * after native_fail; NULL: none */
    int (*update_discrete_states)(NativeInstance *);
    /* 1 if an event iteration (update_discrete_states) at the current point would change the discrete state, else
     * 0, without a side effect; -1 after native_fail. Non-NULL: the class's advance is those iterations alone, and a
     * co-simulation instance with FMI 3.0 event mode holds its discrete state over a step and iterates it in event
     * mode instead (MSL's friction elements); NULL: none */
    int (*event_pending)(NativeInstance *);
    /* after an FMU state was restored (its parameter values may differ from the instance's); NULL: nothing */
    void (*state_restored)(NativeInstance *);
    /* the analytic partials of partial_pattern at the current point, in its order (components/partials.py);
     * 0, or -1 after native_fail; NULL: none */
    int (*partials)(NativeInstance *, double *out);
    size_t partial_count;
    const unsigned (*partial_pattern)[2];    /* (unknown, known) value references */
    const unsigned char *feedthrough;        /* [output][input]: 1 where the output depends on the input */
} NativeClass;

/* what an event iteration (update_discrete_states) did: FMI's valuesOfContinuousStatesChanged and
 * newDiscreteStatesNeeded */
#define NATIVE_STATES_CHANGED 1
#define NATIVE_DISCRETE_NEEDED 2

/* The fields a step reads come first and the per-variable arrays follow the instance in one block (see
 * runtime.c instantiate): a chain of thousands of instances then touches few pages and cache lines per step. */
#define NATIVE_MESSAGE_SIZE 2048

struct NativeInstance {
    const NativeClass *cls;
    double *values;       /* per variable (value reference) */
    double *state;
    double *outputs;      /* per output, valid while `cached` (native_compute_outputs) */
    int cached;
    double time, accepted_time, event_time;
    int initialized, in_model_exchange;
    int arithmetic;       /* the failure is Python's ArithmeticError or ValueError (blamed on a huge value) */
    int memo_valid;
    double memo[16];      /* a law's cache of a pure function of values (never part of the FMU state) */
    int flags[4];         /* a law's instance data that is not part of the FMU state (a warning given, ...) */
    /* Model Exchange, a class with event_pending: whether an event iteration was pending at the first event
     * indicators asked for after the event mode at event_time (resume_checked; NaN before): the discrete state then
     * lags its inputs (a host that iterated with them held), and an indicator asks for an event soon after */
    int resume;
    double resume_checked;
    char **strings;       /* per variable: a String's value (NULL for other types) */
    uint64_t texts;       /* how often `strings` changed (native_texts_changed): a law's cache of what it read from
                             them holds while this is as it was (0: never set) */
    char *message;        /* NATIVE_MESSAGE_SIZE bytes: the failure of the last call that failed */
    void *data;           /* memory a law keeps (a table's rows), released with release(data) */
    void (*release)(void *);
    const char *resources; /* the FMU's resources folder (relative file names in parameters are found there) */
    void *user_functions[NATIVE_USER_FUNCTIONS]; /* parsed expressions (components/native/expression.c) */
    char *user_texts[NATIVE_USER_FUNCTIONS];     /* the texts they were parsed from */
    uint64_t user_checked[NATIVE_USER_FUNCTIONS]; /* `texts` when the slot was last found to match its text */
    char *name;           /* the instance's name */
};

/* Whoever writes a String value calls this after: the laws' caches of what they read from the texts lapse. */
static inline void native_texts_changed(NativeInstance *n) { ++n->texts; }

/* The outputs at the current point into n->outputs, unless they are cached (components/base.py current_outputs):
 * 0, or -1 with the message set as Python would raise it (a failure before initialization blamed on a bad
 * parameter first, an arithmetic one on a value of magnitude >= 1e150). Whoever changes values, state or time
 * clears n->cached. */
int native_compute_outputs(NativeInstance *n);
/* a magnitude a law cannot compute with (components/diagnostics.py) */
#define NATIVE_HUGE_VALUE 1e150
/* The largest finite Real parameter or input if its magnitude is >= NATIVE_HUGE_VALUE: its index, else -1. */
long native_too_large(const NativeInstance *n);
/* Component.check_range: a parameter or input value on its own (finite, in its range): 0, or -1 after native_fail. */
int native_check_range(NativeInstance *n, const NativeVariable *v, double value);
/* Every parameter's range, then the class's rules: 0, or -1 after native_fail. */
int native_check_parameters(NativeInstance *n);
/* The first time event after the last event mode (event_time), in *next; 0 if there is none. */
int native_next_time_event(NativeInstance *n, double *next);

/* The outputs at the current point, computed if they are not (components/base.py current_outputs): 0 and
 * *outputs, or -1 with the message set. */
int native_current_outputs(NativeInstance *n, const double **outputs);
/* The instance's name (the message prefix "<Class> '<instance>'"). */
const char *native_instance_name(const NativeInstance *n);

/* A failure of the law in the words of the Python component: "<Class> '<instance>': <name> = <repr> <problem>". */
int native_fail(NativeInstance *n, const char *name, double value, const char *problem);
/* A failure in free words; `arithmetic`: an ArithmeticError or ValueError of Python's arithmetic. */
int native_fail_text(NativeInstance *n, int arithmetic, const char *format, ...);
/* native_fail with a tuple or list value */
int native_fail_sequence(NativeInstance *n, const char *name, const double *values, size_t count, int list,
                         const char *problem);
/* Python's float ** float for a non-negative base (what the laws raise to a power): 0 and *result, or -1 after
 * native_fail_text with Python's error ("0.0 cannot be raised to a negative power", an overflow). */
int native_pow(NativeInstance *n, double base, double exponent, double *result);

/* The time a law evaluates its closed form at: the instance's time, or just before it while a Model Exchange time
 * event there is not yet handled (the left limit: FMI 2.0 keeps the values until event mode). */
double native_output_time(const NativeInstance *n);
/* Python's math.sin and math.cos: 0, or -1 after native_fail_text ("math domain error" for an infinite angle). */
int native_sin(NativeInstance *n, double x, double *result);
int native_cos(NativeInstance *n, double x, double *result);




/* The classes of this binary (generated), and one by name. */
extern const NativeClass *const native_classes[];
const NativeClass *native_class(const char *name);

#endif
