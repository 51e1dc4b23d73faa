"""FMI 2.0 co-simulation wrapper (pythonfmu 0.7.0) around a ``Component``; its Model Exchange interface is
``ModelExchangeFmu`` (components/fmi_model_exchange.py).

``ComponentFmu`` (a mixin for ``Fmi2Slave``) makes a ``Component`` an FMU that
- registers every parameter (causality=parameter, variability=fixed), input and output with
  getters/setters that go straight to the component (so FMU and in-process runs are bit-identical);
- writes a complete modelDescription: UnitDefinitions with BaseUnit exponents and display units (mm, deg,
  rpm) for every unit, TypeDefinitions named as MSL 4's ``Modelica.Units.SI`` types (components/si_units.py),
  unit (none on a signal: ``NO_UNIT``)/min/max on every Real, ModelStructure Outputs
  with their real dependencies (feed-through inputs, or none), InitialUnknowns for every output,
  DefaultExperiment, canGetAndSetFMUstate and canSerializeFMUstate; gives the component its resources folder
  (and a component with a C law the host library for this machine in it, ``native_library.use_resources``);
- reports every error where it happens and never lets an exception escape a pythonfmu callback
  (pythonfmu turns it into fmi2Fatal and releases the instance's Python objects): the reason is
  logged as an error, which the FMU's native loader (components/native/fmi2_functions.c, which also enforces the
  FMI state machine and refuses null pointers and unknown FMU states) turns into fmi2Error of that
  call, the instance unchanged. Refused: a value reference that is unknown or of another type, a
  set of an output, a value out of its range or non-finite, a parameter after initialization
  (fmi2SetX); cross-parameter rules and user functions in fmi2ExitInitializationMode; a step whose
  size is not finite and > 0 or whose currentCommunicationPoint is not the instance's time (the end
  of its last step or of the restored state; 1e-9 relative, since hosts compute t as t0 + n*h,
  by accumulation or from integer nanoseconds: their t and ours differ by rounding only); a
  non-finite output read (fmi2GetReal returns the value with fmi2Error, e.g. after inputs of
  1e308). ``do_step`` that fails logs the traceback and refuses the step (fmi2Discard);
  ``Component.step_warnings`` after a step are logged as warnings;
- keeps every hidden state in get/set/serialize FMU state (deep copies, exact JSON floats); a
  serialized state is checked completely (structure, types, finite numbers, parameter ranges and
  rules, against this component class) before it can reach the instance, and a restore that fails
  leaves the instance as it was;
- holds no reference cycle through the slave (getters/setters are bound to the component): freed when released.
"""
from __future__ import annotations

import functools
import math
import os
import sys
import traceback
from xml.etree.ElementTree import Element, SubElement

from pythonfmu import Boolean, Fmi2Causality, Fmi2Initial, Fmi2Variability, Integer, Real, String
from pythonfmu.default_experiment import DefaultExperiment
from pythonfmu.enums import Fmi2Status

from . import native_library
from ._pythonfmu import Fmi2SlaveApi, child
from .base import NO_UNIT, QUANTITIES, UNITS, Component, ComponentError, Param
from .diagnostics import blame
from .fmi_model_exchange import ModelExchangeFmu
from .fmi_state import FmuStates
from .number_text import measured, number
from .si_units import DEFAULT_DISPLAY_UNITS, DISPLAY_UNITS
from .start_values import LIMIT, apply_start_values

_VARIABLE_TYPES = {"Real": Real, "Integer": Integer, "Boolean": Boolean, "String": String}
#: FMI type -> (Python type of its values, the value a refused read returns)
_VALUES = {"Real": (float, math.nan), "Integer": (int, 0), "Boolean": (bool, False), "String": (str, "")}
#: |t - expected| allowed between a step's currentCommunicationPoint and the instance's time, relative to max(1, |t|):
#: far above the rounding of t0 + n*h, accumulation or integer nanoseconds (~1e-16), far below any real jump in time
TIME_TOLERANCE = 1e-9
#: an FMU variant's parameter values, in its resources folder
START_VALUES = "start_values.json"


