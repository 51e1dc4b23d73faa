"""Every binary mechfmu loads or copies is checked before (its size and SHA-256 against the manifest written when it
was built, ``mechfmu.fmu.integrity``): a damaged one (truncated, overwritten) is named with what is wrong, then built
anew, or refused in one line where nothing can build it; it is never mapped (a truncated shared library ends the
process with SIGBUS when ``dlopen`` maps it). Several processes may find the same damage at once: one rebuilds.
The wheel's prebuilt files: tests/test_light_install.py and, installed, tests/test_install.py."""
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from mechfmu.components import native_library
from mechfmu.fmu import build, integrity, locations, prebuilt
from mechfmu.fmu.native import exchange_library
from mechfmu.master import exchange

#: the compiled exchange this process would load (``mechfmu.master.exchange``), and the path it came from
LOAD = "from mechfmu.master.exchange import library; lib = library(); print(lib._name if lib is not None else None)"


def test_a_manifest_names_what_is_wrong(tmp_path):
    binary = tmp_path / "mechfmu_exchange_0123456789.so"
    data = bytes(range(256)) * 40
    binary.write_bytes(data)
    manifest = integrity.write_manifest(binary)
    assert json.loads(manifest.read_text()) == {"file": binary.name, "size": len(data),
                                                "sha256": hashlib.sha256(data).hexdigest()}
    assert integrity.check_beside(binary) is None
    binary.write_bytes(data[:1000])  # truncated
    assert integrity.check_beside(binary) == f"damaged: 1000 bytes where {len(data)} were built (truncated)"
    flipped = bytearray(data)
    flipped[5000] ^= 0x10  # the same size, one bit other
    binary.write_bytes(bytes(flipped))
    reason = integrity.check_beside(binary)
    assert reason is not None and hashlib.sha256(flipped).hexdigest()[:16] in reason and "the same size" in reason
    manifest.unlink()
    assert "has no manifest" in integrity.check_beside(binary)
    # the host library's own check (components/, standard library only) reads the same manifest
    integrity.write_manifest(binary)
    assert native_library._damage(str(binary)) == ""
    binary.write_bytes(bytes(flipped[:10]))
    assert native_library._damage(str(binary)) == f"damaged: 10 bytes where {len(flipped)} were built"


def test_the_host_library_is_not_mapped_when_damaged(monkeypatch, tmp_path):
    """``components/native_library.library`` refuses, in one line, a library whose manifest says it is damaged."""
    binary = tmp_path / "mechfmu_components.so"
    binary.write_bytes(b"\x7fELF" + bytes(4000))
    integrity.write_manifest(binary)
    binary.write_bytes(b"\x7fELF" + bytes(100))
    monkeypatch.setattr(native_library, "_library", None)
    monkeypatch.setattr(native_library, "library_path", str(binary))
    with pytest.raises(RuntimeError, match=rf"host library {binary} is not loaded: damaged: 104 bytes where 4004"):
        native_library.library()


def test_prebuilt_binaries_are_used_only_where_they_load(monkeypatch):
    """The wheel's Linux binaries need glibc 2.17: not used on musl or an older glibc (built for the machine)."""
    for libc, expected in [("glibc 2.36", "linux64"), ("glibc 2.17", "linux64"), ("glibc 2.12", None),
                           (None, None)]:
        monkeypatch.setattr(os, "confstr", lambda name, libc=libc: libc)
        assert prebuilt.this_platform() == expected, libc


def run_python(code: str, fmu_dir: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "MECHFMU_FMU_DIR": str(fmu_dir), **env}
    environment.pop("MECHFMU_EXCHANGE", None)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=300)


@pytest.mark.slow
def test_a_damaged_exchange_library_in_the_cache_is_named_and_built_anew(tmp_path):
    first = run_python(LOAD, tmp_path)
    cache = tmp_path / ".native" / exchange_library(".so")
    assert first.returncode == 0 and first.stdout.strip() == str(cache), first.stderr
    built = cache.read_bytes()
    half = len(built) // 2
    cache.write_bytes(built[:half])  # what a full disk or a killed copy leaves: dlopen maps past its end
    again = run_python(LOAD, tmp_path)
    assert again.returncode == 0, (again.returncode, again.stderr)  # before: -7, SIGBUS
    assert again.stdout.strip() == str(cache)
    assert again.stderr == (f"mechfmu: warning: {cache}: damaged: {half} bytes where {len(built)} were built "
                            "(truncated): not loaded; built anew\n")
    assert hashlib.sha256(cache.read_bytes()).digest() == hashlib.sha256(built).digest()
    # no compiler to build it anew: named, not loaded, the calls go through Python; the run goes on
    cache.write_bytes(built[:half])
    refused = run_python(LOAD, tmp_path, CC="/bin/false")
    assert refused.returncode == 0 and refused.stdout.strip() == "None", (refused.returncode, refused.stderr)
    (line,) = refused.stderr.splitlines()
    assert line.startswith(f"mechfmu: warning: {cache}: damaged: {half} bytes where {len(built)} were built")
    assert "building it anew failed" in line and line.endswith("the FMI calls go through Python (the same results)")


