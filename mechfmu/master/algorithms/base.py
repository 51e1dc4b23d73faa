"""The coupling-algorithm base class, its option schema and the registry.

Adding a coupling algorithm (checklist):
1. subclass ``CouplingAlgorithm`` (or ``IterativeAlgorithm`` for one that repeats steps from saved
   states, ``mechfmu/master/algorithms/iterative.py``), give it a unique ``name`` and declare its ``options``
   as ``Option``s (default, type or choices, a check): the base class parses and checks every value
   once, from a string (command line, scenario file) or a Python value, and puts it in ``self.config``;
2. implement ``_step_impl(system, t, h)``: advance every slave from ``t`` to ``t + h`` and leave every
   connected input consistent with the new outputs, through ``system.do_step``/``step_all`` (raise
   ``StepRefused``) and ``system.transfer``; count extra work in ``self.counters`` (declare the names
   in ``counter_names``); on non-convergence set ``self.status``/``self.message`` and return, never
   raise. The public ``step`` counts steps and time;
3. ``initialize`` (optional) if the algorithm needs more than the dependency-ordered propagation;
   ``coupling_connections`` (optional) if it exchanges more than the scenario's connections;
   ``enforces_constraints = True`` only if it solves the constraint forces (``lambda``);
4. decorate with ``@register``; the generic tests (tests/test_algorithms.py) then run it on in-process
   slaves; add a convergence test against an analytic solution;
5. if the algorithm carries values from step to step (Newton's constraint forces), ``snapshot`` and
   ``restore`` them: a step may be taken again (event location, step halving).

Every algorithm takes the options ``events`` ("off" default, "on": event location,
``mechfmu/master/algorithms/events.py``), ``event_tolerance`` [s] and ``switching_tolerance`` [N] (0 default:
a step whose switchingError exceeds it is taken again up to the switch); ``adaptive`` ("off" default, "on": an
adaptive macro step, ``mechfmu/master/algorithms/step_control.py``) with ``rtol``, ``atol``, ``min_step``,
``max_step``, ``error_estimate`` and ``tolerance_per``; and ``energy_audit`` ("off" default, "on": the injected
energy per power bond in the run statistics, "columns": also as result columns; ``mechfmu/master/energy.py``).
``advance``
is one step with events and the audit; the step controller calls it, and everything it records that a
step taken again must undo is in ``bookkeeping``.
"""
from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from mechfmu.components.ports import ACTIVE, CONSTRAINT_EQUATION, LAMBDA, LOCKED
from mechfmu.master.algorithms.events import EventLocator, event_parameters
from mechfmu.master.algorithms.step_control import StepController
from mechfmu.master.coupled_system import CoupledSystem
from mechfmu.master.energy import EnergyAudit, power_bonds
from mechfmu.master.slaves import Slave
from mechfmu.ssp.close_names import suggestion
from mechfmu.ssp.scenario import Connection


def _positive(x: float) -> bool:
    return x > 0


@dataclass(frozen=True)
class Option:
    """An algorithm option: its default, how a value is parsed (``kind``: str, float, int) or the
    allowed ``choices``, and a ``check`` with its ``requirement`` text for the error message."""
    default: Any
    description: str = ""
    kind: Callable[[Any], Any] = str
    choices: tuple[str, ...] = ()
    check: Callable[[Any], bool] | None = None
    requirement: str = ""

    def parse(self, algorithm: str, key: str, value: Any) -> Any:
        try:
            parsed = self.kind(value)
            if self.kind is float and not math.isfinite(parsed):
                raise ValueError
            if self.kind is int and isinstance(value, float) and value != parsed:
                raise ValueError  # 2.7 is not silently 2
        except (TypeError, ValueError, OverflowError):
            names: dict[Callable[[Any], Any], str] = {float: "a finite number", int: "an integer"}
            what = names.get(self.kind, f"a {self.kind.__name__}")
            raise ValueError(f"algorithm {algorithm!r}: {key} = {value!r} is not {what}") from None
        if self.choices and parsed not in self.choices:
            raise ValueError(f"algorithm {algorithm!r}: {key} = {value!r}; use one of {self.choices}")
        if self.check is not None and not self.check(parsed):
            raise ValueError(f"algorithm {algorithm!r}: {key} = {value!r} {self.requirement}")
        return parsed

    def help(self) -> str:
        allowed = "|".join(self.choices) if self.choices else self.kind.__name__
        return f"{allowed}, default {self.default}" + (f": {self.description}" if self.description else "")


