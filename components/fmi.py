"""FMI 2.0 co-simulation wrapper (pythonfmu 0.7.0) around a ``Component``.

``ComponentFmu`` (a mixin for ``Fmi2Slave``) makes a ``Component`` an FMU that
- registers every parameter (causality=parameter, variability=fixed), input and output with
  getters/setters that go straight to the component (so FMU and in-process runs are bit-identical);
- writes a complete modelDescription: UnitDefinitions with BaseUnit exponents for every unit,
  SI TypeDefinitions, unit/min/max on every Real, ModelStructure Outputs with their real
  dependencies (feed-through inputs, or none), InitialUnknowns for every output, DefaultExperiment,
  canGetAndSetFMUstate and canSerializeFMUstate;
- reports every error where it happens and never lets an exception escape a pythonfmu callback
  (pythonfmu turns it into fmi2Fatal, after which freeing the instance can crash the host): the
  reason is logged as an error, which the FMU's native loader (mechfmu/fmi2_loader.c) turns into
  fmi2Error of that call in every host. A parameter out of its range is refused by fmi2SetX;
  cross-parameter rules and user functions are checked in fmi2ExitInitializationMode; ``do_step``
  logs the traceback and refuses the step (fmi2Discard); a failing getter logs and returns NaN;
  ``Component.step_warnings`` after a step are logged as warnings;
- keeps every hidden state in get/set/serialize FMU state (deep copies, exact JSON floats).
"""
from __future__ import annotations

import json
import math
import os
import traceback
from xml.etree.ElementTree import Element, SubElement

from pythonfmu import Boolean, Fmi2Causality, Fmi2Initial, Fmi2Variability, Integer, Real, String
from pythonfmu.enums import Fmi2Status
from pythonfmu.default_experiment import DefaultExperiment

from .base import QUANTITIES, UNITS, Component, Param

_VARIABLE_TYPES = {"Real": Real, "Integer": Integer, "Boolean": Boolean, "String": String}
#: an FMU variant's parameter values, in its resources folder
START_VALUES = "start_values.json"


def _unit_definitions() -> Element:
    node = Element("UnitDefinitions")
    for name, exponents in UNITS.items():
        unit = SubElement(node, "Unit", name=name)
        SubElement(unit, "BaseUnit", {k: str(v) for k, v in exponents.items()})
    return node


def _type_definitions() -> Element:
    node = Element("TypeDefinitions")
    for unit, (type_name, quantity) in QUANTITIES.items():
        simple = SubElement(node, "SimpleType", name=type_name)
        SubElement(simple, "Real", quantity=quantity, unit=unit)
    return node


class ComponentFmu:
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
        self.component = component_cls(self.instance_name)
        self.start_time = 0.0
        self.initialization_error = None
        self._units: dict[str, tuple[str, Param | None]] = {}
        for p in component_cls.parameters:
            self._register(p.name, p.type, Fmi2Causality.parameter, p.description, p.unit, p,
                           variability=Fmi2Variability.fixed, initial=Fmi2Initial.exact)
        for i in component_cls.inputs:
            self._register(i.name, "Real", Fmi2Causality.input, i.description, i.unit, None,
                           variability=Fmi2Variability.continuous)
        for o in component_cls.outputs:
            self._register(o.name, "Real", Fmi2Causality.output, o.description, o.unit, None,
                           variability=Fmi2Variability.continuous, initial=Fmi2Initial.calculated)
        self._apply_start_values()

    def _apply_start_values(self):
        """An FMU variant's own defaults: ``resources/start_values.json`` (parameter -> value, written
        by ``mechfmu export-crosscheck``) is applied as if the host had set the values."""
        path = os.path.join(self.resources or "", START_VALUES)
        if not (self.resources and os.path.isfile(path)):
            return
        try:
            with open(path, encoding="utf-8") as file:
                for name, value in json.load(file).items():
                    self.component.set(name, value)
        except Exception as exc:  # reported by the first call (pythonfmu has no error return here)
            self.log(f"{START_VALUES}: {exc}", Fmi2Status.error)

    def _register(self, name, type_name, causality, description, unit, param, **kw):
        setter = None if causality == Fmi2Causality.output else (lambda value: self._write(name, value))
        var = _VARIABLE_TYPES[type_name](name, causality=causality, description=description or None,
                                         getter=lambda: self._read(name), setter=setter, **kw)
        self.register_variable(var, nested=False)
        if type_name == "Real":
            self._units[name] = (unit, param)

    def _write(self, name, value):
        try:
            self.component.set(name, value)
        except Exception as exc:
            self.log(f"setting {name} failed: {exc}", Fmi2Status.error)

    def _read(self, name):
        # an exception in a getter becomes fmi2Fatal in pythonfmu: log it and return NaN
        try:
            return self.component.get(name)
        except Exception as exc:
            self.log(f"reading {name} failed: {exc}", Fmi2Status.error)
            return math.nan

    # --- modelDescription ----------------------------------------------------------------
    def to_xml(self, model_options=dict()) -> Element:
        root = super().to_xml(model_options)
        cosim = root.find("CoSimulation")
        cosim.set("canGetAndSetFMUstate", "true")
        cosim.set("canSerializeFMUstate", "true")
        position = list(root).index(cosim) + 1
        root.insert(position, _type_definitions())
        root.insert(position, _unit_definitions())
        index_of = {}
        for index, node in enumerate(root.find("ModelVariables"), start=1):
            name = node.get("name")
            index_of[name] = index
            if name in self._units:
                unit, param = self._units[name]
                real = node.find("Real")
                if unit in QUANTITIES:
                    real.set("declaredType", QUANTITIES[unit][0])
                real.set("unit", unit)
                if param is not None and param.min is not None:
                    real.set("min", repr(float(param.min)))
                if param is not None and param.max is not None:
                    real.set("max", repr(float(param.max)))
        root.remove(root.find("ModelStructure"))
        structure = SubElement(root, "ModelStructure")
        parameter_indices = [index_of[p.name] for p in self.component_class.parameters]
        if self.component_class.outputs:
            outputs = SubElement(structure, "Outputs")
            initial = SubElement(structure, "InitialUnknowns")
            for o in self.component_class.outputs:
                deps = [index_of[name] for name in o.depends_on]
                _unknown(outputs, index_of[o.name], deps)
                _unknown(initial, index_of[o.name], sorted(deps + parameter_indices))
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
        if getattr(self, "initialization_error", None):
            self.log(f"initialization failed: {self.initialization_error}", Fmi2Status.error)
            return False
        try:
            self.component.do_step(current_time, step_size)
        except Exception as exc:  # never let pythonfmu turn this into fmi2Fatal
            self.log(f"{self.instance_name}: step at t={current_time!r} h={step_size!r} failed: {exc}\n"
                     + traceback.format_exc(), Fmi2Status.error)
            return False
        for warning in self.component.step_warnings():
            self.log(warning, Fmi2Status.warning)
        return True

    def _get_fmu_state(self):
        return self.component.get_state()

    def _set_fmu_state(self, state):
        self.component.set_state(state)


def _unknown(parent: Element, index: int, dependencies: list[int]) -> None:
    attrib = {"index": str(index), "dependencies": " ".join(map(str, dependencies))}
    if dependencies:
        attrib["dependenciesKind"] = " ".join("dependent" for _ in dependencies)
    SubElement(parent, "Unknown", attrib)