@pytest.mark.slow
def test_processes_finding_the_same_damage_rebuild_it_once(tmp_path):
    assert run_python(LOAD, tmp_path).returncode == 0
    cache = tmp_path / ".native" / exchange_library(".so")
    built = cache.read_bytes()
    cache.write_bytes(built[:1000])
    environment = {**os.environ, "MECHFMU_FMU_DIR": str(tmp_path)}
    processes = [subprocess.Popen([sys.executable, "-c", LOAD], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env=environment) for _ in range(4)]
    outputs = [process.communicate(timeout=300) for process in processes]
    assert [process.returncode for process in processes] == [0] * 4, outputs
    assert all(out.strip() == str(cache) for out, _ in outputs), outputs
    notices = "".join(err for _, err in outputs).splitlines()
    assert notices == [f"mechfmu: warning: {cache}: damaged: 1000 bytes where {len(built)} were built (truncated): "
                       "not loaded; built anew"], notices  # one process rebuilt it, under the builders' lock
    assert cache.read_bytes() == built


@pytest.mark.slow
def test_a_damaged_host_library_is_named_and_built_anew_or_refused(monkeypatch, tmp_path, capsys):
    library = build.host_library(tmp_path)
    built = library.read_bytes()
    library.write_bytes(built[:4096])
    assert build.host_library(tmp_path) == library
    assert capsys.readouterr().err == (f"mechfmu: warning: {library}: damaged: 4096 bytes where {len(built)} were "
                                       "built (truncated): not loaded; built anew\n")
    assert library.read_bytes() == built
    library.write_bytes(built[:4096])
    monkeypatch.setenv("CC", "/bin/false")
    with pytest.raises(integrity.DamagedBinary) as refused:
        build.host_library(tmp_path)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(f"{library}: damaged: 4096 bytes where {len(built)}")
    assert "building it anew failed" in message and "reinstall mechfmu" in message


@pytest.mark.slow
def test_a_damaged_prebuilt_exchange_library_is_not_loaded(monkeypatch, tmp_path, capsys):
    """The wheel's library is checked against the wheel's index; damaged, it is compiled for this machine, or (no
    compiler) left to Python."""
    wheel, user = tmp_path / "prebuilt", tmp_path / "user"
    monkeypatch.setattr(locations, "FMU_DIR", tmp_path / "compiled")
    compiled = exchange._built()
    assert compiled is not None
    copy = wheel / "native" / prebuilt.this_platform() / compiled.name
    copy.parent.mkdir(parents=True)
    copy.write_bytes(compiled.read_bytes())
    integrity.write_index(wheel, [copy])
    monkeypatch.setattr(prebuilt, "PREBUILT_DIR", wheel)
    monkeypatch.setattr(locations, "FMU_DIR", user)
    assert exchange._built() == copy  # the wheel's, as built
    size = copy.stat().st_size
    copy.write_bytes(compiled.read_bytes()[:size - 1])
    monkeypatch.setenv("CC", "/bin/false")
    assert exchange._built() is None
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"mechfmu: warning: {copy}: damaged: {size - 1} bytes where {size} were built (truncated)")
    monkeypatch.delenv("CC")
    assert exchange._built() == user / ".native" / compiled.name
    assert capsys.readouterr().err == (f"mechfmu: warning: {copy}: damaged: {size - 1} bytes where {size} were built "
                                       f"(truncated): not loaded; built anew as {user / '.native' / compiled.name}\n")


