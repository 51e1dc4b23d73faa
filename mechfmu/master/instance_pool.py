"""``InstancePool``: FMU instances kept in this process for the next run."""
from __future__ import annotations

from pathlib import Path

from mechfmu.master.fmu_slave import FmuSlave
from mechfmu.master.slaves import SlaveError


class InstancePool:
    """FMU instances kept in this process for the next run (a study's worker, the error estimate's companion run
    and the run it judges): after a run that ended well they are reset (``FmuSlave.reset``: fmi2Reset, back to
    their start values) instead of freed, so the next run of a scenario skips loading and instantiating. Keyed by
    FMU file, instance name and interface (co-simulation or Model Exchange, as asked); a run that failed frees
    its instances (an FMU in error is not trusted again)."""

    def __init__(self, makes: bool = True, keeps: bool = True) -> None:
        """``makes``: an instance the pool does not hold is made; else asking for one is a SlaveError (a pool
        filled beforehand for a thread: fmpy changes the process's working directory while it loads an FMU).
        ``keeps``: a run's instances go back to it after the run (else the run frees them: a pool that only hands
        ``auto``'s instances to a run without an error estimate)."""
        self._free: dict[tuple[str, str, bool], list[FmuSlave]] = {}
        self._handed: dict[tuple[str, str, bool], list[FmuSlave]] = {}
        self.reused = 0
        self.makes, self.keeps = makes, keeps

    def take(self, name: str, fmu: str | Path, model_exchange: bool = False) -> FmuSlave:
        key = (str(Path(fmu).resolve()), name, model_exchange)
        handed = self._handed.get(key)
        if handed:
            return handed.pop()
        kept = self._free.get(key)
        if kept:
            self.reused += 1
            slave = kept.pop()
            slave.restart_count(1)  # its fmi2Reset stands for fmi2Instantiate: a run's counters do not depend on reuse
            return slave
        if not self.makes:
            raise SlaveError(f"{name}: no instance of {fmu} ({'Model Exchange' if model_exchange else 'co-simulation'})"
                             " was made for this run beforehand")
        return FmuSlave(name, fmu, model_exchange)

    def keep(self, slave: FmuSlave) -> None:
        """Keep a slave just instantiated (nothing to reset) for a run to take."""
        self._free.setdefault((slave.fmu, slave.name, slave.instantiated_for_model_exchange), []).append(slave)

    def hand_over(self, slave: FmuSlave) -> None:
        """Keep a slave for the next run to take as it is, its calls so far its own (``auto``'s choice made on it
        and nothing called since: the run's instantiation, or its take from this pool, already counted)."""
        self._handed.setdefault((slave.fmu, slave.name, slave.instantiated_for_model_exchange), []).append(slave)

    def give_back(self, slave: FmuSlave) -> None:
        """Reset the slave and keep it; if the reset fails it is freed and the error raised."""
        try:
            slave.reset()
        except SlaveError:
            slave.release()
            raise
        self._free.setdefault((slave.fmu, slave.name, slave.instantiated_for_model_exchange), []).append(slave)

    def close(self) -> None:
        """Free every kept instance."""
        for kept in (*self._free.values(), *self._handed.values()):
            for slave in kept:
                slave.terminate()
        self._free.clear()
        self._handed.clear()
