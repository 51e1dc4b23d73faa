"""Every binary mechfmu loads or copies is checked before: its size and SHA-256 against a manifest written when it
was built. A damaged file (truncated, overwritten) is named with what is wrong, then rebuilt where a C compiler
exists, or refused in one line; it is never loaded (a truncated shared library mapped by ``dlopen`` ends the
process with SIGBUS, a truncated FMU sends its reader into a rebuild that needs a compiler).

Two kinds of manifest:

- beside a binary built into a cache (the FMUs' folder's ``.native/``): ``<file>.sha256``, one JSON object
  ``{"file": name, "size": bytes, "sha256": hex}`` (``write_manifest``, ``check_beside``);
- a wheel's prebuilt files (``mechfmu.fmu.prebuilt``): one index, ``prebuilt/manifest.json``, ``{"files":
  {relative path: {"size": bytes, "sha256": hex}}}`` (``write_index``, ``check_against``).

A file is replaced by renaming a complete one over it, and its manifest after it, so a reader sees a whole file
with its own manifest, or a mismatch it resolves under the builders' lock (``mechfmu.fmu.build``).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import zipfile
import zlib
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

#: the manifest beside a binary: its name plus this suffix
MANIFEST_SUFFIX = ".sha256"
#: a wheel's index of its prebuilt files, in the prebuilt folder
INDEX = "manifest.json"


class DamagedBinary(RuntimeError):
    """A binary whose size or SHA-256 is not its manifest's, which could not be rebuilt: the message names the file,
    what is wrong and what to do, in one line."""


def measure(path: Path) -> dict[str, Any]:
    """``{"size": bytes, "sha256": hex}`` of the file at ``path`` (OSError if it cannot be read)."""
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as file:
        while chunk := file.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return {"size": size, "sha256": digest.hexdigest()}


def manifest_of(binary: Path) -> Path:
    """The manifest beside ``binary``."""
    return binary.with_name(binary.name + MANIFEST_SUFFIX)


def write_manifest(binary: Path, named: str | None = None) -> Path:
    """Write the manifest of ``binary`` beside it (whole or not at all), for the file name ``named`` (default: its
    own; a binary built under a temporary name is measured before it is renamed); the manifest's path."""
    name = named or binary.name
    target = manifest_of(binary.with_name(name))
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    partial.write_text(json.dumps({"file": name, **measure(binary)}) + "\n")
    os.replace(partial, target)
    return target


def problem(path: Path, expected: dict[str, Any] | None) -> str | None:
    """What is wrong with the file at ``path`` against ``expected`` (``{"size", "sha256"}``; None: no manifest), in
    words: None if nothing."""
    if expected is None:
        return "it has no manifest (the size and SHA-256 written when it was built), so it cannot be checked"
    try:
        found = measure(path)
    except OSError as exc:
        return f"it cannot be read ({exc.strerror or exc})"
    if not isinstance(expected.get("size"), int) or not isinstance(expected.get("sha256"), str):
        return f"its manifest is not a size and a SHA-256 ({json.dumps(expected)[:80]})"
    if found["size"] != expected["size"]:
        cut = "truncated" if found["size"] < expected["size"] else "grown"
        return f"damaged: {found['size']} bytes where {expected['size']} were built ({cut})"
    if found["sha256"] != expected["sha256"]:
        return (f"damaged: its SHA-256 is {found['sha256'][:16]}... where the build wrote {expected['sha256'][:16]}... "
                "(the same size, other bytes)")
    return None


