"""Directional derivatives (fmi2GetDirectionalDerivative, components/partials.py).

In-process, every component's partials agree with central differences taken here at random points (Richardson's
extrapolation from steps h and h/2; the analytic ones to 1e-6 of their size; the ones the component takes by differences to 1e-3 of their row's largest entry: two
difference steps, and for the tangent outputs of a user-function law a difference of a difference, whose rounding
noise is of the output's size over the moved variable's); an output does not move with an input it is declared
independent of (the modelDescription's dependencies). Through the FMUs (native, and Python-embedding), the
directional derivative is the in-process one bit for bit, for any seed, in co-simulation and Model Exchange, and a
variable that is no unknown or no known is refused with the same words. The monolithic master's Jacobian agrees
with differences of the whole system, and linear-implicit coupling derives the tangents of a connector that
outputs none."""
import ctypes
import math
import random
import zipfile
from pathlib import Path

import numpy as np
import pytest
from conftest import slow_but
from fmpy.fmi2 import FMU2Model, FMU2Slave
from mechfmu.components import COMPONENTS
from mechfmu.components.partials import derivative_variable, state_variable
from test_native_fmus import NATIVE, instance

ROOT = Path(__file__).resolve().parent.parent
#: the test's own difference step, relative (the component's is 1e-5: the two differ)
STEP = 4e-5


def prepared(name: str, rng: random.Random, event_mode: bool = False):
    """An initialized component with its example parameters, random inputs and (Model Exchange) random states;
    ``event_mode``: through Model Exchange's event mode at its initial point first (as an FMU instance is)."""
    cls = COMPONENTS[name]
    component = cls("probe")
    for key, value in cls.example_parameters.items():
        component.set(key, value)
    component.initialize(0.0)
    if event_mode:
        component.set_time(0.0)
        component.update_discrete_states()
    for i in cls.inputs:
        component.set(i.name, rng.uniform(-0.5, 0.5))
    if cls.continuous_states and not cls.co_simulation_only:
        states = component.get_continuous_states()
        component.set_continuous_states([x + rng.uniform(-0.3, 0.3) for x in states])
    return component


def operands(cls) -> tuple[list[str], list[str]]:
    """(unknowns, knowns): outputs and state derivatives; inputs and states."""
    me = not cls.co_simulation_only
    states = list(cls.continuous_states) if me else []
    return ([o.name for o in cls.outputs] + [derivative_variable(s) for s in states],
            [i.name for i in cls.inputs] + [state_variable(s) for s in states])


def evaluated(component, unknowns: list[str]) -> list[float]:
    outputs = component.compute_outputs()
    derivatives = component.derivatives() if any(u.startswith("der(") for u in unknowns) else []
    return [outputs[u] if u in outputs else derivatives[int(_state_index(component, u))] for u in unknowns]


def _state_index(component, unknown: str) -> int:
    return [derivative_variable(s) for s in type(component).continuous_states].index(unknown)


def known_value(component, known: str) -> float:
    """An input's value or a continuous state (``state.x``)."""
    if known.startswith("state."):
        return component.get_continuous_states()[list(type(component).continuous_states).index(known[6:])]
    return component.values[known]


def move(component, known: str, value: float) -> None:
    """Set an input or a continuous state (``state.x``) through the component's calls."""
    if known.startswith("state."):
        states = component.get_continuous_states()
        states[list(type(component).continuous_states).index(known[6:])] = value
        component.set_continuous_states(states)
    else:
        component.set(known, value)


