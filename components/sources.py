"""Motion sources (Modelica.Mechanics.Translational.Sources.ConstantSpeed semantics).

ConstantSpeed: flange.v = v_fixed, flange.s = s_start + v_fixed·(t − t_start), with t the
component's time (its last communication point). Parameters ``v_fixed`` [m/s], ``s_start`` [m].
The flange's reaction force is the output of whatever element is wired to it.
"""
from __future__ import annotations

from .base import Component, Output, Param
from .ports import FLANGE, POSITION, VELOCITY, port


class ConstantSpeed(Component):
    description = "Flange moved at a constant speed"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Translational.Sources.ConstantSpeed"
    example_parameters = {"v_fixed": 0.5, "s_start": 0.1}
    parameters = (
        Param("v_fixed", 1.0, "m/s", "Fixed speed of the flange"),
        Param("s_start", 0.0, "m", "Position of the flange at the start time"),
    )
    outputs = (
        Output(port(FLANGE, POSITION), "m", "Absolute position of the flange"),
        Output(port(FLANGE, VELOCITY), "m/s", "Absolute velocity of the flange"),
    )
    initial_state = {"t_start": 0.0}

    def initialize(self, start_time: float = 0.0) -> None:
        super().initialize(start_time)
        self.state["t_start"] = self.time

    def compute_outputs(self) -> dict[str, float]:
        v = self.values["v_fixed"]
        return {port(FLANGE, POSITION): self.values["s_start"] + v * (self.time - self.state["t_start"]),
                port(FLANGE, VELOCITY): v}
