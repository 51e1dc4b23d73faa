"""mechfmu components: the component classes packaged as FMI 2.0 FMUs.

A shipped class declares its parameters, ports and states; its law is C (``native/``), its one implementation,
which a component object runs through the host library (``native_component.py``). Standard library only: this
package is copied into every Python-embedding FMU and runs in whatever Python loads it.
Import name: ``mechfmu.components`` (the folder ``components/`` through the package-dir mapping in
pyproject.toml); inside an FMU it is vendored as ``mechfmu_components_<hash>`` (``mechfmu.fmu.build``).

``COMPONENTS`` is found, not listed: every concrete ``Component`` subclass defined in a module of this
package (except ``fmi``, the pythonfmu glue that only FMU entry scripts import) is a component, built
into an FMU of the class's name, found when ``COMPONENTS`` or a class is first asked for. Adding one = adding its
module.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil

from .base import Component
from .base import ComponentError as ComponentError

#: modules that are not component modules (pythonfmu glue; imported by the FMU entry scripts only)
NOT_COMPONENT_MODULES = frozenset({"fmi", "fmi_model_exchange", "fmi_state", "native_component", "native_library"})


def discover(package: str, path: list[str]) -> dict[str, type[Component]]:
    """Every concrete Component subclass defined in the modules of ``package`` (at ``path``), by name."""
    found: dict[str, type[Component]] = {}
    for info in sorted(pkgutil.iter_modules(path), key=lambda m: m.name):
        if info.name in NOT_COMPONENT_MODULES or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        for name, obj in vars(module).items():
            if (inspect.isclass(obj) and issubclass(obj, Component) and obj is not Component
                    and not inspect.isabstract(obj) and obj.__module__ == module.__name__ and name == obj.__name__):
                found[name] = obj
    return dict(sorted(found.items()))


def __getattr__(name: str) -> object:
    """``COMPONENTS`` (every component that is built into an FMU, by model name), each component class by its name
    and ``__all__``, discovered at the first access: importing a module of the package alone (``base``,
    ``number_text``) imports no component."""
    if name == "COMPONENTS" or name == "__all__" or name[:1].isupper():
        found = discover(__name__, __path__)
        globals().update(found, COMPONENTS=found, __all__=["COMPONENTS", "Component", "ComponentError", "discover",
                                                           *found])
        if name in globals():
            return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
