/*
 * The native side of a mechfmu FMU: the slave_* functions of fmi2_python.h run a component class written in C
 * (components/native/, one table per class: fmi2_native.h) with no Python anywhere. It does what
 * components/base.py and components/fmi.py do for a Python component, with the same checks, the same order of
 * operations (so the same bits) and the same messages:
 *   - a parameter is set before initialization only, in its range (min, max, strict min), finite; writing a start
 *     parameter moves its state; an input must be finite; an output cannot be set; a refused value keeps the old;
 *   - fmi2ExitInitializationMode checks every range, then the class's rules; a later step refuses with the reason;
 *   - a step's size is finite and > 0 and it starts at the instance's time (1e-9 relative);
 *   - outputs are computed from the inputs, state and time when read, kept until one of those changes; a law that
 *     fails before initialization is blamed on a bad parameter first, an arithmetic failure on a value of
 *     magnitude >= 1e150; a non-finite output is returned with fmi2Error, naming it;
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

#include "fmi2_native.h"
#include "fmi2_platform.h"
#include "fmi2_python.h"
#include "numbers.h"

/* |t - expected| allowed between a step's start and the instance's time, relative to max(1, |t|) (components/fmi.py) */
#define TIME_TOLERANCE 1e-9
/* a magnitude a law cannot compute with (components/diagnostics.py) */
#define HUGE_VALUE 1e150
/* a saved time that is none (components/model_exchange.py) */
#define NO_TIME (-1e308)
/* a serialized state's first bytes; the format before this one (no checksum) is refused, named */
#define SERIAL_MAGIC "mechfmu-native-state 2"
#define OLD_SERIAL_MAGIC "mechfmu-native-state 1"

/* --- Python's words ---------------------------------------------------------------------------- */

void native_repr(double x, char *out, size_t size) {
    if (isnan(x)) { snprintf(out, size, "nan"); return; }
    if (isinf(x)) { snprintf(out, size, x > 0 ? "inf" : "-inf"); return; }
    char text[40];
    int precision = 1;
    for (; precision < 17; ++precision) { /* written and read with '.', whatever the locale */
        double back = 0.0;
        native_format_e(x, precision - 1, text, sizeof text);
        if (native_parse_decimal(text, strlen(text), &back) && back == x) break;
    }
    native_format_e(x, precision - 1, text, sizeof text);
    char digits[24];
    size_t count = 0;
    const char *p = text + (text[0] == '-');
    for (; *p && *p != 'e'; ++p) /* the digits */
        if (*p >= '0' && *p <= '9' && count < sizeof digits - 1) digits[count++] = *p;
    while (count > 1 && digits[count - 1] == '0') --count;
    digits[count] = '\0';
    int point = (x == 0.0 ? 0 : atoi(p + 1)) + 1; /* the value is 0.<digits> * 10^point */
    const char *sign = signbit(x) ? "-" : "";
    if (point > -4 && point <= 16) {
        if (point <= 0)
            snprintf(out, size, "%s0.%.*s%s", sign, -point, "0000", digits);
        else if ((size_t)point >= count)
            snprintf(out, size, "%s%s%.*s.0", sign, digits, (int)(point - (int)count), "0000000000000000");
        else
            snprintf(out, size, "%s%.*s.%s", sign, point, digits, digits + point);
    } else if (count == 1) {
        snprintf(out, size, "%s%se%+03d", sign, digits, point - 1);
    } else {
        snprintf(out, size, "%s%c.%se%+03d", sign, digits[0], digits + 1, point - 1);
    }
}

void native_number(double x, char *out, size_t size) {
    char text[40];
    native_repr(x, text, sizeof text);
    size_t length = strlen(text);
    if (!isfinite(x)) { snprintf(out, size, "%s", text); return; }
    if (length > 2 && !strcmp(text + length - 2, ".0")) text[length -= 2] = '\0'; /* 1, not 1.0 */
    int significant = 0, leading = 1;
    for (const char *c = text; *c && *c != 'e'; ++c) {
        if (!native_is_digit(*c) || (leading && *c == '0')) continue;
        leading = 0, ++significant;
    }
    if (significant <= NATIVE_NUMBER_DIGITS) snprintf(out, size, "%s", text);
    else native_format_g(x, NATIVE_NUMBER_DIGITS, out, size);
}

void native_measured(double x, char *out, size_t size) { native_format_g(x, 6, out, size); }

void native_number_sequence(const double *values, size_t count, int list, char *out, size_t size) {
    size_t used = (size_t)snprintf(out, size, "%s", list ? "[" : "(");
    for (size_t i = 0; i < count && used < size; ++i) {
        char text[40];
        native_number(values[i], text, sizeof text);
        used += (size_t)snprintf(out + used, size - used, "%s%s", i ? ", " : "", text);
    }
    if (used < size) snprintf(out + used, size - used, "%s", list ? "]" : count == 1 ? ",)" : ")");
}

static void vformat(NativeInstance *n, const char *format, va_list args) {
    vsnprintf(n->message, NATIVE_MESSAGE_SIZE, format, args);
}

int native_fail_text(NativeInstance *n, int arithmetic, const char *format, ...) {
    va_list args;
    va_start(args, format);
    vformat(n, format, args);
    va_end(args);
    n->arithmetic = arithmetic;
    return -1;
}

/* the instance's name, set by slave_instantiate (the message prefix "<Class> '<instance>'") */
typedef struct {
    NativeInstance base;
    char *name;
} Named;

const char *native_instance_name(const NativeInstance *n) { return ((const Named *)n)->name; }

int native_fail(NativeInstance *n, const char *name, double value, const char *problem) {
    char repr[40];
    int type = NATIVE_REAL;
    for (size_t i = 0; i < n->cls->variable_count; ++i)
        if (!strcmp(n->cls->variables[i].name, name)) type = n->cls->variables[i].type;
    if (type == NATIVE_INTEGER) snprintf(repr, sizeof repr, "%.0f", value);
    else if (type == NATIVE_BOOLEAN) snprintf(repr, sizeof repr, "%s", value != 0.0 ? "True" : "False");
    else native_number(value, repr, sizeof repr);
    return native_fail_text(n, 0, "%s '%s': %s = %s %s", n->cls->name, ((Named *)n)->name, name, repr, problem);
}

int native_fail_sequence(NativeInstance *n, const char *name, const double *values, size_t count, int list,
                         const char *problem) {
    char repr[1024];
    native_number_sequence(values, count, list, repr, sizeof repr);
    return native_fail_text(n, 0, "%s '%s': %s = %s %s", n->cls->name, ((Named *)n)->name, name, repr, problem);
}

