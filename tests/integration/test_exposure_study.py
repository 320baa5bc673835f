"""The exposure attack and defence end to end: a planted signal the attack must find and the
defence must hide, seeding, the ``exposure`` study on tiny synthetic data (simulated and
logged exposure) and the audit's exposure section."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from recprivacy.attacks.exposure import ExposureAttack, evaluate_baselines
from recprivacy.config import load_config
from recprivacy.data.exposure_pairs import ExposurePairs, split_pairs, user_groups
from recprivacy.defenses.exposure_perturbation import ExposurePerturbation
from recprivacy.errors import ConfigError
from recprivacy.experiments import run_study
from recprivacy.experiments.exposure.options import ExposureOptions
from recprivacy.experiments.exposure.pairs import ExposureData
from recprivacy.experiments.exposure.protection import NOT_JUDGED, judge_rows, prepare_protection, protection_row, protection_settings

N_ITEMS = 60
SMALL = {"dim": 32, "n_heads": 2, "n_epochs": 25, "patience": 25, "batch_size": 100}


def planted_pairs(n_users: int = 300, per_user: int = 4, seed: int = 0) -> ExposurePairs:
    """Slates that show item ``b + 30`` for each of the 5 past clicks ``b < 30``, plus 5 random
    items from the upper half: the clicks are recoverable from the slate alone."""
    rng = np.random.default_rng(seed)
    n = n_users * per_user
    hist = np.argsort(rng.random((n, 30)), axis=1)[:, :5]
    noise = 30 + np.argsort(rng.random((n, 30)), axis=1)[:, :5]
    slates = np.concatenate([hist + 30, noise], axis=1)
    users = np.repeat(np.arange(n_users), per_user)
    log = sp.csr_matrix((np.ones(n * 15), (np.repeat(users, 15), np.c_[hist, slates].ravel())), shape=(n_users, N_ITEMS))
    log.data[:] = 1.0
    return ExposurePairs(users, hist, slates, log, log, n_users, N_ITEMS, name="planted")


@pytest.fixture(scope="module")
def planted() -> dict[str, ExposurePairs]:
    pairs = planted_pairs()
    return split_pairs(pairs, user_groups(np.unique(pairs.users), pairs.n_users, seed=0))


@pytest.fixture(scope="module")
def fitted(planted: dict[str, ExposurePairs]) -> ExposureAttack:
    return ExposureAttack("mean", "point", seed=0, **SMALL).fit(planted["train"], planted["valid"])


def test_attack_recovers_a_planted_signal_far_above_the_baselines(fitted, planted) -> None:
    scores = fitted.evaluate(planted["test"], (5, 10))
    baselines = evaluate_baselines(fitted.vocab_, planted["train"], planted["test"], (5, 10))
    assert scores["recall@10"] > 0.7
    assert baselines["popularity"]["recall@10"] < 0.45 and baselines["exposed"]["recall@10"] < 0.45
    assert scores["n_pairs"] == len(planted["test"]) and scores["n_dropped"] == 0
    assert fitted.history_.best_epoch >= 0 and fitted.history_.valid


def test_uniform_perturbation_hides_the_planted_signal(fitted, planted) -> None:
    everyone = planted_pairs()
    rec = []
    for ratio in (0.0, 0.4, 0.8):
        perturbed = ExposurePerturbation(ratio, seed=1).fit(everyone).perturb(planted["test"])
        rec.append(fitted.evaluate(perturbed, (10,), oov="token")["recall@10"])
    assert rec[0] > rec[1] > rec[2]


def test_protection_pipeline_attacks_the_perturbed_slates(fitted, planted) -> None:
    """The study's protection step on the planted signal: the frozen attacker sees slates
    with ceil(N L) positions replaced (the rest unchanged), so Rec* falls with L, towards the
    no-information floor, always over the same test pairs."""
    everyone = planted_pairs()
    data = ExposureData(everyone, {}, "impressions")
    options = ExposureOptions(protection={"selections": ["random"], "replacements": ["uniform"], "ratios": [0.0, 0.2, 0.6], "adaptive": []})
    seen = []
    original = ExposureAttack.evaluate
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ExposureAttack, "evaluate", lambda self, pairs, *a, **k: seen.append(pairs.slates) or original(self, pairs, *a, **k))
        shared = prepare_protection(options, data, planted, attacker=fitted)
        floor, *rows = [protection_row(options, data, planted, shared, s) for s in protection_settings(options)]
    rec = [r["recall@10"] for r in rows]
    assert rec[0] > rec[1] > rec[2] > floor["recall@10"] and {r["n_pairs"] for r in rows} == {len(planted["test"])}
    judged = [r["change vs L = 0"] for r in judge_rows([floor, *rows])]
    assert judged[1] == "reference" and all(j.startswith("reduces Rec*@10") for j in judged[2:] + judged[:1])
    unrecorded = [{k: v for k, v in r.items() if k != "pair_recall"} for r in (floor, *rows)]  # records before they were kept
    assert [r["change vs L = 0"] for r in judge_rows(unrecorded)] == [NOT_JUDGED, "reference", NOT_JUDGED, NOT_JUDGED]
    clean = planted["test"].slates
    for slates, m in zip(seen[4::2], (2, 6)):  # clean and floor come first, then one evaluation per candidate mode
        assert ((slates != clean).sum(axis=1) <= m).all() and (slates != clean).sum(axis=1).mean() > m - 0.5


def test_same_seed_same_numbers(planted) -> None:
    runs = [ExposureAttack("att", "gru", seed=3, **{**SMALL, "n_epochs": 2}).fit(planted["train"]).evaluate(planted["test"])
            for _ in range(2)]  # fmt: skip
    assert runs[0] == runs[1]


TINY_STUDY = {
    "name": "exposure-tiny",
    "study": "exposure",
    "noise": "simulation",  # protection draws repeat, so the orderings checked below are not left to chance
    "dataset": {"name": "synthetic", "options": {"n_users": 60, "n_items": 150, "n_interactions": 2400, "seed": 0}},
    "model": {"name": "sasrec", "params": {"hidden": 16, "n_blocks": 1, "n_epochs": 2, "eval_every": 1}},
    "study_options": {
        "max_pairs_per_user": 6,
        "experiments": ["attack", "slate_sweep", "protection"],
        "encoders": ["mean", "att"],
        "decoders": ["point", "transformer"],
        "slate_sizes": [5, 10],
        "attacker": {"dim": 16, "n_epochs": 2, "patience": 1},
        "protection": {"selections": ["random", "dissimilar"], "replacements": ["uniform", "batch_popularity"],
                       "ratios": [0.0, 0.5], "attacker": "mean+point", "embedding_epochs": 1},
    },
}  # fmt: skip


def test_exposure_study_on_tiny_simulated_exposure() -> None:
    results = run_study(load_config(base=TINY_STUDY))
    tables = results.tables
    for name in ("exposure-data", "exposure-attack-all", "exposure-attack-user_log", "exposure-attack-runs",
                 "exposure-slate-sweep", "exposure-protection", "exposure-checks"):  # fmt: skip
        assert name in tables
    assert len(tables["exposure-attack-all"].rows) == 4 + 4  # 4 models, 2 baselines at k and kM
    assert [r[0] for r in tables["exposure-slate-sweep"].rows] == [5, 5, 10, 10]
    assert [r[0] for r in tables["exposure-checks-sweep"].rows] == ["point-wise decoding varies less with N than the sequence decoders"]
    protection = tables["exposure-protection"]
    floor, *curves = protection.rows
    assert floor[2:4] == [1.0, "no-information floor"]
    assert {tuple(r[:2]) for r in curves} == {(s, r) for s in ("random", "dissimilar") for r in ("uniform", "batch_popularity")}
    assert any(r[3] == "adaptive" for r in protection.rows)  # random/uniform is adaptive by default
    for value in (r[4] for r in protection.rows):
        assert 0.0 <= value <= 1.0
    assert 0.0 <= results.metrics["exposure/att+transformer/all/recall@10"] <= 1.0
    assert results.seeds["split"] == 0 and len(results.figures) >= 5


def test_exposure_study_on_a_logged_exposure() -> None:
    config = {**TINY_STUDY, "study_options": {"source": "impressions", "max_pairs_per_user": 5, "experiments": ["attack"],
                                              "encoders": ["max"], "decoders": ["lstm"], "attacker": {"dim": 16, "n_epochs": 1}}}  # fmt: skip
    results = run_study(load_config(base=config))
    data = results.tables["exposure-data"].rows
    assert [r[0] for r in data] == ["train", "valid", "test"] and sum(r[1] for r in data) == 60 * 5  # 5 impressions each
    config["study_options"] = {**config["study_options"], "split": "contiguous", "attacker": {"dim": 16, "n_epochs": 1, "skip": "code"}}
    data = run_study(load_config(base=config)).tables["exposure-data"].rows
    assert [r[1] for r in data] == [240, 30, 30]  # the authors' contiguous blocks of the pairs


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"protection": {"adaptive": ["random/unifrom"]}}, "study_options.protection.adaptive"),
        ({"ks": [5, 20]}, "ks must include 10"),
        ({"source": "mind"}, "source: 'mind' reads the 'mind' dataset"),
    ],
)
def test_bad_study_options_are_one_line_config_errors(option: dict, message: str) -> None:
    config = {**TINY_STUDY, "study_options": {**TINY_STUDY["study_options"], **option}}
    with pytest.raises(ConfigError, match=message):
        run_study(load_config(base=config))


def test_audit_exposure_section_reports_a_risk_row() -> None:
    config = {
        "name": "audit-exposure", "study": "audit",
        "dataset": {"name": "synthetic", "options": {"n_users": 80, "n_items": 120, "n_interactions": 2400}},
        "model": {"name": "bpr", "params": {"n_epochs": 3, "eval_every": 1}},
        "study_options": {"sections": ["exposure"], "exposure": {"n_epochs": 2, "max_pairs_per_user": 5, "dim": 16}},
    }  # fmt: skip
    results = run_study(load_config(base=config))
    (risk,) = results.tables["risk_summary"].rows
    assert risk[0].startswith("exposure leakage") and risk[1] == "Recall@10 (all items)"
    assert risk[3].endswith("guess, 10 items)")  # a k-item guess at the attack's k, never the k*M lists
    assert risk[5].split(" (")[0].split(":")[0] in ("leaks", "inconclusive", "no leak measured", "not enough users to judge")
    assert "exposure-protection" in results.tables and "exposure-privacy-utility" in results.figures
