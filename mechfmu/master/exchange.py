"""The compiled exchange: a fixed sequence of FMI calls on FMUs (``FmuSlave``) run by one call into C
(mechfmu/master/exchange.c) instead of one Python call per FMI call.

A ``Program`` is built once (a transfer plan, every slave's step, the monolithic master's evaluation of its ODE) and
run at every step. Each FMU gets the calls the Python master makes it, in its order and with its arguments (Jacobi's
step and transfer interleave them across FMUs: ``mechfmu.master.fused_step``), so results are the same bits; it
counts them in each slave's ``calls`` (by kind: ``profiles``), times them (``mechfmu.master.exchange_clock``) and
turns a failed call, or an error an FMU logged during the program, into the ``SlaveError`` (a refused step:
``StepRefused``) the slave's own call raises.

The library is compiled from its source with the system C compiler the first time a process needs it, into the
FMUs' folder (``.native/``), and kept; ``MECHFMU_EXCHANGE=python`` (or no C compiler) leaves every call to Python,
with the same results.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from mechfmu.master import exchange_clock
from mechfmu.master.exchange_codes import (  # noqa: F401 - the codes are this module's too
    ALL_COUNTED,
    CALLED,
    COMPLETED_STEP,
    DO_STEP,
    FREE_STATE,
    FUNCTION_OF,
    FUNCTIONS,
    GET_DERIVATIVES,
    GET_INDICATORS,
    GET_REALS,
    GET_STATE,
    PASS,
    READ_REALS,
    SET_REALS,
    SET_STATE,
    SET_STATES,
    SET_TIME,
    STEP_FROM,
)
from mechfmu.master.exchange_errors import failed, logged_errors
from mechfmu.master.fmu_profile import TIMING
from mechfmu.master.fmu_slave import LOGGED, FmuSlave

if TYPE_CHECKING:
    from mechfmu.master.slaves import Slave

#: set to "python" for the Python path (the same calls one by one)
VARIABLE = "MECHFMU_EXCHANGE"


class Functions(ctypes.Structure):
    """An FMU binary's functions, one table for all its instances in a program."""
    _fields_ = [(name, ctypes.c_void_p) for name in FUNCTIONS]


class Unit(ctypes.Structure):
    _fields_ = [("component", ctypes.c_void_p), ("f", ctypes.POINTER(Functions))]


class Operation(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int32) for name in ("code", "unit", "count", "a", "b")]


class Tables(ctypes.Structure):
    _fields_ = [("refs", ctypes.POINTER(ctypes.c_uint32)), ("source", ctypes.POINTER(ctypes.c_int32)),
                ("factor", ctypes.POINTER(ctypes.c_double)), ("offset", ctypes.POINTER(ctypes.c_double)),
                ("mapped", ctypes.POINTER(ctypes.c_ubyte)), ("values", ctypes.POINTER(ctypes.c_double)),
                ("clock", ctypes.c_void_p)]


_library: list[Any] = []  # the loaded library (None: not available), once per process
_python = threading.local()  # ``through_python``'s flag, per thread


@contextmanager
def through_python() -> Iterator[None]:
    """The runs this thread makes inside the block call every FMU and component through Python, one call at a time
    (as with ``MECHFMU_EXCHANGE=python``): where a caller watches a slave's own calls (``do_step`` wrapped)."""
    before = getattr(_python, "on", False)
    _python.on = True
    try:
        yield
    finally:
        _python.on = before


def library() -> Any:
    """The compiled exchange (ctypes), or None: ``MECHFMU_EXCHANGE=python``, inside ``through_python``, or no C
    compiler to build it."""
    if os.environ.get(VARIABLE, "") == "python" or getattr(_python, "on", False):
        return None
    if not _library:
        path = _built()
        loaded = None
        if path is not None:
            loaded = ctypes.CDLL(str(path))
            loaded.exchange_run.restype = ctypes.c_int64
            loaded.exchange_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                                            ctypes.c_double, ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p,
                                            ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
            loaded.exchange_steps.restype = ctypes.c_int64
            program: list[Any] = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p]
            loaded.exchange_steps.argtypes = (program * 2 + [ctypes.c_double] * 3 + [ctypes.c_int64] * 4
                                              + [ctypes.c_double, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                                                 ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                                                 ctypes.POINTER(ctypes.c_int)])
            exchange_clock.calibrate(loaded)
        _library.append(loaded)
    return _library[0]