@pytest.mark.parametrize("name", sorted(COMPONENTS))
def test_partials_agree_with_central_differences_at_random_points(name):
    cls = COMPONENTS[name]
    unknowns, knowns = operands(cls)
    analytic = set(cls.partial_pattern)
    feeds, inputs = {o.name: o.depends_on for o in cls.outputs}, {i.name for i in cls.inputs}
    assert analytic <= {(u, k) for u in unknowns for k in knowns}, "a pattern pair names no unknown or no known"
    for seed in range(3):
        component = prepared(name, random.Random(seed))
        columns, references, moved, sizes = [], [], [], []
        for j, known in enumerate(knowns):
            seeds = [0.0] * len(knowns)
            seeds[j] = 1.0
            columns.append(component.directional_derivative(unknowns, knowns, seeds))
            x = known_value(component, known)
            h = STEP * max(1.0, abs(x))
            move(component, known, x + h)
            up = evaluated(component, unknowns)
            move(component, known, x - h)
            down = evaluated(component, unknowns)
            move(component, known, x + h / 2)
            half_up = evaluated(component, unknowns)
            move(component, known, x - h / 2)
            half_down = evaluated(component, unknowns)
            move(component, known, x)
            # Richardson's extrapolation of the central differences at h and h/2: truncation O(h^4), so a stiff
            # law's curvature (the sphere's contact) stays far below the tolerance
            references.append([(4 * (c - d) / h - (a - b) / (2 * h)) / 3
                               for a, b, c, d in zip(up, down, half_up, half_down)])
            sizes.append([abs(a + b) / 2 / max(1.0, abs(x)) for a, b in zip(up, down)])
            moved.append([a != b for a, b in zip(up, down)])
        for i, unknown in enumerate(unknowns):
            row = 1.0 + max((abs(r[i]) for r in references), default=0.0)
            for j, known in enumerate(knowns):
                value, reference = columns[j][i], references[j][i]
                if (unknown, known) in analytic:
                    assert abs(value - reference) <= 1e-6 * (1.0 + abs(reference)), (name, seed, unknown, known,
                                                                                       value, reference)
                else:
                    scale = row + sizes[j][i]  # a difference of a difference: noise of the unknown's size over x
                    assert abs(value - reference) <= 1e-3 * scale, (name, seed, unknown, known, value, reference)
                    if unknown in feeds and known in inputs and known not in feeds[unknown]:
                        assert value == 0.0 and not moved[j][i], (name, unknown, known, "declared independent")


@pytest.mark.parametrize("parameters", [{"velocityLevel": True}, {"activeConnector": False}])
def test_the_constraint_partials_in_its_other_branches(parameters):
    """The constraint's outputs are linear in its inputs: the analytic partials equal the central differences (to
    rounding) at the velocity level and inactive (where the residuals are lambda itself) too."""
    cls = COMPONENTS["CoordinateConstraint"]
    component = cls("probe")
    for key, value in {**cls.example_parameters, **parameters}.items():
        component.set(key, value)
    component.initialize(0.0)
    rng = random.Random(7)
    component.set_many([i.name for i in cls.inputs], [rng.uniform(-0.5, 0.5) for _ in cls.inputs])
    component.do_step(0.0, 0.01)
    knowns = [i.name for i in cls.inputs]
    for unknown, known in cls.partial_pattern:
        seeds = [1.0 if k == known else 0.0 for k in knowns]
        value = component.directional_derivative([unknown], knowns, seeds)[0]
        x = component.values[known]
        component.set(known, x + 0.5)
        up = component.get(unknown)
        component.set(known, x - 0.5)
        down = component.get(unknown)
        component.set(known, x)
        assert value == pytest.approx(up - down, abs=1e-12), (parameters, unknown, known)


def test_directional_derivative_sums_the_partials_times_the_seeds():
    """Linearity: the derivative along a random direction is the partials' combination (to rounding)."""
    component = prepared("ElastoGap", random.Random(4))
    unknowns, knowns = operands(COMPONENTS["ElastoGap"])
    rng = random.Random(5)
    direction = [rng.uniform(-1, 1) for _ in knowns]
    columns = [component.directional_derivative(unknowns, knowns, [1.0 if i == j else 0.0 for i in range(len(knowns))])
               for j in range(len(knowns))]
    along = component.directional_derivative(unknowns, knowns, direction)
    for i, value in enumerate(along):
        expected = math.fsum(columns[j][i] * direction[j] for j in range(len(knowns)))
        assert value == pytest.approx(expected, rel=1e-12, abs=1e-9)


