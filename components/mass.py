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

import math
from collections.abc import Iterable
from operator import itemgetter
from typing import Any, ClassVar

from .base import Component, Input, Output, Param
from .partials import derivative_variable, state_variable
from .ports import ACCELERATION, DAMPING_TANGENT, FLANGE_A, FLANGE_B, RATE, STIFFNESS_TANGENT, port

FLANGES = (FLANGE_A, FLANGE_B)
#: a 2x2 matrix as (a11, a12, a21, a22)
Mat2 = tuple[float, float, float, float]


#: force ports per flange: ``flange_x`` and ``flange_x[2]`` ... ``flange_x[PORTS]``, each with its load and
#: tangents: up to PORTS elements meet at a flange and their forces add, as in a Modelica connection
PORTS = 4


def flange_ports(flange: str) -> tuple[str, ...]:
    """The force ports of a flange: ``flange``, ``flange[2]``, ..., ``flange[PORTS]``."""
    return (flange,) + tuple(f"{flange}[{k}]" for k in range(2, PORTS + 1))


def mass_acceleration(m: float, f_drive: float, *loads: float) -> float:
    """a [m/s2] of a mass m [kg] with drive force f_drive and the connected elements' flange forces [N]
    (subtracted in order: flange_a's ports, then flange_b's; unused ports are 0 and change no bit)."""
    force = f_drive
    for load in loads:
        force -= load
    return force / m


def mass_step(s: float, v: float, a: float, h: float) -> tuple[float, float]:
    """Exact position and velocity after h [s] at constant acceleration a."""
    return s + v * h + 0.5 * a * h * h, v + a * h


def _mat2(values: Iterable[float]) -> Mat2:
    a11, a12, a21, a22 = values
    return (a11, a12, a21, a22)


def _mul(x: Mat2, y: Mat2) -> Mat2:
    """2x2 product, matrices as (a11, a12, a21, a22)."""
    return (x[0] * y[0] + x[1] * y[2], x[0] * y[1] + x[1] * y[3],
            x[2] * y[0] + x[3] * y[2], x[2] * y[1] + x[3] * y[3])


def exp_phi(matrix: Mat2) -> tuple[Mat2, Mat2, Mat2]:
    """(e^X, φ1(X), φ2(X)) of a 2x2 matrix X, φ_k(X) = Σ X^j/(j+k)!: scaling and squaring (e^{2Y} = (e^Y)²,
    φ1(2Y) = φ1(Y)·(e^Y + I)/2, φ2(2Y) = φ2(Y)/2 + φ1(Y)²/4) of Taylor series (error < 1e-18
    relative at norm 1/2)."""
    norm = max(abs(matrix[0]) + abs(matrix[1]), abs(matrix[2]) + abs(matrix[3]))
    squarings = math.ceil(math.log2(norm / 0.5)) if norm > 0.5 else 0
    scale = 0.5 ** squarings
    y = _mat2(x * scale for x in matrix)
    e_sum, phi_sum, phi2_sum = [1.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0, 1.0], [0.5, 0.0, 0.0, 0.5]
    power = (1.0, 0.0, 0.0, 1.0)
    factorial = 1.0
    for j in range(1, 18):
        power = _mul(power, y)
        factorial *= j
        for i in range(4):
            e_sum[i] += power[i] / factorial
            phi_sum[i] += power[i] / (factorial * (j + 1))
            phi2_sum[i] += power[i] / (factorial * (j + 1) * (j + 2))
    e, phi, phi2 = _mat2(e_sum), _mat2(phi_sum), _mat2(phi2_sum)
    for _ in range(squarings):
        square = _mul(phi, phi)
        phi2 = _mat2(0.5 * a + 0.25 * b for a, b in zip(phi2, square))
        phi = _mul(phi, (0.5 * (e[0] + 1.0), 0.5 * e[1], 0.5 * e[2], 0.5 * (e[3] + 1.0)))
        e = _mul(e, e)
    return e, phi, phi2


_STEP_CACHE: dict[tuple[float, float, float, float], tuple[tuple[float, ...], tuple[float, ...]]] = {}


def linear_implicit_step(s: float, v: float, m: float, force: float, stiffness: float, damping: float,
                         rate: float, h: float) -> tuple[float, float]:
    """Exact s, v after h of ``m·a = force − stiffness·(s − s0) − damping·(v − v0) − rate·τ`` from
    (s0, v0) = (s, v).

    With z = (s − s0, v − v0): z' = A·z + b + r·τ, A = [[0, 1], [−k/m, −d/m]], b = (v0, force/m),
    r = (0, −rate/m), z(0) = 0, so z(h) = h·φ1(A·h)·b + h²·φ2(A·h)·r. The two matrices depend on
    (k, d, m, h) only and are cached."""
    key = (stiffness, damping, m, h)
    psi = _STEP_CACHE.get(key)
    if psi is None:
        if len(_STEP_CACHE) > 256:
            _STEP_CACHE.clear()
        _, phi, phi2 = exp_phi((0.0, h, -stiffness / m * h, -damping / m * h))
        psi = _STEP_CACHE[key] = (tuple(h * x for x in phi), tuple(h * h * x for x in phi2))
    (p0, p1, p2, p3), (_, q1, _, q3) = psi
    b1, r1 = force / m, -rate / m
    return s + p0 * v + p1 * b1 + q1 * r1, v + p2 * v + p3 * b1 + q3 * r1


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
            # every extra port's (flange_x[k]) variables at once: while they are all 0 (+0.0 or -0.0), the
            # law is the two-flange one (subtracting or adding a zero changes no other value)
            "extra": itemgetter(*[port(p, name) for p in ports if "[" in p
                                  for name in (load, STIFFNESS_TANGENT, DAMPING_TANGENT, load + RATE)])}


