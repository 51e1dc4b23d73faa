"""``FmuSlave``: an FMI 2.0 or 3.0 FMU as a ``Slave`` (mechfmu/master/slaves.py), through fmpy's library loading and the
FMU's own functions (an FMI 3.0 one through ``mechfmu.master.fmi3_instance``); ``InstancePool``
(``mechfmu.master.instance_pool``): instances kept for the next run of a process.

The one way into the FMU is ``FmuSlave._call``: it counts and times the call by its kind (``CallCounts``,
mechfmu/master/fmu_calls.py) and turns an error status or a logged error into a ``SlaveError`` with the FMU's
messages (a discarded step is a refusal, not an error). Batched Real reads and writes (the master's every step)
call fmi2GetReal/fmi2SetReal directly with value-reference arrays and buffers prepared once per list of names;
everything else goes through fmpy's wrappers.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from mechfmu.components.base import coerce
from mechfmu.components.number_text import measured, number
from mechfmu.components.ports import LAMBDA
from mechfmu.master.fmi3_instance import ELEMENT_REFERENCES, TYPES, Fmi3Instance, read_fmi3_interfaces
from mechfmu.master.fmpy_loading import typed_class
from mechfmu.master.fmu_calls import CallCounts
from mechfmu.master.slaves import LOGGED, Slave, SlaveError, VariableInfo
from mechfmu.ssp.archive import ArchiveError

#: what ``FmuSlave._call`` returns for a refused (discarded) step
REFUSED = object()
#: the kind (the FMI 2.0 function, or FMI 3.0's where 2.0 has none) of each of ``FmuSlave.event_call``'s calls
EVENT_CALLS = {"enterEventMode": "fmi2EnterEventMode", "newDiscreteStates": "fmi2NewDiscreteStates",
               "enterStepMode": "fmi3EnterStepMode"}


def log_serial() -> int:
    """How many messages the FMUs and in-process components of this process have logged so far."""
    return LOGGED.value


class FmuSlave(CallCounts, Slave):
    """An FMI 2.0 or 3.0 FMU loaded with fmpy (unzipped once per FMU file and process)."""

    _unzipped: dict[str, tuple[Any, str]] = {}
    #: per FMU file its FMI 3.0 array elements: (index, length) by name (mechfmu.fmu.fmi3_arrays.read_layout)
    _layouts: dict[str, dict[str, tuple[int, int]]] = {}

    @classmethod
    def unpacked(cls, fmu: str) -> tuple[Any, str]:
        """(model description, folder) of an FMU file, unpacked once per process into the temporary directory
        within the archive limits (``mechfmu.ssp.archive.extract``: ArchiveError beyond them; the folder is
        removed when the process ends)."""
        from mechfmu.fmu.fmi3_arrays import read_layout
        from mechfmu.ssp import archive
        if fmu not in cls._unzipped:
            archive.check_file(fmu)
            md, layout = read_layout(fmu)
            folder = str(archive.extract(fmu, "FMU"))
            if md.fmiVersion.startswith("3"):
                read_fmi3_interfaces(md, folder)
            cls._unzipped[fmu] = (md, folder)
            cls._layouts[fmu] = layout
        return cls._unzipped[fmu]

    def __init__(self, name: str, fmu: str | Path, model_exchange: bool = False):
        """``model_exchange``: instantiated as fmi2ModelExchange (``model_exchange_view``), not co-simulation; a
        constraint (an input ``lambda``) without that form as co-simulation, for the monolithic master to solve."""
        super().__init__(name)
        import fmpy
        from fmpy.fmi2 import (
            fmi2CallbackAllocateMemoryTYPE,
            fmi2CallbackFreeMemoryTYPE,
            fmi2CallbackFunctions,
            fmi2CallbackLoggerTYPE,
        )

        self.fmu = str(Path(fmu).resolve())
        try:
            md, unzipped = FmuSlave.unpacked(self.fmu)
            layout = FmuSlave._layouts[self.fmu]
        except ArchiveError as exc:
            raise SlaveError(f"{name}: {exc}") from None
        if md.coSimulation is None:
            raise SlaveError(f"{name}: {self.fmu} is not a co-simulation FMU")
        self.instantiated_for_model_exchange = model_exchange  # as asked (the key of a pool that keeps it)
        constraint = any(v.name == LAMBDA and v.causality == "input" for v in md.modelVariables)
        if model_exchange and md.modelExchange is None and constraint:  # algebraic: the master solves its force
            model_exchange = False
        if model_exchange and md.modelExchange is None:
            raise SlaveError(f"{name}: {Path(self.fmu).name} is not a Model Exchange FMU (a component without a "
                             "Model Exchange form: its documentation says why)")
        self.model_exchange = model_exchange
        self.model_description = md
        #: the FMU can save and restore its state (rollback: iterative algorithms, event location)
        self.can_roll_back = bool(md.coSimulation.canGetAndSetFMUstate)
        deps = {u.variable.name: u.dependencies for u in md.outputs}  # feed-through: the inputs, not the states
        self.fmi_version = int(md.fmiVersion[0])
        elements: dict[int, tuple[int, int, int]] = {}  # FMI 3.0 array elements (Fmi3Instance)
        for v in md.modelVariables:
            if v.causality == "independent":  # FMI 3.0's time
                continue
            dep = deps.get(v.name)
            reference = v.valueReference
            if v.name in layout:  # an FMI 3.0 array's element
                reference = ELEMENT_REFERENCES + len(elements)
                elements[reference] = (v.valueReference, *layout[v.name])
            self.variables[v.name] = VariableInfo(
                v.name, v.causality, TYPES.get(v.type, v.type),
                v.unit or (v.declaredType.unit if v.declaredType else None),
                v.start, _num(v.min), _num(v.max),
                None if dep is None else tuple(d.name for d in dep if d.causality == "input"), reference)
        self.messages: list[tuple[int, str]] = []
        self._serials: list[int] = []  # per message its serial (``log_serial`` before it was logged)

        def log(_env, _instance, status, _category, message):
            self.messages.append((status, message.decode("utf-8", "replace")))
            self._serials.append(LOGGED.value)
            LOGGED.value += 1

        self._callbacks = fmi2CallbackFunctions()
        self._callbacks.logger = fmi2CallbackLoggerTYPE(log)
        self._callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(fmpy.calloc)
        self._callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(fmpy.free)
        self._start_counts()
        loading = self._clock()
        if self.fmi_version == 3:
            def log3(status: int, text: str) -> None:
                self.messages.append((status, text))
                self._serials.append(LOGGED.value)
                LOGGED.value += 1
            self._fmu = Fmi3Instance(md, unzipped, name, model_exchange, log3)
            self._fmu.elements = elements
        else:
            self._fmu = typed_class(2, model_exchange)(guid=md.guid, unzipDirectory=unzipped,
                                                   modelIdentifier=md.coSimulation.modelIdentifier, instanceName=name)
        self._load_ns = self._clock() - loading
        try:
            self._call("fmi2Instantiate", "instantiate",
                       lambda: self._fmu.instantiate(callbacks=self._callbacks, loggingOn=True))
        except SlaveError:
            raise
        except Exception as exc:  # fmpy raises a plain Exception when fmi2Instantiate returns NULL
            reason = self._errors_since(0) or str(exc)
            raise SlaveError(f"{name}: instantiate failed: {reason}") from None
        self._vr: dict[str, int] = {n: v.value_reference for n, v in self.variables.items()}
        #: per list of names: (value references, their ctypes array, a value buffer), None unless all Real
        self._plan: dict[tuple[str, ...], tuple[list[int], Any, Any] | None] = {}
        self._get_reals, self._set_reals, self._step = self._direct_functions()

    def _direct_functions(self):
        """fmi2GetReal, fmi2SetReal and fmi2DoStep of this instance called straight through ctypes (no
        per-call argument conversion and logging wrapper of fmpy), raising fmpy's FMICallException on a
        status above warning as fmpy does; fmpy's own methods if its loaded functions are not at hand."""
        from fmpy.fmi1 import FMICallException
        from fmpy.fmi2 import fmi2True
        functions, component = getattr(self._fmu, "_functions", None), self._fmu.component
        if not isinstance(functions, dict) or not {"fmi2GetReal", "fmi2SetReal", "fmi2DoStep"} <= set(functions):
            return (lambda refs, array, buffer: self._fmu.getReal(refs), lambda refs, array, buffer: self._fmu.setReal(
                refs, list(buffer)), getattr(self._fmu, "doStep", None))  # Model Exchange: no doStep

        def checked(name: str, function):
            def call(*args):
                status = function(component, *args)
                if status > 1:
                    raise FMICallException(function=name, status=status)
                return status
            return call

        get_real, set_real, do_step = (checked(n, functions[n]) for n in ("fmi2GetReal", "fmi2SetReal", "fmi2DoStep"))

        def get_reals(refs: list[int], array, buffer) -> list[float]:
            get_real(array, len(refs), buffer)
            return list(buffer)

        return (get_reals, lambda refs, array, buffer: set_real(array, len(refs), buffer),
                lambda t, h: do_step(t, h, fmi2True))

    def provides_directional_derivative(self) -> bool:
        description = self.model_description
        interface = description.modelExchange if self.model_exchange else description.coSimulation
        return bool(interface.providesDirectionalDerivative)

    def directional_derivative(self, unknowns: list[str], knowns: list[str], seeds: list[float]) -> list[float]:
        refs = self.variables
        return list(self._call("fmi2GetDirectionalDerivative", "fmi2GetDirectionalDerivative",
                               self._fmu.getDirectionalDerivative, [refs[u].value_reference for u in unknowns],
                               [refs[k].value_reference for k in knowns], list(seeds)))

    def model_exchange_view(self) -> Any:
        """The instance's Model Exchange calls (``mechfmu.master.fmu_model_exchange``); ValueError for co-simulation."""
        from mechfmu.master.fmu_model_exchange import ModelExchangeView
        if not self.model_exchange:
            raise ValueError(f"{self.name} is instantiated as a co-simulation FMU")
        if not hasattr(self, "_view"):
            self._view = ModelExchangeView(self)
        return self._view

    def _errors_since(self, mark: int) -> str:
        return "; ".join(m for s, m in self.messages[mark:] if s >= 2)

    def errors_logged_since(self, serial: int) -> str:
        """The errors (status fmi2Error or worse) this FMU logged from the process's ``log_serial`` ``serial`` on."""
        return "; ".join(m for (s, m), n in zip(self.messages, self._serials) if n >= serial and s >= 2)

    def exchange_functions(self) -> dict[str, Any] | None:
        """The FMU's functions as fmpy loaded them, by FMI 2.0 name, where the compiled exchange
        (``mechfmu.master.exchange``) can call this instance with them (its Real calls at hand); else None."""
        functions = getattr(self._fmu, "_functions", None)
        return functions if isinstance(functions, dict) and {"fmi2GetReal", "fmi2SetReal"} <= set(functions) else None

    def exchange_component(self) -> Any:
        """The instance the compiled exchange passes to ``exchange_functions``: the fmi2Component."""
        return self._fmu.component

    def warnings(self) -> list[str]:
        """Every warning the FMU has logged (status fmi2Warning)."""
        return [m for s, m in self.messages if s == 1]

    def _call(self, kind: str, what, fn, *args, refusable: bool = False):
        """The one way into the FMU: counts and times the call as ``kind`` (the FMI 2.0 function it makes), and
        turns an error status or a logged error into a SlaveError with the FMU's messages. With ``refusable`` a
        discard (a refused step) returns ``REFUSED`` with the reason in ``last_error`` instead. ``what`` names the
        call in the message (a text, or a function that writes it, called only on a failure)."""
        from fmpy.fmi1 import FMICallException
        mark = len(self.messages)
        counted = self._kinds.get(kind) or self._kinds.setdefault(kind, [0, 0])
        clock = self._clock
        start = clock()
        try:
            try:
                result = fn(*args)
            finally:
                counted[0] += 1
                counted[1] += clock() - start
        except FMICallException as exc:
            self.last_error = self._errors_since(mark) or str(exc)
            if refusable and exc.status == 2:  # fmi2Discard
                return REFUSED
            raise SlaveError(f"{self.name}: {what() if callable(what) else what} failed: {self.last_error}") from None
        if len(self.messages) > mark:
            errors = self._errors_since(mark)
            if errors:
                self.last_error = errors
                raise SlaveError(f"{self.name}: {what() if callable(what) else what} failed: {errors}")
        return result

    def _real_plan(self, names: list[str]) -> tuple[list[int], Any, Any] | None:
        """Value references, their ctypes array and a value buffer if every name is a Real (one batched
        call), else None; prepared once per list of names."""
        key = tuple(names)
        if key not in self._plan:
            from fmpy.fmi2 import fmi2Real, fmi2ValueReference
            all_real = all(self.variables[n].type == "Real" for n in names)
            refs = [self._vr[n] for n in names]
            self._plan[key] = ((refs, (fmi2ValueReference * len(refs))(*refs), (fmi2Real * len(refs))())
                               if all_real else None)
        return self._plan[key]

    def set_parameters(self, values: dict[str, Any]) -> None:
        for name, value in values.items():
            info = self.variables.get(name)
            if info is None:
                raise SlaveError(f"{self.name}: no variable named {name!r}")
            vr = [info.value_reference]
            setter = {"Real": self._fmu.setReal, "Integer": self._fmu.setInteger,
                      "Boolean": self._fmu.setBoolean, "String": self._fmu.setString}[info.type]
            try:
                value = coerce(info.type, value)
            except (TypeError, ValueError, OverflowError) as exc:
                problem = exc if isinstance(exc, ValueError) else f"is not a {info.type}"
                raise SlaveError(f"{self.name}: {name} = {number(value)} {problem}") from None
            self._call(f"fmi2Set{info.type}", f"setting {name} = {number(value)}", setter, vr, [value])

    def enter_initialization(self, start_time: float, stop_time: float | None) -> None:
        self.stop_time = stop_time
        self._call("fmi2SetupExperiment", "setupExperiment", self._fmu.setupExperiment, None, start_time, stop_time)
        self._call("fmi2EnterInitializationMode", "enterInitializationMode", self._fmu.enterInitializationMode)

    def exit_initialization(self) -> None:
        self._call("fmi2ExitInitializationMode", "initialization", self._fmu.exitInitializationMode)
        self.end_setup()

    def set(self, names: list[str], values: list[float]) -> None:
        plan = self._real_plan(names)
        if plan is not None:
            refs, array, buffer = plan
            buffer[:] = values  # a value that is not a number is refused here (TypeError), as by fmpy
            self._call("fmi2SetReal", "setting inputs", self._set_reals, refs, array, buffer)
        else:
            for n, v in zip(names, values):
                self.set_parameters({n: v})

    def get(self, names: list[str]) -> list[float]:
        plan = self._real_plan(names)
        if plan is None:
            getter = {"Integer": self._fmu.getInteger, "Boolean": self._fmu.getBoolean,
                      "String": self._fmu.getString, "Real": self._fmu.getReal}
            return [self._call(f"fmi2Get{self.variables[n].type}", f"reading {n}", getter[self.variables[n].type],
                               [self._vr[n]])[0] for n in names]
        return self._call("fmi2GetReal", "reading outputs", self._get_reals, *plan)

    def do_step(self, current_time: float, step_size: float) -> bool:
        return self._call("fmi2DoStep", lambda: f"step at t={measured(current_time)} h={number(step_size)}",
                          self._step, current_time, step_size, refusable=True) is not REFUSED  # the text on a failure

    def event_call(self, function: str) -> Any:
        """An FMI 3.0 instance's ``function`` (enterEventMode, newDiscreteStates, enterStepMode), as every call."""
        return self._call(EVENT_CALLS[function], function, getattr(self._fmu, function))

    def get_state(self) -> Any:
        return self._call("fmi2GetFMUstate", "getFMUstate", self._fmu.getFMUstate)

    def set_state(self, state: Any) -> None:
        self._call("fmi2SetFMUstate", "setFMUstate", self._fmu.setFMUstate, state)

    def free_state(self, state: Any) -> None:
        self._call("fmi2FreeFMUstate", "freeFMUstate", self._fmu.freeFMUstate, state)

    def serialize_state(self, state: Any) -> bytes:
        return self._call("fmi2SerializeFMUstate", "serializeFMUstate", self._fmu.serializeFMUstate, state)

    def deserialize_state(self, data: bytes) -> Any:
        return self._call("fmi2DeSerializeFMUstate", "deSerializeFMUstate", self._fmu.deSerializeFMUstate, data)

    def terminate(self) -> None:
        try:
            self._call("fmi2Terminate", "terminate", self._fmu.terminate)
        finally:
            self.release()

    def release(self) -> None:
        self._call("fmi2FreeInstance", "freeInstance", self._fmu.freeInstance)

    def reset(self) -> None:
        """fmi2Terminate, then fmi2Reset: the instance is back at its start values (instantiated), ready
        for another run without loading and instantiating again; its log starts afresh."""
        self._call("fmi2Terminate", "terminate", self._fmu.terminate)
        before = self._kinds.get("fmi2Reset", [0, 0])[1]
        self._call("fmi2Reset", "reset", self._fmu.reset)
        self._reset_ns = self._kinds["fmi2Reset"][1] - before
        self.__dict__.pop("_view", None)  # its Model Exchange view's modes and next event start afresh too
        self.messages.clear()
        self._serials.clear()
        self.last_error = ""


def _num(text: Any) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None
