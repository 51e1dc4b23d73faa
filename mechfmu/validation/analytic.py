"""Closed-form solutions of shipped scenarios (independent of mechfmu's components)."""
from __future__ import annotations

import numpy as np
from scipy.linalg import eigh

#: scenarios/two_mass_oscillator: 1 kg masses, walls at 0, k1 = k3 = 4π² N/m, k2 = 16π² N/m, x1(0) = 1 m
TWO_MASS_STIFFNESS = (39.47841760435743, 157.91367041742973, 39.47841760435743)


def two_mass_oscillator_positions(times: np.ndarray) -> np.ndarray:
    """x1(t), x2(t) [m] (shape (2, len(times))) of the undamped two-mass oscillator started at x1 = 1 m,
    x2 = 0, at rest: the sum of its two modes (eigenvectors of K for unit masses), exact to rounding."""
    k1, k2, k3 = TWO_MASS_STIFFNESS
    w2, modes = eigh(np.array([[k1 + k2, -k2], [-k2, k2 + k3]]))
    q0 = modes.T @ np.array([1.0, 0.0])
    return modes @ (q0[:, None] * np.cos(np.sqrt(w2)[:, None] * np.asarray(times)[None, :]))
