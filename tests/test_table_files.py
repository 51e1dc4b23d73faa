"""Table's CSV file: read only inside its folder (the FMU's resources, in-process the scenario's folder)
unless allowOutsideFiles, only a regular file of bounded size, and errors that never quote the file's text;
each case in-process and through the FMU."""
import os
import re
import shutil
import stat
import threading
import time
import zipfile
from pathlib import Path

import pytest
from conftest import interpolated as interpolated_at
from mechfmu.components import COMPONENTS, ComponentError

from mechfmu.master.fmu_slave import FmuSlave
from mechfmu.master.slaves import SlaveError

DATA = "time,force\n0,0\n0.5,10\n1.0,0\n"
# DATA by linear interpolation at t = 0, 0.25, ..., 1.25 (held after its last row: extrapolation 1)
EXPECTED = [0.0, 5.0, 10.0, 5.0, 0.0, 0.0]
H = 0.25
MAX_FILE_BYTES = 16 * 1024 * 1024  # the documented limit of a table file


def in_process(parameters: dict) -> list[float]:
    """y of a Table in-process at t = 0, H, ..., 5 H; ComponentError if it refuses."""
    table = COMPONENTS["Table"]("lookup")
    for name, value in {"tableOnFile": True, "extrapolation": 1, **parameters}.items():
        table.set(name, value)
    table.initialize(0.0)
    ys = [table.get("y")]
    for k in range(5):
        table.do_step(k * H, H)
        ys.append(table.get("y"))
    return ys


@pytest.fixture
def table_fmu(fmus, tmp_path):
    """A Table FMU of its own, unpacked: (its path, its resources folder), which a test fills before
    instantiating it (FmuSlave reuses the folder)."""
    packed = tmp_path / "fmu" / "Table.fmu"
    packed.parent.mkdir()
    shutil.copy(fmus["Table"], packed)
    with zipfile.ZipFile(packed, "a") as archive:
        archive.writestr("resources/data.csv", DATA)
    _, folder = FmuSlave.unpacked(str(packed.resolve()))
    yield packed, Path(folder) / "resources"
    shutil.rmtree(folder, ignore_errors=True)
    FmuSlave._unzipped.pop(str(packed.resolve()), None)


def through_fmu(packed: Path, parameters: dict) -> list[float]:
    """y of the Table FMU at t = 0, H, ..., 5 H; SlaveError if it refuses."""
    slave = FmuSlave("lookup", packed)
    try:
        slave.set_parameters({"tableOnFile": True, "extrapolation": 1, **parameters})
        slave.enter_initialization(0.0, None)
        slave.exit_initialization()
        ys = slave.get(["y"])
        for k in range(5):
            assert slave.do_step(k * H, H)
            ys += slave.get(["y"])
        return ys
    finally:
        slave.terminate()


def refusal(run, parameters: dict) -> str:
    """The message with which ``run`` refuses ``parameters``."""
    with pytest.raises((ComponentError, SlaveError)) as info:
        run(parameters)
    return str(info.value)


def assert_refused_outside(message: str, file_name: str) -> None:
    assert f"Table 'lookup': fileName = {file_name!r} is refused: leads to " in message
    assert "table files are read from: put the file into the FMU's resources/ folder" in message
    assert "or set allowOutsideFiles = true" in message


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """An in-process Table's folder (the current directory) holding data.csv, inside tmp_path."""
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "data.csv").write_text(DATA)
    monkeypatch.chdir(folder)
    return folder


def test_etc_passwd_is_refused_and_no_line_of_it_is_quoted(workdir, table_fmu):
    lines = [line for line in Path("/etc/passwd").read_text().splitlines() if line.strip()]
    for run in (in_process, lambda p: through_fmu(table_fmu[0], p)):
        message = refusal(run, {"fileName": "/etc/passwd"})
        assert_refused_outside(message, "/etc/passwd")
        allowed = refusal(run, {"fileName": "/etc/passwd", "allowOutsideFiles": True})  # read: not a table
        assert "fileName = '/etc/passwd' is not a valid table: line " in allowed
        for text in (message, allowed):
            assert not any(line in text for line in lines) and "root:" not in text and ":x:" not in text


