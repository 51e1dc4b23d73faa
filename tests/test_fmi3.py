"""The FMI 3.0 FMUs (``mechfmu build --fmi-version 3``): every native component also as an FMI 3.0 FMU that fmpy
validates and simulates as Model Exchange and as co-simulation (also with event mode and early return), giving the
bits of its FMI 2.0 FMU, which runs the same runtime and law; its model description the FMI 2.0 one in FMI 3.0
terms; early return ends a step where the importer asks, as a step of that size would; directional and adjoint
derivatives equal central differences; states that serialize and are checked; calls outside the state machine
refused by name."""
import ctypes
import os
import random
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
import zipfile

import numpy as np
import pytest
from conftest import HEADERS, HERE, compile_c_host, slow_but, unavailable
from fmpy import extract, read_model_description, simulate_fmu
from fmpy.fmi1 import FMICallException
from fmpy.fmi3 import FMU3Model, FMU3Slave
from fmpy.validation import validate_fmu
from mechfmu.components import COMPONENTS
from mechfmu.fmu import fmi3
from mechfmu.fmu.build import fmu_path
from mechfmu.fmu.fmi3_arrays import read_description, read_layout
from mechfmu.fmu.native_tables import NATIVE_HOOKS
from mechfmu.master.fmu_slave import FmuSlave
from mechfmu.master.simulate import simulate
from mechfmu.ssp.scenario import load_scenario

ROOT = HERE.parent
MODELS = sorted(COMPONENTS)
WITH_MODEL_EXCHANGE = [m for m in MODELS if not COMPONENTS[m].co_simulation_only]


def inputs_of(model: str, stop: float) -> np.ndarray | None:
    """A smooth signal on each Real input (fmpy's input table), different per input; None without inputs."""
    names = [i.name for i in COMPONENTS[model].inputs]
    if not names:
        return None
    t = np.linspace(0.0, stop, 41)
    rows = [(ti, *(0.2 * np.sin(3.0 * ti + k) + 0.05 * k for k in range(len(names)))) for ti in t]
    return np.array(rows, dtype=[("time", np.float64), *((n, np.float64) for n in names)])


def held_inputs(model: str) -> list[str]:
    """The inputs held at their start values: a quaternion's (fmpy's input table stacks every array input of a type,
    so all must have one length; the other arrays have 3)."""
    return [i.name for i in COMPONENTS[model].inputs if ".orientation." in i.name]


def simulated(path, model: str, fmi_type: str, **options) -> np.ndarray:
    """fmpy's run of the FMU with the model's example parameters and ``inputs_of`` (``held_inputs`` as start values at
    their signals' first value); an FMI 3.0 FMU's arrays given and returned by their elements' scalar names
    (``as_scalars``)."""
    start_values, signals = dict(COMPONENTS[model].example_parameters), inputs_of(model, 0.5)
    held = held_inputs(model)
    if held and signals is not None:
        start_values.update({name: float(signals[name][0]) for name in held})
        kept = [n for n in signals.dtype.names if n not in held]
        signals = np.array(signals[kept].tolist(), dtype=[(n, np.float64) for n in kept])
    _, layout = read_layout(str(path))
    if not layout:
        return simulate_fmu(str(path), fmi_type=fmi_type, stop_time=0.5, output_interval=0.0125,
                            start_values=start_values, input=signals, **options)
    expanded = {v.name: v for v in read_description(str(path)).modelVariables}
    arrays: dict[str, list] = {}
    named = {name.rsplit(".", 1)[0] for name in start_values if name in layout}  # the arrays given a start value
    for name, (index, length) in layout.items():
        array = arrays.setdefault(name.rsplit(".", 1)[0], [None] * length)
        array[index] = start_values.pop(name) if name in start_values else float(expanded[name].start or 0)
    given = {a: v for a, v in arrays.items() if a in named}
    if signals is not None:
        fields = [("time", np.float64)]
        for name in signals.dtype.names[1:]:
            array = name.rsplit(".", 1)[0]
            if name not in layout:
                fields.append((name, np.float64))
            elif layout[name][0] == 0:
                fields.append((array, np.float64, (layout[name][1],)))
        grouped = np.zeros(len(signals), dtype=fields)
        grouped["time"] = signals["time"]
        for name in signals.dtype.names[1:]:
            if name in layout:
                grouped[name.rsplit(".", 1)[0]][:, layout[name][0]] = signals[name]
            else:
                grouped[name] = signals[name]
        signals = grouped
    result = simulate_fmu(str(path), fmi_type=fmi_type, stop_time=0.5, output_interval=0.0125,
                          start_values={**start_values, **given}, input=signals, **options)
    return as_scalars(result, layout)


def as_scalars(result: np.ndarray, layout: dict[str, tuple[int, int]]) -> np.ndarray:
    """fmpy's result with every array column as its elements' columns, by their scalar names."""
    columns = []
    for name in result.dtype.names:
        elements = sorted((index, element) for element, (index, _) in layout.items()
                          if element.rsplit(".", 1)[0] == name)
        columns += [(element, result[name][:, index]) for index, element in elements] or [(name, result[name])]
    out = np.zeros(len(result), dtype=[(name, np.float64) for name, _ in columns])
    for name, column in columns:
        out[name] = column
    return out


