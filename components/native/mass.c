/* Mass and Inertia (components/mass.py declares them and states the law): the exact step, and linear-implicit
 * coupling's step through the phi-functions of the 2x2 system matrix. */
#include <math.h>
#include <string.h>

#include "model.h"
#include "native_variables.h"

#define PORTS 4

/* where a body's law finds its values: the inertia, the length (-1: none), and per port (flange_a's, then
 * flange_b's) its load, tangents and rate */
typedef struct {
    int inertia, length, load[2 * PORTS], c[2 * PORTS], d[2 * PORTS], rate[2 * PORTS];
} Layout;

static const Layout MASS = {
    Mass__m, Mass__L,
    {Mass__flange_a_f, Mass__flange_a_2__f, Mass__flange_a_3__f, Mass__flange_a_4__f,
     Mass__flange_b_f, Mass__flange_b_2__f, Mass__flange_b_3__f, Mass__flange_b_4__f},
    {Mass__flange_a_c, Mass__flange_a_2__c, Mass__flange_a_3__c, Mass__flange_a_4__c,
     Mass__flange_b_c, Mass__flange_b_2__c, Mass__flange_b_3__c, Mass__flange_b_4__c},
    {Mass__flange_a_d, Mass__flange_a_2__d, Mass__flange_a_3__d, Mass__flange_a_4__d,
     Mass__flange_b_d, Mass__flange_b_2__d, Mass__flange_b_3__d, Mass__flange_b_4__d},
    {Mass__flange_a_f_rate, Mass__flange_a_2__f_rate, Mass__flange_a_3__f_rate, Mass__flange_a_4__f_rate,
     Mass__flange_b_f_rate, Mass__flange_b_2__f_rate, Mass__flange_b_3__f_rate, Mass__flange_b_4__f_rate},
};

static const Layout INERTIA = {
    Inertia__J, -1,
    {Inertia__flange_a_tau, Inertia__flange_a_2__tau, Inertia__flange_a_3__tau, Inertia__flange_a_4__tau,
     Inertia__flange_b_tau, Inertia__flange_b_2__tau, Inertia__flange_b_3__tau, Inertia__flange_b_4__tau},
    {Inertia__flange_a_c, Inertia__flange_a_2__c, Inertia__flange_a_3__c, Inertia__flange_a_4__c,
     Inertia__flange_b_c, Inertia__flange_b_2__c, Inertia__flange_b_3__c, Inertia__flange_b_4__c},
    {Inertia__flange_a_d, Inertia__flange_a_2__d, Inertia__flange_a_3__d, Inertia__flange_a_4__d,
     Inertia__flange_b_d, Inertia__flange_b_2__d, Inertia__flange_b_3__d, Inertia__flange_b_4__d},
    {Inertia__flange_a_tau_rate, Inertia__flange_a_2__tau_rate, Inertia__flange_a_3__tau_rate,
     Inertia__flange_a_4__tau_rate, Inertia__flange_b_tau_rate, Inertia__flange_b_2__tau_rate,
     Inertia__flange_b_3__tau_rate, Inertia__flange_b_4__tau_rate},
};

/* The law below is inlined into each class's functions (Mass's, Inertia's), where its layout is a constant: a
 * value is read at a fixed offset, not through the layout's tables. What a step seldom needs (RARE) stays out. */
#if defined(__GNUC__) || defined(__clang__)
#define LAW static inline __attribute__((always_inline))
#define RARE static __attribute__((noinline))
#else
#define LAW static inline
#define RARE static
#endif

/* the drive follows the two flange loads in both classes */
LAW int drive(const Layout *l) { return l->load[PORTS] + 1; }

/* values[names[k]] is 0 for every extra port k (flange_a[2..4], flange_b[2..4]) */
LAW int extra_ports_zero(const double *vals, const int *names) {
    return vals[names[1]] == 0.0 && vals[names[2]] == 0.0 && vals[names[3]] == 0.0 && vals[names[PORTS + 1]] == 0.0
           && vals[names[PORTS + 2]] == 0.0 && vals[names[PORTS + 3]] == 0.0;
}

/* every extra port (flange_x[k]) is 0: the law is the two-flange one (the tangents first: a port in use by a
 * linear contact holds them, so the answer comes at the first of them) */
