"""The recorder of a run kept in memory: rows given one by one and in blocks, in any mix, make the structured array
of every row in order, each value the float64 of the value given; a block's array, which a master reuses for its
next block, is copied; a run stopped before any row records nothing."""
from types import SimpleNamespace

import numpy as np
import pytest

from mechfmu.master.observers import PENDING, Recorder


def feed(recorder: Recorder, pieces: list[np.ndarray]) -> None:
    """Each piece: one row (1-D) by ``step_completed`` or a block (2-D) by ``rows_completed``, the first one row."""
    run = SimpleNamespace(column_names=["time", "a", "b"], row=tuple(pieces[0]))
    recorder.initialized(run)
    reused = np.empty((max(len(p) if p.ndim == 2 else 1 for p in pieces), 3))  # a master's block array, reused
    for piece in pieces[1:]:
        if piece.ndim == 1:
            run.row = tuple(piece.tolist())
            recorder.step_completed(run)
        else:
            block = reused[:len(piece)]
            block[:] = piece
            recorder.rows_completed(run, block)
            reused[:] = np.nan


@pytest.mark.parametrize("layout", ["rows", "blocks", "mixed"])
def test_every_row_in_order_as_given(layout):
    rng = np.random.default_rng(7)
    total = 3 * PENDING + 11  # past the pending rows' limit several times
    values = rng.normal(size=(total, 3))
    values[:, 0] = np.arange(total) * 1e-3
    if layout == "rows":
        pieces = list(values)
    elif layout == "blocks":
        pieces = [values[0], values[1:PENDING + 5], values[PENDING + 5:2 * PENDING], values[2 * PENDING:]]
    else:
        pieces = [values[0], *values[1:100], values[100:2000], *values[2000:PENDING + 3000], values[PENDING + 3000:]]
    recorder = Recorder()
    feed(recorder, pieces)
    data = recorder.array()
    assert recorder.count == total == len(data)
    assert data.dtype.names == ("time", "a", "b")
    for i, name in enumerate(data.dtype.names):
        assert data[name].tobytes() == values[:, i].tobytes(), name
    assert recorder.array().tobytes() == data.tobytes()  # asked twice, the same rows


def test_values_other_than_floats_become_their_float64():
    recorder = Recorder()
    run = SimpleNamespace(column_names=["time", "flag"], row=(0.0, True))
    recorder.initialized(run)
    run.row = (0.5, 3)
    recorder.step_completed(run)
    data = recorder.array()
    assert data["flag"].tolist() == [1.0, 3.0] and data["flag"].dtype == np.float64


def test_nothing_recorded_before_the_first_row():
    recorder = Recorder()
    assert recorder.count == 0
    assert len(recorder.array()) == 0
