"""The FMI 3.0 FMUs' array variables: a position, velocity, quaternion, force or torque as one variable.

The rule (``vector_lengths``; ``components/native/fmi3_functions.c`` applies the same one to the runtime's variables):
in value-reference order, a run of Real variables of one causality named ``<stem>.w``, ``<stem>.x``, ``<stem>.y``,
``<stem>.z`` (a quaternion) or ``<stem>.x``, ``<stem>.y``, ``<stem>.z`` is one array variable ``<stem>`` of 4 or 3
elements, its value reference the first element's. The model description declares it with a ``<Dimension>`` and
names its elements in an annotation (``ELEMENTS``: ``x y z``), so that an importer that speaks of scalars (an SSP
connection ``ball.position.x``, our master) finds them: ``read_description`` reads an FMI 3.0 FMU's description with
every array as its elements, each named ``<stem>.<element>`` (``<stem>[k]``, 1-based, for an FMU without the
annotation), its value reference the array's; ``read_layout`` also gives each element's (index, length).
"""
from __future__ import annotations

import copy
import functools
import os
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from typing import Any

#: the element names of an array variable, in order: a quaternion's and a 3-vector's
SUFFIXES = (("w", "x", "y", "z"), ("x", "y", "z"))
#: the annotation type naming an array's elements (its text: the names, space-separated)
ELEMENTS = "org.mechfmu.elements"


def _length_at(at: int, variables: dict[int, tuple[str, bool, str]]) -> int:
    if at not in variables:
        return 1
    name, real, causality = variables[at]
    dot = name.rfind(".")
    if not real or dot < 0:
        return 1
    stem = name[:dot + 1]
    for suffixes in SUFFIXES:
        if all(at + k in variables and variables[at + k][1] and variables[at + k][2] == causality
               and variables[at + k][0] == stem + suffix for k, suffix in enumerate(suffixes)):
            return len(suffixes)
    return 1


def vector_lengths(variables: list[tuple[str, int, bool, str]]) -> dict[int, int]:
    """The arrays among ``variables`` (name, value reference, whether Real, causality): {first value reference:
    element count}, by the module's rule."""
    by_reference = {reference: (name, real, causality) for name, reference, real, causality in variables}
    found: dict[int, int] = {}
    at, end = 0, max(by_reference, default=-1) + 1
    while at < end:
        length = _length_at(at, by_reference)
        if length > 1:
            found[at] = length
        at += length
    return found


def element_names(root: ET.Element) -> dict[str, list[str]]:
    """Per array variable of an FMI 3.0 model description (``root``) the names of its elements, from ``ELEMENTS``."""
    found = {}
    for variable in root.find("ModelVariables") or []:
        for annotation in variable.iter("Annotation"):
            if annotation.get("type") == ELEMENTS and annotation.text:
                found[variable.attrib["name"]] = annotation.text.split()
    return found


def as_elements(description: Any, root: ET.Element) -> tuple[Any, dict[str, tuple[int, int]]]:
    """``description`` (fmpy's, of the FMI 3.0 model description ``root``) with every array variable replaced by its
    elements (module docstring), and per element name its (index, length)."""
    layout: dict[str, tuple[int, int]] = {}
    if not any(v.dimensions for v in description.modelVariables):
        return description, layout
    names = element_names(root)
    expanded: list[Any] = []
    elements: dict[int, list[Any]] = {}  # per array variable (by id) its elements
    for variable in description.modelVariables:
        if not variable.dimensions:
            expanded.append(variable)
            continue
        length = 1
        for dimension in variable.dimensions:
            if dimension.start is None:
                raise ValueError(f"{variable.name}: an array whose size another variable holds has no fixed elements")
            length *= int(dimension.start)
        suffixes = names.get(variable.name) or [f"[{k + 1}]" for k in range(length)]
        starts = str(variable.start).split() if variable.start is not None else [None] * length
        for k, suffix in enumerate(suffixes):
            element = copy.copy(variable)
            element.name = f"{variable.name}.{suffix}" if not suffix.startswith("[") else variable.name + suffix
            element.start = starts[k] if len(starts) == length else variable.start
            element.dimensions = []
            layout[element.name] = (k, length)
            expanded.append(element)
            elements.setdefault(id(variable), []).append(element)
    description.modelVariables = expanded
    for section in ("outputs", "derivatives", "initialUnknowns"):
        unknowns = []
        for unknown in getattr(description, section):
            dependencies = None if unknown.dependencies is None else [
                e for d in unknown.dependencies for e in elements.get(id(d), [d])]
            for variable in elements.get(id(unknown.variable), [unknown.variable]):
                copied = copy.copy(unknown)
                copied.variable, copied.dependencies = variable, dependencies
                unknowns.append(copied)
        setattr(description, section, unknowns)
    return description, layout


def read_description(fmu: str | Path) -> Any:
    """fmpy's model description of ``fmu``, an FMI 3.0 FMU's with its array variables as their elements."""
    return read_layout(fmu)[0]


def read_layout(fmu: str | Path) -> tuple[Any, dict[str, tuple[int, int]]]:
    """``read_description``'s description and per array element (by name) its (index, length) in its array, read
    once per process for each state (inode, size, modification time) of the file (of a folder's
    modelDescription.xml): the scenario's check and the FMU's instances share one reading, which they must not
    change."""
    path = Path(fmu)
    try:
        found = os.stat(path / "modelDescription.xml" if path.is_dir() else path)
    except OSError:  # fmpy says what is wrong, as without the reading kept
        return _read_layout.__wrapped__(str(fmu), (0, 0, 0))
    return _read_layout(str(fmu), (found.st_ino, found.st_size, found.st_mtime_ns))


@functools.lru_cache(maxsize=64)
def _read_layout(fmu: str, stamp: tuple[int, int, int]) -> tuple[Any, dict[str, tuple[int, int]]]:
    from fmpy import read_model_description
    description = read_model_description(fmu)
    if not description.fmiVersion.startswith("3") or not any(v.dimensions for v in description.modelVariables):
        return description, {}
    path = Path(fmu)
    if path.is_dir():
        text = (path / "modelDescription.xml").read_bytes()
    else:
        with zipfile.ZipFile(path) as archive:
            text = archive.read("modelDescription.xml")
    return as_elements(description, ET.fromstring(text))
