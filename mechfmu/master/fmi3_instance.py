"""``Fmi3Instance``: an FMI 3.0 FMU instance (fmpy's ``FMU3Slave`` or ``FMU3Model``) under the names of fmpy's FMI 2.0
instances, so that ``FmuSlave`` and its Model Exchange view drive FMI 2.0 and 3.0 FMUs alike, and a scenario mixes
them. What differs is said here:

- co-simulation is instantiated with event mode used and early return allowed (an FMU that never returns early
  steps as before); leaving initialization mode it passes through event mode (fmi3UpdateDiscreteStates) into step
  mode, as FMI 3.0 asks;
- the intermediate update at a step's end (and at each early return's end) goes to ``on_intermediate(time)``,
  which answers the time to return early at, or None (mechfmu/master/algorithms/early_return.py). Without it, an
  FMU that returns early or needs event handling stops the run with an error (its step did not reach the end the
  master asked for); ``returned`` keeps the last fmi3DoStep's outputs;
- ``require(references, tolerance)`` instantiates it anew with those inputs among ``requiredIntermediateVariables``:
  the FMU then asks for them at every stage of its step, and ``on_inputs(time)`` sets them
  (mechfmu/master/algorithms/intermediate_inputs.py);
- ``setupExperiment``'s tolerance and times are kept for ``fmi3EnterInitializationMode``, which takes them;
- fmi3UpdateDiscreteStates answers ``newDiscreteStates`` as fmpy's FMI 2.0 instance does (a tuple);
- the types: Float64 is Real, Int32 Integer (``TYPES``), as ``FmuSlave`` reads variables;
- an array variable's elements (mechfmu/fmu/fmi3_arrays.py) have value references of their own here (``elements``:
  each one's array, index and length), from ``ELEMENT_REFERENCES`` up, never passed to the FMU: a read or write of
  elements reads or writes their arrays whole (a write of some of an array's elements first reads the others).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mechfmu.components.number_text import measured
from mechfmu.master.slaves import SlaveError

#: an FMI 3.0 variable's type as FMI 2.0 names it (the master's types)
TYPES = {"Float64": "Real", "Int32": "Integer", "Boolean": "Boolean", "String": "String"}
#: the first value reference the master gives an array's element (above every 32-bit one an FMU can have)
ELEMENT_REFERENCES = 1 << 32


class Layout:
    """Value references as the master gives them (an element's its own) laid out as the FMU takes them: the distinct
    variables in order (``references``), the values each has (``counts``), and per one asked its place among the
    values (``places``)."""

    def __init__(self, asked: list[int], elements: dict[int, tuple[int, int, int]]):
        self.references: list[int] = []
        self.counts: list[int] = []
        start: dict[int, int] = {}
        self.places: list[int] = []
        total = 0
        for reference in asked:
            array, index, length = elements.get(reference, (reference, 0, 1))
            if array not in start:
                start[array] = total
                self.references.append(array)
                self.counts.append(length)
                total += length
            self.places.append(start[array] + index)
        self.total = total


def read_fmi3_interfaces(md: Any, folder: str) -> None:
    """What fmpy leaves out of an FMI 3.0 model description (unpacked in ``folder``), set on ``md``'s interfaces:
    providesDirectionalDerivative from FMI 3.0's providesDirectionalDerivatives (fmpy reads FMI 2.0's name only)."""
    import xml.etree.ElementTree as ET
    from pathlib import Path
    root = ET.parse(Path(folder) / "modelDescription.xml").getroot()
    for interface, tag in ((md.modelExchange, "ModelExchange"), (md.coSimulation, "CoSimulation")):
        element = root.find(tag)
        if interface is not None and element is not None:
            interface.providesDirectionalDerivative = element.get("providesDirectionalDerivatives") == "true"


class Fmi3Instance:
    """An FMI 3.0 instance of the FMU unpacked in ``unzipped`` (``md`` its model description); ``log(status, text)``
    takes its messages."""

    #: the FMI 2.0 functions the compiled exchange calls directly (``mechfmu.master.exchange``): none, it steps an
    #: FMI 3.0 FMU through Python
    _functions: dict[str, Any] = {}

    def __init__(self, md: Any, unzipped: str, name: str, model_exchange: bool, log: Any):
        from mechfmu.master.fmpy_loading import typed_class
        interface = md.modelExchange if model_exchange else md.coSimulation
        self.model_exchange = model_exchange
        self._fmu = typed_class(3, model_exchange)(
            guid=md.guid, unzipDirectory=unzipped, modelIdentifier=interface.modelIdentifier, instanceName=name)
        self._log = log
        self._experiment: tuple[float | None, float, float | None] = (None, 0.0, None)
        self.component = None
        self.name = name
        #: the master's answer to an intermediate update at a time [s]: the time to return early at, or None
        self.on_intermediate: Callable[[float], float | None] | None = None
        #: an exception ``on_intermediate`` raised (a ctypes callback cannot pass it on): raised after the step
        self.callback_error: BaseException | None = None
        #: the last fmi3DoStep's eventHandlingNeeded, terminateSimulation, earlyReturn, lastSuccessfulTime
        self.returned: tuple[bool, bool, bool, float] = (False, False, False, 0.0)
        #: per element value reference (``ELEMENT_REFERENCES`` up): its array's value reference, index, length
        self.elements: dict[int, tuple[int, int, int]] = {}
        #: the inputs the FMU asks for inside a step (value references), the tolerance of its integration then, and
        #: the master's answer: the inputs set at a time [s] inside the step
        self.required: list[int] = []
        self.tolerance: float | None = None
        self.on_inputs: Callable[[float], None] | None = None
        self._logging = False

    def instantiate(self, callbacks: Any = None, loggingOn: bool = False) -> None:
        def log(_environment, status, _category, message):
            self._log(status, message.decode("utf-8", "replace"))

        self._logging = loggingOn
        if self.model_exchange:
            self._fmu.instantiate(loggingOn=loggingOn, logMessage=log)
        else:
            self._fmu.instantiate(loggingOn=loggingOn, eventModeUsed=True, earlyReturnAllowed=True, logMessage=log,
                                  intermediateUpdate=self._intermediate_update,
                                  requiredIntermediateVariables=self.required or None)
        self.component = self._fmu.component

    def require(self, references: list[int], tolerance: float | None) -> None:
        """Before initialization: instantiated anew (if they differ) with the inputs at ``references`` (the
        master's: an element's stands for its array) given inside each step, integrated to ``tolerance``."""
        required = sorted({self.elements.get(r, (r, 0, 1))[0] for r in references})
        if (required, tolerance if required else None) == (self.required, self.tolerance):
            return
        self._fmu.fmi3FreeInstance(self._fmu.component)  # the library stays loaded (fmpy's freeInstance unloads it)
        self.required, self.tolerance = required, tolerance if required else None
        self.instantiate(loggingOn=self._logging)

    def _intermediate_update(self, _environment, time, set_requested, _get_allowed, _finished, can_return_early,
                             requested, when) -> None:
        requested[0] = False
        if set_requested:
            if self.on_inputs is not None and self.callback_error is None:
                try:
                    self.on_inputs(time)
                except BaseException as exc:  # noqa: BLE001 - kept for after the step, as below
                    self.callback_error = exc
            return
        handler = self.on_intermediate
        if handler is None or not can_return_early or self.callback_error is not None:
            return
        try:
            at = handler(time)
        except BaseException as exc:  # noqa: BLE001 - kept for after the step: ctypes would print and drop it
            self.callback_error = exc
            return
        if at is not None:
            requested[0], when[0] = True, at

    def setupExperiment(self, tolerance: float | None, startTime: float, stopTime: float | None) -> None:
        self._experiment = (tolerance, startTime, stopTime)

    def enterInitializationMode(self) -> None:
        tolerance, start, stop = self._experiment
        tolerance = tolerance if tolerance is not None else self.tolerance
        self._fmu.enterInitializationMode(tolerance=tolerance, startTime=start, stopTime=stop)

    def exitInitializationMode(self) -> None:
        self._fmu.exitInitializationMode()
        if not self.model_exchange:  # from event mode into step mode
            self._fmu.updateDiscreteStates()
            self._fmu.enterStepMode()

    def doStep(self, currentCommunicationPoint: float, communicationStepSize: float) -> None:
        self.returned = self._fmu.doStep(currentCommunicationPoint, communicationStepSize)
        error, self.callback_error = self.callback_error, None
        if error is not None:
            raise error
        event, terminate, early, last = self.returned
        if terminate:
            raise SlaveError(f"{self.name}: asked to terminate the simulation in the step from "
                             f"t={measured(currentCommunicationPoint)} s")
        if (early or event) and self.on_intermediate is None:
            what = f"returned early at t={measured(last)} s" if early else "needs event handling"
            raise SlaveError(f"{self.name}: {what} in the step from t={measured(currentCommunicationPoint)} s, and "
                             "this run does not handle FMI 3.0 events: run with events=on")

    def enterStepMode(self) -> None:
        self._fmu.enterStepMode()

    def _layout(self, vr: list[int]) -> Layout | None:
        return Layout(vr, self.elements) if self.elements and any(r in self.elements for r in vr) else None

    def getReal(self, vr: list[int]) -> list[float]:
        layout = self._layout(vr)
        if layout is None:
            return self._fmu.getFloat64(vr)
        values = self._fmu.getFloat64(layout.references, layout.total)
        return [values[k] for k in layout.places]

    def setReal(self, vr: list[int], values: list[float]) -> None:
        layout = self._layout(vr)
        if layout is None:
            self._fmu.setFloat64(vr, values)
            return
        whole: list[float | None] = [None] * layout.total
        for place, value in zip(layout.places, values):
            whole[place] = value
        if any(value is None for value in whole):  # some elements of an array: the others as they are
            for place, value in zip(range(layout.total), self._fmu.getFloat64(layout.references, layout.total)):
                if whole[place] is None:
                    whole[place] = value
        self._fmu.setFloat64(layout.references, whole)

    def getInteger(self, vr: list[int]) -> list[int]:
        return self._fmu.getInt32(vr)

    def setInteger(self, vr: list[int], values: list[int]) -> None:
        self._fmu.setInt32(vr, values)

    def getBoolean(self, vr: list[int]) -> list[bool]:
        return self._fmu.getBoolean(vr)

    def setBoolean(self, vr: list[int], values: list[bool]) -> None:
        self._fmu.setBoolean(vr, values)

    def getString(self, vr: list[int]) -> list[str]:
        return [v.decode("utf-8") if isinstance(v, bytes) else v for v in self._fmu.getString(vr)]

    def setString(self, vr: list[int], values: list[str]) -> None:
        self._fmu.setString(vr, values)

    def getDirectionalDerivative(self, vUnknown_ref: list[int], vKnown_ref: list[int], dvKnown: list[float]) -> Any:
        unknowns, knowns = self._layout(vUnknown_ref), self._layout(vKnown_ref)
        if unknowns is None and knowns is None:
            return self._fmu.getDirectionalDerivative(vUnknown_ref, vKnown_ref, dvKnown)
        unknowns = unknowns or Layout(vUnknown_ref, {})
        knowns = knowns or Layout(vKnown_ref, {})
        seed = [0.0] * knowns.total
        for place, value in zip(knowns.places, dvKnown):
            seed[place] += value
        sensitivity = self._fmu.getDirectionalDerivative(unknowns.references, knowns.references, seed,
                                                          unknowns.total)
        return [sensitivity[k] for k in unknowns.places]

    def getFMUstate(self) -> Any:
        return self._fmu.getFMUState()

    def setFMUstate(self, state: Any) -> None:
        self._fmu.setFMUState(state)

    def freeFMUstate(self, state: Any) -> None:
        self._fmu.freeFMUState(state)

    def serializeFMUstate(self, state: Any) -> bytes:
        return self._fmu.serializeFMUState(state)

    def deSerializeFMUstate(self, data: bytes) -> Any:
        return self._fmu.deserializeFMUState(data)

    def terminate(self) -> None:
        self._fmu.terminate()

    def freeInstance(self) -> None:
        self._fmu.freeInstance()

    def reset(self) -> None:
        self._fmu.reset()

    # Model Exchange

    def setTime(self, time: float) -> None:
        self._fmu.setTime(time)

    def setContinuousStates(self, x: Any, nx: int) -> None:
        self._fmu.setContinuousStates(x, nx)

    def getContinuousStates(self, x: Any, nx: int) -> None:
        self._fmu.getContinuousStates(x, nx)

    def getDerivatives(self, dx: Any, nx: int) -> None:
        self._fmu.getContinuousStateDerivatives(dx, nx)

    def getEventIndicators(self, z: Any, nz: int) -> None:
        self._fmu.getEventIndicators(z, nz)

    def enterEventMode(self) -> None:
        self._fmu.enterEventMode()

    def newDiscreteStates(self) -> tuple[bool, bool, bool, bool, bool, float]:
        """fmi3UpdateDiscreteStates's outputs in the order of fmpy's fmi2NewDiscreteStates: discrete states need an
        update, terminate, nominals changed, values changed, next event time defined, next event time."""
        return self._fmu.updateDiscreteStates()

    def enterContinuousTimeMode(self) -> None:
        self._fmu.enterContinuousTimeMode()

    def completedIntegratorStep(self, noSetFMUStatePriorToCurrentPoint: bool = True) -> tuple[bool, bool]:
        return self._fmu.completedIntegratorStep(noSetFMUStatePriorToCurrentPoint)
