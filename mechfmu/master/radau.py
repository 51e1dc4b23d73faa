"""The Radau IIA method of order 5 (implicit Runge-Kutta, three stages, L-stable), scipy's
``scipy.integrate.Radau`` (scipy 1.17, BSD-3-Clause, Copyright (c) 2001-2002 Enthought, Inc. and 2003-2024 SciPy
Developers), its operations in its order, so the same bits, for a dense Jacobian; its LU factorizations and
solves are LAPACK's through ``mechfmu.master.scipy_kernels`` (scipy's own kernels), so a run does not import
``scipy.integrate`` (0.35 s).

The method: E. Hairer, G. Wanner, "Solving Ordinary Differential Equations II: Stiff and Differential-Algebraic
Problems", Sec. IV.8; the error estimator and step-size control of Hairer and Wanner's RADAU5. The interface is
scipy's ``OdeSolver``: ``step()``, ``t``, ``y``, ``t_old``, ``status`` ("running", "finished", "failed"),
``dense_output()``, counters ``nfev``, ``njev``, ``nlu``.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from mechfmu.master.ode_steps import norm, num_jac, select_initial_step
from mechfmu.master.scipy_kernels import lu_factor, lu_solve

EPS = np.finfo(float).eps
S6 = 6 ** 0.5
C = np.array([(4 - S6) / 10, (4 + S6) / 10, 1])  # the stages' nodes
E = np.array([-13 - 7 * S6, -13 + 7 * S6, -1]) / 3  # the error estimator's weights
MU_REAL = 3 + 3 ** (2 / 3) - 3 ** (1 / 3)  # the eigenvalues of the inverse of the method's matrix
MU_COMPLEX = 3 + 0.5 * (3 ** (1 / 3) - 3 ** (2 / 3)) - 0.5j * (3 ** (5 / 6) + 3 ** (7 / 6))
T = np.array([[0.09443876248897524, -0.1412552950209542, 0.03002919410514742],
              [0.2502131229653333, 0.20412935229379994, -0.3829421127572619],
              [1, 1, 0]])  # the method's matrix to its block-diagonal form
TI = np.array([[4.178718591551904, 0.32768282076106237, 0.5233764454994495],
               [-4.178718591551904, -0.32768282076106237, 0.47662355450055044],
               [0.5028726349457868, -2.571926949855605, 0.5960392048282249]])
TI_REAL = TI[0]
TI_COMPLEX = TI[1] + 1j * TI[2]
P = np.array([[13 / 3 + 7 * S6 / 3, -23 / 3 - 22 * S6 / 3, 10 / 3 + 5 * S6],
              [13 / 3 - 7 * S6 / 3, -23 / 3 + 22 * S6 / 3, 10 / 3 - 5 * S6],
              [1 / 3, -8 / 3, 10 / 3]])  # the collocation polynomial's coefficients (dense output)
NEWTON_MAXITER = 6
MIN_FACTOR = 0.2
MAX_FACTOR = 10
TOO_SMALL_STEP = "Required step size is less than spacing between numbers."


def solve_collocation_system(fun, t, y, h, Z0, scale, tol, LU_real, LU_complex):
    """Newton's iterations on the collocation system, in the transformed variables W = TI Z: (converged,
    iterations, Z of shape (3, n), the convergence rate or None)."""
    n = y.shape[0]
    M_real = MU_REAL / h
    M_complex = MU_COMPLEX / h
    W = TI.dot(Z0)
    Z = Z0
    F = np.empty((3, n))
    ch = h * C
    dW_norm_old = None
    dW = np.empty_like(W)
    converged = False
    rate = None
    for k in range(NEWTON_MAXITER):
        for i in range(3):
            F[i] = fun(t + ch[i], y + Z[i])
        if not np.all(np.isfinite(F)):
            break
        f_real = F.T.dot(TI_REAL) - M_real * W[0]
        f_complex = F.T.dot(TI_COMPLEX) - M_complex * (W[1] + 1j * W[2])
        dW_real = lu_solve(LU_real, f_real)
        dW_complex = lu_solve(LU_complex, f_complex)
        dW[0] = dW_real
        dW[1] = dW_complex.real
        dW[2] = dW_complex.imag
        dW_norm = norm(dW / scale)
        if dW_norm_old is not None:
            rate = dW_norm / dW_norm_old
        if rate is not None and (rate >= 1 or rate ** (NEWTON_MAXITER - k) / (1 - rate) * dW_norm > tol):
            break
        W += dW
        Z = T.dot(W)
        if dW_norm == 0 or (rate is not None and rate / (1 - rate) * dW_norm < tol):
            converged = True
            break
        dW_norm_old = dW_norm
    return converged, k + 1, Z, rate


def predict_factor(h_abs, h_abs_old, error_norm, error_norm_old):
    """The step factor of Gustafsson's predictive controller (Hairer and Wanner, IV.8, (8.25))."""
    if error_norm_old is None or h_abs_old is None or error_norm == 0:
        multiplier = 1
    else:
        multiplier = h_abs / h_abs_old * (error_norm_old / error_norm) ** 0.25
    with np.errstate(divide="ignore"):
        factor = min(1, multiplier) * error_norm ** (-0.25)
    return factor