def _built() -> Path | None:
    """The library for this source: in the FMUs' folder's ``.native/`` (compiled there if not: written whole, with
    the manifest of its size and SHA-256), else the one a wheel carries (``mechfmu.fmu.prebuilt``), each checked
    against its manifest before it is loaded (``mechfmu.fmu.integrity``: a damaged one is named and compiled anew);
    None without a C compiler or where compiling fails (a damaged library named: the calls go through Python)."""
    from mechfmu.fmu import integrity, locations
    from mechfmu.fmu.native import _compile, exchange_arguments, exchange_library
    from mechfmu.fmu.prebuilt import PREBUILT_DIR, prebuilt_library
    name = exchange_library({"win32": ".dll", "darwin": ".dylib"}.get(sys.platform, ".so"))
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")

    def compile_into(partial: Path) -> None:
        if compiler is None:
            raise RuntimeError("no C compiler ($CC, cc or gcc)")
        flags, sources = exchange_arguments()
        _compile([compiler], ["-shared", "-fPIC", "-fvisibility=hidden", *flags], partial, sources)

    try:
        folder = Path(locations.FMU_DIR)
        return integrity.cached_binary(folder / ".native" / name, compile_into, lambda: locations.build_lock(folder),
                                       prebuilt_library(name), PREBUILT_DIR)
    except integrity.DamagedBinary as exc:
        integrity.notice(f"{exc}; meanwhile the FMI calls go through Python (the same results)")
    except (OSError, RuntimeError):
        pass
    return None


def _array(kind: Any, values: Sequence[Any], item: Any = None) -> Any:
    """A ctypes array of ``kind`` (at least one, zeroed) holding ``values`` (numbers, or tuples of ``item`` numbers
    for a structure); a long one copied whole through numpy (ctypes takes its items one by one)."""
    if len(values) < 256:
        return (kind * max(1, len(values)))(*(kind(*v) for v in values) if item is not None else values)
    array = (kind * len(values))()
    data = np.ascontiguousarray(values, dtype=item or np.dtype(kind))
    ctypes.memmove(array, data.ctypes.data, ctypes.sizeof(array))
    return array


def _function_key(slave: Slave) -> tuple[int | None, ...]:
    """The addresses of the functions ``slave`` is called with (``Slave.exchange_functions``; None where it lacks
    one), in ``FUNCTIONS``' order: found once per set of functions."""
    functions = slave.exchange_functions()
    assert functions is not None  # compilable
    known: Any = slave.__dict__.get("_function_key")
    if known is None or known[0] is not functions:
        key = tuple(None if f is None else ctypes.cast(f, ctypes.c_void_p).value
                    for f in map(functions.get, FUNCTIONS))
        known = (functions, key)
        slave.__dict__["_function_key"] = known
    return known[1]


