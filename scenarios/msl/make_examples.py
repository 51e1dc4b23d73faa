"""Writes the MSL 4.1 Translational and Rotational examples our elements express as scenarios, with
MSL's instance names and parameters. Given REFERENCE_DATA, the folder that holds the Modelica Association's
regression reference results ``MAP-LIB_ReferenceResults-v4.1.0/``, it also copies each example's result into
its ``reference/`` folder; without it (or for an example it does not hold), the ``reference/`` folders in the
repository (copies made so) stay.

    python3 scenarios/msl/make_examples.py [REFERENCE_DATA]

- ``Sensors``: ``sineForce`` (Sine, amplitude 10, f 4 Hz) drives ``force`` (Force) on ``mass`` (1 kg,
  s, v from 0). MSL's sensors measure what our outputs already are (``force.f`` is the force sensor's
  reading, ``mass.s``, ``mass.v``, ``mass.a`` the others'): they are left out.
- ``Accelerate``: ``constantAcc`` (Constant, k = 1) drives ``accelerate`` (Accelerate). MSL's ``mass``
  (1 kg, L = 1) is moved by the source along a prescribed path; it changes none of the compared signals
  (``accelerate.s``, ``accelerate.v``) and a body of ours integrates forces, so it is left out.
- ``SignConvention``: three ``Constant`` (k = 1) -> ``Force`` -> ``Mass`` pairs, the force on flange_a, on
  flange_b, and on flange_b with its support on a housing (a force with a fixed support is one without).
- ``InitialConditions``: MSL's two chains; the start values MSL puts on ``s1.s_rel`` (0.5 m) and
  ``sd1.s_rel`` (1 m, ``v_rel`` 0) are written as the masses' ``s_start`` (m1: 0 m, m2: 2.5 m), worked out
  from the flange positions (``flange_a.s = s - L/2``, ``flange_b.s = s + L/2``).
- ``Oscillator`` and ``Damper``: MSL's Spring, Damper and SpringDamper are CoordinateSpringDampers; where
  MSL connects two elements to one flange of a mass (spring2 and damper1, damper2 and spring2) each gets
  a force port of that flange (``System.connect`` of two flanges: mechfmu.ssp.writer.flange_connections).
- ``WhyArrows``: ``fixed1``/``fixed2`` (s0 = -1.9 m), ``spring1``/``spring2`` (MSL Spring c = 11 N/m,
  s_rel0 = 2 m: a CoordinateSpringDamper without damping), ``mass1``/``inertia2`` (1 kg, L = 2 m). Its
  rods and position sensors only measure a housing; they are left out.
- ``Backlash`` (Rotational): three inertias (J = 5 kg.m2, phi from 90 deg at rest), each on a housing through
  ``springDamper`` (RotationalSpringDamper), ``elastoBacklash`` (ElastoBacklash) and ``elastoBacklash2``
  (ElastoBacklash2), c = 2e4 N.m/rad, d = 50 N.m.s/rad, b = 45 deg. MSL's ``phi_nominal = 1`` scales the
  relative states a Modelica tool selects; the inertias carry ours. Run by the default master (auto).
- ``CoupledClutches`` (Rotational): four inertias (J = 1 kg.m2, J1 from 10 rad/s) joined by three ``Clutch``es
  (peak 1.1, fn_max 20 N), J1 driven by ``torque`` (Torque, its support fixed: one without) from ``sin1``
  (amplitude 10, 5 Hz); ``sin2`` (amplitude 1, 0.2 Hz, phase 90 deg) engages clutch1, ``step1`` (at T2 = 0.4 s)
  clutch2 and ``step2`` (at T3 = 0.9 s) clutch3. Its locked phases are constraints the default master (auto:
  monolithic) solves with the system.
- ``Brake`` (Translational): two masses (1 kg) from 1 m/s, each braked by a ``Brake`` (fn_max 1 N) that ``step``
  (height 2 at 0.1 s) engages; ``brake`` has no support (fixed), ``brake1``'s support is on ``fixed``. MSL's
  flange_b of a brake is its flange_a: the masses' flange_b are wired to the brakes' flange_a.
- ``OneWayClutch`` (Rotational): ``inertiaIn`` (J = 1 kg.m2, from -0.5 rad/s) driven by ``torque`` from
  ``signalTorque`` (Sine, amplitude 10, 3 Hz) and ``inertiaOut`` (J = 1 kg.m2, at rest) joined by ``oneWayClutch``
  (OneWayClutch, peak 25, fn_max 3 N) that ``signalEngagement`` (Pulse: amplitude 1, width 50 %, period 1.3 s from
  0.3 s) engages.
- ``PreLoad`` (Translational): a valve ``spool`` (Mass, 0.15 kg, L = 0.19 m) held by one preloaded ``spring``
  (c = 20e3 N/m, s_rel0 = 0.025 m: a CoordinateSpringDamper without damping) between ``springPlateA`` and
  ``springPlateB`` (10 g, L = 2 mm), each plate stopped by the housing (``outerContactA``/``B``: ElastoGap c = 1e6
  N/m, d = 250 N.s/m, s_rel0 = 1.5 mm) and the spool (``innerContactA``/``B``: s_rel0 = 1 mm); ``force`` from
  ``sineForce`` (Sine, amplitude 150 N, 0.01 Hz) drives the spool, ``friction`` (MSL Damper d = 2500 N.s/m: a
  CoordinateSpringDamper without stiffness) damps it to ``fixedLe`` (s0 = -0.0955 m). MSL's five Rods are Rods,
  which are directed (a body drives flange_a, the element it carries is on flange_b): ``housing`` (0.0305 m, driven
  by fixedLe), ``rod1`` (7 mm, by springPlateA) and ``rod4`` (5.75 mm, by the spool) as MSL's, ``rod2`` and
  ``rod3``, whose body MSL puts at flange_b, turned round (L = -7 mm, -5.75 mm): every flange is where MSL's is,
  every s_rel MSL's. A rod's driven end takes one element, so ``friction``, also at rod3's far end in MSL, reads
  that flange's position and velocity and gives its force to the spool (a rigid rod passes it on unchanged).
  springPlateB starts 1.75 mm off the housing and the spool, as in MSL, and the spring pushes it there within the
  first millisecond. MSL's StopTime 100 s, its Interval 0.1 s the communication step (the reference's output
  interval, 0.05 s, is half of it); the default master (auto: monolithic, each contact switch located).
"""
from __future__ import annotations