class CouplingAlgorithm(ABC):
    """Base of all coupling algorithms (see the module docstring for the checklist).

    ``step`` is the template: it calls ``_step_impl`` unless the run already failed, then counts the
    step and its wall time. ``counters`` (int) go to the run's result; ``status`` is "ok" or "error"
    with ``message`` saying why."""

    name: ClassVar[str] = ""
    options: ClassVar[dict[str, Option]] = {}
    #: counters besides "steps" that the algorithm keeps
    counter_names: ClassVar[tuple[str, ...]] = ()
    #: solves the force ``lambda`` of constraint slaves (``constraint_slaves``); others are refused them
    enforces_constraints: ClassVar[bool] = False
    #: True only if it also solves a constraint that holds only while its ``locked`` output is 1, with the modes
    #: iterated at every event (MSL's friction elements)
    enforces_switching_constraints: ClassVar[bool] = False
    #: advances the slaves by their co-simulation step (False: integrates their Model Exchange form)
    steps_slaves: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.options = {**cls.options,
                       "events": Option("off", "step to the zeros of the slaves' event indicators (indicator.*); on: "
                                        "by FMI 3.0 early return where it applies, else by rollback",
                                        choices=("off", "on", "rollback", "early-return")),
                       "intermediate_inputs": Option("off", "the FMI 3.0 bodies ask for the forces of the connectors "
                                                     "around them at each stage of their step (one ODE, FMI 3.0 "
                                                     "intermediate update); with events=on or early-return",
                                                     choices=("off", "on")),
                       "intermediate_tolerance": Option("1e-12", "tolerance of the bodies' own integration with "
                                                        "intermediate_inputs=on", kind=float,
                                                        check=lambda x: 0 < x < 1, requirement="must be > 0 and < 1"),
                       "event_tolerance": Option("1e-9", "width of the time interval an event is located in [s]",
                                                 kind=float, check=_positive, requirement="must be > 0"),
                       "switching_tolerance": Option("0", "take a step again up to where a slave's switchingError "
                                                     "exceeds this [N] (0: off)", kind=float,
                                                     check=lambda x: x >= 0, requirement="must be >= 0"),
                       "adaptive": Option("off", "adaptive macro step within the communication grid",
                                          choices=("off", "on")),
                       "rtol": Option("1e-4", "relative tolerance of the adaptive step's error estimate", kind=float,
                                      check=_positive, requirement="must be > 0"),
                       "atol": Option("1e-6", "absolute tolerance of the adaptive step's error estimate (SI units; "
                                      "J with error_estimate=energy)", kind=float, check=_positive,
                                      requirement="must be > 0"),
                       "min_step": Option("1e-10", "smallest adaptive step [s]", kind=float, check=_positive,
                                          requirement="must be > 0"),
                       "max_step": Option("0", "largest adaptive step [s] (0: the communication step)", kind=float,
                                          check=lambda x: x >= 0, requirement="must be >= 0"),
                       "error_estimate": Option("doubling", "adaptive step's error estimate: step doubling on the "
                                                "body states, or ECCO's power-bond energy residual",
                                                choices=("doubling", "energy")),
                       "tolerance_per": Option("step", "what the adaptive step holds within rtol/atol: each "
                                               "step's local error, or the run's (each step's error as it counts "
                                               "at the run's end, within its share)", choices=("step", "run")),
                       "substeps": Option("1", "equal steps each communication interval is taken in (the "
                                          "communication step stays the output grid)", kind=int,
                                          check=lambda n: n >= 1, requirement="must be >= 1"),
                       "energy_audit": Option("off", "energy injected per power bond: in the statistics (on), also "
                                              "as result columns energy.* (columns)", choices=("off", "on", "columns"))}

    def __init__(self, **options: Any):
        unknown = set(options) - set(self.options)
        if unknown:
            first = sorted(unknown)[0]
            raise ValueError(f"algorithm {self.name!r}: unknown option(s) {sorted(unknown)}"
                             f"{suggestion(first, sorted(self.options))}; known: {sorted(self.options)}")
        self.config = {key: option.parse(self.name, key, options.get(key, option.default))
                       for key, option in self.options.items()}
        self.counters: dict[str, int] = {"steps": 0, **{name: 0 for name in self.counter_names}}
        self.status = "ok"
        self.message = ""
        self.step_seconds = 0.0  # wall time spent in steps
        self.locator: EventLocator | None = None
        #: per FMI 3.0 body its connectors integrated inside its step (``intermediate_inputs.prepare``)
        self.inner: dict[str, Any] = {}
        if self.config["events"] != "off" or self.config["switching_tolerance"] > 0:
            self.locator = EventLocator(self.config["event_tolerance"], self.config["events"] != "off",
                                        self.config["switching_tolerance"], how=self.config["events"])
            self.counters.update(events=0, event_trials=0, event_rollbacks=0)
        #: called with the time of an event handled in event mode, before and after (the run's two rows there)
        self.on_event: Callable[[float], None] | None = None
        self.controller: StepController | None = None
        if self.config["adaptive"] == "on":
            if self.config["substeps"] > 1:
                raise ValueError(f"algorithm {self.name!r}: substeps = {self.config['substeps']} and adaptive = on "
                                 "exclude each other (the adaptive step chooses the steps in an interval)")
            self.controller = StepController(self.config)
            self.counters.update(accepted_steps=0, rejected_steps=0)
        self.audit: EnergyAudit | None = None

    def coupling_order(self) -> int:
        """Order of accuracy of the coupling in the macro step (the adaptive step's error estimate)."""
        return 1

    def parameters_for(self, slave: Slave) -> dict[str, Any]:
        """Parameters the algorithm sets on ``slave`` before initialization (events: switches act at once)."""
        return event_parameters(slave) if self.locator is not None else {}

    def snapshot(self) -> Any:
        """What the algorithm itself carries from step to step (restored when a step is taken again)."""
        return None

    def restore(self, memory: Any) -> None:  # noqa: B027 - optional: most algorithms carry nothing
        """Undo what a step taken again changed of ``snapshot``."""

    def initialize(self, system: CoupledSystem, start_time: float) -> None:
        """Propagate the initial outputs to the inputs in dependency order."""
        system.transfer(system.ordered_plan)
        if self.locator is not None:
            self.locator.initialize(system, self)
        needs_audit = self.controller is not None and self.config["error_estimate"] == "energy"
        if self.config["energy_audit"] != "off" or needs_audit:
            bonds = power_bonds(system.connections, system.slaves)
            if needs_audit and not bonds:
                raise ValueError("error_estimate=energy needs power bonds (a connector's force wired to a body and "
                                 "the body's velocity wired back to it); this scenario has none: use "
                                 "error_estimate=doubling")
            self.audit = EnergyAudit(bonds)
            system.before_step = self.audit.held
        if self.controller is not None:
            self.controller.initialize(self, system)

    def coupling_connections(self, connections: list[Connection], slaves: dict[str, Slave]) -> list[Connection]:
        """The connections the algorithm exchanges (default: the scenario's)."""
        return list(connections)

    def step(self, system: CoupledSystem, t: float, h: float) -> None:
        """Advance every slave from t to t + h and leave all connected inputs consistent."""
        if self.status != "ok":
            return
        started = time.perf_counter()
        try:
            if self.controller is not None:
                self.controller.step(self, system, t, h)
            elif self.config["substeps"] == 1:
                self.advance(system, t, h)
            else:
                n = self.config["substeps"]
                for i in range(n):  # equal steps; the last ends exactly on the grid point
                    start = t + i * h / n
                    self.advance(system, start, (t + h if i == n - 1 else t + (i + 1) * h / n) - start)
                    if self.status != "ok":
                        break
        finally:
            self.step_seconds += time.perf_counter() - started
        self.counters["steps"] += 1

    def advance(self, system: CoupledSystem, t: float, h: float) -> None:
        """One step from t to t + h with the events located in it and the energy audited."""
        if self.locator is not None:
            self.locator.step(self, system, t, h)
            return
        if self.audit is not None:
            self.audit.begin()
        self._step_impl(system, t, h)
        if self.audit is not None and self.status == "ok":
            self.audit.end(h)

    def start(self, system: CoupledSystem, start_time: float, step_size: float) -> None:  # noqa: B027 (a hook)
        """After the slaves left initialization mode, before the first point is recorded (the monolithic master's
        event mode at the start time); nothing by default."""

    def located_events(self) -> list[tuple[float, str]]:
        """The events located in the run so far: (time [s], what crossed)."""
        return list(self.locator.events) if self.locator is not None else []

    def bookkeeping(self) -> Any:
        """What ``advance`` records besides the slaves' states (located events, audited energy)."""
        return (len(self.locator.events) if self.locator is not None else 0, self.counters.get("events", 0),
                self.audit.snapshot() if self.audit is not None else None)

    def restore_bookkeeping(self, books: Any) -> None:
        """Undo what ``advance`` recorded since ``bookkeeping`` returned ``books`` (a step taken again)."""
        events, count, audit = books
        if self.locator is not None:
            del self.locator.events[events:]
            self.counters["events"] = count
        if self.audit is not None:
            self.audit.restore(audit)

    @abstractmethod
    def _step_impl(self, system: CoupledSystem, t: float, h: float) -> None:
        """One macro step (see the checklist)."""