def test_a_name_that_climbs_out_of_the_folder_is_refused_one_inside_is_read(tmp_path, workdir, table_fmu):
    (tmp_path / "outside.csv").write_text(DATA)
    packed, resources = table_fmu
    (resources.parent / "outside.csv").write_text(DATA)  # beside resources/ in the unpacked FMU
    (workdir / "sub").mkdir()
    for run in (in_process, lambda p: through_fmu(packed, p)):
        assert_refused_outside(refusal(run, {"fileName": "../outside.csv"}), "../outside.csv")
        assert run({"fileName": "data.csv"}) == EXPECTED
        assert run({"fileName": "sub/../data.csv"}) == EXPECTED  # '..' that stays inside


def test_a_symbolic_link_out_of_the_folder_is_refused_one_within_it_is_read(tmp_path, workdir, table_fmu):
    outside = tmp_path / "outside.csv"
    outside.write_text(DATA)
    packed, resources = table_fmu
    for folder, run in ((workdir, in_process), (resources, lambda p: through_fmu(packed, p))):
        (folder / "link.csv").symlink_to(outside)
        (folder / "inner.csv").symlink_to(folder / "data.csv")
        assert_refused_outside(refusal(run, {"fileName": "link.csv"}), "link.csv")
        assert run({"fileName": "inner.csv"}) == EXPECTED


def release_readers(fifo: Path, stop: threading.Event) -> None:
    """Open and close ``fifo``'s writing end whenever a reader waits on it, so that a reader that opened
    it sees its end instead of waiting forever."""
    while not stop.is_set():
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # no reader
            pass
        time.sleep(0.01)


def test_a_fifo_is_refused_without_being_opened(workdir, table_fmu):
    packed, resources = table_fmu
    for folder, run in ((workdir, in_process), (resources, lambda p: through_fmu(packed, p))):
        fifo = folder / "pipe.csv"
        os.mkfifo(fifo)
        stop = threading.Event()
        releaser = threading.Thread(target=release_readers, args=(fifo, stop), daemon=True)
        releaser.start()
        try:
            message = refusal(run, {"fileName": "pipe.csv"})
            allowed = refusal(run, {"fileName": str(fifo), "allowOutsideFiles": True})  # the option allows no more
        finally:
            stop.set()
            releaser.join()
        assert f"fileName = 'pipe.csv' is refused: leads to '{fifo.resolve()}', which is not a regular file" \
            in message
        assert f"fileName = '{fifo}' is refused: leads to '{fifo.resolve()}', which is not a regular file" in allowed


def test_a_character_device_is_refused_without_being_read(workdir, table_fmu):
    packed, resources = table_fmu
    for folder, run in ((workdir, in_process), (resources, lambda p: through_fmu(packed, p))):
        zero = folder / "zero.csv"
        try:
            os.mknod(zero, stat.S_IFCHR | 0o444, os.makedev(1, 5))  # endless zeros, like /dev/zero
        except PermissionError:
            pytest.skip("creating a device node needs CAP_MKNOD")
        message = refusal(run, {"fileName": "zero.csv"})
        assert f"fileName = 'zero.csv' is refused: leads to '{zero.resolve()}', which is not a regular file" \
            in message
        allowed = refusal(run, {"fileName": str(zero), "allowOutsideFiles": True})  # the option allows no more
        assert f"fileName = '{zero}' is refused: leads to '{zero.resolve()}', which is not a regular file" in allowed


