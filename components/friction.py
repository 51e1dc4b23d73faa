"""MSL's friction elements (MSL 4.1) with MSL's hybrid state machine (Interfaces.PartialFriction of both domains) and
MSL's names: ``Clutch`` (Rotational.Components.Clutch, between two flanges), ``RotationalBrake`` and ``Brake``
(Rotational and Translational.Components.Brake, between a flange and the housing), ``BearingFriction`` and
``SupportFriction`` (Rotational.Components.BearingFriction, Translational.Components.SupportFriction: the friction
force a table of the speed). The Clutch's law, in its names (the others': w, a, tau, or v, a, f, the speed relative
to the housing ``support``; a translational element's force is f and its small speed v_small):

    phi_rel = flange_b.phi − flange_a.phi,   w_rel = flange_b.w − flange_a.w,   a_rel = flange_b.a − flange_a.a
    fn = fn_max·f_normalized,   free = fn <= 0,   tau0 = mu0·cgeo·fn,   tau0_max = peak·tau0
    mu0 = mu_pos(0) (the table at w_rel = 0),   flange_b.tau = +tau,   flange_a.tau = −tau

(BearingFriction and SupportFriction: tau0 = tau_pos(0) or f_pos(0), never free, and the sliding torque the table
itself: tau = s2·tau_pos(s1·w) for mu·cgeo·fn below.)
The discrete state (``mode``: −1 backward sliding, 0 stuck, 1 forward sliding, 2 free, 3 unknown, MSL's constants;
``locked``, ``startForward``, ``startBackward``, ``free``) changes only in event mode. Between events, with it held:

    tau = lambda                                           locked: the reaction torque, solved by the master
          0                                                free
          mu·cgeo·fn,  mu = s2·mu_pos(s1·w_rel)            else; (s1, s2) = (1, 1) startForward, (1, −1)
                                                           startBackward (the others: (−1, −1)), (1, 1)
                                                           mode = 1, (−1, −1) otherwise
    sa  = tau (locked), a_rel (free), a_rel + tau0_max (startForward or mode = 1),
          a_rel − tau0_max (startBackward or mode = −1), a_rel + sign(w_rel)·tau0_max (otherwise)

(sa is MSL's path parameter of the friction characteristic, a_rel = sa − tau0_max and so on). An event iteration
(``update_discrete_states``) evaluates MSL's equations once with pre() the held state and sa as above:

    startForward  = pre(mode) = 0 and (sa > tau0_max or pre(startForward) and sa > tau0)
                    or pre(mode) = −1 and w_rel > w_small or initial() and w_rel > 0
    startBackward = pre(mode) = 0 and (sa < −tau0_max or pre(startBackward) and sa < −tau0)
                    or pre(mode) = 1 and w_rel < −w_small or initial() and w_rel < 0
    locked = not free and not (pre(mode) = 1 or startForward or pre(mode) = −1 or startBackward)
    mode = 2 if free, else 1 if (pre(mode) in {1, 2} or startForward) and w_rel > 0,
           else −1 if (pre(mode) in {−1, 2} or startBackward) and w_rel < 0, else 0

and asks for another (FMI's newDiscreteStatesNeeded) while anything changed, so that a master that solves the
system between the iterations (the torques, the accelerations) reaches MSL's fixed point: the mixed system solved
by iterating over its Booleans from their previous values. ``initial()`` is the first event mode (the mode is 3
until then, and the outputs before it use the initial equations).

While locked the element is a constraint the master enforces: ``residual_v = constraintEquation = w_rel`` (velocity
level) with ``tau = lambda``; otherwise ``residual_v = constraintEquation = lambda`` (the force is not used, and a
master keeps it 0). The monolithic master solves lambda at every point with the rest of the system
(mechfmu/master/constraint_forces.py) and locates the events of the indicators: ``indicator.free`` = fn (free
where <= 0; not of the elements that are never free), ``indicator.w_rel`` (``indicator.w``, ``indicator.v``) = w_rel
while sliding or starting (1 locked or free: no relation of w_rel switches then), ``indicator.slip`` = tau0_max −
|lambda| locked, sa − tau0 in startForward, −tau0 − sa in startBackward, 1 + w_rel/w_small sliding forward (MSL's
w_rel < −w_small), 1 − w_rel/w_small sliding backward, 1 otherwise. Its
accelerations ``flange_x.a`` (``support.a``) are inputs (sa needs a_rel): a scenario wires them. ``lambda_loop``
(lambda − a_rel locked, else 0) wired to lambda makes the locked force an algebraic loop's fixed point (OMSimulator).
Where a host holds the inputs through Model Exchange's event mode (OMSimulator, fmpy) the element stops where an
iteration would read sa (stuck); ``indicator.resume`` (else 1) falls through 0 1e-9 s after an event mode whose
passed-on inputs still change the state, where it goes on (native/friction.c: held, below_zero, transient_sign).

Parameters as MSL's: ``mu_pos`` (rows "w_rel, mu; ..." of the positive sliding friction coefficient, w_rel in
rad/s increasing, interpolated linearly and extrapolated through the last two rows: MSL's LinearSegments and
LastTwoPoints; a one-row table is constant; ``tau_pos`` [N.m] and ``f_pos`` [N] the sliding torque or force alike),
``peak`` (>= 1), ``cgeo`` (>= 0), ``fn_max`` [N] (>= 0), ``w_small`` [rad/s] (1e10, MSL's default) or ``v_small``
[m/s] (1e-3, MSL's Translational default). MSL's heat port is ``lossPower`` = tau·w_rel [W]; ``smoothness`` is
LinearSegments only. A brake's or bearing's ``support`` left unconnected is fixed (MSL's useSupport = false); MSL's
``flange_b`` of these elements is ``flange_a`` itself (a second body connects to that body's other flange).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .base import NO_UNIT, ROTATIONAL_UNITS, Input, Output, Param
from .connector import (
    ROTATIONAL,
    Connector,
    Quantities,
    connector_inputs,
    connector_outputs,
    connector_partials,
)
from .modelica import ModelicaEquivalent
from .native_component import NativeComponent
from .ports import (
    ACCELERATION,
    ANGLE,
    ANGULAR_VELOCITY,
    CONSTRAINT_EQUATION,
    DAMPING_TANGENT,
    FLANGE_A,
    FORCE,
    LAMBDA,
    LAMBDA_LOOP,
    POSITION,
    RATE,
    STIFFNESS_TANGENT,
    SUPPORT,
    TORQUE,
    VELOCITY,
    VELOCITY_RESIDUAL,
    indicator,
    port,
)

#: MSL PartialFriction's modes
BACKWARD, STUCK, FORWARD, FREE, UNKNOWN = -1, 0, 1, 2, 3
NORMALIZED_FORCE = "f_normalized"
#: the discrete state MSL's PartialFriction holds, in its slots' order, with its start values
DISCRETE = {"mode": float(UNKNOWN), "locked": 0.0, "startForward": 0.0, "startBackward": 0.0, "free": 0.0}
#: a brake's or bearing's names: the speed of flange_a relative to the housing (MSL's phi, w, tau; s, v, f)
ROTATIONAL_SUPPORT = Quantities(ANGLE, ANGULAR_VELOCITY, TORQUE, ANGLE, ANGULAR_VELOCITY, TORQUE, ROTATIONAL_UNITS,
                                ("rotation angle", "angular velocity"), flanges=(SUPPORT, FLANGE_A))
TRANSLATIONAL_SUPPORT = Quantities(POSITION, VELOCITY, FORCE, POSITION, VELOCITY, FORCE, {},
                                   ("position", "velocity"), flanges=(SUPPORT, FLANGE_A))


@dataclass(frozen=True)
class Friction:
    """What one friction element is: its names (``quantities``), its relative acceleration's name, its table
    (``mu_pos`` with a normal force, else ``tau_pos``/``f_pos``, the force itself) and its small speed."""
    quantities: Quantities
    acceleration: str
    table: str
    table_default: str
    normal_force: bool
    small: str
    small_default: float
    one_way: bool = False  # MSL's OneWayClutch: a freewheel in parallel, its own state machine

    def unit(self, translational: str) -> str:
        return self.quantities.unit(translational)

    @property
    def rotational(self) -> bool:
        return self.quantities.force == TORQUE


def friction_declarations(f: Friction) -> dict[str, Any]:
    """The class attributes of a friction element: parameters, inputs, law, state and indicator outputs."""
    q = f.quantities
    first, second = q.flanges
    v_a, v_b = q.flange_inputs[1], q.flange_inputs[3]
    accelerations = (port(first, ACCELERATION), port(second, ACCELERATION))
    inputs = connector_inputs(q) + ((Input(NORMALIZED_FORCE, 0.0, "1", "Normalized force signal 0..1 (normal force "
                                           "= fn_max*f_normalized; engaged if > 0)"),) if f.normal_force else ())
    word, speed = ("torque", q.relative_velocity) if f.rotational else ("force", q.relative_velocity)
    inputs += (Input(LAMBDA, 0.0, f.unit("N"), f"Reaction {word} while locked (solved by the master so that {speed} "
                     "stays 0)"),)
    depends = (*q.flange_inputs, *((NORMALIZED_FORCE,) if f.normal_force else ()), LAMBDA)
    zero, zero_max = ("tau0", "tau0_max") if f.rotational else ("f0", "f0_max")
    table = (Param(f.table, f.table_default, NO_UNIT, f"Positive sliding friction coefficient: rows '{speed} "
                   f"[{f.unit('m/s')}], mu [1]; ...' ({speed} >= 0, increasing)", type="String"),)
    if not f.normal_force:
        table = (Param(f.table, f.table_default, NO_UNIT, f"Positive sliding friction characteristic: rows '{speed} "
                       f"[{f.unit('m/s')}], {q.element_force} [{f.unit('N')}]; ...' ({speed} >= 0, increasing)",
                       type="String"),)
    peak = Param("peak", 1.0, "1", f"Peak for maximum friction {word} at {speed} == 0 ({zero_max} = peak*{zero})",
                 min=1.0)
    parameters: tuple[Param, ...] = table + (peak,)
    if f.normal_force:
        parameters += (Param("cgeo", 1.0, "1", "Geometry constant containing friction distribution assumption",
                             min=0.0),
                       Param("fn_max", 1.0, "N", "Maximum normal force", min=0.0))
    parameters += (Param(f.small, f.small_default, f.unit("m/s"), f"Relative {q.words[1]} near to zero if jumps "
                         "due to a reinit(..) of the velocity can occur", min=0.0, min_exclusive=True),)
    law: tuple[Output, ...] = (
        Output(f.acceleration, f.unit("m/s2"), f"Relative acceleration {second}.a - {first}.a", accelerations),
        Output("sa", "1", f"Path parameter of the friction characteristic {q.element_force} = f({f.acceleration})",
               depends + accelerations))
    if f.normal_force:
        law += (Output("mu", "1", "Friction coefficient", depends),
                Output("fn", "N", "Normal force fn_max*f_normalized", (NORMALIZED_FORCE,)))
    force_inputs = (NORMALIZED_FORCE,) if f.normal_force else ()
    law += (Output(zero, f.unit("N"), f"Friction {word} for {speed} = 0 and forward sliding", force_inputs),
            Output(zero_max, f.unit("N"), f"Maximum friction {word} for {speed} = 0 and locked", force_inputs),
            Output("lossPower", "W", f"Power dissipated by friction {q.element_force}*{speed} (heatPort.Q_flow = "
                   "-lossPower)", depends),
            Output(VELOCITY_RESIDUAL, f.unit("m/s"), f"Constraint while locked: {speed}; else lambda",
                   (v_a, v_b, LAMBDA)),
            Output(CONSTRAINT_EQUATION, f.unit("m/s"), "The equation a master enforces (= residual_v)",
                   (v_a, v_b, LAMBDA)),
            Output(LAMBDA_LOOP, f.unit("N"), f"While locked lambda - {f.acceleration} (in {f.unit('N')} per "
                   f"{f.unit('m/s2')}), else 0: connected back to lambda, an algebraic-loop solver's fixed point is "
                   f"the reaction that keeps {f.acceleration} at 0 (OMSimulator's strongly coupled system)",
                   (*accelerations, LAMBDA)))
    if f.one_way:
        return one_way_declarations(f, {"quantities": q, "inputs": inputs, "parameters": parameters,
                                        "law_outputs": law, "friction": f})
    initial = (v_a, v_b, *force_inputs)  # before the first event mode the initial equations read them
    state = (
        Output("mode", "1", "Mode of friction (-1 backward sliding, 0 stuck, 1 forward sliding, 2 free, 3 unknown)",
               initial),
        Output("locked", "1", f"1 if {speed} = 0 and not sliding (the {word} is the reaction lambda), else 0",
               initial),
        Output("startForward", "1", f"1 if {speed} = 0 and start of forward sliding, else 0", initial),
        Output("startBackward", "1", f"1 if {speed} = 0 and start of backward sliding, else 0", initial),
        Output("free", "1", "1 if the element is not active (fn <= 0), else 0", initial),
    )
    indicators: tuple[Output, ...] = (
        (Output(indicator("free"), "N", "Event indicator fn (free where <= 0)", (NORMALIZED_FORCE,)),)
        if f.normal_force else ())
    indicators += (
        Output(indicator(speed), f.unit("m/s"), f"Event indicator {speed} while sliding or starting; 1 locked or "
               "free", (v_a, v_b)),
        Output(indicator("slip"), "1", f"Event indicator: {zero_max} - |lambda| locked, sa - {zero} in startForward, "
               f"-{zero} - sa in startBackward, 1 + {speed}/{f.small} forward, 1 - {speed}/{f.small} backward, "
               "1 otherwise", depends + accelerations),
        RESUME,
    )
    return {"quantities": q, "inputs": inputs, "parameters": parameters, "law_outputs": law, "state_outputs": state,
            "indicator_outputs": indicators, "initial_state": dict(DISCRETE), "friction": f}


#: the indicator that resumes an event iteration a host left pending (it iterated with the inputs held: OMSimulator)
RESUME = Output(indicator("resume"), "s", "Event indicator 1; where an event iteration was pending after the event "
                "mode (the discrete state lags its inputs: a host iterated with them held) the time left until 1e-9 "
                "s after that event (relative to the time beyond 1 s)", ())


#: the discrete state of MSL's OneWayClutch, in its slots' order, with its start values (and 1 before the first
#: event mode: initial())
ONE_WAY = {"stuck": 0.0, "locked": 0.0, "startForward": 0.0, "free": 0.0, "initial": 1.0}


def one_way_declarations(f: Friction, declared: dict[str, Any]) -> dict[str, Any]:
    """The OneWayClutch's state and indicator outputs beside the ``declared`` others (its lossPower 0 while stuck)."""
    law = tuple(replace(o, description="Power dissipated by friction tau*w_rel, 0 while stuck (heatPort.Q_flow = "
                        "-lossPower)") if o.name == "lossPower" else o for o in declared["law_outputs"])
    initial = (*f.quantities.flange_inputs[1::2], NORMALIZED_FORCE)  # the initial equations' (before event mode)
    return {**declared, "law_outputs": law, "initial_state": dict(ONE_WAY), "state_outputs": (
        Output("stuck", "1", "1 if w_rel = 0 (locked or start of forward sliding) or w_rel < 0, else 0", initial),
        Output("locked", "1", "1 if w_rel = 0 and not sliding (the torque is the reaction lambda), else 0", initial),
        Output("startForward", "1", "1 if w_rel = 0 and start of forward sliding or w_rel > w_small, else 0",
               initial),
        Output("free", "1", "1 if the clutch is not engaged (f_normalized <= 0: the freewheel alone), else 0",
               initial),
    ), "indicator_outputs": (
        Output(indicator("free"), "1", "Event indicator f_normalized (free where <= 0)", (NORMALIZED_FORCE,)),
        Output(indicator("w_rel"), "rad/s", "Event indicator w_rel (stuck where <= 0); 1 locked",
               f.quantities.flange_inputs[1::2]),
        Output(indicator("slip"), "1", "Event indicator while stuck: tau0_max - lambda locked, max(sa - tau0, "
               "w_rel/w_small - 1) in startForward, 1 - w_rel/w_small otherwise; 1 sliding",
               (*f.quantities.flange_inputs, NORMALIZED_FORCE, LAMBDA, *(port(x, ACCELERATION)
                                                                         for x in f.quantities.flanges))),
        RESUME,
    )}


