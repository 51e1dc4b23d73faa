"""The FMU profile: where a run's time goes, per FMU (instance name) and per kind of FMI call.

Each FMU's calls are counted by the FMI function the master calls (``fmi2DoStep``, ``fmi2SetReal``, ...; an FMI 3.0
FMU's under FMI 3.0's names, ``FMI3_NAMES``), exactly: the counts are deterministic and add up, over the kinds and
the FMUs, to the run's counter ``fmu_calls``. The time is the wall time inside those calls on the master's thread,
on ``CLOCK_MONOTONIC`` (not the process's CPU time: an FMU waiting on a lock or preempted by another process still
counts):

- through Python (fmpy; FMI 3.0 FMUs, ``MECHFMU_EXCHANGE=python``): ``time.perf_counter_ns`` around each call,
  fmpy's and ctypes' conversion of the arguments included (about a microsecond a call);
- through the compiled exchange (``mechfmu.master.exchange``): the processor's counter read after each call,
  calibrated against ``CLOCK_MONOTONIC``, less the counter's own cost, in one run in N of each compiled program
  (picked at random, N kept so that the timing adds at most ``BUDGET`` of the program's own time; N = 1 where the
  calls take long enough); where runs were left untimed, the program's whole time (its untimed runs' mean times its
  runs) divided among the calls as the timed runs divide it: an estimate where N > 1, exact counts always.

An FMI 3.0 FMU's step includes the master's answers to its intermediate updates (which may call other FMUs). The
setup of an FMU is the making of its instance (loading its binary, ``fmi2Instantiate``; a reused instance's
``fmi2Reset``) and every call until its ``fmi2ExitInitializationMode`` returned. ``MECHFMU_PROFILE=off`` turns the
timing off (the counts stay).
"""
from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

from mechfmu.master.mat_v4 import DOUBLE, matrix, text_matrix

#: whether calls are timed (``MECHFMU_PROFILE=off``: counted only); read when an FMU or a program is made
TIMING = [os.environ.get("MECHFMU_PROFILE", "").lower() != "off"]
#: the share of a compiled program's own time (in C) that timing its calls may add
BUDGET = 0.03
#: FMUs listed in a run's summary (the most time first; the others summed in one line)
SHOWN = 10
#: the FMI 3.0 function behind each kind the master counts under its FMI 2.0 name (the same name where FMI 3.0
#: has it too); setupExperiment makes no FMI 3.0 call (fmi3EnterInitializationMode takes its values)
FMI3_NAMES = {"fmi2SetupExperiment": "setupExperiment", "fmi2GetReal": "fmi3GetFloat64",
              "fmi2SetReal": "fmi3SetFloat64", "fmi2GetInteger": "fmi3GetInt32", "fmi2SetInteger": "fmi3SetInt32",
              "fmi2GetDerivatives": "fmi3GetContinuousStateDerivatives", "fmi2NewDiscreteStates":
              "fmi3UpdateDiscreteStates", "fmi2GetFMUstate": "fmi3GetFMUState", "fmi2SetFMUstate": "fmi3SetFMUState",
              "fmi2FreeFMUstate": "fmi3FreeFMUState", "fmi2SerializeFMUstate": "fmi3SerializeFMUState",
              "fmi2DeSerializeFMUstate": "fmi3DeserializeFMUState"}
#: the clock, as the summary and the files name it
CLOCK = "wall time inside the calls, CLOCK_MONOTONIC"


def fmi_name(kind: str, version: int, model_exchange: bool = False) -> str:
    """The FMI function of ``version`` behind a kind counted under its FMI 2.0 name."""
    if version != 3:
        return kind
    if kind == "fmi2Instantiate":
        return "fmi3InstantiateModelExchange" if model_exchange else "fmi3InstantiateCoSimulation"
    return FMI3_NAMES.get(kind, "fmi3" + kind[4:] if kind.startswith("fmi2") else kind)


