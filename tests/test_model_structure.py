"""Every FMU declares every dependency it has (FMI 2.0 ModelStructure): an output or a state derivative that moves
with a known (an input; in Model Exchange a continuous state, which FMI 2.0 counts among the knowns) lists it in its
dependencies, where an empty list means "none". Checked against the FMU itself through fmpy at random points: its
own directional derivative (fmi2GetDirectionalDerivative) along each known, and its values with the known moved
either way (a central difference taken here); an undeclared pair must give exactly 0 and not move the value at
all. A continuous state declared for an output, and every known declared for a state derivative, must also move it
somewhere (the declaration is not a blanket: a derivative once listed every state and input)."""
import ctypes
import random

import pytest
from conftest import slow_but
from fmpy import read_model_description
from fmpy.fmi2 import FMU2Model, FMU2Slave
from mechfmu.components import COMPONENTS
from test_directional_derivatives import prepared
from test_native_fmus import instance

#: the test's own difference step, relative
STEP = 1e-4
#: products of inertia (a RigidBody's)
PRODUCTS = ("inertia.xy", "inertia.xz", "inertia.yz")
#: the models with continuous states (an output of theirs is a state, or is computed from one)
STATED = sorted(name for name, cls in COMPONENTS.items() if cls.continuous_states and not cls.co_simulation_only)


def declared(md) -> dict[str, set[str] | None]:
    """Per output and state derivative, the names of the knowns its dependencies list (None: all, as FMI reads a
    missing attribute)."""
    return {u.variable.name: None if u.dependencies is None else {d.name for d in u.dependencies}
            for u in [*md.outputs, *md.derivatives]}


class Probe:
    """An FMU instance at a random point: its example parameters, random inputs and (Model Exchange) random
    states, read and moved through FMI calls only."""

    def __init__(self, fmu, model: str, seed: int):
        self.cls = COMPONENTS[model]
        self.md = read_model_description(str(fmu))
        self.me = self.md.modelExchange is not None
        self.fmu, self.vr = instance(fmu, model, [], FMU2Model if self.me else FMU2Slave)
        self.fmu.setupExperiment(startTime=0.0)
        for name, value in self.cls.example_parameters.items():
            setter = {str: self.fmu.setString, bool: self.fmu.setBoolean,
                      int: self.fmu.setInteger}.get(type(value), self.fmu.setReal)
            setter([self.vr[name]], [value])
        # every axis coupled: gravity in a random direction, products of inertia small and random (a principal axis
        # hides a gyroscopic term; the example's inertia stays positive definite)
        rng = random.Random(seed)
        tilted = {p.name: rng.uniform(-10, 10) if p.name.startswith("gravity.") else rng.uniform(-0.02, 0.02)
                  for p in self.cls.parameters if p.name.startswith("gravity.") or p.name in PRODUCTS}
        if tilted:
            self.fmu.setReal([self.vr[n] for n in tilted], list(tilted.values()))
        self.fmu.enterInitializationMode()
        self.fmu.exitInitializationMode()
        point = prepared(model, random.Random(seed), event_mode=self.me)
        self.inputs = [i.name for i in self.cls.inputs]
        self.states = [f"state.{s}" for s in self.cls.continuous_states] if self.me else []
        if self.me:
            self.fmu.newDiscreteStates()
            self.fmu.enterContinuousTimeMode()
            self.x = point.get_continuous_states()
            self._set_states()
        if self.inputs:
            self.fmu.setReal([self.vr[n] for n in self.inputs], [point.values[n] for n in self.inputs])
        self.unknowns = [o.name for o in self.cls.outputs] + [f"der({s})" for s in self.states]
        self.knowns = self.inputs + self.states

    def _set_states(self) -> None:
        self.fmu.setContinuousStates((ctypes.c_double * len(self.x))(*self.x), len(self.x))

    def value(self, known: str) -> float:
        return self.x[self.states.index(known)] if known in self.states else self.fmu.getReal([self.vr[known]])[0]

    def move(self, known: str, value: float) -> None:
        if known in self.states:
            self.x[self.states.index(known)] = value
            self._set_states()
        else:
            self.fmu.setReal([self.vr[known]], [value])

    def unknown_values(self) -> list[float]:
        return list(self.fmu.getReal([self.vr[u] for u in self.unknowns]))

    def column(self, known: str) -> tuple[list[float], list[float], list[bool]]:
        """Along ``known``: the FMU's directional derivatives, the central differences and whether each moved."""
        seeds = [1.0 if k == known else 0.0 for k in self.knowns]
        derivative = list(self.fmu.getDirectionalDerivative([self.vr[u] for u in self.unknowns],
                                                            [self.vr[k] for k in self.knowns], seeds))
        x = self.value(known)
        h = STEP * max(1.0, abs(x))
        self.move(known, x + h)
        up = self.unknown_values()
        self.move(known, x - h)
        down = self.unknown_values()
        self.move(known, x)
        return derivative, [(a - b) / (2 * h) for a, b in zip(up, down)], [a != b for a, b in zip(up, down)]


