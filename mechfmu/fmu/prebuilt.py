"""What a wheel built for release carries already built, so that its user compiles nothing: every component's
native FMU with binaries for every platform (``mechfmu.fmu.native.PLATFORMS``), and for each platform the two
libraries the master loads (the compiled exchange, ``mechfmu/master/exchange.c``, and the host library of the
components' C laws for the in-process path), in ``mechfmu/prebuilt/`` of the installed package:

    prebuilt/<Model>.fmu
    prebuilt/native/<platform>/mechfmu_exchange_<digest>.<so|dll|dylib>
    prebuilt/native/<platform>/mechfmu_components_<digest>.<so|dll|dylib>

``mechfmu.fmu.release.build_release`` fills it (the wheel build, ``setup.py``'s ``build_py``, runs it with zig,
the cross compiler); a source checkout and an editable install have none and build for their machine as before. A
prebuilt file is used only when its digest is the installed sources' (an FMU: ``mechfmu.fmu.build.is_current``),
its binaries load on this machine (``this_platform``) and it is what the wheel's build wrote: its size and SHA-256
are those of the index ``prebuilt/manifest.json`` (``mechfmu.fmu.integrity``; a damaged one is named and built
anew, or refused in one line where nothing can build it). It is copied, never written to: FMUs go to the user's
FMU folder, as built ones do.
"""
from __future__ import annotations

import os
import platform as host
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from mechfmu.fmu import integrity

PREBUILT_DIR = Path(__file__).resolve().parents[1] / "prebuilt"


def this_platform() -> str | None:
    """The ``PLATFORMS`` folder of the machine running this Python whose prebuilt binaries load here, None for one
    they do not fit: another processor, a Linux without glibc (musl) or with a glibc older than the binaries'
    (``GLIBC_MINIMUM``), a macOS older than ``MACOS_MINIMUM`` (there mechfmu builds for the machine, as from
    sources)."""
    from mechfmu.fmu.native import GLIBC_MINIMUM, MACOS_MINIMUM
    machine = host.machine().lower()
    if sys.platform.startswith("linux"):
        if not _at_least(glibc_version(), GLIBC_MINIMUM):
            return None
        return {"x86_64": "linux64", "amd64": "linux64", "aarch64": "aarch64-linux", "arm64": "aarch64-linux"}.get(
            machine)
    if sys.platform == "win32":
        return "win64" if machine in ("amd64", "x86_64") else None
    return "darwin64" if sys.platform == "darwin" and _at_least(host.mac_ver()[0], MACOS_MINIMUM) else None


def glibc_version() -> str:
    """The version of the glibc this process runs on ("2.36"), "" if it runs on another C library (musl)."""
    try:
        name, _, version = (os.confstr("CS_GNU_LIBC_VERSION") or "").partition(" ")
    except (ValueError, OSError):  # a C library without the name (musl)
        return ""
    return version if name == "glibc" else ""


def _at_least(version: str, minimum: str) -> bool:
    """Whether the dotted ``version`` is ``minimum`` or later ("" or unreadable: no)."""
    try:
        return tuple(int(part) for part in version.split(".")[:2]) >= tuple(int(p) for p in minimum.split("."))
    except ValueError:
        return False


def prebuilt_library(name: str, prebuilt_dir: Path | None = None) -> Path | None:
    """The prebuilt library ``name`` (with its digest and suffix) for this machine in ``prebuilt_dir`` (default:
    ``PREBUILT_DIR``), None if there is none."""
    folder = this_platform()
    path = (prebuilt_dir or PREBUILT_DIR) / "native" / folder / name if folder else None
    return path if path is not None and path.is_file() else None


def copy_prebuilt(model: str, target: Path, current: Callable[[Path], bool], prebuilt_dir: Path | None = None,
                  damaged: list[str] | None = None) -> bool:
    """Copy the prebuilt FMU of ``model`` in ``prebuilt_dir`` (default: ``PREBUILT_DIR``) to ``target`` (whole or not
    at all) if there is one, it is what the wheel's build wrote (its size and SHA-256 in the folder's index,
    ``mechfmu.fmu.integrity``) and ``current(path)`` accepts it; whether it did. A damaged one is named
    (``integrity.notice``; the line appended to ``damaged``) and not copied."""
    folder = prebuilt_dir or PREBUILT_DIR
    source = folder / f"{model}.fmu"
    if not source.is_file() or source.resolve() == Path(target).resolve() or this_platform() is None:
        return False  # none, the same file, or binaries that do not load here
    partial = Path(target).with_name(f".{Path(target).name}.{os.getpid()}.tmp")
    reason = integrity.check_against(folder, source)
    if reason is None:
        if not current(source):
            return False
        shutil.copyfile(source, partial)
        reason = integrity.problem(partial, (integrity.read_index(folder) or {}).get(f"{model}.fmu"))  # the copy too
    if reason is not None:
        partial.unlink(missing_ok=True)
        line = f"{source}: {reason}"
        integrity.notice(f"{line}: not copied; building it anew")
        if damaged is not None:
            damaged.append(line)
        return False
    partial.replace(target)
    return True
