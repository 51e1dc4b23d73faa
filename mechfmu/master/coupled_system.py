"""The coupled system: slaves, connections and the data flow between them.

- ``levels``: the connections sorted into dependency levels. A connection whose source output
  feeds through inputs of its slave (a connector force depends on the flange positions) comes
  after every connection into those inputs, so a feed-through output is read only after its
  inputs were refreshed (OMSimulator's order). A cycle of feed-through is an algebraic loop and
  is rejected.
- transfer plans: one batched get per source slave and one batched set per target slave per level
  (``ordered_plan``: level by level; ``strict_plan``: all reads first, libcosim's order;
  ``downstream_plan(slave)``: what changes when that slave's outputs change).
- connection values: every connection's source value in connection order, and setting them all
  (the coupling unknowns of the iterative algorithms); FMU states saved, restored and freed together.
- a connection with a factor or offset (``mechfmu.ssp.connection_maps``) delivers ``factor·value + offset`` to
  its input in every transfer and every ``set_connection_values`` (``delivered``); the others pass the value
  as it is.
"""
from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from mechfmu.components.number_text import measured
from mechfmu.master.exchange import (
    DO_STEP,
    FREE_STATE,
    GET_STATE,
    SET_STATE,
    Program,
    library,
)
from mechfmu.master.exchange_plans import add_transfer, compilable
from mechfmu.master.slaves import Slave, StepRefused
from mechfmu.ssp.scenario import Connection


class AlgebraicLoopError(ValueError):
    """Feed-through outputs form a cycle; a fixed-step exchange order does not exist."""


def picker(index: list[int], count: int) -> Callable[[list[float]], list[float]]:
    """``lambda values: [values[i] for i in index]`` for a list of ``count`` values, done by
    ``operator.itemgetter`` (the list itself when ``index`` takes all of them in order)."""
    if len(index) == count and index == list(range(count)):
        return lambda values: values
    if len(index) == 1:
        first = index[0]
        return lambda values: [values[first]]
    pick = itemgetter(*index)
    return lambda values: list(pick(values))


#: per value, the (factor, offset) of its connection, None where it passes unchanged; None for all unchanged
Maps = list[tuple[float, float] | None] | None


def connection_maps(connections: list[Connection]) -> Maps:
    """Per connection its (factor, offset), None for one that passes its value unchanged (None for all)."""
    maps = [None if (c.factor, c.offset) == (1.0, 0.0) else (c.factor, c.offset) for c in connections]
    return maps if any(maps) else None


def mapped(pick: Callable[[list[float]], list[float]], maps: Maps) -> Callable[[list[float]], list[float]]:
    """``pick`` followed by each value's map (``pick`` itself when no value is changed)."""
    if maps is None:
        return pick
    return lambda values: [v if m is None else m[0] * v + m[1] for v, m in zip(pick(values), maps)]


