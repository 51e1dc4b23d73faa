/* RigidBody (components/rigid_body.py): Newton-Euler with the centre of mass integrated exactly over a step and the
 * rotation by Munthe-Kaas RK4 substeps on the rotation group; its Model Exchange form. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "native_variables.h"
#include "numbers.h"
#include "spatial.h"

#define V(name) n->values[RigidBody__##name]
#define VEC(name) (&n->values[RigidBody__##name##_x])
#define MAX_SUBSTEPS 100000
#define QUATERNION_STABILIZATION 10.0
#define SOLVER_QUATERNION 0 /* flags: Model Exchange set the states, the quaternion is the solver's */

static const double PI = 3.141592653589793;

/* the state's slots: p[0..3), v[3..6), q[6..10), w[10..13) */
enum { P = 0, VEL = 3, Q = 6, W = 10 };

static void inertia(const NativeInstance *n, double m[3][3]) {
    const double xx = V(inertia_xx), yy = V(inertia_yy), zz = V(inertia_zz), xy = V(inertia_xy), xz = V(inertia_xz),
                 yz = V(inertia_yz);
    m[0][0] = xx, m[0][1] = xy, m[0][2] = xz, m[1][0] = xy, m[1][1] = yy, m[1][2] = yz;
    m[2][0] = xz, m[2][1] = yz, m[2][2] = zz;
}

static double sum_squares(const double *x, int count) {
    double s = 0.0;
    for (int i = 0; i < count; ++i) s = s + x[i] * x[i];
    return s;
}

static void sort3(double *x) {
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2 - i; ++j)
            if (x[j + 1] < x[j]) {
                const double t = x[j];
                x[j] = x[j + 1], x[j + 1] = t;
            }
}

/* eigenvalues of a symmetric 3x3 matrix, ascending (trigonometric closed form) */
static void eigenvalues(const double m[3][3], double *out) {
    const double p1 = pow(m[0][1], 2.0) + pow(m[0][2], 2.0) + pow(m[1][2], 2.0);
    const double trace = m[0][0] + m[1][1] + m[2][2];
    if (p1 == 0) {
        out[0] = m[0][0], out[1] = m[1][1], out[2] = m[2][2];
        sort3(out);
        return;
    }
    const double q = trace / 3.0;
    const double p2 = pow(m[0][0] - q, 2.0) + pow(m[1][1] - q, 2.0) + pow(m[2][2] - q, 2.0) + 2 * p1;
    const double p = sqrt(p2 / 6.0);
    double b[3][3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) b[i][j] = (m[i][j] - (i == j ? q : 0.0)) / p;
    const double det_b = b[0][0] * (b[1][1] * b[2][2] - b[1][2] * b[2][1])
                         - b[0][1] * (b[1][0] * b[2][2] - b[1][2] * b[2][0])
                         + b[0][2] * (b[1][0] * b[2][1] - b[1][1] * b[2][0]);
    const double clamped = det_b / 2.0, low = 1.0 < clamped ? 1.0 : clamped, r = -1.0 < low ? low : -1.0;
    const double phi = acos(r) / 3.0;
    const double e1 = q + 2 * p * cos(phi), e3 = q + 2 * p * cos(phi + 2 * PI / 3);
    out[0] = e1, out[1] = 3 * q - e1 - e3, out[2] = e3;
    sort3(out);
}

int native_RigidBody_validate(NativeInstance *n) {
    const double xx = V(inertia_xx), yy = V(inertia_yy), zz = V(inertia_zz), xy = V(inertia_xy), xz = V(inertia_xz),
                 yz = V(inertia_yz);
    const double tensor[6] = {xx, yy, zz, xy, xz, yz};
    const double minors[3] = {xx, xx * yy - xy * xy,
                              xx * (yy * zz - yz * yz) - xy * (xy * zz - yz * xz) + xz * (xy * yz - yy * xz)};
    for (int i = 0; i < 3; ++i)
        if (!(minors[i] > 0)) return native_fail_sequence(n, "inertia", tensor, 6, 0, "is not positive definite");
    double m[3][3], principal[3];
    inertia(n, m);
    eigenvalues(m, principal);
    for (int i = 0; i < 3; ++i)
        if (principal[i] > principal[(i + 1) % 3] + principal[(i + 2) % 3] * (1 + 1e-12))
            return native_fail_sequence(n, "inertia", tensor, 6, 0, "violates the triangle inequality of principal "
                                                                    "moments (no real body has it)");
    double largest = principal[0];
    for (int i = 1; i < 3; ++i)
        if (principal[i] > largest) largest = principal[i];
    const char *names[] = {"angularVelocity_start", "velocity_start"};
    const double *vectors[] = {VEC(angularVelocity_start), VEC(velocity_start)}, scales[] = {largest, V(mass)};
    for (int i = 0; i < 2; ++i)
        if (!isfinite(sum_squares(vectors[i], 3) * scales[i]))
            return native_fail_sequence(n, names[i], vectors[i], 3, 0,
                                        "gives a kinetic energy beyond the largest real number");
    const double *q = &V(orientation_start_w);
    if (sum_squares(q, 4) == 0.0)
        return native_fail_sequence(n, "orientation_start", q, 4, 0, "is not a rotation quaternion (zero)");
    if (!isfinite(sum_squares(q, 4)))
        return native_fail_sequence(n, "orientation_start", q, 4, 0, "is too large to normalize (its squared norm "
                                                                     "overflows): give a unit quaternion");
    return 0;
}

