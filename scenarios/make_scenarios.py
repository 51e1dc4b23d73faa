"""Writes the shipped scenarios (all but the MSL examples, ``msl/make_examples.py``) with the typed system API
(``mechfmu.System``): the oscillators, the CoordinateSpringDamperExt scenarios (also solved by exudyn from the
same file, ``mechfmu.validation.exudyn_model``), the constraint scenarios, the balls and the Modelica ElastoGap example.

Run ``python3 scenarios/make_scenarios.py`` after changing a value here; the SSD files are committed. A file
is replaced only when what it says changes (``mechfmu.ssp.writer.ssd_content``): the three oscillators' files
were laid out by hand before the writer existed (tests edit them as text) and keep that layout.
"""
import math
import shutil
import tempfile
from pathlib import Path

from mechfmu import (
    ConstantSpeed,
    CoordinateConstraint,
    CoordinateSpringDamper,
    CoordinateSpringDamperExt,
    ElastoGap,
    Fixed,
    Inertia,
    Mass,
    RigidBody,
    RotationalSpringDamperExt,
    SmoothSphereHalfSpaceForce,
    System,
)
from mechfmu.ssp.scenario import SSD_NAME
from mechfmu.ssp.writer import ssd_content

HERE = Path(__file__).resolve().parent


def validated(name: str, description: str, stop_time: float, step_size: float, algorithm: str = "jacobi",
              **options: str) -> System:
    """A system with the tolerance its scenario is validated to (``mechfmu.master.accuracy``): the balls'
    positions to OpenSim's 1e-4 m, orientations relative 1e-3; the belt drive 1 % of its range (Exudyn's own
    solution moves by 1e-3 m as its step halves); the others relative 1e-4 of each state's range; the master
    they are validated with (Jacobi unless named)."""
    system = System(name, description)
    tolerance = (1e-3, 1e-4) if name.startswith("ball") else (1e-2, 1e-6) if name == "belt_friction" else (1e-4, 1e-6)
    system.experiment(stop_time, step_size, algorithm, tolerance, **options)
    return system


def write(system: System) -> None:
    """The system's SSD in ``HERE/<name>/``, replacing the file there only if its content changes
    (``ssd_content``): a file laid out by hand keeps its layout while it says the same."""
    target = HERE / system.name / SSD_NAME
    with tempfile.TemporaryDirectory() as temporary:
        written = system.write(Path(temporary) / system.name, fmu_folder="../../fmus")  # scenarios/<name>/
        if not target.is_file() or ssd_content(written) != ssd_content(target):
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(written, target)


def connect_body_to_contact(system: System, body, side, port: str = "a") -> None:
    """A RigidBody's pose and velocity into one side (``sphere`` or ``halfSpace``) of a contact, and that
    side's force and torque back into the body's port."""
    for kind in ("position", "orientation", "velocity", "angularVelocity"):
        system.connect(body[kind], side[kind])
    for kind in ("force", "torque"):
        system.connect(side[kind], body[f"{kind}_{port}"])


def oscillators() -> None:
    s = validated("oscillator", "Exudyn CoordinateSpringDamper mini example: mass 5 kg on a spring-damper to "
                  "ground, stiffness 5000 N/m, damping 80 N.s/m, user law 0.1*k*u + k*u**3 + v*d, constant load "
                  "1 N. Positions are displacements (Exudyn coordinate markers exclude the reference coordinate).",
                  1.0, 1e-4, exchange="ordered")
    ground = s.add("ground", Fixed(s0=0.0))
    spring = s.add("spring", CoordinateSpringDamper(stiffness=5000.0, damping=80.0,
                                                    springForceUserFunction="0.1*k*u + k*u**3 + v*d"))
    mass = s.add("mass", Mass(m=5.0, f_drive=1.0))
    s.connect(ground.flange, spring.flange_a)
    s.connect(mass.flange_a, spring.flange_b)
    write(s)

    s = validated("oscillator_linear", "The oscillator without the user law: m x'' + d x' + k x = F with m = 5, "
                  "d = 80, k = 5000, F = 1, x(0) = v(0) = 0; closed-form damped solution (see "
                  "tests/test_convergence.py).", 1.0, 1e-4, exchange="ordered")
    ground = s.add("ground", Fixed(s0=0.0))
    spring = s.add("spring", CoordinateSpringDamper(stiffness=5000.0, damping=80.0))
    mass = s.add("mass", Mass(m=5.0, f_drive=1.0))
    s.connect(ground.flange, spring.flange_a)
    s.connect(mass.flange_a, spring.flange_b)
    write(s)

    s = validated("two_mass_oscillator", "Two masses (1 kg) between walls: outer springs 4 pi^2 N/m, middle spring "
                  "16 pi^2 N/m, undamped; positions relative to rest, x1(0) = 1 m. Closed form x1 = cos(2 pi t)/2 "
                  "+ cos(6 pi t)/2, x2 = cos(2 pi t)/2 - cos(6 pi t)/2; energy 10 pi^2 J.", 2.0, 1e-3,
                  exchange="ordered")
    left = s.add("left", Fixed(s0=0.0))
    spring1 = s.add("spring1", CoordinateSpringDamper(stiffness=4 * math.pi ** 2))
    mass1 = s.add("mass1", Mass(m=1.0, s_start=1.0))
    spring2 = s.add("spring2", CoordinateSpringDamper(stiffness=16 * math.pi ** 2))
    mass2 = s.add("mass2", Mass(m=1.0))
    spring3 = s.add("spring3", CoordinateSpringDamper(stiffness=4 * math.pi ** 2))
    right = s.add("right", Fixed(s0=0.0))
    s.connect(left.flange, spring1.flange_a)
    s.connect(mass1.flange_a, spring1.flange_b)
    s.connect(mass1.flange_b, spring2.flange_a)
    s.connect(mass2.flange_a, spring2.flange_b)
    s.connect(mass2.flange_b, spring3.flange_a)
    s.connect(right.flange, spring3.flange_b)
    write(s)


