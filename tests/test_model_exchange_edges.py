"""Model Exchange FMUs at the edges of their events, through fmpy's low-level calls on the FMU's own binary (the
calls OMSimulator makes): an event indicator that lands on exactly 0.0, from either side, and a source read at
its time event before and after fmi2CompletedIntegratorStep, and a friction element's locking and break-away at
exactly its relations.

FMI 2.0 puts z = 0 on the side z <= 0. A solver may stop exactly on a zero and then, as CVODE does, report no
later change of an indicator that leaves 0 (it masks a zero at its restart). So every mode switch is taken where
the indicator announcing it reaches 0, on both sides of the switch, and the indicator of the mode switched to then
leaves 0 to that mode's side as the motion goes on: no switch can be lost. The stateless laws (ElastoGap, the
sphere contact, the backlash elements) have no mode to lose: their outputs at z = 0 are the law there, whichever
side the inputs came from. Until event mode at a time event, a source outputs its value before the event, whether
or not the solver completed its step there."""
import ctypes
import math
import sys

import pytest
from fmpy import read_model_description
from mechfmu.components import COMPONENTS
from test_model_exchange_fmus import model_exchange_instance

STOPS = {"useLimitStops": True, "limitStopsUpper": 0.1, "limitStopsLower": -0.1, "limitStopsStiffness": 1e4,
         "limitStopsDamping": 2.0}
#: stickingStiffness 1024 N/m: the sticking force at q = 10/1024 m is 10 N = f_d + f_so exactly
FRICTION = {"fDynamicFriction": 5.0, "fStaticFrictionOffset": 5.0, "stickingStiffness": 1024.0,
            "stickingDamping": 0.0, "exponentialDecayStatic": 0.05}
EXT = ["CoordinateSpringDamperExt", "RotationalSpringDamperExt"]
SOURCES = ["Step", "Ramp", "Sine", "Table", "Pulse"]


class Instance:
    """A Model Exchange instance past initialization, in continuous-time mode, its variables by name."""

    def __init__(self, fmus, tmp_path, model: str, parameters: dict):
        self.messages: list[str] = []
        self.fmu = model_exchange_instance(fmus, tmp_path, model, self.messages)
        description = read_model_description(str(fmus[model]))
        self.refs = {v.name: v.valueReference for v in description.modelVariables}
        self.indicators = [v.name for v in description.modelVariables if v.name.startswith("indicator.")]
        self.fmu.setupExperiment(startTime=0.0)
        self.fmu.enterInitializationMode()
        for name, value in parameters.items():
            setter = {str: self.fmu.setString, bool: self.fmu.setBoolean, int: self.fmu.setInteger}.get(
                type(value), self.fmu.setReal)
            setter([self.refs[name]], [value])
        self.fmu.exitInitializationMode()
        self.event_mode(entered=True)

    def set(self, **values: float) -> None:
        self.fmu.setReal([self.refs[n.replace("__", ".")] for n in values], list(values.values()))

    def get(self, name: str) -> float:
        return self.fmu.getReal([self.refs[name]])[0]

    def indicator(self, name: str) -> float:
        z = (ctypes.c_double * len(self.indicators))()
        self.fmu.getEventIndicators(z, len(self.indicators))
        return z[self.indicators.index(f"indicator.{name}")]

    def event_mode(self, entered: bool = False) -> float | None:
        """Event mode until no new discrete states are needed, then continuous-time mode; the next time event."""
        if not entered:
            self.fmu.enterEventMode()
        while True:
            needed, _, _, _, defined, next_time = self.fmu.newDiscreteStates()
            if not needed:
                break
        self.fmu.enterContinuousTimeMode()
        return next_time if defined else None

    def move(self, t: float, **values: float) -> None:
        """Continuous time to t with these inputs, the step completed there."""
        self.fmu.setTime(t)
        self.set(**values)
        self.fmu.completedIntegratorStep()


@pytest.mark.parametrize("model", EXT)
def test_a_stop_left_exactly_on_its_zero_is_left(fmus, tmp_path, model):
    """In contact with the upper stop the indicator is the way back out, q - limitStopsUpper (<= 0: out). Stepped
    back onto the stop exactly (z = 0.0, as CVODE lands on it), event mode frees the stop: the force is 0 and
    the free indicator limitStopsUpper - q leaves 0 upward as q goes on back. A second event mode at that
    instant (another FMU's event) does not put it back in contact."""
    ext = Instance(fmus, tmp_path, model, STOPS)
    ext.move(0.01, flange_b__s=0.1002, flange_b__v=1.0)
    assert ext.indicator("upperStop") == pytest.approx(-2e-4)
    ext.event_mode()
    assert ext.get("limitStopState") == pytest.approx(2e-4)
    assert ext.indicator("upperStop") == pytest.approx(2e-4)  # in contact: q - limitStopsUpper
    ext.move(0.02, flange_b__s=0.1, flange_b__v=-1.0)
    assert ext.indicator("upperStop") == 0.0 and ext.get("f") == -2.0  # still in contact: the stop's damping
    ext.event_mode()
    assert ext.get("limitStopState") == 0.0 and ext.get("f") == 0.0
    assert ext.indicator("upperStop") == 0.0
    ext.event_mode()
    assert ext.get("limitStopState") == 0.0
    ext.move(0.03, flange_b__s=0.0999, flange_b__v=-1.0)
    assert ext.indicator("upperStop") > 0.0 and ext.get("f") == 0.0


