/* The model's side of an instance (components/base.py's Component): what the laws call (their failures in the words of
 * the Python component, Python's arithmetic), the outputs at the current point and the checks of the parameters,
 * and the time events of the sources. It knows neither the runtime's calls nor any FMI version. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "model.h"

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

const char *native_instance_name(const NativeInstance *n) { return n->name; }

int native_fail(NativeInstance *n, const char *name, double value, const char *problem) {
    char repr[40];
    int type = NATIVE_REAL;
    for (size_t i = 0; i < n->cls->variable_count; ++i)
        if (!strcmp(n->cls->variables[i].name, name)) type = n->cls->variables[i].type;
    if (type == NATIVE_INTEGER) snprintf(repr, sizeof repr, "%.0f", value);
    else if (type == NATIVE_BOOLEAN) snprintf(repr, sizeof repr, "%s", value != 0.0 ? "True" : "False");
    else native_number(value, repr, sizeof repr);
    return native_fail_text(n, 0, "%s '%s': %s = %s %s", n->cls->name, n->name, name, repr, problem);
}

int native_fail_sequence(NativeInstance *n, const char *name, const double *values, size_t count, int list,
                         const char *problem) {
    char repr[1024];
    native_number_sequence(values, count, list, repr, sizeof repr);
    return native_fail_text(n, 0, "%s '%s': %s = %s %s", n->cls->name, n->name, name, repr, problem);
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

/* components/model_exchange.py: the model's time is a time event not yet handled in event mode (after
 * initialization: its equations evaluate the relations at the start time itself, as Modelica's initial equations) */
static int pending_time_event(const NativeInstance *n) {
    if (!(n->initialized && n->in_model_exchange && n->time > n->event_time) || !n->cls->time_events) return 0;
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

int native_next_time_event(NativeInstance *n, double *next) {
    const double *events;
    size_t count = n->cls->time_events ? n->cls->time_events(n, &events) : 0;
    return count ? event_after(events, count, n->event_time, next) : 0;
}

/* Component.check_range: a parameter value on its own. */
int native_check_range(NativeInstance *n, const NativeVariable *v, double value) {
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

int native_check_parameters(NativeInstance *n) {
    for (size_t i = 0; i < n->cls->parameter_count; ++i)
        if (n->cls->variables[i].type != NATIVE_STRING && native_check_range(n, &n->cls->variables[i], n->values[i]) != 0)
            return -1;
    return n->cls->validate ? n->cls->validate(n) : 0;
}

long native_too_large(const NativeInstance *n) {
    long found = -1;
    for (size_t i = 0; i < n->cls->parameter_count + n->cls->input_count; ++i) {
        double v = n->values[i];
        if (n->cls->variables[i].type == NATIVE_REAL && isfinite(v) && (found < 0 || fabs(v) > fabs(n->values[found])))
            found = (long)i;
    }
    return found >= 0 && fabs(n->values[found]) >= NATIVE_HUGE_VALUE ? found : -1;
}

int native_compute_outputs(NativeInstance *n) {
    if (n->cached) return 0;
    n->arithmetic = 0;
    if (n->cls->outputs(n, n->outputs) == 0) {
        n->cached = 1;
        return 0;
    }
    char exception[NATIVE_MESSAGE_SIZE];
    int arithmetic = n->arithmetic;
    snprintf(exception, sizeof exception, "%s", n->message);
    if (!n->initialized && native_check_parameters(n) != 0) return -1;
    long huge = arithmetic ? native_too_large(n) : -1;
    if (huge < 0) {
        snprintf(n->message, NATIVE_MESSAGE_SIZE, "%s", exception);
        return -1;
    }
    char problem[NATIVE_MESSAGE_SIZE + 64];
    snprintf(problem, sizeof problem, "is beyond what the law can compute with (%s)", exception);
    return native_fail(n, n->cls->variables[huge].name, n->values[huge], problem);
}

int native_current_outputs(NativeInstance *n, const double **outputs) {
    if (native_compute_outputs(n) != 0) return -1;
    *outputs = n->outputs;
    return 0;
}
