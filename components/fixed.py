"""Fixed: a flange fixed at the position s0 (Modelica.Mechanics.Translational.Components.Fixed).

Law: flange.s = s0, flange.v = 0. Parameter ``s0`` [m]. The reaction force is the output
``flange_x.f`` of whatever element is wired to it.
"""
from __future__ import annotations

from .base import Component, Output, Param
from .ports import FLANGE, POSITION, VELOCITY, port

S, V = port(FLANGE, POSITION), port(FLANGE, VELOCITY)


class Fixed(Component):
    description = "Flange fixed in the housing at a given position"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Translational.Components.Fixed"
    example_parameters = {"s0": 0.7}
    parameters = (Param("s0", 0.0, "m", "Fixed offset position of housing"),)
    outputs = (
        Output(S, "m", "Absolute position of the fixed flange"),
        Output(V, "m/s", "Absolute velocity of the fixed flange (always 0)"),
    )

    def compute_outputs(self) -> dict[str, float]:
        return {S: self.values["s0"], V: 0.0}
