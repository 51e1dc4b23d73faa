"""The FMUs' AArch64 Linux binary run: our C test host cross-compiled for AArch64 with the zig that builds the
FMUs, run under QEMU's user-mode emulation with Debian's AArch64 C library (packages qemu-user-static and
libc6-arm64-cross; .ci/run installs them). Every native FMU runs 300 steps with random inputs, restores a saved
and a deserialized state, maps no Python, and gives the Linux x86-64 binary's outputs bit for bit: glibc's sin,
cos and tanh, which Sine and the sphere contact call, round alike on both (unlike Windows' C library,
tests/test_windows.py)."""
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import HEADERS, HERE
from fmpy import read_model_description
from mechfmu.components import COMPONENTS
from test_c_host import host_arguments, read_output, run_c_host, unzip, write_plan

from mechfmu.fmu.native import zig

pytestmark = pytest.mark.slow  # needs two system packages (module docstring): not in the fast tier
#: the AArch64 C library (Debian's libc6-arm64-cross) QEMU loads the host's libraries from
SYSROOT = Path("/usr/aarch64-linux-gnu")


@pytest.fixture(scope="module")
def aarch64_host(tmp_path_factory) -> list[str]:
    """The command that runs tests/fmi2_host.c built for AArch64 Linux (QEMU with the AArch64 C library)."""
    qemu = shutil.which("qemu-aarch64-static") or shutil.which("qemu-aarch64")
    assert qemu, "the AArch64 tests need QEMU's user-mode emulation: apt-get install qemu-user-static"
    assert (SYSROOT / "lib" / "libc.so.6").is_file(), "the AArch64 tests need its C library: apt-get install " \
                                                      "libc6-arm64-cross"
    executable = tmp_path_factory.mktemp("aarch64_host") / "fmi2_host"
    subprocess.run([*zig(), "cc", "-target", "aarch64-linux-gnu", "-O2", "-Wall", "-Wextra", "-Werror",
                    f"-I{HEADERS}", "-o", str(executable), str(HERE / "fmi2_host.c"), "-ldl"], check=True)
    return [qemu, "-L", str(SYSROOT), str(executable)]


@pytest.mark.parametrize("model", sorted(COMPONENTS))
def test_fmu_runs_on_aarch64_linux_as_on_x86_64_bit_for_bit(fmus, host, aarch64_host, model, tmp_path):
    unzipped = unzip(fmus[model], tmp_path / "fmu")
    md = read_model_description(str(unzipped))
    plan = tmp_path / "plan.txt"
    write_plan(md, COMPONENTS[model].example_parameters, plan)
    x86 = run_c_host(host[0], host_arguments(unzipped, md, plan, tmp_path / "x86_64.txt"))
    assert x86.returncode == 0, x86.stdout + x86.stderr
    arguments = host_arguments(unzipped, md, plan, tmp_path / "aarch64.txt")
    arguments[0] = str(unzipped / "binaries" / "aarch64-linux" / Path(arguments[0]).name)
    proc = subprocess.run([*aarch64_host, *arguments], env={}, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[ERROR]" not in proc.stdout and "[FATAL]" not in proc.stdout, proc.stdout
    rows, facts = read_output(tmp_path / "aarch64.txt")
    linux, linux_facts = read_output(tmp_path / "x86_64.txt")
    assert facts == linux_facts == {"replay_equal": 1, "serialized_equal": 1, "libpython_mappings": 0}
    assert len(rows) == 300
    assert rows == linux  # bit for bit