def test_a_variable_that_is_no_unknown_or_no_known_is_refused_by_name():
    component = prepared("Mass", random.Random(0))
    with pytest.raises(ValueError, match=r"Mass 'probe': directional derivative unknown = 'flange_a.f' is not an "
                                         r"output or a state derivative"):
        component.directional_derivative(["flange_a.f"], ["f_drive"], [1.0])
    with pytest.raises(ValueError, match=r"directional derivative known = 'a' is not an input or a continuous state"):
        component.directional_derivative(["a"], ["a"], [1.0])


def fmu_directional_derivatives(fmu, model: str, model_exchange: bool, rng_seed: int) -> list:
    """At a random point of an FMU instance (the component's example parameters, random inputs and states): the
    directional derivative of every unknown along each unit seed and along a random one, then the messages of two
    refused calls; with the same point's in-process values appended (for comparison)."""
    cls = COMPONENTS[model]
    messages: list[str] = []
    fmu_instance, vr = instance(fmu, model, messages, FMU2Model if model_exchange else FMU2Slave)
    fmu_instance.setupExperiment(startTime=0.0)
    for name, value in cls.example_parameters.items():
        setter = {str: fmu_instance.setString, bool: fmu_instance.setBoolean,
                  int: fmu_instance.setInteger}.get(type(value), fmu_instance.setReal)
        setter([vr[name]], [value])
    fmu_instance.enterInitializationMode()
    fmu_instance.exitInitializationMode()
    component = prepared(model, random.Random(rng_seed), event_mode=model_exchange)
    if model_exchange:
        fmu_instance.newDiscreteStates()
        fmu_instance.enterContinuousTimeMode()
        states = component.get_continuous_states()
        fmu_instance.setContinuousStates((ctypes.c_double * max(1, len(states)))(*states), len(states))
    unknowns, knowns = (operands(cls) if model_exchange
                        else ([o.name for o in cls.outputs], [i.name for i in cls.inputs]))
    if cls.inputs:
        fmu_instance.setReal([vr[i.name] for i in cls.inputs], [component.values[i.name] for i in cls.inputs])
    rng = random.Random(rng_seed + 100)
    directions = [[1.0 if i == j else 0.0 for i in range(len(knowns))] for j in range(len(knowns))]
    directions.append([rng.uniform(-1, 1) for _ in knowns])
    through_fmu, in_process = [], []
    for seeds in directions:
        through_fmu.append([float(x).hex() for x in fmu_instance.getDirectionalDerivative(
            [vr[u] for u in unknowns], [vr[k] for k in knowns], seeds)])
        in_process.append([float(x).hex() for x in component.directional_derivative(unknowns, knowns, seeds)])
    for bad_unknown in (vr[cls.inputs[0].name] if cls.inputs else vr[cls.parameters[0].name], len(vr) + 7):
        try:
            fmu_instance.getDirectionalDerivative([bad_unknown], [vr[knowns[0]]] if knowns else [], [1.0][:len(knowns)])
        except Exception as exc:  # fmpy raises on fmi2Error: the logged words count
            messages.append(str(exc))
    return [through_fmu, in_process, messages]


@pytest.mark.parametrize("model", slow_but(NATIVE, "ElastoGap", "Mass", "CoordinateSpringDamperExt", "RigidBody"))
def test_native_fmu_directional_derivative_is_the_in_process_one_bit_for_bit(fmus, model):
    with zipfile.ZipFile(fmus[model]) as zf:
        assert 'providesDirectionalDerivative="true"' in zf.read("modelDescription.xml").decode()
    for model_exchange in (False, True) if not COMPONENTS[model].co_simulation_only else (False,):
        through_fmu, in_process, messages = fmu_directional_derivatives(fmus[model], model, model_exchange, 3)
        assert through_fmu == in_process, (model, model_exchange)
        assert any("is not an output or a state derivative" in m for m in messages), messages
        assert any("no such variable" in m for m in messages), messages