def friction_outputs(cls: type[Connector]) -> tuple[Output, ...]:
    """A connector's outputs with the forces also depending on f_normalized and lambda, their rates and tangents
    on f_normalized (the sliding force is proportional to the normal force)."""
    q: Quantities = cls.quantities
    f: Friction = cls.friction  # type: ignore[attr-defined]
    extra = (NORMALIZED_FORCE,) if f.normal_force else ()
    forces = {q.element_force, *(port(x, q.force) for x in q.flanges)}
    tangents = {port(x, name) for x in q.flanges for name in (q.force + RATE, STIFFNESS_TANGENT, DAMPING_TANGENT)}
    return tuple(replace(o, depends_on=(*q.flange_inputs, *extra, LAMBDA)) if o.name in forces
                 else replace(o, depends_on=o.depends_on + extra) if o.name in tangents else o
                 for o in connector_outputs(cls))  # type: ignore[type-abstract]


def friction_partials(q: Quantities) -> tuple[tuple[str, str], ...]:
    """The connector's analytic partials, then the forces' and residuals' on lambda and the residuals' on the
    velocities (components/native/friction.c partials, in this order)."""
    v_a, v_b = q.flange_inputs[1], q.flange_inputs[3]
    return connector_partials(q) + tuple(
        (unknown, LAMBDA) for unknown in (q.element_force, *(port(x, q.force) for x in q.flanges))
    ) + tuple((residual, known) for residual in (VELOCITY_RESIDUAL, CONSTRAINT_EQUATION)
              for known in (v_a, v_b, LAMBDA)) + tuple(
        (LAMBDA_LOOP, known) for known in (*(port(x, ACCELERATION) for x in q.flanges), LAMBDA))


