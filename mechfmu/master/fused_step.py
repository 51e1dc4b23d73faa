"""Jacobi's step and transfer as one compiled program whose calls on each FMU lie close together.

A Jacobi step is every slave's doStep, then the transfer plan level by level (each level: every source's outputs
read, then every target's inputs set). What a call gives depends only on the calls its own slave had before it, and
a set only on the reads it takes its values from, so any order that keeps

- each slave's own calls in their order (doStep; per level its read, then its write) and
- each write after the reads it takes values from

makes the same calls with the same arguments and gives the same values, bit for bit, as the step and the transfer
one after the other. ``fused_order`` picks, among those orders, the one that always goes on with the earliest slave
(scenario order) that can: along a chain it moves as a wavefront, each FMU's doStep, read and write a few calls
apart, so its memory is still in the caches (with thousands of FMUs, a sweep over all of them per phase outgrows
them). A call that fails stops the program there, as a failed call stops the step.

A run in blocks (``mechfmu.master.step_blocks``) reads its recorded rows inside that program (``add_reads``): each
FMU's outputs right after the last call it gets in the step, which leaves them as the reader after the step would
find them, while its instance is still in the cache, instead of a second pass over every FMU.
"""
from __future__ import annotations

import heapq
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from mechfmu.master.exchange import DO_STEP, GET_REALS, PASS, Program
from mechfmu.master.exchange_plans import compilable, plan_compilable

if TYPE_CHECKING:
    from mechfmu.master.coupled_system import CoupledSystem, TransferLevel
    from mechfmu.master.slaves import Slave

#: a call of the fused program: ("step", slave number), ("get", level, read number) or ("set", level, write number)
Call = tuple[Any, ...]


def fused_order(slaves: list[Slave], plan: list[TransferLevel]) -> list[Call]:
    """Every slave's doStep and every read and write of ``plan`` (``TransferLevel``s), in the order above."""
    position = {id(slave): k for k, slave in enumerate(slaves)}
    chains: list[list[Call]] = [[("step", k)] for k in range(len(slaves))]
    waits: dict[Call, int] = {}  # per write: the reads it takes values from and that are not made yet
    readers: dict[Call, list[Call]] = {}  # per read: the writes that take its values
    for level, transfer in enumerate(plan):
        read_by = [g for g, (_, names) in enumerate(transfer.gets) for _ in names]
        for g, (slave, _) in enumerate(transfer.gets):
            chains[position[id(slave)]].append(("get", level, g))
        for s, (slave, _, index, _) in enumerate(transfer.sets):
            chains[position[id(slave)]].append(("set", level, s))
            needed = sorted({read_by[i] for i in index})
            waits[("set", level, s)] = len(needed)
            for g in needed:
                readers.setdefault(("get", level, g), []).append(("set", level, s))
    for chain in chains:  # within a level a slave's read comes before its write
        chain[1:] = sorted(chain[1:], key=lambda call: (call[1], call[0] == "set"))
    done = [0] * len(chains)
    order: list[Call] = []
    ready = [k for k in range(len(chains))]
    heapq.heapify(ready)
    while ready:
        k = heapq.heappop(ready)
        chain = chains[k]
        while done[k] < len(chain) and waits.get(chain[done[k]], 0) == 0:
            call = chain[done[k]]
            order.append(call)
            done[k] += 1
            for write in readers.get(call, []):
                waits[write] -= 1
                if waits[write] == 0:
                    owner = position[id(plan[write[1]].sets[write[2]][0])]
                    if done[owner] < len(chains[owner]) and chains[owner][done[owner]] == write:
                        heapq.heappush(ready, owner)
    if len(order) != sum(len(chain) for chain in chains):  # a write waits for a read its own slave makes later
        raise ValueError("the transfer plan has no order that keeps every slave's calls in theirs")
    return order


def add_fused_step(program: Program, slaves: list[Slave], plan: list[TransferLevel]) -> bool:
    """The step and ``plan``'s transfer appended to ``program`` in ``fused_order``; False where a slave or a value
    is not one the compiled exchange can take (the step and the transfer then run as they are)."""
    if not all(compilable(slave, "fmi2DoStep") for slave in slaves) or not plan_compilable(plan):
        return False
    first = [list(accumulate((len(names) for _, names in level.gets), initial=0)) for level in plan]
    where = [[0] * starts[-1] for starts in first]  # per level, each value's place in the program's values
    for call in fused_order(slaves, plan):
        if call[0] == "step":
            program.call(DO_STEP, slaves[call[1]])
        elif call[0] == "get":
            slave, names = plan[call[1]].gets[call[2]]
            start = program.get(slave, names)
            at = first[call[1]][call[2]]
            where[call[1]][at:at + len(names)] = range(start, start + len(names))
        else:
            slave, names, index, maps = plan[call[1]].sets[call[2]]
            program.set(slave, names, program.pass_values([where[call[1]][i] for i in index], maps))
    return True


def fused_program(system: CoupledSystem, plan: list[TransferLevel]) -> Program | None:
    """The step and ``plan``'s transfer as one compiled program in ``fused_order``, made once per plan and ready to
    run; None where a slave is not an FMU the compiled exchange can call or something watches or takes the steps
    (``before_step``, ``stepper``)."""
    if system.before_step is not None or system.stepper is not None:
        return None
    key = system.fused_keys.setdefault(id(plan), (plan,))
    program = system.compiled(key, lambda p: add_fused_step(p, list(system.slaves.values()), plan))
    if program is not None:
        program.prepare()
    return program


def add_reads(program: Program, reader: Program) -> dict[int, int] | None:
    """``reader``'s reads (one row's) put into ``program`` as READ_REALS, each right after the last call its slave
    gets there: after it the slave's outputs stay as they are until the next step, so they are the values the
    reader would read after the program, and its instance is still in the cache. Returns, per READ_REALS, the
    reader's operation it is; None where a read's slave has no call in ``program`` (the reader then runs apart).
    Before ``program`` is sealed."""
    last: dict[int, int] = {}
    for k, (code, unit, *_) in enumerate(program.operations):
        if code != PASS:
            last[unit] = k
    after: dict[int, list[tuple[int, int, int, int, int]]] = {}
    for r, (code, unit, count, refs, start) in enumerate(reader.operations):
        own = program._unit.get(id(reader.slaves[unit]))
        if code != GET_REALS or own is None or own not in last:
            return None
        after.setdefault(last[own], []).append((own, count, refs, start, r))
    operations, program.operations, read_of = program.operations, [], {}
    for k, operation in enumerate(operations):
        program.operations.append(operation)
        for own, count, refs, start, r in after.get(k, []):
            read_of[len(program.operations)] = r
            program.read(program.slaves[own], count, refs, start)
    return read_of


def reading_program(fused: Program, reader: Program) -> tuple[Program, dict[int, int]] | None:
    """A run's own copy of the ``fused`` program with ``reader``'s reads inside (``add_reads``), ready to run, and
    its map of reads; None where there is no such program."""
    program = fused.copy()
    read_of = add_reads(program, reader)
    if read_of is None:
        return None
    program.prepare()
    return program, read_of


def step_and_transfer(system: CoupledSystem, t: float, h: float, plan: list[TransferLevel]) -> None:
    """``system.step_all(t, h)`` then ``system.transfer(plan)``, as ``fused_program`` where there is one."""
    program = fused_program(system, plan)
    if program is not None:
        program.run(t, h)
        return
    system.step_all(t, h)
    system.transfer(plan)
