"""The error estimate's companion run, compared in constant memory however long the run.

The run goes first (its rows are the user's from the first step, and Ctrl-C keeps every one): ``Comparison``
holds its states in blocks, folds each block into the states' scales (the largest |y_run|) and writes it
(time, states) to a temporary file (``relay``, a ``StateRows``: 8 bytes per state and point, on disk, not in
memory). The companion (the same algorithm at c·h) runs after it, and ``StateRows`` writes its states at each of
its recorded points to another temporary file. ``Comparison.compare_with`` then reads the run's blocks back as
they were held and compares each with the companion's rows of its time span: at every point both recorded it
keeps, per state, the largest |y_run − y_companion| and when it was. ``Comparison.accuracy`` gives the Richardson
estimate of ``mechfmu.master.accuracy`` from those maxima alone, ``|y_run − y_companion| / ((c·N)^p − 1)``. Where
the companion must go first (``auto`` dividing its step by the companions' estimate), ``Comparison`` is given its
rows at once and compares each block as the run goes.

The states are a slave's Real outputs without feed-through; the estimate keeps those of the run's state columns
that are configuration (``configuration``).
"""
from __future__ import annotations

import math
import os
import tempfile
from typing import TYPE_CHECKING, Any, BinaryIO, cast

import numpy as np

from mechfmu.master.observers import Observer
from mechfmu.master.result import Accuracy

if TYPE_CHECKING:
    from mechfmu.master.result import Result, Run


def configuration(states: list[str], units: dict[str, str]) -> list[str]:
    """The configuration among ``states``: positions, angles, orientations, not rates (a unit with /s),
    unless there are only rates."""
    return [n for n in states if "/s" not in units.get(n, "")] or states


def state_reads(run: Run) -> tuple[list[tuple[Any, list[str]]], dict[str, str]]:
    """Per slave the states the estimate judges, and their units by ``slave.output`` name: its Real outputs without
    feed-through that are among the run's ``state_columns`` and ``configuration`` (all of them where the run names
    no state columns)."""
    reads = [(s, [n for n in s.outputs() if not s.variables[n].depends_on and s.variables[n].type == "Real"])
             for s in run.slaves.values()]
    units = {f"{s.name}.{n}": s.variables[n].unit or "1" for s, names in reads for n in names}
    if run.state_columns is None:
        return reads, units
    judged = set(configuration([n for n in units if n in set(run.state_columns)], units))
    reads = [(s, [n for n in names if f"{s.name}.{n}" in judged]) for s, names in reads]
    return reads, {name: unit for name, unit in units.items() if name in judged}


def outputs_at(run: Run, columns: np.ndarray | None) -> np.ndarray | None:
    """Where the run's ``outputs`` (the compiled reader's values) hold the row's ``columns``: their indices there."""
    if columns is None or run.outputs is None or (len(columns) and columns.max() > len(run.outputs)):
        return None
    return columns - 1


