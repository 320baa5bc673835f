"""``recprivacy run --resume``: an interrupted study on the kit continues from its stored cells
and writes the same numbers as an uninterrupted run; a resume with another config, of a
finished run, or of a study not on the kit is a one-line error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from recprivacy.cli import app
from recprivacy.experiments import load_results
from recprivacy.errors import DataError

SMOKE = Path(__file__).with_name("membership_smoke.yaml")
runner = CliRunner()


def invoke(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def assert_one_line_error(result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> tuple[Path, Path]:
    """The membership smoke config and its uninterrupted run folder."""
    root = tmp_path_factory.mktemp("resume")
    config = root / "smoke.yaml"
    shutil.copy(SMOKE, config)
    result = invoke("run", config, "--out", root / "runs")
    assert result.exit_code == 0, result.output
    (run_dir,) = (root / "runs").iterdir()
    return config, run_dir


def interrupted_copy(run_dir: Path, into: Path, keep: int) -> Path:
    """The folder as a run killed after ``keep`` cells would leave it, the next line half written."""
    into.mkdir()
    shutil.copy(run_dir / "config.yaml", into)
    if (run_dir / "arrays").is_dir():  # a study whose cells keep no arrays has none
        shutil.copytree(run_dir / "arrays", into / "arrays")
    lines = (run_dir / "records.jsonl").read_text().splitlines(keepends=True)
    (into / "records.jsonl").write_text("".join(lines[:keep]) + lines[keep][:40])
    return into


def test_a_resumed_run_writes_the_numbers_of_the_uninterrupted_one(smoke, tmp_path, monkeypatch):
    monkeypatch.delenv("RECPRIVACY_QUIET", raising=False)  # the progress lines say how many cells were stored
    config, run_dir = smoke
    with pytest.raises(DataError, match="an unfinished run .* recprivacy run --resume"):
        load_results(interrupted_copy(run_dir, tmp_path / "probe", keep=5))
    n_cells = len((run_dir / "records.jsonl").read_text().splitlines())
    for keep, args in ((7, ["run", config]), (30, ["run"])):  # with the config, and with the saved one
        folder = interrupted_copy(run_dir, tmp_path / f"kept{keep}", keep)
        result = invoke(*args, "--resume", folder)
        assert result.exit_code == 0, result.output
        assert f"cells: {keep} stored, {n_cells - keep} to run" in result.stderr
        resumed, whole = load_results(folder), load_results(run_dir)
        assert json.dumps(resumed.metrics) == json.dumps(whole.metrics)
        assert resumed.tables == whole.tables
        assert len((folder / "records.jsonl").read_text().splitlines()) == n_cells


def test_resume_refuses_another_config_and_a_finished_run(smoke, tmp_path):
    config, run_dir = smoke
    folder = interrupted_copy(run_dir, tmp_path / "kept", keep=3)
    assert_one_line_error(invoke("run", config, "--resume", folder, "--set", "study_options.k=10"),
                          "the config differs from its config.yaml at study_options.k (saved 20, given 10)")  # fmt: skip
    assert_one_line_error(invoke("run", "--resume", run_dir), "this run is finished")
    assert_one_line_error(invoke("run", "--resume", tmp_path), "not a run folder (no config.yaml)")
    assert_one_line_error(invoke("run"), "expected CONFIG.yaml, or --resume RUN_DIR")
    assert_one_line_error(invoke("run", config, "--executor", "dask"), "--executor: expected one of inprocess, ray")


def test_kit_options_are_refused_for_a_study_not_on_the_kit(tmp_path):
    config = tmp_path / "train.yaml"
    config.write_text(yaml.safe_dump({"study": "train", "name": "t"}))
    assert_one_line_error(invoke("run", config, "--executor", "ray", "--out", tmp_path / "runs"),
                          "study 'train' does not run on the study kit yet")  # fmt: skip
    assert not (tmp_path / "runs").exists()


def test_a_failed_fresh_run_without_cells_leaves_no_folder(tmp_path):
    config = tmp_path / "bad.yaml"
    doc = yaml.safe_load(SMOKE.read_text())
    doc["study_options"]["k"] = 500  # longer than the catalogue: fails in the first cell
    config.write_text(yaml.safe_dump(doc))
    assert_one_line_error(invoke("run", config, "--out", tmp_path / "runs"), "k=500 is larger than the catalogue")
    assert list((tmp_path / "runs").iterdir()) == []


def test_a_run_that_dies_mid_grid_keeps_its_cells_and_resumes(smoke, tmp_path, monkeypatch):
    from recprivacy.experiments.membership.cells import MembershipGrid

    config, run_dir = smoke
    measure, calls = MembershipGrid.measure, []

    def dies_at_the_eleventh_cell(self, cell, lab):
        calls.append(cell.key)
        if len(calls) == 11:
            raise RuntimeError("the machine went away")
        return measure(self, cell, lab)

    monkeypatch.setattr(MembershipGrid, "measure", dies_at_the_eleventh_cell)
    died = invoke("run", config, "--out", tmp_path / "runs")
    assert isinstance(died.exception, RuntimeError)
    (folder,) = (tmp_path / "runs").iterdir()
    assert not (folder / "results.json").exists()
    assert len((folder / "records.jsonl").read_text().splitlines()) == 10
    monkeypatch.setattr(MembershipGrid, "measure", measure)
    result = invoke("run", "--resume", folder)
    assert result.exit_code == 0, result.output
    assert json.dumps(load_results(folder).metrics) == json.dumps(load_results(run_dir).metrics)
