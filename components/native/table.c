/* Table (components/table.py): linear interpolation in a time table given as a parameter or read from a CSV file
 * in the FMU's resources folder (table_rows.c reads both), with MSL's extrapolations and a time event at every row.
 * Its Integer parameters are converted only when they are integers in their declared range. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expression.h"
#include "model.h"
#include "native_variables.h"
#include "numbers.h"
#include "table_rows.h"

#define V(name) n->values[Table__##name]
enum { HOLD_LAST_POINT = 1, LAST_TWO_POINTS, PERIODIC, NO_EXTRAPOLATION };

typedef struct {
    int current;         /* the rows are those of the parameters now (cleared when a parameter is written) */
    char *key;           /* what the rows were read from (parameters and folder), NULL: not read */
    double *times, *values;
    size_t count;
    double *events;      /* the time events and what they were made from */
    size_t event_count;
    double event_key[5];
    int events_made;
} TableData;

static void release(void *data) {
    TableData *t = data;
    free(t->key);
    free(t->times);
    free(t->values);
    free(t->events);
    free(t);
}

static TableData *table_data(NativeInstance *n) {
    if (!n->data) {
        n->data = calloc(1, sizeof(TableData));
        n->release = release;
    }
    return n->data;
}

/* --- the law -------------------------------------------------------------------------------------------- */

static int fail_parameter(NativeInstance *n, int parameter, const char *problem) {
    char text[8200];
    native_repr_text(n->strings[parameter] ? n->strings[parameter] : "", text, sizeof text);
    return native_fail_text(n, 0, "%s '%s': %s = %s %s", n->cls->name, native_instance_name(n),
                            n->cls->variables[parameter].name, text, problem);
}

/* The Integer parameter `index` as the int it declares (in its range), or -1 after native_fail: a value set from a
 * saved state or start values may be a fraction or far beyond an int, and casting it would be undefined. */
static int integer_parameter(NativeInstance *n, int index, int *out) {
    const NativeVariable *v = &n->cls->variables[index];
    const double value = n->values[index], min = v->has_min ? v->min : (double)INT_MIN;
    const double max = v->has_max ? v->max : (double)INT_MAX;
    if (native_integer_value(value, min, max, out) == 0) return 0;
    char problem[120];
    if (value != floor(value)) snprintf(problem, sizeof problem, "is not an integer");
    else snprintf(problem, sizeof problem, "is out of range: must be an integer from %.0f to %.0f", fmax(min, INT_MIN),
                  fmin(max, INT_MAX));
    return native_fail(n, v->name, value, problem);
}

/* The table's rows, read once per table and file parameters (table.py rows()). */
static int rows(NativeInstance *n, TableData **found) {
    TableData *t = table_data(n);
    if (!t) return native_fail_text(n, 0, "out of memory");
    int column;
    if (integer_parameter(n, Table__columns, &column) != 0) return -1;
    if (t->current) {
        *found = t;
        return 0;
    }
    const char *table = n->strings[Table__table] ? n->strings[Table__table] : "";
    const char *file = n->strings[Table__fileName] ? n->strings[Table__fileName] : "";
    const char *folder = n->resources ? n->resources : ".";
    char key_head[128];
    snprintf(key_head, sizeof key_head, "%d %d %d|", V(tableOnFile) != 0.0, V(allowOutsideFiles) != 0.0, column);
    size_t key_size = strlen(key_head) + strlen(table) + strlen(file) + strlen(folder) + 4;
    char *key = malloc(key_size);
    if (!key) return native_fail_text(n, 0, "out of memory");
    snprintf(key, key_size, "%s%s|%s|%s", key_head, table, file, folder);
    if (t->key && !strcmp(t->key, key)) {
        free(key);
        t->current = 1;
        *found = t;
        return 0;
    }
    const int on_file = V(tableOnFile) != 0.0, parameter = on_file ? Table__fileName : Table__table;
    char why[4096], problem[4200]; /* the message is cut at NATIVE_MESSAGE_SIZE anyway: a small stack */
    NativeRows parsed = {0};
    int failed = 0;
    if (on_file) {
        size_t size = 0;
        int kind = 0;
        unsigned char *data = native_table_read(file, folder, V(allowOutsideFiles) != 0.0, &size, &kind, why,
                                                sizeof why);
        if (!data) {
            snprintf(problem, sizeof problem, kind == 1 ? "is refused: %s" : "cannot be read: %s", why);
            failed = 1;
        } else {
            if (native_table_csv(data, size, column, &parsed, why, sizeof why) != 0) {
                snprintf(problem, sizeof problem, "is not a valid table: %s", why);
                failed = 1;
            }
            free(data);
        }
    } else if (native_table_text(table, column, &parsed, why, sizeof why)) {
        snprintf(problem, sizeof problem, "is not a valid table: %s", why);
        failed = 1;
    }
    if (failed) {
        native_rows_free(&parsed);
        free(key);
        return fail_parameter(n, parameter, problem);
    }
    free(t->key), free(t->times), free(t->values);
    t->key = key, t->times = parsed.times, t->values = parsed.values, t->count = parsed.count;
    t->events_made = 0;
    t->current = 1;
    *found = t;
    return 0;
}

/* a parameter written or a state restored: the rows are checked against the parameters again when next used */
void native_Table_parameter_changed(NativeInstance *n) {
    if (n->data) ((TableData *)n->data)->current = 0;
}

void native_Table_state_restored(NativeInstance *n) { native_Table_parameter_changed(n); }