@pytest.mark.parametrize("model", MODELS)
def test_fmpy_validates_every_fmi3_fmu(fmi3_fmus, model):
    assert validate_fmu(str(fmi3_fmus[model])) == []


#: with event mode these switch in FMI 3.0's event mode (MSL's friction elements): their FMI 2.0 twin inside its step
#: at the step's held inputs, fmpy's event mode at the inputs of the step's end (tests/test_friction_cosimulation.py)
EVENT_MODE_SWITCHING = {m for m, hooks in NATIVE_HOOKS.items() if "event_pending" in hooks}
CASES = [(m, "ModelExchange", False) for m in WITH_MODEL_EXCHANGE] + [
    (m, "CoSimulation", e) for m in MODELS for e in (False, True) if not (e and m in EVENT_MODE_SWITCHING)]


@pytest.mark.parametrize("model, fmi_type, event_mode",
                         slow_but(CASES, ("Mass", "ModelExchange", False), ("ElastoGap", "CoSimulation", True)))
def test_an_fmi3_fmu_gives_the_bits_of_its_fmi2_fmu_in_fmpy(fmi3_fmus, fmus, model, fmi_type, event_mode):
    """With its example parameters and a signal on every input; co-simulation also with event mode and early
    return allowed (fmpy then steps through event mode): every variable's every row equal."""
    options = {"use_event_mode": True, "early_return_allowed": True} if event_mode else {}
    three = simulated(fmi3_fmus[model], model, fmi_type, **options)
    two = simulated(fmus[model], model, fmi_type)
    assert three.dtype.names == two.dtype.names and len(three) == len(two) > 10
    for name in two.dtype.names:
        assert np.array_equal(three[name], two[name]), (model, fmi_type, name)


def description(path) -> ET.Element:
    with zipfile.ZipFile(path) as zf:
        return ET.fromstring(zf.read("modelDescription.xml"))


@pytest.mark.parametrize("model", MODELS)
def test_the_model_description_is_the_fmi2_one_in_fmi3_terms(fmi3_fmus, fmus, model):
    """The variables with their value references, types, causalities and starts; time the one independent variable;
    derivatives, dependencies and event indicators by value reference; co-simulation with event mode and early
    return."""
    two = read_model_description(str(fmus[model]))
    three, layout = read_layout(str(fmi3_fmus[model]))  # an array's elements by their scalar names
    by_name = {v.name: v for v in three.modelVariables}
    kinds = {"Real": "Float64", "Integer": "Int32", "Boolean": "Boolean", "String": "String"}
    for v in two.modelVariables:
        w = by_name[v.name]
        index = layout.get(v.name, (0, 1))[0]  # an element's: its array's value reference, the first element's
        assert (w.valueReference + index, w.type, w.causality, w.variability, w.unit) == (
            v.valueReference, kinds[v.type], v.causality, v.variability, v.unit), v.name
        assert (w.start == v.start) if v.type != "Boolean" else (w.start in (None, v.start)), v.name
        if v.derivative is not None:
            assert w.derivative.name == v.derivative.name, v.name
    independent = [v for v in three.modelVariables if v.causality == "independent"]
    assert [(v.name, v.valueReference) for v in independent] == [("time", max(v.valueReference
                                                                               for v in two.modelVariables) + 1)]
    def array(name: str) -> str:
        return name.rsplit(".", 1)[0] if name in layout else name

    for section in ("outputs", "derivatives", "initialUnknowns"):  # an array depends on what its elements do
        expected: dict[str, list[str]] = {}
        for u in getattr(two, section):
            found = expected.setdefault(array(u.variable.name), [])
            found += [d for d in (u.dependencies or []) if d not in found]
        merged = {array(u.variable.name): [d.name for d in u.dependencies or []] for u in getattr(three, section)}
        assert list(merged) == list(expected), section
        for name, dependencies in expected.items():
            assert {array(d) for d in merged[name]} == {array(d.name) for d in dependencies}, (section, name)
    indicators = [u.variable.name for u in three.eventIndicators]
    assert len(indicators) == two.numberOfEventIndicators
    assert all(name.startswith("indicator.") for name in indicators)
    cosimulation = description(fmi3_fmus[model]).find("CoSimulation").attrib
    for flag in ("hasEventMode", "mightReturnEarlyFromDoStep", "providesIntermediateUpdate",
                 "providesAdjointDerivatives", "canSerializeFMUState"):
        assert cosimulation[flag] == "true", flag