def ext_scenarios() -> None:
    s = validated("friction_slide", "A 1 kg mass released at 1 m/s on regularized Stribeck friction to ground "
                  "(f_d 2 N, f_so 1 N decaying over 0.1 m/s, viscous 0.5 N.s/m, v_reg 0.01 m/s); it slides about "
                  "0.17 m and creeps to rest (zero force at zero velocity).", 1.0, 1e-4)
    ground = s.add("ground", Fixed())
    mass = s.add("mass", Mass(m=1.0, v_start=1.0))
    friction = s.add("friction", CoordinateSpringDamperExt(
        fDynamicFriction=2.0, fStaticFrictionOffset=1.0, exponentialDecayStatic=0.1, fViscousFriction=0.5,
        frictionProportionalZone=0.01))
    s.connect(ground.flange, friction.flange_a)
    s.connect(mass.flange_a, friction.flange_b)
    write(s)

    s = validated("stick_slip", "Stick-slip oscillator: a 1 kg mass on a 100 N/m spring whose far end moves at "
                  "0.1 m/s, bristle friction to ground (static 10 N, dynamic 5 N, bristles 1e4 N/m, 200 N.s/m). The "
                  "mass sticks until the spring pulls 10 N, slips, sticks again: a limit cycle.", 5.0, 1e-4)
    drive = s.add("drive", ConstantSpeed(v_fixed=0.1))
    spring = s.add("spring", CoordinateSpringDamper(stiffness=100.0, damping=0.5))
    mass = s.add("mass", Mass(m=1.0))
    friction = s.add("friction", CoordinateSpringDamperExt(
        fDynamicFriction=5.0, fStaticFrictionOffset=5.0, exponentialDecayStatic=0.05, stickingStiffness=1e4,
        stickingDamping=200.0))
    ground = s.add("ground", Fixed())
    s.connect(drive.flange, spring.flange_a)
    s.connect(mass.flange_a, spring.flange_b)
    s.connect(ground.flange, friction.flange_a)
    s.connect(mass.flange_b, friction.flange_b)
    write(s)

    s = validated("limit_stops", "A 1 kg mass at 1 m/s bouncing between limit stops at +-0.1 m (1e4 N/m, 2 N.s/m: "
                  "restitution about 0.97 per impact); free flight between the stops.", 2.0, 1e-4)
    ground = s.add("ground", Fixed())
    mass = s.add("mass", Mass(m=1.0, v_start=1.0))
    stops = s.add("stops", CoordinateSpringDamperExt(
        useLimitStops=True, limitStopsUpper=0.1, limitStopsLower=-0.1, limitStopsStiffness=1e4,
        limitStopsDamping=2.0))
    s.connect(ground.flange, stops.flange_a)
    s.connect(mass.flange_a, stops.flange_b)
    write(s)

    s = validated("geared_rotors", "Two rotors (0.5 and 0.1 kg.m2) geared through the factors (2*phi1 = phi2, mesh "
                  "1e3 N.m/rad, 2 N.m.s/rad) spinning at 10 and 20 rad/s; a regularized friction brake on rotor2 "
                  "(2 N.m dynamic + 0.5 N.m static, v_reg 0.1 rad/s) stops both. The brake's flange_a is not "
                  "connected (marked free): it stays at its start value 0 (ground).", 3.0, 1e-4)
    rotor1 = s.add("rotor1", Inertia(J=0.5, w_start=10.0))
    gear = s.add("gear", RotationalSpringDamperExt(stiffness=1e3, damping=2.0, factor0=2.0, factor1=1.0))
    rotor2 = s.add("rotor2", Inertia(J=0.1, w_start=20.0))
    brake = s.add("brake", RotationalSpringDamperExt(
        fDynamicFriction=2.0, fStaticFrictionOffset=0.5, exponentialDecayStatic=1.0, fViscousFriction=0.05,
        frictionProportionalZone=0.1))
    s.connect(rotor1.flange_b, gear.flange_a)
    s.connect(rotor2.flange_a, gear.flange_b)
    s.connect(rotor2.flange_b, brake.flange_b)
    s.free(brake.flange_a)
    write(s)


