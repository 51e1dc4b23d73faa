"""The FMI 3.0 FMUs: every native component also as an FMI 3.0 FMU, Model Exchange and co-simulation in one archive,
from the same model code as its FMI 2.0 FMU (the same runtime and laws under ``components/native/fmi3_functions.c``).

Its model description is the FMI 2.0 FMU's, said in FMI 3.0 (``model_description``): typed variables (Float64,
Int32, Boolean, String), the value references unchanged and the independent variable ``time`` after them, a
variable that shares another's value reference as its ``<Alias>``, dependencies and derivatives by value reference,
the ``indicator.*`` outputs as the event indicators, and co-simulation with event mode, early return and
intermediate update. ``terminalsAndIcons/terminalsAndIcons.xml`` declares each 1-D flange as a terminal of its
MSL interface (``terminals``). Binaries go to FMI 3.0's platform folders (``FOLDERS``): x86_64-linux,
aarch64-linux, x86_64-windows, and x86_64-darwin and aarch64-darwin, which both hold the universal Mach-O binary.
"""
from __future__ import annotations

import functools
import hashlib
import os
import tempfile
import xml.etree.ElementTree as ET
import zipfile
from itertools import zip_longest
from pathlib import Path

from mechfmu.fmu import build as fmu_build
from mechfmu.fmu.fmi3_arrays import ELEMENTS, vector_lengths
from mechfmu.fmu.native import HOST_PLATFORM, PLATFORMS, compile_binary, in_parallel

#: our platforms (``mechfmu.fmu.native.PLATFORMS``) and the FMI 3.0 platform folders their binary goes to
FOLDERS = {"linux64": ("x86_64-linux",), "aarch64-linux": ("aarch64-linux",), "win64": ("x86_64-windows",),
           "darwin64": ("x86_64-darwin", "aarch64-darwin")}
TERMINALS_FILE = "terminalsAndIcons/terminalsAndIcons.xml"
#: FMI 2.0's type elements and FMI 3.0's variable and type elements for them
TYPES = {"Real": "Float64", "Integer": "Int32", "Boolean": "Boolean", "String": "String",
         "Enumeration": "Enumeration"}
#: the MSL interface a flange stands for: (translational, rotational) by the flange's name
FLANGE_KINDS = {"flange_a": "Flange_a", "flange_b": "Flange_b", "flange": "Flange_b"}
#: a flange's members in a terminal, those of them the component has: signal (potential) and inflow (Modelica's
#: flow, positive into the component)
MEMBERS = {"Translational": (("s", "signal"), ("v", "signal"), ("f", "inflow")),
           "Rotational": (("phi", "signal"), ("w", "signal"), ("tau", "inflow"))}


def fmu_dir(directory: Path | None = None) -> Path:
    """Where the FMI 3.0 FMUs go: ``fmi3/`` in the FMU folder (``mechfmu.fmu.build.FMU_DIR``) unless given."""
    return Path(directory) if directory is not None else fmu_build.FMU_DIR / "fmi3"


def binary_names(model: str, platform: str) -> list[str]:
    """The FMU's binaries for one of our ``platform`` folders: one per FMI 3.0 platform folder."""
    return [f"binaries/{folder}/{model}{PLATFORMS[platform].extension}" for folder in FOLDERS[platform]]


