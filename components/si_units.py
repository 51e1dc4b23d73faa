"""SI units of the components (FMI UnitDefinitions) and their Modelica quantity types."""
from __future__ import annotations

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
    "N/m2": {"kg": 1, "m": -1, "s": -2},
    "s/m": {"s": 1, "m": -1},
    "1/m": {"m": -1},
    "1/s": {"s": -1},
    "J": {"kg": 1, "m": 2, "s": -2},
    "N.m/s": {"kg": 1, "m": 2, "s": -3},
}

#: FMI TypeDefinitions (Modelica SIunits names) for the units above.
QUANTITIES: dict[str, tuple[str, str]] = {
    "s": ("Modelica.SIunits.Time", "Time"),
    "kg": ("Modelica.SIunits.Mass", "Mass"),
    "m": ("Modelica.SIunits.Position", "Length"),
    "m/s": ("Modelica.SIunits.Velocity", "Velocity"),
    "m/s2": ("Modelica.SIunits.Acceleration", "Acceleration"),
    "Hz": ("Modelica.SIunits.Frequency", "Frequency"),
    "N": ("Modelica.SIunits.Force", "Force"),
    "N/m": ("Modelica.SIunits.TranslationalSpringConstant", "TranslationalSpringConstant"),
    "N.s/m": ("Modelica.SIunits.TranslationalDampingConstant", "TranslationalDampingConstant"),
    "rad": ("Modelica.SIunits.Angle", "Angle"),
    "rad/s": ("Modelica.SIunits.AngularVelocity", "AngularVelocity"),
    "rad/s2": ("Modelica.SIunits.AngularAcceleration", "AngularAcceleration"),
    "N.m": ("Modelica.SIunits.Torque", "Torque"),
    "N.m/rad": ("Modelica.SIunits.RotationalSpringConstant", "RotationalSpringConstant"),
    "N.m.s/rad": ("Modelica.SIunits.RotationalDampingConstant", "RotationalDampingConstant"),
    "kg.m2": ("Modelica.SIunits.Inertia", "Inertia"),
    "W": ("Modelica.SIunits.Power", "Power"),
    "N/m2": ("Modelica.SIunits.Pressure", "Pressure"),
    "J": ("Modelica.SIunits.Energy", "Energy"),
}
