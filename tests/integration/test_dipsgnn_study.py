"""The ``dipsgnn`` study end to end on tiny synthetic data, its tables and configs, the data
protocol pieces, and the DIPSGNN audit section."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from recprivacy.config import load_config
from recprivacy.data.interactions import Interactions
from recprivacy.data.preprocess import keep_recent
from recprivacy.errors import ConfigError
from recprivacy.experiments import run_study
from recprivacy.experiments.dipsgnn import DIPSGNNStudy, MethodRun, improvement, paper_table2
from recprivacy.experiments.dipsgnn.sequences import held_out_samples, with_star_ratings

ROOT = Path(__file__).resolve().parents[2]
TINY = {
    "name": "dipsgnn-tiny",
    "study": "dipsgnn",
    "noise": "simulation",
    "dataset": {"name": "synthetic", "options": {"n_users": 60, "n_items": 100, "n_interactions": 1800, "seed": 0},
                "preprocessing": {"implicit_threshold": 4, "kcore": 3}},
    "model": {"name": "srgnn", "params": {"hidden": 8, "user_dim": 4, "n_epochs": 2, "batch_size": 50}},
    "study_options": {"seeds": [0, 1], "max_len": 30, "methods": ["SRGNN", "DPMF_exp", "EdgeRand", "DIPSGNN", "DIPSGNN_legacy"],
                      "method_params": {"DPMF_exp": {"n_epochs": 3, "eval_every": 1}},
                      "sweeps": [{"parameter": "n_steps", "values": [1, 2], "methods": ["DIPSGNN"]}]},
}


# --------------------------------------------------------------------------- protocol pieces


def test_keep_recent_keeps_the_latest_rows_of_each_user() -> None:
    data = Interactions(np.array([0, 0, 0, 1, 0, 1]), np.array([1, 2, 3, 4, 5, 6]), 2, 7,
                        timestamps=np.array([5, 1, 3, 2, 4, 1]))
    kept = keep_recent(data, 2)
    assert sorted(zip(kept.users.tolist(), kept.items.tolist())) == [(0, 1), (0, 5), (1, 4), (1, 6)]
    assert kept.provenance[-1] == {"step": "keep_recent", "n": 2, "removed": 2}
    with pytest.raises(ConfigError):
        keep_recent(data, 0)


def test_test_samples_use_the_test_segment_or_the_full_history() -> None:
    train = Interactions(np.zeros(3, int), np.array([1, 2, 3]), 1, 9, timestamps=np.arange(3))
    test = Interactions(np.zeros(2, int), np.array([4, 5]), 1, 9, timestamps=np.arange(3, 5))
    segment = held_out_samples(train, test, "test_segment")
    assert segment.targets().tolist() == [5] and (segment.starts[0], segment.ends[0]) == (3, 4)
    full = held_out_samples(train, test, "full_history")
    assert full.targets().tolist() == [4, 5] and full.starts.tolist() == [0, 0]


def test_star_ratings_are_looked_up_by_original_ids() -> None:
    raw = Interactions(np.array([0, 0, 1]), np.array([0, 1, 1]), 2, 2, ratings=np.array([5.0, 3.0, 4.0]),
                       user_ids=np.array([10, 20]), item_ids=np.array([7, 8]))
    implicit = Interactions(np.array([0]), np.array([0]), 1, 1, ratings=np.ones(1), user_ids=np.array([20]),
                            item_ids=np.array([8]))
    assert with_star_ratings(implicit, raw).ratings.tolist() == [4.0]


def run(seed: int, method: str, value: float) -> MethodRun:
    return MethodRun(method, seed, {"recall@20": value}, {}, 1.0, 1)


def test_improvement_is_relative_to_the_seed_means_with_a_paired_t_test() -> None:
    ours = [run(s, "DIPSGNN", v) for s, v in enumerate([11.0, 12.0, 13.0])]
    base = [run(s, "EdgeRand", v) for s, v in enumerate([10.0, 10.5, 10.5])]
    rel, p = improvement(ours, base, "recall@20")
    assert rel == pytest.approx(100 * (12.0 - 31 / 3) / (31 / 3))
    from scipy.stats import ttest_rel

    assert p == pytest.approx(ttest_rel([11, 12, 13], [10, 10.5, 10.5]).pvalue)


def test_paper_improve_row_re_derives_from_the_paper_table() -> None:
    table = paper_table2("ML-1M")
    recall20 = 100 * (table["DIPSGNN"][0] - table["EdgeRand"][0]) / table["EdgeRand"][0]
    assert recall20 == pytest.approx(19.99, abs=0.01)  # the paper's "Improve" row: 19.99%


# --------------------------------------------------------------------------- the study


@pytest.fixture(scope="module")
def tiny_results():
    return run_study(load_config(base=TINY))


def test_study_writes_table2_privacy_timing_and_sweep(tiny_results) -> None:
    r = tiny_results
    table = r.tables["table2"]
    assert [row[1] for row in table.rows][:5] == ["SR-GNN (no user)", "DPMF_exp", "EdgeRand", "DIPSGNN (noise std sigma)",
                                                  "DIPSGNN, authors' code (std sigma^2, no test noise)"]
    assert table.rows[-1][1] == "Improve (DIPSGNN vs EdgeRand)"
    for method in ("SRGNN", "DIPSGNN", "EdgeRand"):
        assert 0.0 <= r.metrics[f"{method}/recall@20"] <= 100.0
        assert r.metrics[f"{method}/recall@20"] >= r.metrics[f"{method}/recall@10"]
    assert r.metrics["DIPSGNN/epsilon/edges, one forward pass (paper)"] == pytest.approx(5.0)
    assert r.metrics["DIPSGNN_legacy/epsilon/edges, one forward pass (paper)"] > 25
    assert r.metrics["DIPSGNN/epsilon/edges, whole training run"] > 5.0
    guarantees = {(row[0], row[1]) for row in r.tables["privacy"].rows}
    assert ("DPMF_exp", "interactions") in guarantees and ("EdgeRand", "edges, whole training run") in guarantees
    privacy = r.tables["privacy"]
    noise = [row[privacy.columns.index("noise")] for row in privacy.rows]
    assert noise and all(n.startswith("simulation (seeded, not protection)") for n in noise)
    assert r.noise.startswith("simulation (seeded, not protection): seed 0")
    assert len(r.tables["timing"].rows) == 5 and "sweep-n_steps" in r.figures
    assert "sweep/n_steps=2/DIPSGNN/recall@20" in r.metrics


def test_same_config_same_numbers(tiny_results) -> None:
    small = {**TINY, "study_options": {**TINY["study_options"], "methods": ["DIPSGNN"], "sweeps": []}}
    again = run_study(load_config(base=small))
    assert again.metrics["DIPSGNN/recall@20"] == tiny_results.metrics["DIPSGNN/recall@20"]


@pytest.mark.parametrize("path", sorted((ROOT / "configs" / "dipsgnn").glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_configs_validate(path: Path) -> None:
    from recprivacy.config import validate_options
    from recprivacy.experiments.dipsgnn import DIPSGNNOptions

    config = load_config(path)
    assert config.study == "dipsgnn" and config.model.name == "srgnn"
    validate_options(DIPSGNNOptions, config.study_options)


@pytest.mark.parametrize("bad, message", [({"eps2": 0}, "eps2"), ({"delta": 1.5}, "delta"), ({"C": -1}, "C"),
                                          ({"methods": ["DIPSGNN", "HRNN"]}, "HRNN")])
def test_bad_study_options_fail_before_any_data_is_loaded(bad: dict, message: str) -> None:
    config = load_config(base={**TINY, "dataset": {"name": "no-such-dataset"},
                               "study_options": {**TINY["study_options"], **bad}})
    with pytest.raises(ConfigError, match=message):
        run_study(config)


# --------------------------------------------------------------------------- audit


def audit(model: str, params: dict) -> object:
    return run_study(load_config(base={
        "name": "audit-seq", "study": "audit",
        "dataset": {"name": "synthetic", "options": {"n_users": 60, "n_items": 100, "n_interactions": 1800, "seed": 0},
                    "split": {"kind": "temporal", "leave_last": 2}},
        "model": {"name": model, "params": params},
        "study_options": {"sections": ["utility", "dipsgnn"], "dipsgnn": {"n_epochs": 1}},
    }))


def test_audit_offers_dipsgnn_beside_a_sequential_target() -> None:
    r = audit("srgnn", {"hidden": 8, "n_epochs": 1})
    assert "dipsgnn-utility" in r.tables and "dipsgnn-privacy" in r.tables
    labels = [row[0] for row in r.tables["dipsgnn-privacy"].rows]
    assert labels[0] == "target" and "DIPSGNN: edges, whole training run" in labels
    assert r.tables["dipsgnn-privacy"].rows[0][1] is None  # the target has no guarantee
    assert "dipsgnn/recall@10" in r.metrics
    (cost,) = [row for row in r.tables["risk_summary"].rows if row[0].startswith("DIPSGNN utility")]
    assert cost[3].endswith("(the undefended target)") and cost[5] in ("costs", "gains", "no measurable cost")


def test_audit_of_a_non_sequential_target_explains_why_dipsgnn_is_not_offered() -> None:
    r = audit("popularity", {})
    section = next(s for s in r.sections if s.title == "A private alternative: DIPSGNN")
    assert "does not use the order" in section.text and not section.tables


def test_public_study_entry_runs_a_method_as_the_study_does() -> None:
    """``DIPSGNNStudy`` (what the benchmarks call) fits and scores a (method, seed) exactly as
    ``run_study`` does; a sweep point changes the backbone."""
    options = {**TINY["study_options"], "methods": ["DIPSGNN"], "seeds": [0], "sweeps": []}
    config = load_config(base={**TINY, "study_options": options})
    study = DIPSGNNStudy.load(config)
    run = study.run("DIPSGNN", 0)
    results = run_study(config)
    assert run.metrics["recall@20"] == results.metrics["DIPSGNN/recall@20"]
    assert study.default("n_steps") == 1 and study.model("DIPSGNN", 0, ("n_steps", 2)).n_steps == 2
    summary_only = DIPSGNNStudy.load(config, prepare=False)
    with pytest.raises(ConfigError, match="without its data"):
        summary_only.run("DIPSGNN", 0)
