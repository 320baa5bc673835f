"""Results JSON round trip and atomic run folders."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import yaml

from recprivacy.errors import DataError
from recprivacy.experiments import results as results_module
from recprivacy.experiments.results import Results, load_results, run_folder_name, write_run
from recprivacy.report.figures import line_plot


def make_results() -> Results:
    r = Results(name="demo", study="train", config={"name": "demo", "seed": 3, "model": {"name": "bpr"}})
    r.dataset = {"name": "synthetic", "users": 5, "sha256": "0123abcd"}
    r.seeds.update(seed=3, split=3)
    r.metrics.update({"recall@10": 0.25, "mrr@10": float("nan")})
    r.add_table("metrics", ["metric", "@10"], [["recall", np.float64(0.25)], ["hit", np.int64(1)]], "Test")
    r.add_figure("curve", line_plot({"loss": ([1, 2], [0.5, 0.4])}, "epoch", "loss"), "Loss")
    r.add_section("Test metrics", "Full ranking.", ["metrics"], ["curve"])
    r.timings["fit"] = 1.25
    return r


def test_json_round_trip_keeps_everything_including_nan():
    r = make_results()
    back = Results.from_json(r.to_json())
    assert math.isnan(back.metrics["mrr@10"])
    doc, back_doc = r.to_document(), back.to_document()
    doc["metrics"].pop("mrr@10"), back_doc["metrics"].pop("mrr@10")
    assert back_doc == doc
    assert back.tables["metrics"].rows == [["recall", 0.25], ["hit", 1]]
    assert type(back.tables["metrics"].rows[1][1]) is int
    assert set(back.versions) >= {"python", "numpy", "torch", "recprivacy"}


def test_sections_must_refer_to_existing_tables():
    r = make_results()
    with pytest.raises(KeyError, match="nope"):
        r.add_section("Broken", "", ["nope"])
    with pytest.raises(ValueError, match="slug"):
        r.add_table("bad name/with slash", ["a"], [[1]])


def test_timed_accumulates_seconds():
    r = make_results()
    with r.timed("step"):
        pass
    first = r.timings["step"]
    with r.timed("step"):
        pass
    assert r.timings["step"] >= first >= 0.0


def test_write_run_writes_a_complete_folder(tmp_path):
    r = make_results()
    run = write_run(r, tmp_path / "runs")
    assert re.fullmatch(r"\d{8}-\d{6}-demo", run.name)
    assert run.name == run_folder_name(r)
    names = {p.relative_to(run).as_posix() for p in run.rglob("*")}
    assert names == {
        "config.yaml", "results.json", "report.md", "report.html", "figures", "figures/curve.png",
        "tables", "tables/metrics.csv",
    }
    assert (run / "figures" / "curve.png").read_bytes() == r.figure_png("curve")
    assert yaml.safe_load((run / "config.yaml").read_text()) == r.config
    assert json.loads((run / "results.json").read_text(), parse_constant=lambda c: c)["name"] == "demo"
    assert load_results(run).to_document()["tables"] == r.to_document()["tables"]


def test_same_name_and_second_gets_a_suffix(tmp_path):
    r = make_results()
    first, second = write_run(r, tmp_path), write_run(r, tmp_path)
    assert second.name == first.name + "-2"


def test_failure_while_writing_leaves_no_run_folder(tmp_path, monkeypatch):
    out = tmp_path / "runs"
    complete = write_run(make_results(), out)

    def broken(doc, folder):
        (folder / "report.md").write_text("half")
        raise RuntimeError("disk full")

    monkeypatch.setattr(results_module, "write_report", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        write_run(make_results(), out)
    assert [p.name for p in out.iterdir()] == [complete.name]
    fresh = tmp_path / "fresh"
    with pytest.raises(RuntimeError):
        write_run(make_results(), fresh)
    assert not fresh.exists()


def test_load_results_errors_name_the_folder(tmp_path):
    with pytest.raises(DataError, match="run folder not found"):
        load_results(tmp_path / "missing")
    with pytest.raises(DataError, match="results.json not found"):
        load_results(tmp_path)
    (tmp_path / "results.json").write_text('{"name": "x"}')
    with pytest.raises(DataError, match=r"results.json: not a recprivacy results file: study: Field required"):
        load_results(tmp_path)
