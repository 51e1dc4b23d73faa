"""The C tables of the native component classes, generated from their Python declarations at build time.

A component whose law is written in C (``components/native/<element>.c``) is declared once, in Python
(``components/<element>.py``: parameters with units, ranges and defaults, inputs, outputs, the hidden state, the
Model Exchange states). This module writes what the C law and the native runtime (``components/native/runtime.c``)
need of those declarations, so the two cannot drift:

- ``native_variables.h``: an index per variable, ``<Class>__<name>`` (characters other than letters, digits and
  ``_`` become ``_``), in value-reference order: parameters, inputs, outputs, then per continuous state
  ``state.<x>`` and ``der(state.<x>)`` (components/fmi.py registers them in this order);
- ``native_classes.c``: per class its variable table, initial state and the hooks of its C law
  (``native_<Class>_<hook>``), and the list ``native_classes``.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import mechfmu.components as components_package
from mechfmu.components.base import Component
from mechfmu.components.native_library import state_slots

#: the hooks of MSL's friction elements (components/native/friction.c)
FRICTION_HOOKS = ("outputs", "validate", "advance", "update_discrete_states", "event_pending", "partials", "written",
                  "step_warning")
#: the component classes with a native law, and the hooks their C code defines (``native_<Class>_<hook>``)
NATIVE_HOOKS: dict[str, tuple[str, ...]] = {
    "ElastoGap": ("outputs", "validate", "partials"),
    "ElastoBacklash": ("outputs", "partials"),
    "ElastoBacklash2": ("outputs", "partials"),
    "Clutch": FRICTION_HOOKS,
    "OneWayClutch": FRICTION_HOOKS,
    "RotationalBrake": FRICTION_HOOKS,
    "Brake": FRICTION_HOOKS,
    "BearingFriction": FRICTION_HOOKS,
    "SupportFriction": FRICTION_HOOKS,
    "MassWithStopAndFriction": ("outputs", "validate", "advance", "derivatives", "update_discrete_states"),
    "RotationalSpringDamper": ("outputs", "partials"),
    "Fixed": ("outputs",),
    "RotationalFixed": ("outputs",),
    "Mass": ("outputs", "advance", "derivatives", "partials"),
    "Inertia": ("outputs", "advance", "derivatives", "partials"),
    "Force": ("outputs",),
    "Torque": ("outputs",),
    "ConstantForce": ("outputs",),
    "ConstantTorque": ("outputs",),
    "Position": ("outputs",),
    "ConstantSpeed": ("outputs", "initialize"),
    "Speed": ("outputs", "advance", "derivatives"),
    "Accelerate": ("outputs", "advance", "derivatives"),
    "Sine": ("outputs", "time_events"),
    "Step": ("outputs", "time_events"),
    "Ramp": ("outputs", "time_events"),
    "Pulse": ("outputs", "time_events"),
    "Constant": ("outputs",),
    "Product": ("outputs",),
    "Rod": ("outputs",),
    "CoordinateSpringDamper": ("outputs", "validate", "partials"),
    "SmoothSphereHalfSpaceForce": ("outputs", "partials"),
    "CoordinateConstraint": ("outputs", "validate", "advance", "initialize", "written", "step_warning", "partials"),
    "RigidBody": ("outputs", "validate", "advance", "derivatives", "parameter_changed", "states_set", "partials"),
    "Table": ("outputs", "validate", "advance", "initialize", "time_events", "parameter_changed", "state_restored"),
    "CoordinateSpringDamperExt": ("outputs", "validate", "advance", "update_discrete_states", "partials"),
    "RotationalSpringDamperExt": ("outputs", "validate", "advance", "update_discrete_states", "partials"),
}
#: the C sources of the native laws
NATIVE_DIR = Path(components_package.__file__).resolve().parent / "native"
HOOKS = ("validate", "outputs", "advance", "derivatives", "initialize", "time_events", "written", "step_warning",
         "parameter_changed", "states_set", "update_discrete_states", "event_pending", "state_restored", "partials")
TYPES = {"Real": "NATIVE_REAL", "Integer": "NATIVE_INTEGER", "Boolean": "NATIVE_BOOLEAN", "String": "NATIVE_STRING"}


def native_classes() -> list[type[Component]]:
    """The component classes this build gives a native law, in name order."""
    return [components_package.COMPONENTS[name] for name in sorted(NATIVE_HOOKS)]


def identifier(class_name: str, variable: str) -> str:
    return f"{class_name}__{re.sub(r'[^A-Za-z0-9_]', '_', variable)}"


def _c_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=True)  # JSON string escapes are valid C escapes for the ASCII names used


def _c_double(value: float) -> str:
    if math.isinf(value):
        return "INFINITY" if value > 0 else "-INFINITY"
    return repr(float(value))


def variables(cls: type[Component]) -> list[dict]:
    """Every variable of the class's FMU, in value-reference order, as the C table describes it."""
    found = []
    state_slots = state_order(cls)
    for p in cls.parameters:
        found.append(dict(name=p.name, unit=p.unit, type=p.type, causality="NATIVE_PARAMETER",
                          start=0.0 if p.type == "String" else float(p.default),
                          text=p.default if p.type == "String" else None, min=p.min, max=p.max,
                          min_exclusive=p.min_exclusive,
                          moves_state=state_slots.index(p.moves_state) if p.moves_state else -1))
    for i in cls.inputs:
        found.append(dict(name=i.name, unit=i.unit, type="Real", causality="NATIVE_INPUT", start=float(i.start)))
    for o in cls.outputs:
        found.append(dict(name=o.name, unit=o.unit, type="Real", causality="NATIVE_OUTPUT"))
    if not cls.co_simulation_only:
        for name in cls.continuous_states:
            for full in (f"state.{name}", f"der(state.{name})"):
                found.append(dict(name=full, unit="", type="Real", causality="NATIVE_LOCAL"))
    return found


