"""SSP 1.0 scenario loading: ``SystemStructure.ssd`` -> ``Scenario``.

Read from the SSD: components (``source`` = FMU path relative to the SSD's folder, a URI reference), those of
nested systems named by their path (``body/mass``, ``mechfmu.ssp.systems``), parameter bindings of components
and of systems (applied to parameters, and to inputs as start values; ``mechfmu.ssp.system_bindings``),
connections, ``DefaultExperiment`` start/stop, the step size from
the ``osp:FixedStepAlgorithm baseStepSize`` annotation (so libcosim reads the same file) and our own options
from the ``org.mechfmu`` annotation (``<mechfmu:Master algorithm=".." exchange=".." rtol=".." atol=".."/>``, rtol
and atol the run's tolerance, ``mechfmu.master.accuracy``, and the adaptive step's); in a component
``<mechfmu:Free inputs=".."/>`` (``mechfmu.ssp.unconnected``), in the system ``<mechfmu:Sources fallback="built"/>``
and ``<mechfmu:FreeInputs><mechfmu:Free component=".." inputs=".."/></mechfmu:FreeInputs>`` (the components'
marks as an exported archive carries them: OMSimulator refuses annotations of a component). A wire from a friction
element's ``lambda_loop`` to its own ``lambda`` (``openmodelica.locked_force_loops``) is dropped: our masters solve it.

``load_scenario`` checks everything it can before any FMU is instantiated and reports all
problems at once in one ``ScenarioError``: unknown component or variable, missing FMU file,
causality or type mismatch on a connection, a connection end without its ``ssd:Connector``
declaration (SSP requires it; libcosim refuses the file), a declared connector the FMU does not
have, an input connected twice, a value outside a parameter's declared min/max, a free mark naming no
unconnected input. Likely mistakes go to ``Scenario.warnings``: physics inputs left unconnected, built FMUs
standing in for missing sources.
"""
from __future__ import annotations

import copy
import functools
import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mechfmu.components.ports import LAMBDA, LAMBDA_LOOP
from mechfmu.fmu.declarations import component_class, declared_variables, variable_unit
from mechfmu.ssp import archive as ssp_archive
from mechfmu.ssp.connection_maps import converted
from mechfmu.ssp.constructs import connector_problem, declared_type, system_problems, version_problem
from mechfmu.ssp.elements import ComponentSpec, Connection
from mechfmu.ssp.fmu_sources import fallback_allowed, missing_fmu, resolve_source, source_path, stand_in_note
from mechfmu.ssp.parameters import NS as SSP_NS
from mechfmu.ssp.parameters import binding_values, value_problem
from mechfmu.ssp.system_bindings import apply_system_bindings
from mechfmu.ssp.systems import flatten
from mechfmu.ssp.unconnected import mark_problems, signal_derivatives, unconnected_inputs
from mechfmu.ssp.units import parse_units
from mechfmu.ssp.xsd_numbers import read_double

NS = {
    **SSP_NS,  # ssd, ssc, ssv, ssm
    "osp": "http://opensimulationplatform.com/SSP/OSPAnnotations",
    "mechfmu": "https://mechfmu.org/SSP/MasterAnnotations",
}
SSD_NAME = "SystemStructure.ssd"
#: an FMI 3.0 variable's type as SSP 1.0 (and FMI 2.0) names it
FMI3_TYPES = {"Float64": "Real", "Int32": "Integer"}
#: the run of a scenario without an experiment [s]: an SSD without ``DefaultExperiment``/``baseStepSize``, a
#: ``System`` without ``experiment`` (and ``experiment``'s defaults), ``write_scenario`` without stop or step
STOP_TIME, STEP_SIZE = 1.0, 1e-3


class ScenarioError(ValueError):
    """Everything wrong with a scenario, one problem per line."""

    def __init__(self, source: Path | str, problems: list[str]):
        # an unpacked archive's folder is named as the archive the user gave (``mechfmu.ssp.archive.shown``)
        self.problems = [ssp_archive.shown(problem) for problem in problems]
        super().__init__(f"scenario {ssp_archive.shown(source)}: {len(problems)} problem(s)\n  - "
                         + "\n  - ".join(self.problems))