int native_pow(NativeInstance *n, double base, double exponent, double *result) {
    if (exponent == 0.0) { *result = 1.0; return 0; }
    if (base == 0.0) {
        if (exponent < 0.0) return native_fail_text(n, 1, "0.0 cannot be raised to a negative power");
        *result = 0.0;
        return 0;
    }
    if (base == 1.0) { *result = 1.0; return 0; }
    *result = pow(base, exponent);
    if (isinf(*result)) return native_fail_text(n, 1, "(34, 'Numerical result out of range')");
    return 0;
}

int native_sin(NativeInstance *n, double x, double *result) {
    if (isinf(x)) return native_fail_text(n, 1, "math domain error");
    *result = sin(x);
    return 0;
}

int native_cos(NativeInstance *n, double x, double *result) {
    if (isinf(x)) return native_fail_text(n, 1, "math domain error");
    *result = cos(x);
    return 0;
}

/* The first time event after `after` (strictly) in *next; 0 if there is none. */
static int event_after(const double *events, size_t count, double after, double *next) {
    size_t low = 0, high = count; /* bisect_right */
    while (low < high) {
        size_t mid = (low + high) / 2;
        if (after < events[mid]) high = mid;
        else low = mid + 1;
    }
    if (low == count) return 0;
    *next = events[low];
    return 1;
}

/* components/model_exchange.py: the model's time is a time event not yet handled in event mode */
static int pending_time_event(const NativeInstance *n) {
    if (!(n->in_model_exchange && n->time > n->event_time) || !n->cls->time_events) return 0;
    const double *events;
    size_t count = n->cls->time_events((NativeInstance *)n, &events);
    size_t low = 0, high = count; /* bisect_left */
    while (low < high) {
        size_t mid = (low + high) / 2;
        if (events[mid] < n->time) low = mid + 1;
        else high = mid;
    }
    return low < count && events[low] == n->time;
}

double native_output_time(const NativeInstance *n) {
    return pending_time_event(n) ? nextafter(n->time, -INFINITY) : n->time;
}

/* The first time event after the last event mode, in *next; 0 if there is none. */
static int next_time_event(NativeInstance *n, double *next) {
    const double *events;
    size_t count = n->cls->time_events ? n->cls->time_events(n, &events) : 0;
    return count ? event_after(events, count, n->event_time, next) : 0;
}

const NativeClass *native_class(const char *name) {
    for (const NativeClass *const *c = native_classes; *c; ++c)
        if (!strcmp((*c)->name, name)) return *c;
    return NULL;
}

/* --- the instance -------------------------------------------------------------------------------- */

struct Slave {
    Named named;
    const NativeClass *cls;
    double *outputs;
    int cached;
    char *initialization_error;
    double start_time;
    const char **returned; /* fmi2GetString's values, valid until the next call */
    fmi2CallbackFunctions functions;
};

static const NativeClass *loaded;

int slave_load(const char *model, char *error, size_t size) {
    loaded = native_class(model);
    if (!loaded) {
        snprintf(error, size, "this binary has no native class %s", model);
        return -1;
    }
    return 0;
}

static void log_text(const Slave *s, fmi2Status status, const char *text) {
    if (s->functions.logger)
        s->functions.logger(s->functions.componentEnvironment, s->named.name, status,
                            status == fmi2Warning ? "logStatusWarning" : "logStatusError", "%s", text);
}

static fmi2Status log_error(const Slave *s, const char *format, ...) PRINTF_LIKE(2, 3);
static fmi2Status log_error(const Slave *s, const char *format, ...) {
    va_list args;
    va_start(args, format);
    char *text = platform_format(format, args);
    va_end(args);
    log_text(s, fmi2Error, text ? text : "(message lost: out of memory)");
    free(text);
    return fmi2OK; /* the loader returns fmi2Error for a logged error, the instance unchanged */
}

static NativeInstance *inst(Slave *s) { return &s->named.base; }

static void reset_values(Slave *s) {
    NativeInstance *n = inst(s);
    const NativeClass *c = s->cls;
    for (size_t i = 0; i < c->variable_count; ++i) {
        n->values[i] = c->variables[i].start;
        free(n->strings[i]);
        n->strings[i] = c->variables[i].type == NATIVE_STRING ? platform_strndup(c->variables[i].text, SIZE_MAX) : NULL;
    }
    memcpy(n->state, c->initial_state, c->state_count * sizeof *n->state);
    for (size_t i = 0; i < c->parameter_count; ++i)
        if (c->variables[i].moves_state >= 0) n->state[c->variables[i].moves_state] = c->variables[i].start;
    if (c->parameter_changed) c->parameter_changed(n);
    n->time = 0.0;
    n->accepted_time = n->event_time = -INFINITY;
    n->initialized = n->in_model_exchange = 0;
    memset(n->flags, 0, sizeof n->flags);
    free(s->initialization_error);
    s->initialization_error = NULL;
    s->start_time = 0.0;
    s->cached = 0;
}

/* --- numbers whatever the locale ------------------------------------------------------------------------------- */

int native_read_decimal(const char *text, size_t length, double *value) {
    size_t i = 0, digits = 0;
    if (i < length && (text[i] == '+' || text[i] == '-')) ++i;
    for (; i < length && text[i] >= '0' && text[i] <= '9'; ++i) ++digits;
    if (i < length && text[i] == '.')
        for (++i; i < length && text[i] >= '0' && text[i] <= '9'; ++i) ++digits;
    if (!digits) return -1;
    if (i < length && (text[i] == 'e' || text[i] == 'E')) {
        size_t exponent = 0;
        if (++i < length && (text[i] == '+' || text[i] == '-')) ++i;
        for (; i < length && text[i] >= '0' && text[i] <= '9'; ++i) ++exponent;
        if (!exponent) return -1;
    }
    if (i != length) return -1;
    /* the syntax is checked: read with components/native/numbers.h (no locale, no copy, correctly rounded) */
    return native_parse_decimal(text, length, value) == length ? 0 : -1;
}

/* --- an FMU variant's own defaults: resources/start_values.json (components/fmi.py START_VALUES) ------------------
 * Strict JSON (RFC 8259) of one object whose values are numbers, true, false or strings, read whole before any value
 * is applied: every byte checked (valid UTF-8, no control character in a string, \u escapes with their surrogate
 * pairs), no trailing data, no name twice; the file at most START_VALUES_LIMIT bytes. */

typedef struct {
    const char *p, *end;
} Json;

static void json_space(Json *j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) ++j->p;
}