import math
import shutil
import sys
from pathlib import Path

from mechfmu import (
    Accelerate,
    Brake,
    Clutch,
    Constant,
    CoordinateSpringDamper,
    ElastoBacklash,
    ElastoBacklash2,
    ElastoGap,
    Fixed,
    Force,
    Inertia,
    Mass,
    OneWayClutch,
    Pulse,
    Rod,
    RotationalFixed,
    RotationalSpringDamper,
    Sine,
    Step,
    System,
    Torque,
)

HERE = Path(__file__).resolve().parent
MSL = "Modelica/Mechanics/Translational/Examples"
MSL_ROTATIONAL = "Modelica/Mechanics/Rotational/Examples"
PROVENANCE = """# Reference result of Modelica.Mechanics.{library}.Examples.{name}

Copied unchanged from the Modelica Association's regression reference results
`MAP-LIB_ReferenceResults-v4.1.0/{msl}/{name}/` (Dymola 2020x, DASSL, tolerance 1e-6, output interval
{interval} s; see `creation.txt`). `comparisonSignals.txt` lists the regression-checked columns. The Modelica
Association publishes these results under the BSD 3-Clause license of the Modelica Standard Library.
"""


def sensors(s: System) -> None:
    sine_force = s.add("sineForce", Sine(amplitude=10.0, f=4.0))
    force = s.add("force", Force())
    mass = s.add("mass", Mass(m=1.0))
    s.connect(sine_force.y, force.f)
    s.connect(force.flange, mass.flange_a)


def accelerate(s: System) -> None:
    constant_acc = s.add("constantAcc", Constant(k=1.0))
    source = s.add("accelerate", Accelerate())
    s.connect(constant_acc.y, source.a_ref)


