"""An exported archive read back before it replaces its target (``mechfmu.ssp.export.export_ssp``): what the
export wrote is what a run reads, or the export is refused naming the component, the parameter and why.

Read back:
- the SSD, through the scenario loader a run uses (``load_scenario``): every component's values as the source
  scenario's, each of its type, bit for bit (NaN equal to NaN);
- every FMU that carries values: ``resources/start_values.json`` by Python's ``json`` and its
  modelDescription's start attributes by their SSP types (``mechfmu.ssp.parameters.typed``), each equal to the
  value; then the FMU itself, loaded and instantiated on this machine (fmpy) where it has a binary for it, each
  value read back through the FMI calls: what its own reader of ``start_values.json`` makes of the file.
"""
from __future__ import annotations

import json
import math
import tempfile
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from typing import Any

from mechfmu.ssp.elements import ComponentSpec
from mechfmu.ssp.parameters import typed
from mechfmu.ssp.scenario import ScenarioError, load_scenario

#: the member every FMU of ours applies at instantiation
START_VALUES_MEMBER = "resources/start_values.json"


class ReadBackError(ValueError):
    """What an exported archive holds differs from what was exported (the archive is not written)."""


def same(a: Any, b: Any) -> bool:
    """``a`` and ``b`` are one value of one type (NaN is NaN)."""
    if type(a) is not type(b):
        return False
    return a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:60]}... ({len(text)} characters)"


def _differences(where: str, expected: dict[str, Any], found: dict[str, Any]) -> list[str]:
    return [f"{where}: {name} = {_shown(value)} reads back as "
            f"{_shown(found[name]) if name in found else 'nothing'}"
            for name, value in expected.items() if name not in found or not same(value, found[name])]


def check_bindings(archive: Path, components: dict[str, ComponentSpec]) -> list[str]:
    """The archive's SSD read as a run reads it: every component's values equal to ``components``'."""
    try:
        loaded = load_scenario(archive)
    except ScenarioError as exc:
        return [f"the archive's SSD cannot be read back: {exc}"]
    problems = [f"component {name!r} is not in the archive's SSD" for name in components if name not in
                loaded.components]
    for name, spec in components.items():
        if name in loaded.components:
            problems += _differences(f"{name} (SystemStructure.ssd)", spec.parameters,
                                     loaded.components[name].parameters)
    return problems


def check_fmu(fmu: Path, instance: str, values: dict[str, Any], load: bool = True) -> list[str]:
    """An FMU that carries ``values``: its start_values.json, its start attributes and (``load``, where it has a
    binary for this machine) the values the instantiated FMU reports."""
    where = f"{instance} ({fmu.name})"
    with zipfile.ZipFile(fmu) as zf:
        try:
            stored = json.loads(zf.read(START_VALUES_MEMBER).decode("utf-8"))
        except (KeyError, UnicodeDecodeError, ValueError) as exc:
            return [f"{where}: {START_VALUES_MEMBER} cannot be read back ({exc})"]
        root = ET.fromstring(zf.read("modelDescription.xml"))
    if not isinstance(stored, dict):
        return [f"{where}: {START_VALUES_MEMBER} is not a JSON object"]
    problems = _differences(f"{where} {START_VALUES_MEMBER}", values, stored)
    starts: dict[str, Any] = {}
    for name, kind, start in declared_starts(root):
        if name in values and start is not None:
            try:
                starts[name] = typed(kind, start)
            except ValueError:
                continue  # reported below as a difference
    problems += _differences(f"{where} modelDescription.xml start", values, starts)
    if load and not problems:
        problems += _instantiated(fmu, where, values)
    return problems


#: an FMI 3.0 variable element's type as SSP 1.0 names it
FMI3_KINDS = {"Float64": "Real", "Int32": "Integer", "Boolean": "Boolean", "String": "String"}


def start_holders(root: ET.Element) -> list[tuple[str, str, ET.Element]]:
    """Every variable of a model description (FMI 2.0 or 3.0) as (name, SSP type, the element whose ``start``
    attribute holds its start: FMI 2.0's typed child, FMI 3.0's variable or, for a String, its ``<Start>``)."""
    if root.get("fmiVersion", "").startswith("3"):
        found = []
        for variable in root.find("ModelVariables") or []:
            if variable.tag in FMI3_KINDS:
                start = variable.find("Start") if variable.tag == "String" else None
                if variable.tag == "String" and start is None:
                    start = ET.SubElement(variable, "Start")
                found.append((variable.get("name", ""), FMI3_KINDS[variable.tag],
                              start if start is not None else variable))
        return found
    return [(v.get("name", ""), declared.tag, declared) for v in root.iter("ScalarVariable")
            if (declared := next(iter(v), None)) is not None]


def declared_starts(root: ET.Element) -> list[tuple[str, str, str | None]]:
    """Every variable's (name, SSP type, start text or None) of a model description, FMI 2.0 or 3.0."""
    return [(name, kind, holder.get("value" if holder.tag == "Start" else "start"))
            for name, kind, holder in start_holders(root)]


