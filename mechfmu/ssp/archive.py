"""Unpacking an ``.ssp`` archive or an FMU, bounded and cleaned up.

Before anything is written or read the zip's central directory is checked against three limits (an FMU's
modelDescription is read only from an FMU that passes them), and while unpacking the bytes actually written
are counted, so a header that understates a size gets no further. The same limits hold for an FMU inside an
archive (stored 1:1, so the archive's own check never sees inside it) and for one in a scenario folder:

- ``MECHFMU_SSP_MAX_BYTES`` (default 2 GiB) the total unpacked size; an archive of ours holds one FMU per
  instance (``mechfmu export-ssp``), 0.12 to 0.16 MB built for this machine, 0.65 to 0.69 MB for four
  platforms, so a 2,001-FMU archive unpacks to about 0.3 GB, or 1.4 GB;
- ``MECHFMU_SSP_MAX_ENTRIES`` (default 100,000) the number of entries (2,001 FMUs are 2,005);
- ``MECHFMU_SSP_MAX_RATIO`` (default 200) an entry's unpacked size over its packed size, for entries
  above 1 MiB; our FMUs pack 3:1, a 2,001-component SSD 48:1, zeros 1000:1.

Each is raised by setting its environment variable (an integer). Every unpacked folder
(``mechfmu_<name>_*`` in the temporary directory) holds a marker with its owner's process id and start
time; it is removed when that process ends, and, should the process be killed, by the next process that
unpacks an archive: a folder is removed only if it is ours (our user, our marker) and its owner is gone.
A message never names such a folder: ``shown`` writes a path in it as a path in the archive the user gave
(``/home/me/bad.ssp/SystemStructure.ssd``, as Python's zipimport names a module in a zip file).
"""
from __future__ import annotations

import atexit
import errno
import os
import posixpath
import re
import shutil
import tempfile
import zipfile
import zlib
from pathlib import Path

#: environment variable -> (default, what it bounds)
LIMITS = {
    "MECHFMU_SSP_MAX_BYTES": (2 * 1024**3, "total unpacked size in bytes"),
    "MECHFMU_SSP_MAX_ENTRIES": (100_000, "number of entries"),
    "MECHFMU_SSP_MAX_RATIO": (200, "unpacked/packed size of an entry above 1 MiB"),
}
RATIO_FLOOR = 1024**2  # a smaller entry cannot be a bomb
PREFIX = "mechfmu_"
MARKER = ".mechfmu_owner"
CHUNK = 1024**2
#: the errors of a file and a folder of an archive that share a name
CLASHES = (errno.EEXIST, errno.EISDIR, errno.ENOTDIR)
CLASH = " (the archive holds a file and a folder of that name)"


class ArchiveError(ValueError):
    """Why an archive cannot be unpacked, and what to do."""


def limit(name: str) -> int:
    """The limit set by environment variable ``name`` (its default when unset); ValueError if not an integer."""
    text = os.environ.get(name)
    if text is None:
        return LIMITS[name][0]
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise ArchiveError(f"{name}={text!r} is not a positive integer (the {LIMITS[name][1]} allowed)")
    return value


def _exceeded(what: str, value: float, name: str, allowed: int) -> ArchiveError:
    return ArchiveError(f"{what} {value:,.0f} exceeds the limit {allowed:,} ({LIMITS[name][1]}); if the archive "
                        f"is trusted, raise it: {name}={max(int(value) + 1, 2 * allowed)}")


def check_directory(zf: zipfile.ZipFile) -> None:
    """The limits, from the sizes the central directory declares; no entry named twice (which one a reader takes
    is up to it: an .ssp with two SystemStructure.ssd would run one of them silently)."""
    entries = zf.infolist()
    names: set[str] = set()
    for info in entries:
        name = posixpath.normpath(info.filename.replace("\\", "/"))  # ./x and a/../x are x
        if name in names:
            raise ArchiveError(f"entry {info.filename!r} names {name!r} a second time in the archive: which one is "
                               "meant is undefined")
        names.add(name)
    if len(entries) > (allowed := limit("MECHFMU_SSP_MAX_ENTRIES")):
        raise _exceeded("entry count", len(entries), "MECHFMU_SSP_MAX_ENTRIES", allowed)
    total = sum(info.file_size for info in entries)
    if total > (allowed := limit("MECHFMU_SSP_MAX_BYTES")):
        raise _exceeded("unpacked size", total, "MECHFMU_SSP_MAX_BYTES", allowed)
    ratio_limit = limit("MECHFMU_SSP_MAX_RATIO")
    for info in entries:
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > RATIO_FLOOR and ratio > ratio_limit:
            raise _exceeded(f"{info.filename}: compression ratio", ratio, "MECHFMU_SSP_MAX_RATIO", ratio_limit)


