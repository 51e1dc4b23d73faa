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
