"""Slaves: the only interface a coupling algorithm sees.

``Slave`` methods: ``set_parameters`` (before initialization), ``enter_initialization``,
``exit_initialization``, ``set``/``get`` (inputs / outputs by name, batched), ``do_step``
(returns False when the slave refused the step; ``last_error`` says why), ``get_state``,
``set_state``, ``serialize_state``/``deserialize_state``, ``terminate``, ``warnings`` (what the
slave reported as warnings so far).

Two implementations with identical numbers:
- ``FmuSlave``: an FMI 2.0 co-simulation FMU through fmpy; the FMU's log is captured and every
  failure becomes a ``SlaveError`` naming the instance and the FMU's own message.
- ``LocalSlave``: the same ``Component`` class in-process (no FMI, no ctypes).

``calls`` counts FMI calls (or their in-process equivalents) for the run statistics.
"""
from __future__ import annotations

import atexit
import math
import shutil
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mechfmu.components.base import Component, ComponentError, coerce


class SlaveError(RuntimeError):
    """A slave failed; the message names the instance and the reason."""


#: what ``FmuSlave._call`` returns for a refused (discarded) step
REFUSED = object()


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

    def warnings(self) -> list[str]:
        """Warnings the slave reported so far (an FMU's fmi2Warning log messages)."""
        return []
    @abstractmethod
    def serialize_state(self, state: Any) -> bytes: ...
    @abstractmethod
    def deserialize_state(self, data: bytes) -> Any: ...
    @abstractmethod
    def terminate(self) -> None: ...


class LocalSlave(Slave):
    """A component object driven in-process; same numbers as its FMU."""

    def __init__(self, name: str, component_cls: type[Component]):
        super().__init__(name)
        self.component = component_cls(name)
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
        self._start_time = start_time
        self.calls += 1

    def exit_initialization(self) -> None:
        self._guard(self.component.initialize, self._start_time)

    def set(self, names: list[str], values: list[float]) -> None:
        self._guard(self.component.set_many, names, values)

    def get(self, names: list[str]) -> list[float]:
        return self._guard(self.component.get_many, names)

    def do_step(self, current_time: float, step_size: float) -> bool:
        self.calls += 1
        try:
            self.component.do_step(current_time, step_size)
        except Exception as exc:  # the FMU refuses the step (Discard) in the same situation
            self.last_error = f"{self.name}: step at t={current_time!r} h={step_size!r} failed: {exc}"
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


