/* Force, Torque, ConstantForce, ConstantTorque, Position, ConstantSpeed, Speed and Accelerate (components/sources.py: the laws, the
 * exact steps). */
#include "model.h"
#include "native_variables.h"

/* s, v, a and flange.s, flange.v, flange.a (sources.py: motion) */
static int motion(double *out, double s, double v, double a) {
    out[0] = s, out[1] = s, out[2] = v, out[3] = v, out[4] = a, out[5] = a;
    return 0;
}

static const double *vals(const NativeInstance *n) { return n->values; }

int native_Force_outputs(NativeInstance *n, double *out) {
    out[0] = -vals(n)[Force__f];
    out[1] = -vals(n)[Force__f_rate];
    return 0;
}

int native_Torque_outputs(NativeInstance *n, double *out) {
    out[0] = -vals(n)[Torque__tau];
    out[1] = -vals(n)[Torque__tau_rate];
    return 0;
}

int native_ConstantForce_outputs(NativeInstance *n, double *out) {
    out[0] = -vals(n)[ConstantForce__f_constant];
    out[1] = 0.0;
    return 0;
}

int native_ConstantTorque_outputs(NativeInstance *n, double *out) {
    out[0] = -vals(n)[ConstantTorque__tau_constant];
    out[1] = 0.0;
    return 0;
}

int native_Position_outputs(NativeInstance *n, double *out) {
    return motion(out, vals(n)[Position__s_ref], vals(n)[Position__s_ref_rate], vals(n)[Position__s_ref_rate_rate]);
}

/* the hidden state t_start: the time initialization ended */
int native_ConstantSpeed_initialize(NativeInstance *n) {
    n->state[0] = n->time;
    return 0;
}

int native_ConstantSpeed_outputs(NativeInstance *n, double *out) {
    const double v = vals(n)[ConstantSpeed__v_fixed];
    out[0] = vals(n)[ConstantSpeed__s_start] + v * (n->time - n->state[0]);
    out[1] = v;
    return 0;
}

int native_Speed_advance(NativeInstance *n, double t, double h) {
    (void)t;
    n->state[0] += vals(n)[Speed__v_ref] * h + 0.5 * vals(n)[Speed__v_ref_rate] * h * h;
    return 0;
}

int native_Speed_derivatives(NativeInstance *n, double *out) {
    out[0] = vals(n)[Speed__v_ref];
    return 0;
}

int native_Speed_outputs(NativeInstance *n, double *out) {
    return motion(out, n->state[0], vals(n)[Speed__v_ref], vals(n)[Speed__v_ref_rate]);
}

int native_Accelerate_advance(NativeInstance *n, double t, double h) {
    (void)t;
    const double a = vals(n)[Accelerate__a_ref], j = vals(n)[Accelerate__a_ref_rate];
    n->state[0] += n->state[1] * h + 0.5 * a * h * h + j * h * h * h / 6.0;
    n->state[1] += a * h + 0.5 * j * h * h;
    return 0;
}

int native_Accelerate_derivatives(NativeInstance *n, double *out) {
    out[0] = n->state[1];
    out[1] = vals(n)[Accelerate__a_ref];
    return 0;
}

int native_Accelerate_outputs(NativeInstance *n, double *out) {
    return motion(out, n->state[0], n->state[1], vals(n)[Accelerate__a_ref]);
}
