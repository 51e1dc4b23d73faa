"""The Jacobian ∂(dx/dt)/∂x of the monolithic ODE from the components' directional derivatives.

Per component, at the current point, its partials (fmi2GetDirectionalDerivative, components/partials.py, one call
per known with a unit seed): of its state derivatives ẋ_c and its connected outputs y_c with respect to its states
x_c and its connected inputs u_c,

    ẋ_c = A_c·x_c + B_c·u_c,   y_c = C_c·x_c + D_c·u_c   (linearized).

The connections deliver u = M·y (M holds each connection's factor), so with the blocks stacked over the
components, (I − M·D)·u = M·C·x and

    J = A + B·(I − M·D)⁻¹·M·C.

I − M·D is invertible: the feed-through outputs form no loop (the master refuses algebraic loops), so M·D is
nilpotent. The partials the components take analytically make J exact; the integrator's Newton iteration then
needs no difference quotients of the whole system (one derivative evaluation per state).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from mechfmu.master.coupled_system import CoupledSystem


class SystemJacobian:
    """J of the monolithic ODE at the point its components are at (module docstring; the master puts them there)."""

    def __init__(self, system: CoupledSystem, components: list[Any], slices: list[slice]):
        self.components, self.slices = components, slices
        index = {name: i for i, name in enumerate(system.slaves)}
        outputs: dict[tuple[int, str], int] = {}
        inputs: dict[tuple[int, str], int] = {}
        for con in system.connections:
            outputs.setdefault((index[con.source], con.source_variable), len(outputs))
            inputs.setdefault((index[con.target], con.target_variable), len(inputs))
        self.coupling = np.zeros((len(inputs), len(outputs)))  # M: u = M·y
        for con in system.connections:
            self.coupling[inputs[(index[con.target], con.target_variable)],
                          outputs[(index[con.source], con.source_variable)]] += con.factor
        #: per component: (its connected outputs and their rows in y, its connected inputs and their rows in u)
        self.ports = [([n for (i, n) in outputs if i == c], [outputs[(i, n)] for (i, n) in outputs if i == c],
                       [n for (i, n) in inputs if i == c], [inputs[(i, n)] for (i, n) in inputs if i == c])
                      for c in range(len(components))]
        self.size = sum(s.stop - s.start for s in slices)

    def __call__(self) -> np.ndarray:
        n, ny, nu = self.size, self.coupling.shape[1], self.coupling.shape[0]
        a, b = np.zeros((n, n)), np.zeros((n, nu))
        c, d = np.zeros((ny, n)), np.zeros((ny, nu))
        for component, part, (out_names, out_rows, in_names, in_rows) in zip(self.components, self.slices,
                                                                             self.ports):
            states, derivatives = component.state_variables(), component.derivative_variables()
            unknowns, knowns = derivatives + out_names, states + in_names
            if not unknowns or not knowns:
                continue
            columns = [component.directional_derivative(unknowns, knowns,
                                                        [1.0 if i == j else 0.0 for i in range(len(knowns))])
                       for j in range(len(knowns))]
            block = np.array(columns, dtype=float).T  # rows: unknowns, columns: knowns
            nx = len(states)
            rows_x, rows_y = list(range(part.start, part.stop)), out_rows
            a[np.ix_(rows_x, rows_x)] = block[:nx, :nx]
            b[np.ix_(rows_x, in_rows)] = block[:nx, nx:]
            c[np.ix_(rows_y, rows_x)] = block[nx:, :nx]
            d[np.ix_(rows_y, in_rows)] = block[nx:, nx:]
        if not nu:
            return a
        inputs = np.linalg.solve(np.eye(nu) - self.coupling @ d, self.coupling @ c)  # du/dx
        return a + b @ inputs
