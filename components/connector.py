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
from dataclasses import dataclass
from typing import ClassVar

from .base import ROTATIONAL_UNITS, Component, Input, Output
from .ports import (
    ACCELERATION,
    ANGLE,
    ANGULAR_VELOCITY,
    DAMPING_TANGENT,
    FLANGE_A,
    FLANGE_B,
    FORCE,
    POSITION,
    RATE,
    STIFFNESS_TANGENT,
    TORQUE,
    VELOCITY,
    port,
)


@dataclass(frozen=True)
class Quantities:
    """The names a 1D connector's variables take: its flanges' position, velocity and force, its relative coordinate
    and velocity and its element force, with their units and words (MSL's Translational or Rotational names)."""
    position: str
    velocity: str
    force: str
    relative_position: str
    relative_velocity: str
    element_force: str
    units: dict[str, str]  # by the translational unit: m, m/s, m/s2, N, N/s, N/m, N.s/m
    words: tuple[str, str]  # the position's and velocity's ("position", "velocity")
    markers: tuple[str, str] = ("", "")  # what flange_a's and flange_b's positions are elsewhere
    #: the two flanges (the relative coordinate is the second's position minus the first's): flange_a, flange_b,
    #: or a housing's and a body's (MSL's support and flange_a of a brake)
    flanges: tuple[str, str] = (FLANGE_A, FLANGE_B)

    def unit(self, translational: str) -> str:
        return self.units.get(translational, translational)

    def flange(self, flange: str) -> tuple[str, str, str]:
        """(position, velocity, acceleration) inputs of a flange."""
        return port(flange, self.position), port(flange, self.velocity), port(flange, ACCELERATION)

    @property
    def flange_inputs(self) -> tuple[str, str, str, str]:
        """flange_a's position and velocity, flange_b's (what the law depends on)."""
        return (*self.flange(self.flanges[0])[:2], *self.flange(self.flanges[1])[:2])

    def other(self, flange: str) -> str:
        """The other of the two flanges."""
        return self.flanges[1] if flange == self.flanges[0] else self.flanges[0]


TRANSLATIONAL = Quantities(POSITION, VELOCITY, FORCE, "s_rel", "v_rel", "f", {}, ("position", "velocity"),
                           (" (marker m0 coordinate)", " (marker m1 coordinate)"))
#: MSL's Rotational names (flange_a.phi, w, tau; phi_rel, w_rel, tau) in rad, rad/s, N.m
ROTATIONAL = Quantities(ANGLE, ANGULAR_VELOCITY, TORQUE, "phi_rel", "w_rel", TORQUE, ROTATIONAL_UNITS,
                        ("rotation angle", "angular velocity"))


def connector_inputs(q: Quantities) -> tuple[Input, ...]:
    """The flange inputs of a 1D connector: each flange's position and velocity, then both accelerations."""
    inputs = []
    for flange, marker in zip(q.flanges, q.markers):
        position, velocity, _ = q.flange(flange)
        inputs += [Input(position, 0.0, q.unit("m"), f"Absolute {q.words[0]} of {flange}{marker}"),
                   Input(velocity, 0.0, q.unit("m/s"), f"Absolute {q.words[1]} of {flange}")]
    return tuple(inputs) + tuple(
        Input(port(x, ACCELERATION), 0.0, q.unit("m/s2"),
              f"Acceleration of {x} (only for {q.other(x)}.{q.force}_rate; linear-implicit coupling)")
        for x in q.flanges)


def flange_force_outputs(q: Quantities) -> tuple[Output, ...]:
    """The cut forces, their rates from the other flange's motion and the tangents, in this order."""
    word = "force" if q.force == FORCE else "torque"
    first, second = q.flanges
    return (
        Output(port(first, q.force), q.unit("N"), f"Cut {word} at {first} (= -factor0*{q.element_force})",
               q.flange_inputs),
        Output(port(second, q.force), q.unit("N"), f"Cut {word} at {second} (= +factor1*{q.element_force})",
               q.flange_inputs),
    ) + tuple(
        Output(port(x, q.force + RATE), q.unit("N/s"), f"Rate of {x}.{q.force} from the motion of {y} alone "
               f"(d({x}.{q.force})/d({y}.{q.position})*{y}.{q.velocity} + d({x}.{q.force})/d({y}.{q.velocity})*{y}.a)",
               q.flange_inputs + (port(y, ACCELERATION),))
        for x, y in (q.flanges, q.flanges[::-1])
    ) + tuple(
        Output(port(x, tangent), q.unit(unit), f"Tangent {word} d({x}.{q.force})/d({x}.{quantity}), for "
               "linear-implicit coupling", q.flange_inputs)
        for x in q.flanges
        for tangent, unit, word, quantity in ((STIFFNESS_TANGENT, "N/m", "stiffness", q.position),
                                              (DAMPING_TANGENT, "N.s/m", "damping", q.velocity)))