@pytest.mark.parametrize("model, terminals", [
    ("ElastoGap", {"flange_a": "Translational.Interfaces.Flange_a", "flange_b": "Translational.Interfaces.Flange_b"}),
    ("Inertia", {"flange_a": "Rotational.Interfaces.Flange_a", "flange_b": "Rotational.Interfaces.Flange_b"}),
    ("Fixed", {"flange": "Translational.Interfaces.Flange_b"}),  # its position and speed: it takes no force
    ("Step", {}),
])
def test_each_flange_is_a_terminal_of_its_msl_interface(fmi3_fmus, model, terminals):
    with zipfile.ZipFile(fmi3_fmus[model]) as zf:
        names = set(zf.namelist())
        if not terminals:
            assert fmi3.TERMINALS_FILE not in names
            return
        root = ET.fromstring(zf.read(fmi3.TERMINALS_FILE))
    found = {t.attrib["name"]: t for t in root.iter("Terminal")}
    assert {n: t.attrib["terminalKind"].removeprefix("Modelica.Mechanics.") for n, t in found.items()} == terminals
    variables = {v.name: v for v in read_model_description(str(fmi3_fmus[model])).modelVariables}
    for name, terminal in found.items():
        members = {m.attrib["memberName"]: m.attrib["variableKind"] for m in terminal.iter("TerminalMemberVariable")}
        rotational = "Rotational" in terminal.attrib["terminalKind"]
        expected = ({"phi": "signal", "w": "signal", "tau": "inflow"} if rotational
                    else {"s": "signal", "v": "signal", "f": "inflow"})
        assert members == {m: k for m, k in expected.items() if f"{name}.{m}" in variables}, (model, name)
        assert "s" in members or "phi" in members
        assert all(f"{name}.{member}" in variables for member in members)


def slave(path, model: str, early: list | None = None, messages: list | None = None) -> tuple[FMU3Slave, dict]:
    """An fmpy co-simulation instance with event mode; ``early``: [time] requested as the early return time at each
    step's intermediate update (the update times are appended to it), else no callback."""
    md = read_model_description(str(path))
    fmu = FMU3Slave(guid=md.guid, unzipDirectory=extract(str(path)), modelIdentifier=model, instanceName="probe")

    def update(environment, time, set_requested, get_allowed, finished, can_return, requested, when):
        early.append(time)
        if can_return and early[0] is not None:
            requested[0], when[0] = True, early[0]

    def log(environment, status, category, message):
        if messages is not None:
            messages.append((status, message.decode()))

    fmu.instantiate(eventModeUsed=True, earlyReturnAllowed=True, logMessage=log,
                    intermediateUpdate=update if early is not None else None)
    return fmu, {v.name: v.valueReference for v in md.modelVariables}


def started(fmu, vr, model: str, **inputs) -> None:
    cls = COMPONENTS[model]
    fmu.enterInitializationMode(startTime=0.0)
    for name, value in cls.example_parameters.items():
        if isinstance(value, float):
            fmu.setFloat64([vr[name]], [value])
    fmu.exitInitializationMode()
    fmu.updateDiscreteStates()
    fmu.enterStepMode()
    for name, value in inputs.items():
        fmu.setFloat64([vr[name]], [value])


def test_an_early_return_ends_the_step_where_asked_as_a_step_of_that_size(fmi3_fmus):
    """A mass under a force, asked at its step's end to return at 37 % of the step: it says so, lastSuccessfulTime
    is that time, and its state is to the bit that of a step of that size; the next step starts there."""
    outputs = ["flange_a.s", "flange_a.v", "flange_a.a"]
    h, ask = 0.01, 0.0037
    early = [ask]
    fmu, vr = slave(fmi3_fmus["Mass"], "Mass", early)
    started(fmu, vr, "Mass", **{"flange_a.f": 3.0, "flange_b.f": -1.0})
    event, terminate, returned, last = fmu.doStep(0.0, h)
    assert (event, terminate, returned, last) == (False, False, True, ask) and early[1] == h
    shortened = fmu.getFloat64([vr[o] for o in outputs])
    reference, vr2 = slave(fmi3_fmus["Mass"], "Mass")
    started(reference, vr2, "Mass", **{"flange_a.f": 3.0, "flange_b.f": -1.0})
    assert reference.doStep(0.0, ask)[2:] == (False, ask)
    assert shortened == reference.getFloat64([vr2[o] for o in outputs])
    early[0] = None  # no more early returns: the next step starts where the early one ended
    assert fmu.doStep(ask, h)[2:] == (False, ask + h)
    assert reference.doStep(ask, h)[2:] == (False, ask + h)
    assert fmu.getFloat64([vr[o] for o in outputs]) == reference.getFloat64([vr2[o] for o in outputs])
    assert fmu.getFloat64([vr["time"]]) == [ask + h]


