"""``CallCounts``: the part of ``FmuSlave`` (mechfmu/master/fmu_slave.py) that counts an FMU's FMI calls by kind and
times them (``mechfmu.master.fmu_profile`` says what is measured, with which clock).

Calls through Python are counted and timed one by one in ``FmuSlave._call`` (``_kinds``); those of a compiled
program (``mechfmu.master.exchange.Program``) are counted per completed run of the program and timed by it, and read
from it when asked (``fmi_calls``), so a program's run costs no Python per FMU. A kind is the FMI 2.0 function's
name (``fmu_profile.fmi_name`` gives an FMI 3.0 FMU's).
"""
from __future__ import annotations

import time
from typing import Any

from mechfmu.master.fmu_profile import TIMING, FmuProfile, fmi_name


class CallCounts:
    """An FMU's FMI calls, counted by kind and timed."""

    name: str
    fmi_version: int
    model_exchange: bool
    _calls = 0  # what the count was set to beyond the calls counted (``calls = ...``)
    #: the compiled programs that call this FMU, each with its calls per completed run and the FMU's unit in it
    _counted: list[tuple[Any, int, int]] = []
    #: per kind: the calls made through Python and the ns inside them
    _kinds: dict[str, list[int]] = {}
    _load_ns = 0  # making fmpy's instance: loading the FMU's binary and binding its functions
    _setup: tuple[int, float] | None = None  # calls and seconds until initialization ended (None: not yet)
    _reset_ns = 0  # the last fmi2Reset

    def _start_counts(self) -> None:
        self._kinds = {}
        #: the clock of the calls through Python [ns] (untimed: ``int``, whose call is 0)
        self._clock = time.perf_counter_ns if TIMING[0] else int

    @property  # type: ignore[override]
    def calls(self) -> int:
        """FMI calls made: through Python (by kind), and per completed run of each compiled program that calls it
        (counted when read, so a program's run costs no Python per FMU)."""
        return (self._calls + sum(calls for calls, _ in self._kinds.values())
                + sum(program.completed * count for program, count, _ in self._counted))

    @calls.setter
    def calls(self, value: int) -> None:
        self._calls = value - (self.calls - self._calls)

    def count_calls(self, program: Any, count: int, unit: int) -> None:
        """``program`` makes ``count`` calls of this FMU per completed run, the FMU its ``unit``."""
        self._counted = [*self._counted, (program, count, unit)]

    def count_call(self, kind: str) -> None:
        """One more call of ``kind`` that a compiled program made beyond its completed runs' (timed by it)."""
        self._kinds.setdefault(kind, [0, 0])[0] += 1

    def restart_count(self, calls: int) -> None:
        """The count is ``calls`` and the programs made so far no longer count (a reused instance's next run): the
        ``calls`` are its fmi2Reset, which stands for its making."""
        self._calls, self._counted = 0, []
        self._kinds = {"fmi2Reset": [calls, self._reset_ns]}
        self._load_ns, self._setup = 0, None

    def end_setup(self) -> None:
        """Initialization has ended: the calls so far are the setup."""
        made = self.fmi_calls()
        self._setup = (sum(c for c, _ in made.values()), self._load_ns * 1e-9 + sum(s for _, s in made.values()))

    def programs(self) -> list[Any]:
        """The compiled programs that call this FMU."""
        return [program for program, _, _ in self._counted]

    def fmi_calls(self) -> dict[str, tuple[int, float]]:
        """Per kind (its FMI 2.0 name): the calls made and the seconds inside them, through Python and compiled."""
        found = {kind: (calls, ns * 1e-9) for kind, (calls, ns) in self._kinds.items()}
        for program, _, unit in self._counted:
            for kind, (calls, seconds) in program.profiles()[unit].items():
                before = found.get(kind, (0, 0.0))
                found[kind] = (before[0] + calls, before[1] + seconds)
        return found

    def fmu_profile(self) -> FmuProfile:
        """The FMU's profile so far (``mechfmu.master.fmu_profile.FmuProfile``), its kinds under the names of its
        FMI version."""
        made = self.fmi_calls()
        names = {kind: fmi_name(kind, self.fmi_version, self.model_exchange) for kind in made}
        setup = self._setup or (sum(c for c, _ in made.values()),
                                self._load_ns * 1e-9 + sum(s for _, s in made.values()))
        return FmuProfile(self.name, self.fmi_version, {names[k]: c for k, (c, _) in made.items()},
                          {names[k]: max(s, 0.0) for k, (_, s) in made.items()}, max(setup[1], 0.0), setup[0],
                          self._load_ns * 1e-9)
