"""A system written the Modelica way: components with typed parameters, placed under names, connected port to
port; it writes the scenario (``write_scenario``'s SSD), runs it and exports it as an SSP archive.

    s = System("oscillator")
    spring = s.add("spring", CoordinateSpringDamper(stiffness=5000.0, damping=80.0))
    mass = s.add("mass", Mass(m=5.0))
    s.connect(spring.flange_b, mass.flange_a)

Every mistake fails at the call that makes it, naming the valid names: a parameter (``Mass(mm=1)``), a port
(``mass.flange_c``), a name taken twice or holding a control character (a description: a character XML 1.0
cannot hold), a connection (two outputs, an input driven twice, two flanges of which not exactly one outputs
the position). Each call checks only what it adds, so a call costs the same whatever the system's size.

``connect(a, b)`` is Modelica's ``connect``, acausal: two flanges become ``"a <-> b"`` (position and velocity
from the side that outputs them, the cut force back into a free force port of that flange, so several
elements meet at one flange and their forces add; ``mechfmu.ssp.writer.flange_connections``); two variables
become one wire from the output to the input; two ports holding variables of the same names (vectors such as
``ball.position`` and ``contact.sphere.position``) connect name by name, in the first port's declared order.
"""
from __future__ import annotations

import math
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mechfmu.components.number_text import number
from mechfmu.model.placed import Components, PlacedComponent, Port
from mechfmu.ssp.export import safe_name
from mechfmu.ssp.library import ComponentModel, unknown
from mechfmu.ssp.scenario import STEP_SIZE, STOP_TIME, ScenarioError
from mechfmu.ssp.tool_notes import Exported, ExportWarning
from mechfmu.ssp.writer import (
    NOT_IN_NAMES,
    NOT_XML,
    Wiring,
    check_components,
    refused_character,
    write_scenario,
)

if TYPE_CHECKING:
    from mechfmu.master.result import Result



