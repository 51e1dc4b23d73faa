"""What ``ComponentFmu`` (``fmi``) relies on of pythonfmu, stated for the type checker.

``ComponentFmu`` is a mixin: every slave class is ``class Model(ComponentFmu, Fmi2Slave)`` (the entry
script ``mechfmu.fmu.build`` writes), so the attributes and methods of ``Fmi2SlaveApi`` come from the class
after it in the MRO; pythonfmu has no type information, and the mixin alone does not show it. At run
time ``Fmi2SlaveApi`` is ``object``: the mixin's MRO, and so its behaviour, is that of a class without a
base.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol
from xml.etree.ElementTree import Element

if TYPE_CHECKING:
    from pythonfmu.enums import Fmi2Status

    class Fmi2SlaveApi(Protocol):
        instance_name: str
        resources: str | None
        vars: dict[int, Any]  # value reference -> pythonfmu ScalarVariable

        def log(self, msg: str, status: Fmi2Status = ..., category: str | None = None, debug: Any = None) -> None: ...
        def register_variable(self, var: Any, nested: bool = True) -> None: ...
        def to_xml(self, model_options: dict[str, str] = ...) -> Element: ...
else:
    Fmi2SlaveApi = object


def child(node: Element, tag: str) -> Element:
    """The ``tag`` child of ``node`` in the modelDescription pythonfmu's ``to_xml`` writes, which always
    has it (CoSimulation, ModelVariables, ModelStructure, a Real variable's Real)."""
    found = node.find(tag)
    assert found is not None, f"pythonfmu's modelDescription has no {tag} in {node.tag}"
    return found
