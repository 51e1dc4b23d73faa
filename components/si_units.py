"""SI units of the components (FMI UnitDefinitions), their display units and their Modelica (MSL 4) types."""
from __future__ import annotations

import math

#: the unit of a signal (Modelica's plain ``Real``, e.g. a Sine's ``y``): none. Its variable is written
#: without a unit attribute, and the scenario loader connects it to a variable of any unit, as Modelica does.
NO_UNIT = ""

#: SI units used by the components: name -> BaseUnit exponents (kg, m, s, rad).
UNITS: dict[str, dict[str, int]] = {
    "1": {},
    "s": {"s": 1},
    "kg": {"kg": 1},
    "m": {"m": 1},
    "m/s": {"m": 1, "s": -1},
    "m/s2": {"m": 1, "s": -2},
    "m/s3": {"m": 1, "s": -3},
    "Hz": {"s": -1},
    "N": {"kg": 1, "m": 1, "s": -2},
    "N/m": {"kg": 1, "s": -2},
    "N.s/m": {"kg": 1, "s": -1},
    "rad": {"rad": 1},
    "rad/s": {"rad": 1, "s": -1},
    "rad/s2": {"rad": 1, "s": -2},
    "N.m": {"kg": 1, "m": 2, "s": -2},
    "N.m/rad": {"kg": 1, "m": 2, "s": -2, "rad": -1},
    "N.m.s/rad": {"kg": 1, "m": 2, "s": -1, "rad": -1},
    "kg.m2": {"kg": 1, "m": 2},
    "W": {"kg": 1, "m": 2, "s": -3},
    "N/s": {"kg": 1, "m": 1, "s": -3},
    "Pa": {"kg": 1, "m": -1, "s": -2},
    "N/m2": {"kg": 1, "m": -1, "s": -2},  # = Pa, the name used before MSL 4's; known to scenarios
    "s/m": {"s": 1, "m": -1},
    "1/m": {"m": -1},
    "1/s": {"s": -1},
    "J": {"kg": 1, "m": 2, "s": -2},
    "N.m/s": {"kg": 1, "m": 2, "s": -3},
}

#: FMI TypeDefinitions for the units above: unit -> (the type of the Modelica Standard Library 4, ``Modelica.Units.SI``,
#: whose ``final unit`` it is; that type's quantity). "m" is SI.Position (= SI.Length, flange positions and lengths
#: alike), "kg.m2" SI.Inertia (= SI.MomentOfInertia), "Pa" SI.ModulusOfElasticity (= SI.Stress, no quantity).
QUANTITIES: dict[str, tuple[str, str | None]] = {
    "s": ("Modelica.Units.SI.Time", "Time"),
    "kg": ("Modelica.Units.SI.Mass", "Mass"),
    "m": ("Modelica.Units.SI.Position", "Length"),
    "m/s": ("Modelica.Units.SI.Velocity", "Velocity"),
    "m/s2": ("Modelica.Units.SI.Acceleration", "Acceleration"),
    "Hz": ("Modelica.Units.SI.Frequency", "Frequency"),
    "N": ("Modelica.Units.SI.Force", "Force"),
    "N/m": ("Modelica.Units.SI.TranslationalSpringConstant", "TranslationalSpringConstant"),
    "N.s/m": ("Modelica.Units.SI.TranslationalDampingConstant", "TranslationalDampingConstant"),
    "rad": ("Modelica.Units.SI.Angle", "Angle"),
    "rad/s": ("Modelica.Units.SI.AngularVelocity", "AngularVelocity"),
    "rad/s2": ("Modelica.Units.SI.AngularAcceleration", "AngularAcceleration"),
    "N.m": ("Modelica.Units.SI.Torque", "Torque"),
    "N.m/rad": ("Modelica.Units.SI.RotationalSpringConstant", "RotationalSpringConstant"),
    "N.m.s/rad": ("Modelica.Units.SI.RotationalDampingConstant", "RotationalDampingConstant"),
    "kg.m2": ("Modelica.Units.SI.Inertia", "MomentOfInertia"),
    "W": ("Modelica.Units.SI.Power", "Power"),
    "Pa": ("Modelica.Units.SI.ModulusOfElasticity", None),
    "J": ("Modelica.Units.SI.Energy", "Energy"),
}

#: display units (FMI 2.0 ``DisplayUnit`` of a ``Unit``): unit -> {display unit: factor}, value in the display
#: unit = factor·value (no offset): 1 m = 1000 mm, 1 rad = 180/π deg, 1 rad/s = 180/π deg/s = 60/(2π) rpm.
#: Only for showing values: every value an FMU reads or writes stays in its unit.
DISPLAY_UNITS: dict[str, dict[str, float]] = {
    "m": {"mm": 1000.0},
    "rad": {"deg": 180 / math.pi},
    "rad/s": {"deg/s": 180 / math.pi, "rpm": 30 / math.pi},
}

#: the default display unit of a TypeDefinition, as MSL 4 declares it (``SI.Angle``: ``displayUnit="deg"``)
DEFAULT_DISPLAY_UNITS: dict[str, str] = {"rad": "deg"}