@pytest.mark.parametrize("model", EXT)
def test_a_stop_reached_exactly_on_its_zero_is_in_contact(fmus, tmp_path, model):
    """Free, stepped onto the lower stop exactly (limitStopsLower - ... : z = q - limitStopsLower = 0.0): event
    mode puts it in contact (a penetration of 0 kept as the least negative double), and the contact indicator
    limitStopsLower - q reads the least positive normal double there (the contact side: going on into the stop is
    no second crossing), then grows as q goes on into the stop."""
    ext = Instance(fmus, tmp_path, model, STOPS)
    ext.move(0.01, flange_b__s=-0.1, flange_b__v=-1.0)
    assert ext.indicator("lowerStop") == 0.0 and ext.get("f") == 0.0
    ext.event_mode()
    assert ext.get("limitStopState") < 0.0 and ext.get("f") == -2.0
    assert ext.indicator("lowerStop") == sys.float_info.min
    ext.event_mode()
    assert ext.get("limitStopState") < 0.0
    ext.move(0.02, flange_b__s=-0.1001, flange_b__v=-1.0)
    assert ext.indicator("lowerStop") > 0.0 and ext.get("f") == pytest.approx(-1e-4 * 1e4 - 2.0)


@pytest.mark.parametrize("model", EXT)
def test_sticking_breaks_away_at_a_margin_of_exactly_zero(fmus, tmp_path, model):
    """Sticking, pulled to a bristle force of exactly f_d + f_so = 10 N (margin indicator 0.0): event mode slips,
    in the bristle force's direction (v = 0 gives the Stribeck law no sign). The slipping indicator is then
    (f_d + f_so)·v·sign(mode)/v_exp (<= 0: stick again): it leaves 0 upward as v grows in the slip's direction."""
    ext = Instance(fmus, tmp_path, model, FRICTION)
    ext.move(0.01, flange_b__s=10.0 / 1024.0, flange_b__v=0.0)
    assert ext.indicator("friction") == 0.0 and ext.get("frictionMode") == 0.0 and ext.get("f") == 10.0
    ext.event_mode()
    assert ext.get("frictionMode") == 10.0
    ext.event_mode()
    assert ext.get("frictionMode") == 10.0  # not stuck again at the same instant
    ext.move(0.02, flange_b__s=0.0098, flange_b__v=1e-3)
    assert ext.indicator("friction") == pytest.approx(10.0 * 1e-3 / 0.05)


@pytest.mark.parametrize("model", EXT)
def test_slipping_sticks_again_at_a_velocity_of_exactly_zero(fmus, tmp_path, model):
    """Slipping forward, stepped to v = 0.0 exactly (indicator 0.0): event mode sticks, the bristles preloaded at
    the limit in the slip's direction, so the sticking margin is >= 0 (measured 0 to rounding); a second event
    mode at that instant does not slip again."""
    ext = Instance(fmus, tmp_path, model, FRICTION)
    ext.move(0.01, flange_b__s=0.0196, flange_b__v=0.01)
    ext.event_mode()
    assert ext.get("frictionMode") > 0.0
    ext.move(0.02, flange_b__s=0.03, flange_b__v=0.0)
    assert ext.indicator("friction") == 0.0
    ext.event_mode()
    assert ext.get("frictionMode") == 0.0 and ext.get("f") == pytest.approx(10.0)
    assert ext.indicator("friction") >= 0.0
    ext.event_mode()
    assert ext.get("frictionMode") == 0.0