class System:
    """A system of components and connections, with its experiment; ``write``, ``run`` and ``export_ssp``
    give the same SSD as ``write_scenario`` called with ``components``, ``connections``, ``free`` and the
    experiment."""

    def __init__(self, name: str, description: str = "") -> None:
        if not isinstance(name, str) or not name or not isinstance(description, str):
            raise TypeError(f"System({name!r}, {description!r}): the name is a non-empty text, the description a text")
        for what, text, refused, rule in (("name", name, NOT_IN_NAMES, "a name is printable text"),
                                          ("description", description, NOT_XML, "the SSD could not be read")):
            if isinstance(text, str) and (why := refused_character(text, refused)) is not None:
                raise ValueError(f"System({name!r}, {description!r}): the {what} holds {why}; {rule}")
        self.name = name
        self.description = description
        self.placed: dict[str, PlacedComponent] = {}
        #: as ``write_scenario`` takes them: ``"a.x <-> b.y"`` (flanges) and ``"a.x -> b.y"`` (variables)
        self.connections: list[str] = []
        self.free_inputs: list[str] = []
        self.stop_time = STOP_TIME
        self.step_size = STEP_SIZE
        self.algorithm = "auto"
        self.tolerance: tuple[float, float] | None = None
        self.options: dict[str, str] = {}
        #: the wires of ``connections``, kept as ``add`` and ``connect`` grow them (``_wired``)
        self._wiring = Wiring()
        self._wired_of = (self.connections, 0)  # the list the wiring holds the wires of, and its length then

    @property
    def components(self) -> Components:
        """(instance name, model, parameter values) of every placed component, in the order placed; a placed
        component by its name: ``s.components["wheel"]`` (as ``s.placed["wheel"]``; ``KeyError`` naming the
        placed ones)."""
        return Components(self.placed)

    def add(self, instance_name: str, component: ComponentModel) -> PlacedComponent:
        """Place ``component`` under ``instance_name``; the placed component's attributes are its ports."""
        if isinstance(component, type) and issubclass(component, ComponentModel):
            raise TypeError(f"add({instance_name!r}, {component.model}): give a component, "
                            f"{component.model}(...), not the class")
        if not isinstance(component, ComponentModel):
            raise TypeError(f"add({instance_name!r}, {component!r}): not a component (Mass(m=1.0), ...)")
        if not isinstance(instance_name, str) or not instance_name or "." in instance_name:
            raise ValueError(f"add({instance_name!r}, {component!r}): a name is a non-empty text without '.' "
                             "(a connection names a port as COMPONENT.PORT)")
        if (why := refused_character(instance_name)) is not None:
            raise ValueError(f"add({instance_name!r}, {component!r}): the name holds {why}; a name is printable "
                             "text")
        if instance_name in self.placed:
            raise ValueError(f"add({instance_name!r}, {component!r}): the name {instance_name!r} is taken "
                             f"by {self.placed[instance_name].component!r}")
        check_components([(instance_name, component.model, component.parameters)])  # the others passed it
        self.placed[instance_name] = PlacedComponent(self, instance_name, component)
        self._wiring.place(instance_name, component.model)
        return self.placed[instance_name]

    def _own(self, port: object, call: str) -> Port:
        if isinstance(port, PlacedComponent):
            raise TypeError(f"{call}: {port.instance_name} is a component; name one of its ports "
                            f"({', '.join(port._children(''))})")
        if not isinstance(port, Port):
            raise TypeError(f"{call}: {port!r} is not a port of a component (mass.flange_a, ...)")
        if self.placed.get(port._component.instance_name) is not port._component:
            raise ValueError(f"{call}: {port} is not a port of a component of system {self.name!r}")
        return port

    def _wires(self, a: Port, b: Port, call: str) -> list[str]:
        kinds = (a._kind(), b._kind())
        if kinds == ("flange", "flange"):
            return [f"{a} <-> {b}"]
        if kinds == ("variable", "variable"):
            causality = (a._component._variables[a._path], b._component._variables[b._path])
            if causality[0] == causality[1]:
                raise ValueError(f"{call}: both are {causality[0]}s; connect an output to an input")
            return [f"{a} -> {b}"] if causality[0] == "output" else [f"{b} -> {a}"]
        if "flange" in kinds or "variable" in kinds:
            raise ValueError(f"{call}: a {kinds[0]} and a {kinds[1]}; connect a flange to a flange, a variable to "
                             "a variable, a port to a port with variables of the same names")
        names, other = a._children(), b._children()
        if set(names) != set(other):
            raise ValueError(f"{call}: the ports hold different variables ({', '.join(names)} and "
                             f"{', '.join(other)})")
        return [wire for name in names for wire in self._wires(a[name], b[name], call)]

    def connect(self, a: Port, b: Port) -> None:
        """Modelica's ``connect(a, b)``: flange to flange, variable to variable (output to input, either
        order), or port to port name by name. ``ValueError`` if the connection cannot be wired."""
        call = f"connect({a}, {b})"
        a, b = self._own(a, call), self._own(b, call)
        added = self._wires(a, b, call)
        try:
            self._wired().add(added)
        except ValueError as exc:
            raise ValueError(f"{call}: {exc}") from None
        self.connections += added
        self._wired_of = (self.connections, len(self.connections))

    def _wired(self) -> Wiring:
        """The wiring of ``connections`` among the placed components: the one ``add`` and ``connect`` keep, or one
        built anew if ``connections`` is another list or of another length, or ``placed`` of another size, than
        they left (changed by hand; ``ValueError`` as ``connect``)."""
        held, count = self._wired_of
        if len(self._wiring.models) != len(self.placed) or held is not self.connections or count != len(held):
            wiring = Wiring(self.components)
            wiring.add(self.connections)
            self._wiring, self._wired_of = wiring, (self.connections, len(self.connections))
        return self._wiring

    def free(self, port: Port) -> None:
        """Mark an input (or every input of a port or flange) as left unconnected on purpose."""
        call = f"free({port})"
        port = self._own(port, call)
        variables = port._component._variables
        if not any(variables[v] == "input" for v in variables if v == port._path or v.startswith(f"{port._path}.")):
            raise ValueError(f"{call}: holds no input")
        self.free_inputs.append(str(port))

    def experiment(self, stop_time: float = STOP_TIME, step_size: float = STEP_SIZE, algorithm: str = "auto",
                   tolerance: tuple[float, float] | None = None, **options: str) -> None:
        """The run: ``stop_time`` [s] from 0, the communication step ``step_size`` [s] (default, and without a call
        of ``experiment``: ``STOP_TIME`` = 1 s and ``STEP_SIZE`` = 1e-3 s, what an SSD without an experiment runs),
        the master (``mechfmu algorithms`` lists them) with its ``options``, the run's (rtol, atol)."""
        from mechfmu.master.algorithms.auto import algorithm_names, algorithm_or_auto
        from mechfmu.master.simulate import step_count

        if not isinstance(algorithm, str) or algorithm not in algorithm_names():
            raise ValueError(unknown("algorithm", str(algorithm), "mechfmu", algorithm_names()))
        for name, value in (("stop_time", stop_time), ("step_size", step_size)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"experiment: {name} = {number(value)} must be a finite number of seconds")
        if not (0 < step_size <= stop_time):
            raise ValueError(f"experiment: step_size = {number(step_size)} s must be > 0 and <= stop_time = "
                             f"{number(stop_time)} s")
        if tolerance is not None:
            if not isinstance(tolerance, (tuple, list)) or len(tolerance) != 2:
                raise ValueError(f"experiment: tolerance = {tolerance!r} must be a pair (rtol, atol)")
            for name, value in zip(("rtol", "atol"), tolerance):
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
                    raise ValueError(f"experiment: tolerance {name} = {number(value)} must be a finite number > 0")
        for key, given in options.items():
            if isinstance(given, bool) or not isinstance(given, (str, int, float)):
                raise ValueError(f"experiment: option {key} = {given!r} must be a text as the command line takes it "
                                 f"(mechfmu algorithms lists the values), e.g. {key}='...'")
        texts = {key: value if isinstance(value, str) else repr(value) for key, value in options.items()}
        try:  # what the run would refuse is refused here: a step that does not divide it, an unknown option
            step_count(0.0, float(stop_time), float(step_size), max_steps=sys.maxsize)
            algorithm_or_auto(algorithm, texts)
        except ValueError as exc:
            raise ValueError(f"experiment: {exc}") from None
        self.stop_time, self.step_size, self.algorithm = float(stop_time), float(step_size), algorithm
        self.tolerance = tolerance
        self.options = texts

    def write(self, folder: str | Path, fmu_folder: str | None = None, built_fmus: bool = True) -> Path:
        """``folder/SystemStructure.ssd`` (``write_scenario``), its FMUs in ``fmu_folder`` (relative to ``folder``);
        by default mechfmu's FMU folder (``mechfmu build``'s) as seen from ``folder``, wherever that is."""
        if not self.placed:
            raise ValueError(f"system {self.name!r} has no components: add(name, Model(...)) first")
        if fmu_folder is None:
            fmu_folder = fmu_folder_from(folder)
        return write_scenario(folder, self.name, self.components, self.connections, self.stop_time, self.step_size,
                              description=self.description, algorithm=self.algorithm, fmu_folder=fmu_folder,
                              free=self.free_inputs, built_fmus=built_fmus, tolerance=self.tolerance,
                              **self.options)

    def _write_for_fmus(self, folder: Path, local: bool = False) -> Path:
        """The SSD in ``folder`` naming mechfmu's built FMUs where they are (built first unless ``local``)."""
        from mechfmu.fmu import build

        if not local:
            build.build([p.component.model for p in self.placed.values()])
        return self.write(folder)

    def run(self, folder: str | Path | None = None, **options: Any) -> Result:
        """Run the system (``mechfmu.master.simulate.simulate`` with ``options``: ``local=True``, ``stop``,
        ``observers``, ...), written into ``folder`` or a temporary folder (whose name no message shows: problems
        name the system). A Table's relative ``fileName`` is found in ``folder`` (without one, in the current
        directory), in-process and through the FMUs alike; ``ValueError`` if it is not there or leads out of it
        (unless ``allowOutsideFiles``). Ctrl-C stops the run at its next step, keeps every row computed, and raises
        ``mechfmu.master.interrupt.RunInterrupted``, a ``KeyboardInterrupt`` whose ``result`` is the interrupted
        run's."""
        from mechfmu.master.interrupt import RunInterrupted
        from mechfmu.master.simulate import simulate

        local = options.get("local", False)
        base = Path(folder if folder is not None else Path.cwd()).resolve()
        files = table_files(self.placed, base)
        if files:
            given = options.get("parameters") or {}
            options["parameters"] = {**given, **{name: {**files[name], **given.get(name, {})} for name in files}}
        if folder is not None:
            result = simulate(self._write_for_fmus(Path(folder), local), **options)
        else:
            with self._temporary() as temporary:
                result = simulate(self._write_for_fmus(Path(temporary), local), **options)
                named = f"the system {self.name!r}"
                result.message = unnamed(result.message, temporary, named)
                result.warnings = [unnamed(w, temporary, named) for w in result.warnings]
        if result.status == "interrupted":
            raise RunInterrupted(result)
        return result

    def export_ssp(self, target: str | Path, estimate: bool = True, **options: Any) -> Exported:
        """Write an SSP archive of the system with its FMUs inside, for other tools (``mechfmu.ssp.export.export_ssp``
        with ``options``, e.g. ``strongly_coupled=True``), and say what those tools make of it, as
        ``mechfmu export-ssp`` does: the ``Exported`` notes (a path-like of the archive; ``print()`` it for the
        summary). Each note where a named tool gives another answer than mechfmu (its first-order coupling, with
        the error estimated by runs of the same coupling unless not ``estimate``; a name it refuses; fmpy's first
        step) is also an ``ExportWarning`` (``mechfmu.ssp.tool_notes``)."""
        from mechfmu.master.first_order import first_order_deviations
        from mechfmu.ssp.export import export_notes, export_ssp

        with self._temporary() as temporary:
            written = self._write_for_fmus(Path(temporary))
            path = export_ssp(written, target, **options)
            strong = bool(options.get("strongly_coupled"))
            notes = export_notes(path, bool(options.get("shared_fmus")), strong, written,
                                 first_order_deviations(path) if estimate and not strong else None,
                                 int(options.get("fmi_version", 2)))
        for note in notes.differing:
            warnings.warn(note, ExportWarning, stacklevel=2)
        return notes

    @contextmanager
    def _temporary(self) -> Iterator[str]:
        """A temporary folder for the system, which no message names: a ``ValueError`` naming it (a
        ``ScenarioError``: ``scenario <folder>``) names the system instead."""
        with tempfile.TemporaryDirectory(prefix=f"{safe_name(self.name, 'system')}-") as temporary:
            named = f"the system {self.name!r}"
            try:
                yield temporary
            except ScenarioError as exc:
                raise ScenarioError(f"of system {self.name!r}", [unnamed(p, temporary, named) for p in exc.problems]
                                    ) from None
            except ValueError as exc:
                if temporary not in str(exc):
                    raise
                raise ValueError(unnamed(str(exc), temporary, named)) from None


