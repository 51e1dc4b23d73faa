/*
 * The native runtime of a mechfmu FMU: the runtime_* functions of runtime.h run a component class written in C
 * (one table per class: model.h) with no Python anywhere, for every FMI version's glue. It does what
 * components/base.py and components/fmi.py do for a Python component, with the same checks, the same order of
 * operations (so the same bits) and the same messages:
 *   - a parameter is set before initialization only, in its range (min, max, strict min), finite; writing a start
 *     parameter moves its state; an input must be finite; an output cannot be set; a refused value keeps the old;
 *   - exiting initialization mode checks every range, then the class's rules; a later step refuses with the reason;
 *   - a step's size is finite and > 0 and it starts at the instance's time (1e-9 relative);
 *   - outputs are computed from the inputs, state and time when read (or by a step whose law computes them there),
 *     kept until one of those changes; a law that fails before initialization is blamed on a bad parameter first,
 *     an arithmetic failure on a value of magnitude >= 1e150; a non-finite output is returned with RUNTIME_ERROR,
 *     naming it;
 *   - FMU states are copies of the values, the state and the times; serialized, they are checked completely (the
 *     class, every number finite, every parameter in its range and, initialized, the class's rules) before use;
 *   - Model Exchange: set time (not before the last accepted point), states, derivatives, indicators, event mode.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expression.h"
#include "model.h"
#include "numbers.h"
#include "platform.h"
#include "dormand_prince.h"
#include "runtime.h"

/* |t - expected| allowed between a step's start and the instance's time, relative to max(1, |t|) (components/fmi.py) */
#define TIME_TOLERANCE 1e-9
/* a saved time that is none (components/model_exchange.py) */
#define NO_TIME (-1e308)
/* a serialized state's first bytes; the format before this one (no checksum) is refused, named */
#define SERIAL_MAGIC "mechfmu-native-state 2"
#define OLD_SERIAL_MAGIC "mechfmu-native-state 1"

const NativeClass *native_class(const char *name) {
    for (const NativeClass *const *c = native_classes; *c; ++c)
        if (!strcmp((*c)->name, name)) return *c;
    return NULL;
}

/* --- the instance -------------------------------------------------------------------------------- */

struct Runtime {
    NativeInstance base;  /* first: the runtime's instance is the model's */
    const NativeClass *cls;
    char *initialization_error;
    double start_time;
    const char **returned; /* the String values handed out, valid until the next call */
    RuntimeLogger logger;
    int fmi_version;       /* 2 or 3: the functions messages name */
    int discrete_in_event_mode; /* co-simulation with event mode: the class's advance is left to event mode */
    double *before;        /* state_count values: the state at the last step's start */
    int step_kept;         /* the last step can be taken again shorter: it started at step_start from before */
    double step_start, step_size;
};

static const NativeClass *loaded;

int runtime_load(const char *model, char *error, size_t size) {
    loaded = native_class(model);
    if (!loaded) {
        snprintf(error, size, "this binary has no native class %s", model);
        return -1;
    }
    return 0;
}

static void log_text(const Runtime *s, RuntimeStatus status, const char *text) {
    if (s->logger.log)
        s->logger.log(s->logger.environment, s->base.name, status,
                      status == RUNTIME_WARNING ? "logStatusWarning" : "logStatusError", text);
}

static RuntimeStatus log_error(const Runtime *s, const char *format, ...) PRINTF_LIKE(2, 3);
static RuntimeStatus log_error(const Runtime *s, const char *format, ...) {
    va_list args;
    va_start(args, format);
    char *text = platform_format(format, args);
    va_end(args);
    log_text(s, RUNTIME_ERROR, text ? text : "(message lost: out of memory)");
    free(text);
    return RUNTIME_OK; /* the glue returns an error for a logged error, the instance unchanged */
}

static NativeInstance *inst(Runtime *s) { return &s->base; }

static void reset_values(Runtime *s) {
    NativeInstance *n = inst(s);
    const NativeClass *c = s->cls;
    for (size_t i = 0; i < c->variable_count; ++i) {
        n->values[i] = c->variables[i].start;
        free(n->strings[i]);
        n->strings[i] = c->variables[i].type == NATIVE_STRING ? platform_strndup(c->variables[i].text, SIZE_MAX) : NULL;
    }
    native_texts_changed(n);
    memcpy(n->state, c->initial_state, c->state_count * sizeof *n->state);
    for (size_t i = 0; i < c->parameter_count; ++i)
        if (c->variables[i].moves_state >= 0) n->state[c->variables[i].moves_state] = c->variables[i].start;
    if (c->parameter_changed) c->parameter_changed(n);
    n->time = 0.0;
    n->accepted_time = n->event_time = -INFINITY;
    n->initialized = n->in_model_exchange = 0;
    s->step_kept = 0;
    memset(n->flags, 0, sizeof n->flags);
    n->resume = 0, n->resume_checked = NAN;
    free(s->initialization_error);
    s->initialization_error = NULL;
    s->start_time = 0.0;
    s->base.cached = 0;
}

/* --- an FMU variant's own defaults: resources/start_values.json (components/fmi.py START_VALUES) ------------------
 * Strict JSON (RFC 8259) of one object whose values are numbers, true, false or strings, read whole before any value
 * is applied: every byte checked (valid UTF-8, no control character in a string, \u escapes with their surrogate
 * pairs), no trailing data, no name twice; the file at most START_VALUES_LIMIT bytes. */

/* resources/start_values.json: at most this many bytes (a larger file is refused, saying so) */
#define START_VALUES_LIMIT ((size_t)256 << 20)

/* The whole file in a new buffer (*size bytes): NULL with `why` set if it cannot be read or is too large. */
static char *read_whole(FILE *file, size_t *size, char *why, size_t why_size) {
    size_t used = 0, capacity = 1 << 16;
    char *text = malloc(capacity);
    while (text) {
        used += fread(text + used, 1, capacity - used, file);
        if (used < capacity) break;
        if (capacity >= START_VALUES_LIMIT + 1) {
            snprintf(why, why_size, "is larger than %zu MiB, the most an FMU reads", START_VALUES_LIMIT >> 20);
            free(text);
            return NULL;
        }
        size_t grown = capacity * 2 > START_VALUES_LIMIT + 1 ? START_VALUES_LIMIT + 1 : capacity * 2;
        char *more = realloc(text, grown);
        if (!more) free(text);
        text = more, capacity = grown;
    }
    if (!text) snprintf(why, why_size, "out of memory");
    else if (ferror(file)) snprintf(why, why_size, "cannot be read (a read error)"), free(text), text = NULL;
    *size = used;
    return text;
}

static int checked_set(Runtime *s, RuntimeReference vr, double value);

/* Python's repr of `length` bytes that may hold NULs (shown as \x00), cut to fit `size` (>= 8). */
static void repr_bytes(const char *text, size_t length, char *out, size_t size) {
    native_repr_text(text, out, size);
    size_t used = strlen(out) - 1; /* before the closing quote */
    char quote = out[used];
    for (size_t at = strlen(text); at < length && used + 8 < size; at += strlen(text + at)) {
        char piece[1000];
        ++at; /* the NUL */
        native_repr_text(text + at, piece, sizeof piece);
        size_t n = strlen(piece) - 2;
        if (n > size - used - 8) n = size - used - 8;
        memcpy(out + used, "\\x00", 4);
        memcpy(out + used + 4, piece + 1, n);
        used += 4 + n;
    }
    out[used] = quote, out[used + 1] = '\0';
}

/* One member of the file set as the host would set it: 0, or -1 with `problem` set. */
static int apply_member(Runtime *s, const JsonMember *m, char *problem, size_t size) {
    NativeInstance *n = inst(s);
    size_t vr = 0;
    while (vr < s->cls->variable_count && !(strlen(s->cls->variables[vr].name) == m->name_length
                                             && !memcmp(s->cls->variables[vr].name, m->name, m->name_length))) ++vr;
    const NativeVariable *v = vr < s->cls->variable_count ? &s->cls->variables[vr] : NULL;
    char repr[1000];
    if (!v || v->causality == NATIVE_OUTPUT || v->causality == NATIVE_LOCAL) {
        repr_bytes(m->name, m->name_length, repr, 600);
        snprintf(problem, size, "%s: no parameter or input named %s%s", s->base.name, repr,
                 strlen(m->name) != m->name_length ? " (the name holds a NUL character)" : "");
        return -1;
    }
    const char *wrong = NULL;
    if (m->kind == JSON_STRING) {
        if (v->type == NATIVE_STRING && strlen(m->text) == m->text_length) {
            char *copy = platform_strndup(m->text, m->text_length);
            if (!copy) return snprintf(problem, size, "out of memory"), -1;
            free(n->strings[vr]);
            n->strings[vr] = copy;
            native_texts_changed(n);
            if (s->cls->parameter_changed) s->cls->parameter_changed(n);
            return 0;
        }
        repr_bytes(m->text, m->text_length, repr, sizeof repr);
        wrong = v->type == NATIVE_STRING ? "holds a NUL character (\\u0000), which an FMI String cannot"
              : v->type == NATIVE_REAL ? "is a string, not a Real" : v->type == NATIVE_INTEGER
              ? "is not an integer" : "is not a Boolean (true/false or 1/0)";
        snprintf(problem, size, "%s '%s': %s = %s %s", s->cls->name, s->base.name, v->name, repr, wrong);
        return -1;
    }
    int boolean = m->kind == JSON_TRUE || m->kind == JSON_FALSE;
    if (v->type == NATIVE_STRING) wrong = "is not a String";
    else if (v->type == NATIVE_REAL && boolean) wrong = "is a Boolean, not a Real";
    else if (v->type == NATIVE_INTEGER && (boolean || m->number != floor(m->number) || !isfinite(m->number)))
        wrong = "is not an integer";
    else if (v->type == NATIVE_INTEGER && !(m->number >= -2147483648.0 && m->number <= 2147483647.0))
        wrong = "does not fit an FMI Integer (32 bits: -2147483648 to 2147483647)";
    else if (v->type == NATIVE_BOOLEAN && !boolean && !(m->kind == JSON_INTEGER && (m->number == 0.0 || m->number == 1.0)))
        wrong = "is not a Boolean (true/false or 1/0)";
    if (wrong) {
        if (boolean) snprintf(repr, sizeof repr, "%s", m->kind == JSON_TRUE ? "True" : "False");
        else if (v->type == NATIVE_INTEGER && m->kind == JSON_INTEGER && fabs(m->number) < 1e17)
            snprintf(repr, sizeof repr, "%.0f", m->number);
        else if (v->type == NATIVE_BOOLEAN) native_repr(m->number, repr, sizeof repr); /* 1.0 is none, 1 is one */
        else native_number(m->number, repr, sizeof repr);
        snprintf(problem, size, "%s '%s': %s = %s %s", s->cls->name, s->base.name, v->name, repr, wrong);
        return -1;
    }
    if (checked_set(s, (RuntimeReference)vr, m->number + 0.0) != 0) {
        snprintf(problem, size, "%s", n->message);
        return -1;
    }
    return 0;
}