def body_partials(keys: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The analytic partials of a 1D body (components/partials.py), in ``Mass.partial_values``'s order:
    der(s) on v; der(v), a and the flange accelerations on the drive and every load; positions on s, speeds on v."""
    s, v = state_variable("s"), state_variable("v")
    accelerations = (derivative_variable("v"), "a", port(FLANGE_A, ACCELERATION), port(FLANGE_B, ACCELERATION))
    return (((derivative_variable("s"), v),)
            + tuple((u, k) for u in accelerations for k in (keys["drive"], *keys["all.load"]))
            + tuple((keys[f"{where}{role}"], state) for where in ("", "flange_a.", "flange_b.")
                    for role, state in (("pos", s), ("vel", v))))


def total(values: dict[str, float], names: list[str]) -> float:
    """values[names[0]] + values[names[1]] + ... in that order (unused ports add 0.0: no bit changes)."""
    result = values[names[0]]
    for name in names[1:]:
        result += values[name]
    return result


class Mass(Component):
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
    initial_state = {"s": 0.0, "v": 0.0}
    #: variable names: inertia, position, velocity, flange load, drive
    names: ClassVar[tuple[str, str, str, str, str]] = ("m", "s", "v", "f", "f_drive")
    #: the names the law reads and writes (``law_keys(names)``, set again for every subclass)
    _keys: ClassVar[dict[str, Any]]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._keys = law_keys(cls.names)
        cls.partial_pattern = body_partials(cls._keys)

    def partial_values(self) -> list[float]:
        """1 for der(s) on v; ±1/m for the accelerations on the drive and the loads; 1 for the outputs on the state."""
        inverse = 1.0 / self.values[self._keys["inertia"]]
        loads = [-inverse] * len(self._keys["all.load"])
        return [1.0, *([inverse, *loads] * 4), *([1.0] * 6)]

    def acceleration(self) -> float:
        keys, vals = self._keys, self.values
        if not any(keys["extra"](vals)):
            return mass_acceleration(vals[keys["inertia"]], vals[keys["drive"]], vals[keys["flange_a.load"]],
                                     vals[keys["flange_b.load"]])
        return mass_acceleration(vals[keys["inertia"]], vals[keys["drive"]], *[vals[n] for n in keys["all.load"]])

    def advance(self, current_time: float, step_size: float) -> None:
        st, vals, keys = self.state, self.values, self._keys
        if not any(keys["extra"](vals)):
            stiffness = vals["flange_a.c"] + vals["flange_b.c"]
            damping = vals["flange_a.d"] + vals["flange_b.d"]
            rate = vals[keys["flange_a.rate"]] + vals[keys["flange_b.rate"]]
        else:
            stiffness, damping, rate = (total(vals, keys[f"all.{role}"]) for role in ("c", "d", "rate"))
        if stiffness == 0.0 and damping == 0.0 and rate == 0.0:
            st["s"], st["v"] = mass_step(st["s"], st["v"], self.acceleration(), step_size)
        else:
            inertia = vals[keys["inertia"]]
            st["s"], st["v"] = linear_implicit_step(st["s"], st["v"], inertia, self.acceleration() * inertia,
                                                    stiffness, damping, rate, step_size)

    continuous_states = ("s", "v")
    state_units: ClassVar[tuple[str, ...]] = ("m", "m/s")

    def derivatives(self) -> list[float]:
        """(der(s), der(v)) = (v, a): the law with the loads as they are now (the tangent inputs of
        linear-implicit coupling are for a step, not for Model Exchange)."""
        return [self.state["v"], self.acceleration()]

    def compute_outputs(self) -> dict[str, float]:
        keys = self._keys
        s, v, half = self.state["s"], self.state["v"], 0.5 * self.values.get("L", 0.0)
        a = self.acceleration()
        return {keys["pos"]: s, keys["vel"]: v, "a": a, keys["flange_a.pos"]: s - half, keys["flange_a.vel"]: v,
                keys["flange_b.pos"]: s + half, keys["flange_b.vel"]: v, "flange_a.a": a, "flange_b.a": a}


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
    names = ("J", "phi", "w", "tau", "tau_drive")
    state_units = ("rad", "rad/s")
