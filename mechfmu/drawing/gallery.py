"""The gallery: every shipped scenario's system diagram and result plot, and a MyST Markdown page showing them.

A scenario ``scenarios/A/B`` is named ``A-B`` in the gallery's folder (``msl/Oscillator`` -> ``msl-Oscillator``,
which does not clash with ``oscillator`` on a file system that ignores case). Each scenario runs as ``mechfmu run``
runs it (``simulate`` with the scenario's own algorithm, step and stop, its FMUs); the page gives its heading, its
description (the SSD's comment), both pictures by paths relative to the page, and what was run.

Pictures of scenarios that are gone are removed (``stale_pictures``): those the page being replaced shows, in the
form the gallery writes them (``![system of A/B](gallery/A-B.svg)``, ``![result of A/B](gallery/A-B_result.svg)``), that
no scenario draws now. Nothing else in the folder is touched, and without an earlier page nothing is removed.
"""
from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote

from mechfmu.ssp.files import replaced

SSD = "SystemStructure.ssd"
INTRO = ("Every scenario shipped in `scenarios/`: its system as `mechfmu draw` draws it, and its result as "
         "`mechfmu draw --plot` plots it, run with the scenario's own algorithm, step and stop time. The plot shows "
         "the bodies' positions (or the reference's signals), below them each connector's force, and the switching "
         "states (contact, stick or slip, limit stop) where the system has them (`mechfmu draw --plot-quantities "
         "positions,forces,states` chooses). Where the scenario has a reference result (the Modelica "
         "Association's, in `reference/`), the plot shows it dashed with its tube (2e-3 of the time span and of the "
         "signal's range) as a band. A system picture is at most 1,200 px wide: longer rows of blocks wrap. Opened "
         "on its own, it shows the details of a block, port or wire under the pointer. Run again, the gallery "
         "removes the pictures of scenarios that are gone.")


@dataclass
class Entry:
    """One scenario of the gallery: its folder, gallery name and what its run gave."""
    folder: Path
    name: str
    title: str = ""
    description: str = ""
    run: str = ""
    plotted: tuple[str, ...] = ()
    seconds: float = 0.0


def shipped_scenarios(root: str | Path) -> list[Path]:
    """The scenario folders under ``root`` (each holding a SystemStructure.ssd): the top level's first, by name."""
    folders = [ssd.parent for ssd in Path(root).rglob(SSD)]
    return sorted(folders, key=lambda f: (len(f.relative_to(root).parts), f.relative_to(root).as_posix()))


def gallery_name(folder: Path, root: str | Path) -> str:
    """A scenario's file name stem in the gallery: its path under ``root`` joined by '-'."""
    return "-".join(Path(folder).relative_to(root).parts)


def draw_entry(entry: Entry, folder: Path) -> None:
    """The system diagram and result plot of one scenario into ``folder``; fills in ``entry``."""
    from mechfmu.drawing.diagram import draw_scenario
    from mechfmu.drawing.plot import plot_run, reference_file
    from mechfmu.drawing.ports import description
    from mechfmu.master.simulate import simulate
    from mechfmu.ssp.scenario import load_scenario

    scenario = load_scenario(entry.folder)
    entry.title, entry.description = scenario.name, description(scenario)
    diagram, plot = pictures(entry.name)
    draw_scenario(scenario, folder / diagram)
    start = time.perf_counter()
    result = simulate(scenario)
    entry.seconds = time.perf_counter() - start
    entry.plotted = tuple(plot_run(result, scenario, folder / plot))
    reference = reference_file(scenario)
    entry.run = (f"{result.algorithm or scenario.algorithm}, step {scenario.step_size:g} s, from "
                 f"{scenario.start_time:g} s to {scenario.stop_time:g} s"
                 + ("" if result.ok else f"; the run failed: {result.message}")
                 + (f"; reference: {reference.relative_to(entry.folder).as_posix()}" if reference else ""))


def plain(text: str) -> str:
    """``text`` (read from a scenario: its description, its folder's name, a run's message) as plain text in
    Markdown: on one line, every character that starts markup backslash-escaped, so none of it becomes HTML
    (``<script>``, ``<img onerror=..>``), a link or an image (``[x](javascript:..)``), a role, emphasis or code."""
    return re.sub(r"([\\`*\[\]<>|&{}#~])", r"\\\1", " ".join(text.split()))