/* Apply the file's values as if the host had set them, in their order (components/fmi.py _apply_start_values);
 * a file that is not such an object is refused whole, and the first value refused is logged and ends it. */
static void apply_start_values(Runtime *s) {
    NativeInstance *n = inst(s);
    if (!n->resources) return;
    size_t length = strlen(n->resources) + 32;
    char *path = malloc(length);
    if (!path) return;
    snprintf(path, length, "%s%s%s", n->resources, PATH_SEPARATOR, "start_values.json");
    FILE *file = platform_fopen(path, "rb");
    free(path);
    if (!file) return;
    char problem[NATIVE_MESSAGE_SIZE + 64];
    size_t size = 0, count = 0;
    char *text = read_whole(file, &size, problem, sizeof problem);
    fclose(file);
    JsonMember *members = NULL;
    int failed = !text || native_json_object(text, size, &members, &count, problem, sizeof problem) != 0;
    free(text);
    for (size_t i = 0; !failed && i < count; ++i) failed = apply_member(s, &members[i], problem, sizeof problem) != 0;
    native_json_free(members, count);
    if (failed) log_error(s, "start_values.json: %s", problem);
}

static Runtime *instantiate(const NativeClass *c, const char *instanceName, const char *resources,
                            const RuntimeLogger *logger, int fmi_version) {
    /* one block beside the class's other instances: the slave, then its values, state, outputs and the state before
     * the last step (what a step reads and writes) */
    const size_t head = (sizeof(Runtime) + 63) / 64 * 64;
    const size_t doubles = c->variable_count + 2 * c->state_count + c->output_count + 4;
    Runtime *s = platform_block_alloc(head + doubles * sizeof(double));
    if (!s) return NULL;
    s->cls = c;
    NativeInstance *n = inst(s);
    n->values = (double *)((char *)s + head);
    n->state = n->values + c->variable_count + 1;
    s->base.outputs = n->state + c->state_count + 1;
    s->before = s->base.outputs + c->output_count + 1;
    n->cls = c;
    s->logger = *logger;
    s->fmi_version = fmi_version;
    s->base.name = platform_strndup(instanceName, SIZE_MAX);
    n->resources = resources && *resources ? platform_strndup(resources, SIZE_MAX) : NULL;
    n->strings = calloc(c->variable_count + 1, sizeof *n->strings);
    n->message = calloc(NATIVE_MESSAGE_SIZE, 1);
    s->returned = calloc(c->variable_count + 1, sizeof *s->returned);
    if (!s->base.name || !n->strings || !n->message || !s->returned || (resources && *resources && !n->resources)) {
        runtime_free(s);
        return NULL;
    }
    reset_values(s);
    apply_start_values(s);
    return s;
}

Runtime *runtime_instantiate(const char *instanceName, const char *resources, int visible, const RuntimeLogger *logger,
                             int fmi_version) {
    (void)visible;
    return instantiate(loaded, instanceName, resources, logger, fmi_version);
}

void runtime_free(Runtime *s) {
    if (!s) return;
    NativeInstance *n = inst(s);
    native_forget_user_functions(n);
    if (n->release && n->data) n->release(n->data);
    free((char *)n->resources);
    for (size_t i = 0; n->strings && i < s->cls->variable_count; ++i) free(n->strings[i]);
    free(n->strings);
    free(n->message);
    free(s->returned);
    free(s->initialization_error);
    free(s->base.name);
    platform_block_free(s);
}

RuntimeStatus runtime_reset(Runtime *s) {
    reset_values(s);
    return RUNTIME_OK;
}

RuntimeStatus runtime_setup_experiment(Runtime *s, double startTime) {
    s->start_time = startTime;
    return RUNTIME_OK;
}


RuntimeStatus runtime_call(Runtime *s, const char *method, const char *what) {
    (void)what;
    NativeInstance *n = inst(s);
    if (!strcmp(method, "exit_initialization_mode")) {
        free(s->initialization_error);
        s->initialization_error = NULL;
        if (native_check_parameters(n) != 0) {
            s->initialization_error = platform_strndup(n->message, SIZE_MAX);
            return log_error(s, "%s", n->message);
        }
        n->time = n->accepted_time = n->event_time = s->start_time;
        n->initialized = 1;
        s->base.cached = 0;
        if (s->cls->initialize && s->cls->initialize(n) != 0) {
            n->initialized = 0;
            s->initialization_error = platform_strndup(n->message, SIZE_MAX);
            return log_error(s, "%s", n->message);
        }
    }
    return RUNTIME_OK;
}

/* The FMI type names of this instance's version: Real, Integer in FMI 2.0; Float64, Int32 in FMI 3.0. */
static const char *type_name(const Runtime *s, int type) {
    static const char *const fmi2[] = {"Real", "Integer", "Boolean", "String"};
    static const char *const fmi3[] = {"Float64", "Int32", "Boolean", "String"};
    return (s->fmi_version == 3 ? fmi3 : fmi2)[type];
}

static const NativeVariable *variable(Runtime *s, RuntimeReference vr, int type, int set) {
    const NativeClass *c = s->cls;
    const char *action = set ? "Set" : "Get";
    if (vr < c->variable_count && c->variables[vr].type == type
        && !(set && c->variables[vr].causality >= NATIVE_OUTPUT))
        return &c->variables[vr];
    if (vr == c->variable_count && s->fmi_version == 3) { /* FMI 3.0's independent variable, after the others */
        log_error(s, "%s: fmi3%s%s: valueReference %u is time, the independent variable: %s", s->base.name, action,
                  type_name(s, type), vr, set ? "it cannot be set" : "a Float64");
        return NULL;
    }
    if (vr >= c->variable_count) {
        log_error(s, "%s: fmi%d%s%s: valueReference %u: no such variable", s->base.name, s->fmi_version, action,
                  type_name(s, type), vr);
        return NULL;
    }
    const NativeVariable *v = &c->variables[vr];
    if (v->type != type) {
        log_error(s, "%s: fmi%d%s%s: valueReference %u: %s is a %s, not a %s", s->base.name, s->fmi_version, action,
                  type_name(s, type), vr, v->name, type_name(s, v->type), type_name(s, type));
        return NULL;
    }
    log_error(s, "%s: fmi%dSet%s: %s is an output and cannot be set", s->base.name, s->fmi_version,
              type_name(s, type), v->name);
    return NULL;
}

/* Component.set of one value (a number of any type): 0, or -1 with the message set (the value unchanged). */
static int checked_set(Runtime *s, RuntimeReference vr, double value) {
    NativeInstance *n = inst(s);
    const NativeVariable *v = &s->cls->variables[vr];
    int failed = 0;
    if (v->causality == NATIVE_INPUT) {
        if (!isfinite(value)) failed = native_fail(n, v->name, value, "must be finite");
    } else if (n->initialized) {
        failed = native_fail(n, v->name, value, "is a fixed parameter and cannot change after initialization");
    } else {
        failed = native_check_range(n, v, value);
    }
    if (failed) return -1;
    n->values[vr] = value;
    if (v->causality == NATIVE_PARAMETER && v->moves_state >= 0) n->state[v->moves_state] = value;
    if (v->causality == NATIVE_PARAMETER && s->cls->parameter_changed) s->cls->parameter_changed(n);
    s->base.cached = 0;
    if (s->cls->written) s->cls->written(n, vr);
    return 0;
}

/* checked_set, a refusal logged */
static int set_value(Runtime *s, RuntimeReference vr, double value) {
    if (checked_set(s, vr, value) == 0) return 0;
    log_error(s, "setting %s failed: %s", s->cls->variables[vr].name, inst(s)->message);
    return -1;
}

/* The value of a variable that is not a String: -1 after logging why (then *value is NaN). */
static int read_value(Runtime *s, RuntimeReference vr, double *value) {
    NativeInstance *n = inst(s);
    const NativeVariable *v = &s->cls->variables[vr];
    if (v->causality == NATIVE_PARAMETER || v->causality == NATIVE_INPUT) {
        *value = n->values[vr];
        return 0;
    }
    size_t index = vr - s->cls->parameter_count - s->cls->input_count;
    if (v->causality == NATIVE_LOCAL) { /* per state: state.<x>, then der(state.<x>) */
        size_t k = index - s->cls->output_count;
        double derivatives[64];
        if (k % 2 == 0) {
            *value = n->state[k / 2];
            return 0;
        }
        if (s->cls->derivatives(n, derivatives) != 0) {
            *value = NAN;
            log_error(s, "reading %s failed: %s", v->name, n->message);
            return -1;
        }
        *value = derivatives[k / 2];
    } else {
        if (native_compute_outputs(inst(s)) != 0) {
            *value = NAN;
            log_error(s, "reading %s failed: %s", v->name, n->message);
            return -1;
        }
        *value = s->base.outputs[index];
    }
    if (!isfinite(*value)) {
        char repr[40], time[40], blame[512];
        native_repr(*value, repr, sizeof repr);
        native_measured(n->time, time, sizeof time);
        long huge = native_too_large(n);
        if (huge < 0) {
            snprintf(blame, sizeof blame, "inputs outside the range the law can handle?");
        } else {
            char big[40];
            char bound[40];
            native_number(n->values[huge], big, sizeof big);
            native_number(NATIVE_HUGE_VALUE, bound, sizeof bound);
            snprintf(blame, sizeof blame, "%s = %s is beyond what the law can compute with (magnitude below %s)",
                     s->cls->variables[huge].name, big, bound);
        }
        log_error(s, "%s: %s = %s is not finite at t = %s (%s)", s->base.name, v->name, repr, time, blame);
    }
    return 0;
}

/* A Real value other than a finite output already computed (FMI 3.0's time, a parameter, an input, a local, an output
 * that is not finite or cannot be computed: logged), NaN for what is not a Real. */