class PartialFriction(NativeComponent, Connector):
    """Base of MSL's friction elements (module docstring): a subclass gives ``friction``, its MSL equivalent and
    example parameters; the declarations follow."""
    #: its sa needs the bodies' accelerations: a scenario wires flange_x.a (mechfmu.ssp.writer)
    reads_accelerations = True

    friction: Friction  # what the element is: each subclass's

    def __init_subclass__(cls, **kwargs):
        for name, value in friction_declarations(cls.__dict__["friction"]).items():
            setattr(cls, name, value)
        cls.outputs = ()  # the connector's, below
        super().__init_subclass__(**kwargs)
        cls.outputs = friction_outputs(cls)
        cls.partial_pattern = friction_partials(cls.quantities)


PartialFriction.__abstractmethods__ = frozenset({"friction"})  # no component itself (NativeLaw clears it for each)


def msl_note(what: str) -> str:
    return (f"the same law, state machine, names and signs{what}; the locked {{}} is the input lambda a master "
            "solves (mechfmu's monolithic master, the default, solves it with the system at every point); smoothness "
            "is LinearSegments (the only one offered); the heat port's heatPort.Q_flow is -lossPower")


MU = (("mu_pos", "mu_pos"), ("peak", "peak"), ("cgeo", "cgeo"), ("fn_max", "fn_max"))
SUPPORTED = "; MSL's flange_b is flange_a (connect a second body to the first's other flange), an unconnected " \
            "support is fixed (useSupport = false)"


