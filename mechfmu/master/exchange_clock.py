"""The compiled exchange's clock (mechfmu/master/exchange.c): the processor's counter, calibrated here against
``CLOCK_MONOTONIC``, and a program's ``Clock``, the C structure in which a program keeps what it timed
(``mechfmu.master.fmu_profile`` says what is measured)."""
from __future__ import annotations

import ctypes
import itertools
from typing import Any

from mechfmu.master.fmu_profile import BUDGET

#: the counter and CLOCK_MONOTONIC [ns] when the library was loaded, what reading the counter costs (the fewest
#: ticks between two reads, ticks per read) and seconds per tick measured then (over ``SPAN`` ns)
_calibration: list[Any] = []
SPAN = 2_000_000
_seeds = itertools.count(1)


class Clock(ctypes.Structure):
    _fields_ = [("ticks", ctypes.POINTER(ctypes.c_double)), ("run", ctypes.POINTER(ctypes.c_double)),
                *((name, ctypes.c_int64) for name in ("runs", "timed", "countdown", "elapsed", "untimed", "calls",
                                                      "usual", "usuals", "overhead")),
        *((name, ctypes.c_double) for name in ("read", "budget", "weight", "weights")), ("random", ctypes.c_uint64)]


def _now(library: Any) -> tuple[int, int]:
    counter, ns = ctypes.c_int64(), ctypes.c_int64()
    library.exchange_clock(ctypes.byref(counter), ctypes.byref(ns))
    return counter.value, ns.value


def calibrate(library: Any) -> None:
    """Declare the clock's functions of the loaded ``library`` and calibrate its counter (once per process)."""
    library.exchange_clock.restype = library.exchange_counter_cost.restype = None
    library.exchange_clock.argtypes = [ctypes.POINTER(ctypes.c_int64)] * 2
    library.exchange_counter_cost.argtypes = [ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_double)]
    overhead, read = ctypes.c_int64(), ctypes.c_double()
    library.exchange_counter_cost(ctypes.byref(overhead), ctypes.byref(read))
    start = now = _now(library)
    while now[1] - start[1] < SPAN:  # a first calibration for a run shorter than that
        now = _now(library)
    _calibration[:] = [library, start, overhead.value, read.value, (now[1] - start[1]) * 1e-9 / (now[0] - start[0])]


def seconds_per_tick() -> float:
    """Seconds per tick of the counter: measured against CLOCK_MONOTONIC over the time since the library was loaded
    (the longer, the better)."""
    library, start, _, _, first = _calibration
    now = _now(library)
    return (now[1] - start[1]) * 1e-9 / (now[0] - start[0]) if now[1] - start[1] > SPAN else first


def clock(operations: int) -> tuple[Clock, Any, Any]:
    """A program's clock, its first run timed, its ticks per operation and a run's (ctypes doubles, zero)."""
    ticks, run = (ctypes.c_double * max(1, operations))(), (ctypes.c_double * max(1, operations))()
    _, _, overhead, read, _ = _calibration
    seed = (0x9E3779B97F4A7C15 * next(_seeds)) % 2 ** 64 or 1
    double = ctypes.POINTER(ctypes.c_double)
    return Clock(ctypes.cast(ticks, double), ctypes.cast(run, double), 0, 0, 1, 0, 0, 0, 0, 0, overhead, read, BUDGET,
                 1.0, 0.0, seed), ticks, run
