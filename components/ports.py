"""The port vocabulary: every variable name that components and the master agree on.

A 1D element has two flanges, ``flange_a`` and ``flange_b`` (Exudyn markers m0, m1). A flange
variable is ``<flange>.<quantity>``:

    s, v, a      position [m], velocity [m/s], acceleration [m/s2]   (rotational: phi, w, a)
    f            cut force [N] of the element at that flange          (rotational: tau [N.m])
    c, d         tangents ∂f/∂s [N/m], ∂f/∂v [N.s/m] of the element at that flange
    f_rate       rate of f from the other flange's motion [N/s]       (rotational: tau_rate)

A single-flange element (Fixed, sources) uses ``flange``. Linear-implicit coupling pairs a wired force
``A.x.f -> B.y.f`` with ``x.c -> y.c``, ``x.d -> y.d``, ``x.f_rate -> y.f_rate`` and a wired position
``B.y.s -> A.x.s`` with ``y.a -> x.a`` (``mechfmu.master.algorithms.tangent_connections``).

The suffix ``_rate`` means the time derivative over the coming step: a signal source outputs ``y``,
``y_rate`` and ``y_rate_rate`` (right derivatives at its time), ``Force`` reads ``f`` and ``f_rate``,
``Position`` ``s_ref``, ``s_ref_rate``, ``s_ref_rate_rate``. Every master wires a signal's ``y_rate -> X_rate``
where ``y -> X`` is wired and ``X_rate`` is not (mechfmu's ``signal_derivatives``); linear-implicit coupling
also wires a port's ``X_rate -> Y_rate`` along a wire ``X -> Y`` into a port where both exist.

A constraint (CoordinateConstraint) is recognised by its input ``lambda`` (the force a master solves,
with ``lambda_rate`` its rate over a step) and output ``constraintEquation`` (the residual to drive to
0; ``residual_v`` at velocity level); ``velocityLevel`` and ``activeConnector`` are its parameters.

A component with a switch (a contact made or lost, stick/slip) outputs event indicators
``indicator.<what>``: continuous where the switch is not, >= 0 on one side of it and < 0 on the other,
evaluated at the inputs the component holds (and at the switching state those inputs give), 0 while
the switch is off. A master that locates events (option ``events``) steps to their zeros.

A component whose switch changes a stored state (Exudyn's data variables) outputs ``switchingError``
[N], the force jump of that change. With ``immediateSwitching`` it is the jump of the switch the
outputs make at the inputs held now, so after a master's exchange it tells whether the step just
taken switched; a master with ``switching_tolerance`` takes such a step again up to the switch.

This module is the one place these names are spelled; the components and ``mechfmu`` import them.
"""
from __future__ import annotations

from typing import Any, overload

FLANGE_A, FLANGE_B, FLANGE = "flange_a", "flange_b", "flange"
#: the housing flange of an element between a flange and the housing (MSL's support; unconnected: fixed at 0, MSL's
#: useSupport = false)
SUPPORT = "support"
POSITION, VELOCITY, ACCELERATION, FORCE = "s", "v", "a", "f"
ANGLE, ANGULAR_VELOCITY, TORQUE = "phi", "w", "tau"
STIFFNESS_TANGENT, DAMPING_TANGENT = "c", "d"
RATE = "_rate"

#: a flange force variable ends with one of these (translational, rotational)
FORCE_SUFFIXES = (f".{FORCE}", f".{TORQUE}")
#: a flange position variable ends with one of these
POSITION_SUFFIXES = (f".{POSITION}", f".{ANGLE}")

LAMBDA, LAMBDA_RATE = "lambda", "lambda" + RATE
CONSTRAINT_EQUATION, VELOCITY_RESIDUAL = "constraintEquation", "residual_v"
#: a friction element's locked force for an algebraic-loop solver: connected back to lambda, its fixed point holds
#: the relative acceleration at 0 while locked
LAMBDA_LOOP = "lambda_loop"
VELOCITY_LEVEL, ACTIVE = "velocityLevel", "activeConnector"
#: a friction element's output: 1 while it is locked (a constraint), else 0 (components/friction.py)
LOCKED = "locked"
INDICATOR = "indicator."
SWITCHING_ERROR = "switchingError"
#: a Boolean parameter: the switching state acts at the inputs it is evaluated at (set by an event-locating master)
IMMEDIATE_SWITCHING = "immediateSwitching"


def indicator(what: str) -> str:
    """The event indicator output ``indicator.<what>``."""
    return INDICATOR + what


def port(flange: str, quantity: str) -> str:
    """The variable name ``<flange>.<quantity>``, e.g. ``port(FLANGE_A, FORCE) == "flange_a.f"``."""
    return f"{flange}.{quantity}"


def other(flange: str) -> str:
    """The other flange of a two-flange element."""
    return FLANGE_B if flange == FLANGE_A else FLANGE_A


#: the components of a 3D vector variable ``prefix.x/y/z`` and of a quaternion ``prefix.w/x/y/z`` (scalar first,
#: Simbody's order; a unit quaternion rotates body vectors into the world frame)
AXES = ("x", "y", "z")
QUAT = ("w", "x", "y", "z")
Vec = tuple[float, float, float]
Quat = tuple[float, float, float, float]


class VectorValues:
    """Mixin for a component with vector variables ``prefix.x/y/z`` (quaternions ``prefix.w/x/y/z``)."""

    values: Any  # a Mapping of the component's values

    @overload
    def vector(self, prefix: str, names: tuple[str, str, str] = AXES) -> Vec: ...
    @overload
    def vector(self, prefix: str, names: tuple[str, str, str, str]) -> Quat: ...
    @overload
    def vector(self, prefix: str, names: tuple[str, ...]) -> tuple[float, ...]: ...

    def vector(self, prefix: str, names: tuple[str, ...] = AXES) -> tuple[float, ...]:
        """The values ``prefix.<name>`` for ``names``: a 3-vector by default, a quaternion for QUAT."""
        return tuple(self.values[f"{prefix}.{a}"] for a in names)
