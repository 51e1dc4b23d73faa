"""Where mechfmu's FMUs are built and looked up, how a component may run inside one and which way a built FMU runs
it, and the lock of a folder's builder: what a run needs without importing the build (``mechfmu.fmu.build``, which
imports every component)."""
from __future__ import annotations

import os
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: the source checkout (or the installed package's parent)
ROOT = Path(__file__).resolve().parents[2]
#: how a component runs inside its FMU: "native" (its law in C where it has one, no Python; the embedding
#: otherwise) or "python" (every component in the Python the FMU embeds)
BACKENDS = ("native", "python")
#: a native FMU's build stamp: the digest of its sources (a Python-embedding FMU's is its slave module's name)
NATIVE_STAMP = "resources/mechfmu_native.txt"


def default_fmu_dir() -> Path:
    """Where FMUs are built and looked up: ``$MECHFMU_FMU_DIR`` if set; in a source checkout its
    ``fmus/``; otherwise the user's cache, ``${XDG_CACHE_HOME:-~/.cache}/mechfmu/fmus``."""
    if os.environ.get("MECHFMU_FMU_DIR"):
        return Path(os.environ["MECHFMU_FMU_DIR"]).expanduser()
    if (ROOT / "pyproject.toml").is_file() and (ROOT / "fmus").is_dir():
        return ROOT / "fmus"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mechfmu" / "fmus"


FMU_DIR = default_fmu_dir()


@contextmanager
def build_lock(directory: Path) -> Iterator[None]:
    """One builder per FMU folder at a time (``flock`` on ``.build.lock``, released at exit even after a
    crash). Each FMU appears complete at once (written beside it and renamed), so a reader, e.g. a test
    session running while another one builds, never sees a half-written or unpackaged FMU."""
    import fcntl
    with open(directory / ".build.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def fmu_backend(path: Path) -> str | None:
    """How the FMU at ``path`` runs its component ("native" or "python"), None if it is not one of ours."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
    except (OSError, zipfile.BadZipFile):
        return None
    return "native" if NATIVE_STAMP in names else "python" if "resources/slavemodule.txt" in names else None
