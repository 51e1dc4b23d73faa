"""Component base: variable declarations, parameter validation, state handling, the step contract.

A component is a plain Python object (standard library only). The FMU wrapper in ``components/fmi.py`` maps
FMI calls onto it one to one, and the master's ``LocalSlave`` drives the same object in-process, so both give
bit-identical results. Sign convention: ``SIGN_CONVENTION`` below (also in every FMU's documentation).

Life cycle (mirrors FMI 2.0 co-simulation): ``Component(instance_name)`` -> ``set`` parameters and inputs ->
``initialize(start_time)`` (validates every parameter; ``ComponentError`` names component, parameter and value)
-> repeat ``set`` inputs, ``do_step(t, h)``, ``get`` outputs. ``get_state``/``set_state`` capture every value
and every hidden state as a deep copy; ``serialize_state`` is exact (JSON of float reprs round-trips).
"""
from __future__ import annotations

import copy
import dataclasses
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .diagnostics import too_large
from .model_exchange import ModelExchange
from .modelica import ModelicaEquivalent
from .number_text import number, with_unit
from .partials import DirectionalDerivatives
from .si_units import NO_UNIT, QUANTITIES, UNITS  # noqa: F401  (re-exported: the components' units)

#: translational unit -> rotational unit, for components that serve both (DESIGN: same names, rad units)
ROTATIONAL_UNITS: dict[str, str] = {"m": "rad", "m/s": "rad/s", "m/s2": "rad/s2", "N": "N.m", "N/m": "N.m/rad",
                                    "N.s/m": "N.m.s/rad", "kg": "kg.m2", "N/s": "N.m/s"}


#: the port sign convention of every component (Modelica Translational, MSL ``GenerationOfFMUs``)
SIGN_CONVENTION = (
    "A 1D connector reads the absolute positions and velocities of its two flanges (inputs flange_a.s, "
    "flange_a.v, flange_b.s, flange_b.v) and outputs its own cut forces flange_b.f = +f and flange_a.f = -f "
    "for the element force f (positive = tension; with gear factors flange_a.f = -factor0*f, "
    "flange_b.f = +factor1*f). A body wired to a connector flange receives that flange force as its input "
    "of the same name and applies its negative (Mass: m*a = f_drive - flange_a.f - flange_b.f), so every "
    "connection is a plain 1:1 wire with no sign change, as in MSL's Translational.Examples.GenerationOfFMUs. "
    "Rotational components use the same names (flange_x.s in rad, flange_x.f in N.m); Inertia uses Modelica's "
    "phi, w, tau. 3D ports are world-frame vectors: positions, unit quaternions (w, x, y, z; body to world), "
    "linear and angular velocities from the bodies; forces and torques (about the body origin) that an "
    "element exerts on each body, which the body adds to its load."
)


class ComponentError(ValueError):
    """Bad parameter, input or user function; the message names component, variable and value."""


@dataclass(frozen=True)
class Param:
    """A parameter: FMI causality=parameter, variability=fixed (set before initialization only).

    ``min``/``max`` are inclusive bounds written to the modelDescription; ``min_exclusive`` makes
    the lower bound strict at validation (e.g. a mass must be > 0). ``unit=NO_UNIT`` declares a signal
    without unit (every declaration's default is "1", dimensionless).
    """
    name: str
    default: Any
    unit: str = "1"
    description: str = ""
    min: float | None = None
    max: float | None = None
    min_exclusive: bool = False
    type: str = "Real"  # Real, Integer, Boolean, String
    moves_state: str | None = None  # name of the state this start parameter sets when written


@dataclass(frozen=True)
class Input:
    """A continuous input with its start value (kept when the input is not connected)."""
    name: str
    start: float = 0.0
    unit: str = "1"
    description: str = ""


@dataclass(frozen=True)
class Output:
    """A continuous output. ``depends_on`` lists the inputs it feeds through (direct dependency);
    an empty tuple means it depends only on the component's state."""
    name: str
    unit: str = "1"
    description: str = ""
    depends_on: tuple[str, ...] = field(default_factory=tuple)