static void other_real(Runtime *s, RuntimeReference vr, double *value) {
    if (vr == s->cls->variable_count && s->fmi_version == 3) *value = inst(s)->time; /* FMI 3.0's time */
    else if (variable(s, vr, NATIVE_REAL, 0)) read_value(s, vr, value);
    else *value = NAN;
}

RuntimeStatus runtime_get_real(Runtime *s, const RuntimeReference vr[], size_t nvr, double values[]) {
    const NativeClass *c = s->cls;
    const size_t first = c->parameter_count + c->input_count, last = first + c->output_count;
    size_t i = 0;
    /* the common case, outputs from the first on, copied while they are finite outputs: one range check each (an
     * unsigned difference), the outputs computed once; the first other value and all after it as below */
    if (nvr && vr[0] - first < c->output_count) {
        if (s->base.cached || native_compute_outputs(inst(s)) == 0) {
            const double *outputs = s->base.outputs;
            const RuntimeReference from = (RuntimeReference)first, count = (RuntimeReference)c->output_count;
            for (; i < nvr && vr[i] - from < count && isfinite(outputs[vr[i] - from]); ++i)
                values[i] = outputs[vr[i] - from];
        } else { /* they cannot be computed: the first as below (which would ask for them once more) */
            other_real(s, vr[0], &values[0]);
            i = 1;
        }
    }
    for (; i < nvr; ++i) {
        if (vr[i] >= first && vr[i] < last && (s->base.cached || native_compute_outputs(inst(s)) == 0)) { /* an output: the common case */
            values[i] = s->base.outputs[vr[i] - first];
            if (isfinite(values[i])) continue;
        }
        other_real(s, vr[i], &values[i]);
    }
    return RUNTIME_OK;
}

/* to[0..) = from[0..) while they are finite, two at a time, then one (m at most); how many were copied. */
static inline size_t copy_finite(double *to, const double *from, size_t m) {
    size_t e = 0;
    for (; e + 1 < m; e += 2) {
        const double x = from[e], y = from[e + 1];
        if (!(isfinite(x) && isfinite(y))) break;
        to[e] = x, to[e + 1] = y;
    }
    for (; e < m && isfinite(from[e]); ++e) to[e] = from[e];
    return e;
}

/* to[0..m) = from[0..m), and how many of them from the first are finite (m if all are): the values from the first
 * non-finite one on are copied too, for the caller to overwrite. Two at a time with GCC's vectors (GCC, clang), their
 * finiteness gathered over the run without a branch, on the bits (an integer comparison: a NaN raises no
 * floating-point flag, which a host may trap); read again one at a time where one is not finite. */
static inline size_t copy_counting_finite(double *to, const double *from, size_t m) {
    size_t e = 0;
#ifdef __GNUC__
    enum { INFINITE_BITS_HIGH = 0x7ff00000 };
    const long long INFINITE_BITS = (long long)INFINITE_BITS_HIGH << 32; /* +inf's bits: finite |x| lies below */
    typedef double Pair __attribute__((vector_size(16)));
    typedef long long PairBits __attribute__((vector_size(16)));
    PairBits finite = {-1, -1};
    for (; e + 1 < m; e += 2) {
        Pair x;
        memcpy(&x, from + e, sizeof x);
        memcpy(to + e, &x, sizeof x);
        finite &= ((PairBits)x & (PairBits){INT64_MAX, INT64_MAX}) < (PairBits){INFINITE_BITS, INFINITE_BITS};
    }
    if (!(finite[0] & finite[1])) e = 0;
#endif
    for (; e < m && isfinite(from[e]); ++e) to[e] = from[e];
    return e;
}

/* What get_runs_rest and set_runs_rest take for `e`: run 0 as the others, its common case tried first. */
#define WHOLE_RUN ((size_t)-1)

/* runtime_get_real_runs off its common path: run 0 element by element from its element `e` on (or WHOLE_RUN), the
 * other runs as runtime_get_real_runs describes them. */
static NOINLINE RuntimeStatus get_runs_rest(Runtime *s, const RuntimeReference first[], const unsigned char length[],
                                            size_t n, double values[], size_t e) {
    const NativeClass *c = s->cls;
    const size_t outputs = c->parameter_count + c->input_count, end = outputs + c->output_count;
    for (size_t i = 0; i < n; ++i, e = WHOLE_RUN) {
        const RuntimeReference vr = first[i];
        const size_t m = length[i];
        if (e == WHOLE_RUN) {
            e = 0;
            if (vr >= outputs && vr + m <= end && (s->base.cached || native_compute_outputs(inst(s)) == 0))
                e = copy_finite(values, s->base.outputs + (vr - outputs), m);
        }
        for (; e < m; ++e) {
            const RuntimeReference element = vr + (RuntimeReference)e;
            runtime_get_real(s, &element, 1, values + e);
        }
        values += m;
    }
    return RUNTIME_OK;
}

/* The common case of runtime_get_real_runs, its outputs computed (or not: a run then takes the rest): the runs of
 * outputs copied while they are finite, no call on the way; the first other run (from its first other element) and
 * all after it as get_runs_rest takes them. */
static inline RuntimeStatus copy_output_runs(Runtime *s, const RuntimeReference first[], const unsigned char length[],
                                             size_t n, double values[]) {
    for (const unsigned char *const last = length + n; length < last; ++first, ++length) {
        const NativeClass *c = s->cls; /* (read again for each run: fewer registers kept across the loop) */
        const size_t outputs = c->parameter_count + c->input_count, vr = *first, m = *length;
        if (!(vr >= outputs && vr + m <= outputs + c->output_count && s->base.cached))
            return get_runs_rest(s, first, length, (size_t)(last - length), values, WHOLE_RUN);
        const size_t e = copy_counting_finite(values, s->base.outputs + (vr - outputs), m);
        if (e < m) return get_runs_rest(s, first, length, (size_t)(last - length), values, e);
        values += m;
    }
    return RUNTIME_OK;
}

/* runtime_get_real_runs whose outputs are not computed yet: computed where the first run is of outputs (a failure as
 * before: its elements as runtime_get_real takes them), then copied. */
static NOINLINE RuntimeStatus compute_output_runs(Runtime *s, const RuntimeReference first[],
                                                  const unsigned char length[], size_t n, double values[]) {
    const NativeClass *c = s->cls;
    const size_t outputs = c->parameter_count + c->input_count, m = n ? length[0] : 0;
    if (!(n && first[0] >= outputs && first[0] + m <= outputs + c->output_count))
        return get_runs_rest(s, first, length, n, values, WHOLE_RUN);
    if (native_compute_outputs(inst(s)) != 0) return get_runs_rest(s, first, length, n, values, 0);
    const size_t e = copy_counting_finite(values, s->base.outputs + (first[0] - outputs), m);
    if (e < m) return get_runs_rest(s, first, length, n, values, e);
    return n == 1 ? RUNTIME_OK : copy_output_runs(s, first + 1, length + 1, n - 1, values + m);
}

/* runtime_get_real of `n` runs of consecutive value references, run i from first[i] with length[i] of them: the finite
 * outputs of a run of outputs (the common case of an FMI 3.0 array) copied at once, any other value as runtime_get_real
 * takes it. */
RuntimeStatus runtime_get_real_runs(Runtime *s, const RuntimeReference first[], const unsigned char length[], size_t n,
                                    double values[]) {
    if (!s->base.cached) return compute_output_runs(s, first, length, n, values);
    return copy_output_runs(s, first, length, n, values);
}

/* runtime_set_real_runs off its common path: run 0 element by element from its element `e` on (or WHOLE_RUN), the
 * other runs as runtime_set_real_runs describes them. */
static NOINLINE RuntimeStatus set_runs_rest(Runtime *s, const RuntimeReference first[], const unsigned char length[],
                                            size_t n, const double values[], size_t e) {
    const NativeClass *c = s->cls;
    const size_t inputs = c->parameter_count, end = inputs + c->input_count;
    for (size_t i = 0; i < n; ++i, e = WHOLE_RUN) {
        const RuntimeReference vr = first[i];
        const size_t m = length[i];
        if (e == WHOLE_RUN) {
            e = 0;
            if (vr >= inputs && vr + m <= end && !c->written) {
                s->base.cached = 0;
                e = copy_finite(inst(s)->values + vr, values, m);
            }
        }
        for (; e < m; ++e) {
            const RuntimeReference element = vr + (RuntimeReference)e;
            runtime_set_real(s, &element, 1, values + e);
        }
        values += m;
    }
    return RUNTIME_OK;
}

/* runtime_set_real of `n` runs of consecutive value references, as runtime_get_real_runs: the finite values of a run of
 * inputs stored at once (in order, as runtime_set_real stores them), no call on the way; any other value (and all
 * after it) as runtime_set_real takes it. */
RuntimeStatus runtime_set_real_runs(Runtime *s, const RuntimeReference first[], const unsigned char length[], size_t n,
                                    const double values[]) {
    if (s->cls->written) return set_runs_rest(s, first, length, n, values, WHOLE_RUN); /* (no run stored at once) */
    for (const unsigned char *const last = length + n; length < last; ++first, ++length) {
        const NativeClass *c = s->cls; /* (read again for each run: fewer registers kept across the loop) */
        const size_t vr = *first, m = *length;
        if (!(vr >= c->parameter_count && vr + m <= c->parameter_count + c->input_count))
            return set_runs_rest(s, first, length, (size_t)(last - length), values, WHOLE_RUN);
        s->base.cached = 0;
        const size_t e = copy_finite(s->base.values + vr, values, m);
        if (e < m) return set_runs_rest(s, first, length, (size_t)(last - length), values, e);
        values += m;
    }
    return RUNTIME_OK;
}

RuntimeStatus runtime_get_integer(Runtime *s, const RuntimeReference vr[], size_t nvr, int values[]) {
    double value;
    for (size_t i = 0; i < nvr; ++i) {
        values[i] = 0;
        if (!variable(s, vr[i], NATIVE_INTEGER, 0) || read_value(s, vr[i], &value) != 0) continue;
        if (value == floor(value) && value >= -2147483648.0 && value <= 2147483647.0) values[i] = (int)value;
        else {
            char repr[40];
            native_number(value, repr, sizeof repr);
            log_error(s, "%s: fmi%dGet%s: %s = %s is not an FMI %s (32 bits)", s->base.name, s->fmi_version,
                      type_name(s, NATIVE_INTEGER), s->cls->variables[vr[i]].name, repr, type_name(s, NATIVE_INTEGER));
        }
    }
    return RUNTIME_OK;
}

