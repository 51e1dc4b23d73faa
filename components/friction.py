"""Clutch: Modelica.Mechanics.Rotational.Components.Clutch (MSL 4.1), Coulomb friction between two flanges pressed
together by a normal force, with MSL's hybrid state machine (Interfaces.PartialFriction) and MSL's Rotational names.

    phi_rel = flange_b.phi − flange_a.phi,   w_rel = flange_b.w − flange_a.w,   a_rel = flange_b.a − flange_a.a
    fn = fn_max·f_normalized,   free = fn <= 0,   tau0 = mu0·cgeo·fn,   tau0_max = peak·tau0
    mu0 = mu_pos(0) (the table at w_rel = 0),   flange_b.tau = +tau,   flange_a.tau = −tau

The discrete state (``mode``: −1 backward sliding, 0 stuck, 1 forward sliding, 2 free, 3 unknown, MSL's constants;
``locked``, ``startForward``, ``startBackward``, ``free``) changes only in event mode. Between events, with it held:

    tau = lambda                                           locked: the reaction torque, solved by the master
          0                                                free
          mu·cgeo·fn,  mu = s2·mu_pos(s1·w_rel)            else; (s1, s2) = (1, 1) startForward, (1, −1)
                                                           startBackward, (1, 1) mode = 1, (−1, −1) otherwise
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
where <= 0), ``indicator.w_rel`` = w_rel while sliding or starting (1 locked or free: no relation of w_rel switches
then), ``indicator.slip`` = tau0_max − |lambda| locked, sa − tau0 in startForward, −tau0 − sa in startBackward,
1 − |w_rel|/w_small otherwise. Its accelerations ``flange_x.a`` are inputs (sa needs a_rel): a scenario wires them.

Parameters as MSL's: ``mu_pos`` (rows "w_rel, mu; ..." of the positive sliding friction coefficient, w_rel in
rad/s increasing, interpolated linearly and extrapolated through the last two rows: MSL's LinearSegments and
LastTwoPoints; a one-row table is constant), ``peak`` (>= 1), ``cgeo`` (>= 0), ``fn_max`` [N] (>= 0),
``w_small`` [rad/s] (1e10, MSL's default: no reinit of a velocity here). MSL's heat port is ``lossPower`` =
tau·w_rel [W]; ``smoothness`` is LinearSegments only.
"""
from __future__ import annotations

from dataclasses import replace

from .base import NO_UNIT, Input, Output, Param
from .connector import ROTATIONAL, RotationalConnector, connector_inputs, connector_outputs, connector_partials
from .modelica import ModelicaEquivalent
from .native_component import NativeComponent
from .ports import (
    ACCELERATION,
    CONSTRAINT_EQUATION,
    DAMPING_TANGENT,
    FLANGE_A,
    FLANGE_B,
    LAMBDA,
    RATE,
    STIFFNESS_TANGENT,
    TORQUE,
    VELOCITY_RESIDUAL,
    indicator,
    port,
)

#: MSL PartialFriction's modes
BACKWARD, STUCK, FORWARD, FREE, UNKNOWN = -1, 0, 1, 2, 3
NORMALIZED_FORCE = "f_normalized"
W_A, W_B = port(FLANGE_A, ROTATIONAL.velocity), port(FLANGE_B, ROTATIONAL.velocity)
ACCELERATIONS = (port(FLANGE_A, ACCELERATION), port(FLANGE_B, ACCELERATION))
#: what the friction torque and the residuals depend on
TORQUE_INPUTS = (*ROTATIONAL.flange_inputs, NORMALIZED_FORCE, LAMBDA)
#: the discrete state MSL's PartialFriction holds, in its slots' order, with its start values
DISCRETE = {"mode": float(UNKNOWN), "locked": 0.0, "startForward": 0.0, "startBackward": 0.0, "free": 0.0}


def friction_outputs(base: tuple[Output, ...]) -> tuple[Output, ...]:
    """A connector's outputs with the torques also depending on f_normalized and lambda, their rates and tangents
    on f_normalized (the sliding torque is proportional to the normal force)."""
    torques = {ROTATIONAL.element_force, port(FLANGE_A, TORQUE), port(FLANGE_B, TORQUE)}
    tangents = {port(x, name) for x in (FLANGE_A, FLANGE_B)
                for name in (TORQUE + RATE, STIFFNESS_TANGENT, DAMPING_TANGENT)}
    return tuple(replace(o, depends_on=TORQUE_INPUTS) if o.name in torques
                 else replace(o, depends_on=o.depends_on + (NORMALIZED_FORCE,)) if o.name in tangents else o
                 for o in base)