LAW int two_flanges(const NativeInstance *n, const Layout *l) {
    const double *vals = n->values;
    return extra_ports_zero(vals, l->c) && extra_ports_zero(vals, l->d) && extra_ports_zero(vals, l->rate)
           && extra_ports_zero(vals, l->load);
}

/* `two`: two_flanges(n, l) */
LAW double acceleration(const NativeInstance *n, const Layout *l, int two) {
    const double *vals = n->values;
    const int *load = l->load;
    double force = vals[drive(l)];
    if (two) {
        force -= vals[load[0]];
        force -= vals[load[PORTS]];
    } else { /* each subtracted in turn, from flange_a's on */
        force = force - vals[load[0]] - vals[load[1]] - vals[load[2]] - vals[load[3]] - vals[load[4]] - vals[load[5]]
                - vals[load[6]] - vals[load[7]];
    }
    return force / vals[l->inertia];
}

/* values[names[0]] + values[names[1]] + ... in that order */
LAW double total(const double *vals, const int *names, int two) {
    if (two) return vals[names[0]] + vals[names[PORTS]];
    return vals[names[0]] + vals[names[1]] + vals[names[2]] + vals[names[3]] + vals[names[4]] + vals[names[5]]
           + vals[names[6]] + vals[names[7]];
}

typedef double Mat2[4];

static void mul(const double *x, const double *y, double *out) {
    const double r0 = x[0] * y[0] + x[1] * y[2], r1 = x[0] * y[1] + x[1] * y[3], r2 = x[2] * y[0] + x[3] * y[2],
                 r3 = x[2] * y[1] + x[3] * y[3];
    out[0] = r0, out[1] = r1, out[2] = r2, out[3] = r3;
}

/* (phi1(X), phi2(X)) of a 2x2 matrix by scaling and squaring of Taylor series (error < 1e-18 relative at norm 1/2) */
static void exp_phi(const double *matrix, double *phi1, double *phi2) {
    const double row0 = fabs(matrix[0]) + fabs(matrix[1]), row1 = fabs(matrix[2]) + fabs(matrix[3]);
    const double norm = row1 > row0 ? row1 : row0;
    const int squarings = norm > 0.5 ? (int)ceil(log2(norm / 0.5)) : 0;
    const double scale = pow(0.5, squarings);
    Mat2 y, e = {1.0, 0.0, 0.0, 1.0}, phi = {1.0, 0.0, 0.0, 1.0}, psi = {0.5, 0.0, 0.0, 0.5},
            power = {1.0, 0.0, 0.0, 1.0};
    for (int i = 0; i < 4; ++i) y[i] = matrix[i] * scale;
    double factorial = 1.0;
    for (int j = 1; j < 18; ++j) {
        mul(power, y, power);
        factorial *= j;
        for (int i = 0; i < 4; ++i) {
            e[i] += power[i] / factorial;
            phi[i] += power[i] / (factorial * (j + 1));
            psi[i] += power[i] / (factorial * (j + 1) * (j + 2));
        }
    }
    for (int k = 0; k < squarings; ++k) {
        Mat2 square, half;
        mul(phi, phi, square);
        for (int i = 0; i < 4; ++i) psi[i] = 0.5 * psi[i] + 0.25 * square[i];
        half[0] = 0.5 * (e[0] + 1.0), half[1] = 0.5 * e[1], half[2] = 0.5 * e[2], half[3] = 0.5 * (e[3] + 1.0);
        mul(phi, half, phi);
        mul(e, e, e);
    }
    memcpy(phi1, phi, sizeof phi);
    memcpy(phi2, psi, sizeof psi);
}

/* the memo of linear_implicit_step for (stiffness, damping, m, h): the matrices h*phi1 and h^2*phi2 */
RARE void remember_phi(NativeInstance *n, double m, double stiffness, double damping, double h) {
    double *key = n->memo, *p = n->memo + 4, *q = n->memo + 8;
    const double matrix[4] = {0.0, h, -stiffness / m * h, -damping / m * h};
    Mat2 phi, phi2;
    exp_phi(matrix, phi, phi2);
    for (int i = 0; i < 4; ++i) p[i] = h * phi[i], q[i] = h * h * phi2[i];
    key[0] = stiffness, key[1] = damping, key[2] = m, key[3] = h;
    n->memo_valid = 1;
}