RuntimeStatus runtime_get_boolean(Runtime *s, const RuntimeReference vr[], size_t nvr, int values[]) {
    double value;
    for (size_t i = 0; i < nvr; ++i)
        values[i] = variable(s, vr[i], NATIVE_BOOLEAN, 0) && read_value(s, vr[i], &value) == 0 && value != 0.0;
    return RUNTIME_OK;
}

RuntimeStatus runtime_get_string(Runtime *s, const RuntimeReference vr[], size_t nvr, const char *values[]) {
    for (size_t i = 0; i < nvr; ++i)
        values[i] = variable(s, vr[i], NATIVE_STRING, 0) ? inst(s)->strings[vr[i]] : "";
    return RUNTIME_OK;
}

RuntimeStatus runtime_set_real(Runtime *s, const RuntimeReference vr[], size_t nvr, const double values[]) {
    const NativeClass *c = s->cls;
    const size_t first = c->parameter_count, last = first + c->input_count;
    size_t i = 0;
    /* the common case, finite inputs of a class without `written`, stored while they are (two at a time, then one):
     * one range check each (an unsigned difference); the first other value and all after it as below, in order */
    if (!c->written) {
        double *to = s->base.values;
        const RuntimeReference from = (RuntimeReference)first, count = (RuntimeReference)c->input_count;
        for (; i + 1 < nvr; i += 2) {
            const RuntimeReference a = vr[i], b = vr[i + 1];
            const double x = values[i], y = values[i + 1];
            if (!(a - from < count && b - from < count && isfinite(x) && isfinite(y))) break;
            to[a] = x, to[b] = y;
        }
        for (; i < nvr && vr[i] - from < count && isfinite(values[i]); ++i) to[vr[i]] = values[i];
        if (i) s->base.cached = 0;
    }
    for (; i < nvr; ++i) {
        if (vr[i] >= first && vr[i] < last && isfinite(values[i])) { /* an input: the common case */
            inst(s)->values[vr[i]] = values[i];
            s->base.cached = 0;
            if (c->written) c->written(inst(s), vr[i]);
        } else if (variable(s, vr[i], NATIVE_REAL, 1)) {
            set_value(s, vr[i], values[i]);
        }
    }
    return RUNTIME_OK;
}

RuntimeStatus runtime_set_integer(Runtime *s, const RuntimeReference vr[], size_t nvr, const int values[]) {
    for (size_t i = 0; i < nvr; ++i)
        if (variable(s, vr[i], NATIVE_INTEGER, 1)) set_value(s, vr[i], values[i]);
    return RUNTIME_OK;
}

RuntimeStatus runtime_set_boolean(Runtime *s, const RuntimeReference vr[], size_t nvr, const int values[]) {
    for (size_t i = 0; i < nvr; ++i)
        if (variable(s, vr[i], NATIVE_BOOLEAN, 1)) set_value(s, vr[i], values[i] != 0);
    return RUNTIME_OK;
}

RuntimeStatus runtime_set_string(Runtime *s, const RuntimeReference vr[], size_t nvr, const char *const values[]) {
    NativeInstance *n = inst(s);
    for (size_t i = 0; i < nvr; ++i) {
        const NativeVariable *v = variable(s, vr[i], NATIVE_STRING, 1);
        if (!v) continue;
        if (n->initialized) {
            log_error(s, "setting %s failed: %s '%s': %s = '%s' is a fixed parameter and cannot change after "
                      "initialization", v->name, s->cls->name, s->base.name, v->name, values[i]);
            continue;
        }
        char *copy = platform_strndup(values[i], SIZE_MAX);
        if (!copy) return RUNTIME_ERROR;
        free(n->strings[vr[i]]);
        n->strings[vr[i]] = copy;
        native_texts_changed(n);
        s->base.cached = 0;
        if (s->cls->parameter_changed) s->cls->parameter_changed(n);
    }
    return RUNTIME_OK;
}

/* --- stepping -------------------------------------------------------------------------------------- */

/* A step refused for its arguments (logged; the instance unchanged). */
static NOINLINE RuntimeStatus refuse_step(Runtime *s, double t, double h) {
    char at[40], size[40], wanted[40];
    native_number(t, at, sizeof at);
    native_number(h, size, sizeof size);
    native_number(inst(s)->time, wanted, sizeof wanted);
    log_error(s, "%s: fmi%dDoStep refused: currentCommunicationPoint = %s, communicationStepSize = %s; expected "
              "currentCommunicationPoint = %s (the end of the last step or the restored state's time) and a "
              "finite step size > 0", s->base.name, s->fmi_version, at, size, wanted);
    return RUNTIME_OK;
}

/* A step the law could not take: the state it started from back, logged. */
static NOINLINE RuntimeStatus failed_step(Runtime *s, double t, double h) {
    NativeInstance *n = inst(s);
    char at[40], size[40];
    memcpy(n->state, s->before, s->cls->state_count * sizeof *s->before);
    native_measured(t, at, sizeof at);
    native_number(h, size, sizeof size);
    log_error(s, "%s: step at t=%s h=%s failed: %s", s->base.name, at, size, n->message);
    s->base.cached = 0;
    return RUNTIME_DISCARD;
}

/* The class's warning after a step, logged. */
static NOINLINE void step_warning(Runtime *s) {
    char warning[2048];
    if (s->cls->step_warning(inst(s), warning, sizeof warning)) log_text(s, RUNTIME_WARNING, warning);
}

RuntimeStatus runtime_do_step(Runtime *s, double t, double h) {
    NativeInstance *n = inst(s);
    const NativeClass *c = s->cls;
    const double expected = n->time, scale = fabs(expected) > 1.0 ? fabs(expected) : 1.0; /* fmax(1, |expected|) */
    if (!(isfinite(t) && isfinite(h) && h > 0.0 && fabs(t - expected) <= TIME_TOLERANCE * scale))
        return refuse_step(s, t, h);
    if (s->initialization_error) {
        log_error(s, "initialization failed: %s", s->initialization_error);
        return RUNTIME_DISCARD;
    }
    s->step_kept = 0;
    s->base.cached = 0; /* unless the law's advance leaves the outputs after the step (model.h) */
    if (c->advance) {
        for (size_t k = 0; k < c->state_count; ++k) s->before[k] = n->state[k];
        n->arithmetic = 0;
        if (!s->discrete_in_event_mode && c->advance(n, t, h) != 0) return failed_step(s, t, h);
    }
    n->time = t + h;
    s->step_kept = 1, s->step_start = t, s->step_size = h;
    if (c->step_warning) step_warning(s);
    return RUNTIME_OK;
}

int runtime_integrates(const Runtime *s) {
    return s->cls->continuous_count > 0 && s->cls->continuous_count <= 64 && s->cls->derivatives
           && !s->cls->co_simulation_only;
}

/* The derivatives at `time` and states x, the inputs refreshed there: 0, or -1 after logging why. */
static int stage(Runtime *s, const RuntimeInputs *inputs, double time, const double *x, double *k) {
    NativeInstance *n = inst(s);
    const NativeClass *c = s->cls;
    memcpy(n->state, x, c->continuous_count * sizeof *x);
    n->time = time;
    s->base.cached = 0;
    if (c->states_set && c->states_set(n) != 0) {
        log_error(s, "%s: fmi%dDoStep: %s", s->base.name, s->fmi_version, n->message);
        return -1;
    }
    if (inputs->refresh(inputs->environment, time) != 0) return -1;
    s->base.cached = 0;
    if (c->derivatives(n, k) != 0) {
        log_error(s, "%s: fmi%dDoStep: %s", s->base.name, s->fmi_version, n->message);
        return -1;
    }
    for (size_t i = 0; i < c->continuous_count; ++i)
        if (!isfinite(k[i])) {
            char at[40];
            native_measured(time, at, sizeof at);
            log_error(s, "%s: fmi%dDoStep: der(%s) not finite at t=%s (inputs outside the range the law can handle?)",
                      s->base.name, s->fmi_version, c->continuous_names[i], at);
            return -1;
        }
    return 0;
}

/* One Dormand-Prince step from (t, x) by h into y, with the error norm (1 or less: within tolerance); k[0] the
 * derivatives at (t, x) where *first says they are there (else made, and *first set), k[6] those at (t + h, y)
 * (the next step's first: the method is first same as last); 0 or -1. */
static int dp_step(Runtime *s, const RuntimeInputs *inputs, double t, double h, double tolerance, const double *x,
                   double *y, double *norm, double k[7][64], int *first) {
    const size_t nx = s->cls->continuous_count;
    double z[64];
    if (!*first) {
        if (stage(s, inputs, t, x, k[0]) != 0) return -1;
        *first = 1;
    }
    for (int i = 1; i < 7; ++i) {
        for (size_t m = 0; m < nx; ++m) {
            double sum = 0.0;
            for (int j = 0; j < i; ++j) sum += DP_A[i][j] * k[j][m];
            z[m] = x[m] + h * sum;
        }
        if (stage(s, inputs, t + DP_C[i] * h, z, k[i]) != 0) return -1;
    }
    memcpy(y, z, nx * sizeof *y); /* the last stage's point is the fifth-order solution */
    double squares = 0.0;
    for (size_t m = 0; m < nx; ++m) {
        double error = 0.0;
        for (int i = 0; i < 7; ++i) error += DP_E[i] * k[i][m];
        const double scaled = h * error / (tolerance * (1.0 + fmax(fabs(x[m]), fabs(y[m]))));
        squares += scaled * scaled;
    }
    *norm = sqrt(squares / (double)nx);
    return 0;
}

