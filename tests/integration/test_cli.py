"""The recprivacy command line end to end on a tiny synthetic dataset."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from recprivacy.cli import app
from recprivacy.errors import ConfigError

TINY = [
    "--set", "dataset.options.n_users=80",
    "--set", "dataset.options.n_items=120",
    "--set", "dataset.options.n_interactions=2400",
    "--set", "model.params.n_epochs=3",
    "--set", "model.params.eval_every=1",
]  # fmt: skip

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def only_run(out: Path) -> Path:
    (run,) = [p for p in out.iterdir() if p.is_dir()]
    return run


def assert_one_line_error(result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    assert "Traceback" not in result.output


@pytest.fixture(scope="module")
def audit_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("audit") / "runs"
    result = runner.invoke(app, [str(a) for a in ("audit", "--out", out, *TINY)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "Run written to" in result.stdout
    (out / "stdout.txt").write_text(result.stdout)
    return only_run(out)


def test_the_saved_config_holds_every_option_it_ran_with_and_reruns_to_itself(audit_run):
    from recprivacy.config import load_config
    from recprivacy.experiments.runner import resolve_config

    saved = yaml.safe_load((audit_run / "config.yaml").read_text())
    options = saved["study_options"]
    assert options["membership"]["n_references"] == 8 and options["exposure"] and options["utility"], options
    assert resolve_config(load_config(audit_run / "config.yaml")).to_dict() == saved
    assert json.loads((audit_run / "results.json").read_text())["config"] == saved


def test_the_audit_prints_its_answer_one_line_per_risk_within_columns(audit_run):
    """Piped, the answer respects COLUMNS (80 here): one line per risk of the answer table."""
    doc = json.loads((audit_run / "results.json").read_text())
    lines = (audit_run.parent / "stdout.txt").read_text().splitlines()
    answer = lines[: lines.index(next(line for line in lines if line.startswith("Run written to")))]
    assert len(answer) == len(doc["tables"]["answer"]["rows"]) > 0 and all(len(line) <= 80 for line in answer)


def test_datasets_list_names_builtin_and_real_datasets():
    result = invoke("datasets", "list")
    assert result.exit_code == 0, result.output
    for name in ("synthetic", "ml-100k", "ml-1m", "s3rec-beauty"):
        assert name in result.stdout


def test_datasets_describe_synthetic():
    result = invoke("datasets", "describe", "synthetic")
    assert result.exit_code == 0, result.output
    assert "943" in result.stdout and "1682" in result.stdout and "gender" in result.stdout


def test_train_writes_a_run_with_metrics(tmp_path):
    out = tmp_path / "runs"
    result = invoke("train", "--dataset", "synthetic", "--model", "bpr", "--out", out, *TINY)
    assert result.exit_code == 0, result.output
    run = only_run(out)
    assert run.name.endswith("-train-synthetic-bpr")
    doc = json.loads((run / "results.json").read_text())
    assert doc["study"] == "train"
    assert doc["dataset"]["users"] == 80
    assert 0.0 <= doc["metrics"]["recall@10"] <= 1.0
    assert doc["seeds"] == {"split": 0, "model": 0, "seed": 0}
    assert {"load_data", "split", "fit", "evaluate"} <= set(doc["timings"])
    assert [s["title"] for s in doc["sections"]] == ["Test metrics", "Data and model"]
    assert (run / "figures" / "training_loss.png").is_file()
    assert "recall" in result.stdout
    invoke("train", "--dataset", "synthetic", "--model", "bpr", "--out", tmp_path / "again", *TINY)
    assert json.loads((only_run(tmp_path / "again") / "results.json").read_text())["metrics"] == doc["metrics"]


def test_threads_option_is_applied_and_recorded(tmp_path):
    out = tmp_path / "runs"
    result = invoke("--threads", "1", "train", "--dataset", "synthetic", "--model", "als", "--out", out, *TINY[:6])
    assert result.exit_code == 0, result.output
    run = only_run(out)
    doc = json.loads((run / "results.json").read_text())
    assert doc["threads"] == 1 and doc["config"]["threads"] == 1
    assert "Thread budget: 1 of" in (run / "report.md").read_text()


def test_audit_report_opens_with_the_risk_summary(audit_run):
    doc = json.loads((audit_run / "results.json").read_text())
    assert audit_run.name.endswith("-audit-synthetic-bpr")
    assert [s["title"] for s in doc["sections"]][:3] == ["Answer", "Risk summary", "Data and model"]
    answer = doc["sections"][0]["text"]
    assert "Data: synthetic, " in answer and " users x " in answer and "the target trained on " in answer, answer
    risks = doc["tables"]["risk_summary"]
    assert risks["columns"] == ["attack", "metric", "value [95% CI]", "baseline (name)", "margin [95% CI]", "verdict", "sample"]
    assert [row[1] for row in risks["rows"]][:2] == ["Recall@10", "NDCG@10"]  # utility first, then attack sections
    recall, blind = risks["rows"][0][2:4]
    assert float(recall.split(" ")[0]) == pytest.approx(doc["metrics"]["utility/recall@10"], abs=1e-4)
    assert blind.endswith("(a random ranking (expectation))") and 0 < float(blind.split(" ")[0]) < 1
    attacks = {row[0] for row in risks["rows"]}
    assert any("membership" in a for a in attacks), attacks  # attack sections add their own rows
    html = (audit_run / "report.html").read_text()
    assert html.count("data:image/png;base64,") == len(doc["figures"]) >= 2
    assert "Risk summary" in html


def test_report_rerenders_from_results_json(audit_run):
    html = (audit_run / "report.html").read_text()
    (audit_run / "report.html").unlink()
    (audit_run / "report.md").unlink()
    result = invoke("report", audit_run)
    assert result.exit_code == 0, result.output
    assert (audit_run / "report.html").read_text() == html
    assert (audit_run / "report.md").is_file()


def test_bad_config_is_one_line_and_writes_nothing(tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text("study: train\nmodle: {name: bpr}\n")
    out = tmp_path / "runs"
    result = invoke("run", config, "--out", out)
    assert_one_line_error(result, f"{config}:2", "unknown key 'modle'", "allowed keys:")
    assert not out.exists()


def test_unknown_study_and_section_options_are_config_errors(tmp_path):
    config = tmp_path / "s.yaml"
    config.write_text("study: nosuch\n")
    assert_one_line_error(invoke("run", config, "--out", tmp_path / "o"), "unknown study 'nosuch'", "audit", "exposure", "train")
    result = invoke("audit", "--out", tmp_path / "o", "--set", "study_options.utility.kk=3")
    assert_one_line_error(result, "unknown key 'kk' in study_options.utility; allowed keys: k")
    assert not (tmp_path / "o").exists()


def test_missing_data_file_is_one_line(tmp_path):
    missing = tmp_path / "nowhere" / "ratings.csv"
    result = invoke("train", "--dataset", missing, "--out", tmp_path / "runs")
    assert_one_line_error(result, str(missing), "not found")
    assert not (tmp_path / "runs").exists()


def test_debug_shows_the_exception(tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text("modle: 1\n")
    result = invoke("--debug", "run", config)
    assert isinstance(result.exception, ConfigError)
    assert result.exit_code == 1


def test_datasets_download_offline_is_one_line_error(tmp_path, monkeypatch):
    """Without a network the download command names where to put the files and exits 2."""
    from typer.testing import CliRunner

    from recprivacy.cli import app
    from recprivacy.data.loaders import download

    real_fetch = download._fetch

    def offline(url, target, name, timeout):
        real_fetch("http://127.0.0.1:9/ml-100k.zip", target, name, 2.0)

    monkeypatch.setattr(download, "_fetch", offline)
    monkeypatch.setenv("RECPRIVACY_CACHE", str(tmp_path))
    result = CliRunner().invoke(app, ["datasets", "download", "ml-100k"])
    assert result.exit_code == 2
    assert "could not download ml-100k" in result.output and str(tmp_path) in result.output
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------- issue 29: outputs, staging, small data, progress


@pytest.mark.parametrize("command", ["train", "audit", "run"])
def test_out_that_is_a_file_is_refused_before_any_work(command, tmp_path, monkeypatch):
    """The error comes before the first progress line: nothing was loaded or trained."""
    monkeypatch.delenv("RECPRIVACY_QUIET")
    taken = tmp_path / "taken"
    taken.write_text("keep me\n")
    config = tmp_path / "train.yaml"
    config.write_text("study: train\n")
    args = [config] if command == "run" else []
    assert_one_line_error(invoke(command, *args, "--out", taken, *TINY), f"--out {taken}: is an existing file")
    assert taken.read_text() == "keep me\n"


def test_out_inside_the_dataset_folder_is_refused(tmp_path, monkeypatch):
    monkeypatch.delenv("RECPRIVACY_QUIET")
    data = tmp_path / "data"  # a dataset folder (RecBole atomic files); beside a file input is a normal output
    data.mkdir()
    (data / "data.inter").write_text("user_id:token\titem_id:token\n1\t1\n1\t2\n2\t1\n2\t2\n")
    result = invoke("audit", "--dataset", data, "--out", data / "runs")
    assert_one_line_error(result, "is inside the input", str(data))
    assert [p.name for p in data.iterdir()] == ["data.inter"]


def test_next_run_removes_a_dead_writers_staging_folder_and_keeps_a_live_one(tmp_path):
    from recprivacy.io import staging_folder

    out = tmp_path / "runs"
    out.mkdir()
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    own = staging_folder(out, "20260101-000000-killed")
    dead = out / own.name.replace(f"-{os.getpid()}-", f"-{child.pid}-")
    live = out / own.name.replace("killed", "writing")
    for folder in (dead, live):
        folder.mkdir()
        (folder / "results.json").write_text("{}")
    assert_one_line_error(invoke("report", dead), "staging folder")
    result = invoke("train", "--out", out, *TINY)
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in out.iterdir())
    assert dead.name not in names and live.name in names
    assert len(names) == 2 and names[1].endswith("-train-synthetic-bpr")


def test_audit_on_a_small_catalogue_fits_its_list_lengths(tmp_path):
    """90 items: the membership attack's default k = 100 cannot fit; the audit runs with the
    longest list that fits and says so, while an explicit k that does not fit is refused."""
    small = ["--set", "dataset.options.n_users=200", "--set", "dataset.options.n_items=90",
             "--set", "dataset.options.n_interactions=5000", "--set", "model.params.n_epochs=3",
             "--set", "study_options.sections=[utility,membership]"]  # fmt: skip
    result = invoke("audit", "--out", tmp_path / "runs", *small)
    assert result.exit_code == 0, result.output
    doc = json.loads((only_run(tmp_path / "runs") / "results.json").read_text())
    (section,) = [s for s in doc["sections"] if s["title"].startswith("Membership")]
    assert "fitted to the data (the default 100 does not fit: the catalogue has 90 items" in section["text"]
    assert 0.0 <= doc["metrics"]["membership/served/mlp/auc"] <= 1.0
    k = doc["config"]["study_options"]["membership"]["k"]  # the saved config holds the length it ran with
    assert k < 90 and f"`k` = {k}, fitted to the data" in section["text"]
    refused = invoke("audit", "--out", tmp_path / "again", *small, "--set", "study_options.membership.k=96")
    assert_one_line_error(refused, "study_options.membership.k=96 does not fit the data", "90 items")
    assert not (tmp_path / "again").exists()


def test_progress_lines_on_stderr_when_not_a_terminal(tmp_path, monkeypatch):
    monkeypatch.delenv("RECPRIVACY_QUIET")
    result = invoke("train", "--out", tmp_path / "runs", *TINY)
    assert result.exit_code == 0, result.output
    lines = result.stderr.strip().splitlines()
    assert lines and all(line.startswith("[recprivacy +") for line in lines), result.stderr
    text = "\n".join(lines)
    for stage in ("run train-synthetic-bpr", "load data: synthetic", "split: 80 users x 120 items", "| 0/3 | ETA unknown] fit: bpr on",
                  "| 1/3 | ETA ", "evaluate: full ranking", "| 2/3 | ETA ", "write the run folder"):  # fmt: skip
        assert stage in text, text
    assert "epoch" not in text
    assert "[recprivacy +" not in result.stdout
    verbose = invoke("--verbose", "train", "--out", tmp_path / "verbose", *TINY)
    assert "BPRMF: epoch 3/3" in verbose.stderr, verbose.stderr


def test_audit_seeds_option_sets_the_membership_seeds(monkeypatch):
    import recprivacy.cli as cli

    seen = {}
    monkeypatch.setattr(cli, "_execute", lambda config, out: seen.setdefault("config", config))
    result = runner.invoke(cli.app, ["audit", "--seeds", "3"])
    assert result.exit_code == 0, result.output
    assert seen["config"].study_options["membership"]["seeds"] == 3
    assert runner.invoke(cli.app, ["audit", "--seeds", "0"]).exit_code == 2  # at least one seed


def test_version_prints_the_installed_version():
    from importlib.metadata import version

    result = invoke("--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"recprivacy {version('recprivacy')}"


def test_audit_sections_runs_only_the_sections_named(tmp_path):
    result = invoke("audit", "--sections", "utility,attribute", "--out", tmp_path / "runs", *TINY)
    assert result.exit_code == 0, result.output
    doc = json.loads((only_run(tmp_path / "runs") / "results.json").read_text())
    assert {r["section"] for r in doc["verdicts"]} == {"utility", "attribute"}
    assert doc["config"]["study_options"]["sections"] == ["utility", "attribute"]


def test_audit_help_groups_its_options_and_shows_examples():
    result = runner.invoke(app, ["audit", "--help"], env={"COLUMNS": "120"})
    assert result.exit_code == 0
    for text in ("Built-in target", "Your own system", "Attacks and output", "Examples:", "lightgcn", "synthetic_release"):
        assert text in result.stdout, text


@pytest.mark.parametrize("columns", ["60", "100"])
def test_a_piped_table_respects_columns(tmp_path, columns):
    """Off a terminal a table is 150 columns wide unless COLUMNS says otherwise (issue 48)."""
    wide = runner.invoke(app, ["datasets", "list", "--data-dir", str(tmp_path)], env={"COLUMNS": ""})
    narrow = runner.invoke(app, ["datasets", "list", "--data-dir", str(tmp_path)], env={"COLUMNS": columns})
    assert wide.exit_code == narrow.exit_code == 0, wide.output + narrow.output
    assert max(map(len, wide.stdout.splitlines())) > int(columns)  # the rows would not fit without it
    assert max(map(len, narrow.stdout.splitlines())) <= int(columns)