@pytest.mark.parametrize("model", slow_but(["ElastoGap", "Mass", "CoordinateSpringDamperExt", "Table"], "Mass"))
def test_python_fmu_directional_derivative_is_the_native_one(fmus, python_fmus, model):
    for model_exchange in (False, True):
        native = fmu_directional_derivatives(fmus[model], model, model_exchange, 6)
        python = fmu_directional_derivatives(python_fmus[model], model, model_exchange, 6)
        assert native == python


@pytest.mark.parametrize("scenario", ["two_mass_oscillator", "elastogap", "stick_slip"])
def test_the_monolithic_jacobian_is_the_difference_quotient_of_the_whole_system(monkeypatch, scenario):
    """Each Jacobian the monolithic master hands its integrator (assembled from the components' directional
    derivatives through the connections) against central differences of the assembled ODE right-hand side at the
    same point: within 1e-5 of the Jacobian's largest entry (the system's own differences, step 1e-6 per state)."""
    from mechfmu.master.algorithms.monolithic import Monolithic
    from mechfmu.master.simulate import simulate

    original, worst = Monolithic._jacobian, []

    def checked(self, system, t, x):
        jacobian = original(self, system, t, x)
        differences = np.empty_like(jacobian)
        for j in range(len(x)):
            h = 1e-6 * max(1.0, abs(x[j]))
            up, down = x.copy(), x.copy()
            up[j] += h
            down[j] -= h
            differences[:, j] = (self._derivatives(system, t, up) - self._derivatives(system, t, down)) / (2 * h)
        self._put(system, t, x)
        worst.append(np.max(np.abs(jacobian - differences)) / (1.0 + np.max(np.abs(differences))))
        return jacobian

    monkeypatch.setattr(Monolithic, "_jacobian", checked)
    result = simulate(ROOT / "scenarios" / scenario, "monolithic", local=True, stop=0.3)
    assert result.ok, result.message
    assert worst and max(worst) < 1e-5, (len(worst), max(worst))


@pytest.mark.parametrize("scenario", ["two_mass_oscillator", "limit_stops"])
@pytest.mark.slow
def test_the_monolithic_master_through_the_fmus_gives_the_in_process_run_with_either_jacobian(scenario):
    """Through the FMUs (fmi2GetDirectionalDerivative) the run is the in-process one bit for bit; the Jacobian by
    differences of the whole system gives the same solution to the integrator's tolerance."""
    from mechfmu.master.simulate import simulate

    runs = {(local, jacobian): simulate(ROOT / "scenarios" / scenario, "monolithic", local=local, stop=0.5,
                                        jacobian=jacobian)
            for local in (True, False) for jacobian in ("directional", "differences")}
    assert all(r.ok for r in runs.values()), [r.message for r in runs.values()]
    exact, fmus, differences = runs[(True, "directional")], runs[(False, "directional")], runs[(True, "differences")]
    for name in exact.data.dtype.names:
        assert np.array_equal(exact.data[name], fmus.data[name]), name
        scale = 1.0 + np.max(np.abs(exact.data[name]))
        assert np.max(np.abs(exact.data[name] - differences.data[name])) < 1e-4 * scale, name


FOREIGN_DAMPER = '''"""ForeignDamper: a linear damper as another tool would export it, with no tangent outputs.

    f = d·(flange_b.v − flange_a.v), flange_b.f = +f, flange_a.f = −f
"""
from .base import Component, Input, Output, Param

FLANGES = ("flange_a.s", "flange_a.v", "flange_b.s", "flange_b.v")


class ForeignDamper(Component):
    description = "Linear damper without tangent outputs"
    source = "Modelica Standard Library 4.1, Modelica.Mechanics.Translational.Components.Damper"
    parameters = (Param("d", 0.0, "N.s/m", "Damping constant", min=0.0),)
    inputs = tuple(Input(n, 0.0, "m" if n.endswith(".s") else "m/s", n) for n in FLANGES)
    outputs = (Output("flange_a.f", "N", "Cut force at flange_a", FLANGES),
               Output("flange_b.f", "N", "Cut force at flange_b", FLANGES))

    def compute_outputs(self):
        f = self.values["d"] * (self.values["flange_b.v"] - self.values["flange_a.v"])
        return {"flange_a.f": -f, "flange_b.f": f}
'''


