"""Product: Modelica.Blocks.Math.Product (MSL 4.1), a signal times a signal, with the derivatives a signal carries.

    y           = u1·u2
    y_rate      = u1_rate·u2 + u1·u2_rate
    y_rate_rate = u1_rate_rate·u2 + 2·u1_rate·u2_rate + u1·u2_rate_rate

The inputs ``u1``, ``u2`` and the outputs carry no unit (components/signals.py: a signal connects to a variable
of any unit). ``u1_rate``, ``u2_rate`` and their ``_rate_rate`` are the inputs' time derivatives: every master wires
a signal source's ``y_rate`` and ``y_rate_rate`` to them where the scenario wires its ``y`` to ``u1`` or ``u2``
(mechfmu.ssp.unconnected's signal derivatives), so ``y_rate`` and ``y_rate_rate`` are the product's own, and a
Force or Position downstream gets them as from a signal source. MSL's Product has no parameter. No state: the
outputs follow the inputs within a step (feed-through), in co-simulation and Model Exchange alike.
"""
from __future__ import annotations

from typing import ClassVar

from .base import NO_UNIT, Component, Input, Output
from .native_component import NativeComponent

FACTORS = ("u1", "u2")
RATES = tuple(f"{u}_rate" for u in FACTORS)
SECOND_RATES = tuple(f"{u}_rate_rate" for u in FACTORS)


class Product(NativeComponent, Component):
    description = "Product of two signals y = u1*u2, with its time derivatives"
    source = "Modelica Standard Library 4.1, Modelica.Blocks.Math.Product"
    example_parameters: ClassVar[dict] = {}  # MSL's Product has no parameters
    inputs = tuple(Input(u, 0.0, NO_UNIT, f"Connector of Real input signal {u[1]}") for u in FACTORS) + tuple(
        Input(f"{u}{suffix}", 0.0, NO_UNIT, f"{word} of {u} (wired from a signal's y{suffix} by every master)")
        for suffix, word in (("_rate", "Time derivative"), ("_rate_rate", "Second time derivative"))
        for u in FACTORS)
    outputs = (
        Output("y", NO_UNIT, "Connector of Real output signal u1*u2", FACTORS),
        Output("y_rate", NO_UNIT, "Time derivative of y: u1_rate*u2 + u1*u2_rate", FACTORS + RATES),
        Output("y_rate_rate", NO_UNIT, "Second time derivative of y: u1_rate_rate*u2 + 2*u1_rate*u2_rate + "
               "u1*u2_rate_rate", FACTORS + RATES + SECOND_RATES),
    )
