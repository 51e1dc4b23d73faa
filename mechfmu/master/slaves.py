"""Slaves: the only interface a coupling algorithm sees.

``Slave`` methods: ``set_parameters`` (before initialization), ``enter_initialization``,
``exit_initialization``, ``set``/``get`` (inputs / outputs by name, batched), ``do_step``
(returns False when the slave refused the step; ``last_error`` says why), ``get_state``,
``set_state``, ``serialize_state``/``deserialize_state``, ``terminate``, ``warnings`` (what the
slave reported as warnings so far).

Two implementations with identical numbers:
- ``FmuSlave`` (mechfmu/master/fmu_slave.py): an FMI 2.0 co-simulation FMU through fmpy; the FMU's log is
  captured and every failure becomes a ``SlaveError`` naming the instance and the FMU's own message.
- ``LocalSlave``: the same ``Component`` class in-process (no FMU); a component whose law is C is called by the
  compiled exchange in its instance of the host library, as an FMU is.

``calls`` counts FMI calls (or their in-process equivalents) for the run statistics.
"""
from __future__ import annotations

import ctypes
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from mechfmu.components.base import Component, ComponentError
from mechfmu.components.number_text import measured, number
from mechfmu.master.exchange_codes import (
    DO_STEP,
    FUNCTION_OF,
    GET_REALS,
    GET_STATE,
    READ_REALS,
    SET_REALS,
    SET_STATE,
    STEP_FROM,
)

if TYPE_CHECKING:
    from mechfmu.components.native_component import NativeComponent

#: messages every FMU and in-process component of this process has logged so far (each message's serial number is
#: the count before it), where the compiled exchange reads it (``exchange_steps``): an FMU's logger adds its own
#: (under Python's lock), the host library of the in-process components its instances' (atomically, in C)
LOGGED = ctypes.c_int64(0)


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

    def state_handle(self, state: Any) -> int | None:
        """The handle of a state ``get_state`` returned, as the compiled exchange passes it (an FMU's
        fmi2FMUstate); None where there is none."""
        return getattr(state, "value", None)

    def free_state(self, state: Any) -> None:  # noqa: B027 - optional: in-process states need nothing
        """Release a state from ``get_state`` (FMI fmi2FreeFMUstate); in-process states need nothing."""

    def release(self) -> None:  # noqa: B027 - optional: in-process components need nothing
        """Free an instance that was made but never initialized (FMI fmi2FreeInstance)."""

    def warnings(self) -> list[str]:
        """Warnings the slave reported so far (an FMU's fmi2Warning log messages)."""
        return []

    def exchange_functions(self) -> dict[str, Any] | None:
        """The functions the compiled exchange (``mechfmu.master.exchange``) calls this slave's instance with, by
        their FMI 2.0 names (ctypes functions of those signatures); None where it cannot call the slave."""
        return None

    def exchange_component(self) -> Any:
        """The instance the compiled exchange passes to ``exchange_functions`` (where there are some)."""
        raise ValueError(f"{self.name} is not called by the compiled exchange")

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


#: the operations a compiled program's run counts for an in-process component (``LocalSlave.counted_codes``), as its
#: calls through Python are counted, and their FMI 2.0 names
COUNTED_CODES = frozenset({GET_REALS, SET_REALS, DO_STEP, GET_STATE, SET_STATE})
COUNTED_KINDS = frozenset(FUNCTION_OF[code] for code in COUNTED_CODES)
_counting: list[bool] = []  # whether the host library counts its messages in the process's count of logged ones


def _native(component: Component) -> bool:
    """Whether ``component``'s law is C (a ``NativeComponent``: imported only where an in-process run needs it)."""
    from mechfmu.components.native_component import NativeComponent
    return isinstance(component, NativeComponent)


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
        self._counted: list[tuple[Any, int]] = []  # the compiled programs that call it: calls per completed run
        self.native = _native(self.component)
        if self.native:  # its instance's references, as its FMU's
            for name, info in self.variables.items():
                info.value_reference = cast("NativeComponent", self.component)._references[name]

    @property  # type: ignore[override]
    def calls(self) -> int:
        """Calls made: through Python, and per completed run of each compiled program that calls it."""
        return self._own_calls + sum(program.completed * count for program, count in self._counted)

    @calls.setter
    def calls(self, value: int) -> None:
        self._own_calls = value - sum(program.completed * count for program, count in getattr(self, "_counted", ()))

    def warnings(self) -> list[str]:
        """The warnings it reported: after each step, and those its component logged since (``step_warnings``)."""
        pending = cast("NativeComponent", self.component).pending_warnings() if self.native else []
        return [*self._warnings, *pending]

    # --- the compiled exchange (mechfmu.master.exchange): a component whose law is C, called in its instance ----
    #: the operations a compiled program's run counts, as its calls through Python are counted; its Model Exchange
    #: calls are the component's own, and freeing a state is left to Python's collector there: not counted
    counted_codes = COUNTED_CODES

    def exchange_functions(self) -> dict[str, Any] | None:
        """The host library's calls of its instance with the FMI 2.0 signatures (``NativeComponent``); None for a
        component written in Python. The host library counts its messages where the compiled exchange reads them.
        (A caller that wraps the slave's own calls runs it ``exchange.through_python``.)"""
        if not self.native:
            return None
        functions = cast("NativeComponent", self.component).exchange_functions()
        if functions is not None and not _counting:
            from mechfmu.components.native_library import library
            library().host_count_messages(ctypes.addressof(LOGGED))
            _counting.append(True)
        return functions

    def exchange_component(self) -> Any:
        return cast("NativeComponent", self.component).instance

    def count_calls(self, program: Any, count: int, unit: int) -> None:
        """``program`` makes ``count`` counted calls of it per completed run."""
        self._counted = [*self._counted, (program, count)]

    def count_call(self, kind: str) -> None:
        """One more call of ``kind`` (its FMI 2.0 name) a compiled program made beyond its completed runs'."""
        if kind in COUNTED_KINDS:
            self._own_calls += 1

    def errors_logged_since(self, serial: int) -> str:
        """Never asked: a compiled program judges its messages with ``judge``."""
        return ""

    def judge(self, code: int, status: int, time: float, step: float) -> None:
        """After a compiled program's operation ``code`` (``Program``'s codes) on it returned ``status``, or where
        it logged a message: its log taken as its own call would take it, raising that call's error (a step's
        failure a refusal, ``StepRefused``; a Model Exchange call's the component's ComponentError)."""
        component = cast("NativeComponent", self.component)
        try:
            component.judge(status)
        except ComponentError as exc:
            if code in (DO_STEP, STEP_FROM):  # as do_step
                self.last_error = f"{self.name}: step at t={measured(time)} h={number(step)} failed: {exc}"
                raise StepRefused(self.last_error) from None
            if code in (GET_REALS, SET_REALS, READ_REALS):  # as get, set
                self.last_error = str(exc)
                raise SlaveError(self.last_error) from None
            raise
        if code in (DO_STEP, STEP_FROM):
            self._warnings.extend(component.step_warnings())

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

    def state_handle(self, state: Any) -> int | None:
        """The instance's own handle of a state ``get_state`` returned (what the compiled exchange passes)."""
        return state.handle.value if self.native else None

    def serialize_state(self, state: Any) -> bytes:
        return self.component.serialize_state(state)

    def deserialize_state(self, data: bytes) -> Any:
        return self.component.deserialize_state(data)

    def terminate(self) -> None:
        self.calls += 1