void native_RigidBody_parameter_changed(NativeInstance *n) {
    const double *start = &V(orientation_start_w);
    const double squares = sum_squares(start, 4);
    if (!(0.0 < squares && squares < INFINITY)) return; /* reported by validate */
    double q[4], rotation[3][3], offset[3], arm[3];
    quat_normalize(start, q);
    quat_to_matrix(q, rotation);
    mat_vec(rotation, VEC(centerOfMass), offset);
    const double *omega = VEC(angularVelocity_start);
    memcpy(n->state + Q, q, sizeof q);
    vec_add(VEC(position_start), offset, n->state + P);
    vec_cross(omega, offset, arm);
    vec_add(VEC(velocity_start), arm, n->state + VEL);
    mat_t_vec(rotation, omega, n->state + W);
}

static void loads(const NativeInstance *n, double *force, double *torque) {
    vec_add(VEC(force_a), VEC(force_b), force);
    vec_add(VEC(torque_a), VEC(torque_b), torque);
}

/* the symmetric 3x3 system m x = b by Cramer's rule */
static void solve3(const double m[3][3], const double *b, double *out) {
    const double a = m[0][0], b_ = m[0][1], c = m[0][2], d = m[1][1], e = m[1][2], f = m[2][2];
    const double det = a * (d * f - e * e) - b_ * (b_ * f - c * e) + c * (b_ * e - c * d);
    const double inv[3][3] = {{d * f - e * e, c * e - b_ * f, b_ * e - c * d},
                              {c * e - b_ * f, a * f - c * c, b_ * c - a * e},
                              {b_ * e - c * d, b_ * c - a * e, a * d - b_ * b_}};
    double x[3];
    mat_vec(inv, b, x);
    vec_scale(1.0 / det, x, out);
}

static void angular_acceleration(const NativeInstance *n, const double *q, const double *w, const double *force,
                                 const double *torque, double *out) {
    double rotation[3][3], m[3][3], arm[3], moment[3], torque_com[3], tau_b[3], spin[3], gyro[3], rhs[3];
    quat_to_matrix(q, rotation);
    inertia(n, m);
    mat_vec(rotation, VEC(centerOfMass), arm);
    vec_cross(arm, force, moment);
    vec_sub(torque, moment, torque_com);
    mat_t_vec(rotation, torque_com, tau_b);
    mat_vec(m, w, spin);
    vec_cross(w, spin, gyro);
    vec_sub(tau_b, gyro, rhs);
    solve3(m, rhs, out);
}

static void quat_mul(const double *a, const double *b, double *out) {
    const double aw = a[0], ax = a[1], ay = a[2], az = a[3], bw = b[0], bx = b[1], by = b[2], bz = b[3];
    out[0] = aw * bw - ax * bx - ay * by - az * bz;
    out[1] = aw * bx + ax * bw + ay * bz - az * by;
    out[2] = aw * by - ax * bz + ay * bw + az * bx;
    out[3] = aw * bz + ax * by - ay * bx + az * bw;
}

static void quat_exp(const double *theta, double *out) {
    const double angle = sqrt(vec_dot(theta, theta));
    if (angle < 1e-8) {
        const double half = 0.5 - angle * angle / 48.0;
        out[0] = 1.0 - angle * angle / 8.0, out[1] = half * theta[0], out[2] = half * theta[1];
        out[3] = half * theta[2];
        return;
    }
    const double half = sin(0.5 * angle) / angle;
    out[0] = cos(0.5 * angle), out[1] = half * theta[0], out[2] = half * theta[1], out[3] = half * theta[2];
}

