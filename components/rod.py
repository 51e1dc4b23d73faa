"""Rod: a rigid, massless length between two flanges (Modelica.Mechanics.Translational.Components.Rod).

Law (MSL): ``flange_b.s = flange_a.s + L``, ``0 = flange_a.f + flange_b.f``. Parameter ``L`` [m] (any
sign: a negative L puts flange_b before flange_a).

In a co-simulation a connection is a directed wire, so the rod is directed: a body (or any position
source) drives ``flange_a``, the element the rod carries is wired to ``flange_b``. Inputs: the body's
``flange_a.s``, ``.v``, ``.a`` and the carried element's cut force at its flange, ``flange_b.f``, with its
linear-implicit tangents ``flange_b.c``, ``.d``, ``.f_rate``. Outputs: ``flange_b.s = flange_a.s + L``,
``flange_b.v = flange_a.v``, ``flange_b.a = flange_a.a`` for the element, and for the body the rod's own
cut force ``flange_a.f = −(−flange_b.f) = flange_b.f`` (MSL's flange_b.f is the negative of the
element's, which the connection sums to zero) with the tangents passed on unchanged: a rigid offset
changes no derivative. The body thus moves exactly as if the element were wired to it with its
flange shifted by L. Everything is feed-through; the rod has no state.

MSL has no rotational rod; a rotational scenario puts an angle offset into the connector's ``offset``.
"""
from __future__ import annotations

from .base import Component, Input, Output, Param
from .modelica import ModelicaEquivalent
from .native_component import NativeComponent
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
    port,
)

#: (quantity, unit, words) passed from flange_a (the body) to flange_b (the element)
MOTION = ((POSITION, "m", "position"), (VELOCITY, "m/s", "velocity"), (ACCELERATION, "m/s2", "acceleration"))
#: (quantity, unit, words) passed from flange_b (the element) to flange_a (the body)
LOAD = ((FORCE, "N", "cut force"), (STIFFNESS_TANGENT, "N/m", "stiffness tangent ∂f/∂s"),
        (DAMPING_TANGENT, "N.s/m", "damping tangent ∂f/∂v"), (FORCE + RATE, "N/s", "force rate"))


class Rod(NativeComponent, Component):
    description = "Rigid massless rod of length L: flange_b.s = flange_a.s + L, the force passed through"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Translational.Components.Rod"
    example_parameters = {"L": 0.25}
    parameters = (Param("L", 0.0, "m", "Length of the rod (flange_b.s − flange_a.s)"),)
    modelica = (ModelicaEquivalent("Modelica.Mechanics.Translational.Components.Rod", (("L", "L"),), (),
                                   "directed: a body drives flange_a, the element it carries is wired to flange_b"),)
    inputs = (tuple(Input(port(FLANGE_A, q), 0.0, unit, f"Absolute {words} of flange_a (from the body)")
                    for q, unit, words in MOTION)
              + tuple(Input(port(FLANGE_B, q), 0.0, unit, f"The element's {words} at the flange wired to flange_b")
                      for q, unit, words in LOAD))
    outputs = (tuple(Output(port(FLANGE_B, q), unit, f"Absolute {words} of flange_b (= flange_a's"
                            + (" + L)" if q == POSITION else ")"), (port(FLANGE_A, q),))
                     for q, unit, words in MOTION)
               + tuple(Output(port(FLANGE_A, q), unit, f"The rod's {words} at flange_a for the body (= flange_b's "
                              "input: the element's, passed through)", (port(FLANGE_B, q),))
                       for q, unit, words in LOAD))

