"""Mass and Inertia: 1D rigid bodies (Modelica Translational.Components.Mass, Rotational.Components.Inertia).

Law (Mass):  m·a = f_drive − fa − fb,   v = der(s),  a = der(v)
where ``fa``/``fb`` are the inputs ``flange_a.f``/``flange_b.f``: the cut force of the element
wired to that flange (its own ``flange_x.f`` output, Modelica sign), which the body receives with
the opposite sign (a Modelica connection sums flows to zero). ``f_drive`` [N] is an external force
acting in +s (Modelica ``Sources.Force``). Flange positions: ``flange_a.s = s − L/2``,
``flange_b.s = s + L/2``; both flanges move with ``v``.

Inertia is the same law in rotation: J·a = tau_drive − flange_a.tau − flange_b.tau with angle
``phi`` [rad], speed ``w`` [rad/s], ``J`` [kg.m2]; both flanges are at ``phi``.

Integration: inputs are held constant over a step (zero-order hold), so the step is exact:
``s ← s + v·h + a·h²/2``, ``v ← v + a·h``.

Parameters: ``m`` [kg] (> 0), ``L`` [m] (≥ 0), ``s_start`` [m], ``v_start`` [m/s] (writing
them moves the state, so the initial state is settable as a parameter, also from SSP/libcosim);
Inertia: ``J``, ``phi_start``, ``w_start``.
Invariant: with fa = −fb (an internal force pair) momentum m·v changes only through f_drive.
"""
from __future__ import annotations

from typing import ClassVar

from .base import Component, Input, Output, Param


def mass_acceleration(m: float, f_drive: float, fa: float, fb: float) -> float:
    """a [m/s2] of a mass m [kg] with drive force f_drive and connected flange forces fa, fb [N]."""
    return (f_drive - fa - fb) / m


def mass_step(s: float, v: float, a: float, h: float) -> tuple[float, float]:
    """Exact position and velocity after h [s] at constant acceleration a."""
    return s + v * h + 0.5 * a * h * h, v + a * h


class Mass(Component):
    description = "1D sliding mass with inertia (Modelica Translational Mass semantics)"
    parameters = (
        Param("m", 1.0, "kg", "Mass of the sliding mass", min=0.0, min_exclusive=True),
        Param("L", 0.0, "m", "Length of the component, from left flange to right flange", min=0.0),
        Param("s_start", 0.0, "m", "Initial absolute position of the centre of mass", moves_state="s"),
        Param("v_start", 0.0, "m/s", "Initial absolute velocity", moves_state="v"),
    )
    inputs = (
        Input("flange_a.f", 0.0, "N", "Cut force of the element connected at flange_a (body receives −flange_a.f)"),
        Input("flange_b.f", 0.0, "N", "Cut force of the element connected at flange_b (body receives −flange_b.f)"),
        Input("f_drive", 0.0, "N", "External driving force acting in +s direction"),
    )
    outputs = (
        Output("s", "m", "Absolute position of the centre of mass"),
        Output("v", "m/s", "Absolute velocity"),
        Output("a", "m/s2", "Absolute acceleration", depends_on=("flange_a.f", "flange_b.f", "f_drive")),
        Output("flange_a.s", "m", "Absolute position of flange_a"),
        Output("flange_a.v", "m/s", "Absolute velocity of flange_a"),
        Output("flange_b.s", "m", "Absolute position of flange_b"),
        Output("flange_b.v", "m/s", "Absolute velocity of flange_b"),
    )
    initial_state = {"s": 0.0, "v": 0.0}
    #: variable names: inertia, position, velocity, flange load, drive
    names: ClassVar[tuple[str, str, str, str, str]] = ("m", "s", "v", "f", "f_drive")

    def acceleration(self) -> float:
        inertia, _, _, load, drive = self.names
        vals = self.values
        return mass_acceleration(vals[inertia], vals[drive], vals[f"flange_a.{load}"], vals[f"flange_b.{load}"])

    def advance(self, current_time: float, step_size: float) -> None:
        st = self.state
        st["s"], st["v"] = mass_step(st["s"], st["v"], self.acceleration(), step_size)

    def compute_outputs(self) -> dict[str, float]:
        _, pos, vel, _, _ = self.names
        s, v, half = self.state["s"], self.state["v"], 0.5 * self.values.get("L", 0.0)
        return {pos: s, vel: v, "a": self.acceleration(),
                f"flange_a.{pos}": s - half, f"flange_a.{vel}": v, f"flange_b.{pos}": s + half, f"flange_b.{vel}": v}


class Inertia(Mass):
    description = "1D rotational inertia (Modelica Rotational Inertia semantics)"
    parameters = (
        Param("J", 1.0, "kg.m2", "Moment of inertia", min=0.0, min_exclusive=True),
        Param("phi_start", 0.0, "rad", "Initial absolute rotation angle", moves_state="s"),
        Param("w_start", 0.0, "rad/s", "Initial absolute angular velocity", moves_state="v"),
    )
    inputs = (
        Input("flange_a.tau", 0.0, "N.m", "Cut torque of the element connected at flange_a (body receives −flange_a.tau)"),
        Input("flange_b.tau", 0.0, "N.m", "Cut torque of the element connected at flange_b (body receives −flange_b.tau)"),
        Input("tau_drive", 0.0, "N.m", "External driving torque acting in +phi direction"),
    )
    outputs = (
        Output("phi", "rad", "Absolute rotation angle"),
        Output("w", "rad/s", "Absolute angular velocity"),
        Output("a", "rad/s2", "Absolute angular acceleration",
               depends_on=("flange_a.tau", "flange_b.tau", "tau_drive")),
        Output("flange_a.phi", "rad", "Absolute rotation angle of flange_a"),
        Output("flange_a.w", "rad/s", "Absolute angular velocity of flange_a"),
        Output("flange_b.phi", "rad", "Absolute rotation angle of flange_b"),
        Output("flange_b.w", "rad/s", "Absolute angular velocity of flange_b"),
    )
    names = ("J", "phi", "w", "tau", "tau_drive")