def corrupt_member(fmu: Path, member: str) -> None:
    """Flip a byte inside ``member``'s compressed data, in place: the zip's directory still reads, the member's
    CRC-32 no longer matches."""
    with zipfile.ZipFile(fmu) as zf:
        info = zf.getinfo(member)
    data = bytearray(fmu.read_bytes())
    header = info.header_offset
    name_length, extra_length = int.from_bytes(data[header + 26:header + 28], "little"), \
        int.from_bytes(data[header + 28:header + 30], "little")
    start = header + 30 + name_length + extra_length
    data[start + info.compress_size // 2] ^= 0xFF
    fmu.write_bytes(bytes(data))


@pytest.mark.slow
def test_a_damaged_fmu_in_the_fmu_folder_is_named_and_built_anew(tmp_path, capsys):
    (fmu,) = build.build(["Fixed"], directory=tmp_path)
    corrupt_member(fmu, build.binary_name("Fixed", "linux64"))
    assert not build.is_current(fmu)
    assert build.build(["Fixed"], directory=tmp_path) == [fmu]
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"mechfmu: warning: {fmu}: damaged: not a readable zip archive (") and \
        line.endswith("): built anew"), line
    assert integrity.zip_problem(fmu, [build.binary_name("Fixed", "linux64")]) is None and build.is_current(fmu)


def test_a_python_fmus_host_library_carries_its_manifest_and_is_not_mapped_when_damaged(python_fmus, tmp_path):
    """A Python-embedding FMU of a component with a C law carries the host library for each platform with its
    manifest (size and SHA-256); an unpacked FMU whose library was cut short afterwards (an importer's cache) is
    refused at instantiation naming the file and the damage, the host process unharmed (dlopen of a truncated
    library ends it with SIGBUS)."""
    from mechfmu.components.native_library import LIBRARY_STEM, RESOURCES_FOLDER
    fmu = python_fmus["Mass"]
    with zipfile.ZipFile(fmu) as zf:
        names = set(zf.namelist())
        for platform, extension in (("linux64", ".so"), ("win64", ".dll")):
            library = f"resources/{RESOURCES_FOLDER}/{platform}/{LIBRARY_STEM}{extension}"
            manifest = json.loads(zf.read(library + ".sha256"))
            data = zf.read(library)
            assert manifest == {"file": library.rsplit("/", 1)[1], "size": len(data),
                                "sha256": hashlib.sha256(data).hexdigest()}, platform
        zf.extractall(tmp_path / "unpacked")
    assert f"resources/{RESOURCES_FOLDER}/linux64/{LIBRARY_STEM}.so.sha256" in names
    library = tmp_path / "unpacked" / "resources" / RESOURCES_FOLDER / "linux64" / f"{LIBRARY_STEM}.so"
    library.write_bytes(library.read_bytes()[:4096])
    script = ("import sys; from fmpy import simulate_fmu\n"
              "try:\n    simulate_fmu(sys.argv[1], stop_time=0.01, logger=lambda *a: print(a[-1].decode()))\n"
              "except Exception as exc:\n    print('refused:', exc)\n")
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path / "unpacked")], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]  # not SIGBUS
    assert f"host library {library} is not loaded: damaged: 4096 bytes where" in proc.stdout, proc.stdout[-2000:]


def test_an_archive_is_read_back_again_only_when_its_file_changed(tmp_path, monkeypatch):
    """``zip_problem_once`` reads a member back once; an unchanged file is not read again; any rewrite (even with
    its modification time set back) and a damaged ledger make it read again, and a damaged member is still found."""
    member = "binaries/linux64/X.so"
    fmu = tmp_path / "X.fmu"
    with zipfile.ZipFile(fmu, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(member, os.urandom(4096) * 4)
    reads = []
    read = integrity.zip_problem
    monkeypatch.setattr(integrity, "zip_problem", lambda path, members: reads.append(path) or read(path, members))
    assert integrity.zip_problem_once(fmu, [member]) is None and len(reads) == 1
    assert integrity.zip_problem_once(fmu, [member]) is None and len(reads) == 1  # unchanged: not read
    assert integrity.zip_problem_once(fmu, []) is None and len(reads) == 2  # other members: read
    before = fmu.stat()
    corrupt_member(fmu, member)
    os.utime(fmu, ns=(before.st_atime_ns, before.st_mtime_ns))  # the modification time set back
    problem = integrity.zip_problem_once(fmu, [member])
    assert problem is not None and problem.startswith("damaged") and len(reads) == 3
    assert integrity.zip_problem_once(fmu, [member]) == problem and len(reads) == 4  # a damaged file is not recorded
    for ledger in (b"\x00\xff garbage", b"[1, 2]", b'{"X.fmu": "no"}', b"{" * 100_000):
        (tmp_path / integrity.READ_BACK).write_bytes(ledger)
        assert integrity.zip_problem_once(fmu, [member]) == problem