/* The length of the UTF-8 sequence at p (1 to 4 bytes, before end) as Python's strict decoder takes it, or 0. */
static size_t utf8_sequence(const unsigned char *p, const unsigned char *end) {
    size_t n = p[0] < 0x80 ? 1 : p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3
             : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
    if (!n || (size_t)(end - p) < n) return 0;
    for (size_t i = 1; i < n; ++i)
        if ((p[i] & 0xc0) != 0x80) return 0;
    if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) || (p[0] == 0xf0 && p[1] < 0x90)
        || (p[0] == 0xf4 && p[1] >= 0x90))
        return 0; /* overlong, a surrogate, beyond U+10FFFF */
    return n;
}

static int json_hex(const char *p, unsigned *code) {
    *code = 0;
    for (int i = 0; i < 4; ++i) {
        char c = p[i];
        unsigned digit = c >= '0' && c <= '9' ? (unsigned)(c - '0') : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                       : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16;
        if (digit == 16) return -1;
        *code = *code << 4 | digit;
    }
    return 0;
}

/* A JSON string at j->p into *out (malloc'd, *length bytes and a NUL): NULL, or why not. */
static const char *json_string(Json *j, char **out, size_t *length) {
    *out = NULL;
    if (j->p >= j->end || *j->p != '"') return "a name or string expected";
    const char *start = ++j->p, *q = start;
    while (q < j->end && *q != '"') q += *q == '\\' && q + 1 < j->end ? 2 : 1;
    if (q >= j->end) return "a string without its closing quote";
    char *text = malloc((size_t)(q - start) + 1); /* a decoded string is never longer than its source */
    if (!text) return "out of memory";
    size_t k = 0;
    const char *why = NULL;
    for (const char *p = start; !why && p < q;) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20) {
            why = "a control character in a string (it must be escaped)";
        } else if (c != '\\') {
            size_t n = utf8_sequence((const unsigned char *)p, (const unsigned char *)q);
            if (!n) why = "a string that is not valid UTF-8";
            else memcpy(text + k, p, n), k += n, p += n;
        } else if (p[1] != 'u') {
            const char *escapes = "\"\\/bfnrt", *found = memchr(escapes, p[1], 8);
            if (!found) why = "an invalid escape in a string";
            else text[k++] = "\"\\/\b\f\n\r\t"[found - escapes], p += 2;
        } else {
            unsigned code, low;
            if (q - p < 6 || json_hex(p + 2, &code) != 0) { why = "an invalid \\u escape in a string"; break; }
            p += 6;
            if (code >= 0xdc00 && code <= 0xdfff) { why = "a lone surrogate (\\u escape) in a string"; break; }
            if (code >= 0xd800 && code <= 0xdbff) {
                if (q - p < 6 || p[0] != '\\' || p[1] != 'u' || json_hex(p + 2, &low) != 0 || low < 0xdc00
                    || low > 0xdfff) { why = "a lone surrogate (\\u escape) in a string"; break; }
                code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
                p += 6;
            }
            if (code < 0x80) {
                text[k++] = (char)code;
            } else if (code < 0x800) {
                text[k++] = (char)(0xc0 | code >> 6), text[k++] = (char)(0x80 | (code & 0x3f));
            } else if (code < 0x10000) {
                text[k++] = (char)(0xe0 | code >> 12), text[k++] = (char)(0x80 | ((code >> 6) & 0x3f));
                text[k++] = (char)(0x80 | (code & 0x3f));
            } else {
                text[k++] = (char)(0xf0 | code >> 18), text[k++] = (char)(0x80 | ((code >> 12) & 0x3f));
                text[k++] = (char)(0x80 | ((code >> 6) & 0x3f)), text[k++] = (char)(0x80 | (code & 0x3f));
            }
        }
    }
    if (why) {
        free(text);
        return why;
    }
    text[k] = '\0';
    j->p = q + 1;
    *out = text, *length = k;
    return NULL;
}

/* A JSON value that is a number, true, false or a string into *m: NULL, or why not. */
static const char *json_value(Json *j, JsonMember *m) {
    if (j->p >= j->end) return "a value expected";
    if (*j->p == '"') {
        m->kind = JSON_STRING;
        return json_string(j, &m->text, &m->text_length);
    }
    static const char *const words[] = {"true", "false", "null"};
    for (int w = 0; w < 3; ++w) {
        size_t n = strlen(words[w]);
        if ((size_t)(j->end - j->p) >= n && !memcmp(j->p, words[w], n)) {
            if (w == 2) return "null is not a parameter value";
            m->kind = w ? JSON_FALSE : JSON_TRUE, m->number = w ? 0.0 : 1.0;
            j->p += n;
            return NULL;
        }
    }
    if (*j->p == '[' || *j->p == '{') return "an array or object is not a parameter value";
    const char *start = j->p;
    if (j->p < j->end && *j->p == '-') ++j->p;
    if (j->p < j->end && *j->p == '0') ++j->p;
    else if (j->p < j->end && *j->p >= '1' && *j->p <= '9')
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9') ++j->p;
    else return "not a JSON value";
    m->kind = JSON_INTEGER;
    if (j->p < j->end && *j->p == '.') {
        m->kind = JSON_NUMBER;
        if (++j->p >= j->end || *j->p < '0' || *j->p > '9') return "a number without digits after its point";
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9') ++j->p;
    }
    if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
        m->kind = JSON_NUMBER;
        if (++j->p < j->end && (*j->p == '+' || *j->p == '-')) ++j->p;
        if (j->p >= j->end || *j->p < '0' || *j->p > '9') return "a number without digits in its exponent";
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9') ++j->p;
    }
    if (native_read_decimal(start, (size_t)(j->p - start), &m->number) != 0) return "not a JSON number";
    return NULL;
}

void native_json_free(JsonMember *members, size_t count) {
    for (size_t i = 0; members && i < count; ++i) free(members[i].name), free(members[i].text);
    free(members);
}

