"""MAT result files (`mechfmu run --out x.mat`, `MatWriter`): Dymola's result format 1.1, a MATLAB v4 file as Dymola
and OpenModelica write it, read back by the format's rules (scipy.io.loadmat, and DyMat where it is installed) and
equal to the CSV of the same run bit for bit; the guarantees of the CSV writer (partial file after a failed run,
whole points after a file-size limit, a lock); `result_writer` choosing the format by suffix."""
import csv
import os
import resource
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io

from mechfmu.master.result_files import CsvWriter, MatWriter, result_writer
from mechfmu.master.simulate import simulate

ROOT = Path(__file__).resolve().parent.parent
OSCILLATOR = ROOT / "scenarios" / "oscillator"
#: a spring law that fails at t = 0.25 s: the run ends with an error and keeps its rows
FAILING = {"spring": {"springForceUserFunction": "k*u + 1/(t - 0.25)"}}
#: MATLAB v4 type codes (MOPT, little-endian): float64, int32, text stored as uint8
DOUBLE, INT32, TEXT = 0, 20, 51
SIZES = {DOUBLE: 8, INT32: 4, TEXT: 1}


def matrices(path: Path) -> list[tuple[str, int, int, int]]:
    """(name, type, rows, columns) of every matrix in a MATLAB v4 file, walking their headers to the file's end."""
    data, found, at = path.read_bytes(), [], 0
    while at < len(data):
        kind, rows, columns, imaginary, length = struct.unpack_from("<5i", data, at)
        name = data[at + 20:at + 20 + length]
        assert imaginary == 0 and name.endswith(b"\0"), (at, name)
        found.append((name[:-1].decode(), kind, rows, columns))
        at += 20 + length + rows * columns * SIZES[kind]
    assert at == len(data), "the last matrix ends where the file ends"
    return found


def read_dymola(path: Path) -> dict[str, np.ndarray]:
    """Every variable of a result file by the format's rules: Aclass says binTrans (every matrix transposed), the
    names are name's columns, dataInfo's columns say (matrix, signed index): 0 the abscissa, time (data_2's first
    row), 1 a row of data_1 (values at start and stop), 2 a row of data_2 (one value per point)."""
    mat = scipy.io.loadmat(path, chars_as_strings=False)
    assert ["".join(row) for row in mat["Aclass"]] == ["Atrajectory", "1.1", "", "binTrans"]
    names = ["".join(column) for column in mat["name"].T]
    info = mat["dataInfo"]
    assert info.dtype == np.int32 and info.shape == (4, len(names))
    values = {}
    for name, (block, index, interpolation, extrapolation) in zip(names, info.T):
        assert interpolation == 0 and extrapolation == -1, name
        rows = mat["data_2"] if block in (0, 2) else mat["data_1"].T
        values[name] = np.sign(index) * rows[abs(index) - 1]
    return values


def read_csv_text(path: Path) -> tuple[list[str], np.ndarray]:
    with open(path, newline="") as file:
        reader = csv.reader(file)
        names = next(reader)
        return names, np.array([[float(value) for value in row] for row in reader])


def assert_same_bits(mat: dict[str, np.ndarray], csv_path: Path) -> int:
    """The MAT file's variables are the CSV's columns, in its order, bit for bit; returns the number of points."""
    names, rows = read_csv_text(csv_path)
    assert list(mat) == names
    for k, name in enumerate(names):
        assert mat[name].dtype == np.float64 and mat[name].tobytes() == rows[:, k].tobytes(), name
    return len(rows)