def initial_values(cls: type[Component]) -> dict[str, float]:
    """The hidden state's initial values by slot name (a list entry ``q`` gives ``q[0]``, ``q[1]``, ...)."""
    found: dict[str, float] = {}
    for name, value in cls.initial_state.items():
        if isinstance(value, list) and all(isinstance(x, (int, float)) for x in value):
            found.update({f"{name}[{i}]": float(x) for i, x in enumerate(value)})
        elif isinstance(value, (int, float)):
            found[name] = float(value)
        else:
            raise ValueError(f"{cls.__name__}: the native runtime holds numbers only, not the state {name!r}")
    return found


def state_order(cls: type[Component]) -> list[str]:
    """The hidden state's slots: the continuous states first, then the rest in declaration order (the in-process
    view of an instance reads them so: ``components/native_library.py``)."""
    initial_values(cls)  # a state the runtime cannot hold: named with its class
    return state_slots(cls.initial_state, cls.continuous_states)


def header() -> str:
    lines = ["/* Generated by mechfmu.fmu.native_tables from the components' Python declarations. */",
             "#ifndef MECHFMU_NATIVE_VARIABLES_H", "#define MECHFMU_NATIVE_VARIABLES_H", ""]
    for cls in native_classes():
        names = [identifier(cls.__name__, v["name"]) for v in variables(cls)]
        if len(set(names)) != len(names):
            raise ValueError(f"{cls.__name__}: two variables share a C name")
        lines.append(f"enum {{ {', '.join(f'{n} = {i}' for i, n in enumerate(names))} }};")
    return "\n".join([*lines, "", "#endif", ""])


def _entry(v: dict) -> str:
    text = "NULL" if v.get("text") is None else _c_string(v["text"])
    low, high = v.get("min"), v.get("max")
    return (f"    {{{_c_string(v['name'])}, {_c_string(v['unit'])}, {TYPES[v['type']]}, {v['causality']}, "
            f"{_c_double(v.get('start', 0.0))}, {text}, {int(low is not None)}, {int(high is not None)}, "
            f"{int(bool(v.get('min_exclusive')))}, {_c_double(low or 0.0)}, {_c_double(high or 0.0)}, "
            f"{v.get('moves_state', -1)}}},")


