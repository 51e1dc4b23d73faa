"""Every registered coupling algorithm on systems built in code: in-process components (no FMU,
no scenario file) for the physics, mock slaves for the failure paths (refused steps, an iteration
that cannot converge). A new algorithm registered with ``@register`` is picked up here."""
from __future__ import annotations

import math

import pytest
from mechfmu.components import COMPONENTS

from mechfmu.master.algorithms import ALGORITHMS, make_algorithm, refuse_unenforced_constraints
from mechfmu.master.coupled_system import CoupledSystem, StepRefused
from mechfmu.master.slaves import LocalSlave, Slave, VariableInfo
from mechfmu.ssp.scenario import Connection

#: the algorithms that run the in-process slaves of these tests (newton-friction takes FMI 3.0 co-simulation FMUs
#: only: tests/test_friction_cosimulation.py)
IN_PROCESS = sorted(set(ALGORITHMS) - {"newton-friction"})

#: options an algorithm needs for a system without constraints (newton iterates on the connections)
WITHOUT_CONSTRAINTS = {"newton": {"coupling": "implicit"}}
K, M, X0 = 400.0, 1.0, 0.1  # wall spring [N/m], mass [kg], start displacement [m]; ω = 20 rad/s


def oscillator() -> CoupledSystem:
    """A mass on a spring to a wall, as the scenario oscillator_linear, built in code."""
    slaves = {"wall": LocalSlave("wall", COMPONENTS["Fixed"]),
              "spring": LocalSlave("spring", COMPONENTS["CoordinateSpringDamper"]),
              "mass": LocalSlave("mass", COMPONENTS["Mass"])}
    slaves["spring"].set_parameters({"stiffness": K})
    slaves["mass"].set_parameters({"m": M, "s_start": X0})
    wires = ["wall.flange.s -> spring.flange_a.s", "wall.flange.v -> spring.flange_a.v",
             "mass.flange_a.s -> spring.flange_b.s", "mass.flange_a.v -> spring.flange_b.v",
             "spring.flange_b.f -> mass.flange_a.f"]
    connections = [Connection(*a.split(".", 1), *b.split(".", 1)) for a, b in (w.split(" -> ") for w in wires)]
    return CoupledSystem(slaves, connections)


def run(name: str, system: CoupledSystem, h: float, stop: float, **options):
    algorithm = make_algorithm(name, **{**WITHOUT_CONSTRAINTS.get(name, {}), **options})
    system = CoupledSystem(system.slaves, algorithm.coupling_connections(system.connections, system.slaves))
    for slave in system.slaves.values():
        slave.enter_initialization(0.0, stop)
    algorithm.initialize(system, 0.0)
    for slave in system.slaves.values():
        slave.exit_initialization()
    for n in range(round(stop / h)):
        algorithm.step(system, n * h, h)
        assert algorithm.status == "ok", algorithm.message
    return algorithm, system


@pytest.mark.parametrize("name", IN_PROCESS)
def test_every_algorithm_converges_on_the_oscillator(name):
    """x(t) = X0·cos(ωt). Every algorithm is at least first order: the error stays below the bound of
    explicit zero-order-hold coupling, X0·(ωh)·(ωt) (its phase error grows by ~ωh·ω per unit time),
    and halving h divides it by at least 1.8 (2 for first order, 4 for second order, minus
    higher-order terms) unless it is round-off already (linear-implicit integrates a linear spring
    to a wall exactly). The monolithic master has no coupling error: its integrator's steps do not depend on
    h, so its error is the same at both h and within its tolerance (ode_rtol 1e-8: 1e-8·X0 over 0.5 s)."""
    omega = math.sqrt(K / M)
    errors = []
    for h in (2e-3, 1e-3):
        algorithm, system = run(name, oscillator(), h, 0.5)
        x = system.slaves["mass"].get(["s"])[0]
        errors.append(abs(x - X0 * math.cos(omega * 0.5)))
        assert algorithm.counters["steps"] == round(0.5 / h)
    print(f"\n{name}: errors {errors[0]:.2e}, {errors[1]:.2e} (ratio {errors[0] / errors[1]:.2f})")
    assert errors[1] < X0 * (omega * 1e-3) * (omega * 0.5)
    if name == "monolithic":
        assert errors[0] == errors[1] < 1e-8 * X0
        return
    assert errors[1] < 1e-12 or errors[0] / errors[1] > 1.8


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_options_are_parsed_once_and_bad_values_named(name):
    cls = ALGORITHMS[name]
    algorithm = make_algorithm(name)
    assert set(algorithm.config) == set(cls.options)
    for key, option in cls.options.items():  # strings from the command line give the typed value
        assert make_algorithm(name, **{key: str(option.default)}).config[key] == algorithm.config[key]
        if option.choices:
            with pytest.raises(ValueError, match=f"algorithm '{name}': {key} = 'bogus'; use one of"):
                make_algorithm(name, **{key: "bogus"})
    with pytest.raises(ValueError, match=f"algorithm '{name}': unknown option"):
        make_algorithm(name, bogus="1")