class FmuSlave(Slave):
    """An FMI 2.0 co-simulation FMU loaded with fmpy (unzipped once per FMU file and process)."""

    _unzipped: dict[str, tuple[Any, str]] = {}

    @classmethod
    def unpacked(cls, fmu: str) -> tuple[Any, str]:
        """(model description, folder) of an FMU file, unpacked once per process into the temporary
        directory; every folder is removed when the process ends (``remove_unpacked``)."""
        import fmpy
        if fmu not in cls._unzipped:
            md = fmpy.read_model_description(fmu)
            if not cls._unzipped:
                atexit.register(cls.remove_unpacked)
            cls._unzipped[fmu] = (md, fmpy.extract(fmu))
        return cls._unzipped[fmu]

    @classmethod
    def remove_unpacked(cls) -> None:
        for _, folder in cls._unzipped.values():
            shutil.rmtree(folder, ignore_errors=True)
        cls._unzipped.clear()

    def __init__(self, name: str, fmu: str | Path):
        super().__init__(name)
        import fmpy
        from fmpy.fmi2 import (
            FMU2Slave,
            fmi2CallbackAllocateMemoryTYPE,
            fmi2CallbackFreeMemoryTYPE,
            fmi2CallbackFunctions,
            fmi2CallbackLoggerTYPE,
        )

        self.fmu = str(Path(fmu).resolve())
        md, unzipped = FmuSlave.unpacked(self.fmu)
        if md.coSimulation is None:
            raise SlaveError(f"{name}: {self.fmu} is not a co-simulation FMU")
        self.model_description = md
        #: the FMU can save and restore its state (rollback: iterative algorithms, event location)
        self.can_roll_back = bool(md.coSimulation.canGetAndSetFMUstate)
        deps = {u.variable.name: u.dependencies for u in md.outputs}
        for v in md.modelVariables:
            dep = deps.get(v.name)
            self.variables[v.name] = VariableInfo(
                v.name, v.causality, v.type, v.unit or (v.declaredType.unit if v.declaredType else None),
                v.start, _num(v.min), _num(v.max),
                None if dep is None else tuple(d.name for d in dep), v.valueReference)
        self.messages: list[tuple[int, str]] = []

        def log(_env, _instance, status, _category, message):
            self.messages.append((status, message.decode("utf-8", "replace")))

        self._callbacks = fmi2CallbackFunctions()
        self._callbacks.logger = fmi2CallbackLoggerTYPE(log)
        self._callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(fmpy.calloc)
        self._callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(fmpy.free)
        self._fmu = FMU2Slave(guid=md.guid, unzipDirectory=unzipped,
                              modelIdentifier=md.coSimulation.modelIdentifier, instanceName=name)
        try:
            self._call("instantiate", lambda: self._fmu.instantiate(callbacks=self._callbacks, loggingOn=True))
        except SlaveError:
            raise
        except Exception as exc:  # fmpy raises a plain Exception when fmi2Instantiate returns NULL
            reason = self._errors_since(0) or str(exc)
            raise SlaveError(f"{name}: instantiate failed: {reason}") from None
        self._vr: dict[str, int] = {n: v.value_reference for n, v in self.variables.items()}
        self._plan: dict[tuple[str, ...], list[int] | None] = {}

    def _errors_since(self, mark: int) -> str:
        return "; ".join(m for s, m in self.messages[mark:] if s >= 2)

    def warnings(self) -> list[str]:
        """Every warning the FMU has logged (status fmi2Warning)."""
        return [m for s, m in self.messages if s == 1]

    def _call(self, what: str, fn, *args, refusable: bool = False):
        """The one way into the FMU: counts the call, and turns an error status or a logged error into
        a SlaveError with the FMU's messages. With ``refusable`` a discard (a refused step) returns
        ``REFUSED`` with the reason in ``last_error`` instead."""
        from fmpy.fmi1 import FMICallException
        mark = len(self.messages)
        self.calls += 1
        try:
            result = fn(*args)
        except FMICallException as exc:
            self.last_error = self._errors_since(mark) or str(exc)
            if refusable and exc.status == 2:  # fmi2Discard
                return REFUSED
            raise SlaveError(f"{self.name}: {what} failed: {self.last_error}") from None
        errors = self._errors_since(mark)
        if errors:
            self.last_error = errors
            raise SlaveError(f"{self.name}: {what} failed: {errors}")
        return result

    def _real_references(self, names: list[str]) -> list[int] | None:
        """Value references if every name is a Real (one batched call), else None."""
        key = tuple(names)
        if key not in self._plan:
            all_real = all(self.variables[n].type == "Real" for n in names)
            self._plan[key] = [self._vr[n] for n in names] if all_real else None
        return self._plan[key]

    def set_parameters(self, values: dict[str, Any]) -> None:
        for name, value in values.items():
            info = self.variables.get(name)
            if info is None:
                raise SlaveError(f"{self.name}: no variable named {name!r}")
            vr = [info.value_reference]
            setter = {"Real": self._fmu.setReal, "Integer": self._fmu.setInteger,
                      "Boolean": self._fmu.setBoolean, "String": self._fmu.setString}[info.type]
            try:
                value = coerce(info.type, value)
            except (TypeError, ValueError, OverflowError) as exc:
                problem = exc if isinstance(exc, ValueError) else f"is not a {info.type}"
                raise SlaveError(f"{self.name}: {name} = {value!r} {problem}") from None
            self._call(f"setting {name} = {value!r}", setter, vr, [value])

    def enter_initialization(self, start_time: float, stop_time: float | None) -> None:
        self._call("setupExperiment", self._fmu.setupExperiment, None, start_time, stop_time)
        self._call("enterInitializationMode", self._fmu.enterInitializationMode)

    def exit_initialization(self) -> None:
        self._call("initialization", self._fmu.exitInitializationMode)

    def set(self, names: list[str], values: list[float]) -> None:
        refs = self._real_references(names)
        if refs is not None:
            self._call("setting inputs", self._fmu.setReal, refs, values)
        else:
            for n, v in zip(names, values):
                self.set_parameters({n: v})

    def get(self, names: list[str]) -> list[float]:
        refs = self._real_references(names)
        if refs is None:
            getter = {"Integer": self._fmu.getInteger, "Boolean": self._fmu.getBoolean,
                      "String": self._fmu.getString, "Real": self._fmu.getReal}
            return [self._call(f"reading {n}", getter[self.variables[n].type], [self._vr[n]])[0] for n in names]
        return self._call("reading outputs", self._fmu.getReal, refs)

    def do_step(self, current_time: float, step_size: float) -> bool:
        what = f"step at t={current_time!r} h={step_size!r}"
        return self._call(what, self._fmu.doStep, current_time, step_size, refusable=True) is not REFUSED

    def get_state(self) -> Any:
        return self._call("getFMUstate", self._fmu.getFMUstate)

    def set_state(self, state: Any) -> None:
        self._call("setFMUstate", self._fmu.setFMUstate, state)

    def free_state(self, state: Any) -> None:
        self._call("freeFMUstate", self._fmu.freeFMUstate, state)

    def serialize_state(self, state: Any) -> bytes:
        return self._call("serializeFMUstate", self._fmu.serializeFMUstate, state)

    def deserialize_state(self, data: bytes) -> Any:
        return self._call("deSerializeFMUstate", self._fmu.deSerializeFMUstate, data)

    def terminate(self) -> None:
        try:
            self._call("terminate", self._fmu.terminate)
        finally:
            self._call("freeInstance", self._fmu.freeInstance)

    def reset(self) -> None:
        """fmi2Terminate, then fmi2Reset: the instance is back at its start values (instantiated), ready
        for another run without loading and instantiating again; its log starts afresh."""
        self._call("terminate", self._fmu.terminate)
        self._call("reset", self._fmu.reset)
        self.messages.clear()
        self.last_error = ""


def _num(text: Any) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None