def test_a_file_over_the_size_limit_is_refused_one_at_it_is_read(workdir, table_fmu):
    packed, resources = table_fmu
    for folder, run in ((workdir, in_process), (resources, lambda p: through_fmu(packed, p))):
        with open(folder / "big.csv", "wb") as file:  # sparse: the size is what counts
            file.truncate(MAX_FILE_BYTES + 1)
        message = refusal(run, {"fileName": "big.csv"})
        assert f"fileName = 'big.csv' is refused: has {MAX_FILE_BYTES + 1} bytes, more than the {MAX_FILE_BYTES} " \
            "a table file may have: shorten the table or thin out its rows" in message
        with open(folder / "limit.csv", "wb") as file:  # DATA and a comment line that fills it to the limit
            file.write(DATA.encode() + b"#" + b"-" * (MAX_FILE_BYTES - len(DATA) - 2) + b"\n")
        assert run({"fileName": "limit.csv"}) == EXPECTED


def test_allow_outside_files_reads_an_outside_regular_file(tmp_path, workdir, table_fmu):
    outside = tmp_path / "outside.csv"
    outside.write_text(DATA)
    (table_fmu[1].parent / "outside.csv").write_text(DATA)  # beside resources/ in the unpacked FMU
    for run in (in_process, lambda p: through_fmu(table_fmu[0], p)):
        assert run({"fileName": str(outside), "allowOutsideFiles": True}) == EXPECTED
        assert run({"fileName": "../outside.csv", "allowOutsideFiles": True}) == EXPECTED
        assert_refused_outside(refusal(run, {"fileName": str(outside)}), str(outside))


def test_a_name_with_a_nul_character_is_refused_as_a_name(workdir):
    message = refusal(in_process, {"fileName": "data.csv\0.txt"})  # FMI's C strings cannot carry it
    assert message == "Table 'lookup': fileName = 'data.csv\\x00.txt' holds a NUL character, which an FMI String cannot carry"


@pytest.mark.parametrize("content, problem", [
    ("t,y\n0,0\n# note\nsecret-token,1\n", "line 4 is not a list of numbers separated by ','"),
    ("0,0\n1,1\n0.5,7531\n", "time is not monotonic: line 3 has a time before the line above it"),
    ("0,0\n1,1\n1,2\n1,7531\n", "line 4 is the third line at one time (two make a jump, no more)"),
    ("0,0\n1,\xe9\n", "line 2 is not a list of numbers separated by ','"),
    ("0,0\n1,1\x00secret\n", "line 2 is not a list of numbers separated by ','"),
], ids=["not-numbers", "decreasing-time", "three-at-one-time", "accented-letter", "nul-inside-a-value"])
def test_a_bad_file_is_named_with_its_line_and_none_of_its_text(workdir, table_fmu, content, problem):
    packed, resources = table_fmu
    for folder, run in ((workdir, in_process), (resources, lambda p: through_fmu(packed, p))):
        (folder / "bad.csv").write_text(content)
        message = refusal(run, {"fileName": "bad.csv"})
        assert f"Table 'lookup': fileName = 'bad.csv' is not a valid table: {problem}" in message
        assert "secret" not in message and "7531" not in message and "\xe9" not in message
        (folder / "latin.csv").write_bytes(b"0,0\n1,\xe9\n")  # not UTF-8: named by its line, no byte quoted
        message = refusal(run, {"fileName": "latin.csv"})
        assert "fileName = 'latin.csv' is not a valid table: line 2 is not UTF-8 text" in message
        assert "0xe9" not in message


def test_an_in_process_scenario_reads_its_table_from_the_scenario_folder(fmus, tmp_path, workdir):
    """Not from the current directory (which holds another data.csv here): the in-process component stands
    for the FMU, whose relative files are its own, and the scenario's folder is where the user put the file."""
    from mechfmu.master.simulate import simulate
    from mechfmu.ssp import write_scenario

    (workdir / "data.csv").write_text("time,force\n0,100\n1,100\n")
    folder = tmp_path / "scenario"
    write_scenario(folder, "lookup", [("lookup", "Table", {"tableOnFile": True, "fileName": "data.csv",
                                                            "extrapolation": 1}),
                                      ("force", "Force", {}), ("mass", "Mass", {"m": 1.0})],
                   ["lookup.y -> force.f", "force.flange <-> mass.flange_a"], stop_time=5 * H, step_size=H,
                   fmu_folder=(Path(__file__).resolve().parent.parent / "fmus").as_posix())
    (folder / "data.csv").write_text(DATA)
    result = simulate(folder, local=True)
    assert result.ok, result.message
    assert list(result.data["lookup.y"]) == EXPECTED


