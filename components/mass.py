"""Mass and Inertia: 1D rigid bodies (Modelica Translational.Components.Mass, Rotational.Components.Inertia).

Law (Mass):  m·a = f_drive − fa − fb,   v = der(s),  a = der(v)
where ``fa``/``fb`` are the inputs ``flange_a.f``/``flange_b.f``: the cut force of the element
wired to that flange (its own ``flange_x.f`` output, Modelica sign), which the body receives with
the opposite sign (a Modelica connection sums flows to zero). ``f_drive`` [N] is an external force
acting in +s (Modelica ``Sources.Force``). Several elements at one flange: each flange has ``PORTS``
force ports, ``flange_x`` and ``flange_x[2]`` …, each with its load and tangents; fa/fb are the sums
over a flange's ports, subtracted in port order (unused ports are 0). Flange positions:
``flange_a.s = s − L/2``, ``flange_b.s = s + L/2``; both flanges move with ``v``.

Inertia is the same law in rotation: J·a = tau_drive − flange_a.tau − flange_b.tau with angle
``phi`` [rad], speed ``w`` [rad/s], ``J`` [kg.m2]; both flanges are at ``phi``.

Integration: inputs are held constant over a step (zero-order hold), so the step is exact:
``s ← s + v·h + a·h²/2``, ``v ← v + a·h``.

Linear-implicit coupling: the optional inputs ``flange_x.c`` [N/m], ``flange_x.d`` [N.s/m] and
``flange_x.f_rate`` [N/s] are the connected element's tangents (∂flange_x.f/∂s, ∂flange_x.f/∂v, and
the force rate from the other flange's motion; components/connector.py). With C = Σc, D = Σd,
R = Σf_rate the body integrates ``m·a = F0 − C·(s − s0) − D·(v − v0) − R·τ`` over the step (F0 the
start-of-step force, s0, v0 the start-of-step state, τ the time into the step) exactly (φ-functions
of the 2x2 system matrix), so a stiff connector to ground is stable at any step and a linear one is
integrated without coupling error. With all of them 0 (not connected) this is the zero-order-hold
step above, bit for bit.

Model Exchange: the continuous states ``s``, ``v`` (Inertia: the angle and speed), der = (v, a) with the
loads as they are at that point (components/model_exchange.py).

Parameters: ``m`` [kg] (> 0), ``L`` [m] (≥ 0), ``s_start`` [m], ``v_start`` [m/s] (writing
them moves the state, so the initial state is settable as a parameter, also from SSP/libcosim);
Inertia: ``J``, ``phi_start``, ``w_start``.
Invariant: with fa = −fb (an internal force pair) momentum m·v changes only through f_drive.
"""
from __future__ import annotations

from typing import Any, ClassVar

from .base import Component, Input, Output, Param
from .modelica import ModelicaEquivalent
from .native_component import NativeComponent
from .partials import derivative_variable, state_variable
from .ports import ACCELERATION, DAMPING_TANGENT, FLANGE_A, FLANGE_B, RATE, STIFFNESS_TANGENT, port

FLANGES = (FLANGE_A, FLANGE_B)


#: force ports per flange: ``flange_x`` and ``flange_x[2]`` ... ``flange_x[PORTS]``, each with its load and
#: tangents: up to PORTS elements meet at a flange and their forces add, as in a Modelica connection
PORTS = 4


def flange_ports(flange: str) -> tuple[str, ...]:
    """The force ports of a flange: ``flange``, ``flange[2]``, ..., ``flange[PORTS]``."""
    return (flange,) + tuple(f"{flange}[{k}]" for k in range(2, PORTS + 1))


def body_variables(load: str, pos: str, vel: str, units: dict[str, str], words: dict[str, str]
                   ) -> tuple[tuple[Input, ...], tuple[Output, ...]]:
    """Inputs and outputs of a 1D body: flange loads with their linear-implicit tangents, a drive,
    and position, velocity and acceleration of the body and of both flanges. ``units`` has keys
    load, stiffness, damping, rate, pos, vel, acc; ``words`` has load, pos, vel, acc."""
    extra = tuple(p for x in FLANGES for p in flange_ports(x)[1:])
    loads = (port(FLANGE_A, load), port(FLANGE_B, load), f"{load}_drive") + tuple(port(p, load) for p in extra)
    inputs = tuple(
        Input(port(x, load), 0.0, units["load"],
              f"Cut {words['load']} of the element connected at {x} (body receives −{x}.{load})")
        for x in FLANGES) + (
        Input(f"{load}_drive", 0.0, units["load"], f"External driving {words['load']} acting in +{pos} direction"),
    ) + tuple(
        Input(port(x, tangent), 0.0, units[quantity],
              f"Tangent {quantity} of the element at {x} (linear-implicit coupling)")
        for x in FLANGES for tangent, quantity in ((STIFFNESS_TANGENT, "stiffness"), (DAMPING_TANGENT, "damping"))
    ) + tuple(
        Input(port(x, load + RATE), 0.0, units["rate"],
              f"Rate of {x}.{load} from the other side's motion (linear-implicit coupling)")
        for x in FLANGES
    ) + tuple(
        Input(port(p, name), 0.0, units[kind], f"{text} of another element connected at {p.split('[')[0]} (port "
              f"{p[p.index('[') + 1:-1]}; 0 when unused)")
        for p in extra for name, kind, text in ((load, "load", f"Cut {words['load']}"),
                                                (STIFFNESS_TANGENT, "stiffness", "Tangent stiffness"),
                                                (DAMPING_TANGENT, "damping", "Tangent damping"),
                                                (load + RATE, "rate", f"Rate of {load}")))
    outputs = (
        Output(pos, units["pos"], f"Absolute {words['pos']}"),
        Output(vel, units["vel"], f"Absolute {words['vel']}"),
        Output("a", units["acc"], f"Absolute {words['acc']}", depends_on=loads),
    ) + tuple(
        Output(port(x, name), units[kind], f"Absolute {words[kind]} of {x}")
        for x in FLANGES for name, kind in ((pos, "pos"), (vel, "vel"))
    ) + tuple(
        Output(port(x, ACCELERATION), units["acc"], f"Absolute {words['acc']} of {x} (= a)", depends_on=loads)
        for x in FLANGES)
    return inputs, outputs


