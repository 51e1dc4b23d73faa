"""Archives unpacked within limits, their folders removed even after a killed run, and FMU sources kept
inside the scenario's folder or archive (``mechfmu.ssp.archive``, ``mechfmu.ssp.fmu_sources``)."""
import io
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from conftest import rebind

from mechfmu.fmu.build import fmu_path
from mechfmu.ssp import export_ssp
from mechfmu.ssp.archive import MARKER, remove_orphans
from mechfmu.ssp.scenario import ScenarioError, load_scenario

ROOT = Path(__file__).resolve().parent.parent
ZEROS = 20 * 1024**2  # packs to 20 kB: ratio about 1000


@pytest.fixture(scope="module")
def oscillator(fmus, tmp_path_factory) -> Path:
    return export_ssp(ROOT / "scenarios" / "oscillator", tmp_path_factory.mktemp("archive") / "oscillator.ssp")


def with_entry(archive: Path, target: Path, name: str, data: bytes) -> Path:
    """A copy of ``archive`` with one more (deflated) entry."""
    shutil.copy(archive, target)
    with zipfile.ZipFile(target, "a", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(name, data)
    return target


def test_zip_bomb_refused_by_its_ratio_at_the_default_limits(oscillator, tmp_path):
    bomb = with_entry(oscillator, tmp_path / "bomb.ssp", "resources/zeros.bin", bytes(ZEROS))
    with pytest.raises(ScenarioError, match=r"(?s)bomb\.ssp.*zeros\.bin: compression ratio [\d,]+ exceeds the "
                                            r"limit 200 .*MECHFMU_SSP_MAX_RATIO=\d+"):
        load_scenario(bomb)


def test_limits_raised_by_their_environment_variables(oscillator, tmp_path, monkeypatch):
    """A low size limit refuses the archive before anything is written; raising it lets the same archive run."""
    bomb = with_entry(oscillator, tmp_path / "big.ssp", "resources/zeros.bin", bytes(ZEROS))
    monkeypatch.setenv("MECHFMU_SSP_MAX_RATIO", "2000")
    monkeypatch.setenv("MECHFMU_SSP_MAX_BYTES", str(ZEROS))
    with pytest.raises(ScenarioError, match=r"(?s)big\.ssp.*unpacked size [\d,]+ exceeds the limit 20,971,520 "
                                            r"\(total unpacked size in bytes\).*MECHFMU_SSP_MAX_BYTES="):
        load_scenario(bomb)
    monkeypatch.setenv("MECHFMU_SSP_MAX_ENTRIES", "4")
    with pytest.raises(ScenarioError, match=r"entry count 5 exceeds the limit 4 .*MECHFMU_SSP_MAX_ENTRIES="):
        load_scenario(bomb)
    monkeypatch.setenv("MECHFMU_SSP_MAX_BYTES", str(2 * ZEROS))
    with zipfile.ZipFile(bomb) as zf:
        fmu_entries = max(len(zipfile.ZipFile(io.BytesIO(zf.read(n))).infolist()) for n in zf.namelist()
                          if n.endswith(".fmu"))
    monkeypatch.setenv("MECHFMU_SSP_MAX_ENTRIES", str(fmu_entries - 1))  # the FMUs inside are held to it too
    with pytest.raises(ScenarioError, match=rf"FMU .*\.fmu: entry count {fmu_entries} exceeds the limit"):
        load_scenario(bomb)
    monkeypatch.setenv("MECHFMU_SSP_MAX_ENTRIES", str(max(5, fmu_entries)))
    assert set(load_scenario(bomb).components) == {"ground", "spring", "mass"}
    monkeypatch.setenv("MECHFMU_SSP_MAX_ENTRIES", "many")
    with pytest.raises(ScenarioError, match="MECHFMU_SSP_MAX_ENTRIES='many' is not a positive integer"):
        load_scenario(with_entry(oscillator, tmp_path / "other.ssp", "x.txt", b"x"))


def lying(target: Path, declared: int) -> Path:
    """A one-entry archive of ``ZEROS`` zeros whose headers (local and central) declare ``declared`` bytes."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("SystemStructure.ssd", bytes(ZEROS))
    data = bytearray(target.read_bytes())
    central = data.find(b"PK\x01\x02")
    struct.pack_into("<I", data, 22, declared)
    struct.pack_into("<I", data, central + 24, declared)
    target.write_bytes(bytes(data))
    return target


@pytest.mark.parametrize("declared, reason", [(1000, r"corrupt.*SystemStructure\.ssd"),
                                              (0xFFFFFFF0, r"unpacked size 4,294,967,280 exceeds the limit")])
def test_lying_header_does_not_get_past(tmp_path, declared, reason):
    """Understated, the entry is cut short and its CRC gives it away; overstated, the directory check refuses it."""
    archive = lying(tmp_path / "liar.ssp", declared)
    with pytest.raises(ScenarioError, match=rf"(?s)liar\.ssp.*{reason}"):
        load_scenario(archive)


def test_corrupt_archive_named(oscillator, tmp_path):
    data = bytearray(oscillator.read_bytes())
    with zipfile.ZipFile(oscillator) as zf:
        ssd = zf.getinfo("SystemStructure.ssd")
    start = ssd.header_offset + 30 + len(ssd.filename.encode()) + len(ssd.extra)
    data[start + 10:start + 60] = bytes(range(50))  # inside the deflated SSD
    (tmp_path / "broken.ssp").write_bytes(bytes(data))
    with pytest.raises(ScenarioError, match=r"(?s)broken\.ssp.*corrupt"):
        load_scenario(tmp_path / "broken.ssp")
    (tmp_path / "text.ssp").write_text("not a zip")
    with pytest.raises(ScenarioError, match=r"(?s)text\.ssp.*not an SSP archive"):
        load_scenario(tmp_path / "text.ssp")


def unpacked(tmp: Path) -> list[Path]:
    return sorted(tmp.glob("mechfmu_oscillator_*"))


@pytest.mark.slow
def test_killed_run_leaves_its_folder_to_the_next_start(oscillator, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    script = ("import sys; from mechfmu.ssp.scenario import load_scenario; from mechfmu.master.simulate import simulate\n"
              "load_scenario(sys.argv[1]); print('unpacked', flush=True); simulate(sys.argv[1], stop=1000.0)")
    run = subprocess.Popen([sys.executable, "-c", script, str(oscillator)], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert run.stdout is not None and run.stdout.readline() == "unpacked\n"
        [folder] = unpacked(tmp)
        assert (folder / "SystemStructure.ssd").is_file()
        time.sleep(1.0)  # the run is going
        os.kill(run.pid, signal.SIGKILL)
        assert run.wait(timeout=30) == -signal.SIGKILL
    finally:
        run.kill()
    assert unpacked(tmp) == [folder]  # killed: nothing removed it
    again = subprocess.run([sys.executable, "-c", "import sys; from mechfmu.ssp.scenario import load_scenario; "
                            "print(load_scenario(sys.argv[1]).folder)", str(oscillator)], env=env,
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert not folder.exists()
    assert unpacked(tmp) == []  # and the next start's own folder is gone with it


def test_only_our_folders_of_ended_processes_are_removed(tmp_path):
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    folders = {}
    for name, marker in (("dead", f"{ended.stdout.strip()} 1"), ("live", f"{os.getpid()} "),
                         ("reused", f"{os.getpid()} 1"), ("unmarked", None)):
        folder = folders[name] = tmp_path / f"mechfmu_{name}_x"
        folder.mkdir()
        if marker is not None:
            (folder / MARKER).write_text(marker)
    (tmp_path / "mechfmu_file_x").write_text("")
    (tmp_path / "other_dead").mkdir()
    (tmp_path / "other_dead" / MARKER).write_text(f"{ended.stdout.strip()} 1")
    (tmp_path / "mechfmu_link_x").symlink_to(folders["dead"])
    assert sorted(remove_orphans(tmp_path)) == [folders["dead"], folders["reused"]]
    assert folders["live"].is_dir() and folders["unmarked"].is_dir() and (tmp_path / "other_dead").is_dir()
    assert (tmp_path / "mechfmu_file_x").is_file() and (tmp_path / "mechfmu_link_x").is_symlink()


def ssd_with_source(folder: Path, source: str) -> Path:
    """The oscillator in ``folder`` with its ground's and spring's FMUs beside the SSD, the mass's FMU at
    ``source`` and no built-FMU fallback."""
    folder.mkdir(parents=True)
    text = (ROOT / "scenarios" / "oscillator" / "SystemStructure.ssd").read_text()
    for model in ("Fixed", "CoordinateSpringDamper"):
        shutil.copy(fmu_path(model), folder / f"{model}.fmu")
        text = text.replace(f"../../fmus/{model}.fmu", f"{model}.fmu")
    text = text.replace("../../fmus/Mass.fmu", source).replace('<mechfmu:Sources fallback="built"/>', "")
    (folder / "SystemStructure.ssd").write_text(text)
    return folder


@pytest.mark.parametrize("how", ["absolute", "relative", "archive"])
def test_sources_outside_the_scenario_refused(fmus, tmp_path, how):
    outside = tmp_path / "some" / "where" / "Mass.fmu"
    outside.parent.mkdir(parents=True)
    shutil.copy(fmu_path("Mass"), outside)
    source = "../some/where/Mass.fmu" if how == "relative" else str(outside)
    path = folder = ssd_with_source(tmp_path / "scenario", source)
    if how == "archive":  # the SSD at the archive's root names a file of the machine unpacking it
        path = tmp_path / "escape.ssp"
        with zipfile.ZipFile(path, "w") as zf:
            for item in folder.iterdir():
                zf.write(item, item.name)
    with pytest.raises(ScenarioError, match=rf"mass: source '{re.escape(source)}' is {re.escape(str(outside))}, "
                                            r"outside the scenario's folder .*outside_sources=True"):
        load_scenario(path)
    assert load_scenario(path, outside_sources=True).components["mass"].fmu == outside
    with pytest.raises(ScenarioError, match="mass: source .* outside the scenario's folder"):
        load_scenario(path, check=False)  # as export-ssp reads it: the file is not copied either


def test_outside_source_with_the_fallback_is_the_built_fmu(fmus, tmp_path):
    """An SSD that declares its sources mechfmu's models gets the built FMU, never the file outside."""
    outside = tmp_path / "elsewhere" / "Mass.fmu"
    outside.parent.mkdir()
    outside.write_bytes(b"not read")
    folder = ssd_with_source(tmp_path / "scenario", str(outside))
    scenario = load_scenario(folder, built_fmus=True)
    assert scenario.components["mass"].fmu == fmu_path("Mass").resolve()
    assert any(f"mass: {outside} -> {fmu_path('Mass').resolve()}" in w for w in scenario.warnings)


def test_entry_outside_the_archive_folder_refused(oscillator, tmp_path):
    """zipfile's extractall would silently rename '../x'; the archive is refused instead, naming the entry."""
    archive = with_entry(oscillator, tmp_path / "climb.ssp", "../climb.txt", b"x")
    with pytest.raises(ScenarioError, match=r"(?s)climb\.ssp.*entry '\.\./climb\.txt' lies outside the archive's"):
        load_scenario(archive)
    assert not (tmp_path / "climb.txt").exists()


@pytest.mark.parametrize("second", ["SystemStructure.ssd", "./SystemStructure.ssd", "x/../SystemStructure.ssd",
                                    "resources/../SystemStructure.ssd"])
def test_an_entry_named_twice_is_refused(oscillator, tmp_path, second):
    """Two SystemStructure.ssd entries, also under another spelling of the same path: which one a reader takes
    is up to it, so the archive is refused by name (it ran the last one, silently)."""
    text = zipfile.ZipFile(oscillator).read("SystemStructure.ssd").replace(b'name="oscillator"', b'name="other"')
    archive = with_entry(oscillator, tmp_path / "twice.ssp", second, text)
    with pytest.raises(ScenarioError, match=rf"entry '{re.escape(second)}' names 'SystemStructure\.ssd' a second "
                                            "time in the archive"):
        load_scenario(archive)


@pytest.mark.slow
def test_ssv_sources_stay_inside_the_scenario_unless_allowed(fmus, tmp_path):
    """A parameter file outside the scenario's folder (``../``) is not read: an SSD, above all an archive's,
    cannot make the master read files from anywhere; a trusted scenario allows it (API and command line)."""
    outside = tmp_path / "mass.ssv"
    outside.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<ssv:ParameterSet version="1.0" name="mass" '
                       'xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues"><ssv:Parameters>'
                       '<ssv:Parameter name="m"><ssv:Real value="2.5"/></ssv:Parameter></ssv:Parameters>'
                       '</ssv:ParameterSet>\n')
    folder = tmp_path / "sc"
    shutil.copytree(ROOT / "scenarios" / "oscillator", folder)
    rebind(folder / "SystemStructure.ssd", "mass", '<ssd:ParameterBinding source="../mass.ssv"/>')
    with pytest.raises(ScenarioError, match=r"mass: parameter binding \.\./mass\.ssv: .*mass\.ssv, outside the "
                                            r"scenario's folder .*outside_sources=True"):
        load_scenario(folder, local=True)
    assert load_scenario(folder, local=True, outside_sources=True).components["mass"].parameters["m"] == 2.5
    run = [sys.executable, "-m", "mechfmu.cli", "run", str(folder), "--local", "--stop", "0.01"]
    assert subprocess.run(run, capture_output=True, text=True, timeout=300).returncode == 2
    allowed = subprocess.run(run + ["--outside-sources"], capture_output=True, text=True, timeout=300)
    assert allowed.returncode == 0, allowed.stderr


