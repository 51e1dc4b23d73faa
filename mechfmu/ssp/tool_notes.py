"""What other tools make of an exported archive, said at export (``mechfmu.ssp.export.export_summary``).

- Names: OMSimulator 2.1.3 refuses a model, system or component name that is not an identifier (an ASCII
  letter, then ASCII letters, digits and ``_``): ``"quarter-truck" is not a valid ident``, exit 1, no result.
  libcosim 0.11 and fmpy 0.3 run such names (measured: ``quarter-truck``, ``osc.dot``, ``osc space``, ``_osc``,
  ``mass-1``, ``2mass``, ``mass 1``, ``masse_é``). The export writes the model's (top system's) name as an
  identifier (``oms_identifier``: nothing else refers to it); a component or nested system is named in
  connections and results, so it keeps its name and the summary names it among what OMSimulator refuses.
- Coupling (``COUPLING``): each tool's master, and how far from the accurate answer it is where mechfmu can
  estimate it (``mechfmu.master.first_order``: our own run of the same first-order coupling).
- fmpy's first step (``fmpy_first_step``): fmpy's ``simulate_ssp`` starts every connector at 0 and passes
  values only after a step, so its first step holds every connected input at 0 whatever the outputs
  are at the start: a preloaded system (weight, a prestressed spring, a body away from 0) starts with a jolt.
  The connections whose output is not 0 at the start are named (found by evaluating our components at the
  start, in-process, to a fixed point over the connections). An input declared as ``ssd:Connector`` but
  connected to nothing stops fmpy 0.3's reader (``UnboundLocalError``), or, after a connected one, wires it to
  that one's output: the export declares only connected inputs (``unconnected_input_connectors``).
- Signal derivatives (``write_wires``): where a source's value input is wired and its derivative is not, every
  mechfmu master wires the signal's derivative to it (``Scenario.derived``); another tool would hold it at its
  start value (a road's speed 0), so the export writes those wires as connections of the archive.
"""
from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mechfmu.ssp.elements import Connection
from mechfmu.ssp.parameters import NS
from mechfmu.ssp.scenario import Scenario, component_class


class ExportWarning(UserWarning):
    """A named tool will run an exported archive differently from mechfmu (a first-order coupling and its
    estimated error, a transformation it ignores, a name it refuses, fmpy's first step): ``System.export_ssp``
    warns with it (``warnings.simplefilter("ignore", ExportWarning)`` to keep quiet)."""


@dataclass(frozen=True)
class Exported(os.PathLike):
    """What an export wrote and what other tools make of it: ``path`` the archive (an ``os.PathLike``, so
    ``zipfile.ZipFile(exported)`` and ``simulate(exported)`` take it as the path), ``summary`` which tools run
    it, ``notes`` one line each (``differing`` those where a tool gives another answer than mechfmu);
    ``str()`` is what ``mechfmu export-ssp`` prints."""

    path: Path
    summary: str
    notes: tuple[str, ...] = ()
    differing: tuple[str, ...] = ()

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __str__(self) -> str:
        return "\n  ".join((self.summary, *self.notes))


#: what OMSimulator 2.1.3 accepts as a name (its ``is not a valid ident``)
OMS_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
#: each tool's coupling of an archive written without ``strongly_coupled``, and the mechfmu master it equals
COUPLING = {
    "OMSimulator": ("weakly coupled: its fixed-step master exchanges once a step (first order)",
                    "jacobi, exchange=ordered"),
    "libcosim": ("fixed-step Jacobi, one exchange a step (first order)", "jacobi, exchange=strict"),
    "ecos": ("fixed-step Jacobi, one exchange a step (first order)", "jacobi, exchange=strict"),
    "fmpy's simulate_ssp": ("fixed-step Jacobi, one exchange a step (first order), its first step with every "
                            "connected input at 0", "jacobi, exchange=strict"),
}


def oms_identifier(name: str, fallback: str = "system") -> str:
    """``name`` as a name OMSimulator accepts: every character but ASCII letters, digits and ``_`` made ``_``, a
    leading non-letter dropped (``quarter-truck`` -> ``quarter_truck``, ``2mass`` -> ``mass``)."""
    ident = re.sub(r"^[^A-Za-z]+", "", re.sub(r"[^A-Za-z0-9_]", "_", name))
    return ident or fallback


def oms_refused_names(root: ET.Element) -> list[str]:
    """The component and nested system names of the SSD ``root`` that OMSimulator refuses, with their kind
    (``component 'mass-1'``); the model's own name is not among them (``oms_identifier`` writes it)."""
    refused = []
    system = root.find("ssd:System", NS)
    for element in system.iter() if system is not None else ():
        kind = element.tag.rsplit("}", 1)[-1]
        if element is not system and kind in ("Component", "System") and not OMS_IDENT.match(element.get("name", "")):
            refused.append(f"{'component' if kind == 'Component' else 'system'} {element.get('name', '')!r}")
    return refused


def initial_inputs(scenario: Scenario, passes: int = 50) -> dict[tuple[str, str], float]:
    """The value each connected Real input of the scenario holds at the start: the connected output of our
    components evaluated in-process with their parameters, at the start time, to a fixed point over the
    connections (at most ``passes`` rounds). A connection from a component that cannot be evaluated here (not
    one of ours, a table file not found) is left out."""
    components: dict[str, Any] = {}
    for name, spec in scenario.components.items():
        try:
            component = component_class(spec.fmu)(name)
            for variable, value in spec.parameters.items():
                component.set(variable, value)
            component.initialize(scenario.start_time)
            components[name] = component
        except Exception:  # noqa: BLE001 - a component that cannot be evaluated here is left out, not an error
            continue
    values: dict[tuple[str, str], float] = {}
    for _ in range(passes):
        changed = False
        for con in scenario.connections:
            source, target = components.get(con.source), components.get(con.target)
            if source is None:
                continue
            try:
                value = con.factor * float(source.get(con.source_variable)) + con.offset
                if target is not None:
                    target.set(con.target_variable, value)
            except Exception:  # noqa: BLE001 - as above
                continue
            changed |= values.get((con.target, con.target_variable)) != value
            values[(con.target, con.target_variable)] = value
        if not changed:
            break
    return values