MASS_VARIABLES = body_variables(
    "f", "s", "v",
    {"load": "N", "stiffness": "N/m", "damping": "N.s/m", "rate": "N/s", "pos": "m", "vel": "m/s", "acc": "m/s2"},
    {"load": "force", "pos": "position", "vel": "velocity", "acc": "acceleration"})
INERTIA_VARIABLES = body_variables(
    "tau", "phi", "w",
    {"load": "N.m", "stiffness": "N.m/rad", "damping": "N.m.s/rad", "rate": "N.m/s", "pos": "rad", "vel": "rad/s",
     "acc": "rad/s2"},
    {"load": "torque", "pos": "rotation angle", "vel": "angular velocity", "acc": "angular acceleration"})


def law_keys(names: tuple[str, str, str, str, str]) -> dict[str, Any]:
    """The variable names a body's law uses, by role, from its (inertia, position, velocity, load, drive) names."""
    inertia, pos, vel, load, drive = names
    ports = [p for x in FLANGES for p in flange_ports(x)]  # flange_a's ports, then flange_b's
    return {"inertia": inertia, "drive": drive, "pos": pos, "vel": vel,
            **{f"{x}.{role}": f"{x}.{name}" for x in FLANGES
               for role, name in (("load", load), ("rate", f"{load}_rate"), ("pos", pos), ("vel", vel))},
            **{f"all.{role}": [port(p, name) for p in ports]
               for role, name in (("load", load), ("c", STIFFNESS_TANGENT), ("d", DAMPING_TANGENT),
                                  ("rate", load + RATE))},
}


def body_partials(keys: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The analytic partials of a 1D body (components/partials.py), in ``Mass.partial_values``'s order:
    der(s) on v; der(v), a and the flange accelerations on the drive and every load; positions on s, speeds on v."""
    s, v = state_variable("s"), state_variable("v")
    accelerations = (derivative_variable("v"), "a", port(FLANGE_A, ACCELERATION), port(FLANGE_B, ACCELERATION))
    return (((derivative_variable("s"), v),)
            + tuple((u, k) for u in accelerations for k in (keys["drive"], *keys["all.load"]))
            + tuple((keys[f"{where}{role}"], state) for where in ("", "flange_a.", "flange_b.")
                    for role, state in (("pos", s), ("vel", v))))


class Mass(NativeComponent, Component):
    description = "1D sliding mass with inertia (Modelica Translational Mass semantics)"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Translational.Components.Mass"
    example_parameters = {"m": 2.5, "L": 0.2, "s_start": 0.3, "v_start": -1.0}
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("m", 1.0, "kg", "Mass of the sliding mass", min=0.0, min_exclusive=True),
        Param("L", 0.0, "m", "Length of the component, from left flange to right flange", min=0.0),
        Param("s_start", 0.0, "m", "Initial absolute position of the centre of mass", moves_state="s"),
        Param("v_start", 0.0, "m/s", "Initial absolute velocity", moves_state="v"),
    )
    inputs, outputs = MASS_VARIABLES
    modelica = (ModelicaEquivalent("Modelica.Mechanics.Translational.Components.Mass",
                                   (("m", "m"), ("L", "L"), ("s.start", "s_start"), ("v.start", "v_start")), (),
                                   "the same law; flanges at s - L/2 and s + L/2"),)
    initial_state = {"s": 0.0, "v": 0.0}
    #: variable names: inertia, position, velocity, flange load, drive
    names: ClassVar[tuple[str, str, str, str, str]] = ("m", "s", "v", "f", "f_drive")
    #: the names the law reads and writes by role (``law_keys(names)``, set again for every subclass)
    _keys: ClassVar[dict[str, Any]]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._keys = law_keys(cls.names)
        cls.partial_pattern = body_partials(cls._keys)

    continuous_states = ("s", "v")
    state_units: ClassVar[tuple[str, ...]] = ("m", "m/s")


Mass._keys = law_keys(Mass.names)
Mass.partial_pattern = body_partials(Mass._keys)


class Inertia(Mass):
    description = "1D rotational inertia (Modelica Rotational Inertia semantics)"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Rotational.Components.Inertia"
    example_parameters = {"J": 0.3, "phi_start": 0.1, "w_start": 2.0}
    parameters = (
        Param("J", 1.0, "kg.m2", "Moment of inertia", min=0.0, min_exclusive=True),
        Param("phi_start", 0.0, "rad", "Initial absolute rotation angle", moves_state="s"),
        Param("w_start", 0.0, "rad/s", "Initial absolute angular velocity", moves_state="v"),
    )
    inputs, outputs = INERTIA_VARIABLES
    modelica = (ModelicaEquivalent("Modelica.Mechanics.Rotational.Components.Inertia",
                                   (("J", "J"), ("phi.start", "phi_start"), ("w.start", "w_start")), (),
                                   "the same law; both flanges at phi"),)
    names = ("J", "phi", "w", "tau", "tau_drive")
    state_units = ("rad", "rad/s")
