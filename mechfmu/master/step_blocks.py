"""Steps in blocks: the master's loop of Jacobi steps, and of the monolithic master's communication points between
its integrator's steps, run by the compiled exchange (``exchange_steps`` in ``mechfmu/master/exchange.c``), many
steps a call, the recorded rows handed to the observers a block at a time.

Each step is the one ``simulate``'s loop takes: Jacobi's fused step-and-transfer program at t = t0 + n·h over t_next
− t (the last step ending at the stop), or the monolithic master's accepted point (``PointBlocks``); then, at a
recorded point, the compiled reader's read and the divergence check (every value finite and within the bound).
Jacobi's reads are made inside its step's program (``fused_step.add_reads``: each FMU's right after its last call
there, where its outputs are already those of the step's end). The same calls with the same arguments, so the same
values, bit for bit; what changes is that Python runs once per block, not once per step. It is taken where nothing
else happens in a step: no substeps, event location, energy audit or step control (the monolithic master: no
constraint forces), every slave an FMU the compiled exchange calls, no extra columns, and every observer taking
blocks of rows (``Observer.takes_rows``). A block is as long as about ``SECONDS`` of steps (Ctrl-C is answered
between blocks) and holds at most ``VALUES`` values. A step that fails, a row beyond the bound and a message an FMU
logged end a block where they happen; the master goes on from there as it does step by step.
"""
from __future__ import annotations

import ctypes
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from mechfmu.master import dense_points, exchange
from mechfmu.master.fmu_slave import LOGGED
from mechfmu.master.fused_step import fused_program, reading_program

if TYPE_CHECKING:
    from mechfmu.master.algorithms.base import CouplingAlgorithm
    from mechfmu.master.coupled_system import CoupledSystem
    from mechfmu.master.observers import Observer
    from mechfmu.master.result import Run

#: the wall time a block aims at [s], and the most values (rows times columns) its rows hold
SECONDS, VALUES = 0.02, 1 << 19
#: whether a Jacobi block's reads go inside its step program (``fused_step.add_reads``); [False]: the reader apart
READS_INSIDE = [True]
#: ``exchange_steps``'s reasons to end a block early
DIVERGED, LOGGED_IN_STEP, READ_STOPPED = -2, -3, -4