@dataclass
class FmuProfile:
    """One FMU's calls: per FMI function its calls (``calls``) and the seconds inside them (``seconds``, same keys),
    and its setup (``setup`` [s]: loading its binary, ``load`` [s], and its calls until initialization ended,
    ``setup_calls`` of them)."""
    name: str
    fmi_version: int = 2
    calls: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    setup: float = 0.0
    setup_calls: int = 0
    load: float = 0.0

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())

    @property
    def total_seconds(self) -> float:
        """Seconds inside the FMU's calls (its binary's loading not included)."""
        return sum(self.seconds.values())

    def kinds(self) -> list[str]:
        """The kinds, the most time first (then the most calls, then by name)."""
        return sorted(self.calls, key=lambda k: (-self.seconds.get(k, 0.0), -self.calls[k], k))

    def as_dict(self) -> dict[str, Any]:
        return {"fmi_version": self.fmi_version, "calls": self.total_calls, "seconds": self.total_seconds,
                "setup_seconds": self.setup, "setup_calls": self.setup_calls, "load_seconds": self.load,
                "kinds": {k: {"calls": self.calls[k], "seconds": self.seconds.get(k, 0.0)} for k in self.kinds()}}


@dataclass
class Profile:
    """A run's FMU profile (``Result.profile``): per FMU instance name its ``FmuProfile`` (``fmus``, in scenario
    order), whether calls were timed (``timed``), and the compiled exchange's runs and runs timed over its programs
    (``compiled_runs``, ``compiled_timed``: their ratio is how far its times are an estimate)."""
    fmus: dict[str, FmuProfile] = field(default_factory=dict)
    timed: bool = True
    compiled_runs: int = 0
    compiled_timed: int = 0

    @property
    def total_calls(self) -> int:
        return sum(f.total_calls for f in self.fmus.values())

    @property
    def total_seconds(self) -> float:
        return sum(f.total_seconds for f in self.fmus.values())

    @property
    def setup_seconds(self) -> float:
        return sum(f.setup for f in self.fmus.values())

    def clock(self) -> str:
        """What the times are, in a few words."""
        if not self.timed:
            return "not timed (MECHFMU_PROFILE=off)"
        sampled = ""
        if self.compiled_timed and self.compiled_runs > self.compiled_timed:
            sampled = (f"; the compiled exchange's calls timed in {100 * self.compiled_timed / self.compiled_runs:.3g} "
                       "% of its runs, picked at random, and scaled")
        return CLOCK + sampled

    def describe(self, shown: int = SHOWN) -> str:
        """The summary's lines: the totals, then one line per FMU, the most time first (at most ``shown``): its time
        and calls, its setup, and its three kinds with the most time."""
        if not self.fmus:
            return ""
        ranked = sorted(self.fmus.values(), key=lambda f: (-f.total_seconds, -f.total_calls, f.name))
        width = max(len(f.name) for f in ranked[:shown])
        lines = [f"time in the FMUs: {duration(self.total_seconds)} in {self.total_calls} calls, setup "
                 f"{duration(self.setup_seconds)} ({self.clock()})"]
        for fmu in ranked[:shown]:
            kinds = fmu.kinds()
            listed = ", ".join(f"{k} {duration(fmu.seconds.get(k, 0.0))} ({fmu.calls[k]})" for k in kinds[:3])
            more = f", {len(kinds) - 3} more kinds" if len(kinds) > 3 else ""
            lines.append(f"  {fmu.name:<{width}} {duration(fmu.total_seconds):>9} ({fmu.total_calls} calls), setup "
                         f"{duration(fmu.setup)}: {listed}{more}")
        rest = ranked[shown:]
        if rest:
            lines.append(f"  and {len(rest)} more FMUs: {duration(sum(f.total_seconds for f in rest))} "
                         f"({sum(f.total_calls for f in rest)} calls), setup {duration(sum(f.setup for f in rest))}")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        """The profile as JSON takes it (``write_sidecar``)."""
        return {"clock": self.clock(), "timed": self.timed, "calls": self.total_calls, "seconds": self.total_seconds,
                "setup_seconds": self.setup_seconds, "compiled_runs": self.compiled_runs,
                "compiled_timed_runs": self.compiled_timed,
                "fmus": {name: fmu.as_dict() for name, fmu in self.fmus.items()}}

    def entries(self) -> list[tuple[str, int, float]]:
        """(name, calls, seconds) per FMU and kind (``FMU.kind``), then per FMU its setup (``FMU.setup``: calls
        and seconds until initialization ended, loading included) and its total (``FMU.total``)."""
        found: list[tuple[str, int, float]] = []
        for fmu in self.fmus.values():
            found += [(f"{fmu.name}.{k}", fmu.calls[k], fmu.seconds.get(k, 0.0)) for k in fmu.kinds()]
            found += [(f"{fmu.name}.setup", fmu.setup_calls, fmu.setup),
                      (f"{fmu.name}.total", fmu.total_calls, fmu.total_seconds)]
        return found

    def matrices(self) -> bytes:
        """Two MATLAB v4 matrices for a Dymola result file, after its ``data_2`` (which Dymola's and OpenModelica's
        readers stop at): ``profile_name`` (char, one column per entry, as ``name``) and ``profile_data`` (float64,
        2 x entries: calls, seconds); ``entries`` says what they hold. Nothing without an FMU."""
        entries = self.entries()
        if not entries:
            return b""
        values = struct.pack(f"<{2 * len(entries)}d", *chain.from_iterable((c, s) for _, c, s in entries))
        return text_matrix("profile_name", [name for name, _, _ in entries]) + matrix(
            "profile_data", DOUBLE, 2, len(entries), values)