def connector_partials(q: Quantities) -> tuple[tuple[str, str], ...]:
    """The analytic partials of a 1D connector (components/partials.py), in ``Connector.partial_values``'s order."""
    first, second = q.flanges
    (s_a, v_a, a_a), (s_b, v_b, a_b) = q.flange(first), q.flange(second)
    forces = (q.element_force, port(first, q.force), port(second, q.force))
    return ((q.relative_position, s_a), (q.relative_position, s_b), (q.relative_velocity, v_a),
            (q.relative_velocity, v_b)) + tuple(
        (unknown, known) for unknown in forces for known in (s_a, s_b, v_a, v_b)
    ) + ((port(first, q.force + RATE), a_b), (port(second, q.force + RATE), a_a))


S_A, V_A, A_A = TRANSLATIONAL.flange(FLANGE_A)
S_B, V_B, A_B = TRANSLATIONAL.flange(FLANGE_B)
FLANGE_INPUT_NAMES = TRANSLATIONAL.flange_inputs
#: the flange inputs of every translational connector (Exudyn marker m0 = flange_a, m1 = flange_b)
CONNECTOR_INPUTS = connector_inputs(TRANSLATIONAL)
#: relative size of the central-difference step for force derivatives
DIFFERENCE_STEP = 1e-7
#: the analytic partials of every translational connector, in ``partial_values``'s order
CONNECTOR_PARTIALS = connector_partials(TRANSLATIONAL)


class Connector(Component, ABC):
    """Base of the 1D connectors: the port algebra (MSL's PartialCompliant). It declares and computes
    ``s_rel``, ``v_rel``, ``f``, the flange forces and the tangents; a connector module gives its
    ``parameters``, ``element_force`` (and analytic ``force_derivatives`` where it has them) and, for
    outputs of its own, ``law_outputs`` (declared after ``f``) with their values from ``law_parts``,
    and ``state_outputs`` read from ``self.state``, and event indicators ``indicator_outputs`` (declared
    last, values from ``indicators``). Elements with gear factors set ``geared`` and override ``factors``.
    A rotational connector with MSL's Rotational names (``phi_rel``, ``w_rel``, ``tau``, ``flange_x.phi``, ...)
    subclasses ``RotationalConnector``; the names are its ``quantities``.
    """

    quantities: ClassVar[Quantities] = TRANSLATIONAL
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
        s_a, v_a, s_b, v_b = self.quantities.flange_inputs
        return (f1 * vals[s_b] - f0 * vals[s_a], f1 * vals[v_b] - f0 * vals[v_a])

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
        vals, force = self.values, self.quantities.force
        (_, v_a, a_a), (_, v_b, a_b) = self.quantities.flange(FLANGE_A), self.quantities.flange(FLANGE_B)
        aa, bb, ab = f0 * f0, f1 * f1, -f0 * f1  # the products the outputs share (left to right, as written out)
        return {f"flange_a.{force}": -f0 * f, f"flange_b.{force}": f1 * f,
                "flange_a.c": aa * f_q, "flange_a.d": aa * f_v, "flange_b.c": bb * f_q, "flange_b.d": bb * f_v,
                f"flange_a.{force}_rate": ab * (f_q * vals[v_b] + f_v * vals[a_b]),
                f"flange_b.{force}_rate": ab * (f_q * vals[v_a] + f_v * vals[a_a])}

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
        names = self.quantities
        outputs = {names.relative_position: q, names.relative_velocity: v, names.element_force: f}
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
    q = cls.quantities
    s_a, v_a, s_b, v_b = q.flange_inputs
    if cls.geared:
        s_rel, v_rel = f"factor1*{s_b} - factor0*{s_a}", f"factor1*{v_b} - factor0*{v_a}"
    else:
        s_rel, v_rel = f"{s_b} - {s_a}", f"{v_b} - {v_a}"
    return (
        Output(q.relative_position, q.unit("m"), f"Relative coordinate {s_rel}", (s_a, s_b)),
        Output(q.relative_velocity, q.unit("m/s"), f"Relative velocity {v_rel}", (v_a, v_b)),
        Output(q.element_force, q.unit("N"), cls.force_description, q.flange_inputs),
    ) + cls.law_outputs + flange_force_outputs(q) + cls.state_outputs + cls.indicator_outputs


class RotationalConnector(Connector, ABC):
    """A 1D connector with MSL's Rotational names: ``flange_x.phi`` [rad], ``flange_x.w`` [rad/s], ``flange_x.a``
    [rad/s2] in, ``phi_rel``, ``w_rel``, ``tau`` [N.m] (tension positive, MSL's sign) and ``flange_x.tau`` out;
    the same port algebra (components/native/connector.c) as a translational connector's."""

    quantities = ROTATIONAL
    inputs = connector_inputs(ROTATIONAL)
    partial_pattern = connector_partials(ROTATIONAL)
    force_description = "Torque tau (positive = tension)"
