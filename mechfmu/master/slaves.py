"""Slaves: the only interface a coupling algorithm sees.

``Slave`` methods: ``set_parameters`` (before initialization), ``enter_initialization``,
``exit_initialization``, ``set``/``get`` (inputs / outputs by name, batched), ``do_step``
(returns False when the slave refused the step; ``last_error`` says why), ``get_state``,
``set_state``, ``serialize_state``/``deserialize_state``, ``terminate``, ``warnings`` (what the
slave reported as warnings so far).

Two implementations with identical numbers:
- ``FmuSlave`` (mechfmu/master/fmu_slave.py): an FMI 2.0 co-simulation FMU through fmpy; the FMU's log is
  captured and every failure becomes a ``SlaveError`` naming the instance and the FMU's own message.
- ``LocalSlave``: the same ``Component`` class in-process (no FMI, no ctypes).

``calls`` counts FMI calls (or their in-process equivalents) for the run statistics.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from mechfmu.components.base import Component, ComponentError
from mechfmu.components.number_text import measured, number


class SlaveError(RuntimeError):
    """A slave failed; the message names the instance and the reason."""


class StepRefused(SlaveError):
    """A slave refused (discarded) a step."""


@dataclass
class VariableInfo:
    name: str
    causality: str  # parameter, input, output, local, ...
    type: str = "Real"  # Real, Integer, Boolean, String
    unit: str | None = None
    start: Any = None
    min: float | None = None
    max: float | None = None
    #: for outputs: names of the inputs it feeds through; None = unknown (assume all inputs)
    depends_on: tuple[str, ...] | None = None
    value_reference: int = 0


@dataclass
class Slave(ABC):
    name: str
    variables: dict[str, VariableInfo] = field(default_factory=dict)
    calls: int = 0
    last_error: str = ""
    stop_time: float | None = None  # the run's stop time [s], given in enter_initialization (None: not defined)

    def inputs(self) -> list[str]:
        return [n for n, v in self.variables.items() if v.causality == "input"]

    def outputs(self) -> list[str]:
        return [n for n, v in self.variables.items() if v.causality == "output"]

    def feedthrough(self, output: str) -> tuple[str, ...]:
        """Inputs the output depends on directly (all inputs if the slave does not say)."""
        deps = self.variables[output].depends_on
        return tuple(self.inputs()) if deps is None else deps

    @abstractmethod
    def set_parameters(self, values: dict[str, Any]) -> None: ...
    @abstractmethod
    def enter_initialization(self, start_time: float, stop_time: float | None) -> None: ...
    @abstractmethod
    def exit_initialization(self) -> None: ...
    @abstractmethod
    def set(self, names: list[str], values: list[float]) -> None: ...
    @abstractmethod
    def get(self, names: list[str]) -> list[float]: ...
    @abstractmethod
    def do_step(self, current_time: float, step_size: float) -> bool: ...
    @abstractmethod
    def get_state(self) -> Any: ...
    @abstractmethod
    def set_state(self, state: Any) -> None: ...

    def free_state(self, state: Any) -> None:  # noqa: B027 - optional: in-process states need nothing
        """Release a state from ``get_state`` (FMI fmi2FreeFMUstate); in-process states need nothing."""

    def release(self) -> None:  # noqa: B027 - optional: in-process components need nothing
        """Free an instance that was made but never initialized (FMI fmi2FreeInstance)."""

    def warnings(self) -> list[str]:
        """Warnings the slave reported so far (an FMU's fmi2Warning log messages)."""
        return []

    def model_exchange_view(self) -> Any:
        """Its Model Exchange calls (the monolithic master's); ValueError for a slave that has none."""
        raise ValueError(f"{self.name} has no Model Exchange interface")

    def provides_directional_derivative(self) -> bool:
        return False

    def directional_derivative(self, unknowns: list[str], knowns: list[str], seeds: list[float]) -> list[float]:
        """Σ ∂unknown/∂known·seed per unknown at the current point (fmi2GetDirectionalDerivative)."""
        raise SlaveError(f"{self.name} provides no directional derivatives")
    @abstractmethod
    def serialize_state(self, state: Any) -> bytes: ...
    @abstractmethod
    def deserialize_state(self, data: bytes) -> Any: ...
    @abstractmethod
    def terminate(self) -> None: ...


class LocalSlave(Slave):
    """A component object driven in-process; same numbers as its FMU."""

    def __init__(self, name: str, component_cls: type[Component], resources: str | None = None):
        """``resources``: the folder its relative files are read from (an FMU's resources; in a scenario its
        folder; None: the current directory)."""
        super().__init__(name)
        self.component = component_cls(name)
        self.component.resources = resources
        for p in component_cls.parameters:
            self.variables[p.name] = VariableInfo(p.name, "parameter", p.type, p.unit, p.default, p.min, p.max)
        for i in component_cls.inputs:
            self.variables[i.name] = VariableInfo(i.name, "input", "Real", i.unit, i.start)
        for o in component_cls.outputs:
            self.variables[o.name] = VariableInfo(o.name, "output", "Real", o.unit, depends_on=tuple(o.depends_on))
        self._start_time = 0.0
        self._warnings: list[str] = []

    def warnings(self) -> list[str]:
        return list(self._warnings)

    def _guard(self, action, *args):
        self.calls += 1
        try:
            return action(*args)
        except Exception as exc:  # same outcome as the FMU: a SlaveError with the reason
            self.last_error = (str(exc) if isinstance(exc, ComponentError)
                               else f"{self.name}: {type(exc).__name__}: {exc}")
            raise SlaveError(self.last_error) from None

    def set_parameters(self, values: dict[str, Any]) -> None:
        for name, value in values.items():
            self._guard(self.component.set, name, value)

    def enter_initialization(self, start_time: float, stop_time: float | None) -> None:
        # like the FMU: parameters may still change in initialization mode; they are checked at its end
        self._start_time, self.stop_time = start_time, stop_time
        self.calls += 1

    def exit_initialization(self) -> None:
        self._guard(self.component.initialize, self._start_time)

    def model_exchange_view(self) -> Any:
        """The component itself: its Model Exchange form (components/model_exchange.py)."""
        return self.component

    def provides_directional_derivative(self) -> bool:
        return True

    def directional_derivative(self, unknowns: list[str], knowns: list[str], seeds: list[float]) -> list[float]:
        return self._guard(self.component.directional_derivative, unknowns, knowns, seeds)

    def set(self, names: list[str], values: list[float]) -> None:
        self._guard(self.component.set_many, names, values)

    def get(self, names: list[str]) -> list[float]:
        return self._guard(self.component.get_many, names)

    def do_step(self, current_time: float, step_size: float) -> bool:
        self.calls += 1
        try:
            self.component.do_step(current_time, step_size)
        except Exception as exc:  # the FMU refuses the step (Discard) in the same situation
            self.last_error = f"{self.name}: step at t={measured(current_time)} h={number(step_size)} failed: {exc}"
            return False
        self._warnings.extend(self.component.step_warnings())
        return True

    def get_state(self) -> Any:
        self.calls += 1
        return self.component.get_state()

    def set_state(self, state: Any) -> None:
        self.calls += 1
        self.component.set_state(state)

    def serialize_state(self, state: Any) -> bytes:
        return self.component.serialize_state(state)

    def deserialize_state(self, data: bytes) -> Any:
        return self.component.deserialize_state(data)

    def terminate(self) -> None:
        self.calls += 1