def vector_variables(kind: type, prefix: str, unit: str, description: str, names: tuple[str, ...] = ("x", "y", "z"),
                     start: tuple[float, ...] | None = None, **kw: Any) -> tuple:
    """Declarations ``prefix.x``, ``prefix.y``, ... of one vector (``kind`` = Param, Input or Output)."""
    if kind is Output:
        return tuple(Output(f"{prefix}.{a}", unit, f"{description} ({a})", **kw) for a in names)
    start = start or (0.0,) * len(names)
    return tuple(kind(f"{prefix}.{a}", s, unit, f"{description} ({a})", **kw) for a, s in zip(names, start))


#: the range of an FMI 2.0 Integer (fmi2Integer is a 32-bit int)
INT32 = (-2**31, 2**31 - 1)


def coerce(type_name: str, value: Any) -> Any:
    """``value`` as an FMI ``type_name`` without silent changes: an Integer is integral and fits 32 bits
    (3.7 and 2**40 are refused, not cut), a Boolean is a bool or 0/1 ("yes" is refused), a Real a
    number; raises ValueError saying why."""
    if type_name == "Real":
        if isinstance(value, (str, bytes, bytearray)):
            raise ValueError(f"is {'a string' if isinstance(value, str) else 'bytes'}, not a Real")
        return float(value)
    if type_name == "Integer":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
            raise ValueError("is not an integer")
        if not INT32[0] <= int(value) <= INT32[1]:
            raise ValueError(f"does not fit an FMI Integer (32 bits: {INT32[0]} to {INT32[1]})")
        return int(value)
    if type_name == "Boolean":
        if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
            return bool(value)
        raise ValueError("is not a Boolean (true/false or 1/0)")
    if not isinstance(value, str):
        raise ValueError("is not a String")
    return value


_BATCHED: dict[type, tuple[frozenset[str], frozenset[str]]] = {}  # per class: what get_many/set_many batch