def is_current(path: Path, digest: str, platforms: list[str]) -> bool:
    """Whether the FMI 3.0 FMU at ``path`` was built from the sources of ``digest`` with every platform's binaries."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            stamp = zf.read(fmu_build.NATIVE_STAMP).decode().strip()
    except (OSError, KeyError, zipfile.BadZipFile):
        return False
    return stamp == f"mechfmu_native_{digest}" and all(name in names for platform in platforms
                                                       for name in binary_names(path.stem, platform))


def _attributes(element: ET.Element, names: tuple[str, ...]) -> dict[str, str]:
    return {name: element.attrib[name] for name in names if name in element.attrib}


def source_digest() -> str:
    """The digest of what an FMI 3.0 FMU is built from: the FMI 2.0 FMU's sources, this module and the array rule."""
    text = (fmu_build.source_hash(runtime=False) + Path(__file__).read_text(encoding="utf-8")
            + Path(__file__).with_name("fmi3_arrays.py").read_text(encoding="utf-8"))
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def model_description(fmi2: bytes) -> bytes:
    """The FMI 3.0 model description of a native FMU from its FMI 2.0 one (module docstring); ValueError for an
    FMI 2.0 construct it has no FMI 3.0 form for here."""
    source = ET.fromstring(fmi2)
    root = ET.Element("fmiModelDescription", {
        "fmiVersion": "3.0", "modelName": source.attrib["modelName"], "instantiationToken": source.attrib["guid"],
        **_attributes(source, ("description", "author", "version", "copyright", "license", "generationTool",
                               "generationDateAndTime", "variableNamingConvention"))})
    interface = ("modelIdentifier", "canGetAndSetFMUstate", "canSerializeFMUstate")
    common = {"needsExecutionTool": "false", "providesDirectionalDerivatives": "true",
              "providesAdjointDerivatives": "true"}
    for kind in ("ModelExchange", "CoSimulation"):
        if (element := source.find(kind)) is None:
            continue
        attributes = {name.replace("FMUstate", "FMUState"): value
                      for name, value in _attributes(element, interface).items()}
        extra = ({"needsCompletedIntegratorStep": "true"} if kind == "ModelExchange" else
                 {"canHandleVariableCommunicationStepSize": "true", "hasEventMode": "true",
                  "mightReturnEarlyFromDoStep": "true", "providesIntermediateUpdate": "true",
                  "canReturnEarlyAfterIntermediateUpdate": "true"})
        ET.SubElement(root, kind, {**attributes, **common, **extra})
    if (units := source.find("UnitDefinitions")) is not None:
        root.append(units)  # FMI 3.0's Unit, BaseUnit and DisplayUnit have FMI 2.0's attributes
    if (types := source.find("TypeDefinitions")) is not None:
        converted = ET.SubElement(root, "TypeDefinitions")
        for simple in types:
            typed = simple[0]
            if typed.tag == "Enumeration":
                raise ValueError(f"type {simple.attrib['name']}: an enumeration type has no FMI 3.0 form here")
            ET.SubElement(converted, f"{TYPES[typed.tag]}Type", {"name": simple.attrib["name"], **typed.attrib})
    for name in ("LogCategories", "DefaultExperiment"):
        if (element := source.find(name)) is not None:
            root.append(element)
    variables = list(source.find("ModelVariables") or [])
    references = [int(v.attrib["valueReference"]) for v in variables]
    index_to_reference = {i + 1: reference for i, reference in enumerate(references)}
    lengths = vector_lengths([(v.attrib["name"], r, v[0].tag == "Real", v.attrib.get("causality", "local"))
                              for v, r in zip(variables, references)])
    array_of = {first + k: first for first, length in lengths.items() for k in range(length)}
    model_variables = ET.SubElement(root, "ModelVariables")
    has_states = bool(source.findall("ModelStructure/Derivatives/Unknown"))
    first_of: dict[int, ET.Element] = {}
    for variable, reference in zip(variables, references):
        typed = variable[0]
        if reference in array_of:
            if reference == array_of[reference]:
                _intermediate(_array(model_variables, variables, references, reference, lengths[reference]),
                              has_states)
            continue
        if reference in first_of:  # FMI 2.0's alias: one value reference, several names
            alias = ET.SubElement(first_of[reference], "Alias", {"name": variable.attrib["name"]})
            if "description" in variable.attrib:
                alias.set("description", variable.attrib["description"])
            continue
        attributes = _attributes(variable, ("name", "valueReference", "description", "causality", "variability",
                                            "initial", "canHandleMultipleSetPerTimeInstant"))
        typed_attributes = {k: v for k, v in typed.attrib.items() if k not in ("start", "derivative")}
        if "derivative" in typed.attrib:
            typed_attributes["derivative"] = str(index_to_reference[int(typed.attrib["derivative"])])
        element = ET.SubElement(model_variables, TYPES[typed.tag], {**attributes, **typed_attributes})
        _intermediate(element, has_states)
        if "start" in typed.attrib:
            if typed.tag == "String":
                ET.SubElement(element, "Start", {"value": typed.attrib["start"]})
            else:
                element.set("start", {"1": "true", "0": "false"}.get(typed.attrib["start"], typed.attrib["start"])
                            if typed.tag == "Boolean" else typed.attrib["start"])
        first_of[reference] = element
    time_reference = max(references, default=-1) + 1
    ET.SubElement(model_variables, "Float64", {"name": "time", "valueReference": str(time_reference),
                                               "causality": "independent", "variability": "continuous",
                                               "description": "Simulation time", "unit": "s"})
    structure = ET.SubElement(root, "ModelStructure")
    fmi2_structure = source.find("ModelStructure")

    def reference_of(index: str) -> int:
        """An FMI 2.0 variable's FMI 3.0 value reference: its own, or its array's."""
        reference = index_to_reference[int(index)]
        return array_of.get(reference, reference)

    def unknowns(section: str, tag: str) -> None:
        merged: dict[int, dict[int, str]] = {}  # per unknown its dependencies (an array's: its elements' together)
        kinds: dict[int, bool] = {}
        for unknown in (fmi2_structure.find(section) if fmi2_structure is not None else None) or []:
            reference = reference_of(unknown.attrib["index"])
            known = merged.setdefault(reference, {})
            kinds[reference] = "dependencies" in unknown.attrib
            pairs = zip_longest(unknown.attrib.get("dependencies", "").split(),
                                unknown.attrib.get("dependenciesKind", "").split(), fillvalue="")
            for index, kind in pairs:
                dependency = reference_of(index)
                if known.get(dependency, kind) != kind:  # elements of one array depending differently
                    kind = "dependent"
                known[dependency] = kind
        for reference, known in merged.items():
            attributes = {"valueReference": str(reference)}
            if kinds[reference]:
                attributes["dependencies"] = " ".join(map(str, known))
                if any(known.values()):
                    attributes["dependenciesKind"] = " ".join(known.values())
            ET.SubElement(structure, tag, attributes)

    unknowns("Outputs", "Output")
    unknowns("Derivatives", "ContinuousStateDerivative")
    unknowns("InitialUnknowns", "InitialUnknown")
    for variable, reference in zip(variables, references):
        if variable.attrib["name"].startswith("indicator.") and variable.attrib.get("causality") == "output":
            ET.SubElement(structure, "EventIndicator", {"valueReference": str(reference)})
    ET.indent(root, "\t")
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8") + b"\n"