def test_a_call_outside_the_state_machine_is_refused_by_name(fmi3_fmus):
    messages: list = []
    fmu, vr = slave(fmi3_fmus["Mass"], "Mass", messages=messages)

    def refused(call, *arguments) -> str:
        with pytest.raises(FMICallException, match="status 3"):
            call(*arguments)
        return messages[-1][1]

    assert refused(fmu.doStep, 0.0, 0.01) == "probe: fmi3DoStep: not allowed in state instantiated"
    assert refused(fmu.fmi3EnterStepMode, fmu.component) == (
        "probe: fmi3EnterStepMode: not allowed in state instantiated")
    started(fmu, vr, "Mass")
    assert refused(fmu.fmi3EnterContinuousTimeMode, fmu.component) == (
        "probe: fmi3EnterContinuousTimeMode: the instance was instantiated with fmi3InstantiateCoSimulation")
    assert refused(fmu.setFloat64, [vr["time"]], [1.0]) == (
        f"probe: fmi3SetFloat64: valueReference {vr['time']} is time, the independent variable: it cannot be set")
    assert refused(fmu.fmi3GetFloat32, fmu.component, (ctypes.c_uint * 1)(0), 1, (ctypes.c_float * 1)(), 1) == (
        "probe: fmi3GetFloat32: valueReference 0: this FMU has no Float32 variables")
    assert refused(fmu.getFloat64, [vr["flange_a.s"]], 3) == (
        "probe: fmi3GetFloat64: nValues = 3, but this FMU's variables are scalars: 1 values for 1 value references")
    assert refused(fmu.enterInitializationMode) == "probe: fmi3EnterInitializationMode: not allowed in state step mode"


def test_states_serialize_and_a_changed_or_foreign_one_is_refused(fmi3_fmus, fmus):
    messages: list = []
    fmu, vr = slave(fmi3_fmus["Mass"], "Mass", messages=messages)
    started(fmu, vr, "Mass", **{"flange_a.f": 2.0})
    fmu.doStep(0.0, 0.1)
    state = fmu.getFMUState()
    blob = fmu.serializeFMUState(state)
    s = fmu.getFloat64([vr["flange_a.s"]])
    fmu.doStep(0.1, 0.1)
    restored = fmu.deserializeFMUState(blob)
    fmu.setFMUState(restored)
    assert fmu.getFloat64([vr["flange_a.s"]]) == s and fmu.getFloat64([vr["time"]]) == [0.1]
    changed = bytearray(blob)
    changed[-3] ^= 1
    with pytest.raises(FMICallException):
        fmu.deserializeFMUState(bytes(changed))
    assert "the state's checksum does not match" in messages[-1][1]
    me = FMU3Model(guid=fmu.guid, unzipDirectory=fmu.unzipDirectory, modelIdentifier="Mass", instanceName="me")
    me.instantiate(logMessage=lambda env, status, category, message: messages.append((status, message.decode())))
    with pytest.raises(FMICallException):
        me.deserializeFMUState(blob)
    assert messages[-1][1] == ("me: fmi3DeserializeFMUState: the state was saved by a co-simulation instance (in "
                               "step mode); this instance is Model Exchange")


class Elements:
    """An FMI 3.0 FMU's variables by the scalar names of its FMI 2.0 twin: per scalar its variable's value
    reference, its index in the variable and the variable's length (an array's element, or a scalar: 0 of 1)."""

    def __init__(self, path):
        expanded, layout = read_layout(str(path))
        self.where = {v.name: (v.valueReference, *layout.get(v.name, (0, 1))) for v in expanded.modelVariables}

    def references(self, names: list[str]) -> tuple[list[int], int, list[int]]:
        """The distinct variables of ``names`` in order, their values' count, and each name's place among them."""
        references, places, start, total = [], [], {}, 0
        for name in names:
            reference, index, length = self.where[name]
            if reference not in start:
                start[reference], total = total, total + length
                references.append(reference)
            places.append(start[reference] + index)
        return references, total, places

    def get(self, fmu, names: list[str]) -> list[float]:
        references, total, places = self.references(names)
        values = fmu.getFloat64(references, total)
        return [values[k] for k in places]

    def set(self, fmu, names: list[str], values: list[float]) -> None:
        references, total, places = self.references(names)
        whole = fmu.getFloat64(references, total)
        for place, value in zip(places, values):
            whole[place] = value
        fmu.setFloat64(references, whole)