class StateRows(Observer):
    """Writes (time, states...) of every recorded point of a run to a temporary file (float64, native order)."""

    def __init__(self) -> None:
        handle, self.path = tempfile.mkstemp(prefix="mechfmu_companion_", suffix=".f64")
        self.file = os.fdopen(handle, "wb")
        self.names: list[str] = []
        self.reads: list[tuple[Any, list[str]]] = []
        self.columns: np.ndarray | None = None
        self.outputs: np.ndarray | None = None
        self.error = ""  # why the rows could not be written (a full disk): then they are not compared
        self.block, self.filled = np.zeros((ROWS_HELD, 1)), 0  # rows gathered before a write

    def initialized(self, run: Run) -> None:
        self.prepare(run)
        self.step_completed(run)

    def prepare(self, run: Run) -> None:
        """The states of ``run`` and where they are, without writing a row."""
        self.reads, units = state_reads(run)
        self.names = list(units)
        recorded = {name: i for i, name in enumerate(run.column_names)}
        self.columns = (np.array([0, *(recorded[n] for n in self.names)], dtype=np.intp)
                        if all(n in recorded for n in self.names) else None)
        self.outputs = outputs_at(run, None if self.columns is None else self.columns[1:])
        self.block, self.filled = np.empty((ROWS_HELD, 1 + len(self.names))), 0

    def step_completed(self, run: Run) -> None:
        row = self.block[self.filled]
        row[0] = run.time  # the row's time first
        if self.columns is not None:
            outputs = run.outputs
            row[1:] = (outputs[self.outputs] if self.outputs is not None and outputs is not None
                       else np.asarray(run.row, dtype=np.float64)[self.columns[1:]])
        else:
            row[1:] = [x for slave, names in self.reads if names for x in slave.get(names)]
        self.filled += 1
        if self.filled == len(self.block):
            self._write()

    def takes_rows(self) -> bool:
        return self.columns is not None

    def rows_completed(self, run: Run, rows: np.ndarray) -> None:
        assert self.columns is not None  # takes_rows
        taken = 0
        while taken < len(rows):  # the blocks written as the rows one by one fill them
            part = rows[taken:taken + len(self.block) - self.filled]
            self.block[self.filled:self.filled + len(part)] = part[:, self.columns]
            self.filled, taken = self.filled + len(part), taken + len(part)
            if self.filled == len(self.block):
                self._write()

    def _write(self, rows: np.ndarray | None = None) -> None:
        """The rows gathered (or ``rows``: time, then the states, as a ``Comparison`` holds them), to the file
        (none after a failed write)."""
        if rows is None:
            rows, self.filled = self.block[:self.filled], 0
        if self.error or not len(rows):
            return
        try:
            self.file.write(rows.tobytes())
        except OSError as exc:
            self.error = f"the states of a companion run could not be written to {self.path}: {exc.strerror or exc}"

    def close(self) -> None:
        if not self.file.closed:
            self._write()
            try:
                self.file.close()
            except OSError as exc:  # the buffer's last rows
                self.error = self.error or f"the states of a companion run could not be written to {self.path}: {exc}"

    def discard(self) -> None:
        self.close()
        try:
            os.unlink(self.path)
        except OSError:
            pass


#: rows a comparison holds before it folds them into the states' scales, and values at most
ROWS_HELD, HELD_VALUES = 16384, 2 ** 20


