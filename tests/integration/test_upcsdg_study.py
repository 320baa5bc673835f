"""The upcsdg study, the audit's synthetic-release section and `recprivacy synthesize`,
end to end on tiny synthetic data."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from typer.testing import CliRunner

from recprivacy.cli import app
from recprivacy.config import load_config
from recprivacy.data.loaders.lightgcn import load_lightgcn
from recprivacy.data.loaders.recbole import load_recbole
from recprivacy.errors import ConfigError
from recprivacy.experiments import run_config, run_study
from recprivacy.experiments.audit import random_ranking_expectation

TINY_DATA = {"name": "synthetic", "options": {"n_users": 60, "n_items": 90, "n_interactions": 1500, "seed": 0}}
TINY_STUDY = {
    "name": "upcsdg-tiny", "study": "upcsdg", "seed": 0, "dataset": TINY_DATA,
    "model": {"name": "bpr", "params": {"n_epochs": 10, "eval_every": 5}},
    "study_options": {"seeds": [0, 1], "generator": {"n_epochs": 2}, "models": ["bpr", "neumf", "lightgcn"],
                      "downstream": {"bpr": {"n_epochs": 5}, "neumf": {"n_epochs": 2}, "lightgcn": {"n_epochs": 5}},
                      "grid_k": [0.2, 0.8], "grid_gamma": [0.1, 0.9], "ablation_k": [0.2], "membership_list_k": 20},
}  # fmt: skip


@pytest.fixture(scope="module")
def study_run(tmp_path_factory) -> tuple:
    results, folder = run_config(load_config(base=TINY_STUDY), tmp_path_factory.mktemp("runs"))
    return results, folder


def test_tables_follow_the_paper_layout_with_its_numbers(study_run):
    results, folder = study_run
    table2 = results.tables["table2"]
    assert table2.columns[:4] == ["Dataset", "Random PR", "Random Recall", "Random NDCG"]
    assert [row[0] for row in table2.rows] == ["synthetic (ours)", "Office (paper)", "synthetic− (ours)", "Office− (paper)",
                                               "synthetic+ (ours)", "Office+ (paper)"]
    assert table2.rows[1][5] == 0.1254 and table2.rows[5][5] == 0.0878  # BPRMF Recall, Office and Office+
    table3 = results.tables["table3"]
    assert [row[0] for row in table3.rows][-2:] == ["UPC-SDG (ours)", "UPC-SDG (paper, Office)"]
    assert table3.rows[-1][1:4] == [0.0166, 0.0878, 0.0506]
    grid = results.tables["grid"]
    assert [(row[0], row[1]) for row in grid.rows] == [(0.2, 0.1), (0.2, 0.9), (0.8, 0.1), (0.8, 0.9)]
    dropped = [row[grid.columns.index("dropped: no candidate within gamma")] for row in grid.rows]
    assert all(0.0 <= share <= 1.0 for share in dropped) and dropped[2] >= dropped[3]  # a tight cap drops more
    membership = results.tables["membership"]
    assert [row[:2] for row in membership.rows] == [["original", ""], [0.2, 0.1], [0.2, 0.9], [0.8, 0.1], [0.8, 0.9]]
    assert all(0.0 <= row[3] <= 1.0 for row in membership.rows)
    for name in ("fig2_utility", "fig4_similarity", "privacy_utility", "privacy_utility_membership"):
        assert (folder / "figures" / f"{name}.png").stat().st_size > 1000
    assert "Table 2" in (folder / "report.md").read_text()


def test_measurements_cover_every_seed_and_cell(study_run):
    results, _ = study_run
    table = results.tables["measurements"]
    rows = [dict(zip(table.columns, row)) for row in table.rows]
    assert {r["seed"] for r in rows} == {0, 1}
    recovery = [r for r in rows if r["kind"] == "recovery"]
    assert len(recovery) == 2 * 4 * 4  # seeds x cells x attackers
    assert all(0.0 <= r["recall"] <= 1.0 for r in recovery)
    releases = [r for r in rows if r["kind"] == "release"]
    # grid cells (4) + ablation variants at k = 0.2 other than the shared UPC-SDG cell (3), per seed
    assert len(releases) == 2 * (4 + 3)
    assert len([r for r in rows if r["kind"] == "membership"]) == 2 * (1 + 4)
    assert results.seeds["run_0"] == 0 and results.seeds["run_1"] == 1
    for key in ("original/bpr/recall@20", "+/lightgcn/ndcg@20", "UPC-SDG/k=0.8/gamma=0.1/recovery/blind/recall@10",
                "UPC-SDG_r/k=0.2/gamma=0.9/bpr/recall@20", "UPC-SDG/k=0.2/gamma=0.9/mean_f_sim",
                "UPC-SDG/k=0.8/gamma=0.1/share_dropped"):
        assert key in results.metrics and math.isfinite(results.metrics[key])


def test_random_precision_expectation_by_hand():
    def csr(rows: list[list[int]], n: int) -> sp.csr_matrix:
        return sp.csr_matrix((np.ones(sum(map(len, rows))), ([u for u, r in enumerate(rows) for _ in r],
                                                            [i for r in rows for i in r])), shape=(len(rows), n))

    # users with test items: C=4,Tc=2 -> 2*2/(4*2) = 0.5; C=5,Tc=1 -> 0.2; C=4,Tc=1 -> 0.25
    out = random_ranking_expectation(csr([[1, 2], [0], [], [3, 4]], 5), csr([[0], [], [1], [4]], 5), 2)
    assert out["precision"] == pytest.approx((0.5 + 0.2 + 0.25) / 3)


def test_bad_study_options_fail_before_any_work():
    for options, match in (({"grid_k": [0.2, 1.0]}, "strictly between 0 and 1"),
                           ({"generator": {"warp": 1}}, "warp"),
                           ({"generator": {"seed": 3}}, "generator.seed"),
                           ({"models": ["nope"]}, "unknown model")):
        with pytest.raises(ConfigError, match=match):
            run_study(load_config(base={**TINY_STUDY, "study_options": options}))


def test_audit_offers_a_synthetic_release(tmp_path):
    config = load_config(base={"name": "audit-tiny", "study": "audit", "dataset": TINY_DATA,
                               "model": {"name": "bpr", "params": {"n_epochs": 5}},
                               "study_options": {"sections": ["synthetic_release"],
                                                 "synthetic_release": {"k": 0.5, "generator": {"n_epochs": 2}}}})
    results, _ = run_config(config, tmp_path)
    (risk,) = results.tables["risk_summary"].rows
    assert risk[0] == "synthetic release: item recovery" and risk[5].endswith("(k=0.5, γ=0.5)")
    assert risk[3].endswith("(popularity guess, 10 items)") and re.match(r"^\d+ users attacked; 1 seed", risk[6])
    assert "recprivacy synthesize" in next(s.text for s in results.sections if s.title.startswith("Synthetic release"))
    assert "synthetic_release/retention" in results.metrics


runner = CliRunner()
TINY_CLI = ["--set", "dataset.options.n_users=60", "--set", "dataset.options.n_items=90",
            "--set", "dataset.options.n_interactions=1500", "--set", "model.params.n_epochs=3",
            "--set", "study_options.generator.n_epochs=2"]  # fmt: skip


def _pairs(data) -> set[tuple[str, str]]:
    """(user id, item id) pairs as text, the way the CSV files spell them."""
    return set(zip(map(str, data.user_ids[data.users]), map(str, data.item_ids[data.items])))


def test_synthesize_command_releases_only_public_data_within_each_users_gamma(tmp_path):
    prefs = tmp_path / "prefs.csv"
    prefs.write_text("user_id,k,gamma\n3,0.8,0.05\n5,0.5,0.3\n")  # user 3 asks for a tiny cap
    out = tmp_path / "release"
    result = runner.invoke(app, ["synthesize", "--privacy", str(prefs), "--k", "0.25", "--out", str(out), *TINY_CLI],
                           env={"COLUMNS": ""})  # piped without COLUMNS: the summary's rows on one line each
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert f"{out / 'public'}: release this" in text and f"{out / 'private'}: keep, it undoes the protection" in text
    public, private = out / "public", out / "private"
    assert sorted(p.name for p in out.iterdir()) == ["private", "public"]
    assert sorted(p.name for p in public.iterdir()) == ["item_list.txt", "synthetic-upcsdg.inter", "synthetic-upcsdg.item",
                                                        "train.txt", "user_list.txt"]
    summary = json.loads((private / "privacy_summary.json").read_text())
    assert summary["users_with_default_preferences"] == summary["users"] - 2
    assert f"interactions with no candidate within gamma (dropped) │ {summary['dropped_interactions']}" in result.stdout
    ids = {c: str for c in ("user_id", "original_item_id", "replacement_item_id")}
    replaced = pd.read_csv(private / "replacements.csv", dtype=ids)
    dropped = pd.read_csv(private / "dropped.csv", dtype=ids)
    per_user = pd.read_csv(private / "privacy_per_user.csv", dtype=ids).set_index("user_id")
    # every replacement within its user's gamma, the file's own value for users 3 and 5
    assert (replaced["f_sim"] <= replaced["user_id"].map(per_user["gamma"])).all() and len(replaced)
    assert per_user.loc["3", "gamma"] == 0.05 and per_user.loc["5", "gamma"] == 0.3
    assert (replaced.loc[replaced["user_id"] == "3", "f_sim"] <= 0.05).all()
    assert per_user.loc["3", "n_replaced"] + per_user.loc["3", "n_dropped"] == round(0.8 * per_user.loc["3", "n_items"])
    # read every public file back: no removed original (user, item) pair is in any of them
    released = _pairs(load_recbole(public / "synthetic-upcsdg.inter"))
    assert _pairs(load_lightgcn(public)) == released            # train.txt through user_list / item_list
    removed = set(zip(replaced["user_id"], replaced["original_item_id"])) | set(zip(dropped["user_id"], dropped["original_item_id"]))
    assert removed and not removed & released
    assert set(zip(replaced["user_id"], replaced["replacement_item_id"])) <= released
    assert len(released) == summary["synthetic_interactions"] == summary["original_interactions"] - len(dropped)
    for path in public.iterdir():                               # nothing of the private record either
        assert not {"f_sim", "original_item", "replacement", "gamma"} & set(path.read_text().replace("\t", " ").split())


@pytest.mark.parametrize(
    ("args", "fragment"),
    [(["--k", "1.5"], "k: expected a number strictly between 0 and 1"),
     (["--gamma", "0"], "gamma: expected a number strictly between 0 and 1"),
     (["--privacy", "PREFS"], "prefs.csv:2: user '99999' is not a user of synthetic")],
)
def test_synthesize_bad_input_is_one_line(tmp_path, args, fragment):
    prefs = tmp_path / "prefs.csv"
    prefs.write_text("user_id,k\n99999,0.5\n")
    args = [str(prefs) if a == "PREFS" else a for a in args]
    result = runner.invoke(app, ["synthesize", "--out", str(tmp_path / "o"), *args, *TINY_CLI])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0]
    assert not Path(tmp_path / "o").exists()


def _one_seed_run(results, seed: int):
    """The study run as if it had measured ``seed`` alone (its rows and its config)."""
    table = results.tables["measurements"]
    rows = [row for row in table.rows if row[table.columns.index("seed")] == seed]
    config = {**results.config, "study_options": {**results.config["study_options"], "seeds": [seed]}}
    return results.model_copy(update={"config": config, "tables": {"measurements": table.model_copy(update={"rows": rows})}})


def test_runs_of_single_seeds_merge_into_the_multi_seed_result(study_run):
    from recprivacy.experiments.upcsdg import merge_runs

    results, _ = study_run
    merged = merge_runs([_one_seed_run(results, 1), _one_seed_run(results, 0)])
    assert merged.config["study_options"]["seeds"] == [0, 1]
    assert merged.metrics.keys() == results.metrics.keys()
    for key, value in results.metrics.items():
        assert merged.metrics[key] == pytest.approx(value, nan_ok=True), key
    for ours, theirs in zip(merged.tables["grid"].rows, results.tables["grid"].rows, strict=True):
        assert ours == pytest.approx(theirs, nan_ok=True)
    with pytest.raises(ConfigError, match="measured the same seed"):
        merge_runs([_one_seed_run(results, 0), _one_seed_run(results, 0)])
    other = _one_seed_run(results, 1)
    other = other.model_copy(update={"config": {**other.config, "dataset": {**other.config["dataset"], "name": "ml-100k"}}})
    with pytest.raises(ConfigError, match="differ in more than their seeds"):
        merge_runs([_one_seed_run(results, 0), other])
