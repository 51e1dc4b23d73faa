"""Every file we write is written whole or not at all (``mechfmu.ssp.files.replaced``): a write that fails (here
the file size limit, as ``ulimit -f`` sets it; a full disk fails the same way) leaves an existing file as it
was, ends with one message naming the file and the cause, and leaves no temporary file; a symbolic link at the
target is replaced by the new file, and the file it pointed to is untouched."""
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: (command line, the file written, a size limit its write exceeds [bytes])
WRITES = [
    (["export-ssp", str(ROOT / "scenarios/oscillator"), "-o", "{target}"], "x.ssp", 200_000),
    (["draw", str(ROOT / "scenarios/oscillator"), "-o", "{target}"], "x.svg", 2_000),
    (["run", str(ROOT / "scenarios/oscillator"), "--local", "--stop", "0.05", "--plot", "{target}"], "x.png", 5_000),
]


def mechfmu(argv: list[str], cwd: Path, file_limit: int | None = None) -> subprocess.CompletedProcess:
    def limited() -> None:
        if file_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))
    return subprocess.run([sys.executable, "-m", "mechfmu.cli", *argv], capture_output=True, text=True, cwd=cwd,
                          timeout=600, preexec_fn=limited)


@pytest.mark.parametrize("argv, name, limit", WRITES, ids=["export-ssp", "draw", "run --plot"])
@pytest.mark.slow
def test_a_failed_write_keeps_the_file_there_and_names_it(fmus, tmp_path, argv, name, limit):
    target = tmp_path / name
    command = [a.format(target=target) for a in argv]
    assert mechfmu(command, tmp_path).returncode == 0
    before = target.read_bytes()
    assert len(before) > limit
    target.write_bytes(b"an older file" + before)  # what a failed write must leave as it is
    kept = target.read_bytes()
    failed = mechfmu(command, tmp_path, file_limit=limit)
    assert failed.returncode == 2 and "Traceback" not in failed.stderr, failed.stdout + failed.stderr
    assert failed.stderr.endswith(f"error: {target}: not written: File too large\n"), failed.stderr
    assert target.read_bytes() == kept
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("argv, name, limit", WRITES, ids=["export-ssp", "draw", "run --plot"])
@pytest.mark.slow
def test_a_symbolic_link_at_the_target_is_replaced_not_followed(fmus, tmp_path, argv, name, limit):
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("not ours to overwrite")
    target = tmp_path / name
    target.symlink_to(elsewhere)
    assert mechfmu([a.format(target=target) for a in argv], tmp_path).returncode == 0
    assert not target.is_symlink() and target.stat().st_size > 0
    assert elsewhere.read_text() == "not ours to overwrite"


def test_a_system_written_over_a_folder_keeps_its_file_whole(tmp_path):
    """System.write writes the SSD whole: a failing write (here a file size limit of 100 bytes) leaves the old
    SSD as it was."""
    code = ("import resource, sys; from mechfmu import System, Mass, Fixed, CoordinateSpringDamper\n"
            "s = System('osc'); g = s.add('g', Fixed()); k = s.add('k', CoordinateSpringDamper(stiffness=1.0))\n"
            "m = s.add('m', Mass()); s.connect(g.flange, k.flange_a); s.connect(k.flange_b, m.flange_a)\n"
            "s.experiment(stop_time=1.0, step_size=1e-3, algorithm='jacobi')\n"
            "if len(sys.argv) > 1: resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))\n"
            "try:\n    s.write('sys')\nexcept OSError as e:\n    print(e); sys.exit(3)\n")
    assert subprocess.run([sys.executable, "-c", code], cwd=tmp_path).returncode == 0
    ssd = tmp_path / "sys" / "SystemStructure.ssd"
    kept = ssd.read_bytes()
    failed = subprocess.run([sys.executable, "-c", code, "limited"], cwd=tmp_path, capture_output=True, text=True)
    assert failed.returncode == 3 and failed.stdout == "sys/SystemStructure.ssd: not written: File too large\n"
    assert ssd.read_bytes() == kept
    assert not [p.name for p in ssd.parent.iterdir() if p.name.startswith(".")]