RuntimeStatus runtime_integrate(Runtime *s, double t, double h, double tolerance, const RuntimeInputs *inputs,
                                double *ended) {
    NativeInstance *n = inst(s);
    const size_t nx = s->cls->continuous_count;
    *ended = t;
    if (!runtime_integrates(s))
        return log_error(s, "%s: fmi%dDoStep: %s has no continuous states to integrate with intermediate inputs",
                         s->base.name, s->fmi_version, s->cls->name);
    if (!(isfinite(t) && isfinite(h) && h > 0.0 && fabs(t - n->time) <= TIME_TOLERANCE * fmax(1.0, fabs(n->time))))
        return runtime_do_step(s, t, h); /* refused there, saying why */
    if (s->initialization_error) return runtime_do_step(s, t, h);
    if (!(tolerance > 0.0 && tolerance < 1.0)) tolerance = 1e-10;
    double x[64], y[64], start[64], norm = 0.0, k[7][64], trial[7][64];
    int first = 0; /* k[0] holds the derivatives at (now, x) */
    memcpy(x, n->state, nx * sizeof *x);
    memcpy(start, x, sizeof start);
    const double end = t + h;
    double now = t, size = h;
    s->step_kept = 0;
    for (int steps = 0; now < end; ++steps) {
        if (steps >= 100000 || !(size > 1e-14 * fmax(1.0, fabs(now)))) {
            char at[40];
            native_measured(now, at, sizeof at);
            memcpy(n->state, start, nx * sizeof *start), n->time = t, s->base.cached = 0;
            log_error(s, "%s: fmi%dDoStep: the integration with intermediate inputs cannot keep its error within "
                      "the tolerance %g at t=%s (a step of %g s)", s->base.name, s->fmi_version, tolerance, at, size);
            return RUNTIME_DISCARD;
        }
        const double next = size >= end - now || end - (now + size) < 1e-12 * fmax(1.0, fabs(end)) ? end : now + size;
        const double taken = next - now;
        if (dp_step(s, inputs, now, next - now, tolerance, x, y, &norm, k, &first) != 0) {
            memcpy(n->state, start, nx * sizeof *start), n->time = t, s->base.cached = 0;
            return RUNTIME_DISCARD;
        }
        const double factor = norm > 0.0 ? 0.9 * pow(norm, -0.2) : 5.0;
        if (norm > 1.0) {
            size = taken * fmax(0.2, factor);
            continue;
        }
        memcpy(n->state, y, nx * sizeof *y), n->time = next, s->base.cached = 0;
        /* the importer may ask for another time inside this internal step, as often as it needs; at the time it
         * is at (or, after an early return, without asking) the step ends there */
        double at = next;
        int asked;
        for (;;) {
            at = n->time;
            asked = inputs->reached(inputs->environment, n->time, &at);
            if (!(asked == 1 && at != n->time && at > now && at <= next)) break;
            double z[64], ignored;
            int known = 1;
            memcpy(trial[0], k[0], sizeof trial[0]);
            if (at == next) {
                memcpy(z, y, nx * sizeof *y);
            } else if (dp_step(s, inputs, now, at - now, tolerance, x, z, &ignored, trial, &known) != 0) {
                memcpy(n->state, start, nx * sizeof *start), n->time = t, s->base.cached = 0;
                return RUNTIME_DISCARD;
            }
            memcpy(n->state, z, nx * sizeof *z), n->time = at, s->base.cached = 0;
        }
        if (n->time < next || (asked == 1 && !(at > n->time))) break;
        memcpy(x, y, nx * sizeof *y);
        memcpy(k[0], k[6], sizeof k[0]);
        now = next;
        size = taken * fmin(5.0, factor);
    }
    s->base.cached = 0;
    *ended = n->time;
    return RUNTIME_OK;
}

int runtime_variable(const Runtime *s, RuntimeReference vr, const char **name, int *real, int *causality) {
    if (!s || vr >= s->cls->variable_count) return -1;
    const NativeVariable *v = &s->cls->variables[vr];
    *name = v->name;
    *real = v->type == NATIVE_REAL;
    *causality = v->causality;
    return 0;
}

RuntimeStatus runtime_shorten_step(Runtime *s, double h) {
    NativeInstance *n = inst(s);
    if (!(s->step_kept && isfinite(h) && h > 0.0 && h < s->step_size)) {
        char size[40], last[40];
        native_number(h, size, sizeof size);
        native_number(s->step_size, last, sizeof last);
        log_error(s, "%s: the last step cannot end earlier at a step size of %s s (%s%s)", s->base.name, size,
                  s->step_kept ? "it was " : "no step to shorten", s->step_kept ? last : "");
        return RUNTIME_OK;
    }
    if (s->cls->advance) memcpy(n->state, s->before, s->cls->state_count * sizeof *n->state);
    n->time = s->step_start;
    s->base.cached = 0;
    const double whole = s->step_size;
    RuntimeStatus status = runtime_do_step(s, s->step_start, h);
    if (s->step_kept) s->step_size = whole; /* it may end anywhere inside the whole step again */
    return status;
}

/* --- Model Exchange ---------------------------------------------------------------------------------- */

static RuntimeStatus refused(Runtime *s, const char *function, const char *problem) {
    return log_error(s, "%s: %s: %s", s->base.name, function, problem);
}

/* The name of entry i of the continuous states ("nx") or of the event indicators ("ni"). */
static const char *entry_name(const Runtime *s, const char *what, size_t i) {
    const NativeClass *c = s->cls;
    if (strcmp(what, "ni")) return c->continuous_names[i];
    return c->variables[c->parameter_count + c->input_count + c->output_count - c->indicator_count + i].name;
}

static RuntimeStatus counted(Runtime *s, const char *function, const char *what, size_t have, size_t count) {
    if (have == count) return RUNTIME_OK;
    char problem[1024];
    size_t used = (size_t)snprintf(problem, sizeof problem, "%s = %zu, but %s has %zu (", what, count, s->cls->name,
                                   have);
    for (size_t i = 0; i < have && used < sizeof problem; ++i)
        used += (size_t)snprintf(problem + used, sizeof problem - used, "%s%s", i ? ", " : "", entry_name(s, what, i));
    if (used < sizeof problem) snprintf(problem + used, sizeof problem - used, "%s)", have ? "" : "none");
    refused(s, function, problem);
    return RUNTIME_ERROR;
}

static RuntimeStatus evaluated(Runtime *s, const char *function, const char *what, const double *values, size_t have,
                            double out[], size_t nout) {
    if (counted(s, function, what, have, nout) != RUNTIME_OK) return RUNTIME_OK;
    char bad[1024] = "";
    size_t used = 0;
    for (size_t i = 0; i < have; ++i)
        if (!isfinite(values[i]) && used < sizeof bad)
            used += (size_t)snprintf(bad + used, sizeof bad - used, "%s%s", used ? ", " : "", entry_name(s, what, i));
    if (used) {
        char problem[1200], time[40];
        native_repr(inst(s)->time, time, sizeof time);
        snprintf(problem, sizeof problem, "%s not finite at t = %s (states or inputs outside the range the law can "
                 "handle?)", bad, time);
        return refused(s, function, problem);
    }
    memcpy(out, values, have * sizeof *out);
    return RUNTIME_OK;
}

/* --- directional derivatives (components/partials.py) --------------------------------------------------- */

#define DIFFERENCE_STEP 1e-5 /* components/partials.py */

/* An unknown (an output, or a state derivative: the odd locals) or, with `known`, a known (an input, or a state:
 * the even locals); else 0 with the message set as the Python component words it. */
static int partial_operand(Runtime *s, RuntimeReference vr, int known) {
    const NativeClass *c = s->cls;
    const size_t first_output = c->parameter_count + c->input_count, first_local = first_output + c->output_count;
    if (vr >= c->variable_count) {
        snprintf(inst(s)->message, NATIVE_MESSAGE_SIZE, "valueReference %u: no such variable", vr);
        return 0;
    }
    const NativeVariable *v = &c->variables[vr];
    int fits = known ? v->causality == NATIVE_INPUT || (vr >= first_local && (vr - first_local) % 2 == 0)
                     : (vr >= first_output && vr < first_local) || (vr >= first_local && (vr - first_local) % 2 == 1);
    if (!fits)
        native_fail_text(inst(s), 0, "%s '%s': directional derivative %s = '%s' %s", c->name, s->base.name,
                         known ? "known" : "unknown", v->name,
                         known ? "is not an input or a continuous state" : "is not an output or a state derivative");
    return fits;
}

/* The unknown at the current point: an output, or a state derivative (no side effect); 0, or -1 (message set). */
static int unknown_value(Runtime *s, RuntimeReference unknown, double *buffer, double *value) {
    const NativeClass *c = s->cls;
    const size_t first_output = c->parameter_count + c->input_count, first_local = first_output + c->output_count;
    NativeInstance *n = inst(s);
    if (unknown < first_local) {
        if (c->outputs(n, buffer) != 0) return -1;
        *value = buffer[unknown - first_output];
    } else {
        if (c->derivatives(n, buffer) != 0) return -1;
        *value = buffer[(unknown - first_local) / 2];
    }
    return 0;
}

/* ∂unknown/∂known by a central difference, the known moved and put back exactly; 0, or -1 (message set). */
static int difference(Runtime *s, RuntimeReference unknown, RuntimeReference known, double *buffer,
                      double *partial) {
    const NativeClass *c = s->cls;
    const size_t first_local = c->parameter_count + c->input_count + c->output_count;
    NativeInstance *n = inst(s);
    double *slot = known < first_local ? &n->values[known] : &n->state[(known - first_local) / 2];
    const double x = *slot, step = DIFFERENCE_STEP * (fabs(x) > 1.0 ? fabs(x) : 1.0);
    double up, down;
    *slot = x + step;
    int failed = unknown_value(s, unknown, buffer, &up);
    if (!failed) {
        *slot = x - step;
        failed = unknown_value(s, unknown, buffer, &down);
    }
    *slot = x;
    if (failed) return -1;
    *partial = (up - down) / (2 * step);
    return 0;
}

/* in = (nUnknown, nKnown, the unknowns' and the knowns' value references, the seeds), `nin` values; out: nUnknown
 * values. Each partial is found (or differenced) once per distinct (unknown, known) pair and each distinct unknown's
 * sum is formed once, in the order of the knowns: the cost is linear in nUnknown + nKnown (times the class's number of
 * variables), whatever the references repeat, and every sum is the one a term-by-term loop would form. */