@pytest.mark.parametrize("where", ["folder", "stored archive"])
def test_fmu_bomb_refused_in_a_folder_and_inside_a_stored_archive(fmus, tmp_path, where):
    """An FMU is unpacked within the archive limits: a Mass.fmu with 20 MB of zeros added (about 1000:1) is
    refused by its ratio, whether it lies in the scenario's folder or, stored 1:1, inside an archive whose own
    check cannot see into it; nothing is unpacked."""
    folder = ssd_with_source(tmp_path / "scenario", "Mass.fmu")
    with_entry(fmu_path("Mass"), folder / "Mass.fmu", "resources/zeros.bin", bytes(ZEROS))
    path = folder
    if where == "stored archive":
        path = tmp_path / "stored.ssp"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
            for item in folder.iterdir():
                zf.write(item, item.name)
    before = set(Path(os.environ.get("TMPDIR", "/tmp")).glob("mechfmu_Mass_*"))
    with pytest.raises(ScenarioError, match=r"mass: FMU .*Mass\.fmu: resources/zeros\.bin: compression ratio "
                                            r"[\d,]+ exceeds the limit 200 .*MECHFMU_SSP_MAX_RATIO="):
        load_scenario(path)
    assert set(Path(os.environ.get("TMPDIR", "/tmp")).glob("mechfmu_Mass_*")) == before


