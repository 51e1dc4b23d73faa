"""The FMU's native binary (``components/native/``: the FMI glue, the runtime, the laws) for every platform.

One binary per platform serves every FMU: it is named after the model when packed (the model identifier is the
binary's name). linux64 is compiled with the system C compiler (``$CC``, ``cc`` or ``gcc``; zig if there is none)
for this machine, or with zig for any Linux x86-64 with glibc GLIBC_MINIMUM or later (``portable``: a wheel's); the
other platforms with zig (the PyPI package ``ziglang``, pinned, so every builder has the same cross compiler), every
Linux one for glibc GLIBC_MINIMUM (manylinux2014's), whatever glibc the builder has:

============== ===================================== ============================================
folder         binary                                a Python-embedding FMU's target needs
============== ===================================== ============================================
linux64        ``<model>.so``, x86-64 ELF            ``libpython3.X.so.1.0``
aarch64-linux  ``<model>.so``, AArch64 ELF           ``libpython3.X.so.1.0``
win64          ``<model>.dll``, x86-64 PE (UCRT)     ``python3X.dll`` (python.org installer or
                                                     embeddable package)
darwin64       ``<model>.dylib``, universal Mach-O   ``libpython3.X.dylib`` or a Python.framework
               (x86_64 and arm64 slices, macOS 11+)
============== ===================================== ============================================

A native FMU (the shipped ones) needs the C runtime alone on every platform. FMI 2.0 names linux64, win64 and
darwin64; for AArch64 Linux it names nothing, and the folder is FMI 3.0's
platform tuple, which FMI 2.0.4 tools also look for. darwin64 holds both Mac architectures in one universal
binary, as Apple silicon hosts (which look in darwin64 only) need.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from mechfmu.fmu.extras import install_command
from mechfmu.fmu.native_tables import NATIVE_DIR

SOURCES_DIR = Path(__file__).resolve().parent
#: the glue layer of each FMI version (the standard's state machine over the runtime of ``runtime.h``)
FMI2_GLUE, FMI3_GLUE = NATIVE_DIR / "fmi2_functions.c", NATIVE_DIR / "fmi3_functions.c"
_SHARED = [NATIVE_DIR / name for name in ("runtime.h", "glue.c", "glue.h", "platform.c", "platform.h", "numbers.h")]
#: a Python-embedding FMU's binary: the glue, the Python runtime, the operating system under both
SOURCES = [FMI2_GLUE, NATIVE_DIR / "python_runtime.c", *_SHARED]
#: a native FMU's binary but for its laws (``native_tables.law_sources``) and generated tables: the glue, the native
#: runtime and its text layer
NATIVE_SOURCES = [FMI2_GLUE, *(NATIVE_DIR / name for name in ("runtime.c", "text.c", "text.h")), *_SHARED]
ZIG_VERSION = "0.17.1"  # the pinned cross compiler (pyproject.toml's cross extra: ziglang==ZIG_VERSION)
NAME = "mechfmu_fmi2"  # the name a binary has inside (DLL export name, Mach-O install name), the same in every FMU
MACOS_MINIMUM = "11.0"  # the oldest macOS the darwin64 binary loads on (the first with Apple silicon)
#: the oldest glibc a Linux binary built by zig loads on (manylinux2014's; zig links the symbol versions it has)
GLIBC_MINIMUM = "2.17"


@dataclass(frozen=True)
class Platform:
    """A binaries/ folder: the binary's extension, zig's targets (several: one universal binary), the name of the
    Python library on the target ({version} "3.11", {digits} "311"); ``system``: built for this machine with the
    system C compiler unless asked to be portable (zig's target then)."""
    folder: str
    extension: str
    zig_targets: tuple[str, ...]
    python_library: str
    description: str
    system: bool = False

    def needs_zig(self, portable: bool = False) -> bool:
        """Whether a build of this platform's binary needs zig (``portable``: for other machines than this one)."""
        return portable or not self.system

    def library_name(self, version: str) -> str:
        return self.python_library.format(version=version, digits=version.replace(".", ""))


PLATFORMS = {platform.folder: platform for platform in (
    Platform("linux64", ".so", (f"x86_64-linux-gnu.{GLIBC_MINIMUM}",), "libpython{version}.so.1.0", "Linux x86-64",
             system=True),
    Platform("aarch64-linux", ".so", (f"aarch64-linux-gnu.{GLIBC_MINIMUM}",), "libpython{version}.so.1.0",
             "Linux AArch64"),
    Platform("win64", ".dll", ("x86_64-windows-gnu",), "python{digits}.dll", "Windows x86-64"),
    Platform("darwin64", ".dylib", (f"x86_64-macos.{MACOS_MINIMUM}", f"aarch64-macos.{MACOS_MINIMUM}"),
             "libpython{version}.dylib", "macOS, Intel and Apple silicon"),
)}
HOST_PLATFORM = "linux64"  # the platform the builder runs on (the FMU build runs on Linux x86-64)


def parse_platforms(text: str) -> list[str]:
    """``--platforms``: "all", "host" or folder names separated by commas; ValueError names an unknown one."""
    if text.strip() in ("", "all"):
        return list(PLATFORMS)
    names = [HOST_PLATFORM if name.strip() == "host" else name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in PLATFORMS]
    if unknown:
        raise ValueError(f"--platforms: unknown platform {unknown[0]!r}: the platforms are {', '.join(PLATFORMS)} "
                         "(or all, host)")
    return list(dict.fromkeys(names))


def zig() -> list[str]:
    """The command that runs the pinned zig (``python -m ziglang``); RuntimeError says how to install it."""
    if importlib.util.find_spec("ziglang") is None:
        raise RuntimeError(f"building the FMUs' Windows, macOS and AArch64 binaries needs zig (ziglang=="
                           f"{ZIG_VERSION}), which comes with mechfmu's cross extra: {install_command('cross')} "
                           "(or build for this machine alone: mechfmu build --platforms host, the default)")
    return [sys.executable, "-m", "ziglang"]


def _defines(platform: Platform, runtime: dict[str, str]) -> list[str]:
    defines = {"MECHFMU_PYTHON_VERSION": runtime["version"],
               "MECHFMU_LIBPYTHON_SONAME": platform.library_name(runtime["version"]),
               # the build machine's own library, for a target that is this machine
               "MECHFMU_LIBPYTHON_PATH": runtime["library"] if platform.folder == HOST_PLATFORM else ""}
    return [f"-D{k}={json.dumps(v, ensure_ascii=False)}" for k, v in defines.items()]


def _compile(compiler: list[str], arguments: list[str], target: Path, sources: list[Path]) -> None:
    libraries = [a for a in arguments if a.startswith("-l")]  # after the sources, which need them
    cmd = [*compiler, *(a for a in arguments if not a.startswith("-l")), "-o", str(target),
           *(str(path) for path in sources if path.suffix == ".c"), *libraries]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"compiling the native binary failed ({cmd[0]} exited with status {proc.returncode}; the "
                           f"command: {' '.join(cmd)}):\n{proc.stderr}")