static RuntimeStatus directional_derivative(Runtime *s, const char *what, const double in[], size_t nin,
                                         double out[], size_t nout) {
    const NativeClass *c = s->cls;
    NativeInstance *n = inst(s);
    const size_t variables = c->variable_count;
    if (nin < 2 || !(in[0] >= 0.0 && in[1] >= 0.0 && in[0] <= (double)nin && in[1] <= (double)nin)
        || 2 + (size_t)in[0] + 2 * (size_t)in[1] != nin || (size_t)in[0] != nout)
        return refused(s, what, "a request whose counts do not match its arrays");
    const size_t nu = (size_t)in[0], nk = (size_t)in[1];
    const size_t first_output = c->parameter_count + c->input_count, first_local = first_output + c->output_count;
    const double *unknowns = in + 2, *knowns = in + 2 + nu, *seeds = in + 2 + nu + nk;
    for (size_t i = 0; i < nu + nk; ++i) /* every reference exists, then each is of its kind (as the Python FMU) */
        if (!(unknowns[i] >= 0.0 && unknowns[i] < (double)variables)
            && !partial_operand(s, unknowns[i] >= 0.0 && unknowns[i] < 4294967296.0 ? (RuntimeReference)unknowns[i]
                                                                                        : 0xffffffffu, 0))
            return refused(s, what, n->message);
    for (size_t i = 0; i < nu; ++i)
        if (!partial_operand(s, (RuntimeReference)unknowns[i], 0)) return refused(s, what, n->message);
    for (size_t j = 0; j < nk; ++j) /* a parameter with seed 0: FMI 2.0's InitialUnknowns list parameters among
                                     * the knowns, and a host passes the whole list to ask for one column of it */
        if (!(seeds[j] == 0.0 && knowns[j] < (double)c->parameter_count)
            && !partial_operand(s, (RuntimeReference)knowns[j], 1))
            return refused(s, what, n->message);
    size_t size = c->output_count > c->continuous_count ? c->output_count : c->continuous_count;
    /* the analytic partials, a buffer, and per variable: the partial against each known once found and each
     * unknown's sum once formed (`found` says which) */
    double *analytic = malloc((c->partial_count + size + variables * variables + variables + 1) * sizeof *analytic);
    unsigned char *found = calloc(variables * variables + variables + 1, 1);
    if (!analytic || !found) {
        free(analytic), free(found);
        return refused(s, what, "out of memory");
    }
    double *buffer = analytic + c->partial_count, *partials = buffer + size, *sums = partials + variables * variables;
    unsigned char *summed = found + variables * variables;
    RuntimeStatus status = RUNTIME_OK;
    if (c->partial_count && c->partials(n, analytic) != 0) status = refused(s, what, n->message);
    for (size_t i = 0; status == RUNTIME_OK && i < nu; ++i) {
        const RuntimeReference u = (RuntimeReference)unknowns[i];
        if (summed[u]) {
            out[i] = sums[u];
            continue;
        }
        double total = 0.0;
        for (size_t j = 0; j < nk; ++j) {
            if (seeds[j] == 0.0) continue;
            const RuntimeReference k = (RuntimeReference)knowns[j];
            double partial = partials[u * variables + k];
            if (!found[u * variables + k]) {
                size_t p = 0;
                while (p < c->partial_count && !(c->partial_pattern[p][0] == u && c->partial_pattern[p][1] == k)) ++p;
                partial = 0.0;
                if (p < c->partial_count) {
                    partial = analytic[p];
                } else if (u >= first_local || k >= first_local
                           || c->feedthrough[(u - first_output) * c->input_count + (k - c->parameter_count)]) {
                    if (difference(s, u, k, buffer, &partial) != 0) {
                        status = refused(s, what, n->message);
                        break;
                    }
                }
                partials[u * variables + k] = partial, found[u * variables + k] = 1;
            }
            total += partial * seeds[j];
        }
        if (status == RUNTIME_OK) out[i] = sums[u] = total, summed[u] = 1;
    }
    free(analytic), free(found);
    return status;
}

RuntimeStatus runtime_model_exchange(Runtime *s, const char *method, const char *what, const double in[], size_t nin,
                                double out[], size_t nout) {
    NativeInstance *n = inst(s);
    const NativeClass *c = s->cls;
    double values[64];
    if (!strcmp(method, "me_open")) {
        if (c->co_simulation_only) {
            char problem[1024];
            snprintf(problem, sizeof problem, "%s has no Model Exchange form: %s; instantiate it %s", c->name,
                     c->co_simulation_only, s->fmi_version == 3 ? "with fmi3InstantiateCoSimulation"
                                                                : "as fmi2CoSimulation");
            return refused(s, what, problem);
        }
        n->in_model_exchange = 1;
        return RUNTIME_OK;
    }
    if (!strcmp(method, "me_set_time")) {
        double t = in[0];
        if (!isfinite(t) || t < n->accepted_time) {
            char accepted[40], problem[400];
            native_number(n->accepted_time, accepted, sizeof accepted);
            snprintf(problem, sizeof problem, "must be finite and not before %s s, the last event or completed "
                     "integrator step", accepted);
            native_fail(n, "time", t, problem);
            return refused(s, what, n->message);
        }
        n->time = t;
        n->in_model_exchange = 1;
        s->base.cached = 0;
        return RUNTIME_OK;
    }
    if (!strcmp(method, "me_set_states")) {
        if (nin != c->continuous_count) {
            char problem[2048], values[1536];
            native_number_sequence(in, nin, 1, values, sizeof values);
            size_t used = (size_t)snprintf(problem, sizeof problem, "%s '%s': continuous states = %s must be %zu "
                                           "values (", c->name, s->base.name, values, c->continuous_count);
            for (size_t i = 0; i < c->continuous_count && used < sizeof problem; ++i)
                used += (size_t)snprintf(problem + used, sizeof problem - used, "%s%s", i ? ", " : "", c->continuous_names[i]);
            if (used < sizeof problem) snprintf(problem + used, sizeof problem - used, "%s)", c->continuous_count ? "" : "none");
            return refused(s, what, problem);
        }
        for (size_t i = 0; i < nin; ++i)
            if (!isfinite(in[i])) {
                char name[200];
                snprintf(name, sizeof name, "state %s", c->continuous_names[i]);
                native_fail(n, name, in[i], "must be finite");
                return refused(s, what, n->message);
            }
        memcpy(n->state, in, nin * sizeof *in);
        s->base.cached = 0;
        if (c->states_set && c->states_set(n) != 0) return refused(s, what, n->message);
        return RUNTIME_OK;
    }
    if (!strcmp(method, "me_get_states"))
        return evaluated(s, what, "nx", n->state, c->continuous_count, out, nout);
    if (!strcmp(method, "me_nominals")) {
        for (size_t i = 0; i < c->continuous_count; ++i) values[i] = 1.0;
        return evaluated(s, what, "nx", values, c->continuous_count, out, nout);
    }
    if (!strcmp(method, "me_derivatives")) {
        if (c->continuous_count && c->derivatives(n, values) != 0) return refused(s, what, n->message);
        return evaluated(s, what, "nx", values, c->continuous_count, out, nout);
    }
    if (!strcmp(method, "me_indicators")) {
        if (c->event_pending && !(n->resume_checked == n->event_time)) { /* once after each event mode */
            const int pending = c->event_pending(n);
            if (pending < 0) return refused(s, what, n->message);
            n->resume_checked = n->event_time;
            if (pending != n->resume) n->resume = pending, s->base.cached = 0;
        }
        if (c->indicator_count && native_compute_outputs(inst(s)) != 0) return refused(s, what, n->message);
        return evaluated(s, what, "ni", s->base.outputs + c->output_count - c->indicator_count, c->indicator_count, out,
                         nout);
    }
    if (!strcmp(method, "me_new_discrete_states")) { /* the point is accepted; then the next time event */
        const int changed = c->update_discrete_states ? c->update_discrete_states(n) : 0;
        if (changed < 0) return refused(s, what, n->message);
        n->accepted_time = n->event_time = n->time;
        n->resume = 0;
        s->base.cached = 0;
        double next = 0.0;
        int defined = native_next_time_event(n, &next);
        out[0] = ((changed & NATIVE_STATES_CHANGED) ? RUNTIME_STATES_CHANGED : 0.0)
                 + ((changed & NATIVE_DISCRETE_NEEDED) ? RUNTIME_DISCRETE_STATES_NEEDED : 0.0);
        out[1] = defined ? 1.0 : 0.0, out[2] = defined ? next : 0.0;
        return RUNTIME_OK;
    }
    if (!strcmp(method, "directional_derivative")) return directional_derivative(s, what, in, nin, out, nout);
    if (!strcmp(method, "sizes") && nout == 4) { /* variables, continuous states, event indicators; the time */
        out[0] = (double)c->variable_count, out[1] = (double)c->continuous_count;
        out[2] = (double)c->indicator_count, out[3] = n->time;
        return RUNTIME_OK;
    }
    if (!strcmp(method, "cs_event_mode_used")) { /* fmi3InstantiateCoSimulation with eventModeUsed: out[0] 1 if
                                                   * the discrete state is held over a step, updated in event mode */
        s->discrete_in_event_mode = c->event_pending != NULL;
        if (nout > 0) out[0] = s->discrete_in_event_mode;
        return RUNTIME_OK;
    }
    if (!strcmp(method, "cs_event_needed") && nout == 1) { /* after a step with the discrete state held: 1 if an
                                                              * event iteration would change it */
        const int pending = s->discrete_in_event_mode ? c->event_pending(n) : 0;
        if (pending < 0) return refused(s, what, n->message);
        out[0] = pending;
        return RUNTIME_OK;
    }
    if (!strcmp(method, "next_time_event") && nout == 2) { /* co-simulation's event mode: no mode is committed */
        double next = 0.0;
        int defined = native_next_time_event(n, &next);
        n->accepted_time = n->event_time = n->time;
        out[0] = defined ? 1.0 : 0.0, out[1] = defined ? next : 0.0;
        return RUNTIME_OK;
    }
    if (!strcmp(method, "me_completed_step")) {
        n->accepted_time = n->time;
        return RUNTIME_OK;
    }
    return refused(s, what, "not a Model Exchange call of this FMU");
}

/* --- FMU states ------------------------------------------------------------------------------------- */

typedef struct {
    double *values, *state;
    char **strings;
    char *rejected; /* a serialized state refused, and why: never applied (serialized as a NUL and the reason) */
    double time, accepted_time, event_time;
    int initialized, in_model_exchange;
} Saved;

static void free_saved(const NativeClass *c, Saved *saved) {
    if (!saved) return;
    for (size_t i = 0; saved->strings && i < c->variable_count; ++i) free(saved->strings[i]);
    free(saved->strings);
    free(saved->rejected);
    free(saved->values);
    free(saved->state);
    free(saved);
}

static Saved *new_saved(const NativeClass *c) {
    Saved *saved = calloc(1, sizeof *saved);
    if (!saved) return NULL;
    saved->values = calloc(c->variable_count + 1, sizeof *saved->values);
    saved->state = calloc(c->state_count + 1, sizeof *saved->state);
    saved->strings = calloc(c->variable_count + 1, sizeof *saved->strings);
    if (!saved->values || !saved->state || !saved->strings) {
        free_saved(c, saved);
        return NULL;
    }
    return saved;
}