def test_a_mat_file_holds_every_csv_column_bit_for_bit(tmp_path):
    result = simulate(OSCILLATOR, local=True, stop=0.05, estimate_error=False, record=False,
                      observers=[CsvWriter(tmp_path / "x.csv"), MatWriter(tmp_path / "x.mat")])
    assert result.ok, result.message
    layout = matrices(tmp_path / "x.mat")
    assert [(name, kind) for name, kind, _, _ in layout] == [("Aclass", TEXT), ("name", TEXT), ("description", TEXT),
                                                             ("dataInfo", INT32), ("data_1", DOUBLE),
                                                             ("data_2", DOUBLE)]
    assert layout[0][2:] == (4, 11)
    values = read_dymola(tmp_path / "x.mat")
    points = assert_same_bits(values, tmp_path / "x.csv")
    assert points == 501 and layout[-1][2:] == (len(values), points)  # binTrans: one column per point
    mat = scipy.io.loadmat(tmp_path / "x.mat", chars_as_strings=False)
    assert mat["data_1"].tolist() == [[0.0, 0.05]]  # time's first and last point, no parameters
    descriptions = ["".join(column) for column in mat["description"].T]
    assert descriptions[0] == "Simulation time [s]" and descriptions[list(values).index("mass.v")] == "[m/s]"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.csv", "x.mat"]  # no temporary or lock file left


def test_the_command_line_writes_mat_by_its_suffix(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "mechfmu.cli", "run", str(OSCILLATOR), "--local", "--stop", "0.02",
                           "--no-error-estimate", "--out", str(tmp_path / "x.mat")],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"results written to {tmp_path / 'x.mat'}" in proc.stdout
    simulate(OSCILLATOR, local=True, stop=0.02, estimate_error=False, observers=[CsvWriter(tmp_path / "x.csv")])
    assert assert_same_bits(read_dymola(tmp_path / "x.mat"), tmp_path / "x.csv") == 201


def test_a_failed_run_leaves_a_valid_partial_mat_file_and_an_earlier_result_as_it_was(tmp_path):
    (tmp_path / "x.mat").write_bytes(b"an earlier run's result")
    result = simulate(OSCILLATOR, local=True, stop=0.5, estimate_error=False, parameters=FAILING,
                      observers=[CsvWriter(tmp_path / "x.csv"), MatWriter(tmp_path / "x.mat")])
    assert result.status == "error"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.mat", "x.partial.csv", "x.partial.mat"]
    assert (tmp_path / "x.mat").read_bytes() == b"an earlier run's result"
    values = read_dymola(tmp_path / "x.partial.mat")
    points = assert_same_bits(values, tmp_path / "x.partial.csv")
    assert points == len(result.data) > 1 and values["time"][-1] == result.end_time
    data_1 = scipy.io.loadmat(tmp_path / "x.partial.mat")["data_1"]
    assert data_1.tolist() == [[0.0, result.end_time]]


def test_a_file_size_limit_keeps_every_whole_point_in_a_valid_mat_file(tmp_path):
    limit = 60_000  # below the writer's first write of 64 KiB
    simulate(OSCILLATOR, local=True, stop=0.05, estimate_error=False, observers=[CsvWriter(tmp_path / "all.csv")])
    out = tmp_path / "x.mat"
    proc = subprocess.run([sys.executable, "-m", "mechfmu.cli", "run", str(OSCILLATOR), "--local", "--stop", "0.05",
                           "--no-error-estimate", "--out", str(out)], capture_output=True, text=True, cwd=ROOT,
                          timeout=300, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))
    partial = tmp_path / "x.partial.mat"
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"writing {out} failed (File too large)" in proc.stdout and f"kept in {partial}" in proc.stdout
    assert not out.exists() and 0 < partial.stat().st_size <= limit
    values = read_dymola(partial)
    names, rows = read_csv_text(tmp_path / "all.csv")
    points = len(values["time"])
    assert points > 100 and f"the header and {points} whole rows kept" in proc.stdout
    assert all(values[name].tobytes() == rows[:points, k].tobytes() for k, name in enumerate(names))


def test_a_second_writer_of_the_same_mat_file_is_refused(tmp_path):
    holder = MatWriter(tmp_path / "x.mat")
    try:
        with pytest.raises(FileExistsError, match="another run is writing this file now"):
            result_writer(tmp_path / "x.mat")
    finally:
        holder.close()
    result_writer(tmp_path / "x.mat").close()
    assert list(tmp_path.iterdir()) == []