static double line_slope(const TableData *t, size_t i, size_t j) {
    const double dt = t->times[j] - t->times[i];
    return dt != 0.0 ? (t->values[j] - t->values[i]) / dt : 0.0;
}

/* (y, dy/dT) at table time T; -1 with `why` outside a NoExtrapolation table */
static int interpolate(const TableData *table, double t, int extrapolation, double *y, double *slope, char *why,
                       size_t size) {
    const double *times = table->times, *values = table->values;
    const size_t count = table->count;
    const double first = times[0], last = times[count - 1];
    if (count == 1) {
        *y = values[0], *slope = 0.0;
        return 0;
    }
    if (extrapolation == PERIODIC && !(first <= t && t < last)) {
        t = first + native_py_mod(t - first, last - first);
        if (!(first <= t && t < last)) t = first;
    }
    if (first <= t && t < last) {
        size_t low = 0, high = count; /* bisect_right */
        while (low < high) {
            size_t mid = (low + high) / 2;
            if (t < times[mid]) high = mid;
            else low = mid + 1;
        }
        const double t0 = times[low - 1], t1 = times[low], y0 = values[low - 1], y1 = values[low];
        *y = y0 + (y1 - y0) * (t - t0) / (t1 - t0);
        *slope = (y1 - y0) / (t1 - t0);
        return 0;
    }
    if (extrapolation == NO_EXTRAPOLATION && t != last) {
        char at[40], a[40], b[40];
        native_measured(t, at, sizeof at), native_number(first, a, sizeof a), native_number(last, b, sizeof b);
        snprintf(why, size, "table time %s is outside the table [%s, %s] and extrapolation = 4 (NoExtrapolation)", at,
                 a, b);
        return -1;
    }
    if (extrapolation == HOLD_LAST_POINT || extrapolation == NO_EXTRAPOLATION) {
        *y = t >= last ? values[count - 1] : values[0], *slope = 0.0;
        return 0;
    }
    if (t >= last) {
        *slope = line_slope(table, count - 2, count - 1);
        *y = values[count - 1] + *slope * (t - last);
        return 0;
    }
    *slope = line_slope(table, 0, 1);
    *y = values[0] + *slope * (t - first);
    return 0;
}

static int waveform(NativeInstance *n, double t, double *out) {
    if (t < V(startTime)) {
        out[0] = V(offset), out[1] = out[2] = 0.0;
        return 0;
    }
    TableData *table;
    int extrapolation;
    if (integer_parameter(n, Table__extrapolation, &extrapolation) != 0 || rows(n, &table) != 0) return -1;
    double y, slope;
    char why[512], problem[700], at[40];
    if (interpolate(table, (t - V(startTime)) / V(timeScale), extrapolation, &y, &slope, why, sizeof why)) {
        native_measured(t, at, sizeof at);
        snprintf(problem, sizeof problem, "refuses t = %s: %s", at, why);
        return native_fail(n, "extrapolation", V(extrapolation), problem);
    }
    out[0] = V(offset) + y, out[1] = slope / V(timeScale), out[2] = 0.0;
    return 0;
}

int native_Table_validate(NativeInstance *n) {
    TableData *table;
    int column, extrapolation;
    if (integer_parameter(n, Table__columns, &column) != 0 || integer_parameter(n, Table__extrapolation, &extrapolation))
        return -1;
    return V(tableOnFile) != 0.0 ? 0 : rows(n, &table);
}

int native_Table_initialize(NativeInstance *n) {
    double out[3];
    return waveform(n, n->time, out); /* NoExtrapolation: the start time must be inside the table */
}

int native_Table_advance(NativeInstance *n, double t, double h) {
    double out[3];
    return waveform(n, t + h, out); /* a step that ends outside a NoExtrapolation table is refused */
}

int native_Table_outputs(NativeInstance *n, double *out) { return waveform(n, native_output_time(n), out); }

static int ascending(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* startTime and every row's time; periodic: those of the period that holds the model's time and the next one */
size_t native_Table_time_events(NativeInstance *n, const double **events) {
    TableData *t;
    if (rows(n, &t) != 0) return 0;
    const double start = V(startTime), scale = V(timeScale), *times = t->times;
    const double period = V(extrapolation) == PERIODIC && times[t->count - 1] > times[0] ? times[t->count - 1] - times[0]
                                                                                       : 0.0;
    const double shift = period ? fmax(0.0, floor(((n->time - start) / scale - times[0]) / period)) * period : 0.0;
    const double key[5] = {start, scale, period, shift, (double)t->count};
    if (!(t->events_made && !memcmp(key, t->event_key, sizeof key))) {
        const size_t count = (period ? 2 : 1) * t->count + 1;
        double *made = realloc(t->events, count * sizeof *made);
        if (!made) return 0;
        t->events = made;
        size_t k = 0;
        made[k++] = start;
        for (int copy = 0; copy < (period ? 2 : 1); ++copy)
            for (size_t i = 0; i < t->count; ++i) /* table.py: start + (t + shift)*scale, t from times + period */
                made[k++] = start + ((copy ? times[i] + period : times[i]) + shift) * scale;
        qsort(made, k, sizeof *made, ascending);
        size_t unique = 0; /* a set: equal times once */
        for (size_t i = 0; i < k; ++i)
            if (!unique || made[i] != made[unique - 1]) made[unique++] = made[i];
        t->event_count = unique;
        memcpy(t->event_key, key, sizeof key);
        t->events_made = 1;
    }
    *events = t->events;
    return t->event_count;
}