/* Copy the values of one side to the other: 0, or -1 out of memory (the target then unchanged). */
static int copy_strings(const NativeClass *c, char **to, char *const *from) {
    char **fresh = calloc(c->variable_count + 1, sizeof *fresh);
    if (!fresh) return -1;
    for (size_t i = 0; i < c->variable_count; ++i)
        if (from[i] && !(fresh[i] = platform_strndup(from[i], SIZE_MAX))) {
            for (size_t k = 0; k < i; ++k) free(fresh[k]);
            free(fresh);
            return -1;
        }
    for (size_t i = 0; i < c->variable_count; ++i) {
        free(to[i]);
        to[i] = fresh[i];
    }
    free(fresh);
    return 0;
}

RuntimeStatus runtime_get_state(Runtime *s, void **state) {
    const NativeClass *c = s->cls;
    NativeInstance *n = inst(s);
    Saved *saved = new_saved(c);
    if (!saved || copy_strings(c, saved->strings, n->strings) != 0) {
        free_saved(c, saved);
        return RUNTIME_ERROR;
    }
    memcpy(saved->values, n->values, c->variable_count * sizeof *n->values);
    memcpy(saved->state, n->state, c->state_count * sizeof *n->state);
    saved->time = n->time;
    saved->accepted_time = n->accepted_time;
    saved->event_time = n->event_time;
    saved->initialized = n->initialized;
    saved->in_model_exchange = n->in_model_exchange;
    *state = saved;
    return RUNTIME_OK;
}

RuntimeStatus runtime_set_state(Runtime *s, void *state) {
    const NativeClass *c = s->cls;
    NativeInstance *n = inst(s);
    const Saved *saved = state;
    if (saved->rejected) return log_error(s, "%s: %s refused, the instance is unchanged: %s", s->base.name,
                                          s->fmi_version == 3 ? "fmi3SetFMUState" : "fmi2SetFMUstate",
                                          saved->rejected);
    if (copy_strings(c, n->strings, saved->strings) != 0) return RUNTIME_ERROR;
    native_texts_changed(n);
    memcpy(n->values, saved->values, c->variable_count * sizeof *n->values);
    memcpy(n->state, saved->state, c->state_count * sizeof *n->state);
    s->step_kept = 0;
    n->time = saved->time;
    n->accepted_time = saved->accepted_time;
    n->event_time = saved->event_time;
    n->initialized = saved->initialized;
    n->in_model_exchange = saved->in_model_exchange;
    n->resume = 0, n->resume_checked = NAN;
    s->base.cached = 0;
    if (c->state_restored) c->state_restored(n);
    return RUNTIME_OK;
}

void runtime_free_state(Runtime *s, void *state) { free_saved(s->cls, state); }

int runtime_state_modes(void *state, int *initialized, int *model_exchange) {
    const Saved *saved = state;
    if (!saved || saved->rejected) return -1;
    *initialized = saved->initialized, *model_exchange = saved->in_model_exchange;
    return 0;
}

/* Serialized: SERIAL_MAGIC, the class name, the counts, then the doubles (times, phase flags, values, state) as 8
 * little-endian bytes each, then each String as its length (8 bytes) and bytes, then the CRC-32 of everything before
 * it (4 bytes, little-endian). */
static void put(char **p, const void *data, size_t size) {
    memcpy(*p, data, size);
    *p += size;
}

static void put_double(char **p, double x) {
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    unsigned char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = (unsigned char)(bits >> (8 * i));
    put(p, bytes, 8);
}

RuntimeStatus runtime_serialize(Runtime *s, void *state, char **bytes, size_t *size) {
    const NativeClass *c = s->cls;
    const Saved *saved = state;
    if (saved->rejected) {
        *size = 1 + strlen(saved->rejected);
        if (!(*bytes = malloc(*size))) return RUNTIME_ERROR;
        (*bytes)[0] = '\0';
        memcpy(*bytes + 1, saved->rejected, *size - 1);
        return RUNTIME_OK;
    }
    size_t total = sizeof SERIAL_MAGIC + strlen(c->name) + 1 + 8 * (7 + c->variable_count + c->state_count) + 4;
    for (size_t i = 0; i < c->variable_count; ++i) total += 8 + (saved->strings[i] ? strlen(saved->strings[i]) : 0);
    char *p = *bytes = malloc(total);
    if (!p) return RUNTIME_ERROR;
    put(&p, SERIAL_MAGIC, sizeof SERIAL_MAGIC);
    put(&p, c->name, strlen(c->name) + 1);
    put_double(&p, (double)c->variable_count);
    put_double(&p, (double)c->state_count);
    put_double(&p, saved->time);
    put_double(&p, saved->accepted_time);
    put_double(&p, saved->event_time);
    put_double(&p, saved->initialized);
    put_double(&p, saved->in_model_exchange);
    for (size_t i = 0; i < c->variable_count; ++i) put_double(&p, saved->values[i]);
    for (size_t i = 0; i < c->state_count; ++i) put_double(&p, saved->state[i]);
    for (size_t i = 0; i < c->variable_count; ++i) {
        size_t length = saved->strings[i] ? strlen(saved->strings[i]) : 0;
        put_double(&p, (double)length);
        if (length) put(&p, saved->strings[i], length);
    }
    uint32_t crc = platform_crc32(*bytes, total - 4, 0);
    unsigned char sum[4] = {(unsigned char)crc, (unsigned char)(crc >> 8), (unsigned char)(crc >> 16),
                            (unsigned char)(crc >> 24)};
    put(&p, sum, 4);
    *size = total;
    return RUNTIME_OK;
}

typedef struct {
    const char *p, *end;
} Reader;

static int take(Reader *r, void *out, size_t size) {
    if ((size_t)(r->end - r->p) < size) return -1;
    memcpy(out, r->p, size);
    r->p += size;
    return 0;
}

static int take_double(Reader *r, double *x) {
    unsigned char bytes[8];
    if (take(r, bytes, 8) != 0) return -1;
    uint64_t bits = 0;
    for (int i = 7; i >= 0; --i) bits = bits << 8 | bytes[i];
    memcpy(x, &bits, sizeof *x);
    return 0;
}

/* Why the bytes are not a state of this class (NULL if they are; then `saved` holds it). */
static const char *read_state(Runtime *s, Reader *r, Saved *saved, char *why, size_t size) {
    const NativeClass *c = s->cls;
    const char *start = r->p;
    char magic[sizeof SERIAL_MAGIC];
    if (take(r, magic, sizeof magic) != 0) return "not a native mechfmu FMU state";
    if (!memcmp(magic, OLD_SERIAL_MAGIC, sizeof magic))
        return "a state serialized by an earlier version of mechfmu (native state format 1, without a checksum): "
               "this version cannot read it; serialize the state again with this FMU";
    if (memcmp(magic, SERIAL_MAGIC, sizeof magic) || r->end - r->p < 4) return "not a native mechfmu FMU state";
    const unsigned char *sum = (const unsigned char *)r->end - 4;
    uint32_t stored = (uint32_t)sum[0] | (uint32_t)sum[1] << 8 | (uint32_t)sum[2] << 16 | (uint32_t)sum[3] << 24;
    if (platform_crc32(start, (size_t)(r->end - 4 - start), 0) != stored)
        return "its checksum does not match its bytes (changed or damaged after it was serialized)";
    r->end -= 4;
    size_t name_length = strlen(c->name) + 1;
    if ((size_t)(r->end - r->p) < name_length || memcmp(r->p, c->name, name_length)) return "a state of another class";
    r->p += name_length;
    double counts[2], flags[2];
    if (take_double(r, &counts[0]) || take_double(r, &counts[1]) || counts[0] != (double)c->variable_count
        || counts[1] != (double)c->state_count)
        return "a state of another version of this class (its counts differ)";
    if (take_double(r, &saved->time) || take_double(r, &saved->accepted_time) || take_double(r, &saved->event_time)
        || take_double(r, &flags[0]) || take_double(r, &flags[1]))
        return "cut short";
    if ((flags[0] != 0.0 && flags[0] != 1.0) || (flags[1] != 0.0 && flags[1] != 1.0)) return "a phase that is none";
    saved->initialized = flags[0] == 1.0;
    saved->in_model_exchange = flags[1] == 1.0;
    if (!isfinite(saved->time) || isnan(saved->accepted_time) || isnan(saved->event_time)
        || saved->accepted_time == INFINITY || saved->event_time == INFINITY)
        return "a time that is not finite";
    for (size_t i = 0; i < c->variable_count; ++i) {
        if (take_double(r, &saved->values[i])) return "cut short";
        if (!isfinite(saved->values[i])) {
            snprintf(why, size, "state.values.%s must be a finite number", c->variables[i].name);
            return why;
        }
    }
    for (size_t i = 0; i < c->state_count; ++i)
        if (take_double(r, &saved->state[i]) || !isfinite(saved->state[i])) return "a hidden state that is not finite";
    for (size_t i = 0; i < c->variable_count; ++i) {
        double length;
        if (take_double(r, &length) || !(length >= 0.0) || length > (double)(r->end - r->p)) return "cut short";
        if ((c->variables[i].type == NATIVE_STRING) != (length > 0.0 || c->variables[i].type == NATIVE_STRING))
            return "a text where the class has none";
        if (c->variables[i].type != NATIVE_STRING) continue;
        saved->strings[i] = platform_strndup(r->p, (size_t)length);
        if (!saved->strings[i] || strlen(saved->strings[i]) != (size_t)length) return "a text holding a NUL";
        r->p += (size_t)length;
    }
    if (r->p != r->end) return "bytes after the state";
    /* the phase and the times as the runtime leaves them (reset_values, exit_initialization_mode, Model Exchange) */
    if (!saved->initialized && !(saved->accepted_time == saved->event_time
                                 && (saved->accepted_time == -INFINITY || saved->accepted_time == saved->time)))
        return "a state before initialization with the times of one after it (its phase contradicts its times)";
    if (saved->initialized && !(isfinite(saved->accepted_time) && saved->event_time <= saved->accepted_time
                                && saved->accepted_time <= saved->time))
        return "an initialized state without the times of one (its phase contradicts its times)";
    if (saved->initialized && !saved->in_model_exchange && saved->event_time != saved->accepted_time)
        return "a Co-Simulation state with Model Exchange event times (its interface contradicts its times)";
    for (size_t i = 0; i < c->variable_count; ++i) { /* an Integer or a Boolean as the fmi2Set functions leave it */
        double v = saved->values[i];
        int type = c->variables[i].type;
        if ((type == NATIVE_INTEGER && !(v == floor(v) && v >= -2147483648.0 && v <= 2147483647.0))
            || (type == NATIVE_BOOLEAN && v != 0.0 && v != 1.0)) {
            char repr[40];
            native_number(v, repr, sizeof repr);
            snprintf(why, size, "state.values.%s = %s is not %s", c->variables[i].name, repr,
                     type == NATIVE_INTEGER ? "an FMI Integer (an integer of 32 bits)" : "a Boolean (0 or 1)");
            return why;
        }
    }
    return NULL;
}

