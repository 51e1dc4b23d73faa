"""The error estimate's companion run on a second core, beside the run it judges.

A co-simulation master's steps go in blocks of compiled calls that leave Python's lock (ctypes releases the GIL),
so on a machine with two free cores the companion at 4h costs the run almost nothing in wall time where it cost a
quarter of it after the run. It runs in a thread with FMU instances of its own (an ``InstancePool`` of its own:
instances are never shared between threads), no progress bar (the run's is the one shown) and its rows in its own
file; it computes exactly what it computes after the run, so the estimate is the same. A Ctrl-C stops both (one
request: ``INTERRUPT``); a run that ends early cancels it (``Alongside.cancel``: it stops at its next recorded
point). Where it runs is ``beside_allowed``'s choice; ``companion_after`` is the companion where it runs after the
run.

The monolithic master's companion is mostly Python (its integrator), which would take turns with the run's for
Python's lock: it runs beside the run in a child process instead (``start_forked``, POSIX ``fork``, on Linux where
this process has no other Python thread: ``mechfmu.master.forked``), with instances of its own made there, its rows
written to a file the run made before the fork. It computes what it computes after the run, bit for bit; it is
waited for after the run (a Ctrl-C while waiting ends it: the estimate is then the one interrupted), and a
companion process that dies (an FMU crashing in it) or does not answer in time costs the estimate, never the run.
It starts once the run has gone on for ``DELAY`` s (``ForkLater``); a shorter run's companion, and any elsewhere,
runs after the run.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mechfmu.master.forked import MESSAGE, CompanionLost, Forked, Interrupted, fork_allowed
from mechfmu.master.instance_pool import InstancePool
from mechfmu.master.observers import Observer

if TYPE_CHECKING:
    from mechfmu.master.companion import StateRows
    from mechfmu.master.result import Result

#: the run's wall time [s] after which the monolithic master's companion starts beside it (``ForkLater``)
DELAY = 0.1

#: the monolithic master's companion: at LOOSENED times its integrator's tolerances on a grid GRID times coarser
LOOSENED, GRID = 1000.0, 20
#: the environment variable that turns the companion beside the run off ("0")
ENVIRONMENT = "MECHFMU_COMPANION_BESIDE"


class Cancelled(Exception):
    """Raised inside the companion's run by ``Stopper`` once the run it judges no longer needs it."""


class Stopper(Observer):
    """An observer of the companion's run that ends it (``Cancelled``) at its next recorded points once ``event``
    is set."""

    def __init__(self, event: threading.Event) -> None:
        self.event = event

    def step_completed(self, run: Any) -> None:
        if self.event.is_set():
            raise Cancelled

    def rows_completed(self, run: Any, rows: Any) -> None:
        self.step_completed(run)

    def takes_rows(self) -> bool:
        return True


class Alongside:
    """``work(event)`` in a thread from now on; ``result()`` joins it and returns what it returned or raises what it
    raised; ``cancel()`` sets ``event`` (which ``work`` hands to a ``Stopper``) and joins it."""

    def __init__(self, work: Callable[[threading.Event], Any]) -> None:
        self.event = threading.Event()
        self._value: Any = None
        self._error: BaseException | None = None

        def target() -> None:
            try:
                self._value = work(self.event)
            except BaseException as exc:  # noqa: BLE001 - handed to the thread that joins
                self._error = exc
        self._thread = threading.Thread(target=target, name="mechfmu error estimate", daemon=True)
        self._thread.start()

    def result(self) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value

    def cancel(self) -> None:
        self.event.set()
        self._thread.join()


def beside_allowed() -> bool:
    """Whether the companion may run beside the run: two cores or more for this process, and not turned off
    (``MECHFMU_COMPANION_BESIDE=0``)."""
    if os.environ.get(ENVIRONMENT, "1").strip() == "0":
        return False
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    return cores >= 2


def start_beside(instantiate: Callable[[], dict[str, Any]], pool: InstancePool,
                 work: Callable[[threading.Event, InstancePool], Any]) -> Alongside | None:
    """``work(stop, instances)`` beside the run, its instances made here first, and the run's into ``pool``: no FMU is
    loaded while the thread lives (fmpy changes the process's working directory while it loads one, which would
    move the other thread's relative paths); an in-process run's components, which load no FMU, are made where
    they run (``instantiate`` makes none). None, the companion left to go after the run, where making them fails
    (the run names the error)."""
    instances = InstancePool(makes=False)
    try:
        for target in (pool, instances):
            for slave in instantiate().values():
                target.keep(slave)
    except Exception:  # noqa: BLE001 - the run makes them again and reports what failed
        instances.close()
        return None
    return Alongside(lambda stop: work(stop, instances))


def companion_beside(companion: Callable[..., tuple[Result | None, StateRows]], stop: threading.Event,
                     instances: InstancePool) -> tuple[Result | None, StateRows]:
    """The companion at 4h in the thread beside the run, with its own FMU instances (``start_beside``), freed at its
    end (``after_beside`` takes it up)."""
    try:
        return companion(4, stop=stop, instances=instances)
    finally:
        instances.close()


def after_beside(found: tuple[Result | None, StateRows], companion: Callable[..., tuple[Result | None, StateRows]],
                 n_steps: int, h: float) -> tuple[tuple[Result, StateRows | None] | None, int, str]:
    """``companion_after``'s answer from the companion at 4h that ran beside the run (``found``): it where it ended
    well; where it failed, or the run has too few steps for it, the one at 2h, after the run in this thread (which
    may make FMU instances)."""
    ran, rows = found
    if ran is not None and ran.ok:
        return (ran, rows), 4, ""
    if ran is not None and ran.status == "interrupted":
        return None, 4, "the companion run was interrupted (SIGINT)"
    return companion_after(companion, False, n_steps, h, factors=(2,))


