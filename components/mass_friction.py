"""MassWithStopAndFriction: Modelica.Mechanics.Translational.Components.MassWithStopAndFriction (MSL 4.1), a sliding
mass with hard stops and Stribeck friction to the housing, with MSL's names, its state machine
(PartialFrictionWithStop) and its inelastic stops. It carries its mass, so its locked force is the reaction of its own
equation of motion: no master solves anything for it, and its co-simulation FMU integrates its hybrid motion exactly
(to 1e-10) over a step with the loads held, an event at its start (the loads may have jumped).

    m·a = F − f,   F = f_drive − Σ flange_x.f (the loads, as ``Mass``'s),   v = der(s),   a = der(v)
    flange_a.s = s − L/2,   flange_b.s = s + L/2
    f0 = F_Coulomb + F_Stribeck,   f0_max = 1.001·f0,   free = f0 <= 0 and F_prop <= 0 and smin + L/2 < s < smax − L/2

Friction force, the discrete state (``mode``, ``locked``, ``startForward``, ``startBackward``, ``free``) held:

    f = sa (the reaction: a = 0, so f = F)                                 locked
        0                                                                   free
        F_prop·v + F_Coulomb + F_Stribeck                                   startForward
        F_prop·v − F_Coulomb − F_Stribeck                                   startBackward
        F_prop·v + F_Coulomb + F_Stribeck·exp(−fexp·|v|)                    mode = 1
        F_prop·v − F_Coulomb − F_Stribeck·exp(−fexp·|v|)                    otherwise
    sa = F (locked), a (free), a + f0_max (startForward or mode = 1), a − f0_max (otherwise)

An event iteration evaluates PartialFrictionWithStop's equations (PartialFriction's, a start of sliding and a
sliding mode only away from the stop it would move into):

    startForward  = pre(mode) = 0 and (sa > f0_max or pre(startForward) and sa > f0) and s < smax − L/2
                    or pre(mode) = −1 and v > v_small or initial() and v > 0
    startBackward = pre(mode) = 0 and (sa < −f0_max or pre(startBackward) and sa < −f0) and s > smin + L/2
                    or pre(mode) = 1 and v < −v_small or initial() and v < 0
    locked = not free and not (pre(mode) = 1 or startForward or pre(mode) = −1 or startBackward)
    mode = 2 if free, else 1 if (pre(mode) in {1, 2} or startForward) and v > 0 and s < smax − L/2,
           else −1 if (pre(mode) in {−1, 2} or startBackward) and v < 0 and s > smin + L/2, else 0

and repeats it until nothing changes (the mixed system is the component's own). The stops: ``stopped`` = −1 where
s <= smin + L/2, +1 where s >= smax − L/2, else 0; when it becomes non-zero, s is reset onto the stop and v to 0
(MSL's reinit: the impact is inelastic; at the stop the mass is held by the locked friction, whose reaction is then
the stop's force). The initial position must be within the stops (MSL's assert).

Event indicators: ``indicator.lower`` = s − (smin + L/2), ``indicator.upper`` = smax − L/2 − s (a stop where
<= 0), ``indicator.v`` = v while sliding or starting (1 locked or free), ``indicator.slip`` = f0_max − |F| locked
(at the upper stop F + f0_max, at the lower f0_max − F: only a start away from the stop can happen), sa
− f0 in startForward, −f0 − sa in startBackward, 1 + v/v_small sliding forward (MSL's v < −v_small), 1 − v/v_small
sliding backward, 1 otherwise.

Parameters as MSL's (its start values as defaults): ``m`` [kg] > 0, ``L`` [m] >= 0, ``s_start`` [m], ``v_start``
[m/s], ``smax`` [m], ``smin`` [m], ``v_small`` [m/s] (1e-3), ``F_prop`` [N.s/m] >= 0, ``F_Coulomb`` [N],
``F_Stribeck`` [N], ``fexp`` [s/m] >= 0. MSL's heat port is ``lossPower`` = f·v [W].
"""
from __future__ import annotations

from typing import ClassVar

from .base import Component, Output, Param
from .friction import DISCRETE
from .mass import MASS_VARIABLES
from .modelica import ModelicaEquivalent
from .native_component import NativeComponent
from .ports import indicator

#: the loads and the drive (Mass's inputs without its linear-implicit tangents, which this body does not use)
LOADS = tuple(i for i in MASS_VARIABLES[0] if i.name == "f_drive" or i.name.endswith(".f"))
LOAD_NAMES = tuple(i.name for i in LOADS)


