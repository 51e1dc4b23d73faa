"""``mechfmu export-crosscheck SCENARIO DIR``: every FMU of a scenario in the FMI cross-check layout.

For each model of the scenario (its first instance), ``DIR/fmus/2.0/cs/linux64/mechfmu/<version>/<Model>/``
holds what the FMI cross-check rules ask for, so any importer can replay the FMU alone and compare:
- ``<Model>.fmu``: the FMU with the instance's parameter values as its own defaults (start attributes
  and ``resources/start_values.json``, which the FMU applies at instantiation);
- ``<Model>_in.csv``: the inputs the instance held over each step, recorded on the input side when the
  accepted step was taken (so tangent wires, solved constraint forces and iterated values are what
  they really were), at every communication point; inputs that never leave their start value are left out;
- ``<Model>_ref.csv``: its outputs at every communication point as an importer replaying the inputs
  sees them (right after the step, before new inputs: a feed-through output with the held inputs);
- ``<Model>_ref.opt``: StartTime, StopTime, StepSize (the macro step), RelTol;
- ``ReadMe.md``: where it comes from.
Each FMU is read back as it was written (``mechfmu.ssp.readback.check_fmu``: its start_values.json, start
attributes and, instantiated here, its values), or the export is refused naming the value. The rules limit each
CSV to 1 MB: the export covers the first steps of the scenario that fit (the
stop time says how far), every point kept, so a zero-order-hold input replays exactly.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

from mechfmu import __version__
from mechfmu.components import fmi
from mechfmu.components.start_values import start_values_text
from mechfmu.master.csv_text import csv_row
from mechfmu.master.exchange import through_python
from mechfmu.master.observers import Observer
from mechfmu.master.result import Run
from mechfmu.master.result_files import csv_header
from mechfmu.master.simulate import simulate
from mechfmu.master.slaves import LocalSlave
from mechfmu.ssp.readback import ReadBackError, check_fmu
from mechfmu.ssp.scenario import component_class, load_scenario

LIMIT = 1_000_000  # bytes per CSV (FMI cross-check rules)
START_VALUES = f"resources/{fmi.START_VALUES}"  # what ComponentFmu applies at instantiation


class StepProbe:
    """Wraps a LocalSlave's do_step: records the inputs it holds over each step and its outputs right
    after it, before the master passes new inputs (what a plain importer sees: a feed-through output
    still with the held inputs). A repeated step overwrites its record, so the accepted one stays."""

    def __init__(self, slave: LocalSlave):
        self.names = [i.name for i in slave.component.inputs]
        self.outputs = [o.name for o in slave.component.outputs]
        self.inputs: dict[float, tuple[float, ...]] = {}
        self.before: dict[float, tuple[float, ...]] = {}  # outputs with the held inputs, before the step
        self.after: dict[float, tuple[float, ...]] = {}
        step = slave.do_step

        def do_step(current_time: float, step_size: float) -> bool:
            self.inputs[current_time] = tuple(slave.component.values[n] for n in self.names)
            self.before[current_time] = tuple(slave.component.get(n) for n in self.outputs)
            done = step(current_time, step_size)
            if done:
                self.after[current_time] = tuple(slave.component.get(n) for n in self.outputs)
            return done
        slave.do_step = do_step  # type: ignore[method-assign]  # wraps this one slave's step (instance attribute)


def _variant(fmu: Path, target: Path, parameters: dict, component: str) -> None:
    """``fmu`` copied with ``parameters`` as its defaults (modelDescription start values + resources); raises
    ValueError naming ``component``, the parameter and the value where a value cannot be written so that the FMU
    reads it back (not finite, a NUL or a lone surrogate in a string), before ``target`` is written."""
    try:
        start_values = start_values_text(parameters)  # what both readers take back, or refused here
    except ValueError as exc:
        raise ValueError(f"cannot export component {component!r}: its start value {exc}") from None
    with zipfile.ZipFile(fmu) as source, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "modelDescription.xml":
                root = ET.fromstring(data)
                for variable in root.iter("ScalarVariable"):
                    if variable.get("name") in parameters:
                        value = parameters[variable.get("name")]
                        text = str(value).lower() if isinstance(value, bool) else (
                            repr(float(value)) if isinstance(value, float) else str(value))
                        next(iter(variable)).set("start", text)
                data = ET.tostring(root, encoding="UTF-8", xml_declaration=True)
            out.writestr(item, data)
        out.writestr(START_VALUES, start_values)


def export_crosscheck(path: str | Path, directory: str | Path) -> list[Path]:
    """Write the cross-check folders of every model in the scenario; return them."""
    scenario = load_scenario(path)
    probes: dict[str, StepProbe] = {}

    class Probing(Observer):  # attach probes when simulate has created the slaves (observer 'initialized')
        def initialized(self, run: Run) -> None:
            for name, slave in run.slaves.items():
                assert isinstance(slave, LocalSlave)  # simulate(local=True) below
                probes[name] = StepProbe(slave)

    first: dict[str, str] = {}
    for name, spec in scenario.components.items():
        first.setdefault(component_class(spec.fmu).__name__, name)
    widest = max(len(component_class(s.fmu).inputs) + len(component_class(s.fmu).outputs) + 1
                 for s in scenario.components.values())
    total = round((scenario.stop_time - scenario.start_time) / scenario.step_size)
    n_steps = min(total, int(LIMIT / (widest * 25)) - 2)  # 25 characters per value at most (repr, comma)
    stop = scenario.start_time + n_steps * scenario.step_size
    with through_python():  # every step through the probes' do_step
        result = simulate(scenario, stop=stop, local=True, observers=[Probing()])
    if not result.ok:
        raise RuntimeError(f"{scenario.name}: {result.message}")
    root = Path(directory) / "fmus" / "2.0" / "cs" / "linux64" / "mechfmu" / __version__
    written = []
    assert result.data is not None  # an ok run recorded its rows (default Recorder)
    times = list(result.data["time"])
    for model, instance in sorted(first.items()):
        spec = scenario.components[instance]
        folder = root / model
        folder.mkdir(parents=True, exist_ok=True)
        _variant(spec.fmu, folder / f"{model}.fmu", dict(spec.parameters), instance)
        if problems := check_fmu(folder / f"{model}.fmu", instance, dict(spec.parameters)):  # read back as written
            (folder / f"{model}.fmu").unlink()
            raise ReadBackError(f"cannot export {model}.fmu of {scenario.name}: it does not read back as written\n"
                                "  - " + "\n  - ".join(problems))
        cls = component_class(spec.fmu)
        probe = probes[instance]
        initial = probe.before[times[0]]  # at the start, with the inputs held over the first step
        with open(folder / f"{model}_ref.csv", "w") as file:
            file.write(csv_header(["time"] + probe.outputs))
            for t, row in zip(times, [initial] + [probe.after[t] for t in times[:-1]]):
                file.write(csv_row((t,) + tuple(row)))
        held = [probe.inputs[t] for t in times[:-1]]
        starts = {i.name: i.start for i in cls.inputs}
        varied = [k for k, n in enumerate(probe.names) if any(r[k] != starts[n] for r in held)]
        if varied:
            with open(folder / f"{model}_in.csv", "w") as file:
                file.write(csv_header(["time"] + [probe.names[k] for k in varied]))
                for t, r in zip(times, held + held[-1:]):  # the last point holds the last step's inputs
                    file.write(csv_row((t,) + tuple(r[k] for k in varied)))
        (folder / f"{model}_ref.opt").write_text(
            f"StartTime, {scenario.start_time!r}\nStopTime, {stop!r}\nStepSize, {scenario.step_size!r}\n"
            f"RelTol, 1e-06\n")
        (folder / "ReadMe.md").write_text(
            f"# {model}\n\nInstance `{instance}` of the mechfmu scenario `{scenario.name}` "
            f"({scenario.algorithm} coupling, macro step {scenario.step_size!r} s), exported by mechfmu "
            f"{__version__}. The FMU's defaults are the instance's parameter values; `{model}_in.csv` holds the "
            f"inputs it held over each step (zero-order hold), `{model}_ref.csv` its outputs. The first "
            f"{n_steps} of {total} steps (CSV files within 1 MB).\n")
        for csv in folder.glob("*.csv"):
            if csv.stat().st_size > LIMIT:
                raise RuntimeError(f"{csv} exceeds {LIMIT} bytes")
        written.append(folder)
    return written