@pytest.mark.slow
def test_linear_implicit_takes_the_tangents_of_a_connector_without_tangent_outputs_from_its_derivatives(
        tmp_path, fmus):
    """A damper FMU with no tangent outputs (as another tool exports one) between a wall and a mass: the master
    computes its damping tangent from fmi2GetDirectionalDerivative, so linear-implicit integrates the mass to
    v(t) = V0·exp(−D·t/M) to round-off (measured 1.7e-17 m/s: the FMU's difference quotient of its linear law is
    exact), as it does with a connector that outputs its tangents, where Jacobi is first order (8.4e-5 at h = 1e-3)."""
    from conftest import components_with
    from test_new_connector import V0, D, M, damped_slide

    from mechfmu.fmu.build import build
    from mechfmu.master.simulate import simulate

    components = components_with(tmp_path, "foreign_damper", FOREIGN_DAMPER)
    paths = {p.stem: p for p in build(["ForeignDamper", "Mass", "Fixed"], directory=tmp_path / "fmus",
                                      components_dir=components, platforms=["linux64"])}
    scenario = damped_slide(paths["Fixed"], paths["ForeignDamper"], paths["Mass"])
    exact = V0 * math.exp(-D / M)
    errors = {}
    for algorithm in ("jacobi", "linear-implicit"):
        result = simulate(scenario, algorithm=algorithm)
        assert result.ok, result.message
        errors[algorithm] = abs(result.data["mass.v"][-1] - exact)
    assert errors["jacobi"] > 5e-5
    assert errors["linear-implicit"] < 1e-12, errors  # without the derived tangent it would be Jacobi's


@pytest.mark.parametrize("kind", ["native", "python"])
def test_bad_directional_derivative_calls_are_refused_by_name(fmus, python_fmus, kind):
    """NULL arrays, sizes beyond any FMU and a call before initialization: fmi2Error with the reason logged, no
    crash, and the instance still answers."""
    messages: list[str] = []
    fmu = (fmus if kind == "native" else python_fmus)["Mass"]
    slave, vr = instance(fmu, "Mass", messages)
    refs = (ctypes.c_uint * 1)(vr["a"])
    knowns = (ctypes.c_uint * 1)(vr["f_drive"])
    seeds, out = (ctypes.c_double * 1)(1.0), (ctypes.c_double * 1)(0.0)

    def call(*arguments):
        try:
            slave.fmi2GetDirectionalDerivative(slave.component, *arguments)
        except Exception as exc:  # fmpy raises on fmi2Error
            return str(exc)
        return "ok"

    assert "status 3" in call(refs, 1, knowns, 1, seeds, out)  # fmi2Error
    assert messages[-1] == "3 fmi2GetDirectionalDerivative: not allowed in state instantiated"
    slave.setupExperiment(startTime=0.0)
    slave.enterInitializationMode()
    slave.exitInitializationMode()
    for arguments, words in (((None, 1, knowns, 1, seeds, out), "vUnknown is NULL with nUnknown = 1"),
                             ((refs, 1, knowns, 1, None, out), "dvKnown is NULL with nKnown = 1"),
                             ((refs, 1, knowns, 2 ** 40, seeds, out), "more than any FMU has")):
        assert "status 3" in call(*arguments)
        assert words in messages[-1], messages[-1]
    assert call(refs, 1, knowns, 1, seeds, out) == "ok"
    assert out[0] == 1.0  # ∂a/∂f_drive = 1/m, m = 1 kg