@dataclass
class TransferLevel:
    gets: list[tuple[Slave, list[str]]]
    #: (target slave, input names, indices into the flat list of values read in this level, the maps)
    sets: list[tuple[Slave, list[str], list[int], Maps]]
    #: the same, ready to run: bound ``get``/``set`` methods and the pickers of each target's values
    _reads: list[tuple[Callable, list[str]]] = field(init=False, repr=False)
    _writes: list[tuple[Callable, list[str], Callable]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._reads = [(slave.get, names) for slave, names in self.gets]
        count = sum(len(names) for _, names in self.gets)
        self._writes = [(slave.set, names, mapped(picker(index, count), maps))
                        for slave, names, index, maps in self.sets]

    def run(self) -> None:
        """One batched get per source, then one batched set per target."""
        values: list[float] = []
        extend = values.extend
        for get, names in self._reads:
            extend(get(names))
        for set_, names, pick in self._writes:
            set_(names, pick(values))


def read_plan(slaves: dict[str, Slave],
              connections: list[Connection]) -> tuple[list[tuple[Slave, list[str]]], list[int]]:
    """One batched read per source slave for ``connections``: ([(slave, outputs)], for every
    connection the index of its value in the flat list those reads return)."""
    reads: dict[str, list[str]] = {}
    for c in connections:
        names = reads.setdefault(c.source, [])
        if c.source_variable not in names:
            names.append(c.source_variable)
    position = {(s, n): i for i, (s, n) in enumerate((s, n) for s, names in reads.items() for n in names)}
    return [(slaves[s], names) for s, names in reads.items()], [position[(c.source, c.source_variable)]
                                                                 for c in connections]


def write_plan(slaves: dict[str, Slave], connections: list[Connection],
               index: list[int]) -> list[tuple[Slave, list[str], list[int], Maps]]:
    """One batched write per target slave: (slave, inputs, index of each input's value, their maps)."""
    writes: dict[str, tuple[list[str], list[int], list[Connection]]] = {}
    for c, i in zip(connections, index):
        names, idx, wires = writes.setdefault(c.target, ([], [], []))
        names.append(c.target_variable)
        idx.append(i)
        wires.append(c)
    return [(slaves[t], names, idx, connection_maps(wires)) for t, (names, idx, wires) in writes.items()]


@dataclass
class CoupledSystem:
    slaves: dict[str, Slave]
    connections: list[Connection]
    levels: list[list[Connection]] = field(init=False)
    ordered_plan: list[TransferLevel] = field(init=False)
    strict_plan: list[TransferLevel] = field(init=False)
    #: batched reads of every connection's source and, per connection, its index in what they return
    _sources: list[tuple[Slave, list[str]]] = field(init=False, repr=False)
    _source_index: list[int] = field(init=False, repr=False)
    #: batched writes of every connection's target, indexed by connection
    _targets: list[tuple[Slave, list[str], list[int], Maps]] = field(init=False, repr=False)
    #: every connection's map (None: all pass their values unchanged)
    _maps: Maps = field(init=False, repr=False)
    #: called with every slave about to step (the energy audit reads the inputs it holds)
    before_step: Callable[[Slave], None] | None = field(default=None, init=False, repr=False)
    #: takes ``step_all``'s place where set (event location by early return steps the slaves so)
    stepper: Callable[[float, float], None] | None = field(default=None, init=False, repr=False)
    #: per plan (by id, with the plan kept): its compiled exchange, None where it cannot be compiled
    _programs: dict[int, tuple[Any, Any]] = field(default_factory=dict, init=False, repr=False)
    #: per transfer plan (by id), the key of its step and transfer as one compiled program (``fused_step``)
    fused_keys: dict[int, tuple] = field(default_factory=dict, init=False, repr=False)
    #: keys of the compiled state calls: get, set, free
    _state_plans: tuple[list[str], ...] = field(default_factory=lambda: (["get"], ["set"], ["free"]), init=False,
                                                repr=False)

    def __post_init__(self) -> None:
        self.levels = self._dependency_levels()
        self.ordered_plan = [self._level_plan(level) for level in self.levels]
        self.strict_plan = [self._level_plan(self.connections)] if self.connections else []
        self._sources, self._source_index = read_plan(self.slaves, self.connections)
        self._targets = write_plan(self.slaves, self.connections, list(range(len(self.connections))))
        self._maps = connection_maps(self.connections)

    # --- data flow -----------------------------------------------------------------------
    def _dependency_levels(self) -> list[list[Connection]]:
        """Level of a connection = 1 + the largest level of the connections feeding through its source
        output (longest path; depth-first without recursion, so chains of any length work)."""
        feeding = {(c.target, c.target_variable): c for c in self.connections}
        deps = {c: [feeding[(c.source, i)] for i in self.slaves[c.source].feedthrough(c.source_variable)
                    if (c.source, i) in feeding] for c in self.connections}
        level: dict[Connection, int] = {}
        for root in self.connections:
            if root in level:
                continue
            path, stack = [root], [iter(deps[root])]
            while stack:
                for dep in stack[-1]:
                    if dep in level:
                        continue
                    if dep in path:
                        loop = " -> ".join(str(c) for c in path[path.index(dep):] + [dep])
                        raise AlgebraicLoopError(f"algebraic loop: {loop}")
                    path.append(dep)
                    stack.append(iter(deps[dep]))
                    break
                else:
                    done = path.pop()
                    stack.pop()
                    level[done] = 1 + max((level[d] for d in deps[done]), default=-1)
        levels: list[list[Connection]] = [[] for _ in range(1 + max(level.values(), default=-1))]
        for con in self.connections:
            levels[level[con]].append(con)
        return levels

    def _level_plan(self, connections: list[Connection]) -> TransferLevel:
        gets, index = read_plan(self.slaves, connections)
        return TransferLevel(gets, write_plan(self.slaves, connections, index))

    def downstream_plan(self, source: str) -> list[TransferLevel]:
        """Dependency-ordered transfers of everything that changes when ``source``'s outputs change."""
        touched = {source}
        chosen = []
        for level in self.levels:
            picked = [c for c in level if c.source in touched]
            touched.update(c.target for c in picked if self._is_algebraic_path(c))
            chosen.append(picked)
        return [self._level_plan(level) for level in chosen if level]

    def _is_algebraic_path(self, con: Connection) -> bool:
        """True if the target has outputs that feed through the connected input."""
        slave = self.slaves[con.target]
        return any(con.target_variable in slave.feedthrough(o) for o in slave.outputs())

    def compiled(self, plan: Any, build: Callable[[Program], bool]) -> Program | None:
        """The compiled exchange (``mechfmu.master.exchange``) ``build`` writes for ``plan`` (any object kept while
        the system lives), made once; None where a slave is not an FMU it can call or there is no library."""
        entry = self._programs.get(id(plan))
        if entry is None or entry[0] is not plan:
            runner = library()
            program: Program | None = Program(runner) if runner is not None else None
            if program is not None and not build(program):
                program = None
            entry = self._programs[id(plan)] = (plan, program)
        return entry[1]

    def transfer(self, plan: list[TransferLevel]) -> None:
        program = self.compiled(plan, lambda p: add_transfer(p, plan))
        if program is not None:
            program.run()
            return
        for level in plan:
            level.run()

    def connection_values(self) -> list[float]:
        """The current value of every connection's source output, in connection order."""
        program = self.compiled(self._sources, lambda p: self._add_reads(p, self._sources))
        if program is not None:
            program.run()
            flat = program.values[:program.size]
        else:
            flat = []
            for slave, names in self._sources:
                flat.extend(slave.get(names))
        return [flat[i] for i in self._source_index]

    def _add_reads(self, program: Program, reads: list[tuple[Slave, list[str]]]) -> bool:
        if not all(compilable(slave, names=names) for slave, names in reads):
            return False
        for slave, names in reads:
            program.get(slave, names)
        return True

    def _add_writes(self, program: Program) -> bool:
        """One batched write per target of every connection, from the program's values in target order."""
        if not all(compilable(slave) for slave, *_ in self._targets):
            return False
        for slave, names, _, _ in self._targets:
            program.set(slave, names, program.reserve(len(names)))
        return True

    def delivered(self, values: list[float]) -> list[float]:
        """What the inputs receive for per-connection source values (``values`` itself if no connection maps)."""
        maps = self._maps
        if maps is None:
            return values
        return [v if m is None else m[0] * v + m[1] for v, m in zip(values, maps)]

    def set_connection_values(self, values: list[float]) -> None:
        """Set every connected input to what it receives for the given per-connection source values (as from
        ``connection_values``)."""
        values = self.delivered(values)
        program = self.compiled(self._targets, self._add_writes)
        if program is not None:
            program.values[:program.size] = [values[i] for _, _, index, _ in self._targets for i in index]
            program.run()
            return
        for slave, names, index, _ in self._targets:
            slave.set(names, [values[i] for i in index])

    # --- stepping and states ---------------------------------------------------------------
    def do_step(self, slave: Slave, t: float, h: float) -> None:
        if self.before_step is not None:
            self.before_step(slave)
        if not slave.do_step(t, h):
            raise StepRefused(slave.last_error or f"{slave.name} refused the step at t={measured(t)} s")

    def _add_steps(self, program: Program) -> bool:
        for slave in self.slaves.values():
            if not compilable(slave, "fmi2DoStep"):
                return False
            program.call(DO_STEP, slave)
        return True

    def step_all(self, t: float, h: float) -> None:
        """Every slave from t to t + h with the inputs it holds (Jacobi), in scenario order (``do_step``
        of each, inlined; one compiled call where every slave is an FMU)."""
        if self.stepper is not None:
            return self.stepper(t, h)
        before = self.before_step
        if before is None:
            program = self.compiled(self.slaves, self._add_steps)
            if program is not None:
                program.run(t, h)
                return
        for slave in self.slaves.values():
            if before is not None:
                before(slave)
            if not slave.do_step(t, h):
                raise StepRefused(slave.last_error or f"{slave.name} refused the step at t={measured(t)} s")

    def _add_state_calls(self, program: Program, code: int) -> bool:
        """``code`` (GET_STATE, SET_STATE, FREE_STATE) for every slave, slave k's handle at ``handles[k]``."""
        if not all(compilable(slave, "fmi2GetFMUstate", "fmi2SetFMUstate", "fmi2FreeFMUstate")
                   for slave in self.slaves.values()):
            return False
        for k, slave in enumerate(self.slaves.values()):
            program.call(code, slave, offset=k)
        return True

    def save_states(self) -> Any:
        """Every slave's state (an opaque object for ``restore_states`` and ``free_states``)."""
        program = self.compiled(self._state_plans[0], lambda p: self._add_state_calls(p, GET_STATE))
        if program is not None:
            handles = (ctypes.c_void_p * len(self.slaves))()
            program.run(handles=handles)
            return handles
        return {name: slave.get_state() for name, slave in self.slaves.items()}

    def restore_states(self, states: Any) -> None:
        self._state_calls(states, SET_STATE, lambda slave, state: slave.set_state(state))

    def free_states(self, states: Any) -> None:
        self._state_calls(states, FREE_STATE, lambda slave, state: slave.free_state(state))

    def _state_calls(self, states: Any, code: int, call: Callable[[Slave, Any], None]) -> None:
        """``code`` (SET_STATE, FREE_STATE) on every state of ``save_states``: compiled where they were saved so."""
        if isinstance(states, dict):
            for name, slave in self.slaves.items():
                call(slave, states[name])
            return
        program = self.compiled(self._state_plans[code - GET_STATE], lambda p: self._add_state_calls(p, code))
        assert program is not None  # saved by the compiled exchange: handled by it
        program.run(handles=states)

    # --- structure -------------------------------------------------------------------------
    def is_algebraic(self, slave: Slave) -> bool:
        """No output without feed-through (a connector, a fixed point): stepping changes nothing."""
        return all(slave.variables[o].depends_on for o in slave.outputs())

    def partition(self) -> tuple[list[Slave], list[Slave]]:
        """(algebraic slaves, the others), each in scenario order."""
        slaves = list(self.slaves.values())
        return [s for s in slaves if self.is_algebraic(s)], [s for s in slaves if not self.is_algebraic(s)]

    def in_dependency_order(self, slaves: list[Slave]) -> list[Slave]:
        """``slaves`` ordered by the first level in which they are a connection source (others last)."""
        ordered: list[Slave] = []
        for level in self.levels:
            for c in level:
                source = self.slaves[c.source]
                if source in slaves and source not in ordered:
                    ordered.append(source)
        return ordered + [s for s in slaves if s not in ordered]