def _array(parent: ET.Element, variables: list[ET.Element], references: list[int], first: int,
           length: int) -> ET.Element:
    """The FMI 3.0 array variable of the FMI 2.0 variables at value references first .. first + length - 1
    (``mechfmu.fmu.fmi3_arrays``): the first one's attributes, its name the stem, the starts as a list."""
    elements = [variables[references.index(first + k)] for k in range(length)]
    head, typed = elements[0], elements[0][0]
    if any("derivative" in e[0].attrib for e in elements):
        raise ValueError(f"{head.attrib['name']}: a derivative of an array element has no FMI 3.0 form here")
    name = head.attrib["name"].rsplit(".", 1)[0]
    attributes = _attributes(head, ("valueReference", "description", "causality", "variability", "initial",
                                    "canHandleMultipleSetPerTimeInstant"))
    description = attributes.get("description", "")
    suffix = f" ({head.attrib['name'].rsplit('.', 1)[1]})"
    if description.endswith(suffix):
        attributes["description"] = description[:-len(suffix)]
    element = ET.SubElement(parent, "Float64", {"name": name, **attributes,
                                                **{k: v for k, v in typed.attrib.items() if k != "start"}})
    starts = [e[0].attrib.get("start") for e in elements]
    if all(start is not None for start in starts):
        element.set("start", " ".join(str(start) for start in starts))
    annotation = ET.SubElement(ET.SubElement(element, "Annotations"), "Annotation", {"type": ELEMENTS})
    annotation.text = " ".join(e.attrib["name"].rsplit(".", 1)[1] for e in elements)
    ET.SubElement(element, "Dimension", {"start": str(length)})
    return element


def _intermediate(element: ET.Element, has_states: bool) -> None:
    """Mark ``element`` an intermediate variable (``intermediateUpdate``) where the co-simulation step gives it inside
    the step: every output, and a continuous input of an FMU with continuous states (set at each stage of its
    integration)."""
    causality, variability = element.get("causality"), element.get("variability", "continuous")
    if element.tag == "Float64" and (causality == "output" or (causality == "input" and has_states
                                                               and variability == "continuous")):
        element.set("intermediateUpdate", "true")