def _unpack_entry(zf: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, budget: int) -> int:
    """Write one entry to ``target``, at most ``budget`` bytes; the bytes written. ArchiveError if it holds
    more than it declares, more than the budget, or not what its CRC says."""
    written, crc = 0, 0
    with zf.open(info) as source, open(target, "wb") as sink:
        while chunk := source.read(CHUNK):
            written += len(chunk)
            if written > budget:
                raise _exceeded("unpacked size", written, "MECHFMU_SSP_MAX_BYTES", limit("MECHFMU_SSP_MAX_BYTES"))
            if written > info.file_size:
                raise ArchiveError(f"corrupt: {info.filename} holds more than the {info.file_size} bytes it declares")
            crc = zlib.crc32(chunk, crc)
            sink.write(chunk)
    if written != info.file_size or crc != info.CRC:
        raise ArchiveError(f"corrupt: {info.filename} does not match its header (size {written} of "
                           f"{info.file_size}, CRC {crc:08x} of {info.CRC:08x})")
    return written


def _other_platform(name: str) -> bool:
    """An FMU's entry ``binaries/<platform>/...`` of a platform other than this one (never loaded here)."""
    import fmpy
    parts = name.split("/")
    return len(parts) > 2 and parts[0] == "binaries" and parts[1] not in (fmpy.platform, fmpy.platform_tuple)


def unpack_into(archive: Path, folder: Path, kind: str = "SSP archive") -> None:
    """Unpack ``archive`` (an ``kind``) into ``folder`` within the limits (an FMU without its binaries for other
    platforms, which are neither read nor checked); ArchiveError saying what is wrong,
    naming the entry and the path where a file cannot be written (a file and a folder of one name, a full
    disk, the file size limit)."""
    root = folder.resolve()
    try:
        with zipfile.ZipFile(archive) as zf:
            check_directory(zf)
            budget = limit("MECHFMU_SSP_MAX_BYTES")
            for info in zf.infolist():
                if kind == "FMU" and _other_platform(info.filename):
                    continue
                target = (root / info.filename).resolve()
                if not target.is_relative_to(root) or (target == root and not info.is_dir()):
                    raise ArchiveError(f"entry {info.filename!r} lies outside the archive's folder")
                try:
                    if info.is_dir():
                        target.mkdir(parents=True, exist_ok=True)
                        continue
                    target.parent.mkdir(parents=True, exist_ok=True)
                    budget -= _unpack_entry(zf, info, target, budget)
                except OSError as exc:
                    raise ArchiveError(f"entry {info.filename!r} cannot be unpacked to {exc.filename or target}: "
                                       f"{exc.strerror or exc}{CLASH if exc.errno in CLASHES else ''}") from None
    except zipfile.BadZipFile as exc:
        raise ArchiveError(f"not an {kind} or a corrupt one (zip: {exc})") from None
    except zlib.error as exc:
        raise ArchiveError(f"corrupt archive (zlib: {exc})") from None
    except (EOFError, NotImplementedError, RuntimeError) as exc:  # truncated, unknown method, encrypted
        raise ArchiveError(f"corrupt or unsupported archive ({type(exc).__name__}: {exc})") from None


