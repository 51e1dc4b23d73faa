"""Translational sources: a force on a flange, and prescribed motion (Modelica.Mechanics.Translational.Sources).

Force (MSL ``Sources.Force``): input ``f`` [N], the force that drives the flange in +s; output
``flange.f = −f``, MSL's own equation. In our convention (components/base.py ``SIGN_CONVENTION``) an
element outputs its cut force on the flange and the body wired there applies its negative, so a Mass
whose ``flange_a.f`` (or ``flange_b.f``) is wired to ``force.flange.f`` gets ``m·a = −(−f) = +f``: a
positive ``f`` pushes the body in +s, as in Modelica (where the connection gives ``mass.flange_a.f = f``).
Optional input ``f_rate`` [N/s] (wired, or derived by every master from the signal wired to ``f``) is df/dt
over the coming step; ``flange.f_rate = −f_rate``
then lets a body integrate the force as a first-order hold under ``linear-implicit`` (which wires a
signal's ``y_rate -> f_rate`` and ``flange.f_rate -> flange_x.f_rate`` by name): a ramp force is
integrated exactly. A waveform force is a signal source wired to ``f`` rather than a Force with waveform
parameters: one Force serves every waveform (Sine, Ramp, Table, another FMU's output), and with the rate
wired the body sees what a built-in waveform could give it over a step. ``Torque`` is the rotational twin
(``tau``, ``flange.tau = −tau`` [N.m]). ConstantForce (MSL ``Sources.ConstantForce``): the parameter
``f_constant`` [N] as a Force's input, ``flange.f = −f_constant``, ``flange.f_rate = 0``: a positive one drives the
flange in +s, a negative one is a load in +s (a body's weight along +s up: ``f_constant = −m·g``).
ConstantTorque (MSL Rotational ``Sources.ConstantTorque``) is its rotational twin: ``tau_constant`` [N.m],
``flange.tau = −tau_constant``, ``flange.tau_rate = 0``.

Motion sources have outputs ``s``, ``v``, ``a`` (MSL's variables) and the same at ``flange.s``,
``flange.v``, ``flange.a`` for a connector's flange inputs (``flange.a`` serves linear-implicit coupling).
The reaction force is the output of whatever element is wired to the flange. A motion source drives a
connector, not a body (a body integrates its own state).

- ConstantSpeed: ``v = v_fixed``, ``s = s_start + v_fixed·(t − t_start)`` (closed form), ``a = 0``.
- Position (MSL ``exact = true``): ``s = s_ref``, ``v = s_ref_rate``, ``a = s_ref_rate_rate``. An FMU
  cannot differentiate an input signal, so the reference's derivatives are inputs: a signal source's
  ``y_rate``/``y_rate_rate``, which every master wires to them where the scenario wires ``y -> s_ref`` and
  not these (mechfmu's ``signal_derivatives``; a source without them is warned about, ``v`` and ``a`` then
  0). Chosen over a Position with a built-in waveform: one Position serves every signal source (Sine, Ramp,
  Table, an external FMU that outputs its derivatives) with exact values at the communication points, and
  MSL's non-exact filter (``f_crit``) is not needed.
- Speed (MSL ``exact = true``): ``v = v_ref``, ``a = v_ref_rate``, ``s = s_start + ∫v dt`` integrated
  over each step as ``s += v_ref·h + v_ref_rate·h²/2`` (exact when v_ref is linear over the step; with
  ``v_ref_rate`` unwired, v_ref is held).
- Accelerate (MSL ``Sources.Accelerate``): ``a = a_ref``, ``v = v_start + ∫a``, ``s = s_start + ∫v``,
  integrated over each step as ``v += a·h + j·h²/2``, ``s += v·h + a·h²/2 + j·h³/6`` with ``j = a_ref_rate``
  (0 unless wired): exact for a held (or, with j, linear) a_ref, e.g. ``s = s0 + v0·t + a·t²/2``.

Parameters: ``v_fixed`` [m/s], ``s_start`` [m], ``v_start`` [m/s] (writing a start value moves the state).

Model Exchange: Speed's state ``s`` (der = v_ref), Accelerate's ``s``, ``v`` (der = v, a_ref); the rate inputs
serve a co-simulation step only. Force, Torque, ConstantForce, Position and ConstantSpeed have no state.
"""
from __future__ import annotations

from typing import ClassVar

from .base import Component, Input, Output, Param
from .native_component import NativeComponent
from .ports import ACCELERATION, FLANGE, FORCE, POSITION, RATE, TORQUE, VELOCITY, port

S, V, A = POSITION, VELOCITY, ACCELERATION


def motion_outputs(depends: dict[str, tuple[str, ...]]) -> tuple[Output, ...]:
    """``s``, ``v``, ``a`` and ``flange.s/.v/.a``, each depending on the inputs ``depends`` gives it."""
    words = {S: ("m", "position"), V: ("m/s", "velocity"), A: ("m/s2", "acceleration")}
    return tuple(Output(name, unit, f"Absolute {word} of the flange", depends[q])
                 for q, (unit, word) in words.items() for name in (q, port(FLANGE, q)))


class ConstantSpeed(NativeComponent, Component):
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


