/*
 * The monolithic master's communication points between its integrator's steps (mechfmu/master/step_blocks.py,
 * PointBlocks.ready), compiled: each point's time as the master's loop puts it, and the states there: the
 * integrator's own where it stopped at that time, else the dense output of its last Radau step,
 * y_old + Q (x, x^2, x^3) with x = (t - t_old) / h (mechfmu/master/integrators.py).
 *
 * Invariant: the same bits as the Python loop. Q (x, x^2, x^3) is numpy's np.dot(Q, v): the same BLAS function
 * numpy calls for it, handed over by the caller (cblas dgemv, row-major, no transpose; ddot for a single state), with
 * the same arguments; every other operation rounds once, as Python's (compiled with -ffp-contract=off). The caller
 * checks the invariant on probes before it takes this path (mechfmu/master/dense_points.py).
 */
#include <stdint.h>
#include <string.h>

#if defined(_WIN32)
#define EXPORT __declspec(dllexport)
#else
#define EXPORT __attribute__((visibility("default")))
#endif

/* cblas_dgemv and cblas_ddot of an ILP64 OpenBLAS (64-bit integers), as numpy's wheels bundle it */
typedef void (*Gemv)(int order, int trans, int64_t m, int64_t n, double alpha, const double *a, int64_t lda,
                     const double *x, int64_t incx, double beta, double *y, int64_t incy);
typedef double (*Dot)(int64_t n, const double *x, int64_t incx, const double *y, int64_t incy);

enum { ROW_MAJOR = 101, NO_TRANSPOSE = 111 };

/*
 * The dense output at t of a step from t_old of size h: ``size`` states into ``y``.
 */
static void dense_at(Gemv gemv, Dot dot, const double *q, const double *y_old, double t_old, double h, int64_t size,
                     double t, double *y) {
    double x = (t - t_old) / h;
    double square = x * x;
    double v[3] = {x, square, square * x};
    if (size == 1) {
        y[0] = dot(3, q, 1, v, 1);
    } else {
        gemv(ROW_MAJOR, NO_TRANSPOSE, size, 3, 1.0, q, 3, v, 1, 0.0, y, 1);
    }
    for (int64_t i = 0; i < size; i++) {
        y[i] += y_old[i];
    }
}

/*
 * Points n, n + 1, ... (at most ``most``) of the grid t0 + k h (the last, k = n_steps - 1, ending at t_stop): the
 * ones before ``pending`` (a state event), at or before the integrator's time ``solver_t``, and not after it where
 * it has ``finished``. Point k is at t + (t_next - t), t = t0 + k h, t_next = t0 + (k + 1) h (min with t_stop at the
 * last), as the master's loop puts it. Each point's ``size`` states go to its row of ``points``: ``solver_y`` where
 * solver_t is the point, else the dense output (q: size x 3, row-major; y_old; t_old; h). ``room``: the rows
 * ``points`` holds; none is written beyond them, and nothing without a state or a function (returns 0). Returns how
 * many. ``dense_at`` alone (most < 0): the dense output at ``pending`` into ``points``; returns 0.
 */
EXPORT int64_t dense_points(Gemv gemv, Dot dot, double t0, double step, double t_stop, int64_t n, int64_t most,
                            int64_t n_steps, double pending, double solver_t, int32_t finished,
                            const double *solver_y, const double *q, const double *y_old, double t_old, double h,
                            int64_t size, double *points, int64_t room) {
    if (!gemv || !dot || !q || !y_old || !points || size < 1 || room < 1) {
        return 0;
    }
    if (most > room) {
        most = room;
    }
    if (most < 0) {
        dense_at(gemv, dot, q, y_old, t_old, h, size, pending, points);
        return 0;
    }
    int64_t count = 0;
    for (; count < most; count++) {
        int64_t k = n + count;
        double t = t0 + (double)k * step;
        double next = t0 + (double)(k + 1) * step;
        if (k == n_steps - 1 && t_stop < next) {
            next = t_stop;
        }
        double end = t + (next - t);
        if (!(pending > end && !(finished && solver_t <= end) && solver_t >= end)) {
            break;
        }
        double *row = points + count * size;
        if (solver_t == end) {
            if (!solver_y) {
                break;
            }
            memcpy(row, solver_y, (size_t)size * sizeof(double));
        } else {
            dense_at(gemv, dot, q, y_old, t_old, h, size, end, row);
        }
    }
    return count;
}