@pytest.mark.parametrize("model, parameters, inputs, indicator", [
    ("ElastoGap", {"c": 1e4, "d": 50.0, "s_rel0": 0.0},
     [{"flange_b__s": -1e-3, "flange_b__v": -0.5}, {"flange_b__s": 1e-3, "flange_b__v": -0.5}],
     {"flange_b__s": 0.0, "flange_b__v": -0.5}),
    ("SmoothSphereHalfSpaceForce", {"radius": 0.1},
     [{"sphere__position__x": -0.099, "sphere__velocity__x": 0.5},
      {"sphere__position__x": -0.101, "sphere__velocity__x": 0.5}],
     {"sphere__position__x": -0.1, "sphere__velocity__x": 0.5}),
    *((model, {"c": 2e4, "d": 50.0, "b": 0.5},
       [{"flange_b__phi": 0.251, "flange_b__w": 0.5}, {"flange_b__phi": 0.249, "flange_b__w": 0.5}],
       {"flange_b__phi": 0.25, "flange_b__w": 0.5}) for model in ("ElastoBacklash", "ElastoBacklash2")),
], ids=["ElastoGap", "SmoothSphereHalfSpaceForce", "ElastoBacklash", "ElastoBacklash2"])
def test_a_stateless_contact_at_its_zero_is_its_law_there_from_either_side(fmus, tmp_path, model, parameters,
                                                                           inputs, indicator):
    """Approached from contact and from outside, through event mode at each side, the outputs at z = 0.0 are the
    same: the law at that point (no hidden mode an importer could lose)."""
    seen = []
    for start in inputs:
        instance = Instance(fmus, tmp_path / f"{len(seen)}", model, parameters)
        instance.move(0.01, **start)
        instance.event_mode()
        instance.move(0.02, **indicator)
        name = instance.indicators[0].split(".", 1)[1]
        assert instance.indicator(name) == 0.0
        before = [instance.get(o.name) for o in COMPONENTS[model].outputs]
        instance.event_mode()
        assert [instance.get(o.name) for o in COMPONENTS[model].outputs] == before
        seen.append(before)
    assert seen[0] == seen[1]


@pytest.mark.parametrize("read_before_completing", [True, False], ids=["read-first", "completed-first"])
@pytest.mark.parametrize("model", SOURCES)
def test_a_source_holds_its_value_before_the_event_until_event_mode(fmus, tmp_path, model, read_before_completing):
    """At each of its time events (nextEventTime), read after fmi2CompletedIntegratorStep at that time, with or
    without a read there before (OMSimulator's order, fmpy's), the output is the value just before the event (the
    closed form at the previous double); after event mode the value at the event."""
    parameters = COMPONENTS[model].example_parameters
    source = Instance(fmus, tmp_path, model, parameters)
    next_time, checked = source.event_mode(), 0
    while next_time is not None and checked < 4:
        source.fmu.setTime(next_time)
        if read_before_completing:
            assert source.get("y") == y_at(model, parameters, math.nextafter(next_time, -math.inf))
        source.fmu.completedIntegratorStep()
        assert source.get("y") == y_at(model, parameters, math.nextafter(next_time, -math.inf)), next_time
        upcoming = source.event_mode()
        assert source.get("y") == y_at(model, parameters, next_time), next_time
        next_time, checked = upcoming, checked + 1
    assert checked == min(4, TIME_EVENTS[model])


@pytest.mark.parametrize("model", SOURCES)
def test_a_source_in_initialization_mode_gives_its_value_at_the_start_time(fmus, tmp_path, model):
    """In initialization mode, before any event mode, a source whose time event is the start time itself gives its
    value there, as Modelica's initial equations evaluate its relations at the start time (a Step its height),
    not the left limit of continuous time: what OMSimulator passes on to the other FMUs before their first event
    mode."""
    parameters = {**COMPONENTS[model].example_parameters, "startTime": 0.0}
    parameters = {k: v for k, v in parameters.items() if k in {p.name for p in COMPONENTS[model].parameters}}
    fmu = model_exchange_instance(fmus, tmp_path, model, [])
    refs = {v.name: v.valueReference for v in read_model_description(str(fmus[model])).modelVariables}
    fmu.setupExperiment(startTime=0.0)
    fmu.enterInitializationMode()
    for name, value in parameters.items():
        {str: fmu.setString, bool: fmu.setBoolean, int: fmu.setInteger}.get(type(value), fmu.setReal)([refs[name]],
                                                                                                  [value])
    assert fmu.getReal([refs["y"]])[0] == y_at(model, parameters, 0.0)
    fmu.exitInitializationMode()


#: the time events of each source at its example parameters: startTime (Ramp: and its end; Table: its 4 row times;
#: Pulse: the rising and falling edge of each of its 3 periods)
TIME_EVENTS = {"Step": 1, "Sine": 1, "Ramp": 2, "Table": 4, "Pulse": 6}


def y_at(model: str, parameters: dict, t: float) -> float:
    """The source's closed form at t: a component started at t (co-simulation, no event handling)."""
    component = COMPONENTS[model]("reference")
    for name, value in parameters.items():
        component.set(name, value)
    component.initialize(t)
    return component.get("y")


FRICTION_ELEMENTS = ["Clutch", "OneWayClutch", "RotationalBrake", "Brake", "BearingFriction", "SupportFriction"]