def _instantiated(fmu: Path, where: str, values: dict[str, Any]) -> list[str]:
    """The values the FMU reports after instantiation ([] if it has no binary for this machine)."""
    from fmpy import platform
    from fmpy.fmi2 import FMU2Slave
    from fmpy.fmi3 import FMU3Slave

    from mechfmu.fmu.fmi3_arrays import read_layout

    description, layout = read_layout(str(fmu))
    if description.coSimulation is None:
        return []
    identifier = description.coSimulation.modelIdentifier
    three = description.fmiVersion.startswith("3")
    folder = {"linux64": "x86_64-linux", "win64": "x86_64-windows", "darwin64": "x86_64-darwin"}.get(
        platform, platform) if three else platform
    with zipfile.ZipFile(fmu) as zf, tempfile.TemporaryDirectory(prefix="mechfmu_readback_") as work:
        names = zf.namelist()
        if not any(n.startswith(f"binaries/{folder}/{identifier}.") for n in names):
            return []
        # what instantiation reads: the model description, the resources and this machine's binary
        members = [n for n in names if n == "modelDescription.xml" or n.startswith(("resources/",
                                                                                   f"binaries/{folder}/"))]
        directory = extract_members(zf, members, Path(work))
        kind = FMU3Slave if three else FMU2Slave
        problems = _read_values(kind(guid=description.guid, unzipDirectory=directory, modelIdentifier=identifier,
                                     instanceName=where.split(" ")[0]),
                                where, values, {v.name: v for v in description.modelVariables}, layout)
    return problems


def extract_members(zf: zipfile.ZipFile, members: list[str], work: Path) -> str:
    """``members`` of the FMU ``zf`` unpacked into ``work`` (``zipfile`` keeps each inside it); the folder."""
    for member in members:
        zf.extract(member, work)
    return str(work)


def _read_values(slave: Any, where: str, values: dict[str, Any], variables: dict[str, Any],
                 layout: dict[str, tuple[int, int]] | None = None) -> list[str]:
    """The differences of ``values`` from what the instantiated ``slave`` reports (``layout``: an FMI 3.0 array
    element's index and length by name, read with its array)."""
    messages: list[str] = []
    three = not hasattr(slave, "getReal")
    try:
        if three:
            slave.instantiate(logMessage=lambda env, status, category, message: messages.append(message.decode()))
        else:
            slave.instantiate(callbacks=_callbacks(messages))
    except Exception as exc:  # noqa: BLE001 - whatever stops the FMU is the refusal's reason
        return [f"{where}: the FMU does not instantiate with the values it carries ({exc}; it says: "
                f"{' '.join(messages) or 'nothing'})"]
    try:
        found = {}
        getters = ({"Float64": slave.getFloat64, "Int32": slave.getInt32, "Boolean": slave.getBoolean,
                    "String": slave.getString} if three else
                   {"Real": slave.getReal, "Integer": slave.getInteger, "Boolean": slave.getBoolean,
                    "String": slave.getString})
        for name in values:
            variable = variables.get(name)
            if variable is not None and variable.type in getters:
                index, length = (layout or {}).get(name, (0, 1))
                got = (getters[variable.type]([variable.valueReference], length)[index] if length > 1
                       else getters[variable.type]([variable.valueReference])[0])
                found[name] = (got.decode("utf-8", "replace") if isinstance(got, bytes) else
                               bool(got) if variable.type == "Boolean" else got)
    except Exception as exc:  # noqa: BLE001 - a refused get is the refusal's reason
        return [f"{where}: the instantiated FMU does not give its values back ({exc}; it says: "
                f"{' '.join(messages) or 'nothing'})"]
    finally:
        slave.freeInstance()
    said = f" (the FMU says: {' '.join(messages)})" if messages else ""
    return [f"{problem}{said}" for problem in _differences(f"{where} as instantiated", values, found)]


def _callbacks(messages: list[str]) -> Any:
    """fmpy's FMI 2.0 callbacks with a logger that keeps each message in ``messages`` (nothing printed)."""
    from fmpy import calloc, free
    from fmpy.fmi2 import (
        fmi2CallbackAllocateMemoryTYPE,
        fmi2CallbackFreeMemoryTYPE,
        fmi2CallbackFunctions,
        fmi2CallbackLoggerTYPE,
    )

    def logger(environment: Any, instance: bytes, status: int, category: bytes, message: bytes) -> None:
        messages.append(message.decode("utf-8", "replace") if message else "")

    callbacks = fmi2CallbackFunctions()
    callbacks.logger = fmi2CallbackLoggerTYPE(logger)
    callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
    callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
    # not fmpy.logging.addLoggerProxy: it keeps the last logger it is given in one global of the process, which
    # every FMU instantiated with fmpy's default callbacks then calls, after these callbacks are gone (a crash);
    # our FMUs log each message whole (its format holds no conversion), as FmuSlave reads them
    return callbacks
