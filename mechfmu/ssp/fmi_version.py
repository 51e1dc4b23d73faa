"""A scenario through the FMUs of one FMI version: mechfmu's built FMUs (FMI 2.0, in the FMU folder) swapped for their
FMI 3.0 builds (``mechfmu.fmu.fmi3``), built first where stale. Any other FMU (another tool's, an archive's own) is
run as it is, whatever its FMI version: the master runs FMI 2.0 and 3.0 FMUs side by side."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mechfmu.ssp.scenario import Scenario

FMI_VERSIONS = (2, 3)


def with_fmi_version(scenario: Scenario, version: int) -> Scenario:
    """``scenario`` (``mechfmu.ssp.scenario.Scenario``) with mechfmu's FMUs of FMI ``version`` (2: as it is); a new
    scenario, the given one unchanged. ValueError for a version that is not 2 or 3."""
    if version not in FMI_VERSIONS:
        raise ValueError(f"FMI version {version!r}: mechfmu's FMUs are built for FMI 2 and 3")
    if version == 2:
        return scenario
    from mechfmu.fmu import fmi3
    from mechfmu.fmu.build import FMU_DIR
    ours = {name: spec for name, spec in scenario.components.items()
            if Path(spec.fmu).resolve().parent == FMU_DIR.resolve()}
    if ours:
        fmi3.build(sorted({Path(spec.fmu).stem for spec in ours.values()}))
    components = {name: replace(spec, fmu=fmi3.fmu_dir() / Path(spec.fmu).name) if name in ours else spec
                  for name, spec in scenario.components.items()}
    return replace(scenario, components=components)
