"""``mechfmu export-crosscheck``: every FMU of a scenario in the FMI cross-check layout, accepted by
fmpy's cross-check validator, and each replays its reference bit for bit in fmpy from its input file
alone (the FMU carries the instance's parameters; the inputs are those really held, including the
tangent wires of linear-implicit coupling and the solved constraint force of newton)."""
import numpy as np
import pytest
from fmpy import simulate_fmu
from fmpy.cross_check.validate_vendor_repo import validate_test_fmu
from fmpy.util import read_csv, read_ref_opt_file

from mechfmu.crosscheck.export import LIMIT, export_crosscheck


@pytest.mark.parametrize("name", ["oscillator", "elastogap", "prescribed_motion", "ball_drop"])
def test_exported_fmus_replay_their_reference(fmus, tmp_path, name):
    folders = export_crosscheck(f"scenarios/{name}", tmp_path)
    assert folders and all(f.parent.parent.parts[-4:] == ("2.0", "cs", "linux64", "mechfmu") for f in folders)
    for folder in folders:
        model = folder.name
        assert validate_test_fmu(str(folder)) == [], model
        assert all(f.stat().st_size <= LIMIT for f in folder.glob("*.csv"))
        options = read_ref_opt_file(str(folder / f"{model}_ref.opt"))
        reference = read_csv(str(folder / f"{model}_ref.csv"))
        inputs = folder / f"{model}_in.csv"
        replay = simulate_fmu(str(folder / f"{model}.fmu"), start_time=options["StartTime"],
                              stop_time=options["StopTime"], output_interval=options["StepSize"],
                              input=read_csv(str(inputs)) if inputs.exists() else None,
                              output=list(reference.dtype.names[1:]))
        assert len(replay) == len(reference) > 100
        for column in reference.dtype.names[1:]:
            assert np.array_equal(replay[column], reference[column]), (name, model, column)


@pytest.mark.slow
def test_an_fmu_that_does_not_read_back_its_values_is_refused(fmus, tmp_path, monkeypatch):
    """The cross-check FMU is read back as the archive's are (mechfmu.ssp.readback): written without the mass's
    m, the export names the model, the value and what the FMU holds instead, and leaves no such FMU behind."""
    from mechfmu.crosscheck import export as crosscheck_export
    from mechfmu.ssp.readback import ReadBackError
    variant = crosscheck_export._variant
    monkeypatch.setattr(crosscheck_export, "_variant", lambda fmu, target, parameters, *rest: variant(
        fmu, target, {k: v for k, v in parameters.items() if k != "m"}, *rest))
    with pytest.raises(ReadBackError) as info:
        export_crosscheck("scenarios/oscillator", tmp_path)
    assert "resources/start_values.json: m = 5.0 reads back as nothing" in str(info.value), str(info.value)
    assert not list(tmp_path.glob("**/Mass.fmu"))
