"""Every FMU holds our native binary for each platform (mechfmu.fmu.native), and each binary is one its platform
loads: the right machine, every FMI 2.0 function exported, no Python library linked (the shipped FMUs run their
components as native code; a Python-embedding FMU finds Python at run time), only the C runtime imported; macOS: both architectures in one universal binary, macOS 11
and later, the arm64 slice signed (Apple silicon runs no unsigned code). linux64, win64 and aarch64-linux also run in
the tests (tests/test_c_host.py, tests/test_windows.py under Wine, tests/test_aarch64.py under QEMU); darwin64 is
built and checked here, not run."""
import hashlib
import re
import struct
import zipfile

import fmpy
import lief
import pytest
from conftest import HEADERS

from mechfmu.fmu.build import binary_name
from mechfmu.fmu.native import PLATFORMS, universal_binary

#: the functions an FMI 2.0 binary exports (both interfaces), from the standard's header
FMI2_FUNCTIONS = set(re.findall(r"FMI2_Export\s+fmi2\w+TYPE\s+(fmi2\w+);", (HEADERS / "fmi2Functions.h").read_text()))
#: the C runtime: libc and libm, with libdl and libpthread where glibc keeps them apart (AArch64's older glibc)
ELF_LIBRARIES = {"libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0"}


def test_the_standard_header_names_every_function():
    assert len(FMI2_FUNCTIONS) == 44 and {"fmi2Instantiate", "fmi2DoStep", "fmi2GetDerivatives"} <= FMI2_FUNCTIONS


def test_every_fmu_holds_a_binary_for_each_platform_and_fmpy_lists_them(fmus):
    for model, fmu in fmus.items():
        with zipfile.ZipFile(fmu) as zf:
            names = set(zf.namelist())
        assert {binary_name(model, folder) for folder in PLATFORMS} <= names, model
        assert not any(name.startswith("binaries/") and name.count("/") == 2 and name.split("/")[1] not in PLATFORMS
                       for name in names), model
        # fmpy names the FMI 2.0 platforms (it knows no AArch64 Linux folder)
        assert set(fmpy.supported_platforms(str(fmu))) == {"linux64", "win64", "darwin64"}, model


def platform_binary(fmus, folder: str) -> bytes:
    """The platform's binary, the same bytes in every FMU (one build serves all models)."""
    contents = {}
    for model, fmu in fmus.items():
        with zipfile.ZipFile(fmu) as zf:
            contents[model] = zf.read(binary_name(model, folder))
    assert len({hashlib.sha256(data).hexdigest() for data in contents.values()}) == 1, folder
    return contents["Mass"]


@pytest.mark.parametrize("folder, machine", [("linux64", lief.ELF.ARCH.X86_64),
                                             ("aarch64-linux", lief.ELF.ARCH.AARCH64)])
def test_linux_binaries(fmus, folder, machine):
    binary = lief.ELF.parse(list(platform_binary(fmus, folder)))
    assert binary.header.machine_type == machine
    assert binary.header.file_type == lief.ELF.Header.FILE_TYPE.DYN
    assert FMI2_FUNCTIONS <= {symbol.name for symbol in binary.exported_functions}
    assert set(binary.libraries) <= ELF_LIBRARIES, binary.libraries  # no libpython


def glibc_needed(data: bytes) -> tuple[int, ...]:
    """The newest glibc symbol version an ELF file needs (its version requirements, read by lief), (0,) if none."""
    binary = lief.ELF.parse(list(data))
    versions = [tuple(int(part) for part in aux.name.removeprefix("GLIBC_").split("."))
                for requirement in binary.symbols_version_requirement
                for aux in requirement.get_auxiliary_symbols() if re.fullmatch(r"GLIBC_[0-9.]+", aux.name)]
    return max(versions, default=(0,))


def test_cross_built_linux_binaries_load_on_glibc_2_17(fmus):
    """A binary built by zig for another machine loads on every Linux of its processor with glibc 2.17 or later
    (manylinux2014's), whatever the builder's glibc (this machine's linux64, by the system compiler, runs here)."""
    assert glibc_needed(platform_binary(fmus, "aarch64-linux")) <= (2, 17)


