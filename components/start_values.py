"""An FMU variant's own defaults, ``resources/start_values.json``: one JSON object (RFC 8259, read strictly) of
parameter and input values, applied at instantiation as if the host had set them. The native runtime
(components/native/text.c ``native_json_object``) and a Python-embedding FMU (components/fmi.py) read it by the same
rules, which ``start_values_text`` writes:

- the file is valid UTF-8, at most ``LIMIT`` bytes (256 MiB), and one object with nothing after it;
- a value is a number, ``true``, ``false`` or a string (``null``, ``NaN``, ``Infinity``, arrays and objects are
  refused), no name appears twice, and every string is Unicode text that UTF-8 can hold (no lone surrogate);
- a Real takes a number (not a Boolean or a string), an Integer an integral number that fits 32 bits, a Boolean
  ``true``, ``false``, 0 or 1, a String a string without a NUL character (``\\u0000``), which an FMI String cannot hold.
"""
from __future__ import annotations

import json
import math
from typing import Any

#: the most bytes a start_values.json may have (the native runtime's START_VALUES_LIMIT)
LIMIT = 256 << 20


class _Pairs(list):
    """A JSON object's members in their order (``json``'s ``object_pairs_hook``)."""


def _constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _text_problem(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "a lone surrogate (\\u escape) in a string"
    return None


def read_start_values(data: bytes) -> list[tuple[str, Any]]:
    """The members of a start_values.json (``data``, its bytes) in their order, as (name, value) with a value
    float, int, bool or str; raises ValueError saying why the bytes are not such a file (module docstring)."""
    if len(data) > LIMIT:
        raise ValueError(f"is larger than {LIMIT >> 20} MiB, the most an FMU reads")
    try:
        pairs = json.loads(data.decode("utf-8"), object_pairs_hook=_Pairs, parse_constant=_constant)
    except (UnicodeDecodeError, RecursionError) as exc:
        raise ValueError(f"not a JSON object of parameter values: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"not a JSON object of parameter values: {exc}") from None
    if not isinstance(pairs, _Pairs):
        raise ValueError("not a JSON object of parameter values: not a JSON object")
    seen: set[str] = set()
    for name, value in pairs:
        if name in seen:
            raise ValueError(f"the name {name!r} appears more than once")
        seen.add(name)
        if value is None or isinstance(value, list):
            raise ValueError(f"not a JSON object of parameter values: {name!r} has a value that is not a number, "
                             "true, false or a string")
        problem = _text_problem(name) or (_text_problem(value) if isinstance(value, str) else None)
        if problem:
            raise ValueError(f"not a JSON object of parameter values: {problem}")
    return list(pairs)


def value_problem(type_name: str, value: Any) -> str | None:
    """Why the file's ``value`` is refused for a variable of FMI type ``type_name`` before the component's own
    checks (None if it is not): a Real that is a Boolean or a string, a String holding a NUL."""
    if type_name == "Real" and isinstance(value, str):
        return "is a string, not a Real"
    if type_name == "Real" and isinstance(value, bool):
        return "is a Boolean, not a Real"
    if type_name == "Boolean" and isinstance(value, float):
        return "is not a Boolean (true/false or 1/0)"
    if type_name == "String" and isinstance(value, str) and "\0" in value:
        return "holds a NUL character (\\u0000), which an FMI String cannot"
    return None


def apply_start_values(component: Any, data: bytes) -> None:
    """Set the members of the start_values.json ``data`` on ``component`` (a ``Component``) in their order, as a host
    would: raises ValueError (the file) or ComponentError (a value, naming it) at the first refused."""
    types = {**{p.name: p.type for p in component.parameters}, **{i.name: "Real" for i in component.inputs}}
    for name, value in read_start_values(data):
        problem = value_problem(types.get(name, ""), value)
        if problem and types[name] == "Boolean" and isinstance(value, float):  # 1.0 is none, where 1 is one
            from .base import ComponentError
            raise ComponentError(f"{type(component).__name__} '{component.instance_name}': {name} = {value!r} "
                                 f"{problem}")
        if problem:
            raise component.error(name, value, problem)
        component.set(name, value)


def start_values_text(values: dict[str, Any]) -> bytes:
    """``values`` (name -> float, int, bool or str) as the bytes of a start_values.json that both readers take back
    unchanged; raises ValueError naming a value they would refuse (not finite, a NUL or lone surrogate in a
    string, another type) or a file over ``LIMIT``."""
    for name, value in values.items():
        if not isinstance(value, (bool, int, float, str)):
            raise ValueError(f"{name} = {value!r} is not a number, Boolean or string")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{name} = {value!r} is not finite")
        for text in (name, value) if isinstance(value, str) else (name,):
            if "\0" in text or _text_problem(text):
                raise ValueError(f"{name} = {value!r}: a NUL character or a lone surrogate cannot be written")
    data = json.dumps(values).encode("utf-8")
    if len(data) > LIMIT:
        raise ValueError(f"the start values take {len(data)} bytes, more than {LIMIT >> 20} MiB")
    return data