ALGORITHMS: dict[str, type[CouplingAlgorithm]] = {}


def register(cls: type[CouplingAlgorithm]) -> type[CouplingAlgorithm]:
    if not cls.name or cls.name in ALGORITHMS:
        raise ValueError(f"algorithm name {cls.name!r} missing or already registered")
    ALGORITHMS[cls.name] = cls
    return cls


def make_algorithm(name: str, **options: Any) -> CouplingAlgorithm:
    try:
        cls = ALGORITHMS[name.lower()]
    except KeyError:
        raise ValueError(f"unknown algorithm {name!r}; known: {', '.join(sorted(ALGORITHMS))}") from None
    return cls(**options)


def is_constraint(slave: Slave) -> bool:
    """The slave is a constraint: an input ``lambda`` (the force a master solves) and an output
    ``constraintEquation`` (components/coordinate_constraint.py)."""
    lam, equation = slave.variables.get(LAMBDA), slave.variables.get(CONSTRAINT_EQUATION)
    return lam is not None and lam.causality == "input" and equation is not None and equation.causality == "output"


def is_switching(slave: Slave) -> bool:
    """The slave is a constraint only while it is locked: ``is_constraint`` with an output ``locked`` (MSL's
    friction elements, components/friction.py)."""
    locked = slave.variables.get(LOCKED)
    return is_constraint(slave) and locked is not None and locked.causality == "output"


