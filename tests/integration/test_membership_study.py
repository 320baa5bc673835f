"""The ``membership`` study end to end on small synthetic data: every experiment of paper 001
renders its tables and figures, and bad options fail with one line before any work."""

import json

import numpy as np
import pytest

from recprivacy.attacks.membership import save_item_vectors
from recprivacy.config import load_config
from recprivacy.errors import ConfigError, DataError
from recprivacy.experiments import run_config, run_study

SMALL = {
    "name": "membership-small",
    "study": "membership",
    "seed": 0,
    "dataset": {"name": "synthetic", "options": {"n_users": 180, "n_items": 150, "n_interactions": 9000}},
    "study_options": {
        "experiments": ["hit_rate", "assumption1", "assumption2", "assumption3", "kmeans", "sweep_k", "sweep_l",
                        "weighting", "mimi", "shadow_size", "features", "defense"],
        "k": 20, "n_factors": 8, "ks": [10, 20], "ls": [4, 8], "mimi_values": [10],
        "shadow_fractions": [1.0, 0.8], "n_seeds": 2, "feature_methods": ["origin", "concat10", "hadamard", "similarity"],
        "model_params": {"lfm": {"n_epochs": 5}, "neumf": {"n_epochs": 2}},
        "attack_params": {"mlp": {"n_epochs": 5}},
    },
}  # fmt: skip


def test_every_experiment_renders(tmp_path):
    results, run_dir = run_config(load_config(base=SMALL), tmp_path)
    titles = [s.title for s in results.sections]
    for start in ("Table 2", "Figure 3", "Tables 3-5", "Figure 6", "Tables 6-7", "Figure 8a", "Figure 8b", "Figure 8c",
                  "Figure 9", "Section 3.4", "Figure 10", "Figures 12-13", "Data partition", "All settings"):
        assert any(t.startswith(start) for t in titles), start
    grid = results.tables["membership-assumption2-synthetic"]
    assert grid.columns[:4] == ["shadow \\ target", "itemcf ROC AUC", "itemcf bal. acc.", "itemcf paper"]
    assert len(grid.rows) == 3
    defense = results.tables["membership-defense"]
    assert "ROC AUC after (both)" in defense.columns
    # each metric is a mean over the two seeds, with its spread
    assert results.metrics["assumption1/SISI/auc"] > 0.5
    assert "assumption1/SISI/auc_sd" in results.metrics
    assert results.metrics["defense/SISI/hr_members_after"] == results.metrics["defense/SISI/hr_members_before"]
    assert {"lab:fit:itemcf", "lab:fit:lfm", "lab:fit:neumf", "lab:attack_fit"} <= set(results.timings)
    assert (run_dir / "figures" / "membership-heatmap-assumption3.png").is_file()
    assert (run_dir / "figures" / "membership-embedding-SISI-after.png").is_file()
    doc = json.loads((run_dir / "results.json").read_text())
    assert doc["seeds"]["seed1"] == 1


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"attack": "Perceptronn"}, "study_options.attack: unknown attack model 'Perceptronn'"),
        ({"algorithms": ["itemcf", "svd"]}, "study_options.algorithms: unknown model 'svd'"),
        ({"experiments": ["assumption4"]}, "study_options.experiments.0"),
        ({"model_params": {"lfm": {"n_epoch": 3}}}, "'n_epoch' is not a parameter"),
        ({"defense": {"alpha": 2}}, "study_options.defense.alpha"),
    ],
)
def test_bad_options_are_one_line_errors(options, message):
    config = load_config(base={**SMALL, "study_options": options})
    with pytest.raises(ConfigError, match=message) as err:
        run_study(config)
    assert "\n" not in str(err.value)


def test_k_larger_than_the_catalogue_fails_clearly():
    config = load_config(base={**SMALL, "study_options": {"k": 500, "model_params": SMALL["study_options"]["model_params"]}})
    with pytest.raises(ConfigError, match=r"k=500 is larger than the catalogue"):
        run_study(config)


def test_an_item_vector_file_that_misses_items_fails_clearly(tmp_path):
    path = save_item_vectors(tmp_path / "vectors.tsv", np.ones((10, 8)), list(range(1, 11)))
    options = {"vector_files": {"synthetic": str(path)}, "k": 20, "model_params": SMALL["study_options"]["model_params"]}
    config = load_config(base={**SMALL, "study_options": options})
    with pytest.raises(DataError, match=r"vectors.tsv: no vector for \d+ of the \d+ catalogue items \(first: 11, "):
        run_study(config)
