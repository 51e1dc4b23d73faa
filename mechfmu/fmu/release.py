"""The wheel's prebuilt files (``mechfmu.fmu.prebuilt``), built for every platform by ``build_release``, which the
wheel build (``setup.py``'s ``build_py``) runs with zig, the cross compiler."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from mechfmu.fmu.build import build, source_hash
from mechfmu.fmu.native import PLATFORMS, compile_for, compile_library, exchange_arguments, exchange_library


def build_release(prebuilt_dir: Path) -> list[Path]:
    """Build into ``prebuilt_dir`` every FMU for every platform and, for every platform, the exchange and the host
    library of the laws (needs zig: ``mechfmu.fmu.native.zig``); the files written."""
    shutil.rmtree(prebuilt_dir, ignore_errors=True)  # an earlier build's files (other digests) go
    prebuilt_dir.mkdir(parents=True)
    written = build(directory=prebuilt_dir, platforms=list(PLATFORMS), force=True)
    (prebuilt_dir / ".build.lock").unlink(missing_ok=True)
    for folder, spec in PLATFORMS.items():
        native = prebuilt_dir / "native" / folder
        native.mkdir(parents=True, exist_ok=True)
        laws = native / f"mechfmu_components_{source_hash(runtime=False)}{spec.extension}"
        compile_library(laws, folder)
        exchange = native / exchange_library(spec.extension)
        with tempfile.TemporaryDirectory(prefix="mechfmu_release_") as tmp:
            flags, sources = exchange_arguments()
            compile_for(folder, flags, [], exchange, sources, Path(tmp))
        written += [laws, exchange]
    return written