def sign_convention(s: System) -> None:
    constants = [s.add(f"constant{i}", Constant(k=1.0)) for i in (1, 2, 3)]
    forces = [s.add(f"force{i}", Force()) for i in (1, 2, 3)]
    masses = [s.add(f"mass{i}", Mass(m=1.0, L=1.0)) for i in (1, 2, 3)]
    for constant, force in zip(constants, forces):
        s.connect(constant.y, force.f)
    s.connect(forces[0].flange, masses[0].flange_a)
    s.connect(forces[1].flange, masses[1].flange_b)
    s.connect(forces[2].flange, masses[2].flange_b)


def why_arrows(s: System) -> None:
    fixed = [s.add(f"fixed{i}", Fixed(s0=-1.9)) for i in (1, 2)]
    springs = [s.add(f"spring{i}", CoordinateSpringDamper(stiffness=11.0, offset=2.0, damping=0.0)) for i in (1, 2)]
    bodies = [s.add("mass1", Mass(m=1.0, L=2.0)), s.add("inertia2", Mass(m=1.0, L=2.0))]
    # the wires one by one, in MSL's order: the housings' positions, the bodies' positions, the forces back
    for housing, spring in zip(fixed, springs):
        s.connect(housing.flange.s, spring.flange_a.s)
        s.connect(housing.flange.v, spring.flange_a.v)
    for body, spring in zip(bodies, springs):
        s.connect(body.flange_b.s, spring.flange_b.s)
        s.connect(body.flange_b.v, spring.flange_b.v)
    for body, spring in zip(bodies, springs):
        s.connect(spring.flange_b.f, body.flange_b.f)


def chain(s: System, housing, spring, first, damper, second) -> None:
    """housing - spring - first mass - spring-damper - second mass, each flange to the next."""
    s.connect(housing.flange, spring.flange_a)
    s.connect(first.flange_a, spring.flange_b)
    s.connect(first.flange_b, damper.flange_a)
    s.connect(second.flange_a, damper.flange_b)


def initial_conditions(s: System) -> None:
    fixed2 = s.add("fixed2", Fixed(s0=1.0))
    s2 = s.add("s2", CoordinateSpringDamper(stiffness=1e3, offset=2.0, damping=0.0))
    m3 = s.add("m3", Mass(m=1.0, L=3.0, s_start=4.5))
    sd2 = s.add("sd2", CoordinateSpringDamper(stiffness=111.0, offset=4.0, damping=1.0))
    m4 = s.add("m4", Mass(m=1.0, L=5.0, s_start=12.5))
    fixed1 = s.add("fixed1", Fixed(s0=-1.0))
    s1 = s.add("s1", CoordinateSpringDamper(stiffness=1e3, offset=1.0, damping=0.0))
    # s1.s_rel(start = 0.5): m1.flange_a at -1 + 0.5, m1.s = -0.5 + L/2 = 0
    m1 = s.add("m1", Mass(m=1.0, L=1.0, s_start=0.0))
    sd1 = s.add("sd1", CoordinateSpringDamper(stiffness=111.0, offset=1.0, damping=1.0))
    # sd1.s_rel(start = 1): m2.flange_a at m1.flange_b.s + 1 = 1.5, m2.s = 1.5 + L/2
    m2 = s.add("m2", Mass(m=1.0, L=2.0, s_start=2.5))
    chain(s, fixed2, s2, m3, sd2, m4)
    chain(s, fixed1, s1, m1, sd1, m2)


def oscillator(s: System) -> None:
    sines = [s.add(f"sine{i}", Sine(f=15.9155)) for i in (1, 2)]
    forces = [s.add(f"force{i}", Force()) for i in (1, 2)]
    masses = [s.add(f"mass{i}", Mass(m=1.0, L=1.0, s_start=-0.5)) for i in (1, 2)]
    springs = [s.add(f"spring{i}", CoordinateSpringDamper(stiffness=1e4, offset=1.0, damping=0.0)) for i in (1, 2)]
    fixed = [s.add(f"fixed{i}", Fixed(s0=1.0)) for i in (1, 2)]
    damper1 = s.add("damper1", CoordinateSpringDamper(stiffness=0.0, damping=10.0))
    for sine, force in zip(sines, forces):
        s.connect(sine.y, force.f)
    for force, mass in zip(forces, masses):
        s.connect(force.flange, mass.flange_a)
    for mass, spring in zip(masses, springs):
        s.connect(mass.flange_b, spring.flange_a)
    for housing, spring in zip(fixed, springs):
        s.connect(housing.flange, spring.flange_b)
    s.connect(masses[1].flange_b, damper1.flange_a)
    s.connect(fixed[1].flange, damper1.flange_b)