@dataclass
class Scenario:
    name: str
    folder: Path
    components: dict[str, ComponentSpec]
    connections: list[Connection]
    start_time: float = 0.0
    stop_time: float = STOP_TIME
    step_size: float = STEP_SIZE
    algorithm: str = "auto"  # without a mechfmu:Master (mechfmu.master.algorithms.auto)
    algorithm_options: dict[str, str] = field(default_factory=dict)
    #: a recorded output beyond this multiple of the run's scale is divergence (None: ``mechfmu.master.simulate``'s
    #: DIVERGENCE_FACTOR)
    divergence_factor: float | None = None
    #: the run's tolerance (rtol, atol), the Master's (None, or None for one not given: the default)
    tolerance: tuple[float | None, float | None] | None = None
    #: likely mistakes found while loading, each naming the component and what to do (in ``Result.warnings`` too)
    warnings: list[str] = field(default_factory=list)
    #: the connections every master adds: the derivatives of wired signals (``mechfmu.ssp.unconnected``)
    derived: list[Connection] = field(default_factory=list)


def declared_unit(spec: ComponentSpec, name: str) -> str | None:
    """The unit of a component's parameter or input: from our component's declaration, or from the
    FMU's modelDescription for any other FMU (None if neither knows it or it has none, as a signal: a
    value given in any unit is then taken as it is)."""
    try:
        variable = declared_variables(component_class(spec.fmu)).get(name)
    except ValueError:
        from mechfmu.fmu.fmi3_arrays import read_description
        if not spec.fmu.is_file():
            return None
        variable = next((v for v in read_description(str(spec.fmu)).modelVariables if v.name == name), None)
        return None if variable is None else variable_unit(variable)
    return None if variable is None else (variable.unit or None)


def extract_ssp(archive: str | Path) -> Path:
    """The folder an ``.ssp`` archive is unpacked to, within the limits of ``mechfmu.ssp.archive`` (once per
    archive and modification time; removed when the process ends, or after a killed run by the next)."""
    try:
        return ssp_archive.extract(archive)
    except ssp_archive.ArchiveError as exc:
        raise ScenarioError(Path(archive).resolve(), [str(exc)]) from None


