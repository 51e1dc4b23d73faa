"""The FMU state of a Python-embedding FMU (``ComponentFmu``, components/fmi.py): fmi2GetFMUstate, fmi2SetFMUstate
and their serialization, as pythonfmu's slave calls them.

A component written in Python keeps its state as a dict: a deep copy, serialized as exact JSON floats, and a
serialized state is checked completely against the component class (``state_check.state_problem``) before it can
reach an instance. A component whose law is C (``NativeComponent``) keeps its state in the runtime, which saves,
serializes and checks it as in the native FMU (a blob on an instance of its own, so a refused one reaches none).
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pythonfmu.enums import Fmi2Status

from .base import Component, ComponentError
from .native_component import NativeComponent
from .state_check import state_problem


class FmuStates:
    """The FMU-state calls of ``ComponentFmu`` (module docstring)."""

    component: Any
    component_class: type[Component]
    instance_name: str

    if TYPE_CHECKING:  # pythonfmu's Fmi2Slave's
        def log(self, msg: str, status: Fmi2Status = ..., category: str | None = None, debug: Any = None) -> None: ...

    def _get_fmu_state(self):
        return self.component.get_state()

    def _set_fmu_state(self, state):
        component = self.component
        native = isinstance(component, NativeComponent)  # its runtime leaves the instance as it was on a refusal
        before = None if native else (component.values, component.state, component.time, component.initialized)
        try:
            if isinstance(state, _Rejected) or not (native or isinstance(state, dict)):
                raise TypeError(getattr(state, "reason", "not a state of this component"))
            component.set_state(state)  # a dict: replaces the attributes by copies, then checks the rules
        except Exception as exc:
            if before is not None:
                component.values, component.state, component.time, component.initialized = before
                component._cache = None
            self.log(f"{self.instance_name}: fmi2SetFMUstate refused, the instance is unchanged: {exc}",
                     Fmi2Status.error)

    @classmethod
    def _fmu_state_to_bytes(cls, state) -> bytes:
        if isinstance(state, _Rejected):  # the loader reads the reason of a refused blob this way
            return b"\0" + state.reason.encode("utf-8", "replace")
        if not isinstance(state, dict):  # a native instance's saved state
            return state.owner.serialize_state(state)
        return json.dumps(state).encode("utf-8")

    @classmethod
    def _fmu_state_from_bytes(cls, data: bytes):
        """The state in a serialized blob, checked completely against this component class, or a
        ``_Rejected`` with the reason (pythonfmu has no error return here; an exception is fatal)."""
        component_cls = cls.component_class
        if issubclass(component_cls, NativeComponent):
            try:
                return component_cls("state check").deserialize_state(bytes(data))
            except ComponentError as exc:
                return _Rejected(str(exc))
        try:
            snapshot = json.loads(bytes(data).decode("utf-8"))
            problem = state_problem(component_cls, snapshot)
        except Exception as exc:  # not UTF-8, not JSON, nested too deep, a rule of the component, ...
            problem = f"{type(exc).__name__}: {exc}"
        if problem:
            return _Rejected(f"{component_cls.__name__}: the serialized FMU state is refused: {problem}")
        return snapshot


class _Rejected:
    """A serialized state the component refused, and why; never applied to an instance."""
    __slots__ = ("reason",)

    def __init__(self, reason: str):
        self.reason = reason