def damper(s: System) -> None:
    masses = [s.add(f"mass{i}", Mass(m=1.0, L=1.0, s_start=3.0, v_start=10.0)) for i in (1, 2, 3)]
    fixed = [s.add(f"fixed{i}", Fixed(s0=4.5)) for i in (1, 2, 3)]
    dampers = [s.add(f"damper{i}", CoordinateSpringDamper(stiffness=0.0, damping=25.0)) for i in (1, 2)]
    spring2 = s.add("spring2", CoordinateSpringDamper(stiffness=1.0, offset=1.0, damping=0.0))
    spring_damper3 = s.add("springDamper3", CoordinateSpringDamper(stiffness=1.0, offset=1.0, damping=25.0))
    s.connect(masses[0].flange_b, dampers[0].flange_a)
    s.connect(fixed[0].flange, dampers[0].flange_b)
    s.connect(masses[1].flange_b, dampers[1].flange_a)
    s.connect(masses[1].flange_b, spring2.flange_a)
    s.connect(fixed[1].flange, dampers[1].flange_b)
    s.connect(fixed[1].flange, spring2.flange_b)
    s.connect(masses[2].flange_b, spring_damper3.flange_a)
    s.connect(fixed[2].flange, spring_damper3.flange_b)


def backlash(s: System) -> None:
    elements = (RotationalSpringDamper(c=2e4, d=50.0), ElastoBacklash(c=2e4, d=50.0, b=math.pi / 4),
                ElastoBacklash2(c=2e4, d=50.0, b=math.pi / 4))
    for i, (name, element) in enumerate(zip(("springDamper", "elastoBacklash", "elastoBacklash2"), elements), 1):
        housing = s.add(f"fixed{i}", RotationalFixed())
        placed = s.add(name, element)
        inertia = s.add(f"inertia{i}", Inertia(J=5.0, phi_start=math.pi / 2, w_start=0.0))
        s.connect(housing.flange, placed.flange_a)
        s.connect(placed.flange_b, inertia.flange_a)


def coupled_clutches(s: System) -> None:
    sin1 = s.add("sin1", Sine(amplitude=10.0, f=5.0))
    torque = s.add("torque", Torque())
    inertias = [s.add(f"J{i}", Inertia(J=1.0, phi_start=0.0, w_start=10.0 if i == 1 else 0.0)) for i in (1, 2, 3, 4)]
    signals = (s.add("sin2", Sine(amplitude=1.0, f=0.2, phase=1.570796326794897)),
               s.add("step1", Step(startTime=0.4)), s.add("step2", Step(startTime=0.9)))
    s.connect(sin1.y, torque.tau)
    s.connect(torque.flange, inertias[0].flange_a)
    for i, signal in enumerate(signals, 1):
        clutch = s.add(f"clutch{i}", Clutch(peak=1.1, fn_max=20.0))
        s.connect(inertias[i - 1].flange_b, clutch.flange_a)
        s.connect(clutch.flange_b, inertias[i].flange_a)
        s.connect(signal.y, clutch.f_normalized)


def brake(s: System) -> None:
    step = s.add("step", Step(startTime=0.1, height=2.0))
    for mass_name, brake_name in (("mass1", "brake"), ("mass2", "brake1")):
        mass = s.add(mass_name, Mass(m=1.0, s_start=0.0, v_start=1.0))
        element = s.add(brake_name, Brake(fn_max=1.0))
        s.connect(mass.flange_b, element.flange_a)
        s.connect(step.y, element.f_normalized)
    s.connect(s.add("fixed", Fixed()).flange, element.support)