class Probe:
    """An FMI 3.0 instance of a model at a random point (its example parameters, random inputs; Model Exchange:
    random states in continuous-time mode), its unknowns (outputs, state derivatives) and knowns (inputs, states),
    by their scalar names (an array's elements each)."""

    def __init__(self, path, model: str, seed: int, model_exchange: bool):
        cls = COMPONENTS[model]
        md = read_model_description(str(path))
        kind = FMU3Model if model_exchange else FMU3Slave
        self.fmu = kind(guid=md.guid, unzipDirectory=extract(str(path)), modelIdentifier=model, instanceName="p")
        self.fmu.instantiate()
        self.elements = Elements(path)
        rng = random.Random(seed)
        self.fmu.enterInitializationMode(startTime=0.0)
        for name, value in cls.example_parameters.items():
            if isinstance(value, float):
                self.elements.set(self.fmu, [name], [value])
        self.fmu.exitInitializationMode()
        self.inputs = [i.name for i in cls.inputs]
        self.states = [f"state.{s}" for s in cls.continuous_states] if model_exchange else []
        if model_exchange:  # through event mode into continuous-time mode; co-simulation is in step mode
            self.fmu.updateDiscreteStates()
            self.fmu.enterContinuousTimeMode()
            x = (ctypes.c_double * len(self.states))()
            self.fmu.getContinuousStates(x, len(x))
            self.x = [value + rng.uniform(-0.3, 0.3) for value in x]
            self._set_states()
        for name in self.inputs:
            self.elements.set(self.fmu, [name], [rng.uniform(-0.5, 0.5)])
        self.unknowns = [o.name for o in cls.outputs] + [f"der({s})" for s in self.states]
        self.knowns = self.inputs + self.states

    def _set_states(self) -> None:
        self.fmu.setContinuousStates((ctypes.c_double * len(self.x))(*self.x), len(self.x))

    def move(self, known: str, value: float) -> None:
        if known in self.states:
            self.x[self.states.index(known)] = value
            self._set_states()
        else:
            self.elements.set(self.fmu, [known], [value])

    def value(self, known: str) -> float:
        return self.x[self.states.index(known)] if known in self.states else self.elements.get(self.fmu, [known])[0]

    def values(self) -> np.ndarray:
        return np.array(self.elements.get(self.fmu, self.unknowns))

    def jacobian_column(self, known: str) -> np.ndarray:
        """d unknowns / d known from fmi3GetDirectionalDerivative, over the unknowns' and knowns' whole variables (an
        array's every element: the FMU lays out seed and sensitivity so)."""
        unknowns, n_unknown, places = self.elements.references(self.unknowns)
        knowns, n_known, (place,) = self.elements.references([known])
        seed = [1.0 if j == place else 0.0 for j in range(n_known)]
        sensitivity = self.fmu.getDirectionalDerivative(unknowns, knowns, seed, n_unknown)
        return np.array([sensitivity[k] for k in places])

    def adjoint_row(self, unknown: str) -> np.ndarray:
        """d unknown / d knowns (one row) from fmi3GetAdjointDerivative over the whole variables."""
        unknowns, n_unknown, (place,) = self.elements.references([unknown])
        knowns, n_known, places = self.elements.references(self.knowns)
        seed = [1.0 if j == place else 0.0 for j in range(n_unknown)]
        row = self.fmu.getAdjointDerivative(unknowns, knowns, seed, n_known)  # fmpy's default: one per unknown
        return np.array([row[k] for k in places])

    def difference(self, known: str) -> np.ndarray:
        """d unknowns / d known by central differences, Richardson-extrapolated (error of order h^4)."""
        x = self.value(known)

        def central(h: float) -> np.ndarray:
            self.move(known, x + h)
            up = self.values()
            self.move(known, x - h)
            down = self.values()
            self.move(known, x)
            return (up - down) / (2 * h)

        h = 1e-3 * max(1.0, abs(x))
        return (4 * central(h / 2) - central(h)) / 3


MODES = [(m, True) for m in WITH_MODEL_EXCHANGE] + [(m, False) for m in MODELS]


@pytest.mark.parametrize("model, model_exchange", slow_but(MODES, ("Mass", True), ("ElastoGap", False)))
def test_directional_and_adjoint_derivatives_equal_central_differences(fmi3_fmus, model, model_exchange):
    """At three random points: each known's column of the Jacobian from fmi3GetDirectionalDerivative against
    central differences (1e-7 of the column's largest entry, 1e-9 absolute), and every row from
    fmi3GetAdjointDerivative equal to the columns' entries."""
    for seed in range(3):
        probe = Probe(fmi3_fmus[model], model, seed, model_exchange)
        if not probe.knowns:
            return
        jacobian = np.array([probe.jacobian_column(known) for known in probe.knowns]).T
        for k, known in enumerate(probe.knowns):
            expected = probe.difference(known)
            scale = max(1.0, float(np.max(np.abs(expected))))
            assert np.allclose(jacobian[:, k], expected, rtol=0, atol=1e-7 * scale + 1e-9), (
                model, seed, known, dict(zip(probe.unknowns, jacobian[:, k] - expected)))
        for i, unknown in enumerate(probe.unknowns):
            assert list(probe.adjoint_row(unknown)) == list(jacobian[i]), (model, seed, unknown)
        probe.fmu.terminate()
        probe.fmu.freeInstance()


def test_mechfmu_build_writes_the_fmi3_fmus_to_their_folder(fmi3_fmus, fmus, tmp_path):
    from mechfmu.cli import main
    assert main(["build", "--fmi-version", "3", "--dir", str(tmp_path)]) == 0
    assert sorted(p.stem for p in tmp_path.glob("*.fmu")) == MODELS
    with zipfile.ZipFile(tmp_path / "Mass.fmu") as zf:
        names = set(zf.namelist())
    assert {"binaries/x86_64-linux/Mass.so", "modelDescription.xml", "resources/mechfmu_guid.txt"} <= names
    assert fmu_path("Mass").is_file()