def page_text(entries: list[Entry], folder: Path, page: Path, root: str | Path) -> str:
    """The MyST Markdown page of the gallery: a heading per scenario, its description and two pictures; what comes
    from the scenarios is ``plain`` text, the pictures' paths are percent-encoded."""
    images = quote(Path(os.path.relpath(folder, page.parent)).as_posix())
    lines = ["# Gallery", "", INTRO, "", f"Made by `mechfmu gallery {Path(folder).as_posix()}`.", ""]
    for entry in entries:
        where = plain(Path(entry.folder).relative_to(root).as_posix())
        lines += [f"## {where}", "", plain(entry.description) if entry.description else f"The scenario {where}.", "",
                  f"![system of {where}]({images}/{quote(entry.name)}.svg)", "",
                  f"![result of {where}]({images}/{quote(entry.name)}_result.svg)", "",
                  f"Run: {plain(entry.run)}. Plotted: {', '.join(plain(n) for n in entry.plotted)}.", ""]
    return "\n".join(lines)


def pictures(name: str) -> tuple[str, str]:
    """The file names the gallery writes for the scenario of gallery name ``name``: diagram and result plot."""
    return f"{name}.svg", f"{name}_result.svg"


def stale_pictures(folder: Path, page: Path, names: list[str]) -> list[Path]:
    """The pictures in ``folder`` that the earlier ``page`` shows as the gallery writes them (a scenario's
    ``![system of A/B](F/A-B.svg)`` and ``![result of A/B](F/A-B_result.svg)``, F the folder relative to the page)
    and that none of the scenarios ``names`` draws now; other files are never among them."""
    if not page.is_file():
        return []
    images = re.escape(quote(Path(os.path.relpath(folder, page.parent)).as_posix()))
    link = re.compile(rf"^!\[(system|result) of (.+)\]\({images}/([^)/]+)\)$")
    keep = {file for name in names for file in pictures(name)}
    found = []
    for line in page.read_text(encoding="utf-8", errors="replace").splitlines():
        match = link.match(line)
        if not match:
            continue
        kind, where, file = match[1], re.sub(r"\\(.)", r"\1", match[2]), unquote(match[3])
        path = folder / file
        if (file == pictures("-".join(where.split("/")))[kind == "result"] and file not in keep
                and Path(file).name == file and path.is_file() and not path.is_symlink()):
            found.append(path)
    return sorted(set(found))


def write_gallery(folder: str | Path, page: str | Path | None = None, root: str | Path = "scenarios",
                  progress: Callable[[Entry], None] | None = None,
                  removed: Callable[[str], None] | None = None) -> list[Entry]:
    """Draw and run every scenario under ``root`` into ``folder``, remove the pictures of scenarios that are gone
    (``stale_pictures``; ``removed`` is told of each, a line of text) and write the page (default: ``folder`` with
    ``.md``, beside it); ``progress`` sees each entry when it is done."""
    root, folder = Path(root), Path(folder)
    scenarios = shipped_scenarios(root) if root.is_dir() else []
    if not scenarios:
        raise ValueError(f"{root}: no scenarios (folders with a {SSD}) found; give --scenarios FOLDER")
    target = Path(page) if page is not None else folder.with_suffix(".md")
    if target.suffix.lower() != ".md":
        raise ValueError(f"{target}: the gallery page is Markdown; give a file name ending in .md")
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for scenario in scenarios:
        entry = Entry(scenario, gallery_name(scenario, root))
        draw_entry(entry, folder)
        entries.append(entry)
        if progress:
            progress(entry)
    for stale in stale_pictures(folder, target, [entry.name for entry in entries]):
        stale.unlink()
        if removed:
            removed(f"removed {stale}: its scenario is gone")
    target.parent.mkdir(parents=True, exist_ok=True)
    text = page_text(entries, folder, target, root)
    with replaced(target) as temporary:
        temporary.write_text(text, encoding="utf-8")
    return entries
