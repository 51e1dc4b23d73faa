"""Where a scenario's FMUs come from: an SSD ``source`` is a path relative to the SSD's folder.

A shipped scenario names mechfmu's FMUs by their place in a checkout (``../../fmus/Mass.fmu``); copied
elsewhere, or run by an installed mechfmu that builds into the user's cache, that path does not exist.
Then the built FMU of the model named by the source's file name may stand in, but only when asked for:
the SSD's system carries ``<ssc:Annotation type="org.mechfmu"><mechfmu:Sources fallback="built"/>
</ssc:Annotation>`` (``write_scenario`` writes it, as its sources are mechfmu's models by construction),
or the caller passes ``built_fmus=True`` (command line ``--built-fmus``). Otherwise a missing source is
an error naming the component, the source and the path looked at, since a mistyped path must not run
some other FMU silently. A run in-process (``local``) needs no FMU file: the source names the model.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

#: the one value of ``mechfmu:Sources fallback``
BUILT = "built"


def resolve_source(folder: Path, source: str, fallback: bool = True) -> Path:
    """An SSD source relative to its folder; with ``fallback``, if that file is missing and the source
    names one of our models, the built FMU of that model."""
    path = (folder / source).resolve()
    if fallback and not path.exists():
        from .build import fmu_path
        built = fmu_path(Path(source).stem)
        if built.is_file():
            return built.resolve()
    return path


def fallback_allowed(annotation: Any, built_fmus: bool | None, problems: list[str]) -> bool:
    """Whether a missing source may be the built FMU: ``built_fmus`` if given, else whether the SSD has the
    ``mechfmu:Sources`` element ``annotation`` (None if it has none); a wrong value is a problem."""
    if annotation is not None and annotation.get("fallback") != BUILT:
        problems.append(f"mechfmu:Sources fallback={annotation.get('fallback')!r}: the one value is {BUILT!r} (a "
                        "missing source is mechfmu's built FMU of its model)")
    return built_fmus if built_fmus is not None else annotation is not None


def stand_in_note(stood_in: list[str], built_fmus: bool | None) -> str:
    """The warning that built FMUs stand in for missing sources (``component: source -> FMU`` each)."""
    why = "built_fmus=True" if built_fmus else f'the SSD\'s <mechfmu:Sources fallback="{BUILT}"/>'
    return f"source(s) not found, mechfmu's built FMUs used instead ({why}): {'; '.join(stood_in)}"


def missing_fmu(name: str, fmu: Path, source: str, fallback: bool) -> str:
    """Why the FMU of component ``name`` cannot be read: it is not at ``fmu``, and what to do."""
    if fallback:
        return (f"{name}: FMU not found: {fmu} (nor a built mechfmu FMU {fmu.name}: run `mechfmu build`, or hand "
                "the scenario on as `mechfmu export-ssp`)")
    return (f"{name}: FMU not found: {fmu} (source {source!r}); correct the source, or, if it names a mechfmu "
            f"model, let the built {fmu.name} stand in for it: built_fmus=True (command line --built-fmus) or "
            f'<mechfmu:Sources fallback="{BUILT}"/> in the system\'s org.mechfmu annotation')
