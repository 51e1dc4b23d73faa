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


def with_fmi_version(scenario: Scenario, version: int, arrays: bool = True) -> Scenario:
    """``scenario`` (``mechfmu.ssp.scenario.Scenario``) with mechfmu's FMUs of FMI ``version`` (2: as it is); a new
    scenario, the given one unchanged. Without ``arrays`` a component whose FMI 3.0 FMU has array variables keeps its
    FMI 2.0 FMU (``array_components``). ValueError for a version that is not 2 or 3."""
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
    if not arrays:
        ours = {name: spec for name, spec in ours.items() if not has_arrays(fmi3.fmu_dir() / Path(spec.fmu).name)}
    components = {name: replace(spec, fmu=fmi3.fmu_dir() / Path(spec.fmu).name) if name in ours else spec
                  for name, spec in scenario.components.items()}
    return replace(scenario, components=components)


def has_arrays(fmu: Path) -> bool:
    """The FMU's model description declares an array variable (``<Dimension>``: mechfmu.fmu.fmi3_arrays)."""
    import xml.etree.ElementTree as ET
    import zipfile
    with zipfile.ZipFile(fmu) as zf:
        return ET.fromstring(zf.read("modelDescription.xml")).find("ModelVariables/*/Dimension") is not None


def array_components(scenario: Scenario) -> list[str]:
    """The components of ``scenario`` (with mechfmu's FMI 2.0 FMUs) whose FMI 3.0 FMU has array variables, which an
    SSP 1.0 connection, naming a scalar (``ball.position.x``), cannot reach: an archive keeps their FMI 2.0 FMU."""
    from mechfmu.fmu import fmi3
    from mechfmu.fmu.build import FMU_DIR
    return [name for name, spec in scenario.components.items() if Path(spec.fmu).resolve().parent == FMU_DIR.resolve()
            and has_arrays(fmi3.fmu_dir() / Path(spec.fmu).name)]
