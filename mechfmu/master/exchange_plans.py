"""Which FMUs and transfer plans the compiled exchange (``mechfmu.master.exchange``) can take, and the programs of a
transfer and of a row's reads made from them."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mechfmu.master.exchange import Program, library

if TYPE_CHECKING:
    from mechfmu.master.slaves import Slave


def compilable(slave: Slave, *functions: str, names: Sequence[str] = ()) -> bool:
    """Whether the compiled exchange can call ``slave``: an FMU, or an in-process component whose law is C, whose
    Real calls (and ``functions``) are at hand (``Slave.exchange_functions``), and whose variables ``names`` are
    Reals."""
    found = slave.exchange_functions()
    return (found is not None and all(f in found for f in functions)
            and all(slave.variables[n].type == "Real" for n in names))


def plan_compilable(plan: Sequence[Any]) -> bool:
    """Whether the compiled exchange can make every read (of Reals) and every write of a transfer ``plan``
    (``TransferLevel``s)."""
    return all(all(compilable(slave, names=names) for slave, names in level.gets)
               and all(compilable(slave) for slave, *_ in level.sets) for level in plan)


def add_transfer(program: Program, plan: Sequence[Any]) -> bool:
    """A transfer ``plan``'s (``TransferLevel``s) reads, passes and writes appended to ``program``; False if it has
    a slave or a value the compiled exchange cannot take (then the plan runs in Python)."""
    if not plan_compilable(plan):
        return False
    for level in plan:
        starts = [program.get(slave, names) for slave, names in level.gets]
        flat = [start + i for start, (_, names) in zip(starts, level.gets) for i in range(len(names))]
        for slave, names, index, maps in level.sets:
            program.set(slave, names, program.pass_values([flat[i] for i in index], maps))
    return True


def reader(reads: list[tuple[Slave, list[str]]]) -> Program | None:
    """A program of one batched read per (slave, names), its values in that order; None where it cannot be
    compiled."""
    runner = library()
    if runner is None or not all(compilable(slave, names=names) for slave, names in reads):
        return None
    program = Program(runner)
    for slave, names in reads:
        program.get(slave, names)
    return program