class Radau:
    """scipy's ``Radau(fun, t0, y0, t_bound, rtol=, atol=, jac=)`` for a dense Jacobian: ``fun(t, y)`` the
    derivatives, shape (n,); ``jac(t, y)`` their Jacobian, shape (n, n), or None for finite differences (scipy's
    ``num_jac``); ``rtol``, ``atol`` the local error's tolerances (relative, absolute in the states' units); it steps
    from ``t0`` up to ``t_bound``, never past it. ValueError for a y0 or a Jacobian that is not finite or not of
    the shape."""

    def __init__(self, fun: Callable[[float, np.ndarray], Any], t0: float, y0: np.ndarray, t_bound: float,
                 rtol: float = 1e-3, atol: float | np.ndarray = 1e-6,
                 jac: Callable[[float, np.ndarray], Any] | None = None):
        y0 = np.asarray(y0).astype(float, copy=False)
        if y0.ndim != 1:
            raise ValueError("`y0` must be 1-dimensional.")
        if not np.isfinite(y0).all():
            raise ValueError("All components of the initial state `y0` must be finite.")
        self.t_old: float | None = None
        self.t, self.y, self.t_bound = t0, y0, t_bound
        self._fun = lambda t, y: np.asarray(fun(t, y), dtype=float)
        self.direction = np.sign(t_bound - t0) if t_bound != t0 else 1
        self.n = self.y.size
        self.status = "running"
        self.nfev = self.njev = self.nlu = 0
        self.y_old: Any = None
        self.max_step = np.inf
        if np.any(rtol < 100 * EPS):
            warnings.warn(f"At least one element of `rtol` is too small. Setting `rtol = np.maximum(rtol, "
                          f"{100 * EPS})`.", stacklevel=2)
            rtol = np.maximum(rtol, 100 * EPS)
        atol = np.asarray(atol)
        if atol.ndim > 0 and atol.shape != (self.n,):
            raise ValueError("`atol` has wrong shape.")
        if np.any(atol < 0):
            raise ValueError("`atol` must be positive.")
        self.rtol, self.atol = rtol, atol
        self.f = self.fun(self.t, self.y)
        self.h_abs = select_initial_step(self.fun, self.t, self.y, t_bound, self.max_step, self.f, self.direction, 3,
                                         self.rtol, self.atol)
        self.h_abs_old: Any = None
        self.error_norm_old: Any = None
        self.newton_tol = max(10 * EPS / rtol, min(0.03, rtol ** 0.5))
        self.sol: RadauDenseOutput | None = None
        self.jac_factor = None
        self.jac, self.J = self._validate_jac(jac)
        self.I = np.identity(self.n)
        self.current_jac = True
        self.LU_real: Any = None
        self.LU_complex: Any = None
        self.Z: Any = None

    def fun(self, t: float, y: np.ndarray) -> np.ndarray:
        self.nfev += 1
        return self._fun(t, y)

    def _fun_vectorized(self, t: float, y: np.ndarray) -> np.ndarray:
        f = np.empty_like(y)
        for i, yi in enumerate(y.T):
            f[:, i] = self._fun(t, yi)
        return f

    def lu(self, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.nlu += 1
        return lu_factor(a)

    def _validate_jac(self, jac):
        t0, y0 = self.t, self.y
        if jac is None:
            def jac_wrapped(t, y, f=None):
                self.njev += 1
                J, self.jac_factor = num_jac(self._fun_vectorized, t, y, f, self.atol, self.jac_factor)
                return J
            J = jac_wrapped(t0, y0, self.f)
        else:
            J = np.asarray(jac(t0, y0), dtype=float)
            self.njev = 1

            def jac_wrapped(t, y, f=None):
                self.njev += 1
                return np.asarray(jac(t, y), dtype=float)
            if J.shape != (self.n, self.n):
                raise ValueError(f"`jac` is expected to have shape {(self.n, self.n)}, but actually has {J.shape}.")
        return jac_wrapped, J

    def step(self) -> None:
        """One step (or the last to ``t_bound``); ``status`` says how it went. RuntimeError on a finished or failed
        integrator."""
        if self.status != "running":
            raise RuntimeError("Attempt to step on a failed or finished solver.")
        if self.n == 0 or self.t == self.t_bound:
            self.t_old = self.t
            self.t = self.t_bound
            self.status = "finished"
            return
        t = self.t
        if not self._step_impl():
            self.status = "failed"
            return
        self.t_old = t
        if self.direction * (self.t - self.t_bound) >= 0:
            self.status = "finished"

    def _step_impl(self) -> bool:
        t, y, f = self.t, self.y, self.f
        max_step, atol, rtol = self.max_step, self.atol, self.rtol
        min_step = 10 * np.abs(np.nextafter(t, self.direction * np.inf) - t)
        if self.h_abs > max_step:
            h_abs, h_abs_old, error_norm_old = max_step, None, None
        elif self.h_abs < min_step:
            h_abs, h_abs_old, error_norm_old = min_step, None, None
        else:
            h_abs, h_abs_old, error_norm_old = self.h_abs, self.h_abs_old, self.error_norm_old
        J, LU_real, LU_complex = self.J, self.LU_real, self.LU_complex
        current_jac, jac = self.current_jac, self.jac
        rejected = step_accepted = False
        while not step_accepted:
            if h_abs < min_step:
                return False
            h = h_abs * self.direction
            t_new = t + h
            if self.direction * (t_new - self.t_bound) > 0:
                t_new = self.t_bound
            h = t_new - t
            h_abs = np.abs(h)
            Z0 = np.zeros((3, y.shape[0])) if self.sol is None else self.sol(t + h * C).T - y
            scale = atol + np.abs(y) * rtol
            converged = False
            while not converged:
                if LU_real is None or LU_complex is None:
                    LU_real = self.lu(MU_REAL / h * self.I - J)
                    LU_complex = self.lu(MU_COMPLEX / h * self.I - J)
                converged, n_iter, Z, rate = solve_collocation_system(self.fun, t, y, h, Z0, scale, self.newton_tol,
                                                                      LU_real, LU_complex)
                if not converged:
                    if current_jac:
                        break
                    J = self.jac(t, y, f)
                    current_jac = True
                    LU_real = LU_complex = None
            if not converged:
                h_abs *= 0.5
                LU_real = LU_complex = None
                continue
            y_new = y + Z[-1]
            ZE = Z.T.dot(E) / h
            error = lu_solve(LU_real, f + ZE)
            scale = atol + np.maximum(np.abs(y), np.abs(y_new)) * rtol
            error_norm = norm(error / scale)
            safety = 0.9 * (2 * NEWTON_MAXITER + 1) / (2 * NEWTON_MAXITER + n_iter)
            if rejected and error_norm > 1:
                error = lu_solve(LU_real, self.fun(t, y + error) + ZE)
                error_norm = norm(error / scale)
            if error_norm > 1:
                factor = predict_factor(h_abs, h_abs_old, error_norm, error_norm_old)
                h_abs *= max(MIN_FACTOR, safety * factor)
                LU_real = LU_complex = None
                rejected = True
            else:
                step_accepted = True
        recompute_jac = jac is not None and n_iter > 2 and rate > 1e-3
        factor = predict_factor(h_abs, h_abs_old, error_norm, error_norm_old)
        factor = min(MAX_FACTOR, safety * factor)
        if not recompute_jac and factor < 1.2:
            factor = 1
        else:
            LU_real = LU_complex = None
        f_new = self.fun(t_new, y_new)
        if recompute_jac:
            J = jac(t_new, y_new, f_new)
            current_jac = True
        elif jac is not None:
            current_jac = False
        self.h_abs_old = self.h_abs
        self.error_norm_old = error_norm
        self.h_abs = h_abs * factor
        self.y_old = y
        self.t, self.y, self.f = t_new, y_new, f_new
        self.Z = Z
        self.LU_real, self.LU_complex = LU_real, LU_complex
        self.current_jac = current_jac
        self.J = J
        self.t_old = t
        self.sol = RadauDenseOutput(self.t_old, self.t, self.y_old, np.dot(self.Z.T, P))
        return True

    def dense_output(self) -> Any:
        """The last step's dense output, a callable of t (a float or shape (m,)) giving shape (n,) or (n, m)."""
        if self.t_old is None:
            raise RuntimeError("Dense output is available after a successful step was made.")
        if self.n == 0 or self.t == self.t_old:
            return ConstantDenseOutput(self.y)
        return self.sol


class RadauDenseOutput:
    """The collocation polynomial of a step from ``t_old`` to ``t``: y_old + Q (x, x^2, x^3), x = (t - t_old) / h."""

    def __init__(self, t_old: float, t: float, y_old: np.ndarray, Q: np.ndarray):
        self.t_old, self.t = t_old, t
        self.h = t - t_old
        self.Q = Q
        self.order = Q.shape[1] - 1
        self.y_old = y_old

    def __call__(self, t: Any) -> np.ndarray:
        t = np.asarray(t)
        if t.ndim > 1:
            raise ValueError("`t` must be a float or a 1-D array.")
        x = (t - self.t_old) / self.h
        if t.ndim == 0:
            p = np.cumprod(np.tile(x, self.order + 1))
        elif self.order == 2:  # the cumulative product's rows, x, x·x, (x·x)·x, without its array handling
            p = np.empty((3, x.shape[0]))
            p[0] = x
            np.multiply(x, x, out=p[1])
            np.multiply(p[1], x, out=p[2])
        else:
            p = np.cumprod(np.tile(x, (self.order + 1, 1)), axis=0)
        y = np.dot(self.Q, p)
        if y.ndim == 2:
            y += self.y_old[:, None]
        else:
            y += self.y_old
        return y


class ConstantDenseOutput:
    """The dense output of a step of no length (or of no states): the value."""

    def __init__(self, value: np.ndarray):
        self.value = value

    def __call__(self, t: Any) -> np.ndarray:
        t = np.asarray(t)
        if t.ndim == 0:
            return self.value
        ret = np.empty((self.value.shape[0], t.shape[0]))
        ret[:] = self.value[:, None]
        return ret
