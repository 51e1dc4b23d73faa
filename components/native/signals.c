/* Sine, Step, Ramp and Constant (components/signals.py): y, dy/dt and d2y/dt2 in closed form at the time. */
#include <math.h>

#include "model.h"
#include "native_variables.h"

static const double PI = 3.141592653589793; /* Python's math.pi */

int native_Sine_outputs(NativeInstance *n, double *out) {
    const double *v = n->values, t = native_output_time(n);
    const double amplitude = v[Sine__amplitude], f = v[Sine__f], phase = v[Sine__phase], offset = v[Sine__offset];
    double sine, cosine;
    if (t < v[Sine__startTime]) {
        if (v[Sine__continuous] != 0.0 && native_sin(n, phase, &sine) != 0) return -1;
        out[0] = offset + (v[Sine__continuous] != 0.0 ? amplitude * sine : 0.0);
        out[1] = out[2] = 0.0;
        return 0;
    }
    const double omega = 2 * PI * f, angle = 2 * PI * f * (t - v[Sine__startTime]) + phase;
    if (native_sin(n, angle, &sine) != 0 || native_cos(n, angle, &cosine) != 0) return -1;
    out[0] = offset + amplitude * sine;
    out[1] = amplitude * omega * cosine;
    out[2] = -amplitude * omega * omega * sine;
    return 0;
}

int native_Step_outputs(NativeInstance *n, double *out) {
    const double *v = n->values;
    out[0] = v[Step__offset] + (native_output_time(n) < v[Step__startTime] ? 0.0 : v[Step__height]);
    out[1] = out[2] = 0.0;
    return 0;
}

int native_Ramp_outputs(NativeInstance *n, double *out) {
    const double *v = n->values, t = native_output_time(n);
    const double height = v[Ramp__height], duration = v[Ramp__duration], start = v[Ramp__startTime];
    out[2] = 0.0;
    if (t < start) {
        out[0] = v[Ramp__offset], out[1] = 0.0;
    } else if (t < start + duration) {
        out[0] = v[Ramp__offset] + (t - start) * height / duration, out[1] = height / duration;
    } else {
        out[0] = v[Ramp__offset] + height, out[1] = 0.0;
    }
    return 0;
}

int native_Constant_outputs(NativeInstance *n, double *out) {
    out[0] = n->values[Constant__k];
    out[1] = out[2] = 0.0;
    return 0;
}

size_t native_Sine_time_events(NativeInstance *n, const double **events) {
    *events = &n->values[Sine__startTime];
    return 1;
}

size_t native_Step_time_events(NativeInstance *n, const double **events) {
    *events = &n->values[Step__startTime];
    return 1;
}

size_t native_Ramp_time_events(NativeInstance *n, const double **events) {
    n->memo[0] = n->values[Ramp__startTime];
    n->memo[1] = n->values[Ramp__startTime] + n->values[Ramp__duration];
    *events = n->memo;
    return 2;
}

/* Pulse: the start of period k, startTime + k*period (the time event where MSL's count becomes k) */
static double period_start(const double *v, double k) { return v[Pulse__startTime] + k * v[Pulse__period]; }

/* the period count at t >= startTime: the largest k with period_start(k) <= t (MSL's count after its events) */
static double period_count(const double *v, double t) {
    double k = floor((t - v[Pulse__startTime]) / v[Pulse__period]);
    if (period_start(v, k + 1) <= t) k += 1;
    if (period_start(v, k) > t && k > 0) k -= 1;
    return k;
}

int native_Pulse_outputs(NativeInstance *n, double *out) {
    const double *v = n->values, t = native_output_time(n), nperiod = v[Pulse__nperiod];
    const double width = v[Pulse__period] * v[Pulse__width] / 100; /* MSL's T_width */
    double y = 0.0;
    if (!(t < v[Pulse__startTime] || nperiod == 0)) {
        const double k = period_count(v, t);
        if (!(nperiod > 0 && k >= nperiod) && t < period_start(v, k) + width) y = v[Pulse__amplitude];
    }
    out[0] = v[Pulse__offset] + y;
    out[1] = out[2] = 0.0;
    return 0;
}

/* The edges of the periods around the instance's last event and time (a window: the periods are endless), at most
 * 7 periods' rising and falling edges from the period before; none after nperiod periods. */
size_t native_Pulse_time_events(NativeInstance *n, const double **events) {
    const double *v = n->values, nperiod = v[Pulse__nperiod], period = v[Pulse__period];
    const double width = period * v[Pulse__width] / 100;
    double base = isfinite(n->event_time) && n->event_time < n->time ? n->event_time : n->time;
    if (n->time - base > 4 * period) base = n->time - period;
    double first = base < v[Pulse__startTime] ? 0.0 : period_count(v, base) - 1;
    if (first < 0) first = 0;
    size_t count = 0;
    for (int i = 0; i < 7 && !(nperiod >= 0 && first + i >= nperiod); ++i) {
        n->memo[count++] = period_start(v, first + i);
        n->memo[count++] = period_start(v, first + i) + width;
    }
    *events = n->memo;
    return count;
}