def test_only_constraint_solving_algorithms_accept_a_constraint():
    slaves = {"mass": LocalSlave("mass", COMPONENTS["Mass"]),
              "drive": LocalSlave("drive", COMPONENTS["CoordinateConstraint"])}
    for name, cls in ALGORITHMS.items():
        algorithm = make_algorithm(name)
        if cls.enforces_constraints:
            refuse_unenforced_constraints(algorithm, slaves)
        else:
            with pytest.raises(ValueError, match=f"constraint 'drive'.*algorithm '{name}' cannot"):
                refuse_unenforced_constraints(algorithm, slaves)


class MockSlave(Slave):
    """A slave built in code: state x, input u, output y = x + drift·(number of steps taken so far,
    repeated ones included); ``do_step`` adds h·u to x, or refuses at ``refuse_at``."""

    def __init__(self, name: str, drift: float = 0.0, refuse_at: float | None = None):
        super().__init__(name)
        self.variables = {"u": VariableInfo("u", "input"), "y": VariableInfo("y", "output", depends_on=())}
        self.x, self.u, self.taken, self.drift, self.refuse_at = 1.0, 0.0, 0, drift, refuse_at

    def set_parameters(self, values): pass
    def enter_initialization(self, start_time, stop_time): pass
    def exit_initialization(self): pass
    def terminate(self): pass
    def serialize_state(self, state): return repr(state).encode()
    def deserialize_state(self, data): return eval(data)  # noqa: S307 (our own repr of a float)

    def set(self, names, values):
        self.u = values[0]

    def get(self, names):
        return [self.x + self.drift * self.taken]

    def do_step(self, t, h):
        if self.refuse_at is not None and t >= self.refuse_at:
            self.last_error = f"{self.name}: refused at t={t}"
            return False
        self.taken += 1
        self.x += h * self.u
        return True

    def get_state(self):
        return self.x

    def set_state(self, state):
        self.x = state


def mock_loop(**kw) -> CoupledSystem:
    slaves = {"a": MockSlave("a", **kw), "b": MockSlave("b", **kw)}
    return CoupledSystem(slaves, [Connection("a", "y", "b", "u"), Connection("b", "y", "a", "u")])


@pytest.mark.parametrize("name", sorted(n for n in IN_PROCESS if ALGORITHMS[n].steps_slaves))
def test_a_refused_step_is_raised_with_the_slaves_reason(name):
    with pytest.raises(StepRefused, match="a: refused at t=0.002"):
        run(name, mock_loop(refuse_at=0.002), 1e-3, 0.01)


@pytest.mark.parametrize("name", [n for n in IN_PROCESS if "rollbacks" in ALGORITHMS[n].counter_names])
def test_an_iteration_that_cannot_converge_stops_with_status_not_exception(name):
    """The outputs change with every repetition of the step (drift), so no iteration converges: the
    algorithm reports status "error" with time and residual and takes no further step."""
    algorithm = make_algorithm(name, **WITHOUT_CONSTRAINTS.get(name, {}), max_iterations="5")
    system = mock_loop(drift=1.0)
    algorithm.initialize(system, 0.0)
    algorithm.step(system, 0.0, 1e-3)
    assert algorithm.status == "error" and "did not converge at t=0 s" in algorithm.message
    assert algorithm.counters["rollbacks"] >= 4
    steps = algorithm.counters["steps"]
    algorithm.step(system, 1e-3, 1e-3)
    assert algorithm.counters["steps"] == steps  # a failed run takes no further step
