"""Where a scenario's FMUs come from: an SSD ``source`` is a path relative to the SSD's folder.

A shipped scenario names mechfmu's FMUs by their place in a checkout (``../../fmus/Mass.fmu``); copied
elsewhere, or run by an installed mechfmu that builds into the user's cache, that path does not exist.
Then the built FMU of the model named by the source's file name may stand in, but only when asked for:
the SSD's system carries ``<ssc:Annotation type="org.mechfmu"><mechfmu:Sources fallback="built"/>
</ssc:Annotation>`` (``write_scenario`` writes it, as its sources are mechfmu's models by construction),
or the caller passes ``built_fmus=True`` (command line ``--built-fmus``). Otherwise a missing source is
an error naming the component, the source and the path looked at, since a mistyped path must not run
some other FMU silently. A run in-process (``local``) needs no FMU file: the source names the model.

A source stays inside the SSD's folder (the scenario folder, or the unpacked archive), or in mechfmu's
FMU directory (``mechfmu.fmu.build.FMU_DIR``: the shipped scenarios' ``../../fmus/Mass.fmu``, the FMUs the
fallback gives anyway); anywhere else only if the caller asks (``outside_sources=True``), so an SSD, an
archive's above all, cannot make the master read an FMU from an arbitrary place. With the fallback, the
built FMU stands in for a source outside; without it, such a source is an error naming the component,
the source and the path it resolves to.

A source is a URI reference: ``%XX`` in it is decoded (``my%20model.fmu`` is ``my model.fmu``); a ``file:``
URI (``file:model.fmu``, ``file:///abs/model.fmu``) names the file its path names, under the same confinement;
any other scheme (``http:``, ...) is refused by name, as mechfmu reads local files only.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from mechfmu.ssp import archive

#: the one value of ``mechfmu:Sources fallback``
BUILT = "built"
#: a URI scheme at the start of a source (RFC 3986, 3.1)
SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")


#: the longest file name [bytes] the file systems accept (Linux, Windows and macOS: 255)
NAME_MAX = 255


def source_path(source: str) -> str:
    """The file path an SSD ``source`` (a URI reference) names, ``%XX`` decoded; ValueError naming the source
    if it has a scheme other than ``file:``, a ``file:`` URI names another host, or a name in it is longer than
    ``NAME_MAX`` bytes (no file can have it; the system's calls would fail on it)."""
    path = _uri_path(source)
    if any(len(part.encode("utf-8", "surrogateescape")) > NAME_MAX for part in path.split("/")):
        raise ValueError(f"source {source[:80]!r}... ({len(source)} characters): a file name in it is longer than "
                         f"{NAME_MAX} bytes, which no file has: give the FMU's path")
    return path


def _uri_path(source: str) -> str:
    scheme = SCHEME.match(source)
    if scheme is None:
        return unquote(source)
    if scheme.group(1).lower() != "file":
        raise ValueError(f"source {source!r}: the URI scheme {scheme.group(1)!r} is not read by mechfmu (it reads "
                         "local files only): give a path relative to the SSD's folder, or a file: URI")
    path = source[scheme.end():]
    if path.startswith("//"):
        host, slash, rest = path[2:].partition("/")
        if host not in ("", "localhost"):
            raise ValueError(f"source {source!r}: a file: URI on host {host!r} is not read by mechfmu: give a "
                             "path relative to the SSD's folder")
        path = slash + rest
    return unquote(path)


def confined(folder: Path, source: str, outside: bool = False, allowed: tuple[Path, ...] = ()) -> Path | None:
    """The file an SSD ``source`` names, relative to the SSD's ``folder``; None if it lies outside that folder
    and the ``allowed`` ones, unless ``outside``."""
    path = (folder / source).resolve()
    if outside or any(path.is_relative_to(place.resolve()) for place in (folder, *allowed)):
        return path
    return None


def outside_note(name: str, source: str, folder: Path) -> str:
    """Why the source of component ``name`` is refused: it lies outside ``folder``, and what to do."""
    return (f"{name}: source {leads_outside(folder, source)}; put the file into the scenario's folder (or archive), "
            "or, if the scenario is trusted, allow sources outside it: outside_sources=True")


def leads_outside(folder: Path, source: str) -> str:
    """``'<source>' is <the path it names>, outside the scenario's folder <folder>``; for an unpacked archive
    the folder is the archive, and a relative source's path is left out (it lies in the temporary directory)."""
    shown, path = archive.shown(folder.resolve()), (folder / source_path(source)).resolve()
    if shown != str(folder.resolve()) and not Path(source_path(source)).is_absolute():
        return f"{source!r} leads outside the scenario's folder {shown}"
    return f"{source!r} is {path}, outside the scenario's folder {shown}"


def resolve_source(name: str, folder: Path, source: str, fallback: bool, outside: bool) -> tuple[Path, str]:
    """Component ``name``'s SSD source (``source_path``) relative to its folder, and why it is refused ('' if it
    is not): an existing file outside the folder and mechfmu's FMU directory, unless ``outside``. With
    ``fallback``, if that file is missing or refused, the built FMU of the model the source names instead.
    ValueError naming the source if it is not a local file."""
    from mechfmu.fmu.locations import FMU_DIR
    decoded = source_path(source)
    path = confined(folder, decoded, outside, (FMU_DIR,))
    if fallback and (path is None or not path.exists()):
        from mechfmu.fmu.build import fmu_path
        built = fmu_path(Path(decoded).stem)
        if built.is_file():
            return built.resolve(), ""
    if path is None:
        path = (folder / decoded).resolve()
        return path, outside_note(name, source, folder) if path.exists() else ""
    return path, ""


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