@pytest.mark.slow
def test_portable_linux_binaries_load_on_glibc_2_17(tmp_path):
    """What a wheel carries for Linux x86-64 (built by zig, ``portable``: the FMU binary, the host library, the
    exchange) needs glibc 2.17 at most, where the system compiler's needs this machine's (2.35 for hypot)."""
    from mechfmu.fmu.native import compile_binary, compile_for, compile_library, exchange_arguments
    compile_binary(tmp_path / "fmu.so", None, "linux64", portable=True)
    compile_library(tmp_path / "laws.so", "linux64", portable=True)
    flags, sources = exchange_arguments()
    compile_for("linux64", flags, [], tmp_path / "exchange.so", sources, tmp_path, portable=True)
    for name in ("fmu.so", "laws.so", "exchange.so"):
        binary = lief.ELF.parse(str(tmp_path / name))
        assert binary.header.machine_type == lief.ELF.ARCH.X86_64, name
        assert glibc_needed((tmp_path / name).read_bytes()) <= (2, 17), name
    assert FMI2_FUNCTIONS <= {symbol.name for symbol in lief.ELF.parse(str(tmp_path / "fmu.so")).exported_functions}


def test_windows_binary(fmus):
    binary = lief.PE.parse(list(platform_binary(fmus, "win64")))
    assert binary.header.machine == lief.PE.Header.MACHINE_TYPES.AMD64
    assert binary.header.has_characteristic(lief.PE.Header.CHARACTERISTICS.DLL)
    assert FMI2_FUNCTIONS <= {entry.name for entry in binary.get_export().entries}
    imports = {library.name.lower() for library in binary.imports}
    assert all(name in ("kernel32.dll", "advapi32.dll") or name.startswith("api-ms-win-crt-") for name in imports), \
        imports  # the Windows system and the Universal C Runtime only: no python3X.dll, no compiler runtime


def test_macos_binary_is_universal(fmus):
    fat = lief.MachO.parse(list(platform_binary(fmus, "darwin64")))
    assert fat is not None and fat.size == 2
    slices = {thin.header.cpu_type: thin for thin in fat}
    assert set(slices) == {lief.MachO.Header.CPU_TYPE.X86_64, lief.MachO.Header.CPU_TYPE.ARM64}
    for cpu, thin in slices.items():
        assert thin.header.file_type == lief.MachO.Header.FILE_TYPE.DYLIB
        assert {f"_{name}" for name in FMI2_FUNCTIONS} <= {symbol.name for symbol in thin.exported_symbols}, cpu
        # its own install name (the same in every FMU, no build path), and the system library only
        assert [library.name for library in thin.libraries] == ["@rpath/mechfmu_fmi2.dylib",
                                                                "/usr/lib/libSystem.B.dylib"], cpu
        assert thin.build_version.minos == [11, 0, 0], cpu
    assert slices[lief.MachO.Header.CPU_TYPE.ARM64].has_code_signature


def test_universal_binary_takes_thin_64_bit_mach_o_only():
    with pytest.raises(ValueError, match="not a thin 64-bit Mach-O file"):
        universal_binary([struct.pack("<I", 0x7F454C46) + bytes(60)])


@pytest.mark.slow
def test_a_build_for_this_machine_alone_holds_its_binary_only(tmp_path):
    from mechfmu.fmu.build import build, is_current
    fmu = build(["Mass"], directory=tmp_path, platforms=["linux64"])[0]
    with zipfile.ZipFile(fmu) as zf:
        assert sorted(name for name in zf.namelist() if name.startswith("binaries/")) == ["binaries/linux64/Mass.so"]
    assert is_current(fmu) and not is_current(fmu, platforms=list(PLATFORMS))  # a full build would add the others


def test_an_unknown_platform_is_refused_by_name(capsys):
    from mechfmu.cli import main
    assert main(["build", "--platforms", "linux64,win32"]) == 2
    assert "--platforms: unknown platform 'win32': the platforms are linux64, aarch64-linux, win64, darwin64" \
        in capsys.readouterr().err
