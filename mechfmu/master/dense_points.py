"""The monolithic master's communication points between its integrator's steps, compiled (``dense_points`` in
``mechfmu/master/dense_points.c``, part of the compiled exchange): each point's time and its states from the Radau
step's dense output, where Python's loop (``PointBlocks.ready``) spent 3 to 5 µs a point in numpy's per-call
overhead.

The dense output's product Q (x, x², x³) is the one numpy computes for ``np.dot(Q, v)``: the same function of the
BLAS numpy bundles (cblas dgemv; ddot for a single state), found in numpy's own library folder, called with the same
arguments. Before the path is taken, ``compiled`` checks it on probes against the Python dense output
(``mechfmu.master.integrators``), bit for bit, for 1 to 24 states; where the BLAS is not found (a numpy built
against another BLAS) or a probe differs, there is no compiled path and the loop stays Python's, so the points are
the same bits either way.
"""
from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

import numpy as np

from mechfmu.master import exchange

#: (cblas dgemv, cblas ddot) names of an ILP64 OpenBLAS as numpy's wheels bundle it (numpy 2, numpy 1)
NAMES = (("scipy_cblas_dgemv64_", "scipy_cblas_ddot64_"), ("cblas_dgemv64_", "cblas_ddot64_"))
#: the Radau dense output's (t_old [s], h [s], Q (states x 3), y_old)
Parts = tuple[float, float, np.ndarray, np.ndarray]
#: the probes: states, and points per probe
PROBE_SIZES, PROBE_POINTS = (*range(1, 17), 24), 5

_found: list[Any] = []  # the checked function as ``compiled`` gives it (None: none), once per process


def numpy_blas() -> tuple[int, int] | None:
    """The addresses of (cblas dgemv, cblas ddot) in the OpenBLAS numpy bundles, or None."""
    root = Path(np.__file__).resolve().parent
    for folder in (root.parent / "numpy.libs", root / ".dylibs", root / ".libs"):
        for path in sorted(folder.glob("*openblas*")) if folder.is_dir() else ():
            try:
                library = ctypes.CDLL(str(path))
            except OSError:
                continue
            for gemv, dot in NAMES:
                if hasattr(library, gemv) and hasattr(library, dot):
                    return (ctypes.cast(getattr(library, gemv), ctypes.c_void_p).value or 0,
                            ctypes.cast(getattr(library, dot), ctypes.c_void_p).value or 0)
    return None


class DensePoints:
    """``dense_points`` of the compiled exchange, typed, with numpy's BLAS."""

    def __init__(self, function: Any, blas: tuple[int, int]) -> None:
        self.function, self.blas = function, blas

    def fill(self, t0: float, h: float, t_stop: float, n: int, most: int, n_steps: int, pending: float,
             solver_t: float, finished: bool, solver_y: np.ndarray, parts: Parts, points: np.ndarray) -> int:
        """Points n, n + 1, ... (at most ``most``) into the rows of ``points``, as ``PointBlocks.ready`` takes
        them (``mechfmu/master/dense_points.c`` says which): how many."""
        t_old, step, q, y_old = parts
        return int(self.function(*self.blas, t0, h, t_stop, n, most, n_steps, pending, solver_t, int(finished),
                                 solver_y.ctypes.data, q.ctypes.data, y_old.ctypes.data, t_old, step, len(y_old),
                                 points.ctypes.data, len(points) if points.ndim == 2 else 1))

    def at(self, parts: Parts, t: float) -> np.ndarray:
        """The dense output at ``t`` alone."""
        y = np.empty(len(parts[3]))
        self.fill(0.0, 1.0, 0.0, 0, -1, 0, t, 0.0, False, y, parts, y)
        return y


def usable(parts: Parts) -> bool:
    """Whether the dense output's arrays are what ``dense_points`` reads: Q C-contiguous float64, size x 3, and
    y_old of the size."""
    _, _, q, y_old = parts
    return (q.dtype == np.float64 and y_old.dtype == np.float64 and q.flags.c_contiguous and
            y_old.flags.c_contiguous and q.ndim == 2 and q.shape[1] == 3 and y_old.shape == (q.shape[0],))


def compiled() -> DensePoints | None:
    """The compiled points, checked on probes against the Python dense output (the module's docstring), or None."""
    if not _found:
        _found.append(_checked())
    return _found[0]


def _checked() -> DensePoints | None:
    from mechfmu.master.integrators import dense_at
    library, blas = exchange.library(), numpy_blas()
    if library is None or blas is None or not hasattr(library, "dense_points"):
        return None
    function = library.dense_points
    double, int64, pointer = ctypes.c_double, ctypes.c_int64, ctypes.c_void_p
    function.restype = int64
    function.argtypes = [pointer, pointer, double, double, double, int64, int64, int64, double, double,
                         ctypes.c_int32, pointer, pointer, pointer, double, double, int64, pointer, int64]
    points = DensePoints(function, blas)
    for size in PROBE_SIZES:  # states of mixed signs and magnitudes (1e-6 to 1e5), points across the step
        k = np.arange(4 * size + PROBE_POINTS, dtype=float)
        values = np.sin(1.7 * k + size) * 10.0 ** ((7 * k + size) % 12 - 6)
        parts = (0.37 * size, 1e-3 * (1.1 + np.sin(size)), values[:3 * size].reshape(size, 3),
                 values[3 * size:4 * size])
        for fraction in np.abs(np.sin(k[4 * size:])):
            t = float(parts[0] + parts[1] * fraction)
            if points.at(parts, t).tobytes() != dense_at(*parts)(t).tobytes():
                return None
    return points