RuntimeStatus runtime_deserialize(Runtime *s, const char *bytes, size_t size, void **state) {
    const NativeClass *c = s->cls;
    Saved *saved = new_saved(c);
    if (!saved) return RUNTIME_ERROR;
    Reader r = {bytes, bytes + size};
    char why[NATIVE_MESSAGE_SIZE];
    const char *problem = read_state(s, &r, saved, why, sizeof why);
    if (!problem) { /* the ranges and, initialized, the rules: on a scratch instance */
        Runtime *scratch = instantiate(s->cls, "state check", "", &s->logger, s->fmi_version);
        if (!scratch) {
            free_saved(c, saved);
            return RUNTIME_ERROR;
        }
        runtime_set_state(scratch, saved);
        NativeInstance *n = inst(scratch);
        for (size_t i = 0; !problem && i < c->parameter_count; ++i)
            if (c->variables[i].type != NATIVE_STRING && native_check_range(n, &c->variables[i], n->values[i]) != 0)
                problem = n->message;
        if (!problem && n->initialized && c->validate && c->validate(n) != 0) problem = n->message;
        if (problem) snprintf(why, sizeof why, "%s", problem);
        problem = problem ? why : NULL;
        runtime_free(scratch);
    }
    if (problem) {
        char *reason = malloc(strlen(c->name) + strlen(problem) + 64);
        if (!reason) {
            free_saved(c, saved);
            return RUNTIME_ERROR;
        }
        sprintf(reason, "%s: the serialized FMU state is refused: %s", c->name, problem);
        saved->rejected = reason;
    }
    *state = saved;
    return RUNTIME_OK;
}

/* --- the host library (components/native_component.py) ----------------------------------------------------------
 * The same runtime and laws, loaded into a Python process: the in-process component is a view of an instance here,
 * so its law runs as this C, the one implementation. The runtime_* functions above are its calls; these give what the
 * Python component shows of the instance. */
#ifdef MECHFMU_HOST_LIBRARY
#if defined(_WIN32)
#define HOST_API __declspec(dllexport)
#else
#define HOST_API __attribute__((visibility("default")))
#endif

/* What an instance logged since the Python side last took it: lines "<status> <text>". */
typedef struct {
    char *text;
    size_t used, size;
    RuntimeStatus worst; /* the worst status logged since the last call through an FMI signature (as_fmi) */
} HostLog;

/* Where every instance's messages are counted (NULL: not counted): the master's count of logged messages, which its
 * compiled exchange reads to stop where a message was logged. Set once, before any instance logs. */
static int64_t *host_messages;

HOST_API void host_count_messages(int64_t *counter) { __atomic_store_n(&host_messages, counter, __ATOMIC_RELEASE); }

static void host_logger(void *environment, const char *name, RuntimeStatus status, const char *category,
                        const char *text) {
    (void)name, (void)category;
    HostLog *log = environment;
    int64_t *counted = __atomic_load_n(&host_messages, __ATOMIC_ACQUIRE);
    if (counted) __atomic_add_fetch(counted, 1, __ATOMIC_RELAXED);
    if (status > log->worst) log->worst = status;
    size_t length = strlen(text) + 3;
    if (log->used + length + 1 > log->size) {
        size_t size = 2 * (log->used + length + 1);
        char *grown = realloc(log->text, size);
        if (grown) log->text = grown, log->size = size;
    }
    if (log->used + length + 1 <= log->size)
        log->used += (size_t)snprintf(log->text + log->used, log->size - log->used, "%d %s\n", (int)status, text);
}

/* An instance of the class `name` (NULL for a class this library has not, or out of memory). */
HOST_API Runtime *host_instantiate(const char *name, const char *instance) {
    const NativeClass *c = native_class(name); /* not runtime_load's class: instances of any class, any thread */
    HostLog *log = c ? platform_block_alloc(sizeof *log) : NULL; /* zeroed, beside the runtime's block */
    if (!log) return NULL;
    RuntimeLogger logger = {host_logger, log};
    Runtime *s = instantiate(c, instance, "", &logger, 2);
    if (!s) platform_block_free(log);
    return s;
}

HOST_API void host_free(Runtime *s) {
    HostLog *log = s->logger.environment;
    runtime_free(s);
    free(log->text);
    platform_block_free(log);
}

/* The lines logged since the last call ("" if none); valid until the next call for this instance. */
HOST_API const char *host_take_log(Runtime *s) {
    HostLog *log = s->logger.environment;
    if (!log->text || !log->used) return "";
    log->used = 0;
    return log->text;
}

HOST_API double *host_values(Runtime *s) { return inst(s)->values; }
HOST_API double *host_state(Runtime *s) { return inst(s)->state; }
HOST_API const char *host_message(Runtime *s) { return inst(s)->message; }
HOST_API int host_arithmetic(Runtime *s) { return inst(s)->arithmetic; }
HOST_API double host_time(Runtime *s) { return inst(s)->time; }
HOST_API int host_initialized(Runtime *s) { return inst(s)->initialized; }
/* After the Python side wrote values or the state directly: the outputs are computed again. */
HOST_API void host_changed(Runtime *s) { s->base.cached = 0; }
/* Memory the runtime handed out (a serialized state). */
HOST_API void host_release(void *memory) { free(memory); }

/* The calls of the master's compiled exchange (mechfmu/master/exchange.c), with the FMI 2.0 functions' signatures:
 * each makes the call the Python component makes (native_component.py) and returns what an FMI function returns
 * for it (as_fmi): the runtime logs a refusal and returns with the instance as it was, so a call that logged an
 * error returns RUNTIME_ERROR (one that logged a warning RUNTIME_WARNING), and the exchange stops at it as the
 * Python component raises there; its messages are taken from the log afterwards. */
static void entered(Runtime *s) { ((HostLog *)s->logger.environment)->worst = RUNTIME_OK; }

static RuntimeStatus as_fmi(Runtime *s, RuntimeStatus status) {
    HostLog *log = s->logger.environment;
    const RuntimeStatus worst = log->worst;
    log->worst = RUNTIME_OK;
    if (status >= RUNTIME_DISCARD || worst >= RUNTIME_ERROR) return status > worst ? status : worst;
    return worst == RUNTIME_WARNING ? RUNTIME_WARNING : status;
}

HOST_API RuntimeStatus host_get_real(Runtime *s, const RuntimeReference vr[], size_t nvr, double values[]) {
    entered(s);
    return as_fmi(s, runtime_get_real(s, vr, nvr, values));
}

HOST_API RuntimeStatus host_set_real(Runtime *s, const RuntimeReference vr[], size_t nvr, const double values[]) {
    entered(s);
    return as_fmi(s, runtime_set_real(s, vr, nvr, values));
}

HOST_API RuntimeStatus host_do_step(Runtime *s, double t, double h, int no_set_prior_state) {
    (void)no_set_prior_state;
    entered(s);
    return as_fmi(s, runtime_do_step(s, t, h));
}

HOST_API RuntimeStatus host_get_fmu_state(Runtime *s, void **state) {
    entered(s);
    if (!state) return log_error(s, "%s: fmi2GetFMUstate: no place for the state (NULL)", s->base.name), RUNTIME_ERROR;
    return as_fmi(s, runtime_get_state(s, state));
}

HOST_API RuntimeStatus host_set_fmu_state(Runtime *s, void *state) {
    entered(s);
    if (!state) return log_error(s, "%s: fmi2SetFMUstate: no state (NULL)", s->base.name), RUNTIME_ERROR;
    return as_fmi(s, runtime_set_state(s, state));
}

/* fmi2FreeFMUstate: the state freed and its handle cleared (none: nothing to free). */
HOST_API RuntimeStatus host_free_fmu_state(Runtime *s, void **state) {
    if (state && *state) runtime_free_state(s, *state), *state = NULL;
    return RUNTIME_OK;
}

HOST_API RuntimeStatus host_set_time(Runtime *s, double t) {
    double none = 0.0;
    entered(s);
    return as_fmi(s, runtime_model_exchange(s, "me_set_time", "fmi2SetTime", &t, 1, &none, 0));
}

HOST_API RuntimeStatus host_set_continuous_states(Runtime *s, const double x[], size_t nx) {
    double none = 0.0;
    entered(s);
    return as_fmi(s, runtime_model_exchange(s, "me_set_states", "fmi2SetContinuousStates", nx ? x : &none, nx, &none,
                                            0));
}

HOST_API RuntimeStatus host_get_derivatives(Runtime *s, double dx[], size_t nx) {
    double none = 0.0;
    entered(s);
    return as_fmi(s, runtime_model_exchange(s, "me_derivatives", "fmi2GetDerivatives", &none, 0, nx ? dx : &none, nx));
}

HOST_API RuntimeStatus host_get_event_indicators(Runtime *s, double z[], size_t nz) {
    double none = 0.0;
    entered(s);
    return as_fmi(s, runtime_model_exchange(s, "me_indicators", "fmi2GetEventIndicators", &none, 0, nz ? z : &none,
                                            nz));
}

HOST_API RuntimeStatus host_completed_integrator_step(Runtime *s, int no_set_prior_state, int *enter_event_mode,
                                                      int *terminate) {
    (void)no_set_prior_state;
    double none = 0.0;
    if (enter_event_mode) *enter_event_mode = 0;
    if (terminate) *terminate = 0;
    entered(s);
    return as_fmi(s, runtime_model_exchange(s, "me_completed_step", "fmi2CompletedIntegratorStep", &none, 0, &none,
                                            0));
}

/* The folder relative file names are found in (a path, not a URI; NULL or "": the current directory). */
HOST_API int host_set_resources(Runtime *s, const char *folder) {
    NativeInstance *n = inst(s);
    free((char *)n->resources);
    n->resources = folder && *folder ? platform_strndup(folder, SIZE_MAX) : NULL;
    return folder && *folder && !n->resources ? -1 : 0;
}
#endif