def elastogap() -> None:
    s = validated("elastogap", "Modelica.Mechanics.Translational.Examples.ElastoGap (MSL 4.1): two 1 kg masses "
                  "released at s = 2 m between walls at -2 m and +2 m (MSL: a Fixed and two Rods of length 2), mass1 "
                  "between two SpringDampers (c 10 N/m, d 1.5 N.s/m, s_rel0 1 m; here CoordinateSpringDamper with "
                  "offset = s_rel0, the same law), mass2 between two ElastoGaps (c 10, d 1.5, s_rel0 1.5 m). "
                  "Instance names are MSL's, so results compare with the reference columns directly. "
                  "Reference: reference/ElastoGap.csv. Our master: linear-implicit coupling (libcosim runs it as "
                  "plain Jacobi, which needs h = 3e-5 s for 1e-3 m).", 5.0, 1e-3, "linear-implicit")
    left_wall = s.add("leftWall", Fixed(s0=-2.0))
    spring_damper1 = s.add("springDamper1", CoordinateSpringDamper(stiffness=10.0, damping=1.5, offset=1.0))
    mass1 = s.add("mass1", Mass(m=1.0, s_start=2.0))
    spring_damper2 = s.add("springDamper2", CoordinateSpringDamper(stiffness=10.0, damping=1.5, offset=1.0))
    elasto_gap1 = s.add("elastoGap1", ElastoGap(c=10.0, d=1.5, s_rel0=1.5))
    mass2 = s.add("mass2", Mass(m=1.0, s_start=2.0))
    elasto_gap2 = s.add("elastoGap2", ElastoGap(c=10.0, d=1.5, s_rel0=1.5))
    right_wall = s.add("rightWall", Fixed(s0=2.0))
    s.connect(left_wall.flange, spring_damper1.flange_a)
    s.connect(mass1.flange_a, spring_damper1.flange_b)
    s.connect(mass1.flange_b, spring_damper2.flange_a)
    s.connect(right_wall.flange, spring_damper2.flange_b)
    s.connect(left_wall.flange, elasto_gap1.flange_a)
    s.connect(mass2.flange_a, elasto_gap1.flange_b)
    s.connect(mass2.flange_b, elasto_gap2.flange_a)
    s.connect(right_wall.flange, elasto_gap2.flange_b)
    write(s)


def balls() -> None:
    ball = {"mass": 1.0, "inertia": {"xx": 0.004, "yy": 0.004, "zz": 0.004},
            "gravity": {"x": 0.0, "y": -9.80665, "z": 0.0}, "maxSubstepSize": 1e-3}
    contact = {"stiffness": 1e6, "dissipation": 2.0, "staticFriction": 0.8, "dynamicFriction": 0.6,
               "viscousFriction": 0.0, "transitionVelocity": 0.1, "radius": 0.1}
    s = validated("ball_drop", "A ball (1 kg, R 0.1 m, solid-sphere inertia) released at 0.5 m with 2 m/s "
                  "horizontal velocity and 10 rad/s spin onto the ground (Simbody SmoothSphereHalfSpaceForce: E 1e6 "
                  "N/m2, c 2 s/m, mu_s 0.8, mu_d 0.6, v_tr 0.1 m/s; half-space on ground, solid side y < 0): impact, "
                  "bounces, then rolling with v = -omega*R. The half-space inputs are unconnected (marked free: "
                  "ground at rest).", 1.0, 1e-4)
    body = s.add("ball", RigidBody(**ball, position_start={"y": 0.5}, velocity_start={"x": 2.0},
                                   angularVelocity_start={"z": 10.0}))
    force = s.add("contact", SmoothSphereHalfSpaceForce(**contact, halfSpaceOrientation={"z": -math.pi / 2}))
    connect_body_to_contact(s, body, force.sphere)
    s.free(force.halfSpace)
    write(s)

    s = validated("ball_on_moving_plate", "A ball resting on a plane tilted by 0.2 rad, carried by a free 10 kg "
                  "plate that slides at 0.5 m/s (the plate feels no gravity: it is carried, only the contact acts on "
                  "it). The ball rolls down the incline; the plate recoils. Total momentum changes only by gravity "
                  "on the ball.", 1.0, 1e-4)
    body = s.add("ball", RigidBody(**ball, position_start={"y": 0.1 - 0.0016}, velocity_start={"x": 0.5}))
    plate = s.add("plate", RigidBody(mass=10.0, inertia={"xx": 1.0, "yy": 2.0, "zz": 1.0}, gravity={"y": 0.0},
                                     velocity_start={"x": 0.5}, maxSubstepSize=1e-3))
    force = s.add("contact", SmoothSphereHalfSpaceForce(**contact, halfSpaceOrientation={"z": -math.pi / 2 + 0.2}))
    connect_body_to_contact(s, body, force.sphere)
    connect_body_to_contact(s, plate, force.halfSpace)
    write(s)


