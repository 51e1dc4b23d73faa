"""What a component declares: its variables from our in-process class (``declared_variables``, the same
attributes as a modelDescription's) and a variable's unit."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


def variable_unit(variable) -> str | None:
    """A variable's unit; None for one without (a signal, Modelica's plain Real: it connects to any unit)."""
    return variable.unit or (variable.declaredType.unit if variable.declaredType else None) or None


@dataclass(frozen=True)
class DeclaredVariable:
    """A component's declared variable with the attributes the checks read from a modelDescription."""
    name: str
    causality: str
    type: str
    unit: str | None
    min: float | None = None
    max: float | None = None
    declaredType: None = None
    start: float | None = None  # an input's start value (kept while nothing drives it)


def component_class(fmu: Path):
    """The in-process component class an SSD source names (``../../fmus/Mass.fmu`` -> Mass); the
    file itself is not read. ValueError if it is not one of ours."""
    from mechfmu.components import COMPONENTS
    model = Path(fmu).stem
    if model not in COMPONENTS:
        raise ValueError(f"{Path(fmu).name}: {model} is not a mechfmu component; run it as an FMU")
    return COMPONENTS[model]


def declared_variables(cls) -> dict[str, DeclaredVariable]:
    variables = [DeclaredVariable(p.name, "parameter", p.type, p.unit or None if p.type == "Real" else None, p.min,
                                  p.max) for p in cls.parameters]
    variables += [DeclaredVariable(i.name, "input", "Real", i.unit or None, start=i.start) for i in cls.inputs]
    variables += [DeclaredVariable(o.name, "output", "Real", o.unit or None) for o in cls.outputs]
    return {v.name: v for v in variables}
