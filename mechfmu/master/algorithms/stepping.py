"""What the event locator and the step controller need of a coupling algorithm (``SteppedAlgorithm``): its run
status, counters and energy audit, a step without them (``_step_impl``) and with them (``advance``), and the
saving and restoring of its own memory and bookkeeping around a trial step. ``CouplingAlgorithm`` (``base``)
is one; this module lets ``events`` and ``step_control`` name it without importing the algorithm that uses them."""
from __future__ import annotations

from typing import Any, Protocol

from mechfmu.master.coupled_system import CoupledSystem
from mechfmu.master.energy import EnergyAudit


class SteppedAlgorithm(Protocol):
    status: str  # "ok", "error"
    message: str
    counters: dict[str, int]
    audit: EnergyAudit | None

    def coupling_order(self) -> int: ...

    def snapshot(self) -> Any: ...

    def restore(self, memory: Any) -> None: ...

    def bookkeeping(self) -> Any: ...

    def restore_bookkeeping(self, books: Any) -> None: ...

    def _step_impl(self, system: CoupledSystem, t: float, h: float) -> None: ...

    def advance(self, system: CoupledSystem, t: float, h: float) -> None: ...