class Clutch(PartialFriction):
    description = "Modelica Clutch: Coulomb friction between two flanges, MSL's stuck/sliding state machine"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Rotational.Components.Clutch"
    friction = Friction(ROTATIONAL, "a_rel", "mu_pos", "0, 0.5", True, "w_small", 1.0e10)
    force_description = "Friction torque tau (positive if directed against a positive w_rel; lambda while locked)"
    example_parameters = {"mu_pos": "0, 0.5; 10, 0.3", "peak": 1.1, "cgeo": 1.0, "fn_max": 20.0}
    modelica = (ModelicaEquivalent("Modelica.Mechanics.Rotational.Components.Clutch", MU + (("w_small", "w_small"),),
                                   (), msl_note("").format("torque")),)


class RotationalBrake(PartialFriction):
    description = "Modelica Rotational Brake: Coulomb friction between a flange and the housing, pressed by a force"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Rotational.Components.Brake"
    friction = Friction(ROTATIONAL_SUPPORT, "a", "mu_pos", "0, 0.5", True, "w_small", 1.0e10)
    force_description = "Brake friction torque tau (positive if directed against a positive w; lambda while locked)"
    example_parameters = {"mu_pos": "0, 0.5; 10, 0.3", "peak": 1.1, "cgeo": 1.0, "fn_max": 20.0}
    modelica = (ModelicaEquivalent("Modelica.Mechanics.Rotational.Components.Brake", MU + (("w_small", "w_small"),),
                                   (), msl_note(SUPPORTED).format("torque")),)