def compile_binary(target: Path, runtime: dict[str, str] | None, platform: str = HOST_PLATFORM,
                   host_library: bool = False, portable: bool = False, fmi_version: int = 2) -> None:
    """Compile the native binary for ``platform`` (a PLATFORMS key) into ``target``: for the Python ``runtime``
    (``mechfmu.fmu.build.python_runtime``), or with ``runtime=None`` the native components (their laws in C,
    ``mechfmu.fmu.native_tables``), which need no Python; with ``host_library`` their host library
    (``compile_library``) instead of an FMU binary; ``portable``: with zig for every machine of the platform
    (``compile_for``)."""
    import fmpy
    spec = PLATFORMS[platform]
    headers = Path(fmpy.__file__).parent / "c-code"  # the FMI 2.0 and 3.0 headers fmpy ships
    # -ffp-contract=off: no fused multiply-add, so every operation rounds as Python's does (the same bits)
    warnings = ["-O2", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off", f"-I{headers}"]
    with tempfile.TemporaryDirectory(prefix="mechfmu_native_") as tmp:
        from mechfmu.fmu import native_tables
        if runtime is None:
            generated = native_tables.write(Path(tmp))
            glue = [] if host_library else [FMI3_GLUE if fmi_version == 3 else FMI2_GLUE]
            sources = [*glue, *(p for p in NATIVE_SOURCES if p != FMI2_GLUE), *generated, *native_tables.law_sources()]
            warnings += ["-DMECHFMU_NATIVE", f"-I{tmp}", f"-I{NATIVE_DIR}",
                         *(["-DMECHFMU_HOST_LIBRARY"] if host_library else [])]
        else:
            sources, warnings = SOURCES, [*warnings, f"-I{NATIVE_DIR}", *_defines(spec, runtime)]
        libraries = ["-lm"] if runtime is None else ["-lpthread", "-ldl"]
        compile_for(platform, warnings, libraries, target, sources, Path(tmp), portable)


def in_parallel(calls: Iterable[Callable[[], object]]) -> None:
    """Run the compilations ``calls`` (each its own compiler process and temporary folder) at once, as many as this
    machine has cores; the first one's error is raised once all have ended."""
    calls = list(calls)
    with ThreadPoolExecutor(max_workers=max(1, min(len(calls), os.cpu_count() or 1))) as pool:
        futures = [pool.submit(call) for call in calls]
    for future in futures:
        future.result()


def compile_for(platform: str, arguments: list[str], libraries: list[str], target: Path, sources: list[Path],
                tmp: Path, portable: bool = False) -> None:
    """Compile ``sources`` into the shared library ``target`` for ``platform`` (a PLATFORMS key): with the system
    C compiler for this machine (zig if there is none) unless ``portable``, else with zig, one slice per zig target
    (several: one universal Mach-O binary; Linux: glibc GLIBC_MINIMUM's symbol versions); ``libraries``
    (``-l...``) are the Unix ones, ``tmp`` a folder for the slices."""
    spec = PLATFORMS[platform]
    if not spec.needs_zig(portable):
        compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
        command, extra = ([compiler], []) if compiler else ([*zig(), "cc"], ["-target", spec.zig_targets[0]])
        _compile(command, [*extra, "-shared", "-fPIC", "-fvisibility=hidden", *arguments, "-lpthread", *libraries],
                 target, sources)
        return
    system_libraries = {".dll": ["-ladvapi32"], ".so": ["-lpthread", *libraries],
                        ".dylib": [f"-Wl,-install_name,@rpath/{NAME}.dylib"]}[spec.extension]
    slices = []
    for zig_target in spec.zig_targets:
        thin = tmp / zig_target / f"{NAME}{spec.extension}"  # the name the binary calls itself
        thin.parent.mkdir(parents=True, exist_ok=True)
        _compile([*zig(), "cc"], ["-target", zig_target, "-shared", "-fPIC", "-fvisibility=hidden", "-g0",
                                  *arguments, *system_libraries], thin, sources)
        slices.append(thin.read_bytes())
    target.write_bytes(slices[0] if len(slices) == 1 else universal_binary(slices))


#: the master's compiled exchange (``mechfmu.master.exchange``): its source, built for the machine running the master
EXCHANGE_SOURCE = SOURCES_DIR.parent / "master" / "exchange.c"
CSV_TEXT_SOURCE = EXCHANGE_SOURCE.parent / "csv_text.c"
DENSE_POINTS_SOURCE = EXCHANGE_SOURCE.parent / "dense_points.c"


def exchange_library(suffix: str) -> str:
    """The file name of the compiled exchange of this source for a platform's library ``suffix``."""
    digest = hashlib.sha256()
    for path in (EXCHANGE_SOURCE, CSV_TEXT_SOURCE, DENSE_POINTS_SOURCE,
                 *sorted((CSV_TEXT_SOURCE.parent / "ryu").glob("*.[ch]"))):
        digest.update(path.read_bytes())
    return f"mechfmu_exchange_{digest.hexdigest()[:10]}{suffix}"


def exchange_arguments() -> tuple[list[str], list[Path]]:
    """(compiler arguments, sources) of the exchange library: the FMI calls, the result rows' text and the monolithic
    master's communication points (FMI 2.0 headers from fmpy; Ryu's shortest digits beside the source; no fused
    multiply-add)."""
    import fmpy
    headers = Path(fmpy.__file__).parent / "c-code"
    return (["-O2", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off", f"-I{headers}", f"-I{EXCHANGE_SOURCE.parent}"],
            [EXCHANGE_SOURCE, CSV_TEXT_SOURCE, DENSE_POINTS_SOURCE])


def compile_library(target: Path, platform: str = HOST_PLATFORM, portable: bool = False) -> None:
    """Compile the host library of the native components for ``platform`` into ``target``: the runtime and the laws
    of the native FMUs without the FMI entry points, with ``host_*`` calls (``components/native/runtime.c``) for the
    component objects (``components/native_component.py``), which run their laws as this C (``portable``:
    ``compile_for``)."""
    compile_binary(target, None, platform, host_library=True, portable=portable)


MACH_O_64 = 0xFEEDFACF
FAT_MAGIC = 0xCAFEBABE
SLICE_ALIGNMENT = 14  # 2**14 bytes: the page size of arm64 macOS


def universal_binary(slices: list[bytes]) -> bytes:
    """Thin 64-bit Mach-O files as one universal binary (what ``lipo -create`` writes): a big-endian fat header
    (FAT_MAGIC, the count), a fat_arch per slice (cputype, cpusubtype, offset, size, log2 alignment), then each
    slice at an offset aligned to 2**SLICE_ALIGNMENT."""
    header, body = struct.pack(">II", FAT_MAGIC, len(slices)), b""
    offset = 8 + 20 * len(slices)
    for data in slices:
        magic, cputype, cpusubtype = struct.unpack_from("<IiI", data)
        if magic != MACH_O_64:
            raise ValueError(f"not a thin 64-bit Mach-O file (magic {magic:#x})")
        padding = -(offset + len(body)) % (1 << SLICE_ALIGNMENT)
        body += b"\0" * padding
        header += struct.pack(">iIIII", cputype, cpusubtype & 0x00FFFFFF, offset + len(body), len(data),
                              SLICE_ALIGNMENT)
        body += data
    return header + body
