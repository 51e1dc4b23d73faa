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
from typing import ClassVar

from .base import Component, Input, Output
from .ports import (
    ACCELERATION,
    DAMPING_TANGENT,
    FLANGE_A,
    FLANGE_B,
    FORCE,
    POSITION,
    RATE,
    STIFFNESS_TANGENT,
    VELOCITY,
    other,
    port,
)

S_A, V_A = port(FLANGE_A, POSITION), port(FLANGE_A, VELOCITY)
S_B, V_B = port(FLANGE_B, POSITION), port(FLANGE_B, VELOCITY)
A_A, A_B = port(FLANGE_A, ACCELERATION), port(FLANGE_B, ACCELERATION)
FLANGE_INPUT_NAMES = (S_A, V_A, S_B, V_B)
#: the flange inputs of every 1D connector (Exudyn marker m0 = flange_a, m1 = flange_b)
CONNECTOR_INPUTS = (
    Input(S_A, 0.0, "m", "Absolute position of flange_a (marker m0 coordinate)"),
    Input(V_A, 0.0, "m/s", "Absolute velocity of flange_a"),
    Input(S_B, 0.0, "m", "Absolute position of flange_b (marker m1 coordinate)"),
    Input(V_B, 0.0, "m/s", "Absolute velocity of flange_b"),
    Input(port(FLANGE_A, ACCELERATION), 0.0, "m/s2",
          "Acceleration of flange_a (only for flange_b.f_rate; linear-implicit coupling)"),
    Input(port(FLANGE_B, ACCELERATION), 0.0, "m/s2",
          "Acceleration of flange_b (only for flange_a.f_rate; linear-implicit coupling)"),
)
FLANGE_FORCE_OUTPUTS = (
    Output(port(FLANGE_A, FORCE), "N", "Cut force at flange_a (= -factor0*f)", FLANGE_INPUT_NAMES),
    Output(port(FLANGE_B, FORCE), "N", "Cut force at flange_b (= +factor1*f)", FLANGE_INPUT_NAMES),
)
TANGENT_OUTPUTS = tuple(
    Output(port(x, FORCE + RATE), "N/s", f"Rate of {x}.f from the motion of {other(x)} alone "
           f"(d({x}.f)/d({other(x)}.s)*{other(x)}.v + d({x}.f)/d({other(x)}.v)*{other(x)}.a)",
           FLANGE_INPUT_NAMES + (port(other(x), ACCELERATION),))
    for x in (FLANGE_A, FLANGE_B)
) + tuple(
    Output(port(x, tangent), unit, f"Tangent {word} d({x}.f)/d({x}.{quantity}), for linear-implicit coupling",
           FLANGE_INPUT_NAMES)
    for x in (FLANGE_A, FLANGE_B)
    for tangent, unit, word, quantity in ((STIFFNESS_TANGENT, "N/m", "stiffness", POSITION),
                                          (DAMPING_TANGENT, "N.s/m", "damping", VELOCITY))
)
#: relative size of the central-difference step for force derivatives
DIFFERENCE_STEP = 1e-7
#: the analytic partials of every 1D connector (components/partials.py), in ``partial_values``'s order
CONNECTOR_PARTIALS = (("s_rel", S_A), ("s_rel", S_B), ("v_rel", V_A), ("v_rel", V_B)) + tuple(
    (unknown, known) for unknown in ("f", port(FLANGE_A, FORCE), port(FLANGE_B, FORCE))
    for known in (S_A, S_B, V_A, V_B)
) + ((port(FLANGE_A, FORCE + RATE), A_B), (port(FLANGE_B, FORCE + RATE), A_A))