def unnamed(text: str, folder: str, name: str) -> str:
    """``text`` with the temporary ``folder`` (and a file in it) named as what it holds, ``name``."""
    return text.replace(folder + os.sep, "").replace(folder, name) if folder in text else text


def table_files(placed: dict[str, PlacedComponent], base: Path) -> dict[str, dict[str, Any]]:
    """Per Table reading a relative ``fileName``: that file in ``base`` as an absolute name (with
    ``allowOutsideFiles``, which an absolute name needs), for the run only. ``ValueError`` naming the component
    if the name leads out of ``base`` (unless ``allowOutsideFiles``) or no file is there."""
    found: dict[str, dict[str, Any]] = {}
    for name, p in placed.items():
        values = p.component.parameters
        file_name = values.get("fileName", "")
        if p.component.model != "Table" or not values.get("tableOnFile") or not file_name:
            continue
        if Path(file_name).is_absolute():
            continue  # the component's own rules
        path = (base / file_name).resolve()
        if not values.get("allowOutsideFiles") and not path.is_relative_to(base):
            raise ValueError(f"Table {name!r}: fileName = {file_name!r} leads out of {base} (to {path}); put the "
                             "file into that folder, or set allowOutsideFiles = True")
        if not path.is_file():
            raise ValueError(f"Table {name!r}: fileName = {file_name!r} is not a file in {base}; relative names "
                             "are found in the folder given to run(folder), else in the current directory")
        found[name] = {"fileName": str(path), "allowOutsideFiles": True}
    return found


def fmu_folder_from(folder: str | Path) -> str:
    """mechfmu's FMU folder (``mechfmu.fmu.build.FMU_DIR``) as an SSD in ``folder`` names it: relative where it can
    be (the pair moves together), absolute where it cannot (another drive)."""
    from mechfmu.fmu import build
    try:
        return Path(os.path.relpath(Path(build.FMU_DIR).resolve(), Path(folder).resolve())).as_posix()
    except ValueError:
        return Path(build.FMU_DIR).resolve().as_posix()