def load_scenario(path: str | Path, check: bool = True, local: bool = False, built_fmus: bool | None = None,
                  outside_sources: bool = False) -> Scenario:
    """Read a scenario folder, its ``.ssd`` or an ``.ssp`` archive; with ``check`` validate against
    the FMUs, or with ``local`` against the in-process components named by the sources (no FMU file
    needed). A missing source is an error unless ``built_fmus`` (None: the SSD decides) lets the built FMU
    stand in (``mechfmu.ssp.fmu_sources``; said in ``warnings``). A source outside the SSD's folder and mechfmu's
    FMU directory is refused unless ``outside_sources``."""
    path = Path(path)
    if path.is_file() and path.suffix.lower() == ".ssp":
        path = extract_ssp(path)
    ssd = path / SSD_NAME if path.is_dir() else path
    if not ssd.is_file():
        raise ScenarioError(path, [f"no {SSD_NAME} found at {ssd}"])
    try:
        root = ET.parse(ssd).getroot()
    except (ET.ParseError, LookupError) as exc:  # LookupError: an XML declaration naming an unknown encoding
        raise ScenarioError(ssd, [f"not well-formed XML: {exc}"]) from None
    if root.tag != f"{{{NS['ssd']}}}SystemStructureDescription":
        raise ScenarioError(ssd, [f"the root element is {root.tag!r}, not ssd:SystemStructureDescription (SSP 1.0)"])
    problems: list[str] = [why] if (why := version_problem(root)) else []
    system = root.find("ssd:System", NS)
    if system is None:
        raise ScenarioError(ssd, ["no ssd:System element"])
    problems += system_problems(system)  # constructs mechfmu does not implement are refused, not ignored
    components: dict[str, ComponentSpec] = {}
    try:
        if len(root.findall("ssd:Units", NS)) > 1:
            raise ValueError("ssd:Units appears more than once (the schema allows one): put every unit into one")
        units = parse_units(root.find("ssd:Units", NS))
    except ValueError as exc:
        raise ScenarioError(ssd, [str(exc)]) from None
    fallback = fallback_allowed(system.find("ssd:Annotations/ssc:Annotation[@type='org.mechfmu']/mechfmu:Sources",
                                            NS), built_fmus, problems)
    stood_in = []
    resolved: dict[str, tuple[Path, str, Path]] = {}  # source -> (FMU, why refused, the file it names)
    elements, flat_connections = flatten(system, problems)
    for name, comp in elements:
        source = comp.get("source")
        if not comp.get("name") or not source:
            problems.append("a ssd:Component without name or source")
            continue
        if name in components:
            problems.append(f"component name {name!r} used twice")
        try:
            if source not in resolved or resolved[source][1]:  # shared by the components of a model
                fmu, refused = resolve_source(name, ssd.parent, source, fallback, outside_sources or local)
                resolved[source] = fmu, refused, (ssd.parent / source_path(source)).resolve()
            fmu, refused, named = resolved[source]
        except ValueError as exc:
            problems.append(f"{name}: {exc}")
            continue
        spec = ComponentSpec(name, fmu, source=source, fallback=fallback, refused=refused)
        problems += [refused] if refused and not check else []  # with check, _check reports it
        if spec.fmu != named and not local:
            stood_in.append(f"{name}: {source} -> {spec.fmu}")
        for free in comp.iterfind("ssd:Annotations/ssc:Annotation[@type='org.mechfmu']/mechfmu:Free", NS):
            spec.free += free.get("inputs", "").split() or [""]
        for connector in comp.iterfind("ssd:Connectors/ssd:Connector", NS):
            spec.connectors[connector.get("name", "")] = connector.get("kind", "")
            if (declared := declared_type(connector)) is not None:
                spec.types[connector.get("name", "")] = declared
        for item in binding_values(comp, ssd.parent, units, functools.partial(declared_unit, spec),
                                   outside_sources):
            if isinstance(item, str):
                problems.append(f"{name}: {item}")
            else:
                spec.parameters[item[0]], spec.kinds[item[0]] = item[1], item[2]
        components[name] = spec
    problems += apply_system_bindings(system, ssd.parent, units, components, declared_unit, outside_sources)
    for free in system.iterfind("ssd:Annotations/ssc:Annotation[@type='org.mechfmu']/mechfmu:FreeInputs/mechfmu:Free",
                                NS):
        owner = free.get("component", "")
        if owner not in components:
            problems.append(f"<mechfmu:Free component={owner!r}> of the system names no component")
            continue
        components[owner].free += free.get("inputs", "").split() or [""]
    connections = [Connection(*ends) for ends in flat_connections  # with factor and offset
                   if not (ends[0] == ends[2] and ends[1:4:2] == (LAMBDA_LOOP, LAMBDA))]
    shown = Path(ssp_archive.shown(ssd.parent))  # an archive's, not the folder it is unpacked to
    scenario = Scenario(root.get("name") or (shown.stem if shown != ssd.parent else shown.name), ssd.parent,
                        components, connections)
    scenario.warnings += [ssp_archive.shown(stand_in_note(stood_in, built_fmus))] if stood_in else []
    experiment = root.find("ssd:DefaultExperiment", NS)
    if experiment is not None:
        scenario.start_time = _number(experiment, "startTime", scenario.start_time, problems)
        scenario.stop_time = _number(experiment, "stopTime", scenario.stop_time, problems)
        fixed = experiment.find(".//osp:FixedStepAlgorithm", NS)
        if fixed is not None:
            scenario.step_size = _number(fixed, "baseStepSize", scenario.step_size, problems)
        master = experiment.find(".//mechfmu:Master", NS)
        if master is not None:
            options = dict(master.attrib)
            scenario.algorithm = options.pop("algorithm", scenario.algorithm)
            if "divergenceFactor" in options:
                options.pop("divergenceFactor")
                scenario.divergence_factor = _number(master, "divergenceFactor", 2.0, problems)
                if not scenario.divergence_factor > 1:
                    problems.append(f"divergenceFactor {scenario.divergence_factor!r} must be > 1")
            scenario.algorithm_options = options
            if "rtol" in options or "atol" in options:
                scenario.tolerance = (_tolerance(master, "rtol", problems), _tolerance(master, "atol", problems))
    if not scenario.stop_time > scenario.start_time:
        problems.append(f"stopTime {scenario.stop_time} must be greater than startTime {scenario.start_time}")
    if not scenario.step_size > 0:
        problems.append(f"baseStepSize {scenario.step_size} must be positive")
    if check:
        problems += _check(scenario, local, units)
    if problems:
        raise ScenarioError(ssd, problems)
    if check:
        scenario.warnings += [ssp_archive.shown(w) for w in unconnected_inputs(components, connections)]
        scenario.derived, underived = signal_derivatives(components, scenario.connections,
                                                         lambda spec: component_variables(spec, local))
        scenario.warnings += [ssp_archive.shown(w) for w in underived]
    return scenario


