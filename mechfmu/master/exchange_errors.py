"""The errors of a compiled program's run (``mechfmu.master.exchange.Program``): a call that failed, or an error
an FMU logged during a run whose calls all returned well, raised as the slave's own call raises it. An in-process
component's slave (``LocalSlave.judge``) judges its instance's messages itself, as its own calls do."""
from __future__ import annotations

from typing import Any, cast

from mechfmu.components.number_text import measured, number
from mechfmu.master.exchange_codes import CALLED, DO_STEP, FUNCTION_OF, PASS, READ_REALS, SET_TIME, STEP_FROM
from mechfmu.master.fmu_slave import FmuSlave
from mechfmu.master.slaves import SlaveError, StepRefused

#: a ``mechfmu.master.exchange.Program`` (which calls these: not imported here)
Program = Any


def what(code: int, time: float, step: float) -> str:
    """The call of operation ``code`` as a failure names it."""
    if code == DO_STEP:
        return f"step at t={measured(time)} h={number(step)}"
    return f"fmi2SetTime({measured(time)})" if code == SET_TIME else CALLED[code]


def span(program: Program, code: int, b: int, time: float, step: float) -> tuple[float, float]:
    """The time and step size of operation (``code``, ``b``): a step from a time's own, else the run's."""
    if code == STEP_FROM:
        start = program._sealed[2][5][b]
        return start, time - start
    return time, step


def logged_errors(program: Program, mark: int, time: float, step: float) -> None:
    """An error an FMU logged (from the process's message count ``mark`` on) during a run of ``program`` whose
    calls all returned well: its slave's SlaveError (an in-process component's messages judged by its slave at its
    first call)."""
    judged: set[int] = set()
    for code, unit, _, _, b in program.operations:
        if code in (PASS, READ_REALS):
            continue
        slave = program.slaves[unit]
        judge = getattr(slave, "judge", None)
        if judge is not None:
            if unit not in judged:
                judged.add(unit)
                judge(code, 0, *span(program, code, b, time, step))
            continue
        errors = cast(FmuSlave, slave).errors_logged_since(mark)
        if errors:
            slave.last_error = errors
            raise SlaveError(f"{slave.name}: {what(code, time, step)} failed: {errors}")


def failed(program: Program, index: int, status: int, mark: int, time: float, step: float, counted: bool) -> None:
    """Operation ``index`` of ``program`` returned ``status``: the calls up to it counted (unless ``counted``
    already), its slave's error raised (a discarded step: ``StepRefused``)."""
    from fmpy.fmi1 import FMICallException
    for code, unit, _, _, b in [] if counted else program.operations[:index + 1]:
        if code not in (PASS, READ_REALS) and (code != STEP_FROM or time > program._sealed[2][5][b]):
            cast(FmuSlave, program.slaves[unit]).count_call(FUNCTION_OF[code])
    code, unit, _, _, b = program.operations[index]
    slave = program.slaves[unit]
    judge = getattr(slave, "judge", None)
    if judge is not None:  # raises: the status is above a warning
        judge(code, status, *span(program, code, b, time, step))
    logged = cast(FmuSlave, slave).errors_logged_since(mark)
    slave.last_error = logged or str(FMICallException(FUNCTION_OF[code], status))
    if code == DO_STEP and status == 2:  # fmi2Discard: a refused step
        raise StepRefused(slave.last_error or f"{slave.name} refused the step at t={measured(time)} s")
    raise SlaveError(f"{slave.name}: {what(code, time, step)} failed: {slave.last_error}")