def force_variables(load: str, unit: str, word: str) -> tuple[tuple[Input, ...], tuple[Output, ...]]:
    """Inputs ``load``, ``load_rate`` and outputs ``flange.load``, ``flange.load_rate`` of a force source."""
    inputs = (Input(load, 0.0, unit, f"Driving {word} acting on the flange in its positive direction"),
              Input(load + RATE, 0.0, f"{unit}/s", f"Time derivative of {load} over the step (optional; "
                    "wired by linear-implicit coupling from a signal's y_rate)"))
    outputs = (Output(port(FLANGE, load), unit, f"Cut {word} at the flange (= -{load})", (load,)),
               Output(port(FLANGE, load) + RATE, f"{unit}/s", f"Rate of flange.{load} (= -{load}_rate)",
                      (load + RATE,)))
    return inputs, outputs


class Force(NativeComponent, Component):
    description = "External force on a flange, from an input signal (flange.f = -f: pushes a body in +s)"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Translational.Sources.Force"
    example_parameters: ClassVar[dict] = {}  # MSL's Force has no parameters (useSupport is structural)
    inputs, outputs = force_variables(FORCE, "N", "force")
    load: ClassVar[str] = FORCE


class ConstantForce(NativeComponent, Component):
    description = "Constant force on a flange (flange.f = -f_constant: a positive one pushes a body in +s)"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Translational.Sources.ConstantForce"
    example_parameters = {"f_constant": -19.62}  # the weight of 2 kg along +s up
    parameters = (Param("f_constant", 0.0, "N", "Nominal force, driving the flange in +s (negative: a load in +s, "
                        "e.g. a weight -m*g)"),)
    outputs = (Output(port(FLANGE, FORCE), "N", "Cut force at the flange (= -f_constant)"),
               Output(port(FLANGE, FORCE) + RATE, "N/s", "Rate of flange.f (= 0)"))


class Torque(Force):
    description = "External torque on a flange, from an input signal (flange.tau = -tau)"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Rotational.Sources.Torque"
    inputs, outputs = force_variables(TORQUE, "N.m", "torque")
    load = TORQUE


class ConstantTorque(NativeComponent, Component):
    description = "Constant torque on a flange (flange.tau = -tau_constant: a positive one drives a body in +phi)"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Rotational.Sources.ConstantTorque"
    example_parameters = {"tau_constant": 2.5}
    parameters = (Param("tau_constant", 0.0, "N.m", "Constant driving torque in direction of rotation (negative: "
                        "a braking load)"),)
    outputs = (Output(port(FLANGE, TORQUE), "N.m", "Cut torque at the flange (= -tau_constant)"),
               Output(port(FLANGE, TORQUE) + RATE, "N.m/s", "Rate of flange.tau (= 0)"))


class Position(NativeComponent, Component):
    description = "Flange moved along a reference position s_ref (exact: v and a from its derivative inputs)"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Translational.Sources.Position (exact = true)"
    example_parameters: ClassVar[dict] = {}  # exact = true is the only mode; f_crit is not needed
    inputs = (
        Input("s_ref", 0.0, "m", "Reference position of the flange"),
        Input("s_ref_rate", 0.0, "m/s", "Time derivative of s_ref (the flange velocity; wire a signal's y_rate)"),
        Input("s_ref_rate_rate", 0.0, "m/s2",
              "Second time derivative of s_ref (the flange acceleration; wire a signal's y_rate_rate)"),
    )
    outputs = motion_outputs({S: ("s_ref",), V: ("s_ref_rate",), A: ("s_ref_rate_rate",)})


class Speed(NativeComponent, Component):
    description = "Flange moved at a reference speed v_ref (exact), its position integrated over each step"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Translational.Sources.Speed (exact = true)"
    example_parameters = {"s_start": 0.2}
    parameters = (Param("s_start", 0.0, "m", "Initial position of the flange", moves_state="s"),)
    inputs = (
        Input("v_ref", 0.0, "m/s", "Reference speed of the flange"),
        Input("v_ref_rate", 0.0, "m/s2", "Time derivative of v_ref (the flange acceleration; wire a signal's "
              "y_rate)"),
    )
    outputs = motion_outputs({S: (), V: ("v_ref",), A: ("v_ref_rate",)})
    initial_state = {"s": 0.0}

    continuous_states = ("s",)
    state_units = ("m",)
    outputs_on_states: ClassVar[dict[str, tuple[str, ...]] | None] = {S: ("s",), port(FLANGE, S): ("s",)}
    derivatives_on: ClassVar[dict[str, tuple[str, ...]] | None] = {"s": ("v_ref",)}


class Accelerate(NativeComponent, Component):
    description = "Flange moved with a reference acceleration a_ref, s and v integrated exactly over each step"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Translational.Sources.Accelerate"
    example_parameters = {"s_start": -0.1, "v_start": 0.4}
    parameters = (
        Param("s_start", 0.0, "m", "Initial position of the flange", moves_state="s"),
        Param("v_start", 0.0, "m/s", "Initial velocity of the flange", moves_state="v"),
    )
    inputs = (
        Input("a_ref", 0.0, "m/s2", "Reference acceleration of the flange"),
        Input("a_ref_rate", 0.0, "m/s3", "Time derivative of a_ref over the step (optional; wire a signal's y_rate)"),
    )
    outputs = motion_outputs({S: (), V: (), A: ("a_ref",)})
    initial_state = {"s": 0.0, "v": 0.0}

    continuous_states = ("s", "v")
    state_units = ("m", "m/s")
    outputs_on_states: ClassVar[dict[str, tuple[str, ...]] | None] = {
        name: (q,) for q in (S, V) for name in (q, port(FLANGE, q))}
    derivatives_on: ClassVar[dict[str, tuple[str, ...]] | None] = {"s": ("state.v",), "v": ("a_ref",)}

