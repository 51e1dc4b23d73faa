"""The ODE integrators of the monolithic master's option ``method``: Radau (the default, ``mechfmu.master.radau``:
scipy's Radau IIA without importing ``scipy.integrate``), BDF and LSODA (scipy's, imported by the runs that use
them), and the dense output of an integrator's last step."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mechfmu.master.radau import Radau, RadauDenseOutput

#: the integrators of the option method
METHODS = ("Radau", "BDF", "LSODA")


def integrator(method: str, fun: Callable[[float, np.ndarray], Any], t0: float, y0: np.ndarray, t_bound: float,
               rtol: float, atol: float, jac: Callable[[float, np.ndarray], Any] | None) -> Any:
    """An integrator of ``method`` (``METHODS``) from (t0, y0) up to t_bound, scipy's ``OdeSolver`` interface."""
    if method == "Radau":
        return Radau(fun, t0, y0, t_bound, rtol=rtol, atol=atol, jac=jac)
    from scipy.integrate import BDF, LSODA
    return {"BDF": BDF, "LSODA": LSODA}[method](fun, t0, y0, t_bound, rtol=rtol, atol=atol, jac=jac)


def dense_output(solver: Any) -> Any:
    """The dense output of the integrator's last step: Radau's evaluated with its operations in its order (the same
    bits) without its per-call array handling (most of a call's cost; ``dense_at``), the others as the integrator
    gives them."""
    dense = solver.dense_output()
    if type(dense) is not RadauDenseOutput or dense.Q.shape[1] != 3:
        return dense
    return dense_at(dense.t_old, dense.h, dense.Q, dense.y_old)


def dense_at(t_old: float, h: float, q: np.ndarray, y_old: np.ndarray) -> Any:
    """Radau's dense output of a step from ``t_old`` [s] of size ``h`` [s] (``q``: states x 3, ``y_old``: the states
    at its start): a function of t [s] giving the states there, with ``parts`` (t_old, h, q, y_old) for the compiled
    points (``mechfmu.master.dense_points``)."""

    def at(t: float) -> np.ndarray:
        x = (t - t_old) / h
        square = x * x
        y = np.dot(q, np.array([x, square, square * x]))
        y += y_old
        return y
    at.parts = (t_old, h, q, y_old)  # type: ignore[attr-defined]
    return at