class Brake(PartialFriction):
    description = "Modelica Translational Brake: Coulomb friction between a flange and the housing, pressed by a force"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Translational.Components.Brake"
    friction = Friction(TRANSLATIONAL_SUPPORT, "a", "mu_pos", "0, 0.5", True, "v_small", 1.0e-3)
    force_description = "Brake friction force f (positive if directed against a positive v; lambda while locked)"
    example_parameters = {"mu_pos": "0, 0.5; 1, 0.3", "peak": 1.1, "cgeo": 1.0, "fn_max": 20.0}
    modelica = (ModelicaEquivalent("Modelica.Mechanics.Translational.Components.Brake", MU + (("v_small", "v_small"),),
                                   (), msl_note(SUPPORTED).format("force")),)


class BearingFriction(PartialFriction):
    description = "Modelica BearingFriction: Coulomb friction in a bearing, the torque a table of the speed"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Rotational.Components.BearingFriction"
    friction = Friction(ROTATIONAL_SUPPORT, "a", "tau_pos", "0, 1", False, "w_small", 1.0e10)
    force_description = "Friction torque tau (positive if directed against a positive w; lambda while locked)"
    example_parameters = {"tau_pos": "0, 1; 10, 2", "peak": 1.2}
    modelica = (ModelicaEquivalent("Modelica.Mechanics.Rotational.Components.BearingFriction",
                                   (("tau_pos", "tau_pos"), ("peak", "peak"), ("w_small", "w_small")), (),
                                   msl_note(SUPPORTED).format("torque")),)


