"""The host library of the native laws, loaded into a Python process (``components/native_component.py`` shows its
instances as components): its functions typed, and views of an instance's values and hidden state.

Where the library is (``library()``): ``library_path`` if set; else the environment variable ``LIBRARY_VARIABLE``;
else, inside a Python-embedding FMU, the one for this machine in its resources (``use_resources``); else what the
parent package's ``host_library()`` returns (``mechfmu``'s builds it for this machine beside the FMUs).

Slots of the hidden state (``state_slots``): the continuous states first, then the other entries in declaration
order; a list entry ``q`` is the slots ``q[0]``, ``q[1]``, ...
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
import platform
import sys
from collections.abc import Iterator, MutableMapping
from typing import Any

#: the host library's path; None: found (module docstring)
library_path: str | None = None
LIBRARY_VARIABLE = "MECHFMU_NATIVE_LIBRARY"
#: a Python-embedding FMU's host libraries: resources/RESOURCES_FOLDER/<binaries folder>/LIBRARY_STEM<extension>
RESOURCES_FOLDER, LIBRARY_STEM = "native", "mechfmu_components"
#: the runtime's status values (RuntimeStatus, components/native/runtime.h)
OK, WARNING, DISCARD, ERROR = 0, 1, 2, 3

_library: ctypes.CDLL | None = None


def library() -> ctypes.CDLL:
    """The host library, loaded once (its functions typed)."""
    global _library
    if _library is None:
        path = library_path or os.environ.get(LIBRARY_VARIABLE)
        parent = sys.modules.get(__name__.rpartition(".")[0].rpartition(".")[0])
        locate = getattr(parent, "host_library", None) if not path else None
        if callable(locate):
            path = str(locate())
        if not path:
            raise RuntimeError(f"the native components' host library is not found: mechfmu builds it, or set "
                               f"{LIBRARY_VARIABLE}")
        damage = _damage(path)
        if damage:
            raise RuntimeError(f"the native components' host library {path} is not loaded: {damage}")
        try:
            lib = ctypes.CDLL(path)
        except OSError as exc:
            raise RuntimeError(f"the native components' host library {path} cannot be loaded: {exc}") from None
        p, d, i, u = ctypes.c_void_p, ctypes.c_double, ctypes.c_int, ctypes.c_size_t
        refs, reals = ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_double)
        for name, result, arguments in (
                ("host_instantiate", p, [ctypes.c_char_p, ctypes.c_char_p]), ("host_free", None, [p]),
                ("host_values", reals, [p]), ("host_state", reals, [p]), ("host_message", ctypes.c_char_p, [p]),
                ("host_time", d, [p]), ("host_initialized", i, [p]), ("host_changed", None, [p]),
                ("host_take_log", ctypes.c_char_p, [p]), ("host_set_resources", i, [p, ctypes.c_char_p]),
                ("runtime_setup_experiment", i, [p, d]), ("runtime_call", i, [p, ctypes.c_char_p, ctypes.c_char_p]),
                ("runtime_do_step", i, [p, d, d]), ("runtime_reset", i, [p]),
                ("runtime_get_real", i, [p, refs, u, reals]), ("runtime_set_real", i, [p, refs, u, reals]),
                ("runtime_set_integer", i, [p, refs, u, ctypes.POINTER(ctypes.c_int)]),
                ("runtime_set_boolean", i, [p, refs, u, ctypes.POINTER(ctypes.c_int)]),
                ("runtime_get_string", i, [p, refs, u, ctypes.POINTER(ctypes.c_char_p)]),
                ("runtime_set_string", i, [p, refs, u, ctypes.POINTER(ctypes.c_char_p)]),
                ("runtime_model_exchange", i, [p, ctypes.c_char_p, ctypes.c_char_p, reals, u, reals, u]),
                ("runtime_get_state", i, [p, ctypes.POINTER(p)]), ("runtime_set_state", i, [p, p]),
                ("runtime_free_state", None, [p, p]),
                ("runtime_serialize", i, [p, p, ctypes.POINTER(ctypes.POINTER(ctypes.c_char)), ctypes.POINTER(u)]),
                ("runtime_deserialize", i, [p, ctypes.c_char_p, u, ctypes.POINTER(p)]),
                ("host_release", None, [p]), ("host_count_messages", None, [p])):
            function = getattr(lib, name)
            function.restype, function.argtypes = result, arguments
        _library = lib
    return _library


def _damage(path: str) -> str:
    """What is wrong with the library at ``path`` against the manifest beside it (``<path>.sha256``, as
    ``mechfmu.fmu.integrity`` writes: its size and SHA-256 when built, in a Python-embedding FMU's resources too),
    "" if nothing or there is none (a library mechfmu hands over is checked there)."""
    try:
        with open(path + ".sha256", encoding="utf-8") as file:
            manifest = json.load(file)
        size, digest = manifest["size"], manifest["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError as exc:
        return f"it cannot be read ({exc.strerror})"
    if len(data) != size:
        return f"damaged: {len(data)} bytes where {size} were built"
    return "" if hashlib.sha256(data).hexdigest() == digest else "damaged: its SHA-256 is not the one built"


def binaries_folder() -> str:
    """This machine's FMI binaries folder (linux64, aarch64-linux, win64, darwin64)."""
    if sys.platform == "win32":
        return "win64"
    if sys.platform == "darwin":
        return "darwin64"
    return "aarch64-linux" if platform.machine().lower() in ("aarch64", "arm64") else "linux64"


def use_resources(resources: str | None) -> None:
    """Inside a Python-embedding FMU: the host library for this machine from its ``resources`` folder, if it holds
    one and no library is chosen yet (module docstring)."""
    extension = {"win32": ".dll", "darwin": ".dylib"}.get(sys.platform, ".so")
    path = os.path.join(resources or "", RESOURCES_FOLDER, binaries_folder(), LIBRARY_STEM + extension)
    global library_path
    if resources and library_path is None and _library is None and os.path.isfile(path):
        library_path = path


def state_slots(initial_state: dict[str, Any], continuous: tuple[str, ...]) -> list[str]:
    """The hidden state's slot names (module docstring); ValueError for an entry that is not numbers."""
    found: list[str] = []
    for name, value in initial_state.items():
        if isinstance(value, list) and all(isinstance(x, (int, float)) for x in value):
            found.extend(f"{name}[{i}]" for i in range(len(value)))
        elif isinstance(value, (int, float)):
            found.append(name)
        else:
            raise ValueError(f"the native runtime holds numbers only, not the state {name!r}")
    return list(continuous) + [n for n in found if n not in continuous]


class _View(MutableMapping):
    """A fixed set of named entries of a native instance (``keys``, from its owner), none removable."""

    keys_attribute = ""

    def __init__(self, owner: Any):  # a components.native_component.NativeComponent
        self.owner = owner

    def __delitem__(self, name: str) -> None:
        raise TypeError("a component's entries cannot be removed")

    def __iter__(self) -> Iterator[str]:
        return iter(getattr(self.owner, self.keys_attribute))

    def __len__(self) -> int:
        return len(getattr(self.owner, self.keys_attribute))


class _Values(_View):
    """The parameters' and inputs' values of a native instance (Integer as int, Boolean as bool, String as str);
    writing one goes through ``NativeComponent.set`` (its checks)."""

    keys_attribute = "_settable"

    def __getitem__(self, name: str) -> Any:
        owner = self.owner
        index, kind = owner._settable[name]
        if kind == "String":
            return owner._get_string(index)
        value = owner._values[index]
        return int(value) if kind == "Integer" else bool(value) if kind == "Boolean" else value

    def __setitem__(self, name: str, value: Any) -> None:
        self.owner.set(name, value)


class _State(_View):
    """The hidden state of a native instance, shaped as the class's ``initial_state`` (a list entry as a list)."""

    keys_attribute = "_state_entries"

    def __getitem__(self, name: str) -> Any:
        owner = self.owner
        slots = owner._state_entries[name]
        if isinstance(slots, int):
            return owner._state[slots]
        return [owner._state[i] for i in slots]

    def __setitem__(self, name: str, value: Any) -> None:
        owner = self.owner
        slots = owner._state_entries[name]
        for i, x in zip([slots] if isinstance(slots, int) else slots, [value] if isinstance(slots, int) else value):
            owner._state[i] = float(x)
        library().host_changed(owner._instance)