class Clutch(NativeComponent, RotationalConnector):
    description = "Modelica Clutch: Coulomb friction between two flanges, MSL's stuck/sliding state machine"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Rotational.Components.Clutch"
    example_parameters = {"mu_pos": "0, 0.5; 10, 0.3", "peak": 1.1, "cgeo": 1.0, "fn_max": 20.0}
    parameters = (
        Param("mu_pos", "0, 0.5", NO_UNIT, "Positive sliding friction coefficient: rows 'w_rel [rad/s], mu [1]; ...' "
              "(w_rel >= 0, increasing)", type="String"),
        Param("peak", 1.0, "1", "Peak for maximum value of mu at w == 0 (mu0_max = peak*mu_pos[1,2])", min=1.0),
        Param("cgeo", 1.0, "1", "Geometry constant containing friction distribution assumption", min=0.0),
        Param("fn_max", 1.0, "N", "Maximum normal force", min=0.0),
        Param("w_small", 1.0e10, "rad/s", "Relative angular velocity near to zero if jumps due to a reinit(..) of "
              "the velocity can occur", min=0.0, min_exclusive=True),
    )
    inputs = connector_inputs(ROTATIONAL) + (
        Input(NORMALIZED_FORCE, 0.0, "1", "Normalized force signal 0..1 (normal force = fn_max*f_normalized; clutch "
              "is engaged if > 0)"),
        Input(LAMBDA, 0.0, "N.m", "Reaction torque while locked (solved by the master so that w_rel stays 0)"),
    )
    force_description = "Friction torque tau (positive if directed against a positive w_rel; lambda while locked)"
    modelica = (ModelicaEquivalent(
        "Modelica.Mechanics.Rotational.Components.Clutch",
        (("mu_pos", "mu_pos"), ("peak", "peak"), ("cgeo", "cgeo"), ("fn_max", "fn_max"), ("w_small", "w_small")),
        (("smoothness", "Modelica.Blocks.Types.Smoothness.LinearSegments"), ("useHeatPort", "false")),
        "the same law, state machine, names and signs; the locked torque is the input lambda a master solves "
        "(mechfmu's monolithic master, the default, solves it with the system at every point); the heat port's "
        "heatPort.Q_flow is -lossPower"),)
    law_outputs = (
        Output("a_rel", "rad/s2", "Relative angular acceleration flange_b.a - flange_a.a", ACCELERATIONS),
        Output("sa", "1", "Path parameter of the friction characteristic tau = f(a_rel)",
               TORQUE_INPUTS + ACCELERATIONS),
        Output("mu", "1", "Friction coefficient", TORQUE_INPUTS),
        Output("fn", "N", "Normal force fn_max*f_normalized", (NORMALIZED_FORCE,)),
        Output("tau0", "N.m", "Friction torque for w_rel = 0 and forward sliding", (NORMALIZED_FORCE,)),
        Output("tau0_max", "N.m", "Maximum friction torque for w_rel = 0 and locked", (NORMALIZED_FORCE,)),
        Output("lossPower", "W", "Power dissipated by friction tau*w_rel (heatPort.Q_flow = -lossPower)",
               TORQUE_INPUTS),
        Output(VELOCITY_RESIDUAL, "rad/s", "Constraint while locked: w_rel; else lambda", (W_A, W_B, LAMBDA)),
        Output(CONSTRAINT_EQUATION, "rad/s", "The equation a master enforces (= residual_v)", (W_A, W_B, LAMBDA)),
    )
    state_outputs = (
        Output("mode", "1", "Mode of friction (-1 backward sliding, 0 stuck, 1 forward sliding, 2 free, 3 unknown)"),
        Output("locked", "1", "1 if w_rel = 0 and not sliding (the torque is the reaction lambda), else 0"),
        Output("startForward", "1", "1 if w_rel = 0 and start of forward sliding, else 0"),
        Output("startBackward", "1", "1 if w_rel = 0 and start of backward sliding, else 0"),
        Output("free", "1", "1 if the element is not active (fn <= 0), else 0"),
    )
    indicator_outputs = (
        Output(indicator("free"), "N", "Event indicator fn (free where <= 0)", (NORMALIZED_FORCE,)),
        Output(indicator("w_rel"), "rad/s", "Event indicator w_rel while sliding or starting; 1 locked or free",
               (W_A, W_B)),
        Output(indicator("slip"), "1", "Event indicator: tau0_max - |lambda| locked, sa - tau0 in startForward, "
               "-tau0 - sa in startBackward, 1 - |w_rel|/w_small otherwise", TORQUE_INPUTS + ACCELERATIONS),
    )
    initial_state = dict(DISCRETE)
    #: its sa needs the bodies' accelerations: a scenario wires flange_x.a (mechfmu.ssp.writer)
    reads_accelerations = True


#: the connector's outputs (set when the class was made) with the torques depending on f_normalized and lambda
Clutch.outputs = friction_outputs(connector_outputs(Clutch))  # type: ignore[type-abstract]
#: the connector's analytic partials, then the torques' and residuals' on lambda and the residuals' on the velocities
Clutch.partial_pattern = connector_partials(ROTATIONAL) + tuple(
    (unknown, LAMBDA) for unknown in (ROTATIONAL.element_force, port(FLANGE_A, TORQUE), port(FLANGE_B, TORQUE))
) + tuple((residual, known) for residual in (VELOCITY_RESIDUAL, CONSTRAINT_EQUATION) for known in (W_A, W_B, LAMBDA))
