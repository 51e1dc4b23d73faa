"""The wheel's prebuilt files (``mechfmu.fmu.prebuilt``), built for every platform by ``build_release``, which the
wheel build (``setup.py``'s ``build_py``) runs with zig, the cross compiler. Every binary is built by zig, this
machine's too (``portable``): the Linux ones for glibc ``mechfmu.fmu.native.GLIBC_MINIMUM`` (manylinux2014's), so
that they load on every Linux the wheel is used on, not only on one with the builder's glibc."""
from __future__ import annotations

import functools
import shutil
import tempfile
from pathlib import Path

from mechfmu.fmu import integrity
from mechfmu.fmu.build import build, source_hash
from mechfmu.fmu.native import (
    PLATFORMS,
    compile_for,
    compile_library,
    exchange_arguments,
    exchange_library,
    in_parallel,
)


def build_release(prebuilt_dir: Path) -> list[Path]:
    """Build into ``prebuilt_dir`` every FMU for every platform and, for every platform, the exchange and the host
    library of the laws (needs zig: ``mechfmu.fmu.native.zig``), then the index of their sizes and SHA-256
    (``mechfmu.fmu.integrity.write_index``: each is checked against it before it is used); the files written."""
    shutil.rmtree(prebuilt_dir, ignore_errors=True)  # an earlier build's files (other digests) go
    prebuilt_dir.mkdir(parents=True)
    written = build(directory=prebuilt_dir, platforms=list(PLATFORMS), force=True, portable=True)
    (prebuilt_dir / ".build.lock").unlink(missing_ok=True)
    libraries = []
    for folder, spec in PLATFORMS.items():
        native = prebuilt_dir / "native" / folder
        native.mkdir(parents=True, exist_ok=True)
        libraries.append((folder, native / f"mechfmu_components_{source_hash(runtime=False)}{spec.extension}",
                          native / exchange_library(spec.extension)))
    in_parallel([*(functools.partial(compile_library, laws, folder, portable=True) for folder, laws, _ in libraries),
                 *(functools.partial(_exchange, folder, exchange) for folder, _, exchange in libraries)])
    written += [path for _, laws, exchange in libraries for path in (laws, exchange)]
    return [*written, integrity.write_index(prebuilt_dir, written)]


def _exchange(folder: str, target: Path) -> None:
    """The master's compiled exchange for ``folder``'s platform, with zig."""
    with tempfile.TemporaryDirectory(prefix="mechfmu_release_") as tmp:
        flags, sources = exchange_arguments()
        compile_for(folder, flags, [], target, sources, Path(tmp), portable=True)