@pytest.mark.parametrize("model", slow_but(sorted(COMPONENTS), "Mass", "Speed"))
def test_every_dependency_an_fmu_has_is_declared(fmus, model):
    """Mass's s (= its state s) once declared none: every output and state derivative on every known it moves with,
    at three random points."""
    found: dict[tuple[str, str], bool] = {}
    for seed in range(3):
        probe = Probe(fmus[model], model, seed)
        dependencies = declared(probe.md)
        assert set(dependencies) == set(probe.unknowns), model
        for known in probe.knowns:
            derivatives, differences, moved = probe.column(known)
            for unknown, derivative, difference, changed in zip(probe.unknowns, derivatives, differences, moved):
                deps = dependencies[unknown]
                listed = deps is None or known in deps
                found[unknown, known] = found.get((unknown, known), False) or derivative != 0.0
                if not listed:
                    assert derivative == 0.0 and difference == 0.0 and not changed, (
                        model, seed, unknown, known, derivative, difference, "moves, but is not declared")
        probe.fmu.terminate()
        probe.fmu.freeInstance()
    declared_pairs = {(u, k) for u, deps in dependencies.items() if deps for k in deps
                      if k.startswith("state.") or u.startswith("der(")}
    blanket = sorted(pair for pair in declared_pairs if not found[pair])
    assert not blanket, (model, "declared, but never moves with it", blanket)


@pytest.mark.parametrize("model", STATED)
def test_an_output_that_is_a_state_declares_it(fmus, model):
    """The outputs that are a body's or a source's state (s, v, phi, w, flange.*, a RigidBody's pose) list that
    state, by name from the port vocabulary, in ModelStructure/Outputs (35 such pairs were declared none)."""
    md = read_model_description(str(fmus[model]))
    dependencies = declared(md)
    cls = COMPONENTS[model]
    plain = {"s": "s", "v": "v", "phi": "s", "w": "v"}  # a rotational body's states keep the names s and v
    for output in cls.outputs:
        quantity = output.name.rsplit(".", 1)[-1]
        if quantity in plain and not output.depends_on and plain[quantity] in cls.continuous_states:
            assert f"state.{plain[quantity]}" in (dependencies[output.name] or ()), (model, output.name)
        if output.name.startswith(("position.", "orientation.", "velocity.")):
            state = {"position": "p", "orientation": "q", "velocity": "v"}[output.name.split(".")[0]]
            assert any(d.startswith(f"state.{state}[") for d in dependencies[output.name] or ()), output.name


@pytest.mark.parametrize("model", slow_but(sorted(COMPONENTS), "Mass"))
def test_every_initial_dependency_is_declared(fmus, model):
    """In initialization mode every output, state and state derivative that moves with a Real parameter or an
    input lists it among its InitialUnknowns dependencies (an initial value from a start parameter, s = s_start)."""
    cls = COMPONENTS[model]
    md = read_model_description(str(fmus[model]))
    listed = {u.variable.name: None if u.dependencies is None else {d.name for d in u.dependencies}
              for u in md.initialUnknowns}
    assert {o.name for o in cls.outputs} <= set(listed), model
    slave, vr = instance(fmus[model], model, [], FMU2Slave)
    slave.setupExperiment(startTime=0.0)
    for name, value in cls.example_parameters.items():
        setter = {str: slave.setString, bool: slave.setBoolean, int: slave.setInteger}.get(type(value), slave.setReal)
        setter([vr[name]], [value])
    slave.enterInitializationMode()
    unknowns = [n for n in listed if n in vr]
    knowns = [p.name for p in cls.parameters if p.type == "Real"] + [i.name for i in cls.inputs]
    before = list(slave.getReal([vr[u] for u in unknowns]))
    for known in knowns:
        x = slave.getReal([vr[known]])[0]
        try:
            slave.setReal([vr[known]], [x + STEP * max(1.0, abs(x))])
            moved = list(slave.getReal([vr[u] for u in unknowns]))
        except Exception:  # a value the component refuses (a range) moves nothing
            continue
        finally:
            slave.setReal([vr[known]], [x])
        for unknown, a, b in zip(unknowns, before, moved):
            if a != b:
                assert listed[unknown] is None or known in listed[unknown], (model, unknown, known, a, b)
    slave.terminate()
    slave.freeInstance()