def duration(seconds: float) -> str:
    """Seconds as the summary shows them: ms below a second (3 digits), s above (4)."""
    return f"{seconds:.4g} s" if seconds >= 1 else f"{seconds * 1e3:.3g} ms"


def sidecar_path(path: Path) -> Path:
    """Where a CSV result's profile goes: ``x.csv`` -> ``x.profile.json`` (``x.partial.csv`` ->
    ``x.partial.profile.json``)."""
    return path.with_name(f"{path.stem}.profile.json")


def write_sidecar(path: Path, profile: Profile, status: str, end_time: float) -> Path:
    """``profile`` as JSON beside the result file ``path`` (``sidecar_path``), written whole (a temporary file
    renamed); returns where."""
    target = sidecar_path(path)
    document = {"format": "mechfmu FMU profile 1", "result": path.name, "status": status,
                "end_time": end_time if end_time == end_time else None, **profile.as_dict()}
    fmus = document.pop("fmus")  # one line per FMU: a file of thousands of FMUs stays readable
    text = "{\n" + "".join(f" {json.dumps(key)}: {json.dumps(value)},\n" for key, value in document.items())
    text += ' "fmus": {\n' + ",\n".join(f"  {json.dumps(name)}: {json.dumps(fmu)}" for name, fmu in fmus.items())
    partial = target.with_name(f".{target.name}.tmp")
    try:
        partial.write_text(text + "\n }\n}\n", encoding="utf-8")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def collect(slaves: Any) -> Profile:
    """The profile of a run's slaves: every one that keeps one (``FmuSlave.fmu_profile``), in their order."""
    profile = Profile(timed=TIMING[0])
    programs: dict[int, Any] = {}
    for slave in slaves:
        read = getattr(slave, "fmu_profile", None)
        if read is not None:
            profile.fmus[slave.name] = read()
            programs.update((id(p), p) for p in slave.programs())
    for program in programs.values():
        runs, timed = program.clock_runs()
        profile.compiled_runs += runs
        profile.compiled_timed += timed
    return profile