/* exact s, v after h of m*a = force - stiffness*(s - s0) - damping*(v - v0) - rate*tau; the matrices
 * h*phi1 and h^2*phi2 depend on (stiffness, damping, m, h) only and are kept in the instance's memo */
LAW void linear_implicit_step(NativeInstance *n, double *s, double *v, double m, double force, double stiffness,
                              double damping, double rate, double h) {
    const double *key = n->memo, *p = n->memo + 4, *q = n->memo + 8;
    if (!(n->memo_valid && key[0] == stiffness && key[1] == damping && key[2] == m && key[3] == h))
        remember_phi(n, m, stiffness, damping, h);
    const double b1 = force / m, r1 = -rate / m, s0 = *s, v0 = *v;
    *s = s0 + p[0] * v0 + p[1] * b1 + q[1] * r1;
    *v = v0 + p[2] * v0 + p[3] * b1 + q[3] * r1;
}

/* every output, from the state and the acceleration `a` (acceleration(n, l, two_flanges(n, l))) */
LAW void write_outputs(const NativeInstance *n, const Layout *l, double a, double *out) {
    const double s = n->state[0], v = n->state[1], half = 0.5 * (l->length >= 0 ? n->values[l->length] : 0.0);
    out[0] = s, out[1] = v, out[2] = a, out[3] = s - half, out[4] = v, out[5] = s + half, out[6] = v;
    out[7] = a, out[8] = a;
}

/* the step, then the outputs after it (model.h: the acceleration, which the inputs held give, is computed once) */
LAW int advance(NativeInstance *n, const Layout *l, double h) {
    const double *vals = n->values;
    const int two = two_flanges(n, l);
    const double stiffness = total(vals, l->c, two), damping = total(vals, l->d, two), rate = total(vals, l->rate, two);
    const double a = acceleration(n, l, two);
    double *s = &n->state[0], *v = &n->state[1];
    if (stiffness == 0.0 && damping == 0.0 && rate == 0.0) {
        const double s0 = *s, v0 = *v;
        *s = s0 + v0 * h + 0.5 * a * h * h;
        *v = v0 + a * h;
    } else {
        const double inertia = vals[l->inertia];
        linear_implicit_step(n, s, v, inertia, a * inertia, stiffness, damping, rate, h);
    }
    write_outputs(n, l, a, n->outputs);
    n->cached = 1;
    return 0;
}

LAW int outputs(NativeInstance *n, const Layout *l, double *out) {
    write_outputs(n, l, acceleration(n, l, two_flanges(n, l)), out);
    return 0;
}

LAW int derivatives(NativeInstance *n, const Layout *l, double *out) {
    out[0] = n->state[1];
    out[1] = acceleration(n, l, two_flanges(n, l));
    return 0;
}

int native_Mass_outputs(NativeInstance *n, double *out) { return outputs(n, &MASS, out); }
int native_Mass_advance(NativeInstance *n, double t, double h) { (void)t; return advance(n, &MASS, h); }
int native_Mass_derivatives(NativeInstance *n, double *out) { return derivatives(n, &MASS, out); }
int native_Inertia_outputs(NativeInstance *n, double *out) { return outputs(n, &INERTIA, out); }
int native_Inertia_advance(NativeInstance *n, double t, double h) { (void)t; return advance(n, &INERTIA, h); }
int native_Inertia_derivatives(NativeInstance *n, double *out) { return derivatives(n, &INERTIA, out); }

/* the analytic partials (Mass.partial_pattern's order): 1; (1/m, -1/m per load) for der(v), a, flange_a.a, flange_b.a; 1 x 6 */
static int partials(NativeInstance *n, const Layout *l, double *out) {
    const double inverse = 1.0 / n->values[l->inertia];
    size_t k = 0;
    out[k++] = 1.0;
    for (int u = 0; u < 4; ++u) {
        out[k++] = inverse;
        for (int p = 0; p < 2 * PORTS; ++p) out[k++] = -inverse;
    }
    for (int i = 0; i < 6; ++i) out[k++] = 1.0;
    return 0;
}

int native_Mass_partials(NativeInstance *n, double *out) { return partials(n, &MASS, out); }
int native_Inertia_partials(NativeInstance *n, double *out) { return partials(n, &INERTIA, out); }
