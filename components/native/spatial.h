/* 3D vectors, rotation matrices and quaternions (components/spatial.py): the same operations in the same order.
 * Vectors are double[3], matrices double[3][3] of rows, quaternions (w, x, y, z). */
#ifndef MECHFMU_NATIVE_SPATIAL_H
#define MECHFMU_NATIVE_SPATIAL_H

#include <math.h>

typedef double Vec[3];
typedef double Mat[3][3];

static inline void vec_add(const double *a, const double *b, double *out) {
    const double x = a[0] + b[0], y = a[1] + b[1], z = a[2] + b[2];
    out[0] = x, out[1] = y, out[2] = z;
}

static inline void vec_sub(const double *a, const double *b, double *out) {
    const double x = a[0] - b[0], y = a[1] - b[1], z = a[2] - b[2];
    out[0] = x, out[1] = y, out[2] = z;
}

static inline void vec_scale(double s, const double *a, double *out) {
    const double x = s * a[0], y = s * a[1], z = s * a[2];
    out[0] = x, out[1] = y, out[2] = z;
}

static inline double vec_dot(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static inline void vec_cross(const double *a, const double *b, double *out) {
    const double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
    out[0] = x, out[1] = y, out[2] = z;
}

static inline void mat_vec(const double m[3][3], const double *v, double *out) {
    const double x = vec_dot(m[0], v), y = vec_dot(m[1], v), z = vec_dot(m[2], v);
    out[0] = x, out[1] = y, out[2] = z;
}

/* m^T v */
static inline void mat_t_vec(const double m[3][3], const double *v, double *out) {
    const double x = m[0][0] * v[0] + m[1][0] * v[1] + m[2][0] * v[2];
    const double y = m[0][1] * v[0] + m[1][1] * v[1] + m[2][1] * v[2];
    const double z = m[0][2] * v[0] + m[1][2] * v[1] + m[2][2] * v[2];
    out[0] = x, out[1] = y, out[2] = z;
}

/* a*b; each entry is Python's sum(...) from the integer 0 */
static inline void mat_mul(const double a[3][3], const double b[3][3], double out[3][3]) {
    Mat r;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) r[i][j] = 0.0 + a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) out[i][j] = r[i][j];
}

static inline void mat_column(const double m[3][3], int j, double *out) { out[0] = m[0][j], out[1] = m[1][j], out[2] = m[2][j]; }

static inline void quat_to_matrix(const double *q, double m[3][3]) {
    const double w = q[0], x = q[1], y = q[2], z = q[3];
    m[0][0] = 1 - 2 * (y * y + z * z), m[0][1] = 2 * (x * y - w * z), m[0][2] = 2 * (x * z + w * y);
    m[1][0] = 2 * (x * y + w * z), m[1][1] = 1 - 2 * (x * x + z * z), m[1][2] = 2 * (y * z - w * x);
    m[2][0] = 2 * (x * z - w * y), m[2][1] = 2 * (y * z + w * x), m[2][2] = 1 - 2 * (x * x + y * y);
}

static inline void quat_normalize(const double *q, double *out) {
    const double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    out[0] = q[0] / n, out[1] = q[1] / n, out[2] = q[2] / n, out[3] = q[3] / n;
}

/* body-fixed X-Y-Z rotation: Rx(ax)*Ry(ay)*Rz(az) */
static inline void body_xyz_rotation(double ax, double ay, double az, double out[3][3]) {
    const double cx = cos(ax), sx = sin(ax), cy = cos(ay), sy = sin(ay), cz = cos(az), sz = sin(az);
    const Mat rx = {{1.0, 0.0, 0.0}, {0.0, cx, -sx}, {0.0, sx, cx}};
    const Mat ry = {{cy, 0.0, sy}, {0.0, 1.0, 0.0}, {-sy, 0.0, cy}};
    const Mat rz = {{cz, -sz, 0.0}, {sz, cz, 0.0}, {0.0, 0.0, 1.0}};
    Mat rxy;
    mat_mul(rx, ry, rxy);
    mat_mul(rxy, rz, out);
}

/* dR: the derivative of quat_to_matrix at q along dq */
static inline void quat_to_matrix_tangent(const double *q, const double *dq, double m[3][3]) {
    const double w = q[0], x = q[1], y = q[2], z = q[3], dw = dq[0], dx = dq[1], dy = dq[2], dz = dq[3];
    m[0][0] = -4 * (y * dy + z * dz), m[0][1] = 2 * (dx * y + x * dy - dw * z - w * dz);
    m[0][2] = 2 * (dx * z + x * dz + dw * y + w * dy), m[1][0] = 2 * (dx * y + x * dy + dw * z + w * dz);
    m[1][1] = -4 * (x * dx + z * dz), m[1][2] = 2 * (dy * z + y * dz - dw * x - w * dx);
    m[2][0] = 2 * (dx * z + x * dz - dw * y - w * dy), m[2][1] = 2 * (dy * z + y * dz + dw * x + w * dx);
    m[2][2] = -4 * (x * dx + y * dy);
}

/* the derivative of quat_normalize at q along dq: (dq - q^ (q^.dq)) / |q| */
static inline void normalize_tangent(const double *q, const double *dq, double *out) {
    const double norm = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    double unit[4], along = 0.0;
    for (int i = 0; i < 4; ++i) unit[i] = q[i] / norm, along += unit[i] * dq[i];
    for (int i = 0; i < 4; ++i) out[i] = (dq[i] - unit[i] * along) / norm;
}

#endif