class Component(ModelExchange, DirectionalDerivatives):
    """Base of every component. Subclasses declare ``parameters``, ``inputs``, ``outputs`` and
    ``initial_state`` and implement ``compute_outputs`` (algebraic outputs from the current inputs, state
    and time) and, if they have dynamics, ``advance`` (the state over one step) and for Model Exchange
    ``continuous_states`` and ``derivatives`` (components/model_exchange.py).

    Extension checklist: module docstring with the law, units, source and invariants; a pure law function;
    declarations here; ``validate`` for cross-parameter rules; an entry in ``components.COMPONENTS``."""

    description: ClassVar[str] = ""
    #: the system (and version) whose physics this component reproduces
    source: ClassVar[str] = ""
    #: the Modelica Standard Library classes it stands for, with the parameter mapping (components/modelica.py)
    modelica: ClassVar[tuple[ModelicaEquivalent, ...]] = ()
    #: parameter values that exercise the component (stick/slip, stops, user functions, ...); the
    #: generic FMU tests run every component with them
    example_parameters: ClassVar[dict[str, Any]] = {}
    parameters: ClassVar[tuple[Param, ...]] = ()
    inputs: ClassVar[tuple[Input, ...]] = ()
    outputs: ClassVar[tuple[Output, ...]] = ()
    #: hidden state with initial values; must be JSON-serialisable (floats, ints, bools, str)
    initial_state: ClassVar[dict[str, Any]] = {}
    default_step: ClassVar[float] = 1e-3
    default_stop: ClassVar[float] = 1.0
    #: the folder of the FMU's unpacked resources (set by the FMU wrapper; in-process the scenario's folder):
    #: relative file names in parameters are found there; None: in the current directory
    resources: str | None = None

    def __init__(self, instance_name: str | None = None):
        self.instance_name = instance_name or type(self).__name__
        self._params = {p.name: p for p in self.parameters}
        self._input_names = {i.name for i in self.inputs}
        self.values: dict[str, Any] = {p.name: p.default for p in self.parameters}
        self.values.update({i.name: i.start for i in self.inputs})
        self.state: dict[str, Any] = copy.deepcopy(self.initial_state)
        for p in self.parameters:
            if p.moves_state:
                self.state[p.moves_state] = float(p.default)
        self.time = 0.0
        self.initialized = False
        self._cache: dict[str, float] | None = None
        cls = type(self)
        if cls not in _BATCHED:  # what get_many/set_many handle as Component.get/set (if not overridden) would
            outputs = frozenset(o.name for o in cls.outputs).difference(self.values)
            _BATCHED[cls] = (outputs if cls.get is Component.get else frozenset(),
                             frozenset(self._input_names) if cls.set is Component.set else frozenset())
        self._batched = _BATCHED[cls]

    def variable_names(self) -> list[str]:
        return ([p.name for p in self.parameters] + [i.name for i in self.inputs]
                + [o.name for o in self.outputs])

    def set(self, name: str, value: Any) -> None:
        """Write a parameter (before ``initialize`` only; a value out of its own range is refused at
        once) or an input (finite)."""
        if name in self._input_names:
            value = float(value)
            if not math.isfinite(value):
                raise self.error(name, value, "must be finite")
            self.values[name] = value
        elif name in self._params:
            param = self._params[name]
            if self.initialized:
                raise self.error(name, value, "is a fixed parameter and cannot change after initialization")
            try:
                value = coerce(param.type, value)
            except (TypeError, ValueError, OverflowError) as exc:
                problem = str(exc) if isinstance(exc, ValueError) else f"is not a valid {param.type}"
                raise self.error(name, value, problem) from None
            self.check_range(param, value)
            self.values[name] = value
            if param.moves_state:
                self.state[param.moves_state] = value
            self.parameter_changed(name)
        else:
            raise ComponentError(f"{self.instance_name}: no parameter or input named {name!r}")
        self._cache = None

    def set_many(self, names: Sequence[str], values: Sequence[Any]) -> None:
        """``set`` of each name in turn (the same checks and errors); inputs without a call each."""
        batched, vals, isfinite = self._batched[1].issuperset(names), self.values, math.isfinite
        for name, value in zip(names, values):
            if not batched:
                self.set(name, value)
                continue
            value = float(value)
            if not isfinite(value):
                raise self.error(name, value, "must be finite")
            vals[name] = value
            self._cache = None

    def get_many(self, names: Sequence[str]) -> list[Any]:
        """``[self.get(n) for n in names]`` (the same values and errors); outputs read in one go."""
        if names and self._batched[0].issuperset(names):
            outputs = self._cache if self._cache is not None else self.current_outputs()
            try:
                return [outputs[n] for n in names]
            except KeyError:
                pass  # an output compute_outputs left out: get names it
        get = self.get
        return [get(n) for n in names]

    def get(self, name: str) -> Any:
        """Read any parameter, input or output (outputs are evaluated from the current inputs)."""
        if name in self.values:
            return self.values[name]
        outputs = self._cache if self._cache is not None else self.current_outputs()
        try:
            return outputs[name]
        except KeyError:
            raise ComponentError(f"{self.instance_name}: no variable named {name!r}") from None

    def current_outputs(self) -> dict[str, Any]:
        """Every output now (``compute_outputs``, kept until an input, the state or the time changes)."""
        if self._cache is None:
            try:
                self._cache = self.compute_outputs()
            except Exception as exc:
                if not self.initialized:
                    self.check_parameters()  # before initialization a bad parameter is the likely cause: name it
                if (huge := too_large(self.values)) is None or not isinstance(exc, (ArithmeticError, ValueError)):
                    raise
                raise self.error(*huge, f"is beyond what the law can compute with ({exc})") from None
        return self._cache

    def parameter_changed(self, name: str) -> None:
        """Hook after a parameter was written (before initialization): components whose initial state
        follows from several parameters recompute it here, so outputs read during initialization
        (the master's first exchange) already show it."""

    def error(self, name: str, value: Any, problem: str) -> ComponentError:
        return ComponentError(f"{type(self).__name__} '{self.instance_name}': {name} = {number(value)} {problem}")

    def initialize(self, start_time: float = 0.0) -> None:
        """Validate all parameters and enter the stepping phase."""
        self.check_parameters()
        self.time = self._accepted_time = self._event_time = float(start_time)
        self.initialized = True
        self._cache = None

    def check_range(self, p: Param, value: Any) -> None:
        """A parameter value on its own: finite (Real) and inside [min, max]; raises ``ComponentError``."""
        if p.type == "Real" and not math.isfinite(value):
            raise self.error(p.name, value, "must be finite")
        if p.min is not None and (value < p.min or (p.min_exclusive and value == p.min)):
            rel = ">" if p.min_exclusive else ">="
            raise self.error(p.name, value, f"is out of range: must be {rel} {with_unit(number(p.min), p.unit)}")
        if p.max is not None and value > p.max:
            raise self.error(p.name, value, f"is out of range: must be <= {with_unit(number(p.max), p.unit)}")

    def check_parameters(self) -> None:
        """Ranges of every parameter, then the component's own ``validate``."""
        for p in self.parameters:
            self.check_range(p, self.values[p.name])
        self.validate()

    def step_warnings(self) -> list[str]:
        """New warnings after a completed step that a host must see (the FMU logs each as an FMI warning)."""
        return []

    def validate(self) -> None:
        """Cross-parameter checks and parsing (user functions); raise ``self.error(...)``."""

    def do_step(self, current_time: float, step_size: float) -> None:
        """Advance from ``current_time`` by ``step_size`` with inputs held constant."""
        if not (step_size > 0.0 and math.isfinite(step_size)):
            raise self.error("step_size", step_size, "must be positive and finite")
        self.advance(current_time, step_size)
        self.time = current_time + step_size
        self._cache = None

    def advance(self, current_time: float, step_size: float) -> None:
        """State update over one step; algebraic components have none."""

    def compute_outputs(self) -> dict[str, float]:
        """Algebraic outputs from the current inputs, state and time."""
        return {}

    def get_state(self) -> dict[str, Any]:
        """Everything needed to resume: values, hidden state, time, phase, Model Exchange's times (deep copy)."""
        return copy.deepcopy({"values": self.values, "state": self.state, "time": self.time,
                              "initialized": self.initialized, "accepted": self.saved_times()})

    def set_state(self, snapshot: dict[str, Any]) -> None:
        snapshot = copy.deepcopy(snapshot)
        self.values = snapshot["values"]
        self.state = snapshot["state"]
        self.time, self.initialized = snapshot["time"], snapshot["initialized"]
        self.restore_times(snapshot["accepted"])
        self._cache = None
        if self.initialized:
            self.validate()  # re-parse user functions that depend on restored parameters

    @staticmethod
    def serialize_state(snapshot: dict[str, Any]) -> bytes:
        return json.dumps(snapshot).encode("utf-8")

    @staticmethod
    def deserialize_state(data: bytes) -> dict[str, Any]:
        return json.loads(data.decode("utf-8"))


def rotational_variant(cls: type[Component], name: str, description: str,
                       example_parameters: dict[str, Any] | None = None) -> type[Component]:
    """The same component with rotational units (rad, rad/s, N.m, ...) and the same variable
    names: a connector law on coordinates holds for angles and torques alike."""
    def convert(items):
        return tuple(dataclasses.replace(item, unit=ROTATIONAL_UNITS.get(item.unit, item.unit)) for item in items)
    return type(name, (cls,), {"__doc__": f"{description}\n\n{cls.__module__}.{cls.__name__} in rotational units.",
                               "__module__": cls.__module__, "description": description, "modelica": (),
                               "parameters": convert(cls.parameters), "inputs": convert(cls.inputs),
                               "outputs": convert(cls.outputs),
                               "example_parameters": example_parameters or cls.example_parameters})
