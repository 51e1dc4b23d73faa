"""Writes the generated scenarios with ``mechfmu.ssp.writer.write_scenario``: the
CoordinateSpringDamperExt scenarios (also solved by exudyn from the same file, ``validation.exudyn_model``)
and the Modelica ElastoGap example.

Run ``python3 scenarios/make_scenarios.py`` after changing a value here; the SSD files are committed.
"""
import math
from pathlib import Path

from mechfmu.ssp import write_scenario as write_ssd


def write_scenario(folder: Path, *args, **kwargs) -> Path:
    """``write_ssd`` with the tolerance the scenario is validated to (``mechfmu.master.accuracy``): the balls' positions
    to OpenSim's 1e-4 m, orientations relative 1e-3; the belt drive 1 % of its range (Exudyn's own solution
    moves by 1e-3 m as its step halves); the others relative 1e-4 of each state's range; the master they are
    validated with (Jacobi unless named)."""
    kwargs.setdefault("algorithm", "jacobi")
    kwargs.setdefault("tolerance", (1e-3, 1e-4) if folder.name.startswith("ball")
                      else (1e-2, 1e-6) if folder.name == "belt_friction" else (1e-4, 1e-6))
    return write_ssd(folder, *args, **kwargs)

HERE = Path(__file__).resolve().parent


def flange_wires(body: str, body_flange: str, connector: str, connector_flange: str, load: str = "f",
                 pos: str = "s", vel: str = "v") -> list[str]:
    """Position and velocity from the body to the connector flange, the cut force back."""
    return [f"{body}.{body_flange}.{pos} -> {connector}.{connector_flange}.s",
            f"{body}.{body_flange}.{vel} -> {connector}.{connector_flange}.v",
            f"{connector}.{connector_flange}.f -> {body}.{body_flange}.{load}"]


def body_contact_wires(body: str, contact: str, side: str, port: str = "a") -> list[str]:
    """A RigidBody's pose and velocity into one side ("sphere" or "halfSpace") of a contact, and
    that side's force and torque back into the body's port."""
    wires = [f"{body}.{kind}.{a} -> {contact}.{side}.{kind}.{a}"
             for kind, axes in (("position", "xyz"), ("orientation", "wxyz"), ("velocity", "xyz"),
                                ("angularVelocity", "xyz")) for a in axes]
    return wires + [f"{contact}.{side}.{kind}.{a} -> {body}.{kind}_{port}.{a}" for kind in ("force", "torque")
                    for a in "xyz"]


def ground_wires(ground: str, connector: str, connector_flange: str) -> list[str]:
    return [f"{ground}.flange.s -> {connector}.{connector_flange}.s",
            f"{ground}.flange.v -> {connector}.{connector_flange}.v"]