def test_fmu_slave_unpacks_within_the_limits(fmus, tmp_path, monkeypatch):
    """Loaded directly (as the master and the crosschecks do), the FMU is refused by name, and a raised limit
    lets the same file run."""
    from mechfmu.master.fmu_slave import FmuSlave
    from mechfmu.master.slaves import SlaveError

    bomb = with_entry(fmu_path("Mass"), tmp_path / "Mass.fmu", "resources/zeros.bin", bytes(ZEROS))
    with pytest.raises(SlaveError, match=r"^heavy: FMU .*Mass\.fmu: resources/zeros\.bin: compression ratio"):
        FmuSlave("heavy", bomb)
    monkeypatch.setenv("MECHFMU_SSP_MAX_RATIO", "2000")
    slave = FmuSlave("heavy", bomb)
    assert (Path(FmuSlave.unpacked(slave.fmu)[1]) / "resources" / "zeros.bin").stat().st_size == ZEROS


@pytest.mark.parametrize("first, second", [("extra", "extra/x.txt"), ("extra/x.txt", "extra")])
def test_file_and_folder_of_one_name_refused_by_entry_and_path(oscillator, tmp_path, first, second):
    """An entry that would overwrite a folder or need a folder where a file is: the entry and the path named,
    never a bare errno."""
    archive = with_entry(oscillator, tmp_path / "clash.ssp", first, b"" if first.endswith("/") else b"x")
    with_entry(archive, tmp_path / "clash2.ssp", second, b"y")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(tmp_path / "clash2.ssp")
    message = str(caught.value)
    assert f"entry {second!r} cannot be unpacked to " in message, message
    assert "(the archive holds a file and a folder of that name)" in message, message
    assert "[Errno" not in message