class StepBlocks:
    """``advance`` takes steps n, n + 1, ... of a run as blocks; made by ``step_blocks`` where it can."""

    def __init__(self, algo: CouplingAlgorithm, program: Any, run: Run, observers: list[Observer], every: int,
                 t0: float, h: float, t_stop: float, n_steps: int, bound: float,
                 read_of: dict[int, int] | None = None) -> None:
        self.algo, self.program, self.run, self.observers = algo, program, run, observers
        assert run._reader is not None  # step_blocks makes one only with a compiled reader
        self.reader: Any = run._reader
        #: with the reader's reads inside ``program`` (``fused_step.add_reads``): per read there, the reader's one
        self.read_of = read_of
        self.every, self.t0, self.h, self.t_stop, self.n_steps, self.bound = every, t0, h, t_stop, n_steps, bound
        self.width = self.reader.size
        self.most = max(1, VALUES // (1 + self.width))  # rows a block holds
        self.size = min(64, self.most)  # steps the next block takes (grows to about SECONDS of steps)
        self.rows = np.empty((self.size, 1 + self.width))  # grown with size: a short run's blocks are small
        self.outcome = (ctypes.c_int64 * 4)()
        self.status = ctypes.c_int(0)
        #: what the last block left to the master: (step, what stopped it, the message count before it, the failed
        #: read operation) or None
        self.left: tuple[int, int, int, int] | None = None
        self.diverged = False  # the last block's last row is beyond the bound
        self.outcome_step = 0  # the block's index of the step it left

    def advance(self, n: int) -> int:
        """Steps from ``n`` on, as many as the next block takes: the rows recorded on the way handed to the
        observers. Returns the next step; ``left`` says where a block stopped early. Raises the slave's error of a
        failed step (the rows before it handed over)."""
        self.program.prepare()
        self.reader.prepare()
        count = self._count(n)
        if len(self.rows) < self.size:
            self.rows = np.empty((self.size, 1 + self.width))
        states, state_count = self._states()
        started = time.perf_counter()
        reads = self.reader._head if self.read_of is None else (None, None, -1, self.reader._head[3])
        done = self.program.runner.exchange_steps(
            *self.program._head, *reads, self.t0, self.h, self.t_stop, n, count, self.n_steps, self.every,
            self.bound, self.rows.ctypes.data, len(self.rows), self.width, states, state_count,
            ctypes.addressof(LOGGED), self.outcome, self.status)
        elapsed = time.perf_counter() - started
        self.algo.step_seconds += elapsed
        self.algo.counters["steps"] += done
        self.program.completed += done
        if done:
            self._completed(n + done - 1, done - 1)
        recorded, why, mark, read_failed = self.outcome
        self.reader.completed += recorded
        if self.read_of is not None and self._recorded(n + done) and (why >= 0 or (
                why in (LOGGED_IN_STEP, READ_STOPPED) and read_failed >= 0)):  # reads not part of the step's row
            self._reads_made(why if why >= 0 else read_failed + 1)
        run = self.run
        if done:
            run.step_index, run.time = n + done, self.t_next(n + done - 1)
        if recorded:
            rows = self.rows[:recorded]
            run._row_time, run._row, run._extras = float(rows[-1, 0]), None, []
            for obs in self.observers:
                obs.rows_completed(run, rows)
        if why == -1 and done == count:
            self.size = max(1, min(self.most, int(self.size * min(4.0, SECONDS * done / max(elapsed, 1e-9)))))
        self.diverged = why == DIVERGED
        self.left = None if why in (-1, DIVERGED) else (n + done, why, mark, read_failed)
        self.outcome_step = done  # the block's index of the step left
        if why >= 0:  # a call of step n + done failed: its error, as the step's own run raises it
            self.program._failed(why, self.status.value, mark, *self._at(n + done))
        return n + done

    def ready(self, n: int) -> bool:
        """Whether a block can start at step ``n`` (else the master takes that step itself)."""
        return True

    def _recorded(self, n: int) -> bool:
        return not ((n + 1) % self.every and n + 1 < self.n_steps)

    def _reads_made(self, before: int | None) -> None:
        """The calls of the reads inside the program before its operation ``before`` (None: every one) in a step
        the block left: made, and not part of a completed row (each slave counts them)."""
        for k, r in self.read_of.items() if self.read_of is not None else ():
            if before is None or k < before:
                self.reader.slaves[self.reader.operations[r][1]].count_call("fmi2GetReal")

    def _count(self, n: int) -> int:
        """How many steps the block from step ``n`` takes: ``size`` recorded rows' worth (the block ends early at a
        recorded step it has no room for)."""
        return min(self.size * self.every, self.n_steps - n)

    def _states(self) -> tuple[int | None, int]:
        """The block's states (an address, per step ``state_count`` values) or None."""
        return None, 0

    def _at(self, n: int) -> tuple[float, float]:
        """The time and step size step ``n``'s program is run with."""
        t = self.t0 + n * self.h
        return t, self.t_next(n) - t

    def _completed(self, n: int, k: int) -> None:
        """After the program of step ``n``, the block's ``k``-th, returned well."""

    def take(self, n: int, record: Callable[[float], None]) -> tuple[int, bool]:
        """``advance`` from step ``n``, and the step a block left (``finish_left``) with its point: recorded by
        ``record`` (which reads the row at a time and hands it over) or handed over as read. Returns the next step
        and whether the row handed over last is one to check for divergence (a block's last row that is beyond
        the bound, or the step left)."""
        n = self.advance(n)
        if self.left is None:
            return n, self.diverged
        left = self.finish_left()
        if left == "read":
            record(self.run.time)
        elif left == "hand":
            for obs in self.observers:
                obs.step_completed(self.run)
        return n + 1, bool(left)

    def t_next(self, n: int) -> float:
        """Where step ``n`` ends, as ``simulate``'s loop puts it."""
        end = self.t0 + (n + 1) * self.h
        return min(end, self.t_stop) if n == self.n_steps - 1 else end

    def finish_left(self) -> str:
        """The step a block stopped at for a logged message or a failed read: its program ran (and for a read, its
        read): the messages judged as the step's own run judges them (an error raised), the step counted. Returns
        what is left of it: "read" (its point is a recorded one, not read yet), "hand" (read, not handed to the
        observers) or ""."""
        assert self.left is not None
        n, why, mark, read_failed = self.left
        self.left = None
        t_next = self.t_next(n)
        self.program.completed += 1
        if why == LOGGED_IN_STEP:
            self.program._logged_errors(mark, *self._at(n))
        self._completed(n, self.outcome_step)
        self.algo.counters["steps"] += 1
        self.run.step_index, self.run.time = n + 1, t_next
        if why == LOGGED_IN_STEP and (self.read_of is None or read_failed >= 0 or not self._recorded(n)):
            return "read" if self._recorded(n) else ""
        if read_failed >= 0 and self.read_of is not None:  # a read inside the program: its calls counted by advance
            self.reader._failed(self.read_of[read_failed], self.status.value, mark, 0.0, 0.0, counted=True)
        elif read_failed >= 0:
            self.reader._failed(read_failed, self.status.value, mark, 0.0, 0.0)
        self.reader.completed += 1
        self.reader._logged_errors(mark, 0.0, 0.0)
        self.run._row_time, self.run._row, self.run._extras = t_next, None, []
        return "hand"

class PointBlocks(StepBlocks):
    """The monolithic master's communication points in blocks: the points its integrator has passed (none of them
    at or after a pending state event or the integrator's bound), each the point ``Monolithic._step_impl`` accepts
    (the dense output there, or the integrator's state at its own point; its accept program: the states put, the
    integrator step completed), its row read and checked in the compiled exchange; the integrator steps, events and
    restarts stay the master's own, step by step."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.points = np.empty((self.size, len(cast(Any, self.algo).solver.y)))
        self.count = 0

    def ready(self, n: int) -> bool:
        algo, solver = cast(Any, self.algo), cast(Any, self.algo).solver
        if algo.status != "ok" or not algo._started:
            return False
        pending = algo.pending[0] if algo.pending is not None else math.inf
        if len(self.points) < self.size:
            self.points = np.empty((self.size, self.points.shape[1]))
        finished, count, most = solver.status == "finished", 0, min(self.size, self.most, self.n_steps - n)
        parts: Any = getattr(algo.dense, "parts", None)
        compiled = dense_points.compiled() if parts is not None and dense_points.usable(parts) else None
        if compiled is not None:
            y = np.ascontiguousarray(solver.y, dtype=float)
            count = compiled.fill(self.t0, self.h, self.t_stop, n, most, self.n_steps, pending, solver.t, finished,
                                  y, parts, self.points)
            t = self.t0 + n * self.h
            if count and algo._evaluated == (t + (self.t_next(n) - t), self.points[0].tobytes()):
                count = 0  # its states put already: the master completes the step alone
        while compiled is None and count < most:
            t = self.t0 + (n + count) * self.h
            end = t + (self.t_next(n + count) - t)
            if not (pending > end and not (finished and solver.t <= end) and solver.t >= end):
                break  # an event, the integrator's bound or a step to take first: the master's
            x = solver.y if solver.t == end else np.asarray(algo.dense(end), dtype=float)
            if count == 0 and algo._evaluated == (end, x.tobytes()):
                break  # its states put already: the master completes the step alone
            self.points[count] = x
            count += 1
        self.count = count
        return count > 0

    def _count(self, n: int) -> int:
        return self.count

    def _states(self) -> tuple[int | None, int]:
        return self.points.ctypes.data, self.points.shape[1]

    def _at(self, n: int) -> tuple[float, float]:
        t = self.t0 + n * self.h
        return t + (self.t_next(n) - t), 0.0

    def _completed(self, n: int, k: int) -> None:
        algo = cast(Any, self.algo)
        end = self._at(n)[0]
        for component in algo.clocked:
            component.time = end
        algo._evaluated = (end, self.points[k].tobytes())


#: what a run's blocks would run: their class, the program of a step, and the map of the reads inside it or None
Prepared = tuple[type["StepBlocks"], Any, "dict[int, int] | None"]


def blocks_program(algo: CouplingAlgorithm, system: CoupledSystem, run: Run, n_steps: int) -> Prepared | None:
    """What the run's blocks would run (made in its set-up, before the observers are told it is initialized): for
    Jacobi the fused step with the reader's reads inside (``fused_step.reading_program``); None where the run
    cannot take its steps in blocks whatever its observers."""
    from mechfmu.master.algorithms.fixed_step import Jacobi
    from mechfmu.master.algorithms.monolithic import Monolithic
    if (type(algo) not in (Jacobi, Monolithic) or algo.controller is not None or algo.locator is not None
            or algo.audit is not None or algo.config["substeps"] != 1 or run._reader is None
            or run._extra is not None or exchange.library() is None or n_steps < 2):
        return None
    if isinstance(algo, Monolithic):
        if algo.compiled is None or algo.forces is not None or "accept" not in algo.compiled:
            return None
        return PointBlocks, algo.compiled["accept"], None
    program = fused_program(system, cast(Jacobi, algo)._plan(system))
    if program is None or program._steps_from:
        return None
    program, read_of = (reading_program(program, run._reader) if READS_INSIDE[0] else None) or (program, None)
    return StepBlocks, program, read_of


def step_blocks(algo: CouplingAlgorithm, run: Run, observers: list[Observer], every: int, t0: float, h: float,
                t_stop: float, n_steps: int, bound: float, prepared: Prepared | None) -> StepBlocks | None:
    """The run's steps in blocks where they can be (the module's docstring says where; ``prepared``: its
    ``blocks_program``), else None."""
    if prepared is None or not all(obs.takes_rows() for obs in observers):
        return None
    kind, program, read_of = prepared
    return kind(algo, program, run, observers, every, t0, h, t_stop, n_steps, bound, read_of)
