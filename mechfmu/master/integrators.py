"""scipy's ODE integrators as the monolithic master uses them: the methods of its option ``method``, and the dense
output of an integrator's last step."""
from __future__ import annotations

from typing import Any

import numpy as np
from scipy.integrate import BDF, LSODA, Radau
from scipy.integrate._ivp.radau import RadauDenseOutput

#: the integrators of the option method
SOLVERS = {"Radau": Radau, "BDF": BDF, "LSODA": LSODA}


def dense_output(solver: Any) -> Any:
    """The dense output of the integrator's last step: Radau's evaluated with scipy's operations in scipy's order
    (the same bits) without its per-call array handling (most of a call's cost), the others as scipy gives them."""
    dense = solver.dense_output()
    if type(dense) is not RadauDenseOutput or dense.Q.shape[1] != 3:
        return dense
    t_old, h, q, y_old = dense.t_old, dense.h, dense.Q, dense.y_old

    def at(t: float) -> np.ndarray:
        x = (t - t_old) / h
        square = x * x
        y = np.dot(q, np.array([x, square, square * x]))
        y += y_old
        return y
    return at