class Connector(Component, ABC):
    """Base of the 1D connectors: the port algebra (MSL's PartialCompliant). It declares and computes
    ``s_rel``, ``v_rel``, ``f``, the flange forces and the tangents; a connector module gives its
    ``parameters``, ``element_force`` (and analytic ``force_derivatives`` where it has them) and, for
    outputs of its own, ``law_outputs`` (declared after ``f``) with their values from ``law_parts``,
    and ``state_outputs`` read from ``self.state``, and event indicators ``indicator_outputs`` (declared
    last, values from ``indicators``). Elements with gear factors set ``geared`` and override ``factors``.
    """

    inputs = CONNECTOR_INPUTS
    #: outputs of the law beyond f (values from ``law_parts``), declared between f and the flange forces
    law_outputs: ClassVar[tuple[Output, ...]] = ()
    #: hidden-state outputs (values from ``self.state`` under the same names), declared after the tangents
    state_outputs: ClassVar[tuple[Output, ...]] = ()
    #: event indicators (components/ports.py: indicator.<what>), values from ``indicators``, declared last
    indicator_outputs: ClassVar[tuple[Output, ...]] = ()
    #: True if the relative coordinate carries the gear factors factor0, factor1
    geared: ClassVar[bool] = False
    force_description: ClassVar[str] = "Connector force f (positive = tension)"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "outputs" not in cls.__dict__:  # rotational_variant passes converted outputs of its own
            cls.outputs = connector_outputs(cls)

    def factors(self) -> tuple[float, float]:
        return 1.0, 1.0

    def relative(self) -> tuple[float, float]:
        """(q, v): the relative coordinate and velocity."""
        vals = self.values
        f0, f1 = self.factors()
        return (f1 * vals[S_B] - f0 * vals[S_A], f1 * vals[V_B] - f0 * vals[V_A])

    @abstractmethod
    def element_force(self, q: float, v: float) -> float:
        """The element force f [N] (tension positive) at relative coordinate q and velocity v."""

    def law_parts(self, q: float, v: float) -> tuple[float, dict[str, float]]:
        """(f, values of ``law_outputs``) at (q, v); override when the law has outputs of its own."""
        return self.element_force(q, v), {}

    def indicators(self, q: float, v: float) -> dict[str, float]:
        """Values of ``indicator_outputs`` at (q, v)."""
        return {}

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
        aa, bb, ab = f0 * f0, f1 * f1, -f0 * f1  # the products the outputs share (left to right, as written out)
        return {"flange_a.f": -f0 * f, "flange_b.f": f1 * f,
                "flange_a.c": aa * f_q, "flange_a.d": aa * f_v, "flange_b.c": bb * f_q, "flange_b.d": bb * f_v,
                "flange_a.f_rate": ab * (f_q * vals[V_B] + f_v * vals[A_B]),
                "flange_b.f_rate": ab * (f_q * vals[V_A] + f_v * vals[A_A])}

    partial_pattern = CONNECTOR_PARTIALS

    def partial_values(self) -> list[float]:
        """∂(s_rel, v_rel, f, flange forces)/∂(flange positions, velocities) and ∂f_rate/∂(other flange's a), from
        ∂f/∂q and ∂f/∂v (the tangents) and the gear factors."""
        f0, f1 = self.factors()
        f_q, f_v = self.force_derivatives(*self.relative())
        aa, bb, ab = f0 * f0, f1 * f1, -f0 * f1
        return [-f0, f1, -f0, f1,
                -f0 * f_q, f1 * f_q, -f0 * f_v, f1 * f_v,
                aa * f_q, ab * f_q, aa * f_v, ab * f_v,
                ab * f_q, bb * f_q, ab * f_v, bb * f_v,
                ab * f_v, ab * f_v]

    def compute_outputs(self) -> dict[str, float]:
        q, v = self.relative()
        f, parts = self.law_parts(q, v)
        outputs = {"s_rel": q, "v_rel": v, "f": f}
        if parts:
            outputs.update(parts)
        outputs.update(self.flange_outputs(f, q, v))
        if self.state_outputs:
            state = self.state
            outputs.update({o.name: state[o.name] for o in self.state_outputs})
        indicators = self.indicators(q, v)
        if indicators:
            outputs.update(indicators)
        return outputs


def connector_outputs(cls: type[Connector]) -> tuple[Output, ...]:
    """s_rel, v_rel, f, the law's outputs, flange forces, tangents, state outputs, indicators (this order)."""
    if cls.geared:
        s_rel, v_rel = "factor1*flange_b.s - factor0*flange_a.s", "factor1*flange_b.v - factor0*flange_a.v"
    else:
        s_rel, v_rel = "flange_b.s - flange_a.s", "flange_b.v - flange_a.v"
    return (
        Output("s_rel", "m", f"Relative coordinate {s_rel}", (S_A, S_B)),
        Output("v_rel", "m/s", f"Relative velocity {v_rel}", (V_A, V_B)),
        Output("f", "N", cls.force_description, FLANGE_INPUT_NAMES),
    ) + cls.law_outputs + FLANGE_FORCE_OUTPUTS + TANGENT_OUTPUTS + cls.state_outputs + cls.indicator_outputs