def _unit_definitions() -> Element:
    """Every unit with its BaseUnit exponents and display units (``DISPLAY_UNITS``: value shown = factor·value)."""
    node = Element("UnitDefinitions")
    for name, exponents in UNITS.items():
        unit = SubElement(node, "Unit", name=name)
        SubElement(unit, "BaseUnit", {k: str(v) for k, v in exponents.items()})
        for display, factor in DISPLAY_UNITS.get(name, {}).items():
            SubElement(unit, "DisplayUnit", name=display, factor=repr(factor))
    return node


def _type_definitions() -> Element:
    """MSL 4's ``Modelica.Units.SI`` type of each unit, with its quantity and default display unit."""
    node = Element("TypeDefinitions")
    for unit, (type_name, quantity) in QUANTITIES.items():
        simple = SubElement(node, "SimpleType", name=type_name)
        real = SubElement(simple, "Real", {"quantity": quantity} if quantity else {})
        real.set("unit", unit)
        if unit in DEFAULT_DISPLAY_UNITS:
            real.set("displayUnit", DEFAULT_DISPLAY_UNITS[unit])
    return node


class ComponentFmu(FmuStates, ModelExchangeFmu, Fmi2SlaveApi):
    """Mixin that turns a ``Component`` into a pythonfmu slave; the entry script declares
    ``class Model(ComponentFmu, Fmi2Slave): component_class = ModelComponent``."""

    component_class: type[Component]
    author = "mechfmu"
    license = "MIT"
    version = "0.1.0"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        component_cls = cls.component_class
        cls.description = component_cls.description
        cls.default_experiment = DefaultExperiment(start_time=0.0, stop_time=component_cls.default_stop,
                                                   step_size=component_cls.default_step)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        component_cls = self.component_class
        native_library.use_resources(self.resources)
        self.component = component_cls(self.instance_name)
        self.component.resources = self.resources
        self.start_time = 0.0
        self.initialization_error = None
        self._units: dict[str, tuple[str, Param | None]] = {}
        self._plans: dict[tuple[str, tuple], list[str] | None] = {}
        for p in component_cls.parameters:
            self._register(p.name, p.type, Fmi2Causality.parameter, p.description, p.unit, p,
                           variability=Fmi2Variability.fixed, initial=Fmi2Initial.exact)
        for i in component_cls.inputs:
            self._register(i.name, "Real", Fmi2Causality.input, i.description, i.unit, None,
                           variability=Fmi2Variability.continuous)
        for o in component_cls.outputs:
            self._register(o.name, "Real", Fmi2Causality.output, o.description, o.unit, None,
                           variability=Fmi2Variability.continuous, initial=Fmi2Initial.calculated)
        self._me_getters = self._register_model_exchange()
        self._apply_start_values()
        # pythonfmu 0.7.0's binary (Windows) prepends the resources folder to sys.path at every instantiation
        while self.resources and sys.path.count(self.resources) > 1:
            sys.path.remove(self.resources)

    def _apply_start_values(self):
        """An FMU variant's own defaults: ``resources/start_values.json`` (parameter -> value, written
        by ``mechfmu export-crosscheck`` and ``export-ssp``) is applied as if the host had set the values, read by
        the native runtime's rules (components/start_values.py)."""
        path = os.path.join(self.resources or "", START_VALUES)
        if not (self.resources and os.path.isfile(path)):
            return
        try:
            with open(path, "rb") as file:
                apply_start_values(self.component, file.read(LIMIT + 1))
        except Exception as exc:  # reported by the first call (pythonfmu has no error return here)
            self.log(f"{START_VALUES}: {exc}", Fmi2Status.error)

    def _register(self, name, type_name, causality, description, unit, param, **kw):
        # bound to the component, not to self: no cycle slave -> variable -> closure -> slave
        setter = None if causality == Fmi2Causality.output else functools.partial(self.component.set, name)
        var = _VARIABLE_TYPES[type_name](name, causality=causality, description=description or None,
                                         getter=functools.partial(self.component.get, name), setter=setter, **kw)
        self.register_variable(var, nested=False)
        if type_name == "Real":
            self._units[name] = (unit, param)

    # --- variable access: every refusal is logged (-> fmi2Error), nothing raises into pythonfmu ----
    def _variable(self, vr, kind: str, action: str):
        var = self.vars.get(vr)
        if var is None or not isinstance(var, _VARIABLE_TYPES[kind]):
            what = "no such variable" if var is None else f"{var.name} is a {type(var).__name__}, not a {kind}"
            self.log(f"{self.instance_name}: fmi2{action}{kind}: valueReference {vr}: {what}", Fmi2Status.error)
            return None
        if action == "Set" and var.causality == Fmi2Causality.output:
            self.log(f"{self.instance_name}: fmi2Set{kind}: {var.name} is an output and cannot be set",
                     Fmi2Status.error)
            return None
        return var

    def _read(self, name, kind="Real"):
        convert, refused = _VALUES[kind]
        try:
            value = convert(self._me_getters[name]() if name in self._me_getters else self.component.get(name))
        except Exception as exc:  # a native component's refusal in the runtime's words, as its native FMU logs it
            self.log(getattr(exc, "logged", "") or f"reading {name} failed: {exc}", Fmi2Status.error)
            return refused
        if kind == "Real" and not math.isfinite(value):
            self.log(f"{self.instance_name}: {name} = {value!r} is not finite at t = {measured(self.component.time)} "
                     f"({blame(self.component.values)})", Fmi2Status.error)
        return value

    def _write(self, name, value):
        try:
            self.component.set(name, value)
        except Exception as exc:
            self.log(getattr(exc, "logged", "") or f"setting {name} failed: {exc}", Fmi2Status.error)

    def _get(self, vrs, kind):
        return [self._read(var.name, kind) if (var := self._variable(vr, kind, "Get")) else _VALUES[kind][1]
                for vr in vrs]

    def _set(self, vrs, values, kind):
        for vr, value in zip(vrs, values):  # each value on its own: a refused one keeps the old value
            if var := self._variable(vr, kind, "Set"):
                self._write(var.name, value)

    def _names(self, vrs, action: str) -> list[str] | None:
        """The names of Real value references that can be read (``Get``) or written (``Set``) all at once,
        None if one cannot (the per-reference path then logs why); kept per tuple of references."""
        key = (action, tuple(vrs))
        if key not in self._plans:
            if len(self._plans) > 1024:
                self._plans.clear()
            found = [self.vars.get(vr) for vr in vrs]
            self._plans[key] = [v.name for v in found if v is not None] if all(
                isinstance(v, Real) and not (action == "Set" and v.causality == Fmi2Causality.output)
                for v in found) else None
        return self._plans[key]

    def get_real(self, vrs):
        names = self._names(vrs, "Get")
        if names is not None:  # the batch, unless a value fails or is not finite: then name by name, logged
            try:
                values = [float(v) for v in self.component.get_many(names)]
            except Exception:
                values = None
            if values is not None and all(map(math.isfinite, values)):
                return values
        return self._get(vrs, "Real")

    def get_integer(self, vrs):
        return self._get(vrs, "Integer")

    def get_boolean(self, vrs):
        return self._get(vrs, "Boolean")

    def get_string(self, vrs):
        return self._get(vrs, "String")

    def set_real(self, vrs, values):
        names = self._names(vrs, "Set")
        if names is not None:
            try:
                self.component.set_many(names, values)
                return
            except Exception:
                pass  # a refused value: every value again on its own, each refusal logged
        self._set(vrs, values, "Real")

    def set_integer(self, vrs, values):
        self._set(vrs, values, "Integer")

    def set_boolean(self, vrs, values):
        self._set(vrs, values, "Boolean")

    def set_string(self, vrs, values):
        self._set(vrs, values, "String")

    # --- modelDescription ----------------------------------------------------------------
    def to_xml(self, model_options=None) -> Element:
        root = super().to_xml(model_options or {})  # type: ignore[safe-super]  # Fmi2Slave's, next in the MRO
        cosim = child(root, "CoSimulation")
        cosim.set("canGetAndSetFMUstate", "true")
        cosim.set("canSerializeFMUstate", "true")
        cosim.set("providesDirectionalDerivative", "true")  # components/partials.py
        position = list(root).index(cosim) + 1
        root.insert(position, _type_definitions())
        root.insert(position, _unit_definitions())
        index_of = {}
        for index, node in enumerate(child(root, "ModelVariables"), start=1):
            name = node.get("name")
            index_of[name] = index
            if name in self._units:
                unit, param = self._units[name]
                real = child(node, "Real")
                if unit in QUANTITIES:
                    real.set("declaredType", QUANTITIES[unit][0])
                if unit != NO_UNIT:  # a signal (Modelica's plain Real) has none
                    real.set("unit", unit)
                for bound in ("min", "max") if param is not None else ():
                    if getattr(param, bound) is not None:
                        real.set(bound, repr(float(getattr(param, bound))))
        root.remove(child(root, "ModelStructure"))
        structure = SubElement(root, "ModelStructure")
        parameter_indices = [index_of[p.name] for p in self.component_class.parameters]
        initial = None
        if self.component_class.outputs:
            outputs = SubElement(structure, "Outputs")
            initial = SubElement(structure, "InitialUnknowns")
            for o in self.component_class.outputs:
                deps = [index_of[name] for name in o.depends_on]
                _unknown(outputs, index_of[o.name], deps)
                _unknown(initial, index_of[o.name], sorted(deps + parameter_indices))
        self._model_exchange_xml(root, index_of, structure, initial)
        return root

    # --- life cycle ------------------------------------------------------------------------
    def setup_experiment(self, start_time, stop_time=None, tolerance=None):
        self.start_time = start_time

    def exit_initialization_mode(self):
        # FMI allows parameters to be set in initialization mode, so they are checked here. pythonfmu
        # has no error return (an exception becomes fmi2Fatal and can crash the host): the logged
        # error makes the native loader return fmi2Error; a later do_step refuses with the reason.
        self.initialization_error = None
        try:
            self.component.initialize(self.start_time)
        except Exception as exc:
            self.initialization_error = str(exc)
            self.log(self.initialization_error, Fmi2Status.error)

    def do_step(self, current_time: float, step_size: float) -> bool:
        expected = self.component.time
        if not (math.isfinite(current_time) and math.isfinite(step_size) and step_size > 0.0
                and abs(current_time - expected) <= TIME_TOLERANCE * max(1.0, abs(expected))):
            # refused before anything changed: logged as an error, which the loader returns (fmi2Error,
            # the FMI state unchanged); returning False would make it a failed step (fmi2Discard)
            self.log(f"{self.instance_name}: fmi2DoStep refused: currentCommunicationPoint = {number(current_time)}, "
                     f"communicationStepSize = {number(step_size)}; expected currentCommunicationPoint = "
                     f"{number(expected)} "
                     f"(the end of the last step or the restored state's time) and a finite step size > 0",
                     Fmi2Status.error)
            return True
        if getattr(self, "initialization_error", None):
            self.log(f"initialization failed: {self.initialization_error}", Fmi2Status.error)
            return False
        try:  # the warnings read the outputs at the step's end, which may fail too (a user function there)
            self.component.do_step(current_time, step_size)
            warnings = self.component.step_warnings()
        except Exception as exc:  # never let pythonfmu turn this into fmi2Fatal
            self.log(f"{self.instance_name}: step at t={measured(current_time)} h={number(step_size)} failed: {exc}"
                     + ("" if isinstance(exc, ComponentError) else "\n" + traceback.format_exc()), Fmi2Status.error)
            return False
        for warning in warnings:
            self.log(warning, Fmi2Status.warning)
        return True


def _unknown(parent: Element, index: int, dependencies: list[int]) -> None:
    attrib = {"index": str(index), "dependencies": " ".join(map(str, dependencies))}
    if dependencies:
        attrib["dependenciesKind"] = " ".join("dependent" for _ in dependencies)
    SubElement(parent, "Unknown", attrib)
