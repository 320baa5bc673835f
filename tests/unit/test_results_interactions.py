"""RESULTS.md's interaction-level section (issue 51): each target and kind of non-member pair judged over
the seeds from the per-seed records as ``compare.judge`` judges (best attack by mean ROC AUC, strongest
baseline with the blind guess among them, t intervals at the Bonferroni level), checked on hand-computed
records; MINER's published numbers printed beside ours from their own record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

#: per-seed ROC AUC, TPR at 1% FPR and TPR at 5% FPR (None: not resolvable) per (kind, name)
SEEDS = {("hard", "seen_filter"): ((0.80, 0.82, 0.84), (0.10, 0.20, 0.30), (0.3, None, 0.3)),
         ("hard", "list_neighbourhood"): ((0.70, 0.70, 0.70), (0.1, 0.1, 0.1), (0.2, 0.2, 0.2)),
         ("hard", "item_popularity"): ((0.50, 0.50, 0.50), (0.01, 0.01, 0.01), (0.04, 0.04, 0.04)),
         ("hard", "user_history"): ((0.60, 0.61, 0.62), (0.02, 0.02, 0.02), (0.08, 0.08, 0.08)),
         ("easy", "seen_filter"): ((0.70, 0.75, 0.80), (0.1, 0.1, 0.1), (0.2, 0.2, 0.2)),
         ("easy", "list_neighbourhood"): ((0.60, 0.60, 0.60), (0.1, 0.1, 0.1), (0.2, 0.2, 0.2)),
         ("easy", "item_popularity"): ((0.70, 0.70, 0.70), (0.01, 0.01, 0.01), (0.03, 0.03, 0.03)),
         ("easy", "user_history"): ((0.65, 0.65, 0.65), (0.01, 0.01, 0.01), (0.03, 0.03, 0.03))}  # fmt: skip


def _estimate(value: float | None) -> dict:
    return {"value": value, "resolvable": value is not None, "n": 40}


def _write(folder: Path, seeds: int = 3) -> None:
    records = [{"algorithm": "itemcf", "seed": s, "non_members": kind, "name": name,
                "kind": "attack" if name in ("seen_filter", "list_neighbourhood") else "baseline",
                "auc": {"value": auc[s]}, "tpr@1%fpr": _estimate(t1[s]), "tpr@5%fpr": _estimate(t5[s]),
                "positives": 50, "negatives": 40}
               for (kind, name), (auc, t1, t5) in SEEDS.items() for s in range(seeds)]  # fmt: skip
    record = {"dataset": "ml-100k", "targets": {"itemcf": {}}, "command": "python x.py", "date": "2026-01-01T00:00:00",
              "cpu_seconds": 12.0, "machine": {"loadavg_at_end": [1.0, 1.0, 1.0]}, "records": records}
    (folder / "interaction_membership.json").write_text(json.dumps(record))
    context = {"source": "MINER, as quoted", "accuracy": 0.82, "tpr@5%fpr": {"low": 0.15, "high": 0.17}}
    (folder / "interaction_membership_context.json").write_text(json.dumps(context))


def _rows(text: str) -> list[list[str]]:
    return [line.strip("| ").split(" | ") for line in text.splitlines() if line.startswith("| ml-100k") or "MINER (published)" in line]


@pytest.fixture
def rendered(benchmark_script, tmp_path) -> str:
    _write(tmp_path)
    return benchmark_script("results").interaction_membership(tmp_path)


def test_each_kind_is_judged_over_the_seeds_by_hand(rendered):
    hard, easy, miner = _rows(rendered)
    # hard: mean 0.82, half-width t(0.9875, 2) 6.2053 * 0.02 / sqrt(3) = 0.0717; margin over the history baseline
    # (0.61): differences 0.20, 0.21, 0.22, half-width 6.2053 * 0.01 / sqrt(3) = 0.0358
    assert hard[:5] == ["ml-100k", "itemcf", "hard", "seen-item filter", "0.820 [0.748, 0.892]"]
    assert hard[5] == "0.200 [0.000, 0.448]"  # 4.3027 * 0.1 / sqrt(3) = 0.248, clipped at 0
    assert hard[6] == "not resolvable with n = 40"  # one seed could not resolve it
    assert hard[7] == "user's history similarity 0.610; 0.080 (user's history similarity)"
    assert hard[8:] == ["+0.210 [+0.174, +0.246]", "leaks", "50 / 40"]
    # easy: the popularity baseline (0.70) is the strongest; differences 0, 0.05, 0.10 straddle zero
    assert easy[3:5] == ["seen-item filter", "0.750 [0.571, 0.929]"]
    assert easy[7].startswith("item popularity 0.700; 0.050 (blind guess)")  # no baseline beats a blind guess at 5% FPR
    assert easy[8:10] == ["+0.050 [-0.129, +0.229]", "inconclusive"]
    assert miner[3:7] == ["MINER (published)", "— (accuracy 0.82)", "—", "0.15-0.17"]


def test_one_seed_cannot_be_judged_over_seeds(benchmark_script, tmp_path):
    _write(tmp_path, seeds=1)
    with pytest.raises(SystemExit, match="needs at least two"):
        benchmark_script("results").interaction_membership(tmp_path)