def interpolated(rows: list[tuple[float, float]]) -> list[float]:
    """The Table's expected outputs at this module's steps (conftest.interpolated)."""
    return interpolated_at(rows, 5, H)


def test_a_byte_order_mark_is_skipped_and_the_first_row_kept(workdir, table_fmu):
    """A spreadsheet's UTF-8 export starts with a byte-order mark: the first row is data, not a header (dropping it
    made y(0) = 3, the second row's value)."""
    packed, resources = table_fmu
    for folder, run in ((workdir, in_process), (resources, lambda p: through_fmu(packed, p))):
        (folder / "bom.csv").write_bytes(b"\xef\xbb\xbf0,1\n1,3\n")
        assert run({"fileName": "bom.csv"}) == interpolated([(0.0, 1.0), (1.0, 3.0)])
        (folder / "bom_header.csv").write_bytes(b"\xef\xbb\xbftime,force\n0,1\n1,3\n")
        assert run({"fileName": "bom_header.csv"}) == interpolated([(0.0, 1.0), (1.0, 3.0)])


@pytest.mark.parametrize("content", ["t,1\n0,0\n1,1\n", "0;1\n0,0\n1,1\n", "1O,1\n0,0\n1,1\n"],
                         ids=["name-and-number", "other-separator", "letter-in-a-number"])
def test_a_first_line_with_a_number_is_no_header_but_an_error(workdir, table_fmu, content):
    """Only a first line of names (no value a number) is a header; any other line that is not numbers is named."""
    packed, resources = table_fmu
    for folder, run in ((workdir, in_process), (resources, lambda p: through_fmu(packed, p))):
        (folder / "first.csv").write_text(content)
        message = refusal(run, {"fileName": "first.csv"})
        assert "fileName = 'first.csv' is not a valid table: line 1 is not a list of numbers separated by ','" \
            in message


def test_a_file_name_longer_than_any_buffer_is_read_whole(workdir, table_fmu):
    """A 12 KB name that leads to data.csv ('./' repeated): joined and resolved whole, never cut to another file
    (cut at 8 KB, it named the folder itself)."""
    packed, resources = table_fmu
    name = "./" * 6000 + "data.csv"
    for run in (in_process, lambda p: through_fmu(packed, p)):
        assert run({"fileName": name}) == EXPECTED


def test_a_read_error_is_reported_as_what_it_is(workdir, table_fmu):
    """/proc/self/mem is a regular file whose first bytes (address 0, never mapped) give EIO on every read: the
    error is the system's, not an empty table."""
    for run in (in_process, lambda p: through_fmu(table_fmu[0], p)):
        message = refusal(run, {"fileName": "/proc/self/mem", "allowOutsideFiles": True})
        assert "fileName = '/proc/self/mem' cannot be read: Input/output error" in message, message
        assert "has no rows" not in message


@pytest.mark.parametrize("columns", [2.0**31, 3e9])  # the first Integer beyond a C int, and one far beyond
def test_an_integer_parameter_beyond_an_int_from_start_values_is_refused(table_fmu, columns):
    """resources/start_values.json may hold any JSON number for the Integer columns: one beyond a C int is refused
    by name before it is converted (the conversion was undefined behaviour)."""
    import json
    packed, resources = table_fmu
    (resources / "start_values.json").write_text(json.dumps({"columns": columns}))
    message = refusal(lambda p: through_fmu(packed, p), {"fileName": "data.csv"})
    # refused by name and value, by the start values' reader or by the law before it converts (never as column
    # -2147483648, what the conversion made of it)
    assert re.search(rf"Table 'lookup': columns = {int(columns)}(\.0)? ", message), message  # as written, or as read
    assert f"must be an integer from 2 to {2**31 - 1}" in message or "does not fit an FMI Integer" in message
