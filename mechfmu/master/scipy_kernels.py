"""scipy's compiled kernels the monolithic master needs, without importing scipy's packages: LAPACK's LU
factorization and solve (``?getrf``, ``?getrs``: what ``scipy.linalg.lu_factor`` and ``lu_solve`` call) and Brent's
root finder (what ``scipy.optimize.brentq`` calls).

``import scipy.integrate`` takes 0.35 s on the project's machine (it imports ``scipy.special``, ``scipy.optimize``
and ``scipy.linalg``), about half of a short run as a process; these extension modules load in 10 ms. They are
loaded from scipy's installed files by their own names, not registered in ``sys.modules``, so a later ``import
scipy.linalg`` loads its own as always. Where a file is not found (another layout of scipy), the kernels come
from scipy's public modules, which import as usual. Either way the arithmetic is scipy's, the same bits.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

#: scipy.optimize.brentq's smallest relative tolerance (4 ulps)
BRENTQ_RTOL = 4 * float(np.finfo(float).eps)


class SingularMatrixWarning(RuntimeWarning):
    """A zero pivot in an LU factorization (scipy's ``LinAlgWarning``, same text)."""


def _extension(name: str) -> ModuleType | None:
    """scipy's extension module ``name`` (``linalg._flapack``) loaded from its file, or None if there is none."""
    spec = importlib.util.find_spec("scipy")  # finds, does not import, a top-level package
    if spec is None or not spec.submodule_search_locations:
        return None
    full = f"scipy.{name}"
    if full in sys.modules:  # scipy's package imported it
        return sys.modules[full]
    folder, stem = Path(spec.submodule_search_locations[0], *name.split(".")[:-1]), name.split(".")[-1]
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = folder / f"{stem}{suffix}"
        if path.is_file():
            loader = importlib.machinery.ExtensionFileLoader(full, str(path))
            module_spec = importlib.util.spec_from_file_location(full, str(path), loader=loader)
            if module_spec is None:
                return None
            module = importlib.util.module_from_spec(module_spec)
            try:
                loader.exec_module(module)
            finally:
                sys.modules.pop(full, None)  # left to scipy's package, which loads it as always
            return module
    return None


@cache
def _lapack() -> Any:
    try:
        module = _extension("linalg._flapack")
    except ImportError:
        module = None
    if module is None or not all(hasattr(module, f) for f in ("dgetrf", "dgetrs", "zgetrf", "zgetrs")):
        from scipy.linalg import lapack as module  # type: ignore[no-redef]
    return module


def lu_factor(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``scipy.linalg.lu_factor(a, overwrite_a=True)``: the LU factors and pivots of the square (n, n) float or
    complex array ``a``, which may be overwritten. ValueError if ``a`` holds an inf or a NaN; a zero pivot warns
    (``SingularMatrixWarning``)."""
    a = np.asarray_chkfinite(a)
    if a.size == 0:
        return np.empty_like(a), np.arange(0, dtype=np.int32)
    getrf = _lapack().zgetrf if np.iscomplexobj(a) else _lapack().dgetrf
    lu, piv, info = getrf(a, overwrite_a=True)
    if info < 0:
        raise ValueError(f"illegal value in {-info}th argument of internal getrf (lu_factor)")
    if info > 0:
        warnings.warn(f"Diagonal number {info} is exactly zero. Singular matrix.", SingularMatrixWarning, stacklevel=2)
    return lu, piv


def lu_solve(factors: tuple[np.ndarray, np.ndarray], b: np.ndarray) -> np.ndarray:
    """``scipy.linalg.lu_solve(factors, b, overwrite_b=True)``: x of a x = b, shape (n,), with ``factors`` from
    ``lu_factor``; ``b`` may be overwritten. ValueError if ``b`` holds an inf or a NaN or does not match."""
    lu, piv = factors
    b = np.asarray_chkfinite(b)
    if lu.shape[0] != b.shape[0]:
        raise ValueError(f"Shapes of lu {lu.shape} and b {b.shape} are incompatible")
    if b.size == 0:
        return np.empty_like(b, dtype=np.result_type(lu.dtype, b.dtype))
    getrs = _lapack().zgetrs if np.iscomplexobj(lu) or np.iscomplexobj(b) else _lapack().dgetrs
    x, info = getrs(lu, piv, b, trans=0, overwrite_b=True)
    if info != 0:
        raise ValueError(f"illegal value in {-info}th argument of internal gesv|posv")
    return x


@cache
def _zeros() -> Any:
    try:
        return _extension("optimize._zeros")
    except ImportError:
        return None


def brentq(f: Callable[..., float], a: float, b: float, xtol: float, rtol: float = BRENTQ_RTOL) -> float:
    """``scipy.optimize.brentq(f, a, b, xtol=xtol, rtol=rtol)``: a root of the scalar ``f`` in [a, b]. ValueError
    if f(a) and f(b) have the same sign or f is NaN somewhere it is evaluated; RuntimeError if 100 iterations do not
    converge."""
    zeros = _zeros()
    if zeros is None or not hasattr(zeros, "_brentq"):
        from scipy.optimize import brentq as scipy_brentq
        return float(scipy_brentq(f, a, b, xtol=xtol, rtol=rtol))
    if xtol <= 0:
        raise ValueError(f"xtol too small ({xtol:g} <= 0)")
    if rtol < BRENTQ_RTOL:
        raise ValueError(f"rtol too small ({rtol:g} < {BRENTQ_RTOL:g})")

    def checked(x: float) -> float:
        value = f(x)
        if np.isnan(value):
            raise ValueError(f"The function value at x={x} is NaN; solver cannot continue.")
        return value
    return zeros._brentq(checked, a, b, xtol, rtol, 100, (), False, True)