/* The members of the JSON object in `size` bytes (in their order) into *out and *count: 0, or -1 with `why` set. */
int native_json_object(const char *bytes, size_t size, JsonMember **out, size_t *count, char *why, size_t why_size) {
    Json j = {bytes, bytes + size};
    JsonMember *members = NULL;
    size_t used = 0, capacity = 0;
    const char *problem = NULL;
    json_space(&j);
    if (j.p >= j.end || *j.p != '{') problem = "not a JSON object";
    else ++j.p, json_space(&j);
    int closed = 0;
    while (!problem && !closed) {
        if (j.p < j.end && *j.p == '}' && used == 0) { ++j.p, closed = 1; break; }
        if (used == capacity) {
            size_t grown = capacity ? 2 * capacity : 16;
            JsonMember *more = grown < SIZE_MAX / sizeof *more ? realloc(members, grown * sizeof *more) : NULL;
            if (!more) { problem = "out of memory"; break; }
            members = more, capacity = grown;
        }
        JsonMember *m = &members[used];
        memset(m, 0, sizeof *m);
        ++used;
        if ((problem = json_string(&j, &m->name, &m->name_length))) break;
        for (size_t i = 0; i + 1 < used; ++i)
            if (members[i].name_length == m->name_length && !memcmp(members[i].name, m->name, m->name_length)) {
                char repr[600];
                native_repr_text(m->name, repr, sizeof repr);
                snprintf(why, why_size, "the name %s appears more than once", repr);
                native_json_free(members, used);
                return -1;
            }
        json_space(&j);
        if (j.p >= j.end || *j.p != ':') { problem = "':' expected after a name"; break; }
        ++j.p, json_space(&j);
        if ((problem = json_value(&j, m))) break;
        json_space(&j);
        if (j.p < j.end && *j.p == ',') ++j.p, json_space(&j);
        else if (j.p < j.end && *j.p == '}') ++j.p, closed = 1;
        else problem = j.p < j.end ? "',' or '}' expected after a value" : "the object is not closed";
    }
    if (!problem) {
        json_space(&j);
        if (j.p != j.end) problem = "data after the object";
    }
    if (problem) {
        snprintf(why, why_size, "not a JSON object of parameter values: %s (at byte %zu)", problem,
                 (size_t)(j.p - bytes));
        native_json_free(members, used);
        return -1;
    }
    *out = members, *count = used;
    return 0;
}

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

static int checked_set(Slave *s, fmi2ValueReference vr, double value);

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
static int apply_member(Slave *s, const JsonMember *m, char *problem, size_t size) {
    NativeInstance *n = inst(s);
    size_t vr = 0;
    while (vr < s->cls->variable_count && !(strlen(s->cls->variables[vr].name) == m->name_length
                                             && !memcmp(s->cls->variables[vr].name, m->name, m->name_length))) ++vr;
    const NativeVariable *v = vr < s->cls->variable_count ? &s->cls->variables[vr] : NULL;
    char repr[1000];
    if (!v || v->causality == NATIVE_OUTPUT || v->causality == NATIVE_LOCAL) {
        repr_bytes(m->name, m->name_length, repr, 600);
        snprintf(problem, size, "%s: no parameter or input named %s%s", s->named.name, repr,
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
            if (s->cls->parameter_changed) s->cls->parameter_changed(n);
            return 0;
        }
        repr_bytes(m->text, m->text_length, repr, sizeof repr);
        wrong = v->type == NATIVE_STRING ? "holds a NUL character (\\u0000), which an FMI String cannot"
              : v->type == NATIVE_REAL ? "is a string, not a Real" : v->type == NATIVE_INTEGER
              ? "is not an integer" : "is not a Boolean (true/false or 1/0)";
        snprintf(problem, size, "%s '%s': %s = %s %s", s->cls->name, s->named.name, v->name, repr, wrong);
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
        snprintf(problem, size, "%s '%s': %s = %s %s", s->cls->name, s->named.name, v->name, repr, wrong);
        return -1;
    }
    if (checked_set(s, (fmi2ValueReference)vr, m->number + 0.0) != 0) {
        snprintf(problem, size, "%s", n->message);
        return -1;
    }
    return 0;
}

/* Apply the file's values as if the host had set them, in their order (components/fmi.py _apply_start_values);
 * a file that is not such an object is refused whole, and the first value refused is logged and ends it. */