def host_arguments(fmu, folder) -> list[str]:
    """tests/fmi3_host.c's arguments for the Mass FMU unpacked in ``folder``: resources, token, value references."""
    with zipfile.ZipFile(fmu) as zf:
        zf.extractall(folder)
    md = read_model_description(str(folder))
    vr = {v.name: str(v.valueReference) for v in md.modelVariables}
    return [str(folder / "resources") + "/", md.guid, vr["flange_a.f"], vr["flange_a.s"], vr["flange_a.v"], vr["time"]]


def checked_host(host, binary, arguments: list[str], **options) -> str:
    proc = subprocess.run([str(host), str(binary), *arguments], capture_output=True, text=True, timeout=300,
                          **options)
    reports = re.findall(r"==\d+==ERROR.*|runtime error:.*|SUMMARY: .*", proc.stderr)
    assert proc.returncode == 0 and not reports and proc.stdout.rstrip().endswith("violations 0"), (
        "\n".join(reports) + proc.stdout[-3000:] + proc.stderr[-3000:])
    return proc.stdout


def test_a_c_host_runs_the_fmi3_fmu_through_early_returns_event_mode_and_states(fmi3_fmus, tmp_path):
    """The shipped binary in a C host: early returns equal exact steps to the bit, event mode, states taken, restored,
    serialized and deserialized, and every careless call refused."""
    host = compile_c_host("fmi3_host", tmp_path / "fmi3_host")
    arguments = host_arguments(fmi3_fmus["Mass"], tmp_path / "Mass")
    out = checked_host(host, tmp_path / "Mass" / "binaries" / "x86_64-linux" / "Mass.so", arguments)
    assert out.count("\nok ") >= 35, out


@pytest.mark.slow
def test_the_fmi3_glue_under_address_sanitizer_and_ubsan(fmi3_fmus, tmp_path):
    """The same host and the FMU binary built from the sources with AddressSanitizer and UBSan (any report aborts):
    no report, no leak."""
    from mechfmu.fmu import native_tables
    from mechfmu.fmu.native import FMI2_GLUE, FMI3_GLUE, NATIVE_SOURCES
    from test_fmi_null_arguments import SANITIZERS, compiler
    clang = compiler()
    library = tmp_path / "Mass.so"  # the glue finds its class by the binary's name
    sources = [FMI3_GLUE, *(p for p in NATIVE_SOURCES if p.suffix == ".c" and p != FMI2_GLUE),
               *native_tables.write(tmp_path), *native_tables.law_sources()]
    subprocess.run([clang, *SANITIZERS, "-shared", "-fPIC", "-ffp-contract=off", "-DMECHFMU_NATIVE",
                    f"-I{tmp_path}", f"-I{native_tables.NATIVE_DIR}", f"-I{HEADERS}", "-o", str(library),
                    *map(str, sources), "-lm", "-lpthread"], check=True)
    host = tmp_path / "fmi3_host"
    subprocess.run([clang, *SANITIZERS, f"-I{HEADERS}", "-o", str(host), str(HERE / "fmi3_host.c"), "-ldl"],
                   check=True)
    arguments = host_arguments(fmi3_fmus["Mass"], tmp_path / "Mass")
    checked_host(host, library, arguments, env=dict(os.environ, ASAN_OPTIONS="detect_leaks=1",
                                                    UBSAN_OPTIONS="print_stacktrace=1"))


SCENARIOS = sorted(str(p.parent.relative_to(ROOT / "scenarios")) for p in (ROOT / "scenarios").rglob("SystemStructure.ssd"))


@pytest.mark.parametrize("scenario", slow_but(SCENARIOS, "oscillator", "elastogap"))
def test_a_shipped_scenario_through_the_fmi3_fmus_gives_the_fmi2_runs_bits(fmi3_fmus, scenario):
    """Under the scenario's own master: every recorded value equal, row by row; for the fast tier's two also the
    error estimate (its companion runs through the FMI 3.0 FMUs too)."""
    estimate = scenario in ("oscillator", "elastogap")
    two = simulate(ROOT / "scenarios" / scenario, estimate_error=estimate)
    three = simulate(ROOT / "scenarios" / scenario, fmi_version=3, estimate_error=estimate)
    assert three.data.dtype.names == two.data.dtype.names and len(three.data) == len(two.data)
    for name in two.data.dtype.names:
        assert np.array_equal(three.data[name], two.data[name]), (scenario, name)
    if estimate:
        assert three.accuracy.estimate == two.accuracy.estimate > 0, (three.accuracy, two.accuracy)


def test_a_scenario_mixing_fmi2_and_fmi3_fmus_runs_and_equals_either(fmi3_fmus, tmp_path):
    """The oscillator with its mass an FMI 3.0 FMU and its spring and ground FMI 2.0 ones, as an SSD names them."""
    from test_bad_inputs import edited
    folder = edited(tmp_path, lambda text: text.replace("/fmus/Mass.fmu", "/fmus/fmi3/Mass.fmu"))
    mixed = simulate(folder)
    assert FmuSlave.unpacked(str(fmi3_fmus["Mass"]))[0].fmiVersion == "3.0"
    two = simulate(ROOT / "scenarios" / "oscillator")
    for name in two.data.dtype.names:
        assert np.array_equal(mixed.data[name], two.data[name]), name