class Comparison(Observer):
    """Compares a run with a companion's rows (``StateRows``), keeping maxima only: the run's rows are held in
    blocks of ``ROWS_HELD`` and each block is compared with the companion's rows of its time span (a point
    of both: times within 1e-9 of max(1, |t|)). ``relay`` (a ``StateRows``) also gets the run's own rows, block by
    block (for a run that is itself a companion, or to confirm the estimate). ``companion`` None: the companion
    runs after the run, the blocks are only written to ``relay`` (then required) and compared by
    ``compare_with`` once the companion's rows are there; the same blocks, so the same maxima as compared at once.
    ``grid`` (t0, spacing [s]): the relay gets only the rows on that grid (every companion's points are on it: its
    other rows could never be compared)."""

    def __init__(self, companion: StateRows | None, relay: StateRows | None = None,
                 grid: tuple[float, float] | None = None) -> None:
        if companion is None and relay is None:
            raise ValueError("a comparison without the companion's rows needs a relay for the run's own")
        self.companion, self.relay, self.grid = companion, relay, grid
        self.names: list[str] = []
        self.units: dict[str, str] = {}
        self.largest = np.zeros(0)  # per state: the largest |y_run − y_companion|
        self.when = np.zeros(0)  # and when it was [s]
        self.scale = np.zeros(0)  # per state: the largest |y_run|
        self.common = 0  # points both recorded
        self.block, self.times, self.filled, self.whole = np.zeros((ROWS_HELD, 0)), np.zeros(ROWS_HELD), 0, False
        self.ahead = np.zeros((0, 1))  # the companion's rows read but later than the rows compared so far
        self.file: BinaryIO | None = None  # the companion's rows, as they are read
        self.queued: list[tuple[np.ndarray, np.ndarray]] = []  # blocks' rows not yet taken: (times, states)
        self.queued_rows = 0

    def initialized(self, run: Run) -> None:
        self.reads, self.units = state_reads(run)
        self.names = list(self.units)
        recorded = {name: i for i, name in enumerate(run.column_names)}
        self.columns = (np.array([recorded[n] for n in self.names], dtype=np.intp)
                        if all(n in recorded for n in self.names) else None)
        self.outputs = outputs_at(run, self.columns)
        n = len(self.names)
        self.largest, self.when, self.scale = np.zeros(n), np.full(n, math.nan), np.zeros(n)
        self.whole = self.outputs is not None and run.outputs is not None
        width = len(run.outputs) if self.whole and run.outputs is not None else n
        #: the rows not yet compared and folded into the scales (at most ``HELD_VALUES`` values), and their times
        self.block, self.filled = np.empty((max(1, min(ROWS_HELD, HELD_VALUES // max(1, width))), width)), 0
        self.times = np.empty(len(self.block))
        self.usable = self.companion is not None and self.names == self.companion.names
        self.file = (open(self.companion.path, "rb")  # noqa: SIM115 - closed in close()
                     if self.companion is not None else None)
        self.ahead = np.zeros((0, 1 + n))
        if self.relay is not None:
            self.relay.prepare(run)
        self.step_completed(run)

    def step_completed(self, run: Run) -> None:
        if self.queued:  # after blocks' rows (a master's own point between two blocks): it joins them
            row = np.asarray(run.outputs, dtype=np.float64)[self.outputs] if self.whole else self._picked(run)
            self._queue(np.array([run.time]), row[None, :])
            return
        held = self.block[self.filled]
        if self.whole:  # every output, the states picked when needed (a copy of the reader's values is cheaper)
            held[:] = run.outputs
        else:
            held[:] = self._picked(run)
        self.times[self.filled] = run.time
        self.filled += 1
        if self.filled == len(self.block):
            self._fold()

    def takes_rows(self) -> bool:
        return self.whole or self.columns is not None

    def rows_completed(self, run: Run, rows: np.ndarray) -> None:
        if self.filled:  # the rows held one by one go first (the maxima are the same, in one piece or several)
            held, self.filled = self.block[:self.filled], 0
            self._queue(self.times[:len(held)].copy(), held[:, self.outputs] if self.whole else held.copy())
        picked = 1 + cast(np.ndarray, self.outputs) if self.whole else self.columns
        self._queue(rows[:, 0].copy(), rows[:, picked])  # copies: the rows' array is the next block's

    def _picked(self, run: Run) -> np.ndarray:
        """The run's row's states (``names``) at its current point."""
        return (np.asarray(run.row, dtype=np.float64)[self.columns] if self.columns is not None
                else np.array([x for slave, names in self.reads if names for x in slave.get(names)], dtype=np.float64))

    def _queue(self, times: np.ndarray, states: np.ndarray) -> None:
        self.queued.append((times, states))
        self.queued_rows += len(times)
        if self.queued_rows >= len(self.block):
            self._flush()

    def _flush(self) -> None:
        """The blocks' rows queued since the last flush, taken in one piece (a block of a few rows, as the monolithic
        master's between two integrator steps, costs its call's overhead once per ``block`` rows)."""
        if not self.queued:
            return
        queued, self.queued, self.queued_rows = self.queued, [], 0
        if len(queued) == 1:
            self._take(*queued[0])
            return
        self._take(np.concatenate([times for times, _ in queued]), np.concatenate([states for _, states in queued]))

    def _companion_rows(self, until: float) -> np.ndarray:
        """The companion's rows not yet compared, read up to the first later than ``until`` [s] (or its end)."""
        assert self.file is not None, "the companion's rows are read while comparing"
        width = self.ahead.shape[1]
        pieces = [self.ahead]
        while not len(pieces[-1]) or pieces[-1][-1, 0] <= until:
            data = self.file.read(8 * width * ROWS_HELD)
            rows = np.frombuffer(data[:len(data) - len(data) % (8 * width)], dtype=np.float64).reshape(-1, width)
            if not len(rows):
                break
            pieces.append(rows)
        return np.concatenate(pieces) if len(pieces) > 1 else self.ahead

    def _fold(self) -> None:
        """The rows held since the last fold: into the states' scales (the largest |y|) and, at the points the
        companion has too, into the largest differences."""
        self._flush()
        if not self.filled:
            return
        rows, times = self.block[:self.filled], self.times[:self.filled]
        self.filled = 0
        self._take(times, rows[:, self.outputs] if self.whole else rows)

    def _take(self, times: np.ndarray, states: np.ndarray) -> None:
        """Rows of the run (``times`` [s], ``states`` one row per time) into the scales, the relay and the
        comparison: in one piece or in several, the same maxima (a later equal difference never replaces one)."""
        np.maximum(self.scale, np.abs(states).max(axis=0), out=self.scale)
        if self.relay is not None:
            relayed = np.column_stack((times, states))
            if self.grid is not None:  # a quarter of the spacing: far from the grid's points, and far within it
                t0, spacing = self.grid
                relayed = relayed[np.abs(times - t0 - np.round((times - t0) / spacing) * spacing) <= 0.25 * spacing]
            self.relay._write(relayed)
        if self.usable:
            self._compare(times, states)

    def compare_with(self, companion: StateRows) -> None:
        """Compare the run's rows, written to ``relay`` (the run over and closed), with ``companion``'s, block by
        block as the run held them (``ROWS_HELD``): the maxima the comparison makes as the run goes."""
        assert self.relay is not None and self.companion is None, "compare_with: a deferred comparison only"
        self._fold()
        self.relay.close()
        self.companion = companion
        self.usable = self.names == companion.names
        if not self.usable or self.relay.error:
            return
        width, held = 1 + len(self.names), len(self.block)
        with open(self.relay.path, "rb") as own, open(companion.path, "rb") as self.file:
            self.ahead = np.zeros((0, 1 + len(companion.names)))
            while True:
                data = own.read(8 * width * held)
                rows = np.frombuffer(data[:len(data) - len(data) % (8 * width)], dtype=np.float64).reshape(-1, width)
                if not len(rows):
                    break
                self._compare(rows[:, 0], rows[:, 1:])

    def _compare(self, times: np.ndarray, states: np.ndarray) -> None:
        """One block of the run's rows (``times`` [s], ``states`` one row per time) against the companion's rows
        of its span, into the largest differences."""
        span = 1e-9 * np.maximum(1.0, np.abs(times))
        companion = self._companion_rows(float(times[-1] + span[-1]))
        at = companion[:, 0]
        if len(times) == 1:
            nearer = np.zeros(len(at), dtype=np.intp)
        else:  # the run's point nearest each companion point
            after = np.clip(np.searchsorted(times, at), 1, len(times) - 1)
            nearer = np.where(np.abs(times[after - 1] - at) <= np.abs(times[after] - at), after - 1, after)
        matched = np.abs(at - times[nearer]) <= span[nearer]
        self.ahead = companion[at > times[-1] + span[-1]]  # the rest: between the run's points, not compared
        if not matched.any():
            return
        index = nearer[matched]
        self.common += len(index)
        difference = np.abs(states[index] - companion[matched, 1:])
        difference[np.isnan(difference)] = -np.inf  # a NaN never counts as the largest, as in a comparison
        largest, where = difference.max(axis=0), difference.argmax(axis=0)
        larger = largest > self.largest
        self.largest[larger] = largest[larger]
        self.when[larger] = times[index][where[larger]]

    def close(self) -> None:
        self._fold()
        if self.file is not None and not self.file.closed:
            self.file.close()
        if self.relay is not None:
            self.relay.close()

    def accuracy(self, result: Result, ratio: float, order: int, rtol: float, atol: float, method: str
                 ) -> Accuracy:
        """The Richardson estimate from the maxima (``mechfmu.master.accuracy.richardson``'s, streamed)."""
        self._fold()
        accuracy = Accuracy(rtol, atol, method=method)
        states = set(result.state_columns)
        names = configuration([n for n in self.names if n in states], self.units)
        if not names or self.common < 2:
            accuracy.note = "no state recorded at two common points of the run and its companion"
            return accuracy
        worst = -1.0
        index = {name: i for i, name in enumerate(self.names)}
        for name in names:
            i = index[name]
            error = float(self.largest[i]) / (ratio ** order - 1)
            tolerance = atol + rtol * float(self.scale[i])
            accuracy.states[name] = error
            if error / tolerance > worst:
                worst = error / tolerance
                accuracy.estimate, accuracy.variable, accuracy.tolerance = error, name, tolerance
                accuracy.time = float(self.when[i]) if not math.isnan(self.when[i]) else result.end_time
                accuracy.unit = self.units.get(name, "")
        return accuracy