static void apply_start_values(Slave *s) {
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

static Slave *instantiate(const NativeClass *c, fmi2String instanceName, fmi2String fmuResourceLocation,
                          const fmi2CallbackFunctions *functions) {
    /* one block: the slave, then its values, state and outputs (what a step reads and writes) */
    const size_t head = (sizeof(Slave) + 63) / 64 * 64, doubles = c->variable_count + c->state_count + c->output_count + 3;
    Slave *s = calloc(1, head + doubles * sizeof(double));
    if (!s) return NULL;
    s->cls = c;
    NativeInstance *n = inst(s);
    n->values = (double *)((char *)s + head);
    n->state = n->values + c->variable_count + 1;
    s->outputs = n->state + c->state_count + 1;
    n->cls = c;
    s->functions = *functions;
    s->named.name = platform_strndup(instanceName, SIZE_MAX);
    char why[256];
    n->resources = fmuResourceLocation && *fmuResourceLocation ? platform_resource_path(fmuResourceLocation, why,
                                                                                        sizeof why) : NULL;
    n->strings = calloc(c->variable_count + 1, sizeof *n->strings);
    n->message = calloc(NATIVE_MESSAGE_SIZE, 1);
    s->returned = calloc(c->variable_count + 1, sizeof *s->returned);
    if (!s->named.name || !n->strings || !n->message || !s->returned) {
        slave_free(s);
        return NULL;
    }
    reset_values(s);
    apply_start_values(s);
    return s;
}

Slave *slave_instantiate(fmi2String instanceName, fmi2String fmuResourceLocation, fmi2Boolean visible,
                         const fmi2CallbackFunctions *functions) {
    (void)visible;
    return instantiate(loaded, instanceName, fmuResourceLocation, functions);
}

void slave_free(Slave *s) {
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
    free(s->named.name);
    free(s);
}

fmi2Status slave_reset(Slave *s) {
    reset_values(s);
    return fmi2OK;
}

fmi2Status slave_setup_experiment(Slave *s, fmi2Real startTime) {
    s->start_time = startTime;
    return fmi2OK;
}

/* Component.check_range: a parameter value on its own. */
static int check_range(NativeInstance *n, const NativeVariable *v, double value) {
    char bound[128], limit[40];
    /* the unit once, none for a dimensionless one (components/number_text.py's with_unit) */
    const char *space = v->unit && *v->unit && strcmp(v->unit, "1") ? " " : "", *unit = *space ? v->unit : "";
    if (v->type == NATIVE_REAL && !isfinite(value)) return native_fail(n, v->name, value, "must be finite");
    if (v->has_min && (value < v->min || (v->min_exclusive && value == v->min))) {
        native_number(v->min, limit, sizeof limit);
        snprintf(bound, sizeof bound, "is out of range: must be %s %s%s%s", v->min_exclusive ? ">" : ">=", limit,
                 space, unit);
        return native_fail(n, v->name, value, bound);
    }
    if (v->has_max && value > v->max) {
        native_number(v->max, limit, sizeof limit);
        snprintf(bound, sizeof bound, "is out of range: must be <= %s%s%s", limit, space, unit);
        return native_fail(n, v->name, value, bound);
    }
    return 0;
}

static int check_parameters(NativeInstance *n) {
    for (size_t i = 0; i < n->cls->parameter_count; ++i)
        if (n->cls->variables[i].type != NATIVE_STRING && check_range(n, &n->cls->variables[i], n->values[i]) != 0)
            return -1;
    return n->cls->validate ? n->cls->validate(n) : 0;
}

fmi2Status slave_call(Slave *s, const char *method, const char *what) {
    (void)what;
    NativeInstance *n = inst(s);
    if (!strcmp(method, "exit_initialization_mode")) {
        free(s->initialization_error);
        s->initialization_error = NULL;
        if (check_parameters(n) != 0) {
            s->initialization_error = platform_strndup(n->message, SIZE_MAX);
            return log_error(s, "%s", n->message);
        }
        n->time = n->accepted_time = n->event_time = s->start_time;
        n->initialized = 1;
        s->cached = 0;
        if (s->cls->initialize && s->cls->initialize(n) != 0) {
            n->initialized = 0;
            s->initialization_error = platform_strndup(n->message, SIZE_MAX);
            return log_error(s, "%s", n->message);
        }
    }
    return fmi2OK;
}

/* The largest finite Real parameter or input if its magnitude is >= HUGE_VALUE: its index, else -1. */
static long too_large(const NativeInstance *n) {
    long found = -1;
    for (size_t i = 0; i < n->cls->parameter_count + n->cls->input_count; ++i) {
        double v = n->values[i];
        if (n->cls->variables[i].type == NATIVE_REAL && isfinite(v) && (found < 0 || fabs(v) > fabs(n->values[found])))
            found = (long)i;
    }
    return found >= 0 && fabs(n->values[found]) >= HUGE_VALUE ? found : -1;
}

/* Component.current_outputs: 0, or -1 with the message set as Python would raise it. */
static int current_outputs(Slave *s) {
    if (s->cached) return 0;
    NativeInstance *n = inst(s);
    n->arithmetic = 0;
    if (s->cls->outputs(n, s->outputs) == 0) {
        s->cached = 1;
        return 0;
    }
    char exception[NATIVE_MESSAGE_SIZE];
    int arithmetic = n->arithmetic;
    snprintf(exception, sizeof exception, "%s", n->message);
    if (!n->initialized && check_parameters(n) != 0) return -1;
    long huge = arithmetic ? too_large(n) : -1;
    if (huge < 0) {
        snprintf(n->message, NATIVE_MESSAGE_SIZE, "%s", exception);
        return -1;
    }
    char problem[NATIVE_MESSAGE_SIZE + 64];
    snprintf(problem, sizeof problem, "is beyond what the law can compute with (%s)", exception);
    return native_fail(n, s->cls->variables[huge].name, n->values[huge], problem);
}

/* The variable of `vr` for a get (`set` 0) or a set of `type`, or NULL after logging why not. */
int native_current_outputs(NativeInstance *n, const double **outputs) {
    Slave *s = (Slave *)n; /* the instance is the slave's first member */
    if (current_outputs(s) != 0) return -1;
    *outputs = s->outputs;
    return 0;
}

static const NativeVariable *variable(Slave *s, fmi2ValueReference vr, int type, int set) {
    static const char *const types[] = {"Real", "Integer", "Boolean", "String"};
    const NativeClass *c = s->cls;
    const char *action = set ? "Set" : "Get";
    if (vr < c->variable_count && c->variables[vr].type == type
        && !(set && c->variables[vr].causality >= NATIVE_OUTPUT))
        return &c->variables[vr];
    if (vr >= c->variable_count) {
        log_error(s, "%s: fmi2%s%s: valueReference %u: no such variable", s->named.name, action, types[type], vr);
        return NULL;
    }
    const NativeVariable *v = &c->variables[vr];
    if (v->type != type) {
        log_error(s, "%s: fmi2%s%s: valueReference %u: %s is a %s, not a %s", s->named.name, action, types[type], vr,
                  v->name, types[v->type], types[type]);
        return NULL;
    }
    log_error(s, "%s: fmi2Set%s: %s is an output and cannot be set", s->named.name, types[type], v->name);
    return NULL;
}

/* Component.set of one value (a number of any type): 0, or -1 with the message set (the value unchanged). */
static int checked_set(Slave *s, fmi2ValueReference vr, double value) {
    NativeInstance *n = inst(s);
    const NativeVariable *v = &s->cls->variables[vr];
    int failed = 0;
    if (v->causality == NATIVE_INPUT) {
        if (!isfinite(value)) failed = native_fail(n, v->name, value, "must be finite");
    } else if (n->initialized) {
        failed = native_fail(n, v->name, value, "is a fixed parameter and cannot change after initialization");
    } else {
        failed = check_range(n, v, value);
    }
    if (failed) return -1;
    n->values[vr] = value;
    if (v->causality == NATIVE_PARAMETER && v->moves_state >= 0) n->state[v->moves_state] = value;
    if (v->causality == NATIVE_PARAMETER && s->cls->parameter_changed) s->cls->parameter_changed(n);
    s->cached = 0;
    if (s->cls->written) s->cls->written(n, vr);
    return 0;
}

/* checked_set, a refusal logged */
static int set_value(Slave *s, fmi2ValueReference vr, double value) {
    if (checked_set(s, vr, value) == 0) return 0;
    log_error(s, "setting %s failed: %s", s->cls->variables[vr].name, inst(s)->message);
    return -1;
}

/* The value of a variable that is not a String: -1 after logging why (then *value is NaN). */
static int read_value(Slave *s, fmi2ValueReference vr, double *value) {
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
        if (current_outputs(s) != 0) {
            *value = NAN;
            log_error(s, "reading %s failed: %s", v->name, n->message);
            return -1;
        }
        *value = s->outputs[index];
    }
    if (!isfinite(*value)) {
        char repr[40], time[40], blame[512];
        native_repr(*value, repr, sizeof repr);
        native_measured(n->time, time, sizeof time);
        long huge = too_large(n);
        if (huge < 0) {
            snprintf(blame, sizeof blame, "inputs outside the range the law can handle?");
        } else {
            char big[40];
            char bound[40];
            native_number(n->values[huge], big, sizeof big);
            native_number(HUGE_VALUE, bound, sizeof bound);
            snprintf(blame, sizeof blame, "%s = %s is beyond what the law can compute with (magnitude below %s)",
                     s->cls->variables[huge].name, big, bound);
        }
        log_error(s, "%s: %s = %s is not finite at t = %s (%s)", s->named.name, v->name, repr, time, blame);
    }
    return 0;
}

