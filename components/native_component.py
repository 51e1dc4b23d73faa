"""The component whose law is C (``components/native/``), its one implementation: an object of a shipped component
class is a view of an instance of the host library, so the law runs as the same C code as in the native FMU.

The host library (``mechfmu.fmu.native.compile_library``) is the native FMUs' runtime and laws without the FMI entry
points; ``components/native_library.py`` finds and loads it. A ``NativeComponent`` keeps nothing of its own: its
values, hidden state, time and outputs are the C instance's (``values`` and ``state`` are views of its arrays), every
call goes to the runtime's ``runtime_*`` functions, and a refusal raises ``ComponentError`` with the runtime's words.

A shipped class is ``class Name(NativeComponent, DeclarationBase)``: the Python declares its parameters, ports,
outputs and states (what the FMU's modelDescription and the C tables are generated from), the C computes. The
Python bases' law hooks (``Connector.element_force`` and the like, for a component written in Python) are never
called, so they are not abstract here (``NativeLaw``).
"""
from __future__ import annotations

import ctypes
from abc import ABCMeta
from collections.abc import MutableMapping
from typing import Any

from .base import Component, ComponentError, coerce
from .native_library import DISCARD, ERROR, WARNING, _State, _Values, library, state_slots

_exchange_functions: list[dict[str, Any] | None] = []  # NativeComponent.exchange_functions, found once


class _Saved:
    """An FMU state of a native instance (freed with it), a value: equal to another of the same serialization, and
    a deep copy is a new saved state of the same content."""

    __hash__ = None  # type: ignore[assignment]

    def __init__(self, owner: NativeComponent, handle: ctypes.c_void_p | None):
        self.owner, self.handle = owner, handle

    def __del__(self) -> None:
        if getattr(self, "handle", None) and self.owner._instance:
            library().runtime_free_state(self.owner._instance, self.handle)
            self.handle = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Saved):
            return NotImplemented
        return (type(self.owner) is type(other.owner)
                and self.owner.serialize_state(self) == other.owner.serialize_state(other))

    def __deepcopy__(self, memo: dict) -> _Saved:
        return self.owner.deserialize_state(self.owner.serialize_state(self))


class NativeLaw(ABCMeta):
    """The metaclass of a component whose law is C: no Python law hook is left abstract (module docstring)."""

    def __new__(mcs, name, bases, namespace, **kwargs):
        cls = super().__new__(mcs, name, bases, namespace, **kwargs)
        cls.__abstractmethods__ = frozenset()
        return cls