/* theta' for q = q_n (x) exp(theta): w + theta x w / 2 + theta x (theta x w) / 12 */
static void dexp_inverse(const double *theta, const double *omega, double *out) {
    double t_w[3], a[3], b[3];
    vec_cross(theta, omega, t_w);
    vec_scale(0.5, t_w, a);
    vec_add(omega, a, a);
    vec_cross(theta, t_w, b);
    vec_scale(1.0 / 12.0, b, b);
    vec_add(a, b, out);
}

/* the rotation after the angle step theta: q (x) exp(theta) */
static void rotated(const double *q, const double *theta, double *out) {
    double e[4];
    quat_exp(theta, e);
    quat_mul(q, e, out);
}

static void rkmk4(const NativeInstance *n, double *q, double *w, double h, const double *force,
                  const double *torque) {
    double k1w[3], k2t[3], k2w[3], k3t[3], k3w[3], k4t[3], k4w[3], t[3], wi[3], qi[4], s[3];
    const double *k1t = w;
    angular_acceleration(n, q, w, force, torque, k1w);
    vec_scale(0.5 * h, k1t, t), vec_scale(0.5 * h, k1w, s), vec_add(w, s, wi);
    dexp_inverse(t, wi, k2t);
    rotated(q, t, qi);
    angular_acceleration(n, qi, wi, force, torque, k2w);
    vec_scale(0.5 * h, k2t, t), vec_scale(0.5 * h, k2w, s), vec_add(w, s, wi);
    dexp_inverse(t, wi, k3t);
    rotated(q, t, qi);
    angular_acceleration(n, qi, wi, force, torque, k3w);
    vec_scale(h, k3t, t), vec_scale(h, k3w, s), vec_add(w, s, wi);
    dexp_inverse(t, wi, k4t);
    rotated(q, t, qi);
    angular_acceleration(n, qi, wi, force, torque, k4w);
    double theta[3], sum[3], w_new[3], q_new[4];
    vec_add(k2t, k3t, sum), vec_scale(2.0, sum, sum), vec_add(k1t, sum, sum), vec_add(sum, k4t, sum);
    vec_scale(h / 6.0, sum, theta);
    vec_add(k2w, k3w, sum), vec_scale(2.0, sum, sum), vec_add(k1w, sum, sum), vec_add(sum, k4w, sum);
    vec_scale(h / 6.0, sum, sum);
    vec_add(w, sum, w_new);
    rotated(q, theta, q_new);
    quat_normalize(q_new, q);
    memcpy(w, w_new, sizeof w_new);
}

int native_RigidBody_advance(NativeInstance *n, double t, double step) {
    (void)t;
    double substeps = step / V(maxSubstepSize);
    if (!(substeps <= MAX_SUBSTEPS)) {
        char problem[512], size[40], count[40];
        native_number(step, size, sizeof size);
        native_format_g(substeps, 3, count, sizeof count);
        snprintf(problem, sizeof problem, "needs %s rotation substeps in a step of %s s, more than %d: raise "
                 "maxSubstepSize or take smaller communication steps", count, size, MAX_SUBSTEPS);
        return native_fail(n, "maxSubstepSize", V(maxSubstepSize), problem);
    }
    const long count = (long)fmax(1.0, ceil(substeps - 1e-9));
    double *st = n->state, force[3], torque[3], a[3], p_new[3], v_new[3], tmp[3];
    loads(n, force, torque);
    vec_scale(1.0 / V(mass), force, a);
    vec_add(a, VEC(gravity), a);
    vec_scale(step, st + VEL, tmp);
    vec_add(st + P, tmp, p_new);
    vec_scale(0.5 * step * step, a, tmp);
    vec_add(p_new, tmp, p_new);
    vec_scale(step, a, tmp);
    vec_add(st + VEL, tmp, v_new);
    const double h = step / (double)count;
    double q[4], w[3];
    memcpy(q, st + Q, sizeof q);
    memcpy(w, st + W, sizeof w);
    for (long i = 0; i < count; ++i) rkmk4(n, q, w, h, force, torque);
    int finite = 1;
    for (int i = 0; i < 4; ++i) finite &= isfinite(q[i]) != 0;
    for (int i = 0; i < 3; ++i) finite &= isfinite(w[i]) != 0;
    if (!finite) {
        double rotation[3][3], omega[3];
        char problem[512], size[40];
        quat_to_matrix(st + Q, rotation);
        mat_vec(rotation, st + W, omega);
        native_measured(h, size, sizeof size);
        snprintf(problem, sizeof problem, "cannot be integrated over a substep of %s s (the rotation diverges): lower "
                 "maxSubstepSize or the torques", size);
        return native_fail_sequence(n, "angularVelocity", omega, 3, 0, problem);
    }
    memcpy(st + P, p_new, sizeof p_new);
    memcpy(st + VEL, v_new, sizeof v_new);
    memcpy(st + Q, q, sizeof q);
    memcpy(st + W, w, sizeof w);
    return 0;
}