def test_mechfmu_run_takes_the_fmi_version(fmi3_fmus, tmp_path, capsys):
    from mechfmu.cli import main
    assert main(["run", str(ROOT / "scenarios" / "oscillator"), "--fmi-version", "3", "--stop", "0.1",
                 "--out", str(tmp_path / "three.csv")]) == 0
    assert main(["run", str(ROOT / "scenarios" / "oscillator"), "--stop", "0.1", "--out", str(tmp_path / "two.csv")]) == 0
    assert (tmp_path / "three.csv").read_bytes() == (tmp_path / "two.csv").read_bytes()
    with pytest.raises(ValueError, match="FMI version 4: mechfmu's FMUs are built for FMI 2 and 3"):
        simulate(ROOT / "scenarios" / "oscillator", fmi_version=4)


@pytest.fixture(scope="module")
def mass_everywhere(fmus, tmp_path_factory):
    """The Mass as an FMI 3.0 FMU with every platform's binaries, unpacked: (folder, host arguments)."""
    from mechfmu.fmu.native import PLATFORMS
    directory = tmp_path_factory.mktemp("fmi3_everywhere")
    fmi3.build(["Mass"], directory=directory, platforms=list(PLATFORMS))
    folder = directory / "Mass"
    return folder, host_arguments(directory / "Mass.fmu", folder)


def motion(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("motion "))


@pytest.mark.slow
def test_the_windows_binary_under_wine_gives_the_linux_bits(mass_everywhere, tmp_path):
    """tests/fmi3_host.c built for Windows with zig, run under Wine on the x86_64-windows binary: every check holds
    and the motion after the early returns is the Linux binary's to the bit."""
    from windows_host import Wine, compile_windows_host, windows_path
    folder, arguments = mass_everywhere
    linux = checked_host(compile_c_host("fmi3_host", tmp_path / "fmi3_host"),
                         folder / "binaries" / "x86_64-linux" / "Mass.so", arguments)
    wine = Wine(tmp_path / "prefix")
    try:
        host = compile_windows_host("fmi3_host", tmp_path)
        proc = wine.run(host, [windows_path(folder / "binaries" / "x86_64-windows" / "Mass.dll"),
                               windows_path(folder / "resources") + "\\", *arguments[1:]])
    finally:
        wine.close()
    assert proc.returncode == 0 and proc.stdout.rstrip().endswith("violations 0"), proc.stdout + proc.stderr
    assert motion(proc.stdout) == motion(linux)