def _tolerance(element: ET.Element, attribute: str, problems: list[str]) -> float | None:
    """A tolerance attribute of ``<mechfmu:Master>``: None if absent, else a number > 0 (a problem otherwise)."""
    value = None if element.get(attribute) is None else _number(element, attribute, math.nan, problems)
    if value is not None and not value > 0 and math.isfinite(value):
        problems.append(f"Master {attribute} = {element.get(attribute)!r} must be > 0")
    return value if value is not None and value > 0 else None


def _number(element: ET.Element, attribute: str, default: float, problems: list[str]) -> float:
    """A finite xs:double attribute of ``element`` (``default`` if absent); a problem text otherwise."""
    text, reason = element.get(attribute), ""
    if text is None:
        return default
    try:
        value = read_double(text)
    except ValueError as exc:
        value, reason = math.nan, f" ({exc})"
    if not math.isfinite(value):
        tag = element.tag.split("}")[-1]
        problems.append(f"{tag} {attribute} = {text!r} is not a finite number{reason}")
        return default
    return value


@functools.lru_cache(maxsize=64)
def _fmu_variables(fmu: str, stamp: tuple[int, int, int]) -> dict[str, Any]:
    """The variables of the FMU file ``fmu`` by name, checked (``archive.check_file``) and read once per state
    ``stamp`` (inode, size, modification time) of the file, read only; a failure is not kept, each reports it."""
    from mechfmu.fmu.fmi3_arrays import read_description
    ssp_archive.check_file(fmu)
    variables = [copy.copy(v) for v in read_description(fmu).modelVariables]  # the shared reading left as it is
    for v in variables:  # an FMI 3.0 FMU's types as SSP 1.0 names them (ssc:Real for a Float64, ...)
        v.type = FMI3_TYPES.get(v.type, v.type)
    return {v.name: v for v in variables if v.causality != "independent"}  # not FMI 3.0's time


def component_variables(spec: ComponentSpec, local: bool = False) -> dict[str, Any]:
    """The variables of a scenario component by name: our component's declarations (``local``) or its
    FMU's modelDescription. ValueError saying why they cannot be read."""
    if local:
        try:
            return declared_variables(component_class(spec.fmu))
        except ValueError as exc:
            raise ValueError(f"{spec.name}: {exc}") from None
    if spec.refused:
        raise ValueError(spec.refused)
    if not spec.fmu.is_file():
        raise ValueError(missing_fmu(spec.name, spec.fmu, spec.source, spec.fallback))
    try:
        stat = spec.fmu.stat()
        variables = _fmu_variables(str(spec.fmu), (stat.st_ino, stat.st_size, stat.st_mtime_ns))
    except ssp_archive.ArchiveError as exc:
        raise ValueError(f"{spec.name}: {exc}") from None
    except Exception as exc:  # a broken file must still be reported, not crash the loader
        raise ValueError(f"{spec.name}: cannot read {spec.fmu}: {exc}") from None
    return dict(variables)