def read_manifest(binary: Path) -> dict[str, Any] | None:
    """The manifest beside ``binary`` (``{"size", "sha256"}``), None if there is none or it is not one."""
    try:
        data = json.loads(manifest_of(binary).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("file") == binary.name else None


def check_beside(binary: Path) -> str | None:
    """What is wrong with ``binary`` against the manifest beside it (``problem``), None if nothing."""
    return problem(binary, read_manifest(binary))


def write_index(folder: Path, files: list[Path]) -> Path:
    """The index of ``files`` (inside ``folder``) written as ``folder/INDEX``: their paths relative to it, with
    POSIX separators, each with its size and SHA-256."""
    entries = {path.relative_to(folder).as_posix(): measure(path) for path in sorted(files)}
    target = folder / INDEX
    target.write_text(json.dumps({"files": entries}, indent=1, sort_keys=True) + "\n")
    return target


def read_index(folder: Path) -> dict[str, Any] | None:
    """The entries of ``folder/INDEX`` (relative path -> ``{"size", "sha256"}``), None if there is none or it is
    not an index."""
    try:
        data = json.loads((folder / INDEX).read_text())
    except (OSError, ValueError):
        return None
    files = data.get("files") if isinstance(data, dict) else None
    return files if isinstance(files, dict) else None


def check_against(folder: Path, path: Path) -> str | None:
    """What is wrong with ``path`` (a file in ``folder``) against ``folder``'s index (``problem``), None if
    nothing."""
    index = read_index(folder)
    if index is None:
        return f"the index of its folder, {folder / INDEX}, is missing or unreadable, so it cannot be checked"
    try:
        relative = path.relative_to(folder).as_posix()
    except ValueError:
        return f"it is not in {folder}"
    entry = index.get(relative)
    return problem(path, entry if isinstance(entry, dict) else None)


def zip_problem(path: Path, members: Iterable[str] = ()) -> str | None:
    """What is wrong with the zip archive at ``path`` (an FMU: each member is checked by its size and CRC-32 when it is
    read): its directory unreadable, or one of ``members`` (those it holds) not reading back; None if nothing, or if
    there is no file."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            for member in members:
                if member in names:
                    with archive.open(member) as file:
                        while file.read(1 << 20):
                            pass
    except FileNotFoundError:
        return None
    except (OSError, zipfile.BadZipFile, zlib.error, EOFError) as exc:
        return f"damaged: not a readable zip archive ({first_line(exc)})"
    return None


#: beside the FMUs: the archives that read back whole (``zip_problem``), each with its file's stat at the time
READ_BACK = ".read_back.json"
_READ_BACK_LIMIT = 1 << 20


def _stat_key(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _read_back_ledger(folder: Path) -> dict[str, list[int]]:
    try:
        with open(folder / READ_BACK, "rb") as file:
            ledger = json.loads(file.read(_READ_BACK_LIMIT + 1) or b"{}")
    except (OSError, ValueError):
        return {}
    return ledger if isinstance(ledger, dict) else {}


def zip_problem_once(path: Path, members: Iterable[str] = ()) -> str | None:
    """``zip_problem``, read only when the file changed since it last read back whole: a file that did is recorded
    in its folder's ``READ_BACK`` with its size, modification and change times and inode, which any rewrite of a byte
    changes (the change time even when the modification time is set back). A ledger that does not read as one is
    ignored, and it is replaced whole (rename), so readers and writers in other processes see one or the other."""
    path = Path(path)
    key = "\n".join([path.name, *sorted(members)])
    stat = _stat_key(path)
    ledger = _read_back_ledger(path.parent)
    if stat is not None and ledger.get(key) == stat:
        return None
    problem = zip_problem(path, members)
    if problem is None and stat is not None and stat == _stat_key(path):
        ledger[key] = stat
        text = json.dumps(ledger).encode()
        if len(text) <= _READ_BACK_LIMIT:
            temporary = path.parent / f".{READ_BACK}.{os.getpid()}.tmp"
            with contextlib.suppress(OSError):
                temporary.write_bytes(text)
                os.replace(temporary, path.parent / READ_BACK)
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)
    return problem


def notice(message: str) -> None:
    """One line on standard error: a damaged binary named, and what was done instead (rebuilt, not used)."""
    print(f"mechfmu: warning: {message}", file=sys.stderr)


def cached_binary(cache: Path, compile_into: Callable[[Path], None], lock: Callable[[], AbstractContextManager[Any]],
                  prebuilt: Path | None = None, prebuilt_folder: Path | None = None) -> Path:
    """The binary to load: ``cache`` if it matches the manifest beside it; else ``prebuilt`` (a wheel's file in
    ``prebuilt_folder``) if it matches that folder's index; else ``cache`` built anew by ``compile_into(partial)``
    under ``lock`` (the builders' lock of its folder: several processes may check and rebuild at once), written
    whole with its manifest. A damaged file on the way is named (``notice``) once it is rebuilt. DamagedBinary
    (one line: the damaged file, what is wrong, why it was not rebuilt) if building fails after a damaged file was
    found; the compiler's RuntimeError (or OSError) if it fails otherwise."""
    damaged = []
    if cache.is_file():
        reason = check_beside(cache)
        if reason is None:
            return cache
        if read_manifest(cache) is not None:  # a file without a manifest (an older cache) is rebuilt quietly
            damaged.append(f"{cache}: {reason}")
    if prebuilt is not None:
        reason = check_against(prebuilt_folder or prebuilt.parent, prebuilt)
        if reason is None:
            return prebuilt
        damaged.append(f"{prebuilt}: {reason}")
    cache.parent.mkdir(parents=True, exist_ok=True)
    with lock():
        if cache.is_file() and check_beside(cache) is None:  # built meanwhile by another process
            return cache
        partial = cache.with_name(f".{cache.name}.{os.getpid()}.tmp")
        try:
            compile_into(partial)
            write_manifest(partial, cache.name)  # the manifest first: a reader between the renames sees a mismatch,
            os.replace(partial, cache)           # and takes this lock before it judges
        except (OSError, RuntimeError) as exc:
            with contextlib.suppress(OSError):
                partial.unlink()
            if damaged:
                raise DamagedBinary(f"{damaged[0]}; building it anew failed ({first_line(exc, 100)}): reinstall "
                                    "mechfmu or make a C compiler available ($CC, cc or gcc)") from None
            raise
    for line in damaged:
        notice(f"{line}: not loaded; built anew" + ("" if line.startswith(f"{cache}:") else f" as {cache}"))
    return cache


def first_line(error: BaseException | str, limit: int = 160) -> str:
    """The first line of ``error``'s message (or of a text), at most ``limit`` characters."""
    line = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return line if len(line) <= limit else line[:limit - 3] + "..."