fmi2Status slave_get_real(Slave *s, const fmi2ValueReference vr[], size_t nvr, fmi2Real values[]) {
    const NativeClass *c = s->cls;
    const size_t first = c->parameter_count + c->input_count, last = first + c->output_count;
    for (size_t i = 0; i < nvr; ++i) {
        if (vr[i] >= first && vr[i] < last && (s->cached || current_outputs(s) == 0)) { /* an output: the common case */
            values[i] = s->outputs[vr[i] - first];
            if (isfinite(values[i])) continue;
        }
        if (variable(s, vr[i], NATIVE_REAL, 0)) read_value(s, vr[i], &values[i]);
        else values[i] = NAN;
    }
    return fmi2OK;
}

fmi2Status slave_get_integer(Slave *s, const fmi2ValueReference vr[], size_t nvr, fmi2Integer values[]) {
    double value;
    for (size_t i = 0; i < nvr; ++i) {
        values[i] = 0;
        if (!variable(s, vr[i], NATIVE_INTEGER, 0) || read_value(s, vr[i], &value) != 0) continue;
        if (value == floor(value) && value >= -2147483648.0 && value <= 2147483647.0) values[i] = (fmi2Integer)value;
        else {
            char repr[40];
            native_number(value, repr, sizeof repr);
            log_error(s, "%s: fmi2GetInteger: %s = %s is not an FMI Integer (32 bits)", s->named.name,
                      s->cls->variables[vr[i]].name, repr);
        }
    }
    return fmi2OK;
}

fmi2Status slave_get_boolean(Slave *s, const fmi2ValueReference vr[], size_t nvr, fmi2Boolean values[]) {
    double value;
    for (size_t i = 0; i < nvr; ++i)
        values[i] = variable(s, vr[i], NATIVE_BOOLEAN, 0) && read_value(s, vr[i], &value) == 0 && value != 0.0;
    return fmi2OK;
}

fmi2Status slave_get_string(Slave *s, const fmi2ValueReference vr[], size_t nvr, fmi2String values[]) {
    for (size_t i = 0; i < nvr; ++i)
        values[i] = variable(s, vr[i], NATIVE_STRING, 0) ? inst(s)->strings[vr[i]] : "";
    return fmi2OK;
}

fmi2Status slave_set_real(Slave *s, const fmi2ValueReference vr[], size_t nvr, const fmi2Real values[]) {
    const NativeClass *c = s->cls;
    const size_t first = c->parameter_count, last = first + c->input_count;
    for (size_t i = 0; i < nvr; ++i) {
        if (vr[i] >= first && vr[i] < last && isfinite(values[i])) { /* an input: the common case */
            inst(s)->values[vr[i]] = values[i];
            s->cached = 0;
            if (c->written) c->written(inst(s), vr[i]);
        } else if (variable(s, vr[i], NATIVE_REAL, 1)) {
            set_value(s, vr[i], values[i]);
        }
    }
    return fmi2OK;
}

fmi2Status slave_set_integer(Slave *s, const fmi2ValueReference vr[], size_t nvr, const fmi2Integer values[]) {
    for (size_t i = 0; i < nvr; ++i)
        if (variable(s, vr[i], NATIVE_INTEGER, 1)) set_value(s, vr[i], values[i]);
    return fmi2OK;
}

fmi2Status slave_set_boolean(Slave *s, const fmi2ValueReference vr[], size_t nvr, const fmi2Boolean values[]) {
    for (size_t i = 0; i < nvr; ++i)
        if (variable(s, vr[i], NATIVE_BOOLEAN, 1)) set_value(s, vr[i], values[i] != fmi2False);
    return fmi2OK;
}

fmi2Status slave_set_string(Slave *s, const fmi2ValueReference vr[], size_t nvr, const fmi2String values[]) {
    NativeInstance *n = inst(s);
    for (size_t i = 0; i < nvr; ++i) {
        const NativeVariable *v = variable(s, vr[i], NATIVE_STRING, 1);
        if (!v) continue;
        if (n->initialized) {
            log_error(s, "setting %s failed: %s '%s': %s = '%s' is a fixed parameter and cannot change after "
                      "initialization", v->name, s->cls->name, s->named.name, v->name, values[i]);
            continue;
        }
        char *copy = platform_strndup(values[i], SIZE_MAX);
        if (!copy) return fmi2Error;
        free(n->strings[vr[i]]);
        n->strings[vr[i]] = copy;
        s->cached = 0;
        if (s->cls->parameter_changed) s->cls->parameter_changed(n);
    }
    return fmi2OK;
}

/* --- stepping -------------------------------------------------------------------------------------- */

fmi2Status slave_do_step(Slave *s, fmi2Real t, fmi2Real h) {
    NativeInstance *n = inst(s);
    double expected = n->time;
    if (!(isfinite(t) && isfinite(h) && h > 0.0 && fabs(t - expected) <= TIME_TOLERANCE * fmax(1.0, fabs(expected)))) {
        char at[40], size[40], wanted[40];
        native_number(t, at, sizeof at);
        native_number(h, size, sizeof size);
        native_number(expected, wanted, sizeof wanted);
        log_error(s, "%s: fmi2DoStep refused: currentCommunicationPoint = %s, communicationStepSize = %s; expected "
                  "currentCommunicationPoint = %s (the end of the last step or the restored state's time) and a "
                  "finite step size > 0", s->named.name, at, size, wanted);
        return fmi2OK;
    }
    if (s->initialization_error) {
        log_error(s, "initialization failed: %s", s->initialization_error);
        return fmi2Discard;
    }
    if (s->cls->advance) {
        double saved[64];
        memcpy(saved, n->state, s->cls->state_count * sizeof *saved);
        n->arithmetic = 0;
        if (s->cls->advance(n, t, h) != 0) {
            char at[40], size[40];
            memcpy(n->state, saved, s->cls->state_count * sizeof *saved);
            native_measured(t, at, sizeof at);
            native_number(h, size, sizeof size);
            log_error(s, "%s: step at t=%s h=%s failed: %s", s->named.name, at, size, n->message);
            s->cached = 0;
            return fmi2Discard;
        }
    }
    n->time = t + h;
    s->cached = 0;
    char warning[2048];
    if (s->cls->step_warning && s->cls->step_warning(n, warning, sizeof warning)) log_text(s, fmi2Warning, warning);
    return fmi2OK;
}

/* --- Model Exchange ---------------------------------------------------------------------------------- */

static fmi2Status refused(Slave *s, const char *function, const char *problem) {
    return log_error(s, "%s: %s: %s", s->named.name, function, problem);
}

