"""libFuzzer on every C entry point that takes outside bytes: each tests/fuzz/fuzz_<what>.c harness (its first line
names the sources it links with: ``/* sources: a.c b.c */``) compiled with clang's libFuzzer, AddressSanitizer and
UBSan (any report aborts), run for a bounded time from its seed corpus (tests/fuzz/corpus_<what>/, if there is one):
about 20 s each under CI (``CI=true``), a few seconds otherwise. A harness that reports fails with the reproducer.
Without clang's libFuzzer the tests are skipped (under CI they fail: .ci/run installs clang)."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import HEADERS, unavailable

ROOT = Path(__file__).resolve().parent.parent
FUZZ = ROOT / "tests" / "fuzz"
HARNESSES = sorted(FUZZ.glob("fuzz_*.c"))
FLAGS = ["-g", "-O1", "-fsanitize=fuzzer,address,undefined", "-fno-sanitize-recover=all", "-DMECHFMU_NATIVE",
         f"-I{ROOT / 'components/native'}", f"-I{ROOT / 'mechfmu/fmu'}", f"-I{ROOT / 'mechfmu/master'}", f"-I{HEADERS}"]
#: seconds each harness runs; inputs at most this long (a state of the small class, a start_values.json, an
#: expression, a table are all shorter)
SECONDS = 20 if os.environ.get("CI") == "true" else 4
MAX_LEN = 4096


def sources(harness: Path) -> list[Path]:
    """The .c files of components/native the harness links with (its first line)."""
    first = harness.read_text().splitlines()[0]
    match = re.fullmatch(r"/\* sources: (.*) \*/", first.strip())
    assert match, f"{harness.name}: the first line must be /* sources: <.c files of components/native> */"
    files = [ROOT / "components" / "native" / name for name in match.group(1).split()]
    assert all(f.is_file() for f in files), files
    return files


def clang_with_libfuzzer(tmp_path: Path) -> str:
    clang = shutil.which("clang")
    if clang:
        probe = tmp_path / "probe.c"
        probe.write_text("#include <stddef.h>\n#include <stdint.h>\n"
                         "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n")
        if subprocess.run([clang, "-fsanitize=fuzzer,address,undefined", "-o", str(tmp_path / "probe"), str(probe)],
                          capture_output=True).returncode == 0:
            return clang
    unavailable("clang with libFuzzer is needed to fuzz the C runtime (apt-get install clang; .ci/run installs it)")
    raise AssertionError  # unreachable


def own_peak() -> None:
    """Nothing: given as preexec_fn, it makes the fuzzer a forked child with a peak RSS of its own."""


def test_every_harness_names_its_sources():
    names = {h.stem for h in HARNESSES}
    assert {"fuzz_state", "fuzz_start_values"} <= names, names
    for harness in HARNESSES:
        assert "LLVMFuzzerTestOneInput" in harness.read_text(), harness.name
        sources(harness)


@pytest.mark.slow
@pytest.mark.parametrize("harness", HARNESSES, ids=[h.stem for h in HARNESSES])
def test_the_harness_finds_nothing(harness, tmp_path):
    clang = clang_with_libfuzzer(tmp_path)
    program = tmp_path / harness.stem
    subprocess.run([clang, *FLAGS, "-o", str(program), str(harness), *map(str, sources(harness)), "-lm", "-ldl",
                    "-lpthread"], check=True, capture_output=True, text=True)
    corpus = tmp_path / "corpus"  # a copy: the fuzzer adds what it finds there
    seeds = FUZZ / f"corpus_{harness.stem.removeprefix('fuzz_')}"
    if seeds.is_dir():
        shutil.copytree(seeds, corpus)
    else:
        corpus.mkdir()
    # libFuzzer's RSS limit reads the peak RSS (getrusage), which a child started by vfork inherits from this
    # process (a test worker may have peaked above the limit); a preexec_fn makes subprocess fork instead
    proc = subprocess.run([str(program), f"-max_total_time={SECONDS}", f"-max_len={MAX_LEN}", "-timeout=10",
                           "-rss_limit_mb=2048", "-seed=1", f"-artifact_prefix={tmp_path}/", str(corpus)],
                          capture_output=True, text=True, timeout=SECONDS + 120, cwd=tmp_path, preexec_fn=own_peak)
    reports = re.findall(r"==\d+==ERROR.*|runtime error:.*|SUMMARY:.*|Test unit written to .*", proc.stderr)
    assert proc.returncode == 0 and not reports, "\n".join(reports) + "\n" + proc.stderr[-4000:]
    assert re.search(r"Done \d+ runs", proc.stderr), proc.stderr[-2000:]
