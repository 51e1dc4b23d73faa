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
and it is copied, never written to: FMUs go to the user's FMU folder, as built ones do.
"""
from __future__ import annotations

import os
import platform as host
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

PREBUILT_DIR = Path(__file__).resolve().parents[1] / "prebuilt"


def this_platform() -> str | None:
    """The ``PLATFORMS`` folder of the machine running this Python, None for one we build no binary for."""
    machine = host.machine().lower()
    if sys.platform.startswith("linux"):
        return {"x86_64": "linux64", "amd64": "linux64", "aarch64": "aarch64-linux", "arm64": "aarch64-linux"}.get(
            machine)
    if sys.platform == "win32":
        return "win64" if machine in ("amd64", "x86_64") else None
    return "darwin64" if sys.platform == "darwin" else None


def prebuilt_library(name: str, prebuilt_dir: Path | None = None) -> Path | None:
    """The prebuilt library ``name`` (with its digest and suffix) for this machine in ``prebuilt_dir`` (default:
    ``PREBUILT_DIR``), None if there is none."""
    folder = this_platform()
    path = (prebuilt_dir or PREBUILT_DIR) / "native" / folder / name if folder else None
    return path if path is not None and path.is_file() else None


def copy_prebuilt(model: str, target: Path, current: Callable[[Path], bool], prebuilt_dir: Path | None = None) -> bool:
    """Copy the prebuilt FMU of ``model`` in ``prebuilt_dir`` (default: ``PREBUILT_DIR``) to ``target`` (whole or not
    at all) if there is one and ``current(path)`` accepts it; whether it did."""
    source = (prebuilt_dir or PREBUILT_DIR) / f"{model}.fmu"
    if not source.is_file() or source.resolve() == Path(target).resolve() or not current(source):
        return False
    partial = Path(target).with_name(f".{Path(target).name}.{os.getpid()}.tmp")
    shutil.copyfile(source, partial)
    partial.replace(target)
    return True