int native_RigidBody_states_set(NativeInstance *n) {
    if (sum_squares(n->state + Q, 4) == 0.0)
        return native_fail_sequence(n, "state q", n->state + Q, 4, 1, "is not a rotation quaternion (zero)");
    n->flags[SOLVER_QUATERNION] = 1;
    return 0;
}

int native_RigidBody_derivatives(NativeInstance *n, double *out) {
    const double *st = n->state;
    double q[4], force[3], torque[3], a[3], spin[4], product[4];
    quat_normalize(st + Q, q);
    loads(n, force, torque);
    vec_scale(1.0 / V(mass), force, a);
    vec_add(a, VEC(gravity), a);
    const double pull = QUATERNION_STABILIZATION * (1.0 - sum_squares(st + Q, 4));
    spin[0] = 0.0, spin[1] = st[W], spin[2] = st[W + 1], spin[3] = st[W + 2];
    quat_mul(q, spin, product);
    for (int i = 0; i < 3; ++i) out[i] = st[VEL + i], out[3 + i] = a[i];
    for (int i = 0; i < 4; ++i) out[6 + i] = 0.5 * product[i] + pull * st[Q + i];
    angular_acceleration(n, q, st + W, force, torque, out + 10);
    return 0;
}

int native_RigidBody_outputs(NativeInstance *n, double *out) {
    const double *st = n->state;
    double q[4], rotation[3][3], offset[3], omega[3], arm[3], m[3][3], spin[3];
    if (n->flags[SOLVER_QUATERNION]) quat_normalize(st + Q, q);
    else memcpy(q, st + Q, sizeof q);
    quat_to_matrix(q, rotation);
    mat_vec(rotation, VEC(centerOfMass), offset);
    mat_vec(rotation, st + W, omega);
    vec_sub(st + P, offset, out);
    memcpy(out + 3, q, sizeof q);
    vec_cross(omega, offset, arm);
    vec_sub(st + VEL, arm, out + 7);
    memcpy(out + 10, omega, sizeof omega);
    inertia(n, m);
    mat_vec(m, st + W, spin);
    const double mass = V(mass);
    out[13] = 0.5 * mass * vec_dot(st + VEL, st + VEL) + 0.5 * vec_dot(st + W, spin);
    out[14] = -mass * vec_dot(VEC(gravity), st + P);
    return 0;
}

/* --- analytic partials (RigidBody.partial_pattern): the tangents of derivatives() and outputs() ---------------- */

/* the derivatives' and outputs' tangents along a change ds of the 13 states and dload of the 12 inputs
 * (force_a, torque_a, force_b, torque_b) */
