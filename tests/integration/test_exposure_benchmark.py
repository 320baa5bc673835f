"""``benchmarks/exposure.py`` runs the study's own cells into its flat runs file: a resumed mode
runs only the missing cells and writes the same rows, the rows keep what the paired judgement
needs, and the summary of the committed records written before that says what is missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from recprivacy.experiments.exposure.protection import NO_REFERENCE, NOT_JUDGED

ROOT = Path(__file__).resolve().parents[2]
#: the smoke-synthetic workload shrunk to a few seconds per cell
TINY = ["dataset.options.n_users=60", "dataset.options.n_items=150", "dataset.options.n_interactions=2400",
        "model.params.n_epochs=2", "study_options.max_pairs_per_user=6", "study_options.attacker.dim=16",
        "study_options.attacker.n_epochs=2", "study_options.protection.selections=[random]",
        "study_options.protection.replacements=[uniform]", "study_options.protection.ratios=[0.0,0.5]",
        "study_options.protection.attacker=mean+point"]  # fmt: skip
#: the floor, and random/uniform at L = 0 and 0.5 with the frozen and the adaptive attacker
N_ROWS = 1 + 2 * 2
COST = ("wall_s", "cpu_s", "date", "peak_rss_mb")


@pytest.fixture
def bench(benchmark_script, tmp_path, monkeypatch):
    module = benchmark_script("exposure")
    monkeypatch.setattr(module, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(module, "OVERRIDES", list(TINY))
    return module


def test_a_resumed_protection_run_writes_the_rows_of_the_whole_one(bench, tmp_path):
    whole, cut = tmp_path / "whole.jsonl", tmp_path / "cut.jsonl"
    bench.run_cells("protection", ["smoke-synthetic"], None, whole, resume=True, only=None)
    records = bench.load_records(whole)
    assert len(records) == N_ROWS and all(len(r["result"]["row"]["pair_recall"]) == r["result"]["row"]["n_pairs"] for r in records)
    cut.write_text("".join(whole.read_text().splitlines(keepends=True)[:2]))  # the floor and the clean frozen row
    bench.run_cells("protection", ["smoke-synthetic"], None, cut, resume=True, only=None)
    resumed = bench.load_records(cut)
    assert [{k: v for k, v in r.items() if k not in COST} for r in resumed] == [{k: v for k, v in r.items() if k not in COST} for r in records]
    text = "\n".join(bench.summary(resumed))
    assert any(word in text for word in ("reduces Rec*@10", "no measurable change", "backfires", "not enough users"))
    assert NOT_JUDGED not in text


def test_the_summary_of_protection_records_without_per_pair_recalls_says_they_are_not_judged(bench):
    records = bench.load_records(ROOT / "benchmarks" / "results" / "exposure_ml1m_protection.jsonl")
    text = "\n".join(bench.summary(records))
    frozen, adaptive = [line for line in text.splitlines() if line.startswith("| random | uniform | 0.4000 |")]
    assert frozen.endswith(f"| {NOT_JUDGED} |")
    assert adaptive.endswith(f"| {NO_REFERENCE} |")  # these records hold no adaptive random/uniform row at L = 0
    assert "Rec* falls as L grows (frozen attacker), every strategy | yes" in text  # the checks still read the rows