/* The name of entry i of the continuous states ("nx") or of the event indicators ("ni"). */
static const char *entry_name(const Slave *s, const char *what, size_t i) {
    const NativeClass *c = s->cls;
    if (strcmp(what, "ni")) return c->continuous_names[i];
    return c->variables[c->parameter_count + c->input_count + c->output_count - c->indicator_count + i].name;
}

static fmi2Status counted(Slave *s, const char *function, const char *what, size_t have, size_t count) {
    if (have == count) return fmi2OK;
    char problem[1024];
    size_t used = (size_t)snprintf(problem, sizeof problem, "%s = %zu, but %s has %zu (", what, count, s->cls->name,
                                   have);
    for (size_t i = 0; i < have && used < sizeof problem; ++i)
        used += (size_t)snprintf(problem + used, sizeof problem - used, "%s%s", i ? ", " : "", entry_name(s, what, i));
    if (used < sizeof problem) snprintf(problem + used, sizeof problem - used, "%s)", have ? "" : "none");
    refused(s, function, problem);
    return fmi2Error;
}

static fmi2Status evaluated(Slave *s, const char *function, const char *what, const double *values, size_t have,
                            fmi2Real out[], size_t nout) {
    if (counted(s, function, what, have, nout) != fmi2OK) return fmi2OK;
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
    return fmi2OK;
}

/* --- directional derivatives (components/partials.py) --------------------------------------------------- */

#define DIFFERENCE_STEP 1e-5 /* components/partials.py */

/* An unknown (an output, or a state derivative: the odd locals) or, with `known`, a known (an input, or a state:
 * the even locals); else 0 with the message set as the Python component words it. */
static int partial_operand(Slave *s, fmi2ValueReference vr, int known) {
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
        native_fail_text(inst(s), 0, "%s '%s': directional derivative %s = '%s' %s", c->name, s->named.name,
                         known ? "known" : "unknown", v->name,
                         known ? "is not an input or a continuous state" : "is not an output or a state derivative");
    return fits;
}

