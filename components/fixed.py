"""Fixed: a flange fixed at the position s0 (Modelica.Mechanics.Translational.Components.Fixed), and its
rotational twin RotationalFixed at the angle phi0 (Modelica.Mechanics.Rotational.Components.Fixed).

Law: flange.s = s0, flange.v = 0 (flange.phi = phi0, flange.w = 0, Inertia's names, wired to a rotational
connector's flange_x.s/.v). Parameter ``s0`` [m] (``phi0`` [rad]). The reaction force is the output
``flange_x.f`` of whatever element is wired to it.
"""
from __future__ import annotations

from .base import Component, Output, Param
from .modelica import ModelicaEquivalent
from .native_component import NativeComponent
from .ports import ANGLE, ANGULAR_VELOCITY, FLANGE, POSITION, VELOCITY, port

S, V = port(FLANGE, POSITION), port(FLANGE, VELOCITY)


class Fixed(NativeComponent, Component):
    description = "Flange fixed in the housing at a given position"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Translational.Components.Fixed"
    example_parameters = {"s0": 0.7}
    parameters = (Param("s0", 0.0, "m", "Fixed offset position of housing"),)
    modelica = (ModelicaEquivalent("Modelica.Mechanics.Translational.Components.Fixed", (("s0", "s0"),)),)
    outputs = (
        Output(S, "m", "Absolute position of the fixed flange"),
        Output(V, "m/s", "Absolute velocity of the fixed flange (always 0)"),
    )


class RotationalFixed(NativeComponent, Component):
    description = "Flange fixed in the housing at a given angle"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Rotational.Components.Fixed"
    example_parameters = {"phi0": 0.3}
    parameters = (Param("phi0", 0.0, "rad", "Fixed offset angle of housing"),)
    modelica = (ModelicaEquivalent("Modelica.Mechanics.Rotational.Components.Fixed", (("phi0", "phi0"),)),)
    outputs = (Output(port(FLANGE, ANGLE), "rad", "Absolute rotation angle of the fixed flange"),
               Output(port(FLANGE, ANGULAR_VELOCITY), "rad/s", "Absolute angular velocity of the fixed flange "
                      "(always 0)"))