def companion_after(companion: Callable[..., tuple[Result | None, StateRows]], monolithic: bool, n_steps: int,
                    h: float, factors: tuple[int, ...] = (4, 2)) -> tuple[tuple[Result, StateRows | None] | None, int,
                                                                         str]:
    """The companion run after the run: the monolithic master's at ``LOOSENED`` times its tolerance on a grid
    ``GRID`` times coarser, a co-simulation master's at the first of ``factors`` times h that ends well (4h, else
    2h). (The companion and its rows, or None with the reason; the factor of its step.)"""
    if monolithic:
        factor = GRID if n_steps // GRID >= 2 else 1
        ran, rows = companion(factor, loosened=LOOSENED)
        if ran is not None and ran.ok:
            return (ran, rows), factor, ""
        return None, factor, ("the run has too few steps for a companion" if ran is None else
                              f"the companion run at {LOOSENED:g} times the integrator's tolerance ended {ran.status}")
    note = ""
    for factor in factors:  # at 2h only where the one at 4h fails (a step near where the algorithm fails)
        ran, rows = companion(factor)
        if ran is None:
            note = f"the run has {n_steps} steps, too few for a companion at {factor} times the step"
            continue
        if ran.status == "interrupted":
            return None, factor, "the companion run was interrupted (SIGINT)"
        if ran.ok:
            return (ran, rows), factor, ""
        note = (f"the companion run at {factor} times the step ({factor * h:g} s) failed, a sign that this "
                f"step is near where the algorithm fails: "
                f"{ran.message.splitlines()[0] if ran.message else ran.status}")
    return None, 4, note


def start_forked(companion: Callable[..., tuple[Result | None, StateRows]], n_steps: int, h: float,
                 files: list[StateRows]) -> tuple[Forked, StateRows]:
    """The monolithic master's companion (``companion_after``'s) in a child process from now on, beside the run:
    its instances made there (an ``InstancePool`` of its own), no progress bar, its states written to a file made
    here (added to ``files``: this process's to read and remove). ``after_forked`` takes its answer."""
    from mechfmu.master.companion import StateRows
    rows = StateRows()
    files.append(rows)

    def work() -> tuple[tuple[str, str, dict[str, int]] | None, bool, int, str, list[str], str]:
        made: list[Result | None] = []

        def own(factor: int, *compare: Observer, **options: Any) -> tuple[Result | None, StateRows]:
            ran, _ = companion(factor, *compare, stop=threading.Event(), instances=InstancePool(), rows=rows,
                               **options)
            made.append(ran)
            return ran, rows
        reference, factor, note = companion_after(own, True, n_steps, h)
        rows.close()
        ran = made[-1] if made else None
        summary = None if ran is None else (ran.status, ran.message[:MESSAGE], dict(ran.counters))
        return summary, reference is not None, factor, note, rows.names, rows.error
    return Forked(work), rows


class ForkLater(Observer):
    """An observer of the monolithic master's run that starts its companion in a child process (``start``, a
    ``start_forked``) once the run has gone on for ``DELAY`` s, where ``fork_allowed``: a fork costs the run 10 to
    20 ms (the pages the two processes share, copied as the run writes them), more than a short run's companion
    after it. ``process`` is None where it did not start; ``cancel`` ends it."""

    def __init__(self, start: Callable[[], tuple[Forked, StateRows]]) -> None:
        self.start, self.began = start, time.perf_counter()
        self.process: Forked | None = None
        self.rows: StateRows | None = None

    def initialized(self, run: Any) -> None:
        self.began = time.perf_counter()

    def step_completed(self, run: Any) -> None:
        if self.process is None and time.perf_counter() - self.began >= DELAY and fork_allowed():
            self.process, self.rows = self.start()

    def rows_completed(self, run: Any, rows: Any) -> None:
        self.step_completed(run)

    def takes_rows(self) -> bool:
        return True

    def cancel(self) -> None:
        if self.process is not None:
            self.process.cancel()


def after_forked(forked: ForkLater, companions: list[Result]) -> tuple[tuple[Result, StateRows | None] | None, int,
                                                                        str]:
    """``companion_after``'s answer from the companion that ran in ``forked``'s process, waited for: its result
    (status, message, counters) added to ``companions``, its rows given its states' names. An interrupt request
    while waiting ends it (the estimate interrupted); a companion process that failed leaves no estimate, with the
    reason."""
    from mechfmu.master.result import Result
    assert forked.process is not None and forked.rows is not None, "after_forked: a companion that started"
    rows = forked.rows
    try:  # its work is a fraction of the run's: twice the run and 10 s more is a process that is stuck
        summary, ok, factor, note, names, error = forked.process.result(10 + 2 * (time.perf_counter() - forked.began))
    except Interrupted:
        companions.append(Result("interrupted", "", None))
        return None, GRID, "the companion run was interrupted"
    except CompanionLost as exc:
        return None, GRID, f"the companion run failed: {exc}"
    rows.names, rows.error = names, rows.error or error
    ran = None if summary is None else Result(summary[0], summary[1], None, counters=summary[2])
    if ran is not None:
        companions.append(ran)
    return ((ran, rows) if ok and ran is not None else None), factor, note
