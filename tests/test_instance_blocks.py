"""The memory a native FMU's instances live in (components/native/platform.c, platform_block_alloc and
platform_block_free): blocks of one class side by side in shared chunks, so that a step over thousands of instances
touches few pages. tests/instance_blocks_host.c takes and releases blocks of 1 byte to 20 KB from 1 and 4 threads,
checking alignment, zeroing and that no live block overlaps another; it runs as built, under valgrind (every chunk
released: no byte lost at exit), under ThreadSanitizer (the chunk being filled is shared) and under AddressSanitizer
(which gives each block its own chunk, so an overflow out of a block is still caught)."""
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import unavailable

HERE = Path(__file__).resolve().parent
NATIVE = HERE.parent / "components" / "native"


def build(target: Path, compiler: str, *flags: str) -> Path:
    subprocess.run([compiler, "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-DMECHFMU_NATIVE", f"-I{NATIVE}", *flags,
                    "-o", str(target), str(HERE / "instance_blocks_host.c"), str(NATIVE / "platform.c"), "-ldl",
                    "-lpthread"], check=True)
    return target


def run(command: list[str], **environment: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=600, env=environment or None)


def test_blocks_taken_one_after_the_other_lie_side_by_side_and_threads_never_share_one(tmp_path):
    host = build(tmp_path / "host", shutil.which("cc") or "gcc")
    for threads, rounds in ((1, 20), (4, 50)):
        proc = run([str(host), str(threads), str(rounds)])
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert proc.stdout.strip() == f"blocks {threads * rounds * 300}", proc.stdout


@pytest.mark.slow
def test_every_chunk_is_released_under_valgrind(tmp_path):
    if not shutil.which("valgrind"):
        unavailable("valgrind is needed (apt-get install valgrind; .ci/run installs it)")
    host = build(tmp_path / "host", shutil.which("cc") or "gcc")
    log = tmp_path / "valgrind.txt"
    for threads in (1, 4):
        proc = run(["valgrind", "--error-exitcode=99", "--leak-check=full", "--show-leak-kinds=all",
                    "--errors-for-leak-kinds=all", f"--log-file={log}", str(host), str(threads), "5"])
        assert proc.returncode == 0, proc.stdout + log.read_text()[-4000:]
        assert "in use at exit: 0 bytes" in log.read_text(), log.read_text()[-4000:]


@pytest.mark.slow
@pytest.mark.parametrize("sanitizer", ["thread", "address,undefined"])
def test_blocks_under_a_sanitizer_report_nothing(tmp_path, sanitizer):
    clang = shutil.which("clang")
    if clang is None:
        unavailable("clang is needed for its sanitizers (apt-get install clang; .ci/run installs it)")
    host = build(tmp_path / "host", clang, f"-fsanitize={sanitizer}", "-fno-sanitize-recover=all",
                 "-fno-omit-frame-pointer")
    proc = run([str(host), "4", "50"], TSAN_OPTIONS="halt_on_error=1 exitcode=66", ASAN_OPTIONS="detect_leaks=1")
    assert "Sanitizer" not in proc.stderr, proc.stderr[-6000:]
    assert proc.returncode == 0 and proc.stdout.strip() == "blocks 60000", proc.stdout + proc.stderr[-3000:]
