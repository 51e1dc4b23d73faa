"""Result files (`mechfmu run --out`, `CsvWriter`): written only where the user named, as what they named
(a device or FIFO is written through, never replaced; a folder or a block device is refused before the run),
and a full disk or a file-size limit keeps the header and every whole row that fitted.

Device nodes are made in the test's own folder (never the machine's /dev), which needs root."""
import os
import resource
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mechfmu.master.interrupt import INTERRUPT
from mechfmu.master.result_files import CsvWriter
from mechfmu.master.simulate import simulate

ROOT = Path(__file__).resolve().parent.parent
OSCILLATOR = ROOT / "scenarios" / "oscillator"
NULL, FULL = os.makedev(1, 3), os.makedev(1, 7)  # the numbers of /dev/null and /dev/full
#: a block device number from the range reserved for local use: nothing is behind it
UNUSED_BLOCK_DEVICE = os.makedev(240, 0)

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="making device nodes needs root")


def run(*args, **kw):
    """`mechfmu run` of the oscillator, in-process components."""
    return subprocess.run([sys.executable, "-m", "mechfmu.cli", "run", str(OSCILLATOR), "--local", *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300, **kw)


def reference_csv(tmp_path, stop):
    """The text a regular file receives from the same run."""
    folder = tmp_path / "reference"
    folder.mkdir()
    result = simulate(OSCILLATOR, local=True, stop=stop, observers=[CsvWriter(folder / "x.csv")], record=False)
    assert result.ok, result.message
    return (folder / "x.csv").read_text()


def device(path, number, kind=stat.S_IFCHR):
    os.mknod(path, kind | 0o666, number)
    return path


def assert_same_node(path, kind, number):
    info = os.lstat(path)
    assert stat.S_IFMT(info.st_mode) == kind and info.st_rdev == number, f"{path} was replaced: {info}"


@needs_root
@pytest.mark.parametrize("name, number, code, said", [
    ("null", NULL, 0, "results written to {path}"),  # written through, no file beside it
    ("full", FULL, 1, "writing {path} failed (No space left on device)"),  # the run fails naming it
])
def test_a_device_is_written_through_and_left_in_place(tmp_path, name, number, code, said):
    node = device(tmp_path / name, number)
    proc = run("--stop", "0.01", "--out", node)
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert said.format(path=node) in proc.stdout
    assert_same_node(node, stat.S_IFCHR, number)
    assert os.listdir(tmp_path) == [name]  # no temporary file, no lock file, no partial file beside it


def test_a_fifo_receives_every_row_and_stays_a_fifo(tmp_path):
    expected = reference_csv(tmp_path, 0.01)
    fifo = tmp_path / "rows"
    os.mkfifo(fifo)
    received: list[bytes] = []

    def read():
        with open(fifo, "rb") as reader:
            received.append(reader.read())
    reader = threading.Thread(target=read, daemon=True)  # left blocked if the writer never opens the FIFO
    reader.start()
    proc = run("--stop", "0.01", "--out", fifo)
    reader.join(timeout=30)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced"
    assert received and received[0].decode() == expected
    assert sorted(os.listdir(tmp_path)) == ["reference", "rows"]


def test_waiting_for_a_fifo_reader_ends_at_ctrl_c(tmp_path):
    """A FIFO without a reader holds the writer at construction, before the run; Ctrl-C (the command
    line's SIGINT request) ends the wait."""
    fifo = tmp_path / "rows"
    os.mkfifo(fifo)
    request = threading.Timer(0.3, setattr, (INTERRUPT, "requested", True))
    request.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            CsvWriter(fifo)
    finally:
        request.cancel()
        INTERRUPT.requested = False
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and os.listdir(tmp_path) == ["rows"]


@pytest.mark.parametrize("suffix", ["/", "/."])
def test_a_path_ending_in_a_slash_is_refused_before_the_run(tmp_path, suffix):
    target = f"{tmp_path / 'x.csv'}{suffix}"
    proc = run("--stop", "0.01", "--out", target)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"--out {target}: not a writable file path" in proc.stderr and "names a folder" in proc.stderr
    assert os.listdir(tmp_path) == []


def test_a_directory_is_refused_naming_it_by_the_command_and_by_the_writer(tmp_path):
    folder = tmp_path / "adir"
    folder.mkdir()
    proc = run("--stop", "0.01", "--out", folder)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"--out {folder}: not a writable file path (it is a directory" in proc.stderr
    with pytest.raises(ValueError, match=f"{folder}: not a writable file path \\(it is a directory"):
        CsvWriter(folder)
    assert os.listdir(tmp_path) == ["adir"] and os.listdir(folder) == []


@needs_root
def test_a_block_device_is_refused_before_the_run_and_left_in_place(tmp_path):
    disk = device(tmp_path / "disk", UNUSED_BLOCK_DEVICE, stat.S_IFBLK)
    proc = run("--stop", "0.01", "--out", disk)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"--out {disk}: not a writable file path (it is a block device" in proc.stderr
    assert_same_node(disk, stat.S_IFBLK, UNUSED_BLOCK_DEVICE)
    assert os.listdir(tmp_path) == ["disk"]


def assert_whole_rows_kept(proc, out, expected, limit, cause):
    """The run failed naming the file and the cause; the partial file is the reference's header and first
    rows, byte for byte, cut at a row's end and within ``limit`` bytes."""
    partial = out.with_name("x.partial.csv")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    text = partial.read_text()
    lines = text.splitlines(keepends=True)
    assert 0 < len(text) <= limit and text.endswith("\n")
    assert lines == expected.splitlines(keepends=True)[:len(lines)]
    assert len(lines) > 100  # the header and every row of the 64 KiB written before the limit, less a row
    assert f"writing {out} failed ({cause})" in proc.stdout and f"kept in {partial}" in proc.stdout
    assert f"the header and {len(lines) - 1} whole rows kept" in proc.stdout
    assert not out.exists()


def test_a_file_size_limit_keeps_the_header_and_every_whole_row_that_fitted(tmp_path):
    limit = 60_000  # below the writer's first write of 64 KiB
    expected = reference_csv(tmp_path, 0.05)
    out = tmp_path / "x.csv"
    proc = run("--stop", "0.05", "--out", out,
               preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))
    assert_whole_rows_kept(proc, out, expected, limit, "File too large")
    assert "file size limit" in proc.stdout


@needs_root
def test_a_full_disk_keeps_the_header_and_every_whole_row_that_fitted(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", disk], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        expected = reference_csv(tmp_path, 0.05)
        out = disk / "x.csv"
        proc = run("--stop", "0.05", "--out", out)
        assert_whole_rows_kept(proc, out, expected, 64 * 1024, "No space left on device")
        assert "no space left on the disk" in proc.stdout
    finally:
        subprocess.run(["umount", disk], check=True)


def test_a_symbolic_link_is_written_through_and_stays_a_link(tmp_path):
    """The file it names gets the rows; the link itself is not replaced by a regular file."""
    expected = reference_csv(tmp_path, 0.01)
    (tmp_path / "data").mkdir()
    named = tmp_path / "data" / "results.csv"
    named.write_text("an earlier result\n")
    link = tmp_path / "latest.csv"
    link.symlink_to(named)
    done = run("--stop", 0.01, "--out", link)
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and os.readlink(link) == str(named)
    assert named.read_text() == expected
