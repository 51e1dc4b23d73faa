"""The parts of a loaded scenario: its components (``ComponentSpec``: the FMU, the bound parameter values, the
declared connectors) and its connections (``Connection``: output to input, with the linear map a connection may
carry). ``mechfmu.ssp.scenario.Scenario`` holds them."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Connection:
    source: str           # component name
    source_variable: str  # output
    target: str
    target_variable: str  # input
    factor: float = 1.0   # the input receives factor·output + offset (mechfmu.ssp.connection_maps)
    offset: float = 0.0
    suppress_unit_conversion: bool = False  # SSP's suppressUnitConversion: the ends' units are not converted

    def __str__(self) -> str:
        return f"{self.source}.{self.source_variable} -> {self.target}.{self.target_variable}"


@dataclass
class ComponentSpec:
    name: str
    fmu: Path
    parameters: dict[str, Any] = field(default_factory=dict)
    connectors: dict[str, str] = field(default_factory=dict)  # declared ssd:Connector name -> kind
    types: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # connector -> declared type, unit
    kinds: dict[str, str] = field(default_factory=dict)  # parameter -> SSP type of its bound value
    free: list[str] = field(default_factory=list)  # inputs, ports or flanges left unconnected on purpose
    source: str = ""  # the SSD's source, as written
    fallback: bool = True  # a missing source may be the built FMU of its model (mechfmu.ssp.fmu_sources)
    refused: str = ""  # why the FMU is not read: its source lies outside the scenario (mechfmu.ssp.fmu_sources)