class MassWithStopAndFriction(NativeComponent, Component):
    description = "Modelica MassWithStopAndFriction: a sliding mass with hard stops and Stribeck friction"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Translational.Components.MassWithStopAndFriction"
    example_parameters = {"m": 1.0, "L": 0.2, "s_start": 0.1, "v_start": 2.0, "smax": 0.9, "smin": -0.5,
                          "F_prop": 1.0, "F_Coulomb": 5.0, "F_Stribeck": 10.0, "fexp": 2.0}
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("m", 1.0, "kg", "Mass", min=0.0, min_exclusive=True),
        Param("L", 0.0, "m", "Length of the component, from left flange to right flange", min=0.0),
        Param("s_start", 0.0, "m", "Initial absolute position of the centre of mass", moves_state="s"),
        Param("v_start", 0.0, "m/s", "Initial absolute velocity", moves_state="v"),
        Param("smax", 25.0, "m", "Right stop for (right end of) sliding mass"),
        Param("smin", -25.0, "m", "Left stop for (left end of) sliding mass"),
        Param("v_small", 1.0e-3, "m/s", "Relative velocity near to zero", min=0.0, min_exclusive=True),
        Param("F_prop", 1.0, "N.s/m", "Velocity dependent friction", min=0.0),
        Param("F_Coulomb", 5.0, "N", "Constant friction: Coulomb force"),
        Param("F_Stribeck", 10.0, "N", "Stribeck effect"),
        Param("fexp", 2.0, "s/m", "Exponential decay", min=0.0),
    )
    inputs = LOADS
    outputs = MASS_VARIABLES[1] + (
        Output("f", "N", "Friction force (positive if directed against a positive v; the reaction while locked)",
               LOAD_NAMES),
        Output("sa", "1", "Path parameter of the friction characteristic f = f(a)", LOAD_NAMES),
        Output("f0", "N", "Friction force for v = 0 and forward sliding"),
        Output("f0_max", "N", "Maximum friction force for v = 0 and locked"),
        Output("lossPower", "W", "Power dissipated by friction f*v (heatPort.Q_flow = -lossPower)", LOAD_NAMES),
        Output("mode", "1", "Mode of friction (-1 backward sliding, 0 stuck, 1 forward sliding, 2 free, 3 unknown)"),
        Output("locked", "1", "1 if v = 0 and not sliding (the friction force is the reaction), else 0"),
        Output("startForward", "1", "1 if v = 0 and start of forward sliding, else 0"),
        Output("startBackward", "1", "1 if v = 0 and start of backward sliding, else 0"),
        Output("free", "1", "1 if the friction is not active, else 0"),
        Output("stopped", "1", "Mode of stop (-1 at smin, 0 none, +1 at smax)"),
        Output(indicator("lower"), "m", "Event indicator s - (smin + L/2): at the lower stop where <= 0"),
        Output(indicator("upper"), "m", "Event indicator smax - L/2 - s: at the upper stop where <= 0"),
        Output(indicator("v"), "m/s", "Event indicator v while sliding or starting; 1 locked or free"),
        Output(indicator("slip"), "1", "Event indicator: f0_max - |F| locked (at a stop the margin away from it), "
               "sa - f0 in startForward, -f0 - sa in startBackward, 1 + v/v_small forward, 1 - v/v_small backward, "
               "1 otherwise", LOAD_NAMES),
    )
    modelica = (ModelicaEquivalent(
        "Modelica.Mechanics.Translational.Components.MassWithStopAndFriction",
        (("m", "m"), ("L", "L"), ("s.start", "s_start"), ("v.start", "v_start"), ("smax", "smax"), ("smin", "smin"),
         ("v_small", "v_small"), ("F_prop", "F_prop"), ("F_Coulomb", "F_Coulomb"), ("F_Stribeck", "F_Stribeck"),
         ("fexp", "fexp")), (),
        "the same law, state machine, hard inelastic stops (reinit), names and signs; its flanges' loads as Mass's "
        "(f_drive, flange_a.f, flange_b.f and further ports); the heat port's heatPort.Q_flow is -lossPower"),)
    continuous_states = ("s", "v")
    state_units: ClassVar[tuple[str, ...]] = ("m", "m/s")
    initial_state = {"s": 0.0, "v": 0.0, **DISCRETE, "stopped": 0.0}
    #: the positions and the stops' indicators move with s; the speeds and everything the friction law gives with v
    outputs_on_states: ClassVar[dict[str, tuple[str, ...]] | None] = {
        **{name: ("s",) for name in ("s", "flange_a.s", "flange_b.s", "indicator.lower", "indicator.upper")},
        **{name: ("v",) for name in ("v", "flange_a.v", "flange_b.v", "a", "flange_a.a", "flange_b.a", "f", "sa",
                                      "lossPower", "indicator.v", "indicator.slip")}}
    derivatives_on: ClassVar[dict[str, tuple[str, ...]] | None] = {"s": ("state.v",),
                                                                    "v": ("state.v", *LOAD_NAMES)}
