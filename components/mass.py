"""Mass: 1D rigid body (Modelica.Mechanics.Translational.Components.Mass semantics).

Law:  m·a = f_drive − fa − fb,   v = der(s),  a = der(v)
where ``fa``/``fb`` are the inputs ``flange_a.f``/``flange_b.f``: the cut force of the element
wired to that flange (its own ``flange_x.f`` output, Modelica sign), which the body receives with
the opposite sign (a Modelica connection sums flows to zero). ``f_drive`` [N] is an external force
acting in +s (Modelica ``Sources.Force``). Flange positions: ``flange_a.s = s − L/2``,
``flange_b.s = s + L/2``; both flanges move with ``v``.

Integration: inputs are held constant over a step (zero-order hold), so the step is exact:
``s ← s + v·h + a·h²/2``, ``v ← v + a·h``.

Parameters: ``m`` [kg] (> 0), ``L`` [m] (≥ 0), ``s_start`` [m], ``v_start`` [m/s] (writing
them moves the state, so the initial state is settable as a parameter, also from SSP/libcosim).
Invariant: with fa = −fb (an internal force pair) momentum m·v changes only through f_drive.
"""
from __future__ import annotations

from .base import Component, Input, Output, Param

FORCE_INPUTS = ("flange_a.f", "flange_b.f", "f_drive")


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
        Output("a", "m/s2", "Absolute acceleration", depends_on=FORCE_INPUTS),
        Output("flange_a.s", "m", "Absolute position of flange_a"),
        Output("flange_a.v", "m/s", "Absolute velocity of flange_a"),
        Output("flange_b.s", "m", "Absolute position of flange_b"),
        Output("flange_b.v", "m/s", "Absolute velocity of flange_b"),
    )
    initial_state = {"s": 0.0, "v": 0.0}

    def acceleration(self) -> float:
        vals = self.values
        return mass_acceleration(vals["m"], vals["f_drive"], vals["flange_a.f"], vals["flange_b.f"])

    def advance(self, current_time: float, step_size: float) -> None:
        st = self.state
        st["s"], st["v"] = mass_step(st["s"], st["v"], self.acceleration(), step_size)

    def compute_outputs(self) -> dict[str, float]:
        s, v, half = self.state["s"], self.state["v"], 0.5 * self.values["L"]
        return {"s": s, "v": v, "a": self.acceleration(),
                "flange_a.s": s - half, "flange_a.v": v, "flange_b.s": s + half, "flange_b.v": v}