def test_an_fmu_is_unpacked_without_the_binaries_of_other_platforms(fmus, tmp_path):
    """An FMU's binaries for other platforms are never loaded here: they are neither unpacked nor read, so a damaged
    one costs nothing (FMI lets an importer load the binary of its own platform only); the model description,
    resources and this platform's binary are unpacked, and the FMU runs."""
    import fmpy

    from mechfmu.master.fmu_slave import FmuSlave
    from mechfmu.ssp.archive import extract
    source = tmp_path / "Mass.fmu"
    with zipfile.ZipFile(fmu_path("Mass")) as zin, zipfile.ZipFile(source, "w", zipfile.ZIP_STORED) as zout:
        names = [n for n in zin.namelist() if not n.startswith("binaries/win64/")]
        for name in names:
            zout.writestr(name, zin.read(name))
        zout.writestr("binaries/win64/Mass.dll", bytes(range(256)) * 64)  # a build for this machine has none
        names.append("binaries/win64/Mass.dll")
    with zipfile.ZipFile(source) as zf:
        entry = next(i for i in zf.infolist() if i.filename.startswith("binaries/win64/"))
    raw = bytearray(source.read_bytes())
    raw[entry.header_offset + 30 + len(entry.filename) + 100] ^= 0xFF  # the Windows binary damaged: its CRC fails
    source.write_bytes(bytes(raw))
    assert any(n.startswith("binaries/win64/") for n in names)
    folder = extract(source, "FMU")
    unpacked = {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}
    assert {"modelDescription.xml", f"binaries/{fmpy.platform}/Mass.so"} <= unpacked
    assert {n for n in names if not n.startswith("binaries/")} <= unpacked
    assert not any(n.startswith("binaries/") and not n.startswith(f"binaries/{fmpy.platform}/") for n in unpacked)
    slave = FmuSlave("mass", source)
    slave.enter_initialization(0.0, None)
    slave.exit_initialization()
    slave.set(["f_drive"], [2.0])
    assert slave.do_step(0.0, 1e-3)
    assert slave.get(["v"])[0] > 0.0  # driven forward: the Linux binary ran
    slave.terminate()
