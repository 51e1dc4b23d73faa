"""The components placed in a ``System`` and their ports: ``PlacedComponent`` (a component under its instance
name; its ports are attributes), ``Port`` (a flange, a vector or group of variables, or one variable), and
``Components``, the system's list of what is placed, which also gives a placed component back by name."""
from __future__ import annotations

import functools
from typing import Any, SupportsIndex, overload

from mechfmu.ssp.library import MODELS, ComponentModel, unknown
from mechfmu.ssp.writer import FLANGE_VARIABLES


class Port:
    """A port of a placed component: a flange (``mass.flange_a``), a vector or group of variables
    (``ball.position``) or one variable (``mass.flange_a.s``); attributes are the ports inside it."""

    __slots__ = ("_component", "_path")

    def __init__(self, component: PlacedComponent, path: str) -> None:
        self._component = component
        self._path = path

    def __getattr__(self, name: str) -> Port:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._component._port(f"{self._path}.{name}")

    def __getitem__(self, name: str) -> Port:
        return self._component._port(f"{self._path}.{name}")

    def __str__(self) -> str:
        return f"{self._component.instance_name}.{self._path}"

    def __repr__(self) -> str:
        return f"<{self._kind()} {self}>"

    def _children(self) -> list[str]:
        return self._component._children(self._path)

    def _kind(self) -> str:
        if self._path in self._component._variables:
            return "variable"
        return "flange" if set(FLANGE_VARIABLES) & set(self._children()) else "port"


@functools.cache
def _declared_ports(model: str) -> tuple[dict[str, str], dict[str, list[str]]]:
    """A model's variables (name -> "input" or "output", in declaration order) and the names one level below
    each port path, in the order the variables declare them (``"flange_a"`` -> ``["s", "v", "f"]``); found
    once per model, read only."""
    implementation = MODELS[model].implementation
    variables = {**{i.name: "input" for i in implementation.inputs},
                 **{o.name: "output" for o in implementation.outputs}}
    ports: dict[str, list[str]] = {}
    for variable in variables:
        parts = variable.split(".")
        for depth, part in enumerate(parts):
            below = ports.setdefault(".".join(parts[:depth]), [])
            if part not in below:
                below.append(part)
    return variables, ports


class PlacedComponent:
    """A component placed in a system under its instance name; its ports are attributes
    (``mass.flange_a``), or items for names that are not identifiers (``mass["flange_a[2]"]``)."""

    def __init__(self, system: Any, instance_name: str, component: ComponentModel) -> None:
        self.system = system
        self.instance_name = instance_name
        self.component = component
        #: variable -> "input" or "output", in declaration order; the ports below each path ("" the top)
        self._variables, self._ports = _declared_ports(component.model)

    def __getattr__(self, name: str) -> Port:
        if name.startswith("_"):
            raise AttributeError(name)
        return self._port(name)

    def __getitem__(self, name: str) -> Port:
        return self._port(name)

    def __repr__(self) -> str:
        return f"<{self.instance_name}: {self.component!r}>"

    def _children(self, path: str) -> list[str]:
        return list(self._ports.get(path, ()))

    def _port(self, path: str) -> Port:
        if path not in self._variables and not self._children(path):
            parent, _, name = path.rpartition(".")
            owner = f"{self.instance_name}.{parent}" if parent else f"{self.instance_name} ({self.component.model})"
            raise AttributeError(unknown("port", name, owner, self._children(parent)))
        return Port(self, path)


class Components(list[tuple[str, str, dict[str, Any]]]):
    """(instance name, model, parameter values) of every placed component, in the order placed, as
    ``write_scenario`` takes them; indexed by an instance name it gives the placed component back
    (``s.components["wheel"]``, ``KeyError`` naming the placed ones), and ``"wheel" in s.components`` asks for one."""

    def __init__(self, placed: dict[str, PlacedComponent]) -> None:
        super().__init__((p.instance_name, p.component.model, dict(p.component.parameters)) for p in placed.values())
        self._placed = placed

    @overload  # type: ignore[override]
    def __getitem__(self, key: str) -> PlacedComponent: ...
    @overload
    def __getitem__(self, key: SupportsIndex) -> tuple[str, str, dict[str, Any]]: ...
    @overload
    def __getitem__(self, key: slice) -> list[tuple[str, str, dict[str, Any]]]: ...

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            if key not in self._placed:
                raise KeyError(unknown("component", key, "the system", list(self._placed)))
            return self._placed[key]
        return super().__getitem__(key)

    def __contains__(self, item: object) -> bool:
        return item in self._placed if isinstance(item, str) else super().__contains__(item)

