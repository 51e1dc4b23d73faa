"""Directional derivatives of a component (FMI 2.0 ``fmi2GetDirectionalDerivative``).

``directional_derivative(unknowns, knowns, seeds)`` is ``Σ_j ∂unknown/∂known_j · seed_j`` for every unknown at
the current point, with no side effect. An unknown is an output or the time derivative of a continuous state
(``der(state.x)``); a known is an input or a continuous state (``state.x``). The partial of one pair is

- analytic where the component gives it: ``partial_pattern`` holds a class's pairs (unknown, known) and
  ``partial_values()`` their values now, in that order (a shipped component: its C law's ``partials``, e.g. the 1D
  connectors' from the law's tangents ∂f/∂q, ∂f/∂v, the bodies' from their equations of motion, the sphere contact's
  by the chain rule through its law);
- otherwise, where the unknown depends on the known (an output on an input it feeds through, ``Output.depends_on``,
  or on a state; a state derivative on anything), a central difference of the outputs or state derivatives with
  step ``DIFFERENCE_STEP·max(1, |x|)`` (the tangent and indicator outputs, whose partials would need the law's
  second derivatives, the sources, and a component written in Python that gives none);
- otherwise 0.

Seeds of 0 are skipped, and the sum starts at 0.0 and adds the products in the order of ``knowns``, so the native
FMU (components/native/runtime.c) gives the same bits.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

#: relative size of the central-difference step: near the cube root of the unit roundoff, the step that balances
#: truncation and rounding, and large enough for the tangent outputs, which hold a difference themselves
DIFFERENCE_STEP = 1e-5


def state_variable(name: str) -> str:
    """The FMU variable of a continuous state (``s`` -> ``state.s``)."""
    return f"state.{name}"


def derivative_variable(name: str) -> str:
    """The FMU variable of a continuous state's derivative (``s`` -> ``der(state.s)``)."""
    return f"der(state.{name})"


class DirectionalDerivatives:
    """The directional derivatives of ``components.base.Component`` (module docstring)."""

    #: the analytic partials' (unknown, known) pairs, in the order ``partial_values`` returns them
    partial_pattern: ClassVar[tuple[tuple[str, str], ...]] = ()

    values: dict[str, Any]
    state: dict[str, Any]
    inputs: ClassVar[tuple[Any, ...]]
    outputs: ClassVar[tuple[Any, ...]]
    parameters: ClassVar[tuple[Any, ...]]
    continuous_states: ClassVar[tuple[str, ...]]

    def partial_values(self) -> list[float]:
        """The analytic partials of ``partial_pattern`` at the current point."""
        return []

    if TYPE_CHECKING:  # provided by components.base.Component
        def compute_outputs(self) -> dict[str, float]: ...
        def derivatives(self) -> list[float]: ...
        def error(self, name: str, value: Any, problem: str) -> Exception: ...
        def _slot(self, name: str) -> tuple[Any, Any]: ...

    def directional_derivative(self, unknowns: Sequence[str], knowns: Sequence[str],
                               seeds: Sequence[float]) -> list[float]:
        """Σ_j ∂unknown/∂known_j · seeds[j] per unknown (module docstring); ComponentError naming a variable that
        is no unknown or no known, or a count that differs."""
        cls = type(self)
        outputs = {o.name: o for o in cls.outputs}
        states = {state_variable(n): n for n in cls.continuous_states}
        derivatives = {derivative_variable(n): i for i, n in enumerate(cls.continuous_states)}
        inputs = {i.name for i in cls.inputs}
        if len(seeds) != len(knowns):
            raise self.error("directional derivative seeds", list(seeds), f"must be {len(knowns)} values, one per "
                                                                          "known")
        for name in unknowns:
            if name not in outputs and name not in derivatives:
                raise self.error("directional derivative unknown", name, "is not an output or a state derivative")
        parameters = {p.name for p in cls.parameters}
        for name, seed in zip(knowns, seeds):  # a parameter with seed 0: FMI 2.0's InitialUnknowns list parameters
            # among the knowns, and a host passes the whole list to ask for one column of it
            if name not in inputs and name not in states and not (name in parameters and seed == 0.0):
                raise self.error("directional derivative known", name, "is not an input or a continuous state")
        analytic = dict(zip(cls.partial_pattern, self.partial_values())) if cls.partial_pattern else {}
        result = []
        for unknown in unknowns:
            total = 0.0
            for known, seed in zip(knowns, seeds):
                if seed == 0.0:
                    continue
                partial = analytic.get((unknown, known))
                if partial is None:
                    depends = (unknown in derivatives or known in states
                               or known in outputs[unknown].depends_on)
                    partial = self._difference(unknown, known, states, derivatives) if depends else 0.0
                total += partial * seed
            result.append(total)
        return result

    def _difference(self, unknown: str, known: str, states: dict[str, str], derivatives: dict[str, int]) -> float:
        """∂unknown/∂known by a central difference (the known moved and put back exactly)."""
        container, key = self._slot(states[known]) if known in states else (self.values, known)
        x = container[key]
        step = DIFFERENCE_STEP * max(1.0, abs(x))
        index = derivatives.get(unknown)
        try:
            container[key] = x + step
            up = self.compute_outputs()[unknown] if index is None else self.derivatives()[index]
            container[key] = x - step
            down = self.compute_outputs()[unknown] if index is None else self.derivatives()[index]
        finally:
            container[key] = x
        return (up - down) / (2 * step)
