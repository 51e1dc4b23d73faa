"""Our components by their Modelica Standard Library names, for ``mechfmu info NAME``.

Each component declares the MSL 4 classes it stands for (``Component.modelica``, components/modelica.py). NAME
may be the path of an FMU, one of our model names (its FMU in the FMU folder), or an MSL class's name: its full
name (``Modelica.Mechanics.Translational.Components.Spring``), an alias (``Modelica.Mechanics.Translational.Stop``)
or its short name (``Spring``, ``Stop``) where no model of ours and no other MSL class has it, or its name from any
package down (``Translational.Sources.Position``) where one class ends so. Letter case does not matter where the name
is otherwise unambiguous. An unknown NAME is an error that lists every name known.

A component that is an MSL class itself (the sources, signals and CombiTimeTable: its ``source`` names the class, its
parameters and ports are the class's) answers to that name too (``sourced``), with no mapping to show.
"""
from __future__ import annotations

import re
import textwrap
from pathlib import Path

from mechfmu.components import COMPONENTS
from mechfmu.components.modelica import ModelicaEquivalent

#: an equivalent's note in ``mechfmu info``: wrapped to this width, indented
NOTE_WIDTH = 110


#: a component's ``source`` naming the MSL class it is: the class and what the source says besides
SOURCE = re.compile(r"Modelica Standard Library [0-9.]+, (Modelica(?:\.\w+)+)\s*(?:\((.*)\))?$")


def sourced(model: str) -> list[ModelicaEquivalent]:
    """The MSL classes ``model`` stands for: those it declares (``modelica``), else the one its ``source`` names
    (a source or signal: MSL's class itself, the same parameter names, so no mapping)."""
    cls = COMPONENTS[model]
    if cls.modelica:
        return list(cls.modelica)
    found = SOURCE.match(getattr(cls, "source", "") or "")
    return [ModelicaEquivalent(found.group(1), note=found.group(2) or "")] if found else []


def modelica_names() -> dict[str, tuple[str, ModelicaEquivalent]]:
    """Every MSL name we answer to -> (our model, the equivalent): full names and aliases always, short names
    where they name one MSL class and none of our models but its equivalent (``ElastoGap``)."""
    full: dict[str, tuple[str, ModelicaEquivalent]] = {}
    for model in COMPONENTS:  # a class two models stand for: the one of its own name (the exact one) wins
        for equivalent in sourced(model):
            for name in (equivalent.name, *equivalent.aliases):
                if name not in full or model == equivalent.short_name:
                    full[name] = (model, equivalent)
    short: dict[str, set[tuple[str, ModelicaEquivalent]]] = {}
    for name, found in full.items():
        short.setdefault(name.rsplit(".", 1)[-1], set()).add(found)
    unique = {name: next(iter(found)) for name, found in short.items() if len(found) == 1}
    return {**full, **{name: found for name, found in unique.items() if name not in COMPONENTS or name == found[0]}}


def ambiguous(name: str) -> list[tuple[str, str]]:
    """(full MSL name, our model) of every class the short ``name`` stands for (any letter case), where that is more
    than one (``SpringDamper``: Translational's and Rotational's); else []."""
    found = sorted({(equivalent.name, model) for model in COMPONENTS for equivalent in sourced(model)
                    if equivalent.name.rsplit(".", 1)[-1].lower() == name.lower()})
    return found if len(found) > 1 else []


def known_names() -> str:
    """What ``mechfmu info`` accepts, for the message of an unknown name."""
    short = {equivalent.name.rsplit(".", 1)[-1] for model in COMPONENTS for equivalent in sourced(model)}
    shared = {name for name in short if ambiguous(name)}
    msl = sorted({name for name in modelica_names() if "." not in name and name not in COMPONENTS} | shared)
    return (f"known names: {', '.join(COMPONENTS)} (mechfmu's models); {', '.join(msl)} (Modelica Standard "
            "Library names, also in full, e.g. Modelica.Mechanics.Translational.Components.Spring); or the path of "
            "an .fmu file")


def lookup(name: str) -> tuple[str, ModelicaEquivalent] | None:
    """(our model, the equivalent) an MSL name stands for; None if it is not one (exact, else case-insensitive)."""
    names = modelica_names()
    if name in names:
        return names[name]
    folded = [found for known, found in names.items() if known.lower() == name.lower()]
    if len(folded) == 1:
        return folded[0]
    tail = f".{name.lower()}"  # a name from a package down: Translational.Sources.Position
    ending = {known: found for known, found in names.items() if known.lower().endswith(tail)}
    return next(iter(ending.values())) if len(ending) == 1 else None


def locate(name: str, fmu_dir: Path) -> tuple[Path, list[str]]:
    """The FMU ``mechfmu info NAME`` shows and the lines it prints first (what an MSL name stands for).
    FileNotFoundError for a name that is none of them, listing the known names."""
    path, built = Path(name), Path(fmu_dir) / f"{name}.fmu"
    if path.is_file() or (not path.exists() and built.is_file()):
        return (path if path.is_file() else built), []
    if path.exists():
        raise FileNotFoundError(f"no FMU at {name}: not a file")
    if name in COMPONENTS:
        raise FileNotFoundError(f"no FMU at {name}: {built} is not built (mechfmu build)")
    found = lookup(name)
    if found is None and (several := ambiguous(name)):
        options = ", ".join(f"{full} (mechfmu's {model})" for full, model in several)
        example = ".".join(several[-1][0].split(".")[-3:])
        raise FileNotFoundError(f"no FMU at {name}: it names more than one MSL class: {options}; name one from its "
                                f"package down, e.g. {example}")
    if found is None:
        raise FileNotFoundError(f"no FMU at {name}; {known_names()}")
    model, equivalent = found
    called = equivalent.name if name == equivalent.name else f"{name} ({equivalent.name})"
    mapping = f" ({equivalent.mapping()})" if equivalent.mapping() else " (the same parameters and ports)"
    return locate(model, fmu_dir)[0], [f"{called} is mechfmu's {model}{mapping}"]


def equivalent_lines(model: str) -> list[str]:
    """``Modelica equivalent: ...`` for each MSL class our ``model`` stands for, each with its note indented."""
    lines: list[str] = []
    for equivalent in sourced(model) if model in COMPONENTS else ():
        lines.append(equivalent.line())
        if equivalent.note:
            lines += textwrap.wrap(equivalent.note, NOTE_WIDTH, initial_indent="    ", subsequent_indent="    ")
    return lines