class SupportFriction(PartialFriction):
    description = "Modelica SupportFriction: Coulomb friction in a support, the force a table of the speed"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Translational.Components.SupportFriction"
    friction = Friction(TRANSLATIONAL_SUPPORT, "a", "f_pos", "0, 1", False, "v_small", 1.0e-3)
    force_description = "Friction force f (positive if directed against a positive v; lambda while locked)"
    example_parameters = {"f_pos": "0, 1; 1, 2", "peak": 1.2}
    modelica = (ModelicaEquivalent("Modelica.Mechanics.Translational.Components.SupportFriction",
                                   (("f_pos", "f_pos"), ("peak", "peak"), ("v_small", "v_small")), (),
                                   msl_note(SUPPORTED).format("force")),)


class OneWayClutch(PartialFriction):
    description = "Modelica OneWayClutch: a freewheel in parallel with a clutch (w_rel >= 0), MSL's state machine"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Rotational.Components.OneWayClutch"
    friction = Friction(ROTATIONAL, "a_rel", "mu_pos", "0, 0.5", True, "w_small", 1.0e10, one_way=True)
    force_description = "Friction torque tau (lambda while locked: the freewheel's or the clutch's reaction)"
    example_parameters = {"mu_pos": "0, 0.5; 10, 0.3", "peak": 1.1, "cgeo": 1.0, "fn_max": 20.0}
    modelica = (ModelicaEquivalent("Modelica.Mechanics.Rotational.Components.OneWayClutch",
                                   MU + (("w_small", "w_small"),), (),
                                   msl_note(" (startForward, locked, stuck; no mode)").format("torque")),)