def terminals(description: bytes) -> bytes | None:
    """terminalsAndIcons.xml declaring each 1-D flange of the model description as a terminal of the MSL interface
    it stands for (Modelica.Mechanics.Translational.Interfaces.Flange_a, ...), its members by name ("plug");
    None for a component without one."""
    names = {v.attrib["name"] for v in ET.fromstring(description).find("ModelVariables") or []}
    root = ET.Element("fmiTerminalsAndIcons", {"fmiVersion": "3.0"})
    found = ET.SubElement(root, "Terminals")
    for flange, kind in FLANGE_KINDS.items():
        for domain, members in MEMBERS.items():
            present = [(member, kind_) for member, kind_ in members if f"{flange}.{member}" in names]
            if not present or present[0][0] != members[0][0]:  # a flange has its position at least
                continue
            terminal = ET.SubElement(found, "Terminal", {
                "name": flange, "matchingRule": "plug",
                "terminalKind": f"Modelica.Mechanics.{domain}.Interfaces.{kind}",
                "description": f"the {domain.lower()} flange {flange} (Modelica's {kind})"})
            for member, variable_kind in present:
                ET.SubElement(terminal, "TerminalMemberVariable", {
                    "variableName": f"{flange}.{member}", "memberName": member, "variableKind": variable_kind})
    if not len(found):
        return None
    ET.indent(root, "\t")
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8") + b"\n"


def build(models: list[str] | None = None, directory: Path | None = None, force: bool = False,
          platforms: list[str] | None = None, portable: bool = False, backend: str = "native") -> list[Path]:
    """Build the FMI 3.0 FMUs of ``models`` (default: every native one) into ``directory`` (``fmu_dir``) unless
    current, with the binaries of ``platforms`` (default: this machine's); return the built paths. The FMI 2.0
    FMUs (``mechfmu.fmu.build.build``, into the FMU folder) are built first where stale: their model descriptions
    and documentation are the FMI 3.0 FMUs' source. ValueError for a component without a law in C, or a ``backend``
    other than native (an FMI 3.0 FMU runs its law in C, never Python)."""
    from mechfmu.fmu.native_tables import NATIVE_HOOKS
    if backend != "native":
        raise ValueError(f"backend {backend!r}: an FMI 3.0 FMU is built native only (the backend native)")
    platforms = list(platforms or [HOST_PLATFORM])
    names = models or [m for m in fmu_build.model_names() if m in NATIVE_HOOKS]
    python_only = [m for m in names if m not in NATIVE_HOOKS]
    if python_only:
        raise ValueError(f"{', '.join(python_only)}: an FMI 3.0 FMU is built for a component with a law in C only "
                         "(its FMI 2.0 FMU embeds Python)")
    fmu_build.build(names, fmu_build.FMU_DIR)
    target_dir = fmu_dir(directory)
    target_dir.mkdir(parents=True, exist_ok=True)
    digest = source_digest()
    with fmu_build.build_lock(target_dir), tempfile.TemporaryDirectory(prefix="mechfmu_fmi3_") as tmp_name:
        todo = [m for m in names if force or not is_current(target_dir / f"{m}.fmu", digest, platforms)]
        binaries = {platform: Path(tmp_name) / f"binary_{platform}{PLATFORMS[platform].extension}"
                    for platform in (platforms if todo else [])}
        in_parallel(functools.partial(compile_binary, binary, None, platform, portable=portable, fmi_version=3)
                    for platform, binary in binaries.items())
        for model in todo:
            _package(model, fmu_build.fmu_path(model, fmu_build.FMU_DIR), target_dir / f"{model}.fmu", binaries,
                     digest)
    return [target_dir / f"{m}.fmu" for m in todo]


def _package(model: str, fmi2_fmu: Path, target: Path, binaries: dict[str, Path], digest: str) -> None:
    """The FMI 3.0 FMU of ``model`` from its FMI 2.0 FMU, written beside ``target`` and renamed to it."""
    with zipfile.ZipFile(fmi2_fmu) as source:
        description = model_description(source.read("modelDescription.xml"))
        documentation = source.read("documentation/index.html")
    token = ET.fromstring(description).attrib["instantiationToken"]
    packed = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    with zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("modelDescription.xml", description)
        zf.writestr(fmu_build.GUID_FILE, token)  # what fmi3Instantiate* checks instantiationToken against
        zf.writestr(fmu_build.NATIVE_STAMP, f"mechfmu_native_{digest}\n")
        for platform, binary in binaries.items():
            for name in binary_names(model, platform):
                zf.write(binary, name)
        zf.writestr("documentation/index.html", documentation)
        if (terminal_file := terminals(description)) is not None:
            zf.writestr(TERMINALS_FILE, terminal_file)
    packed.replace(target)