def fmpy_first_step(scenario: Scenario, shown: int = 3) -> str:
    """What fmpy's runner gets wrong in ``scenario`` at its start ("" if nothing: every connected input starts at
    0)."""
    nonzero = [(key, value) for key, value in initial_inputs(scenario).items() if value != 0.0]
    notes = []
    if nonzero:
        named = ", ".join(f"{c}.{v} = {value:.6g}" for (c, v), value in nonzero[:shown])
        more = f" and {len(nonzero) - shown} more" if len(nonzero) > shown else ""
        notes.append(f"fmpy's simulate_ssp holds every connected input at 0 over its first step (its connectors "
                     f"start at 0), where this system starts with {named}{more}: its run starts with a jolt of one "
                     "step without them; the other tools start from the values")
    return "\n  ".join(notes)


def unconnected_input_connectors(element: ET.Element, name: str, scenario: Scenario) -> list[ET.Element]:
    """The ``ssd:Connector`` declarations of inputs of the component ``element`` (``name`` in ``scenario``) that no
    connection feeds."""
    fed = {c.target_variable for c in scenario.connections + scenario.derived if c.target == name}
    return [c for c in element.iterfind("ssd:Connectors/ssd:Connector", NS)
            if c.get("kind") == "input" and c.get("name") not in fed]


def write_wires(system: ET.Element, wires: list[Connection]) -> None:
    """Every wire of ``wires`` (``Scenario.derived``: a signal's derivative to a source's derivative input) written
    into the top ``system`` of an SSD being exported as an ``ssd:Connection`` (its factor as an
    ``ssc:LinearTransformation``), with the end connectors declared where they are not, so that another tool runs
    the physics every mechfmu master runs. Raises ValueError naming a wire whose ends are not both components of the
    top system (a nested system's component: its connection would need connectors on the systems between)."""
    ssd, ssc = f"{{{NS['ssd']}}}", f"{{{NS['ssc']}}}"
    elements = {e.get("name"): e for e in system.iterfind("ssd:Elements/ssd:Component", NS)}
    connections = system.find("ssd:Connections", NS)
    if connections is None and wires:
        connections = ET.SubElement(system, f"{ssd}Connections")
    for wire in wires:
        ends = ((wire.source, wire.source_variable, "output"), (wire.target, wire.target_variable, "input"))
        if any(name not in elements for name, _, _ in ends):
            raise ValueError(f"cannot write the wire {wire.source}.{wire.source_variable} -> "
                             f"{wire.target}.{wire.target_variable} into the archive: its ends are not both "
                             "components of the top system; connect the derivative in the scenario")
        for name, variable, kind in ends:
            declared = elements[name].find("ssd:Connectors", NS)
            if declared is None:
                declared = ET.SubElement(elements[name], f"{ssd}Connectors")
            if declared.find(f"ssd:Connector[@name='{variable}']", NS) is None:
                ET.SubElement(ET.SubElement(declared, f"{ssd}Connector", name=variable, kind=kind), f"{ssc}Real")
        assert connections is not None
        connection = ET.SubElement(connections, f"{ssd}Connection", startElement=wire.source,
                                   startConnector=wire.source_variable, endElement=wire.target,
                                   endConnector=wire.target_variable)
        if wire.factor != 1.0:
            ET.SubElement(connection, f"{ssc}LinearTransformation", factor=repr(wire.factor), offset="0.0")


#: the tools that run an archive with FMI 3.0 FMUs (checked: OMSimulator 2.1.3 refuses the FMU's version, libcosim
#: crashes loading it, fmpy's simulate_ssp instantiates every FMU as FMI 2.0)
FMI3_TOOLS = ("mechfmu", "ecos")


def kept_fmi2_lines(loaded: Scenario, fmi3: list[str]) -> list[str]:
    """Beside the FMI 3.0 FMUs ``fmi3`` of an archive, the note on those of ours kept as FMI 2.0 FMUs: their FMI 3.0
    build has array variables (mechfmu.ssp.fmi_version.array_components), which an SSP 1.0 connection cannot name."""
    from mechfmu.fmu import fmi3 as fmi3_build
    from mechfmu.ssp.fmi_version import has_arrays
    kept = [name for name, spec in loaded.components.items() if name not in fmi3
            and (fmi3_build.fmu_dir() / Path(spec.fmu).name).is_file()
            and has_arrays(fmi3_build.fmu_dir() / Path(spec.fmu).name)]
    if not kept:
        return []
    return [f"{', '.join(kept)} {'keeps its' if len(kept) == 1 else 'keep their'} FMI 2.0 FMU: the FMI 3.0 build has "
            "array variables (a position, a quaternion, a force as one variable), and an SSP 1.0 connection names one "
            "scalar (ball.position.x); mechfmu's master runs the FMI 3.0 FMU (mechfmu run --fmi-version 3)"]


def fmi3_components(loaded: Scenario) -> list[str]:
    """The components of ``loaded`` whose FMU is an FMI 3.0 one."""
    found = []
    for name, spec in loaded.components.items():
        with zipfile.ZipFile(spec.fmu) as zf:
            if ET.fromstring(zf.read("modelDescription.xml")).get("fmiVersion", "").startswith("3"):
                found.append(name)
    return found