def test_the_writer_is_chosen_by_suffix_and_another_suffix_is_refused(tmp_path):
    for name, kind in (("a.csv", CsvWriter), ("b.mat", MatWriter), ("c.MAT", MatWriter)):
        writer = result_writer(tmp_path / name)
        assert type(writer) is kind
        writer.close()
    with pytest.raises(ValueError, match=r"x\.xlsx: results are written as CSV \(\.csv.* or as MAT \(\.mat"):
        result_writer(tmp_path / "x.xlsx")
    proc = subprocess.run([sys.executable, "-m", "mechfmu.cli", "run", str(OSCILLATOR), "--local", "--stop", "0.01",
                           "--out", str(tmp_path / "x.xlsx")], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 2 and "give a file name ending in .csv or .mat" in proc.stderr, proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_fifo_is_refused_for_mat_and_streamed_as_csv(tmp_path):
    """A MAT file is completed at its end (data_2's column count), which a FIFO cannot take: refused before it is
    opened (no wait for a reader), naming a regular file as the cure; any other FIFO is CSV written through."""
    fifo = tmp_path / "rows.mat"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="cannot take; give a regular file"):
        result_writer(fifo)
    with pytest.raises(ValueError, match="cannot take; give a regular file"):
        MatWriter("/dev/null")
    assert type(result_writer("/dev/null")) is CsvWriter
    assert os.listdir(tmp_path) == ["rows.mat"]


def test_dymat_reads_the_mat_file(tmp_path):
    """DyMat (test extra), a reader of Dymola's and OpenModelica's result files, reads every column bit for bit."""
    import DyMat
    simulate(OSCILLATOR, local=True, stop=0.02, estimate_error=False,
             observers=[CsvWriter(tmp_path / "x.csv"), MatWriter(tmp_path / "x.mat")])
    names, rows = read_csv_text(tmp_path / "x.csv")
    result = DyMat.DyMatFile(str(tmp_path / "x.mat"))
    assert sorted(result.names()) == sorted(names[1:])
    assert result.abscissa("mass.s", True).tobytes() == rows[:, 0].tobytes()
    assert all(result.data(name).tobytes() == rows[:, k].tobytes() for k, name in enumerate(names) if k)
    assert result.description("mass.s") == "[m]"


def test_a_name_that_is_not_ascii_is_refused_for_mat_and_written_as_csv(tmp_path):
    """A MAT v4 char matrix holds one byte per character: scipy.io.loadmat gives a UTF-8 name back garbled (shown
    here on the format's own char matrix), so a run naming a component 'massé' refuses .mat, naming the names and
    the cure, writes no file, and writes .csv with the name as given (UTF-8)."""
    from mechfmu import Mass, System
    from mechfmu.master.mat_v4 import text_matrix
    name = "masse\u0301.s"
    (tmp_path / "names.mat").write_bytes(text_matrix("name", [name]))
    read = "".join(scipy.io.loadmat(tmp_path / "names.mat", chars_as_strings=False)["name"][:, 0]).rstrip("\0")
    assert read != name  # the reason for the refusal
    s = System("accents")
    s.add("masse\u0301", Mass(m=1.0))
    s.experiment(stop_time=0.01, step_size=1e-3)
    refused = s.run(tmp_path, local=True, estimate_error=False, observers=[MatWriter(tmp_path / "r.mat")])
    assert refused.status == "error" and "names that are not ASCII (masse\u0301.s" in refused.message
    assert "write .csv" in refused.message and not list(tmp_path.glob("*r.*mat*"))
    s.run(tmp_path, local=True, estimate_error=False, observers=[CsvWriter(tmp_path / "r.csv")])
    assert read_csv_text(tmp_path / "r.csv")[0][1] == name
