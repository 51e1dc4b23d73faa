"""Shared parts of the 1D connectors: flange inputs, flange forces with gear factors, tangents.

A connector's element force ``f(q, v)`` (tension positive) acts on the relative coordinate
``q = factor1·flange_b.s − factor0·flange_a.s`` and velocity ``v`` (factors 1 unless the element has
them). Its cut forces are ``flange_a.f = −factor0·f`` and ``flange_b.f = +factor1·f``.

Tangents for linear-implicit coupling: each flange also outputs how its cut force changes with its
own motion, ``flange_x.c = ∂flange_x.f/∂flange_x.s = factor_x²·∂f/∂q`` and
``flange_x.d = ∂flange_x.f/∂flange_x.v = factor_x²·∂f/∂v`` (both >= 0 for a restoring, dissipating
element), and how it changes from the motion of the *other* flange alone (optional acceleration
inputs ``flange_x.a``), ``flange_a.f_rate = ∂flange_a.f/∂flange_b.s·flange_b.v +
∂flange_a.f/∂flange_b.v·flange_b.a = −factor0·factor1·(∂f/∂q·flange_b.v + ∂f/∂v·flange_b.a)`` (and
``flange_b.f_rate`` alike). A body that reads them integrates
``F ≈ −(flange_x.f + c·Δs + d·Δv + f_rate·τ)`` implicitly over the step (``mechfmu`` algorithm
``linear-implicit``): the connector is linearized along the other body's predicted path, so two
bodies moving or decelerating together feel no spurious force. Components give ``force_derivatives`` analytically
where the law is simple; the default is a central difference of ``element_force``.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

from .base import Component, Input, Output
from .expressions import Expression

FLANGE_INPUT_NAMES = ("flange_a.s", "flange_a.v", "flange_b.s", "flange_b.v")
#: the flange inputs of every 1D connector (Exudyn marker m0 = flange_a, m1 = flange_b)
CONNECTOR_INPUTS = (
    Input("flange_a.s", 0.0, "m", "Absolute position of flange_a (marker m0 coordinate)"),
    Input("flange_a.v", 0.0, "m/s", "Absolute velocity of flange_a"),
    Input("flange_b.s", 0.0, "m", "Absolute position of flange_b (marker m1 coordinate)"),
    Input("flange_b.v", 0.0, "m/s", "Absolute velocity of flange_b"),
    Input("flange_a.a", 0.0, "m/s2", "Acceleration of flange_a (only for flange_b.f_rate; linear-implicit coupling)"),
    Input("flange_b.a", 0.0, "m/s2", "Acceleration of flange_b (only for flange_a.f_rate; linear-implicit coupling)"),
)
FLANGE_FORCE_OUTPUTS = (
    Output("flange_a.f", "N", "Cut force at flange_a (= -factor0*f)", FLANGE_INPUT_NAMES),
    Output("flange_b.f", "N", "Cut force at flange_b (= +factor1*f)", FLANGE_INPUT_NAMES),
)
TANGENT_OUTPUTS = (
    Output("flange_a.f_rate", "N/s", "Rate of flange_a.f from the motion of flange_b alone "
           "(d(flange_a.f)/d(flange_b.s)*flange_b.v + d(flange_a.f)/d(flange_b.v)*flange_b.a)",
           FLANGE_INPUT_NAMES + ("flange_b.a",)),
    Output("flange_b.f_rate", "N/s", "Rate of flange_b.f from the motion of flange_a alone "
           "(d(flange_b.f)/d(flange_a.s)*flange_a.v + d(flange_b.f)/d(flange_a.v)*flange_a.a)",
           FLANGE_INPUT_NAMES + ("flange_a.a",)),
    Output("flange_a.c", "N/m", "Tangent stiffness d(flange_a.f)/d(flange_a.s), for linear-implicit coupling",
           FLANGE_INPUT_NAMES),
    Output("flange_a.d", "N.s/m", "Tangent damping d(flange_a.f)/d(flange_a.v), for linear-implicit coupling",
           FLANGE_INPUT_NAMES),
    Output("flange_b.c", "N/m", "Tangent stiffness d(flange_b.f)/d(flange_b.s), for linear-implicit coupling",
           FLANGE_INPUT_NAMES),
    Output("flange_b.d", "N.s/m", "Tangent damping d(flange_b.f)/d(flange_b.v), for linear-implicit coupling",
           FLANGE_INPUT_NAMES),
)
#: relative size of the central-difference step for force derivatives
DIFFERENCE_STEP = 1e-7


class Connector(Component, ABC):
    """Base of the 1D connectors. Subclasses implement ``element_force(q, v)`` and may override
    ``factors`` and ``force_derivatives``."""

    inputs = CONNECTOR_INPUTS

    def factors(self) -> tuple[float, float]:
        return 1.0, 1.0

    def relative(self) -> tuple[float, float]:
        """(q, v): the relative coordinate and velocity."""
        vals = self.values
        f0, f1 = self.factors()
        return (f1 * vals["flange_b.s"] - f0 * vals["flange_a.s"], f1 * vals["flange_b.v"] - f0 * vals["flange_a.v"])

    @abstractmethod
    def element_force(self, q: float, v: float) -> float:
        """The element force f [N] (tension positive) at relative coordinate q and velocity v."""

    def force_derivatives(self, q: float, v: float) -> tuple[float, float]:
        """(∂f/∂q, ∂f/∂v) by central differences (step DIFFERENCE_STEP·max(1, |x|))."""
        dq, dv = DIFFERENCE_STEP * max(1.0, abs(q)), DIFFERENCE_STEP * max(1.0, abs(v))
        return ((self.element_force(q + dq, v) - self.element_force(q - dq, v)) / (2 * dq),
                (self.element_force(q, v + dv) - self.element_force(q, v - dv)) / (2 * dv))

    def flange_outputs(self, f: float, q: float, v: float) -> dict[str, float]:
        """Flange forces and tangents for the element force f at (q, v)."""
        f0, f1 = self.factors()
        f_q, f_v = self.force_derivatives(q, v)
        vals = self.values
        return {"flange_a.f": -f0 * f, "flange_b.f": f1 * f,
                "flange_a.c": f0 * f0 * f_q, "flange_a.d": f0 * f0 * f_v,
                "flange_b.c": f1 * f1 * f_q, "flange_b.d": f1 * f1 * f_v,
                "flange_a.f_rate": -f0 * f1 * (f_q * vals["flange_b.v"] + f_v * vals["flange_b.a"]),
                "flange_b.f_rate": -f0 * f1 * (f_q * vals["flange_a.v"] + f_v * vals["flange_a.a"])}


class UserFunctionConnector(Connector):
    """A connector whose force law a ``springForceUserFunction`` expression can replace; the names
    it may use are ``user_function_names``."""

    user_function_names: tuple[str, ...] = ()

    def validate(self) -> None:
        self.user_function()

    def user_function(self) -> Expression | None:
        """The parsed springForceUserFunction, or None if empty."""
        return self.parsed_expression("springForceUserFunction", self.user_function_names)

    def call_user_function(self, **arguments: float) -> float:
        return self.call_expression("springForceUserFunction", self.user_function_names, **arguments)