def _start_time(pid: int) -> str:
    """The start time of process ``pid`` in clock ticks since boot ('' where /proc does not say)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[1].split()[19]


def _owner_alive(marker: Path) -> bool:
    """Whether the process a marker names still runs (a reused process id with another start time does not)."""
    try:
        pid_text, _, started = marker.read_text().partition(" ")
        pid = int(pid_text)
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (ValueError, OSError):
        return True  # another user's process, or a marker unreadable: not ours to judge
    return not started.strip() or _start_time(pid) in ("", started.strip())


def remove_orphans(directory: Path | None = None) -> list[Path]:
    """Remove the unpacked folders in ``directory`` (the temporary one) whose owner process is gone; the
    folders removed. Left alone: anything not a folder of ours with our marker, and folders of live owners."""
    directory = Path(directory or tempfile.gettempdir())
    removed = []
    for folder in directory.glob(f"{PREFIX}*"):
        marker = folder / MARKER
        try:
            if (folder.is_symlink() or not folder.is_dir() or folder.lstat().st_uid != os.getuid()
                    or marker.is_symlink() or not marker.is_file() or marker.lstat().st_uid != os.getuid()):
                continue
        except OSError:
            continue
        if not _owner_alive(marker):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


_extracted: dict[tuple[str, float], Path] = {}
#: unpacked folder (as made, and resolved) -> the archive it holds
_origins: dict[str, str] = {}
_checked: set[tuple[str, float, int]] = set()


def check_file(archive: str | Path, kind: str = "FMU") -> None:
    """ArchiveError naming ``archive`` (an ``kind``) if its directory exceeds the limits (``check_directory``;
    once per file, modification time and size). A file that is not a zip passes: its reader says what it is."""
    archive = Path(archive).resolve()
    try:
        stat = archive.stat()
        key = (str(archive), stat.st_mtime, stat.st_size)
        if key in _checked:
            return
        with zipfile.ZipFile(archive) as zf:
            check_directory(zf)
    except (OSError, zipfile.BadZipFile):
        return
    except ArchiveError as exc:
        raise ArchiveError(f"{kind} {archive}: {exc}") from None
    _checked.add(key)


def extract(archive: str | Path, kind: str = "SSP archive") -> Path:
    """The folder an ``.ssp`` archive or an FMU (``kind``) is unpacked to (once per file and modification
    time; removed when the process ends). ArchiveError naming what is wrong; a half-unpacked folder is removed."""
    archive = Path(archive).resolve()
    key = (str(archive), archive.stat().st_mtime)
    if key in _extracted:
        return _extracted[key]
    if not _extracted:
        remove_orphans()
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{archive.stem}_"))
    atexit.register(shutil.rmtree, folder, True)
    (folder / "marker.tmp").write_text(f"{os.getpid()} {_start_time(os.getpid())}")
    os.replace(folder / "marker.tmp", folder / MARKER)  # whole, or not there, for another process looking
    try:
        unpack_into(archive, folder, kind)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    _extracted[key] = folder
    _origins[str(folder)] = _origins[str(folder.resolve())] = str(archive)
    return folder


def carries_its_fmus(path: str | Path) -> bool:
    """Whether ``path`` is an SSP archive (a file) within the limits whose every component is an FMU inside it
    (``resources/...``): a run of it needs none of mechfmu's own FMUs. False for anything else (a folder, a source
    outside the archive, a file that is not a readable archive: its reading says what is wrong)."""
    import xml.etree.ElementTree as ET
    try:
        with zipfile.ZipFile(path) as zf:
            check_directory(zf)
            names = set(zf.namelist())
            root = ET.fromstring(zf.read("SystemStructure.ssd"))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile, ArchiveError, ET.ParseError):
        return False
    sources = [e.get("source", "") for e in root.iter() if e.tag.rpartition("}")[2] == "Component"]
    return bool(sources) and all(s.startswith("resources/") and ".." not in s.split("/") and s in names
                                 for s in sources)


def shown(text: object) -> str:
    """``text`` (a message or a path) with every unpacked folder in it written as the archive it holds: a path
    inside one reads ``<archive>/<entry>`` (an FMU unpacked from an unpacked archive reads
    ``bad.ssp/resources/Mass.fmu/...``). Text naming no such folder is returned as it is."""
    text = str(text)
    for _ in range(len(_origins) + 1):  # nested: an FMU's folder -> an archive's folder -> the archive
        before = text
        for folder in sorted(_origins, key=len, reverse=True):
            if folder in text:
                text = re.sub(re.escape(folder) + r"(?![\w.-])", _origins[folder].replace("\\", r"\\"), text)
        if text == before:
            break
    return text