def one_way_clutch(s: System) -> None:
    inertia_in = s.add("inertiaIn", Inertia(J=1.0, phi_start=0.0, w_start=-0.5))
    inertia_out = s.add("inertiaOut", Inertia(J=1.0, phi_start=0.0, w_start=0.0))
    clutch = s.add("oneWayClutch", OneWayClutch(peak=25.0, fn_max=3.0))
    torque = s.add("torque", Torque())
    signal_torque = s.add("signalTorque", Sine(amplitude=10.0, f=3.0))
    engagement = s.add("signalEngagement", Pulse(amplitude=1.0, width=50.0, period=1.3, startTime=0.3))
    s.connect(torque.flange, inertia_in.flange_a)
    s.connect(signal_torque.y, torque.tau)
    s.connect(inertia_in.flange_b, clutch.flange_a)
    s.connect(clutch.flange_b, inertia_out.flange_a)
    s.connect(engagement.y, clutch.f_normalized)


def pre_load(s: System) -> None:
    sine_force = s.add("sineForce", Sine(amplitude=150.0, f=0.01))
    force = s.add("force", Force())
    spool = s.add("spool", Mass(m=0.150, L=0.19, s_start=0.01475))
    fixed_le = s.add("fixedLe", Fixed(s0=-0.0955))
    plate_a = s.add("springPlateA", Mass(m=10e-3, L=0.002, s_start=-0.093))
    plate_b = s.add("springPlateB", Mass(m=10e-3, L=0.002, s_start=-0.06925))
    spring = s.add("spring", CoordinateSpringDamper(stiffness=20e3, offset=0.025, damping=0.0))
    inner_a, inner_b, outer_a, outer_b = (s.add(f"{name}Contact{side}", ElastoGap(c=1000e3, d=250.0, s_rel0=gap))
                                          for name, gap in (("inner", 0.001), ("outer", 0.0015)) for side in "AB")
    friction = s.add("friction", CoordinateSpringDamper(stiffness=0.0, damping=2500.0))
    rods = {name: s.add(name, Rod(L=length)) for name, length in (
        ("housing", 0.0305), ("rod1", 0.007), ("rod2", -0.007), ("rod3", -0.00575), ("rod4", 0.00575))}
    s.connect(sine_force.y, force.f)
    s.connect(force.flange, spool.flange_a)
    # each rod: the flange driving its flange_a, the element's flange on its flange_b
    for rod, body, element in (("housing", fixed_le.flange, outer_b.flange_b),
                               ("rod1", plate_a.flange_b, inner_a.flange_b),
                               ("rod2", plate_b.flange_a, inner_b.flange_a),
                               ("rod3", spool.flange_a, inner_a.flange_a),
                               ("rod4", spool.flange_a, inner_b.flange_b)):
        s.connect(body, rods[rod].flange_a)
        s.connect(rods[rod].flange_b, element)
    for body, element in ((fixed_le.flange, outer_a.flange_a), (plate_a.flange_a, outer_a.flange_b),
                          (plate_a.flange_b, spring.flange_a), (plate_b.flange_a, spring.flange_b),
                          (plate_b.flange_b, outer_b.flange_a), (fixed_le.flange, friction.flange_a)):
        s.connect(body, element)
    s.connect(rods["rod3"].flange_b.s, friction.flange_b.s)
    s.connect(rods["rod3"].flange_b.v, friction.flange_b.v)
    s.connect(friction.flange_b.f, spool["flange_a[4]"].f)