/* The unknown at the current point: an output, or a state derivative (no side effect); 0, or -1 (message set). */
static int unknown_value(Slave *s, fmi2ValueReference unknown, double *buffer, double *value) {
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
static int difference(Slave *s, fmi2ValueReference unknown, fmi2ValueReference known, double *buffer,
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
static fmi2Status directional_derivative(Slave *s, const char *what, const fmi2Real in[], size_t nin,
                                         fmi2Real out[], size_t nout) {
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
            && !partial_operand(s, unknowns[i] >= 0.0 && unknowns[i] < 4294967296.0 ? (fmi2ValueReference)unknowns[i]
                                                                                        : 0xffffffffu, 0))
            return refused(s, what, n->message);
    for (size_t i = 0; i < nu; ++i)
        if (!partial_operand(s, (fmi2ValueReference)unknowns[i], 0)) return refused(s, what, n->message);
    for (size_t j = 0; j < nk; ++j)
        if (!partial_operand(s, (fmi2ValueReference)knowns[j], 1)) return refused(s, what, n->message);
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
    fmi2Status status = fmi2OK;
    if (c->partial_count && c->partials(n, analytic) != 0) status = refused(s, what, n->message);
    for (size_t i = 0; status == fmi2OK && i < nu; ++i) {
        const fmi2ValueReference u = (fmi2ValueReference)unknowns[i];
        if (summed[u]) {
            out[i] = sums[u];
            continue;
        }
        double total = 0.0;
        for (size_t j = 0; j < nk; ++j) {
            if (seeds[j] == 0.0) continue;
            const fmi2ValueReference k = (fmi2ValueReference)knowns[j];
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
        if (status == fmi2OK) out[i] = sums[u] = total, summed[u] = 1;
    }
    free(analytic), free(found);
    return status;
}

fmi2Status slave_model_exchange(Slave *s, const char *method, const char *what, const fmi2Real in[], size_t nin,
                                fmi2Real out[], size_t nout) {
    NativeInstance *n = inst(s);
    const NativeClass *c = s->cls;
    double values[64];
    if (!strcmp(method, "me_open")) {
        if (c->co_simulation_only) {
            char problem[1024];
            snprintf(problem, sizeof problem, "%s has no Model Exchange form: %s; instantiate it as fmi2CoSimulation",
                     c->name, c->co_simulation_only);
            return refused(s, "fmi2Instantiate", problem);
        }
        n->in_model_exchange = 1;
        return fmi2OK;
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
        s->cached = 0;
        return fmi2OK;
    }
    if (!strcmp(method, "me_set_states")) {
        if (nin != c->continuous_count) {
            char problem[2048], values[1536];
            native_number_sequence(in, nin, 1, values, sizeof values);
            size_t used = (size_t)snprintf(problem, sizeof problem, "%s '%s': continuous states = %s must be %zu "
                                           "values (", c->name, s->named.name, values, c->continuous_count);
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
        s->cached = 0;
        if (c->states_set && c->states_set(n) != 0) return refused(s, what, n->message);
        return fmi2OK;
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
        if (c->indicator_count && current_outputs(s) != 0) return refused(s, what, n->message);
        return evaluated(s, what, "ni", s->outputs + c->output_count - c->indicator_count, c->indicator_count, out,
                         nout);
    }
    if (!strcmp(method, "me_new_discrete_states")) { /* the point is accepted; then the next time event */
        if (c->update_discrete_states && c->update_discrete_states(n) != 0) return refused(s, what, n->message);
        n->accepted_time = n->event_time = n->time;
        s->cached = 0;
        double next = 0.0;
        int defined = next_time_event(n, &next);
        out[0] = 0.0, out[1] = defined ? 1.0 : 0.0, out[2] = defined ? next : 0.0;
        return fmi2OK;
    }
    if (!strcmp(method, "directional_derivative")) return directional_derivative(s, what, in, nin, out, nout);
    if (!strcmp(method, "me_completed_step")) {
        n->accepted_time = n->time;
        return fmi2OK;
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

fmi2Status slave_get_state(Slave *s, void **state) {
    const NativeClass *c = s->cls;
    NativeInstance *n = inst(s);
    Saved *saved = new_saved(c);
    if (!saved || copy_strings(c, saved->strings, n->strings) != 0) {
        free_saved(c, saved);
        return fmi2Error;
    }
    memcpy(saved->values, n->values, c->variable_count * sizeof *n->values);
    memcpy(saved->state, n->state, c->state_count * sizeof *n->state);
    saved->time = n->time;
    saved->accepted_time = n->accepted_time;
    saved->event_time = n->event_time;
    saved->initialized = n->initialized;
    saved->in_model_exchange = n->in_model_exchange;
    *state = saved;
    return fmi2OK;
}

fmi2Status slave_set_state(Slave *s, void *state) {
    const NativeClass *c = s->cls;
    NativeInstance *n = inst(s);
    const Saved *saved = state;
    if (saved->rejected) return log_error(s, "%s: fmi2SetFMUstate refused, the instance is unchanged: %s",
                                          s->named.name, saved->rejected);
    if (copy_strings(c, n->strings, saved->strings) != 0) return fmi2Error;
    memcpy(n->values, saved->values, c->variable_count * sizeof *n->values);
    memcpy(n->state, saved->state, c->state_count * sizeof *n->state);
    n->time = saved->time;
    n->accepted_time = saved->accepted_time;
    n->event_time = saved->event_time;
    n->initialized = saved->initialized;
    n->in_model_exchange = saved->in_model_exchange;
    s->cached = 0;
    if (c->state_restored) c->state_restored(n);
    return fmi2OK;
}

void slave_free_state(Slave *s, void *state) { free_saved(s->cls, state); }

int slave_state_modes(void *state, int *initialized, int *model_exchange) {
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

fmi2Status slave_serialize(Slave *s, void *state, char **bytes, size_t *size) {
    const NativeClass *c = s->cls;
    const Saved *saved = state;
    if (saved->rejected) {
        *size = 1 + strlen(saved->rejected);
        if (!(*bytes = malloc(*size))) return fmi2Error;
        (*bytes)[0] = '\0';
        memcpy(*bytes + 1, saved->rejected, *size - 1);
        return fmi2OK;
    }
    size_t total = sizeof SERIAL_MAGIC + strlen(c->name) + 1 + 8 * (7 + c->variable_count + c->state_count) + 4;
    for (size_t i = 0; i < c->variable_count; ++i) total += 8 + (saved->strings[i] ? strlen(saved->strings[i]) : 0);
    char *p = *bytes = malloc(total);
    if (!p) return fmi2Error;
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
    return fmi2OK;
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
static const char *read_state(Slave *s, Reader *r, Saved *saved, char *why, size_t size) {
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

fmi2Status slave_deserialize(Slave *s, const char *bytes, size_t size, void **state) {
    const NativeClass *c = s->cls;
    Saved *saved = new_saved(c);
    if (!saved) return fmi2Error;
    Reader r = {bytes, bytes + size};
    char why[NATIVE_MESSAGE_SIZE];
    const char *problem = read_state(s, &r, saved, why, sizeof why);
    if (!problem) { /* the ranges and, initialized, the rules: on a scratch instance */
        Slave *scratch = instantiate(s->cls, "state check", "", &s->functions);
        if (!scratch) {
            free_saved(c, saved);
            return fmi2Error;
        }
        slave_set_state(scratch, saved);
        NativeInstance *n = inst(scratch);
        for (size_t i = 0; !problem && i < c->parameter_count; ++i)
            if (c->variables[i].type != NATIVE_STRING && check_range(n, &c->variables[i], n->values[i]) != 0)
                problem = n->message;
        if (!problem && n->initialized && c->validate && c->validate(n) != 0) problem = n->message;
        if (problem) snprintf(why, sizeof why, "%s", problem);
        problem = problem ? why : NULL;
        slave_free(scratch);
    }
    if (problem) {
        char *reason = malloc(strlen(c->name) + strlen(problem) + 64);
        if (!reason) {
            free_saved(c, saved);
            return fmi2Error;
        }
        sprintf(reason, "%s: the serialized FMU state is refused: %s", c->name, problem);
        saved->rejected = reason;
    }
    *state = saved;
    return fmi2OK;
}

/* --- the host library (components/native_component.py) ----------------------------------------------------------
 * The same runtime and laws, loaded into a Python process: the in-process component is a view of an instance here,
 * so its law runs as this C, the one implementation. The slave_* functions above are its calls; these give what the
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
} HostLog;

static void host_logger(fmi2ComponentEnvironment environment, fmi2String name, fmi2Status status,
                        fmi2String category, fmi2String message, ...) {
    (void)name, (void)category;
    HostLog *log = environment;
    va_list args;
    va_start(args, message);
    char *text = platform_format(message, args);
    va_end(args);
    size_t length = text ? strlen(text) + 3 : 0;
    if (length && log->used + length + 1 > log->size) {
        size_t size = 2 * (log->used + length + 1);
        char *grown = realloc(log->text, size);
        if (grown) log->text = grown, log->size = size;
    }
    if (length && log->used + length + 1 <= log->size)
        log->used += (size_t)snprintf(log->text + log->used, log->size - log->used, "%d %s\n", (int)status, text);
    free(text);
}

static void *host_allocate(size_t count, size_t size) { return calloc(count, size); }

/* An instance of the class `name` (NULL for a class this library has not, or out of memory). */
HOST_API Slave *host_instantiate(const char *name, const char *instance) {
    const NativeClass *c = native_class(name); /* not slave_load's class: instances of any class, any thread */
    HostLog *log = c ? calloc(1, sizeof *log) : NULL;
    if (!log) return NULL;
    fmi2CallbackFunctions functions = {host_logger, host_allocate, free, NULL, log};
    Slave *s = instantiate(c, instance, "", &functions);
    if (!s) free(log);
    return s;
}

HOST_API void host_free(Slave *s) {
    HostLog *log = s->functions.componentEnvironment;
    slave_free(s);
    free(log->text);
    free(log);
}

/* The lines logged since the last call ("" if none); valid until the next call for this instance. */
HOST_API const char *host_take_log(Slave *s) {
    HostLog *log = s->functions.componentEnvironment;
    if (!log->text || !log->used) return "";
    log->used = 0;
    return log->text;
}

HOST_API double *host_values(Slave *s) { return inst(s)->values; }
HOST_API double *host_state(Slave *s) { return inst(s)->state; }
HOST_API const char *host_message(Slave *s) { return inst(s)->message; }
HOST_API int host_arithmetic(Slave *s) { return inst(s)->arithmetic; }
HOST_API double host_time(Slave *s) { return inst(s)->time; }
HOST_API int host_initialized(Slave *s) { return inst(s)->initialized; }
/* After the Python side wrote values or the state directly: the outputs are computed again. */
HOST_API void host_changed(Slave *s) { s->cached = 0; }
/* Memory the runtime handed out (a serialized state). */
HOST_API void host_release(void *memory) { free(memory); }

/* The folder relative file names are found in (a path, not a URI; NULL or "": the current directory). */
HOST_API int host_set_resources(Slave *s, const char *folder) {
    NativeInstance *n = inst(s);
    free((char *)n->resources);
    n->resources = folder && *folder ? platform_strndup(folder, SIZE_MAX) : NULL;
    return folder && *folder && !n->resources ? -1 : 0;
}
#endif