@pytest.mark.parametrize("model", FRICTION_ELEMENTS)
def test_a_friction_element_locks_and_breaks_away_exactly_at_its_relations(fmus, tmp_path, model):
    """Sliding forward from the start (initial(): the speed 1), the speed stepped to exactly 0.0 (where CVODE may
    land; for this host, which holds the inputs through event mode, the speed indicator reads that 0 as the least
    negative normal double, FMI's domain z <= 0): event mode takes it to stuck, and the iteration that would read
    sa waits for the passed-on outputs; the resume indicator then asks for an event 1e-9 s later, where it locks,
    and the slip indicator of the locked mode (tau0_max - |lambda|) is positive. lambda at exactly tau0_max keeps it
    locked (MSL's relation sa > tau0_max is strict); one ulp beyond (the relative acceleration positive, as the
    torque that breaks it away gives), event mode starts forward sliding."""
    cls = COMPONENTS[model]
    first, second = cls.quantities.flanges
    speed = f"{second}__{cls.quantities.velocity}"
    engaged = {"f_normalized": 1.0} if "f_normalized" in {i.name for i in cls.inputs} else {}
    element = Instance(fmus, tmp_path, model, {**cls.example_parameters, **engaged, speed.replace("__", "."): 1.0})
    element.move(0.01, **{speed: 1.0})
    element.event_mode()
    assert element.get("locked") == 0.0 and element.get("startForward") == 0.0
    element.move(0.02, **{speed: 0.0})
    assert element.indicator(cls.quantities.relative_velocity) == -sys.float_info.min
    element.event_mode()
    assert element.get("locked") == 0.0 and element.indicator("resume") == pytest.approx(1e-9, rel=1e-6)
    element.move(0.02 + 1e-9, **{speed: 0.0})
    assert element.indicator("resume") <= 0.0
    element.event_mode()
    maximum = element.get("tau0_max" if cls.quantities.force == "tau" else "f0_max")
    assert element.get("locked") == 1.0 and element.indicator("slip") == maximum > 0.0
    element.move(0.03, **{"lambda": maximum})
    assert element.indicator("slip") == 0.0
    element.event_mode()
    assert element.get("locked") == 1.0 and element.get(cls.quantities.element_force) == maximum
    element.move(0.04, **{"lambda": math.nextafter(maximum, math.inf), f"{second}__a": 1.0})
    assert element.indicator("slip") < 0.0
    element.event_mode()
    assert element.get("locked") == 0.0 and element.get("startForward") == 1.0


def test_a_mass_reaching_its_stop_exactly_is_reset_there_and_held(fmus, tmp_path):
    """MassWithStopAndFriction's states put exactly on its upper stop (indicator 0.0) while it slides into it: event
    mode resets v to 0 (valuesOfContinuousStatesChanged), and the mass is locked there, its friction force the
    reaction to the drive (20 N beyond f0_max = 15.015 N pushes it on: the stop holds it)."""
    parameters = {**COMPONENTS["MassWithStopAndFriction"].example_parameters, "f_drive": 20.0}
    mass = Instance(fmus, tmp_path, "MassWithStopAndFriction", parameters)
    stop = parameters["smax"] - parameters["L"] / 2
    mass.fmu.setTime(0.1)
    mass.fmu.setContinuousStates((ctypes.c_double * 2)(stop, 3.0), 2)
    mass.fmu.completedIntegratorStep()
    assert mass.indicator("upper") == 0.0 and mass.get("locked") == 0.0
    mass.fmu.enterEventMode()
    needed, _, _, changed, _, _ = mass.fmu.newDiscreteStates()
    assert changed and not needed
    mass.fmu.enterContinuousTimeMode()
    states = (ctypes.c_double * 2)()
    mass.fmu.getContinuousStates(states, 2)
    assert list(states) == [stop, 0.0]
    assert mass.get("stopped") == 1.0 and mass.get("locked") == 1.0 and mass.get("f") == 20.0 and mass.get("a") == 0.0


def test_every_model_exchange_component_with_events_is_covered():
    """Every Model Exchange component with event indicators or time events is tested above."""
    with_indicators = {m for m, c in COMPONENTS.items() if not c.co_simulation_only and c.indicator_names()}
    with_time_events = set()
    for model, cls in COMPONENTS.items():
        if not cls.co_simulation_only:
            component = cls("probe")
            for name, value in cls.example_parameters.items():
                component.set(name, value)
            component.initialize(0.0)
            component.update_discrete_states()
            with_time_events |= {model} if component.next_time_event() is not None else set()
    stateless = {"ElastoGap", "SmoothSphereHalfSpaceForce", "ElastoBacklash", "ElastoBacklash2"}
    assert with_indicators == set(EXT) | stateless | set(FRICTION_ELEMENTS) | {"MassWithStopAndFriction"}
    assert with_time_events == set(SOURCES)
