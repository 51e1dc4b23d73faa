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

``linearized`` adds knowns z that no connection sets (a constraint's force λ, which the master sets) and outputs r
that no connection reads (a constraint's residuals): with ẋ = A·x + B·u + Bz·z, y = C·x + D·u + E·z and so
u = Ux·x + Uz·z, it gives dẋ/dx = A + B·Ux, dẋ/dz = Bz + B·Uz, dr/dx = C_r + D_r·Ux and dr/dz = E_r + D_r·Uz.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from mechfmu.master.coupled_system import CoupledSystem


@dataclass
class Linearization:
    """The system's partials at one point (module docstring): of ẋ and of the outputs r on x and on z."""
    dx_dx: np.ndarray
    dx_dz: np.ndarray
    dr_dx: np.ndarray
    dr_dz: np.ndarray


class SystemJacobian:
    """J of the monolithic ODE at the point its components are at (module docstring; the master puts them there)."""

    def __init__(self, system: CoupledSystem, components: list[Any], slices: list[slice],
                 knowns: dict[str, list[str]] | None = None, outputs: dict[str, list[str]] | None = None):
        """``knowns``/``outputs``: per slave name, its unconnected inputs z and outputs r (``linearized``)."""
        self.components, self.slices = components, slices
        index = {name: i for i, name in enumerate(system.slaves)}
        outputs_at: dict[tuple[int, str], int] = {}
        inputs: dict[tuple[int, str], int] = {}
        for con in system.connections:
            outputs_at.setdefault((index[con.source], con.source_variable), len(outputs_at))
            inputs.setdefault((index[con.target], con.target_variable), len(inputs))
        #: the rows of r in y (outputs no connection reads) and the columns of z (inputs no connection sets)
        self.residual_rows = [outputs_at.setdefault((index[s], n), len(outputs_at))
                              for s, names in (outputs or {}).items() for n in names]
        extra = {(index[s], n): j for j, (s, n) in enumerate((s, n) for s, names in (knowns or {}).items()
                                                              for n in names)}
        self.coupling = np.zeros((len(inputs), len(outputs_at)))  # M: u = M·y
        for con in system.connections:
            self.coupling[inputs[(index[con.target], con.target_variable)],
                          outputs_at[(index[con.source], con.source_variable)]] += con.factor
        #: per component: (its outputs and their rows in y, its connected inputs and their rows in u, its
        #: unconnected knowns and their columns in z)
        self.ports = [([n for (i, n) in outputs_at if i == c], [outputs_at[(i, n)] for (i, n) in outputs_at if i == c],
                       [n for (i, n) in inputs if i == c], [inputs[(i, n)] for (i, n) in inputs if i == c],
                       [n for (i, n) in extra if i == c], [extra[(i, n)] for (i, n) in extra if i == c])
                      for c in range(len(components))]
        self.size = sum(s.stop - s.start for s in slices)
        self.nz = len(extra)
        #: per component: where its partials go in A, B, Bz, C, D and E (np.ix_ of its rows and columns)
        self.places = [(np.ix_(range(part.start, part.stop), range(part.start, part.stop)),
                        np.ix_(range(part.start, part.stop), in_rows), np.ix_(range(part.start, part.stop), z_columns),
                        np.ix_(out_rows, range(part.start, part.stop)), np.ix_(out_rows, in_rows),
                        np.ix_(out_rows, z_columns))
                       for part, (_, out_rows, _, in_rows, _, z_columns) in zip(slices, self.ports)]

    def _blocks(self) -> tuple[np.ndarray, ...]:
        """A, B, Bz, C, D, E of the module docstring at the current point."""
        n, ny, nu, nz = self.size, self.coupling.shape[1], self.coupling.shape[0], self.nz
        a, b, bz = np.zeros((n, n)), np.zeros((n, nu)), np.zeros((n, nz))
        c, d, e = np.zeros((ny, n)), np.zeros((ny, nu)), np.zeros((ny, nz))
        for component, (out_names, _, in_names, _, z_names, _), places in zip(self.components, self.ports, self.places):
            states, derivatives = component.state_variables(), component.derivative_variables()
            unknowns, knowns = derivatives + out_names, states + in_names + z_names
            if not unknowns or not knowns:
                continue
            columns = [component.directional_derivative(unknowns, knowns,
                                                        [1.0 if i == j else 0.0 for i in range(len(knowns))])
                       for j in range(len(knowns))]
            block = np.array(columns, dtype=float).T  # rows: unknowns, columns: knowns
            nx, nk = len(states), len(states) + len(in_names)
            xx, xu, xz, yx, yu, yz = places
            a[xx], b[xu], bz[xz] = block[:nx, :nx], block[:nx, nx:nk], block[:nx, nk:]
            c[yx], d[yu], e[yz] = block[nx:, :nx], block[nx:, nx:nk], block[nx:, nk:]
        return a, b, bz, c, d, e

    def __call__(self) -> np.ndarray:
        a, b, _, c, d, _ = self._blocks()
        if not self.coupling.shape[0]:
            return a
        inputs = np.linalg.solve(np.eye(self.coupling.shape[0]) - self.coupling @ d, self.coupling @ c)  # du/dx
        return a + b @ inputs

    def linearized(self) -> Linearization:
        """The partials of ẋ and r on x and z at the current point (module docstring)."""
        a, b, bz, c, d, e = self._blocks()
        loop = np.eye(self.coupling.shape[0]) - self.coupling @ d
        ux, uz = np.linalg.solve(loop, self.coupling @ c), np.linalg.solve(loop, self.coupling @ e)
        rows = self.residual_rows
        return Linearization(a + b @ ux, bz + b @ uz, c[rows] + d[rows] @ ux, e[rows] + d[rows] @ uz)