class NativeComponent(Component, metaclass=NativeLaw):
    """A component whose law is C: the Python declarations, the instance in the host library (module docstring)."""

    def __init__(self, instance_name: str | None = None):  # noqa: D107 - no Component.__init__: nothing is Python's
        cls = type(self)
        self.instance_name = instance_name or cls.__name__
        lib = library()
        handle = lib.host_instantiate(cls.__name__.encode(), self.instance_name.encode())
        if not handle:
            raise ComponentError(f"{cls.__name__}: the host library has no native law of this class")
        self._instance: ctypes.c_void_p | None = ctypes.c_void_p(handle)
        self._params = {p.name: p for p in cls.parameters}
        self._input_names = {i.name for i in cls.inputs}
        self._settable = {p.name: (k, p.type) for k, p in enumerate(cls.parameters)}
        self._settable.update({i.name: (len(cls.parameters) + k, "Real") for k, i in enumerate(cls.inputs)})
        first = len(self._settable)
        self._outputs = {o.name: first + k for k, o in enumerate(cls.outputs)}
        local = first + len(cls.outputs)
        self._references = {**{n: k for n, (k, _) in self._settable.items()}, **self._outputs}
        for k, name in enumerate(() if cls.co_simulation_only else cls.continuous_states):
            self._references[f"state.{name}"] = local + 2 * k
            self._references[f"der(state.{name})"] = local + 2 * k + 1
        self._values, self._state = lib.host_values(self._instance), lib.host_state(self._instance)
        slots = state_slots(cls.initial_state, cls.continuous_states)
        self._state_entries: dict[str, Any] = {}
        for name, value in cls.initial_state.items():
            self._state_entries[name] = ([slots.index(f"{name}[{i}]") for i in range(len(value))]
                                         if isinstance(value, list) else slots.index(name))
        self._warnings: list[str] = []
        self._batches: dict[tuple, Any] = {}  # per names read or written together: the arrays of the call
        self._library = lib
        self._next_event: float | None = None
        self._resources: str | None = None
        self._model_exchange = False

    def __del__(self) -> None:
        instance = getattr(self, "_instance", None)
        if instance:
            library().host_free(instance)
            self._instance = None

    # --- what the Python component shows of the instance ----------------------------------------------------
    @property
    def values(self) -> MutableMapping:  # type: ignore[override]
        return _Values(self)

    @property
    def state(self) -> MutableMapping:  # type: ignore[override]
        return _State(self)

    @property
    def time(self) -> float:  # type: ignore[override]
        return library().host_time(self._instance)

    @property
    def initialized(self) -> bool:  # type: ignore[override]
        return bool(library().host_initialized(self._instance))

    @property
    def in_model_exchange(self) -> bool:  # type: ignore[override]
        return self._model_exchange

    @in_model_exchange.setter
    def in_model_exchange(self, used: bool) -> None:
        """Model Exchange use (an ME FMU's instance): the runtime's, set once (module components/model_exchange)."""
        if used and not self._model_exchange:
            self._exchange("me_open", "fmi2Instantiate", [], 0)
        self._model_exchange = self._model_exchange or bool(used)

    @property
    def resources(self) -> str | None:  # type: ignore[override]
        return self._resources

    @resources.setter
    def resources(self, folder: str | None) -> None:
        self._resources = folder
        library().host_set_resources(self._instance, (folder or "").encode())

    def _checked(self, status: int) -> int:
        """After a runtime call: its warnings kept, an error raised as ComponentError in the runtime's words."""
        lib = library()
        raw = lib.host_take_log(self._instance)
        if not raw and status < DISCARD:
            return status
        log = raw.decode("utf-8", "replace")
        errors = []
        for line in log.splitlines():
            level, _, text = line.partition(" ")
            if int(level) == WARNING:
                self._warnings.append(text)
            elif int(level) >= ERROR:
                errors.append(text)
        if errors or status >= DISCARD:
            message = lib.host_message(self._instance).decode("utf-8", "replace")
            refusal = ComponentError(message if message and (not errors or message in errors[-1]) else
                                     (errors[-1] if errors else message))
            refusal.logged = errors[-1] if errors else ""  # type: ignore[attr-defined]  # the native FMU's words
            raise refusal
        return status

    def judge(self, status: int) -> int:
        """After a call a master made on the instance itself (``instance``, through ``exchange_functions``) that
        returned ``status``: as ``_checked`` judges one of this object's calls (its log taken, its warnings kept, an
        error raised as ComponentError in the runtime's words)."""
        return self._checked(status)

    def pending_warnings(self) -> list[str]:
        """The warnings logged so far and not yet taken by ``step_warnings``."""
        return list(self._warnings)

    @property
    def instance(self) -> ctypes.c_void_p | None:
        """The instance in the host library (a Runtime pointer)."""
        return self._instance

    @staticmethod
    def exchange_functions() -> dict[str, Any] | None:
        """The host library's calls of an instance with the FMI 2.0 functions' signatures, by FMI 2.0 name (what a
        master's compiled exchange calls an FMU with), each the call this class makes, returning an error where it
        logged one (as an FMI function does); None for a host library built without them."""
        if _exchange_functions:
            return _exchange_functions[0]
        lib = library()
        names = {"fmi2GetReal": "host_get_real", "fmi2SetReal": "host_set_real", "fmi2DoStep": "host_do_step",
                 "fmi2SetTime": "host_set_time", "fmi2SetContinuousStates": "host_set_continuous_states",
                 "fmi2GetDerivatives": "host_get_derivatives", "fmi2GetEventIndicators": "host_get_event_indicators",
                 "fmi2CompletedIntegratorStep": "host_completed_integrator_step",
                 "fmi2GetFMUstate": "host_get_fmu_state", "fmi2SetFMUstate": "host_set_fmu_state",
                 "fmi2FreeFMUstate": "host_free_fmu_state"}
        try:
            found: dict[str, Any] | None = {fmi: getattr(lib, name) for fmi, name in names.items()}
        except AttributeError:
            found = None
        _exchange_functions.append(found)
        return found

    # --- the Component calls ----------------------------------------------------------------------------------
    def set(self, name: str, value: Any) -> None:
        if name not in self._settable:
            raise ComponentError(f"{self.instance_name}: no parameter or input named {name!r}")
        index, kind = self._settable[name]
        if name in self._params:
            if self.initialized:
                raise self.error(name, value, "is a fixed parameter and cannot change after initialization")
            try:
                value = coerce(kind, value)
            except (TypeError, ValueError, OverflowError) as exc:
                problem = str(exc) if isinstance(exc, ValueError) else f"is not a valid {kind}"
                raise self.error(name, value, problem) from None
            if kind == "String" and "\0" in value:  # the runtime's strings end at NUL, as an FMI String does
                raise self.error(name, value, "holds a NUL character, which an FMI String cannot carry")
        else:
            value = float(value)
        lib, refs = library(), (ctypes.c_uint * 1)(index)
        if kind == "String":
            status = lib.runtime_set_string(self._instance, refs, 1, (ctypes.c_char_p * 1)(value.encode()))
        elif kind in ("Integer", "Boolean"):
            setter = lib.runtime_set_integer if kind == "Integer" else lib.runtime_set_boolean
            status = setter(self._instance, refs, 1, (ctypes.c_int * 1)(int(value)))
        else:
            status = lib.runtime_set_real(self._instance, refs, 1, (ctypes.c_double * 1)(float(value)))
        self._checked(status)

    def set_many(self, names, values) -> None:
        key = tuple(names)
        batch = self._batches.get(key)
        if batch is None:
            inputs = all(n in self._input_names for n in names)
            batch = self._batches[key] = ((ctypes.c_uint * len(key))(*(self._settable[n][0] for n in key)),
                                          (ctypes.c_double * len(key))()) if inputs and key else ()
        if not batch:
            for name, value in zip(names, values):
                self.set(name, value)
            return
        refs, buffer = batch
        buffer[:] = [float(v) for v in values]
        self._checked(self._library.runtime_set_real(self._instance, refs, len(refs), buffer))

    def get(self, name: str) -> Any:
        if name in self._settable:
            return self.values[name]
        if name not in self._outputs:
            raise ComponentError(f"{self.instance_name}: no variable named {name!r}")
        return self.get_many([name])[0]

    def get_many(self, names) -> list[Any]:
        key = ("get", *names)
        batch = self._batches.get(key)
        if batch is None:
            if not names or not all(n in self._outputs for n in names):
                return [self.get(n) for n in names]
            batch = self._batches[key] = ((ctypes.c_uint * len(names))(*(self._outputs[n] for n in names)),
                                          (ctypes.c_double * len(names))())
        refs, out = batch
        self._checked(self._library.runtime_get_real(self._instance, refs, len(refs), out))
        return out[:]

    def current_outputs(self) -> dict[str, Any]:
        names = list(self._outputs)
        return dict(zip(names, self.get_many(names))) if names else {}

    def compute_outputs(self) -> dict[str, float]:
        return self.current_outputs()

    def _get_string(self, index: int) -> str:
        out = (ctypes.c_char_p * 1)()
        self._checked(library().runtime_get_string(self._instance, (ctypes.c_uint * 1)(index), 1, out))
        return (out[0] or b"").decode("utf-8")

    def initialize(self, start_time: float = 0.0) -> None:
        lib = library()
        self._checked(lib.runtime_setup_experiment(self._instance, float(start_time)))
        self._checked(lib.runtime_call(self._instance, b"enter_initialization_mode", b"fmi2EnterInitializationMode"))
        self._checked(lib.runtime_call(self._instance, b"exit_initialization_mode", b"fmi2ExitInitializationMode"))

    def do_step(self, current_time: float, step_size: float) -> None:
        if not (step_size > 0.0 and step_size < float("inf")):
            raise self.error("step_size", step_size, "must be positive and finite")
        self._checked(self._library.runtime_do_step(self._instance, current_time, step_size))

    def step_warnings(self) -> list[str]:
        warnings, self._warnings = self._warnings, []
        return warnings

    def get_state(self) -> Any:
        handle = ctypes.c_void_p()
        self._checked(library().runtime_get_state(self._instance, ctypes.byref(handle)))
        return _Saved(self, handle)

    def set_state(self, snapshot: Any) -> None:
        self._checked(library().runtime_set_state(self._instance, snapshot.handle))

    def serialize_state(self, snapshot: Any) -> bytes:  # type: ignore[override]
        data, size = ctypes.POINTER(ctypes.c_char)(), ctypes.c_size_t()
        self._checked(library().runtime_serialize(self._instance, snapshot.handle, ctypes.byref(data),
                                                ctypes.byref(size)))
        try:
            return ctypes.string_at(data, size.value)
        finally:
            library().host_release(data)

    def deserialize_state(self, data: bytes) -> Any:  # type: ignore[override]
        handle = ctypes.c_void_p()
        self._checked(library().runtime_deserialize(self._instance, data, len(data), ctypes.byref(handle)))
        return _Saved(self, handle)

    # --- Model Exchange and directional derivatives --------------------------------------------------------------
    def _exchange(self, method: str, what: str, values: list[float], count: int) -> list[float]:
        given, out = (ctypes.c_double * max(1, len(values)))(*values), (ctypes.c_double * max(1, count))()
        self._checked(library().runtime_model_exchange(self._instance, method.encode(), what.encode(), given,
                                                     len(values), out, count))
        return list(out)[:count]

    def set_time(self, t: float) -> None:
        self._exchange("me_set_time", "fmi2SetTime", [float(t)], 0)

    def set_continuous_states(self, values: list[float]) -> None:
        self._exchange("me_set_states", "fmi2SetContinuousStates", [float(v) for v in values], 0)

    def get_continuous_states(self) -> list[float]:
        count = len(type(self).continuous_states)
        return self._exchange("me_get_states", "fmi2GetContinuousStates", [], count)

    def derivatives(self) -> list[float]:
        return self._exchange("me_derivatives", "fmi2GetDerivatives", [], len(type(self).continuous_states))

    def event_indicators(self) -> list[float]:
        return self._exchange("me_indicators", "fmi2GetEventIndicators", [], len(self.indicator_names()))

    def update_discrete_states(self) -> bool:
        """One event iteration: True if the states were set anew or another iteration is needed (which of them:
        ``discrete_flags``, the runtime's sum of 1 and 2, FMI's valuesOfContinuousStatesChanged and
        newDiscreteStatesNeeded)."""
        changed, defined, upcoming = self._exchange("me_new_discrete_states", "fmi2NewDiscreteStates", [], 3)
        self._next_event = upcoming if defined else None
        self.discrete_flags = changed
        return bool(changed)

    def next_time_event(self) -> float | None:
        return self._next_event

    def completed_integrator_step(self) -> None:
        self._exchange("me_completed_step", "fmi2CompletedIntegratorStep", [], 0)

    def directional_derivative(self, unknowns, knowns, seeds) -> list[float]:
        refs = self._references
        missing = [n for n in (*unknowns, *knowns) if n not in refs]
        if missing:
            raise ComponentError(f"{self.instance_name}: no variable named {missing[0]!r}")
        values = [float(len(unknowns)), float(len(knowns)), *(float(refs[n]) for n in (*unknowns, *knowns)),
                  *(float(s) for s in seeds)]
        return self._exchange("directional_derivative", "fmi2GetDirectionalDerivative", values, len(unknowns))