class Program:
    """A sequence of FMI calls on FMU slaves, built with its methods, then run with ``run``."""

    def __init__(self, runner: Any) -> None:
        self.runner = runner
        self.slaves: list[Slave] = []
        self._unit: dict[int, int] = {}
        self.operations: list[tuple[int, int, int, int, int]] = []
        self.refs: list[int] = []
        self.sources: list[int] = []
        self.maps: list[tuple[float, float] | None] = []
        self.size = 0  # values the program holds
        self._sealed: Any = None
        self.completed = 0  # runs whose every call returned well (each slave's ``calls`` counts them when read)
        self._profiles: tuple[Any, list[dict[str, tuple[int, float]]]] = (None, [])

    def copy(self) -> Program:
        """A new program of the same calls, not sealed (more may be added)."""
        other = Program(self.runner)
        other.slaves, other._unit, other.operations = list(self.slaves), dict(self._unit), list(self.operations)
        other.refs, other.sources, other.maps = list(self.refs), list(self.sources), list(self.maps)
        other.size = self.size
        return other

    def unit(self, slave: Slave) -> int:
        if id(slave) not in self._unit:
            self._unit[id(slave)] = len(self.slaves)
            self.slaves.append(slave)
        return self._unit[id(slave)]

    def _values(self, count: int) -> int:
        start, self.size = self.size, self.size + count
        return start

    def reserve(self, count: int) -> int:
        """Room for ``count`` values the caller puts into ``values`` before ``run``; returns where it starts."""
        return self._values(count)

    def get(self, slave: Slave, names: list[str]) -> int:
        """Read ``names`` (Reals) into the program's values; returns where they start."""
        start, refs = self._values(len(names)), len(self.refs)
        self.refs.extend(slave.variables[n].value_reference for n in names)
        self.operations.append((GET_REALS, self.unit(slave), len(names), refs, start))
        return start

    def pass_values(self, index: list[int], maps: list[tuple[float, float] | None] | None) -> int:
        """The values at ``index``, each through its map (factor·v + offset) if it has one; returns where they are."""
        start, first = self._values(len(index)), len(self.sources)
        self.sources.extend(index)
        self.maps.extend(maps if maps is not None else [None] * len(index))
        self.operations.append((PASS, 0, len(index), first, start))
        return start

    def set(self, slave: Slave, names: list[str], start: int) -> None:
        """Set the Real inputs ``names`` to the values from ``start`` on."""
        refs = len(self.refs)
        self.refs.extend(slave.variables[n].value_reference for n in names)
        self.operations.append((SET_REALS, self.unit(slave), len(names), refs, start))

    def call(self, code: int, slave: Slave, count: int = 0, offset: int = 0) -> None:
        """A call of ``slave`` with the run's time (SET_TIME, DO_STEP), a part of its arrays (states from
        ``offset``, ``count`` long: SET_STATES, GET_DERIVATIVES, GET_INDICATORS) or its FMU state handle
        ``handles[offset]`` (GET_STATE, SET_STATE, FREE_STATE)."""
        self.operations.append((code, self.unit(slave), count, offset, 0))

    def read(self, slave: Slave, count: int, refs: int, start: int) -> None:
        """A recorded step's read of ``count`` outputs into another program's values (``exchange_steps``'s reader:
        its refs from ``refs``, its values from ``start`` on); left out of ``run``. Its calls are the reader's."""
        self.operations.append((READ_REALS, self.unit(slave), count, refs, start))

    def step_from(self, slave: Slave, start: int) -> None:
        """A step of ``slave`` from the time at ``values[start]`` to the run's time (none if that is not later)."""
        self.operations.append((STEP_FROM, self.unit(slave), 0, 0, start))

    def _seal(self) -> Any:
        if max(self.size, len(self.refs), len(self.operations)) >= 2**31:  # its offsets are 32-bit
            raise ValueError(f"a compiled program holds fewer than 2**31 values and operations, not {self.size} "
                             f"values and {len(self.operations)} operations")
        units = (Unit * max(1, len(self.slaves)))()
        shared: dict[tuple[int | None, ...], Functions] = {}  # one table per binary's set of functions
        for unit, slave in zip(units, self.slaves):
            key = _function_key(slave)
            unit.component = slave.exchange_component()
            unit.f = ctypes.pointer(shared.setdefault(key, Functions(*key)))
        operations = _array(Operation, self.operations, np.int32)
        arrays = (_array(ctypes.c_uint32, self.refs), _array(ctypes.c_int32, self.sources),
                  _array(ctypes.c_double, [1.0 if m is None else m[0] for m in self.maps]),
                  _array(ctypes.c_double, [0.0 if m is None else m[1] for m in self.maps]),
                  _array(ctypes.c_ubyte, [m is not None for m in self.maps]),
                  (ctypes.c_double * max(1, self.size))())
        self._functions = list(shared.values())  # kept alive as long as the units that point at them
        tables = Tables(*(ctypes.cast(a, ctypes.POINTER(a._type_)) for a in arrays))
        counts: dict[int, int] = {}
        counted = [getattr(slave, "counted_codes", ALL_COUNTED) for slave in self.slaves]
        for code, unit, *_ in self.operations:
            if code in counted[unit]:  # a step from a time and the reads inside: counted where they are made
                counts[unit] = counts.get(unit, 0) + 1
        self._steps_from = [(self.slaves[unit], b) for code, unit, _, _, b in self.operations if code == STEP_FROM]
        for unit, count in counts.items():
            cast(FmuSlave, self.slaves[unit]).count_calls(self, count, unit)
        return units, operations, arrays, tables

    def _ready(self) -> None:
        self._sealed = self._seal()
        self._head = (self._sealed[0], self._sealed[1], len(self.operations), ctypes.byref(self._sealed[3]))
        self._status = ctypes.c_int(0)
        self._status_ref = ctypes.byref(self._status)
        timing: tuple[Any, Any, Any] = exchange_clock.clock(len(self.operations)) if TIMING[0] else (None, None, None)
        self._clock, self._ticks, self._run = timing
        if self._clock is not None:  # the run finds it in the tables: no argument to convert at every run
            self._sealed[3].clock = ctypes.addressof(self._clock)

    def prepare(self) -> None:
        """Its arrays made now (else at its first run)."""
        if self._sealed is None:
            self._ready()

    @property
    def values(self) -> Any:
        """The program's values (ctypes doubles): what its reads put there, what its writes take."""
        if self._sealed is None:
            self._ready()
        return self._sealed[2][5]

    def run(self, time: float = 0.0, step: float = 0.0, states: np.ndarray | None = None,
            derivatives: np.ndarray | None = None, indicators: np.ndarray | None = None, handles: Any = None) -> None:
        """Every call in order; the arrays (float64, contiguous) are those SET_STATES reads and GET_DERIVATIVES,
        GET_INDICATORS write, ``handles`` (ctypes void pointers) the FMU states' handles. Raises as the slaves' own
        calls do."""
        if self._sealed is None:
            self._ready()
        mark = LOGGED.value
        failed = self.runner.exchange_run(
            *self._head, time, step, None if states is None else states.ctypes.data,
            None if derivatives is None else derivatives.ctypes.data,
            None if indicators is None else indicators.ctypes.data, handles, self._status_ref)
        if failed < 0:
            self.completed += 1
            for slave, start in self._steps_from:
                if time > self._sealed[2][5][start]:
                    cast(FmuSlave, slave).count_call("fmi2DoStep")
            if LOGGED.value != mark:
                self._logged_errors(mark, time, step)
            return
        self._failed(int(failed), self._status.value, mark, time, step)

    def clock_runs(self) -> tuple[int, int]:
        """(runs, runs timed) so far ((0, 0) untimed)."""
        return (0, 0) if getattr(self, "_clock", None) is None else (self._clock.runs, self._clock.timed)

    def profiles(self) -> list[dict[str, tuple[int, float]]]:
        """Per unit (slave), per kind (the FMI 2.0 function): the calls its completed runs made (those of a step
        from a time and of a failed run are counted by the slave) and the seconds inside all its runs' calls: how
        the timed runs divide among the calls (each run weighted by the runs it stands for), of the program's whole
        time in its untimed runs (mean) times its runs; the timed runs scaled to all runs where every run was
        timed."""
        runs, timed = self.clock_runs()
        if self._profiles[0] != (self.completed, runs):
            scale = 0.0
            if timed:
                counted = sum(self._ticks[k] for k, op in enumerate(self.operations) if op[0] != PASS)
                untimed = runs - timed  # their mean time is the program's own, undisturbed by the counter's reads
                whole = self._clock.untimed / untimed * runs if untimed else counted * runs / self._clock.weights
                scale = exchange_clock.seconds_per_tick() * whole / counted if counted > 0 else 0.0
            found: list[dict[str, tuple[int, float]]] = [{} for _ in self.slaves]
            for k, (code, unit, *_) in enumerate(self.operations):
                if code != PASS:
                    kind, calls = FUNCTION_OF[code], 0 if code in (STEP_FROM, READ_REALS) else self.completed
                    before = found[unit].get(kind, (0, 0.0))
                    found[unit][kind] = (before[0] + calls, before[1] + (self._ticks[k] * scale if timed else 0.0))
            self._profiles = ((self.completed, runs), found)
        return self._profiles[1]

    def _logged_errors(self, mark: int, time: float, step: float) -> None:
        """An error logged during a run whose calls all returned well: its slave's error (``exchange_errors``)."""
        logged_errors(self, mark, time, step)

    def _failed(self, index: int, status: int, mark: int, time: float, step: float, counted: bool = False) -> None:
        """Operation ``index`` returned ``status``: the calls up to it counted (unless ``counted`` already), its
        slave's error raised (``exchange_errors``)."""
        failed(self, index, status, mark, time, step, counted)