static void tangent(const NativeInstance *n, const double *ds, const double *dload, double *dder, double *dout) {
    const double *st = n->state, *dp = ds + P, *dv = ds + VEL, *dq = ds + Q, *dw = ds + W;
    double q[4], dqn[4], force[3], torque[3], dforce[3], dtorque[3], m[3][3], rotation[3][3], drot[3][3];
    loads(n, force, torque);
    vec_add(dload, dload + 6, dforce);
    vec_add(dload + 3, dload + 9, dtorque);
    inertia(n, m);
    /* der(p) = v, der(v) = F/m + g */
    for (int i = 0; i < 3; ++i) dder[P + i] = dv[i], dder[VEL + i] = dforce[i] / V(mass);
    /* der(q) = q^ (x) (0, w) / 2 + gamma (1 - |q|^2) q */
    quat_normalize(st + Q, q);
    normalize_tangent(st + Q, dq, dqn);
    const double spin[4] = {0.0, st[W], st[W + 1], st[W + 2]}, dspin[4] = {0.0, dw[0], dw[1], dw[2]};
    double a[4], b[4];
    quat_mul(dqn, spin, a);
    quat_mul(q, dspin, b);
    const double pull = QUATERNION_STABILIZATION * (1.0 - sum_squares(st + Q, 4));
    double q_dq = 0.0;
    for (int i = 0; i < 4; ++i) q_dq += st[Q + i] * dq[i];
    const double dpull = -2.0 * QUATERNION_STABILIZATION * q_dq;
    for (int i = 0; i < 4; ++i) dder[Q + i] = 0.5 * (a[i] + b[i]) + dpull * st[Q + i] + pull * dq[i];
    /* der(w) = I^-1 (R^T (M - (R c) x F) - w x I w), R = R(q^) */
    double arm[3], darm[3], moment[3], dmoment[3], c1[3], com[3], dcom[3], dtau[3], t1[3], spin_b[3], dspin_b[3],
        dgyro[3], drhs[3];
    quat_to_matrix(q, rotation);
    quat_to_matrix_tangent(q, dqn, drot);
    mat_vec(rotation, VEC(centerOfMass), arm);
    mat_vec(drot, VEC(centerOfMass), darm);
    vec_cross(arm, force, moment);
    vec_cross(darm, force, dmoment);
    vec_cross(arm, dforce, c1);
    vec_add(dmoment, c1, dmoment);
    vec_sub(torque, moment, com);
    vec_sub(dtorque, dmoment, dcom);
    mat_t_vec(drot, com, dtau);
    mat_t_vec(rotation, dcom, t1);
    vec_add(dtau, t1, dtau);
    mat_vec(m, st + W, spin_b);
    mat_vec(m, dw, dspin_b);
    vec_cross(dw, spin_b, dgyro);
    vec_cross(st + W, dspin_b, c1);
    vec_add(dgyro, c1, dgyro);
    vec_sub(dtau, dgyro, drhs);
    solve3(m, drhs, dder + W);
    /* outputs: origin p - R c, orientation, v - (R w) x (R c), R w, kinetic and potential energy */
    double qo[4], dqo[4], offset[3], doffset[3], omega[3], domega[3];
    if (n->flags[SOLVER_QUATERNION]) memcpy(qo, q, sizeof q), memcpy(dqo, dqn, sizeof dqn);
    else memcpy(qo, st + Q, sizeof qo), memcpy(dqo, dq, sizeof dqo);
    quat_to_matrix(qo, rotation);
    quat_to_matrix_tangent(qo, dqo, drot);
    mat_vec(rotation, VEC(centerOfMass), offset);
    mat_vec(drot, VEC(centerOfMass), doffset);
    mat_vec(rotation, st + W, omega);
    mat_vec(drot, st + W, domega);
    mat_vec(rotation, dw, c1);
    vec_add(domega, c1, domega);
    vec_sub(dp, doffset, dout);
    memcpy(dout + 3, dqo, sizeof dqo);
    vec_cross(domega, offset, c1);
    vec_cross(omega, doffset, t1);
    vec_add(c1, t1, c1);
    vec_sub(dv, c1, dout + 7);
    memcpy(dout + 10, domega, sizeof domega);
    dout[13] = V(mass) * vec_dot(st + VEL, dv) + vec_dot(dw, spin_b);
    dout[14] = -V(mass) * vec_dot(VEC(gravity), dp);
}

/* by known (the 13 states, then the 12 inputs): every state derivative's partial, then every output's on the states
 * (RigidBody.partial_pattern's order) */
int native_RigidBody_partials(NativeInstance *n, double *out) {
    enum { STATES = 13, LOADS = 12, OUTPUTS = 15 };
    double der[STATES][STATES + LOADS], outs[OUTPUTS][STATES];
    for (int j = 0; j < STATES + LOADS; ++j) {
        double ds[STATES] = {0}, dload[LOADS] = {0}, dder[STATES], dout[OUTPUTS];
        if (j < STATES) ds[j] = 1.0;
        else dload[j - STATES] = 1.0;
        tangent(n, ds, dload, dder, dout);
        for (int i = 0; i < STATES; ++i) der[i][j] = dder[i];
        if (j < STATES)
            for (int i = 0; i < OUTPUTS; ++i) outs[i][j] = dout[i];
    }
    size_t k = 0;
    for (int i = 0; i < STATES; ++i)
        for (int j = 0; j < STATES + LOADS; ++j) out[k++] = der[i][j];
    for (int i = 0; i < OUTPUTS; ++i)
        for (int j = 0; j < STATES; ++j) out[k++] = outs[i][j];
    return 0;
}
