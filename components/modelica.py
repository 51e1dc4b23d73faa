"""The Modelica Standard Library (MSL 4) classes a component stands for, as a component declares them
(``Component.modelica``): shown in its FMU's documentation, the component reference and ``mechfmu info``.

``parameters`` pairs each MSL parameter with ours, ``(msl, ours)``, read "msl = ours": set our parameter ``ours``
to the value of ``msl`` (an MSL parameter, or an expression in them such as ``"smax - L"``; ``Mass.m`` is a
parameter of another FMU the equivalent needs); ``settings`` are values of ours that MSL's class has no parameter
for (``("damping", "0")``); ``note`` says what else to do or what differs; ``aliases`` are other names of the
class (an older MSL's).
"""
from __future__ import annotations

from dataclasses import dataclass

#: the first words of a ``ModelicaEquivalent.line``
PREFIX = "Modelica equivalent: "


@dataclass(frozen=True)
class ModelicaEquivalent:
    """An MSL class (its full name) and how our component's parameters map to it."""
    name: str
    parameters: tuple[tuple[str, str], ...] = ()
    settings: tuple[tuple[str, str], ...] = ()
    note: str = ""
    aliases: tuple[str, ...] = ()

    @property
    def short_name(self) -> str:
        """The class name without its package (``Spring``)."""
        return self.name.rsplit(".", 1)[-1]

    def mapping(self) -> str:
        """``c = stiffness, s_rel0 = offset; set damping = 0``: MSL's parameters as ours, then our settings."""
        text = ", ".join(f"{msl} = {ours}" for msl, ours in self.parameters)
        settings = ", ".join(f"{ours} = {value}" for ours, value in self.settings)
        return f"{text}; set {settings}" if settings else text

    def line(self) -> str:
        """``Modelica equivalent: NAME (MAPPING)``, one line (the name alone for a class without a mapping)."""
        mapping = self.mapping()
        return f"{PREFIX}{self.name} ({mapping})" if mapping else f"{PREFIX}{self.name}"