def main() -> None:
    write_scenario(
        HERE / "friction_slide", "friction_slide",
        [("ground", "Fixed", {}),
         ("mass", "Mass", {"m": 1.0, "v_start": 1.0}),
         ("friction", "CoordinateSpringDamperExt",
          {"fDynamicFriction": 2.0, "fStaticFrictionOffset": 1.0, "exponentialDecayStatic": 0.1,
           "fViscousFriction": 0.5, "frictionProportionalZone": 0.01})],
        ground_wires("ground", "friction", "flange_a") + flange_wires("mass", "flange_a", "friction", "flange_b"),
        stop_time=1.0, step_size=1e-4,
        description="A 1 kg mass released at 1 m/s on regularized Stribeck friction to ground "
                    "(f_d 2 N, f_so 1 N decaying over 0.1 m/s, viscous 0.5 N.s/m, v_reg 0.01 m/s); it slides "
                    "about 0.17 m and creeps to rest (zero force at zero velocity).")
    write_scenario(
        HERE / "stick_slip", "stick_slip",
        [("drive", "ConstantSpeed", {"v_fixed": 0.1}),
         ("spring", "CoordinateSpringDamper", {"stiffness": 100.0, "damping": 0.5}),
         ("mass", "Mass", {"m": 1.0}),
         ("friction", "CoordinateSpringDamperExt",
          {"fDynamicFriction": 5.0, "fStaticFrictionOffset": 5.0, "exponentialDecayStatic": 0.05,
           "stickingStiffness": 1e4, "stickingDamping": 200.0}),
         ("ground", "Fixed", {})],
        ground_wires("drive", "spring", "flange_a")
        + flange_wires("mass", "flange_a", "spring", "flange_b")
        + ground_wires("ground", "friction", "flange_a")
        + flange_wires("mass", "flange_b", "friction", "flange_b"),
        stop_time=5.0, step_size=1e-4,
        description="Stick-slip oscillator: a 1 kg mass on a 100 N/m spring whose far end moves at 0.1 m/s, bristle "
                    "friction to ground (static 10 N, dynamic 5 N, bristles 1e4 N/m, 200 N.s/m). The mass sticks "
                    "until the spring pulls 10 N, slips, sticks again: a limit cycle.")
    write_scenario(
        HERE / "limit_stops", "limit_stops",
        [("ground", "Fixed", {}),
         ("mass", "Mass", {"m": 1.0, "v_start": 1.0}),
         ("stops", "CoordinateSpringDamperExt",
          {"useLimitStops": True, "limitStopsUpper": 0.1, "limitStopsLower": -0.1,
           "limitStopsStiffness": 1e4, "limitStopsDamping": 2.0})],
        ground_wires("ground", "stops", "flange_a") + flange_wires("mass", "flange_a", "stops", "flange_b"),
        stop_time=2.0, step_size=1e-4,
        description="A 1 kg mass at 1 m/s bouncing between limit stops at +-0.1 m (1e4 N/m, 2 N.s/m: restitution "
                    "about 0.97 per impact); free flight between the stops.")
    write_scenario(
        HERE / "geared_rotors", "geared_rotors",
        [("rotor1", "Inertia", {"J": 0.5, "w_start": 10.0}),
         ("gear", "RotationalSpringDamperExt", {"stiffness": 1e3, "damping": 2.0, "factor0": 2.0, "factor1": 1.0}),
         ("rotor2", "Inertia", {"J": 0.1, "w_start": 20.0}),
         ("brake", "RotationalSpringDamperExt",
          {"fDynamicFriction": 2.0, "fStaticFrictionOffset": 0.5, "exponentialDecayStatic": 1.0,
           "fViscousFriction": 0.05, "frictionProportionalZone": 0.1})],
        flange_wires("rotor1", "flange_b", "gear", "flange_a", "tau", "phi", "w")
        + flange_wires("rotor2", "flange_a", "gear", "flange_b", "tau", "phi", "w")
        + flange_wires("rotor2", "flange_b", "brake", "flange_b", "tau", "phi", "w"),
        stop_time=3.0, step_size=1e-4, free=["brake.flange_a"],
        description="Two rotors (0.5 and 0.1 kg.m2) geared through the factors (2*phi1 = phi2, mesh 1e3 N.m/rad, "
                    "2 N.m.s/rad) spinning at 10 and 20 rad/s; a regularized friction brake on rotor2 (2 N.m "
                    "dynamic + 0.5 N.m static, v_reg 0.1 rad/s) stops both. The brake's flange_a is not connected "
                    "(marked free): it stays at its start value 0 (ground).")

    write_scenario(
        HERE / "elastogap", "elastogap",
        [("leftWall", "Fixed", {"s0": -2.0}),
         ("springDamper1", "CoordinateSpringDamper", {"stiffness": 10.0, "damping": 1.5, "offset": 1.0}),
         ("mass1", "Mass", {"m": 1.0, "s_start": 2.0}),
         ("springDamper2", "CoordinateSpringDamper", {"stiffness": 10.0, "damping": 1.5, "offset": 1.0}),
         ("elastoGap1", "ElastoGap", {"c": 10.0, "d": 1.5, "s_rel0": 1.5}),
         ("mass2", "Mass", {"m": 1.0, "s_start": 2.0}),
         ("elastoGap2", "ElastoGap", {"c": 10.0, "d": 1.5, "s_rel0": 1.5}),
         ("rightWall", "Fixed", {"s0": 2.0})],
        ground_wires("leftWall", "springDamper1", "flange_a")
        + flange_wires("mass1", "flange_a", "springDamper1", "flange_b")
        + flange_wires("mass1", "flange_b", "springDamper2", "flange_a")
        + ground_wires("rightWall", "springDamper2", "flange_b")
        + ground_wires("leftWall", "elastoGap1", "flange_a")
        + flange_wires("mass2", "flange_a", "elastoGap1", "flange_b")
        + flange_wires("mass2", "flange_b", "elastoGap2", "flange_a")
        + ground_wires("rightWall", "elastoGap2", "flange_b"),
        stop_time=5.0, step_size=1e-3, algorithm="linear-implicit",
        description="Modelica.Mechanics.Translational.Examples.ElastoGap (MSL 4.1): two 1 kg masses released at "
                    "s = 2 m between walls at -2 m and +2 m (MSL: a Fixed and two Rods of length 2), mass1 between "
                    "two SpringDampers (c 10 N/m, d 1.5 N.s/m, s_rel0 1 m; here CoordinateSpringDamper with "
                    "offset = s_rel0, the same law), mass2 between two ElastoGaps (c 10, d 1.5, s_rel0 1.5 m). "
                    "Instance names are MSL's, so results compare with the reference columns directly. "
                    "Reference: reference/ElastoGap.csv. Our master: linear-implicit coupling (libcosim runs it as "
                    "plain Jacobi, which needs h = 3e-5 s for 1e-3 m).")

    ball = {"mass": 1.0, "inertia.xx": 0.004, "inertia.yy": 0.004, "inertia.zz": 0.004,
            "gravity.x": 0.0, "gravity.y": -9.80665, "gravity.z": 0.0, "maxSubstepSize": 1e-3}
    contact = {"stiffness": 1e6, "dissipation": 2.0, "staticFriction": 0.8, "dynamicFriction": 0.6,
               "viscousFriction": 0.0, "transitionVelocity": 0.1, "radius": 0.1}
    write_scenario(
        HERE / "ball_drop", "ball_drop",
        [("ball", "RigidBody", {**ball, "position_start.y": 0.5, "velocity_start.x": 2.0,
                                "angularVelocity_start.z": 10.0}),
         ("contact", "SmoothSphereHalfSpaceForce", {**contact, "halfSpaceOrientation.z": -math.pi / 2})],
        body_contact_wires("ball", "contact", "sphere"),
        stop_time=1.0, step_size=1e-4, free=["contact.halfSpace"],
        description="A ball (1 kg, R 0.1 m, solid-sphere inertia) released at 0.5 m with 2 m/s horizontal velocity "
                    "and 10 rad/s spin onto the ground (Simbody SmoothSphereHalfSpaceForce: E 1e6 N/m2, c 2 s/m, "
                    "mu_s 0.8, mu_d 0.6, v_tr 0.1 m/s; half-space on ground, solid side y < 0): impact, "
                    "bounces, then rolling with v = -omega*R. The half-space inputs are unconnected (marked free: "
                    "ground at rest).")
    write_scenario(
        HERE / "ball_on_moving_plate", "ball_on_moving_plate",
        [("ball", "RigidBody", {**ball, "position_start.y": 0.1 - 0.0016, "velocity_start.x": 0.5}),
         ("plate", "RigidBody", {"mass": 10.0, "inertia.xx": 1.0, "inertia.yy": 2.0, "inertia.zz": 1.0,
                                 "gravity.y": 0.0, "velocity_start.x": 0.5, "maxSubstepSize": 1e-3}),
         ("contact", "SmoothSphereHalfSpaceForce", {**contact, "halfSpaceOrientation.z": -math.pi / 2 + 0.2})],
        body_contact_wires("ball", "contact", "sphere") + body_contact_wires("plate", "contact", "halfSpace"),
        stop_time=1.0, step_size=1e-4,
        description="A ball resting on a plane tilted by 0.2 rad, carried by a free 10 kg plate that slides at "
                    "0.5 m/s (the plate feels no gravity: it is carried, only the contact acts on it). The ball "
                    "rolls down the incline; the plate recoils. Total momentum changes only by gravity on the ball.")

    constraint_wires = lambda c, a, b: (  # noqa: E731  (flange_a from a (or ground), flange_b from b)
        ground_wires(a, c, "flange_a") if a.startswith("ground") else flange_wires(a, "flange_b", c, "flange_a")
    ) + flange_wires(b, "flange_a", c, "flange_b")
    write_scenario(
        HERE / "prescribed_motion", "prescribed_motion",
        [("ground", "Fixed", {}),
         ("constraint", "CoordinateConstraint",
          {"offset": 0.1, "offsetUserFunction": "0.5*(1-cos(2*pi*0.25*t))*lOffset",
           "offsetUserFunction_t": "0.5*lOffset*2*pi*0.25*sin(2*pi*0.25*t)"}),
         ("mass", "Mass", {"m": 5.0})],
        constraint_wires("constraint", "ground", "mass"),
        stop_time=10.0, step_size=1e-3, algorithm="newton",
        description="Exudyn's CoordinateConstraint mini example: a 5 kg mass moved by a constraint to ground along "
                    "s(t) = 0.5*(1 - cos(2*pi*0.25*t))*0.1. The constraint force lambda is a coupling unknown: the "
                    "master solves for it (Newton) so that the constraint holds at every communication point.")
    write_scenario(
        HERE / "geared_masses", "geared_masses",
        [("ground", "Fixed", {}),
         ("spring", "CoordinateSpringDamper", {"stiffness": 100.0, "damping": 1.0}),
         ("mass1", "Mass", {"m": 2.0, "s_start": 0.1}),
         ("gear", "CoordinateConstraint", {"factorValue1": 2.0}),
         ("mass2", "Mass", {"m": 1.0, "s_start": 0.05}),
         ("load", "CoordinateSpringDamper", {"damping": 5.0})],
        ground_wires("ground", "spring", "flange_a") + flange_wires("mass1", "flange_a", "spring", "flange_b")
        + constraint_wires("gear", "mass1", "mass2")
        + ground_wires("ground", "load", "flange_a") + flange_wires("mass2", "flange_b", "load", "flange_b"),
        stop_time=10.0, step_size=1e-3, algorithm="newton", coupling="implicit",
        description="Two masses rigidly geared by a CoordinateConstraint 2*s2 - s1 = 0 (factorValue1 2): mass1 (2 kg) "
                    "on a spring to ground (100 N/m, 1 N.s/m), mass2 (1 kg) braked by a viscous load (5 N.s/m). "
                    "Reduced ODE in x = s2: (4*m1 + m2)*x'' = -4*k*x - (4*d + c)*x'.")
    write_scenario(
        HERE / "belt_friction", "belt_friction",
        [("ground", "Fixed", {}),
         ("beltDrive", "CoordinateConstraint", {"velocityLevel": True, "offset": 4.0}),
         ("belt", "Mass", {"m": 0.5, "v_start": 4.0}),
         ("friction", "CoordinateSpringDamperExt",
          {"fDynamicFriction": 40.0, "fStaticFrictionOffset": 40.0, "stickingStiffness": 1e4,
           "stickingDamping": 100.0, "exponentialDecayStatic": 0.1}),
         ("mass", "Mass", {"m": 0.5, "f_drive": 80.0}),
         ("spring", "CoordinateSpringDamper", {"stiffness": 400.0, "damping": 0.113})],
        constraint_wires("beltDrive", "ground", "belt")
        + flange_wires("belt", "flange_b", "friction", "flange_a") + flange_wires("mass", "flange_a", "friction", "flange_b")
        + ground_wires("ground", "spring", "flange_a") + flange_wires("mass", "flange_b", "spring", "flange_b"),
        stop_time=2.0, step_size=1e-4, algorithm="newton", coupling="implicit", inputs="end",
        description="Exudyn's massSpringFrictionInteractive set-up: a belt (0.5 kg) driven at 4 m/s by a velocity-level "
                    "CoordinateConstraint to ground carries a 0.5 kg mass through bristle friction (40 N dynamic + 40 N "
                    "static offset); the mass hangs on a 400 N/m spring and is pushed by 80 N: stick-slip.")


if __name__ == "__main__":
    main()