#: name -> (the function placing and connecting its components, master, description)
EXAMPLES = {
    "Sensors": (sensors, "linear-implicit",
                "MSL Translational.Examples.Sensors: a sine force (10 N, 4 Hz) on a 1 kg mass (sensors left out: "
                "our outputs are their readings); linear-implicit integrates the force as a first-order hold"),
    "Accelerate": (accelerate, "jacobi",
                   "MSL Translational.Examples.Accelerate: a flange accelerated at 1 m/s2 (the driven mass left "
                   "out: it changes no compared signal)"),
    "SignConvention": (sign_convention, "jacobi",
                       "MSL Translational.Examples.SignConvention: a 1 N force pushes each of three masses in +s, "
                       "wired to flange_a, to flange_b, and (force3's support on a fixed housing) to flange_b"),
    "WhyArrows": (why_arrows, "linear-implicit",
                  "MSL Translational.Examples.WhyArrows: two masses (L = 2 m) on springs (c = 11 N/m, s_rel0 = 2 m) "
                  "to housings at -1.9 m (MSL's Spring as a CoordinateSpringDamper without damping; the rods and "
                  "position sensors measure the housing and are left out)"),
    "InitialConditions": (initial_conditions, "linear-implicit",
                          "MSL Translational.Examples.InitialConditions: two chains housing-spring-mass-springdamper-"
                          "mass; the start values MSL gives on s1.s_rel and sd1.s_rel are the masses' s_start here"),
    "Oscillator": (oscillator, "linear-implicit",
                   "MSL Translational.Examples.Oscillator: two masses on stiff springs (1e4 N/m) to housings, driven "
                   "at resonance by a sine force; the second one damped by damper1 in parallel with spring2"),
    "Damper": (damper, "linear-implicit",
               "MSL Translational.Examples.Damper: three masses thrown at 10 m/s against a damper, a damper with a "
               "spring in parallel (two elements on one flange), and a spring-damper"),
    "Backlash": (backlash, "auto",
                 "MSL Rotational.Examples.Backlash: three inertias released at 90 deg on a spring-damper, an "
                 "ElastoBacklash and an ElastoBacklash2 (c = 2e4 N.m/rad, d = 50 N.m.s/rad, backlash 45 deg) to "
                 "housings"),
    "CoupledClutches": (coupled_clutches, "auto",
                        "MSL Rotational.Examples.CoupledClutches: a drive train of four inertias and three clutches "
                        "(peak 1.1, fn_max 20 N) engaged by a sine and two steps (at 0.4 s and 0.9 s), J1 driven by "
                        "a 5 Hz sine torque"),
    "Brake": (brake, "auto",
              "MSL Translational.Examples.Brake: two masses at 1 m/s braked to rest by a Brake (fn_max 1 N, engaged at "
              "0.1 s by a step to 2), one without a support, one with its support on a housing"),
    "OneWayClutch": (one_way_clutch, "auto",
                     "MSL Rotational.Examples.OneWayClutch: a driving and a driven inertia joined by a one-way clutch "
                     "(peak 25, fn_max 3 N) that a pulse engages periodically, the input driven by a 3 Hz sine "
                     "torque"),
    "PreLoad": (pre_load, "auto",
                "MSL Translational.Examples.PreLoad: a valve spool held in place by one preloaded spring between two "
                "plates and four ElastoGap stops until a 0.01 Hz sine force (150 N) exceeds the preload, then moved "
                "in proportion to it; MSL's rods are Rods (two of them turned round: a body drives a rod's flange_a)"),
}
#: the examples of MSL's Rotational library (the others are Translational)
ROTATIONAL = ("Backlash", "CoupledClutches", "OneWayClutch")
#: each example's experiment(StopTime, Interval) where it is not (1 s, 1e-3 s): the run's stop time and its
#: communication step (the reference's output interval is half the Interval: creation.txt)
EXPERIMENTS = {"InitialConditions": (5.0, 1e-3), "CoupledClutches": (1.5, 1e-3), "Brake": (2.0, 1e-3),
               "OneWayClutch": (2.0, 1e-3), "PreLoad": (100.0, 0.1)}


def main(reference_data: Path | None) -> None:
    for name, (build, algorithm, description) in EXAMPLES.items():
        folder = HERE / name
        system = System(name, description)
        build(system)
        stop, interval = EXPERIMENTS.get(name, (1.0, 1e-3))
        system.experiment(stop, interval, algorithm, tolerance=(2e-3, 1e-6))  # the MA's regression tube, 2e-3
        system.write(folder, fmu_folder="../../../fmus")
        if reference_data is None:
            continue
        msl = MSL_ROTATIONAL if name in ROTATIONAL else MSL
        source = reference_data / "MAP-LIB_ReferenceResults-v4.1.0" / msl / name
        if not source.is_dir():  # a copy of the results without this example: the repository's copy stays
            print(f"{name}: {source} is not there; {folder / 'reference'} left as it is")
            continue
        target = folder / "reference"
        target.mkdir(exist_ok=True)
        for file in (f"{name}.csv", "comparisonSignals.txt", "creation.txt"):
            shutil.copyfile(source / file, target / file)
        (target / "README.md").write_text(PROVENANCE.format(name=name, msl=msl, library=msl.split("/")[2],
                                                            interval=f"{interval / 2:g}"))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else None)