def _check(scenario: Scenario, local: bool = False, units: dict | None = None) -> list[str]:
    problems = []
    variables: dict[str, dict[str, Any]] = {}
    for spec in scenario.components.values():
        try:
            variables[spec.name] = component_variables(spec, local)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        for cname, kind in spec.connectors.items():
            var = variables[spec.name].get(cname)
            if var is None:
                problems.append(f"{spec.name}: declared connector {cname!r} is not a variable of {spec.fmu.name}")
            elif kind != var.causality:
                problems.append(f"{spec.name}: connector {cname!r} declared as {kind!r}, but it is an {var.causality}")
            elif cname in spec.types and (why := connector_problem(spec.name, cname, spec.types[cname], var,
                                                                    variable_unit(var))):
                problems.append(why)
        for pname, value in spec.parameters.items():
            var = variables[spec.name].get(pname)
            if var is None:
                problems.append(f"{spec.name}: unknown variable {pname!r} in parameter bindings")
            elif var.causality not in ("parameter", "input"):
                problems.append(f"{spec.name}: {pname!r} is an {var.causality}, it cannot be given a value")
            elif spec.kinds.get(pname, var.type) != var.type:
                problems.append(f"{spec.name}: {pname} is a {var.type}; an ssv:{spec.kinds[pname]} value "
                                f"({value!r}) is not converted")
            elif (problem := value_problem(spec.name, pname, value, var, Path(spec.fmu).stem)) is not None:
                problems.append(problem)
    targets: dict[tuple[str, str], Connection] = {}
    for number, con in enumerate(scenario.connections):
        ends: list[Any] = []  # the variable at each end (ours or fmpy's), None if unknown
        ends_wanted = ((con.source, con.source_variable, "output"), (con.target, con.target_variable, "input"))
        for comp, var, role in ends_wanted:
            if comp not in scenario.components:
                problems.append(f"connection {con}: unknown component {comp!r}")
                ends.append(None)
            elif comp not in variables:
                ends.append(None)  # FMU problem already reported
            elif var not in variables[comp]:
                problems.append(f"connection {con}: {comp} has no variable {var!r}")
                ends.append(None)
            else:
                v = variables[comp][var]
                if v.causality != role:
                    problems.append(f"connection {con}: {comp}.{var} is an {v.causality}, expected an {role}")
                ends.append(v)
                if var not in scenario.components[comp].connectors:
                    problems.append(f"connection {con}: {comp} declares no ssd:Connector {var!r} "
                                    "(SSP and libcosim require it)")
        if ends[0] is not None and ends[1] is not None and ends[0].type != ends[1].type:
            problems.append(f"connection {con}: type mismatch {ends[0].type} -> {ends[1].type}")
        elif ends[0] is not None and ends[1] is not None:
            specs = (scenario.components[con.source], scenario.components[con.target])
            source_unit, target_unit = (variable_unit(v) or spec.types.get(name, ("", None))[1] for v, spec, name in
                                        zip(ends, specs, (con.source_variable, con.target_variable)))
            con, why = converted(con, ends[0].type, (source_unit, target_unit), (specs[0].fmu, specs[1].fmu),
                                 units or {})
            problems += [why] if why else []
            scenario.connections[number] = con
        key = (con.target, con.target_variable)
        if key in targets:
            problems.append(f"input {con.target}.{con.target_variable} is connected twice "
                            f"({targets[key]} and {con})")
        targets[key] = con
    for spec in (s for s in scenario.components.values() if s.free and s.name in variables):
        inputs = [n for n, v in variables[spec.name].items() if v.causality == "input"]
        problems += mark_problems(spec.name, spec.free, inputs, {v for c, v in targets if c == spec.name})
    return problems