@pytest.mark.slow
def test_the_aarch64_binary_under_qemu_gives_the_x86_64_bits(mass_everywhere, tmp_path):
    from mechfmu.fmu.native import zig
    from test_aarch64 import SYSROOT
    folder, arguments = mass_everywhere
    linux = checked_host(compile_c_host("fmi3_host", tmp_path / "fmi3_host"),
                         folder / "binaries" / "x86_64-linux" / "Mass.so", arguments)
    qemu = shutil.which("qemu-aarch64-static") or shutil.which("qemu-aarch64")
    if not qemu or not (SYSROOT / "lib" / "libc.so.6").is_file():
        unavailable("the AArch64 test needs QEMU's user-mode emulation and the AArch64 C library (apt-get install "
                    "qemu-user-static libc6-arm64-cross; .ci/run installs them)")
    executable = tmp_path / "fmi3_host_aarch64"
    # -ffp-contract=off: the host's own times without AArch64's fused multiply-add, as the FMU is built
    subprocess.run([*zig(), "cc", "-target", "aarch64-linux-gnu", "-O2", "-ffp-contract=off", "-Wall", "-Wextra",
                    "-Werror", f"-I{HEADERS}", "-o", str(executable), str(HERE / "fmi3_host.c"), "-ldl"], check=True)
    proc = subprocess.run([qemu, "-L", str(SYSROOT), str(executable),
                           str(folder / "binaries" / "aarch64-linux" / "Mass.so"), *arguments], env={},
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and proc.stdout.rstrip().endswith("violations 0"), proc.stdout + proc.stderr
    assert motion(proc.stdout) == motion(linux)


@pytest.mark.slow
def test_every_platform_folder_holds_its_binary(mass_everywhere):
    """FMI 3.0's platform tuples; the macOS ones both the universal binary (its two slices)."""
    folder, _ = mass_everywhere
    found = sorted(str(p.relative_to(folder / "binaries")) for p in (folder / "binaries").rglob("Mass.*"))
    assert found == ["aarch64-darwin/Mass.dylib", "aarch64-linux/Mass.so", "x86_64-darwin/Mass.dylib",
                     "x86_64-linux/Mass.so", "x86_64-windows/Mass.dll"]
    assert validate_fmu(str(folder.with_suffix(".fmu"))) == []


@pytest.mark.parametrize("scenario", slow_but(["oscillator", "two_mass_oscillator", "elastogap", "limit_stops",
                                               "stick_slip", "ball_drop"], "oscillator"))
def test_the_monolithic_master_integrates_the_fmi3_model_exchange_fmus_as_the_fmi2_ones(fmi3_fmus, scenario):
    two = simulate(ROOT / "scenarios" / scenario, algorithm="monolithic", estimate_error=False)
    three = simulate(ROOT / "scenarios" / scenario, algorithm="monolithic", estimate_error=False, fmi_version=3)
    assert two.ok and three.ok and three.data.dtype.names == two.data.dtype.names
    for name in two.data.dtype.names:
        assert np.array_equal(three.data[name], two.data[name]), (scenario, name)


def test_an_archive_of_fmi3_fmus_runs_in_mechfmu_and_ecos_as_the_scenario(fmi3_fmus, tmp_path):
    """export-ssp --fmi-version 3: every instance's FMU an FMI 3.0 one carrying its values (its own instantiation
    token); mechfmu runs it as the FMI 2.0 scenario to the bit, ecos as mechfmu's strict Jacobi; the summary names
    the tools that run it and why the others do not."""
    from mechfmu.ssp.export import export_ssp, export_summary
    from test_ssp_tools import TOLERANCE, ecos_run, needs_ecospy, relative_difference
    archive = export_ssp(ROOT / "scenarios" / "oscillator", tmp_path / "oscillator.ssp", fmi_version=3)
    tokens = set()
    with zipfile.ZipFile(archive) as zf:
        for member in (n for n in zf.namelist() if n.endswith(".fmu")):
            zf.extract(member, tmp_path)
            root = description(tmp_path / member)
            assert root.get("fmiVersion") == "3.0", member
            tokens.add(root.get("instantiationToken"))
    assert len(tokens) == 3
    mass = description(tmp_path / "resources" / "mass" / "Mass.fmu").find("ModelVariables/Float64[@name='m']")
    assert float(mass.get("start")) == load_scenario(ROOT / "scenarios" / "oscillator").components["mass"].parameters["m"]
    ours = simulate(archive, algorithm="jacobi", exchange="strict")
    two = simulate(ROOT / "scenarios" / "oscillator", algorithm="jacobi", exchange="strict")
    for name in two.data.dtype.names:
        assert np.array_equal(ours.data[name], two.data[name]), name
    summary = export_summary(archive)
    assert "runs in mechfmu and ecos)" in summary and "load FMI 2.0 FMUs only" in summary, summary
    with pytest.raises(ValueError, match="OMSimulator 2.1.3 runs FMI 2.0 FMUs only"):
        export_ssp(ROOT / "scenarios" / "oscillator", tmp_path / "x.ssp", fmi_version=3, strongly_coupled=True)
    needs_ecospy()
    columns = ["mass.s", "mass.v"]
    theirs = ecos_run(archive, len(ours.data) - 1, columns)
    for k, column in enumerate(columns):
        assert relative_difference(ours.data[column], theirs[:, k]) < TOLERANCE, column


def test_an_importer_brackets_an_event_inside_one_step_by_early_returns_without_restoring(fmi3_fmus):
    """The intermediate update called again after each early return, the step taken again from its start each time:
    a bisection on the mass's position (from 0.2 m, pulled back), all inside one fmi3DoStep, finds where it passes a
    level to 1e-10 s, no FMU state taken or restored; the step ends there, as an exact step to that time would."""
    h, level = 0.1, 0.15
    low, high, asked = [0.0], [h], []
    md = read_model_description(str(fmi3_fmus["Mass"]))
    vr = {v.name: v.valueReference for v in md.modelVariables}

    def bisect(environment, time, set_requested, get_allowed, finished, can_return, requested, when):
        s = fmu.getFloat64([vr["flange_a.s"]])[0]
        asked.append(time)
        (high if s <= level else low)[0] = time
        requested[0], when[0] = True, (low[0] + high[0]) / 2 if high[0] - low[0] > 1e-10 else high[0]

    fmu = FMU3Slave(guid=md.guid, unzipDirectory=extract(str(fmi3_fmus["Mass"])), modelIdentifier="Mass",
                    instanceName="bisect")
    fmu.instantiate(eventModeUsed=True, earlyReturnAllowed=True, intermediateUpdate=bisect)
    started(fmu, vr, "Mass", **{"flange_a.f": -1.0})
    event, terminate, returned, last = fmu.doStep(0.0, h)
    assert returned and last == high[0] and high[0] - low[0] <= 1e-10 and 20 < len(asked) < 200, (last, asked)
    s = fmu.getFloat64([vr["flange_a.s"]])[0]
    assert s <= level
    for end, side in ((last, s), (low[0], None)):
        exact, vr2 = slave(fmi3_fmus["Mass"], "Mass")
        started(exact, vr2, "Mass", **{"flange_a.f": -1.0})
        exact.doStep(0.0, end)
        found = exact.getFloat64([vr2["flange_a.s"]])[0]
        assert found == side if side is not None else found > level  # the level lies between low and last