def constraint_slaves(slaves: dict[str, Slave]) -> list[Slave]:
    """Active constraints: ``is_constraint`` and ``activeConnector`` not false."""
    return [slave for slave in slaves.values()
            if is_constraint(slave) and (ACTIVE not in slave.variables or slave.get([ACTIVE])[0])]


def refuse_unenforced_constraints(algorithm: CouplingAlgorithm, slaves: dict[str, Slave]) -> None:
    """Raise ValueError if ``algorithm`` cannot solve the constraints among ``slaves`` (it would leave
    lambda at its start value and the constraint violated, silently)."""
    constraints = constraint_slaves(slaves)
    switching = [f"'{s.name}'" for s in constraints if is_switching(s)]
    if switching and not algorithm.enforces_switching_constraints:
        raise ValueError(f"friction element {', '.join(switching)}: its locked phase is a constraint whose force "
                         "(the input lambda) a master must solve together with its stuck/sliding mode at every event, "
                         f"and algorithm '{algorithm.name}' cannot couple it exactly (its locked torque would be "
                         "wrong, silently). Use the monolithic master: --algorithm monolithic, or auto (the default), "
                         "which chooses it where every component has a Model Exchange form; in co-simulation, "
                         "--algorithm newton-friction with the FMI 3.0 FMUs (--fmi-version 3), which switches the "
                         "modes in FMI 3.0's event mode.")
    if constraints and not algorithm.enforces_constraints:
        able = ", ".join(sorted(n for n, cls in ALGORITHMS.items() if cls.enforces_constraints))
        names = ", ".join(f"'{s.name}'" for s in constraints)
        raise ValueError(f"constraint {names}: its force 'lambda' is an input that the master must solve at every "
                         "step, "
                         f"and algorithm '{algorithm.name}' cannot (lambda would stay at its start value and the "
                         f"constraint be violated). Use an algorithm that enforces constraints: {able} "
                         f"(e.g. --algorithm newton).")