def constraint_scenarios() -> None:
    s = validated("prescribed_motion", "Exudyn's CoordinateConstraint mini example: a 5 kg mass moved by a "
                  "constraint to ground along s(t) = 0.5*(1 - cos(2*pi*0.25*t))*0.1. The constraint force lambda is "
                  "a coupling unknown: the master solves for it (Newton) so that the constraint holds at every "
                  "communication point.", 10.0, 1e-3, "newton")
    ground = s.add("ground", Fixed())
    constraint = s.add("constraint", CoordinateConstraint(
        offset=0.1, offsetUserFunction="0.5*(1-cos(2*pi*0.25*t))*lOffset",
        offsetUserFunction_t="0.5*lOffset*2*pi*0.25*sin(2*pi*0.25*t)"))
    mass = s.add("mass", Mass(m=5.0))
    s.connect(ground.flange, constraint.flange_a)
    s.connect(mass.flange_a, constraint.flange_b)
    write(s)

    s = validated("geared_masses", "Two masses rigidly geared by a CoordinateConstraint 2*s2 - s1 = 0 (factorValue1 "
                  "2): mass1 (2 kg) on a spring to ground (100 N/m, 1 N.s/m), mass2 (1 kg) braked by a viscous load "
                  "(5 N.s/m). Reduced ODE in x = s2: (4*m1 + m2)*x'' = -4*k*x - (4*d + c)*x'.", 10.0, 1e-3, "newton",
                  coupling="implicit")
    ground = s.add("ground", Fixed())
    spring = s.add("spring", CoordinateSpringDamper(stiffness=100.0, damping=1.0))
    mass1 = s.add("mass1", Mass(m=2.0, s_start=0.1))
    gear = s.add("gear", CoordinateConstraint(factorValue1=2.0))
    mass2 = s.add("mass2", Mass(m=1.0, s_start=0.05))
    load = s.add("load", CoordinateSpringDamper(damping=5.0))
    s.connect(ground.flange, spring.flange_a)
    s.connect(mass1.flange_a, spring.flange_b)
    s.connect(mass1.flange_b, gear.flange_a)
    s.connect(mass2.flange_a, gear.flange_b)
    s.connect(ground.flange, load.flange_a)
    s.connect(mass2.flange_b, load.flange_b)
    write(s)

    s = validated("belt_friction", "Exudyn's massSpringFrictionInteractive set-up: a belt (0.5 kg) driven at 4 m/s "
                  "by a velocity-level CoordinateConstraint to ground carries a 0.5 kg mass through bristle friction "
                  "(40 N dynamic + 40 N static offset); the mass hangs on a 400 N/m spring and is pushed by 80 N: "
                  "stick-slip.", 2.0, 1e-4, "newton", coupling="implicit", inputs="end")
    ground = s.add("ground", Fixed())
    belt_drive = s.add("beltDrive", CoordinateConstraint(velocityLevel=True, offset=4.0))
    belt = s.add("belt", Mass(m=0.5, v_start=4.0))
    friction = s.add("friction", CoordinateSpringDamperExt(
        fDynamicFriction=40.0, fStaticFrictionOffset=40.0, stickingStiffness=1e4, stickingDamping=100.0,
        exponentialDecayStatic=0.1))
    mass = s.add("mass", Mass(m=0.5, f_drive=80.0))
    spring = s.add("spring", CoordinateSpringDamper(stiffness=400.0, damping=0.113))
    s.connect(ground.flange, belt_drive.flange_a)
    s.connect(belt.flange_a, belt_drive.flange_b)
    s.connect(belt.flange_b, friction.flange_a)
    s.connect(mass.flange_a, friction.flange_b)
    s.connect(ground.flange, spring.flange_a)
    s.connect(mass.flange_b, spring.flange_b)
    write(s)


def main() -> None:
    oscillators()
    ext_scenarios()
    elastogap()
    balls()
    constraint_scenarios()


if __name__ == "__main__":
    main()