def classes_source() -> str:
    lines = ["/* Generated by mechfmu.fmu.native_tables from the components' Python declarations. */",
             "#include <math.h>", "#include <stddef.h>", "", '#include "model.h"', ""]
    for cls in native_classes():
        name, hooks = cls.__name__, NATIVE_HOOKS[cls.__name__]
        table = variables(cls)
        slots = state_order(cls)
        indicators = [o for o in cls.outputs if o.name.startswith("indicator.")]
        if indicators != list(cls.outputs[len(cls.outputs) - len(indicators):]):
            raise ValueError(f"{name}: the native runtime needs the event indicators declared last")
        for hook in hooks:
            signature = {"validate": "NativeInstance *", "outputs": "NativeInstance *, double *",
                         "advance": "NativeInstance *, double, double", "derivatives": "NativeInstance *, double *",
                         "initialize": "NativeInstance *", "time_events": "NativeInstance *, const double **",
                         "written": "NativeInstance *, size_t", "step_warning": "NativeInstance *, char *, size_t",
                         "parameter_changed": "NativeInstance *", "states_set": "NativeInstance *",
                         "update_discrete_states": "NativeInstance *", "event_pending": "NativeInstance *",
                         "state_restored": "NativeInstance *",
                         "partials": "NativeInstance *, double *"}
            kind = {"time_events": "size_t", "written": "void", "parameter_changed": "void",
                    "state_restored": "void"}.get(hook, "int")
            lines.append(f"{kind} native_{name}_{hook}({signature[hook]});")
        lines.append(f"static const NativeVariable {name}_variables[] = {{")
        lines.extend(_entry(v) for v in table)
        lines.append("};")
        start = initial_values(cls)
        initial = ", ".join(_c_double(start.get(s, 0.0)) for s in slots) or "0.0"
        lines.append(f"static const double {name}_state[] = {{{initial}}};")
        continuous = ", ".join(_c_string(s) for s in cls.continuous_states) or "NULL"
        lines.append(f"static const char *const {name}_continuous[] = {{{continuous}}};")
        only = _c_string(cls.co_simulation_only) if cls.co_simulation_only else "NULL"
        fields = [_c_string(name), only, str(len(table)), str(len(cls.parameters)), str(len(cls.inputs)),
                  str(len(cls.outputs)), f"{name}_variables", str(len(slots)), f"{name}_state",
                  str(0 if cls.co_simulation_only else len(cls.continuous_states)), f"{name}_continuous",
                  str(len(indicators))]
        fields += [f"native_{name}_{hook}" if hook in hooks else "NULL" for hook in HOOKS]
        fields += _partial_tables(cls, table, lines)
        lines.append(f"static const NativeClass {name}_class = {{{', '.join(fields)}}};")
        lines.append("")
    entries = ", ".join(f"&{cls.__name__}_class" for cls in native_classes())
    lines.append(f"const NativeClass *const native_classes[] = {{{entries}, NULL}};")
    return "\n".join(lines) + "\n"


def _partial_tables(cls: type[Component], table: list[dict], lines: list[str]) -> list[str]:
    """The class's partial pattern (value references) and feed-through matrix, declared into ``lines``; their
    fields of the class."""
    name, index = cls.__name__, {v["name"]: i for i, v in enumerate(table)}
    if cls.partial_pattern and "partials" not in NATIVE_HOOKS[name]:
        raise ValueError(f"{name}: analytic partials declared, but no native_{name}_partials")
    pairs = ", ".join(f"{{{index[u]}, {index[k]}}}" for u, k in cls.partial_pattern) or "{0, 0}"
    lines.append(f"static const unsigned {name}_pattern[][2] = {{{pairs}}};")
    feeds = ", ".join("1" if i.name in o.depends_on else "0" for o in cls.outputs for i in cls.inputs) or "0"
    lines.append(f"static const unsigned char {name}_feedthrough[] = {{{feeds}}};")
    return [str(len(cls.partial_pattern)), f"{name}_pattern", f"{name}_feedthrough"]


def write(folder: Path) -> list[Path]:
    """Write ``native_variables.h`` and ``native_classes.c`` into ``folder``; the generated C files."""
    (folder / "native_variables.h").write_text(header(), encoding="utf-8")
    (folder / "native_classes.c").write_text(classes_source(), encoding="utf-8")
    return [folder / "native_classes.c"]


#: the C files of the native folder that are not model code: the runtimes (``runtime.c`` for a native class,
#: ``python_runtime.c`` for a Python component), their text and operating-system layers, one glue layer per FMI version
#: and what those share
RUNTIME_FILES = ("runtime.c", "python_runtime.c", "text.c", "platform.c", "glue.c", "fmi2_functions.c",
                 "fmi3_functions.c")


def law_sources() -> list[Path]:
    """The C files of the model code: the native laws and what they share (expressions, table rows)."""
    return sorted(p for p in NATIVE_DIR.glob("*.c") if p.name not in RUNTIME_FILES)
