"""RESULTS.md is generated: ``benchmarks/results.py`` rebuilds it from the committed records byte for
byte, and a headline row carries our value, its interval, the paper's number and the record's link."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "results.py"


@pytest.fixture(scope="module")
def results(benchmark_script):
    return benchmark_script("results")


def test_committed_results_md_is_what_the_records_give(tmp_path):
    out = tmp_path / "RESULTS.md"
    run = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    assert out.read_bytes() == (ROOT / "RESULTS.md").read_bytes(), "RESULTS.md is stale: run `make results`"


def summary_entry(algorithm: str, protocol: str, kind: str, name: str, auc: tuple[float, float, float]) -> dict:
    value, low, high = auc
    return {"algorithm": algorithm, "protocol": protocol, "kind": kind, "name": name, "seeds": 5,
            "auc": {"value": value, "low": low, "high": high}, "tpr@1%fpr": {"value": 0.1}}


#: per-seed ROC AUC of each attack and baseline (two seeds), hand-picked for the expected rows below
SEEDS = {("served", "attack", "lira"): (0.84, 0.86), ("served", "output statistic", "popular_overlap"): (0.65, 0.67),
         ("served", "baseline", "history_length"): (0.54, 0.56), ("paper", "attack", "mlp"): (0.96, 0.98),
         ("paper", "output statistic", "popular_overlap"): (1.0, 1.0), ("paper", "baseline", "history_length"): (0.45, 0.47)}


def seed_records(algorithm: str = "itemcf") -> list[dict]:
    return [{"seed": seed, "algorithm": algorithm, "protocol": protocol, "kind": kind, "name": name, "auc": {"value": v}}
            for (protocol, kind, name), values in SEEDS.items() for seed, v in enumerate(values)]  # fmt: skip


def write_membership(folder: Path) -> None:
    summary = [summary_entry("itemcf", "served", "attack", "lira", (0.85, 0.80, 0.90)),
               summary_entry("itemcf", "served", "trivial", "popular_overlap", (0.66, 0.60, 0.71)),
               summary_entry("itemcf", "paper", "attack", "mlp", (0.97, 0.95, 0.99)),
               summary_entry("itemcf", "paper", "trivial", "popular_overlap", (1.0, 1.0, 1.0))]
    meta = {"seeds": 5, "references": 8, "date": "2026-01-01", "machine": "test"}
    (folder / "membership_protocols.json").write_text(json.dumps({"meta": meta, "summary": summary, "records": seed_records()}))
    main = {"source": "hand-made", "date": "2026-01-01", "machine": "test", "commit": "abc1234", "command": "none",
            "dataset": "ml-1m", "assumption": "I", "target": "lfm", "seeds": 5, "roc_auc": {"mean": 0.9, "sd": 0.01},
            "balanced_accuracy": 0.8}
    (folder / "membership_paper_main.jsonl").write_text(json.dumps(main) + "\n")
    common = {"source": "hand-made", "date": "2026-01-01", "machine": "test", "commit": "abc1234", "command": "none"}
    extended = [{**common, "table": "Assumption II", "row": {"dataset": "ml-1m"}, "values": {"ROC AUC": 0.98, "balanced accuracy": 0.9},
                 "paper": {"id": "001", "columns": {"balanced accuracy": {"cells": [["Table 5", "L", "L"]]}}}},
                {**common, "table": "Popularity randomization", "row": {"targets": "LFM and NCF, all 4 datasets"},
                 "values": {"ROC AUC": {"low": 0.15, "high": 0.35}, "ROC AUC, decision flipped": {"low": 0.65, "high": 0.85},
                            "balanced accuracy": {"low": 0.42, "high": 0.51}},
                 "paper": {"id": "001", "columns": {"balanced accuracy": {"cells": [["Figure 12", "ml-1m/L", "alpha=0.1"]]}}}},
                {**common, "table": "Popularity randomization", "row": {"targets": "LFM and NCF, MovieLens"},
                 "values": {"ROC AUC": {"low": 0.93, "high": 0.99}}}]
    (folder / "membership_paper_extended.jsonl").write_text("".join(json.dumps(r) + "\n" for r in extended))


def test_a_headline_row_shows_value_interval_paper_and_link(results, tmp_path):
    write_membership(tmp_path)
    lines = results.membership(tmp_path).splitlines()
    main, served, paper = [line for line in lines if line.startswith(("| ml-1m, Assumption I, ", "| ml-100k, itemcf"))]
    # the paper's LFM target under Assumption I on ml-1m (Table 5, row and column L) is 0.871, a balanced accuracy
    assert main == ("| ml-1m, Assumption I, lfm target: ROC AUC of the paper's MLP attack | 0.900 | ± 0.010 sd over 5 seeds "
                    "| 0.871 (Table 5, ml-1m, balanced accuracy) | balanced accuracy 0.800; paper protocol, where a popularity "
                    "statistic without training matches the attack (ml-100k rows) "
                    "| [membership_paper_main.jsonl](benchmarks/results/membership_paper_main.jsonl) |")
    link = "[membership_protocols.json](benchmarks/results/membership_protocols.json)"
    # served: LiRA 0.84, 0.86 against the history statistic 0.54, 0.56; margins 0.30, 0.30 (no spread), at 1 - 0.05/2;
    # the mean 0.850 +- t(0.9875, df 1) = 25.45 x sd 0.01414 / sqrt(2) = 0.2545, clipped to [0, 1]
    assert served == ("| ml-100k, itemcf, served protocol: ROC AUC of the best attack (LiRA (online)) | 0.850 | "
                      "[0.595, 1.000] (97.5% t, 2 seeds) | — | leaks against history statistic: number of interactions "
                      f"(0.550), margin +0.300 [+0.300, +0.300] at 97.5% | {link} |")
    # paper: a statistic of the lists is the best attack (1.000 over the MLP's 0.970), the history statistic is below
    # a blind guess, so the blind guess is the baseline
    assert paper == ("| ml-100k, itemcf, paper protocol: ROC AUC of the best attack (output statistic: -overlap with "
                     "adversary's top-k popular) | 1.000 | [1.000, 1.000] (97.5% t, 2 seeds) | — | leaks against a blind "
                     "guess (0.500), margin +0.500 [+0.500, +0.500] at 97.5%; a statistic of the lists is the best attack: "
                     f"the signal is the protocol, not memorisation | {link} |")


def test_an_attack_whose_margin_reaches_zero_is_inconclusive(results):
    records = [{"seed": s, "algorithm": "bpr", "protocol": "served", "kind": kind, "name": name, "auc": {"value": v}}
               for kind, name, values in (("attack", "rmia", (0.50, 0.56)), ("output statistic", "mean_popularity", (0.49, 0.49)),
                                          ("baseline", "history_length", (0.51, 0.51)))
               for s, v in enumerate(values)]  # fmt: skip
    row = results.membership_protocol_rows(records)[0]
    assert row[1] == "0.530" and row[4].startswith("inconclusive against history statistic: number of interactions (0.510)")


def test_a_missing_record_file_is_a_one_line_error(results, tmp_path):
    with pytest.raises(SystemExit, match=r"dipsgnn_table2.jsonl: record file not found"):
        results.dipsgnn(tmp_path)


def test_the_transcribed_headline_rows_read_the_extended_record(results, tmp_path):
    write_membership(tmp_path)
    lines = results.membership(tmp_path).splitlines()
    second, defence = [line for line in lines if line.startswith(("| ml-1m, Assumption II", "| popularity randomization"))]
    # Table 5's L -> L cell is 0.871; Figure 12's ml-1m LFM cell after the defence is 0.500
    assert "| 0.980 | 5 seeds per cell (no interval recorded) | 0.871 | balanced accuracy 0.900 |" in second
    assert defence.startswith("| popularity randomization (α = 0.1), LFM and NCF targets on 4 datasets: balanced accuracy "
                              "of the paper's attack | 0.42-0.51 | range over the 8 targets, 5 seeds each | 0.500 | ")
    assert ("ROC AUC 0.15-0.35 is below a blind guess: the attack's decision points the wrong way (flipped: 0.65-0.85); "
            "a shadow that randomizes too: ROC AUC 0.93-0.99") in defence


def test_a_transcribed_row_shows_each_value_shape_and_the_papers_number_beside_ours(results):
    record = {"row": {"method": "APM"}, "digits": 2,
              "values": {"plain": 0.5, "pair of values": [0.612, 0.4], "mean ± sd": {"mean": 18.914, "sd": 0.236},
                         "range": {"low": 0.39, "high": 0.83}, "mean and range": {"mean": 0.555, "low": 0.39, "high": 0.83},
                         "paired": {"diff": -0.0261, "p": 0.07, "agree": 4, "of": 5}},
              "paper": {"id": "001", "columns": {
                  "plain": {"cells": [["Table 5", "I", "I"], ["Table 5", "L", "L"]], "reduce": "mean", "note": "Table 5"},
                  "elsewhere": {"cells": [["Table 5", "I", "I"], ["Table 5", "N", "N"], ["Table 5", "L", "L"]], "reduce": "range"}}}}
    # Table 5: I -> I 0.998, L -> L 0.871, N -> N 0.998; the mean of the first two is 0.9345
    assert results.transcribed_cells(record) == {
        "method": "APM", "plain": "0.50; paper 0.93 (Table 5)", "pair of values": "0.61 / 0.40", "mean ± sd": "18.91 ± 0.24",
        "range": "0.39-0.83", "mean and range": "0.56 (0.39-0.83)", "paired": "-0.03 (p = 0.07, 4 of 5 seeds)",
        "paper: elsewhere": "0.87-1.00"}


def test_a_paper_cell_missing_from_the_reference_is_a_one_line_error(results):
    with pytest.raises(SystemExit, match=r"paper 001 reference.yaml: no cell \['Table 5', 'X', 'I'\]"):
        results.paper_cell("001", {"cells": [["Table 5", "I", "I"], ["Table 5", "X", "I"]]}, 3)


def test_the_records_readme_lists_every_record_file():
    folder = ROOT / "benchmarks" / "results"
    listed = (folder / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in sorted(folder.iterdir()) if p.name != "README.md" and f"| `{p.name}` |" not in listed]
    assert missing == [], f"benchmarks/results/README.md does not list {missing}"


def test_an_unknown_reduction_of_paper_cells_is_a_one_line_error(results):
    with pytest.raises(SystemExit, match=r"paper 001: reduce 'median' is not one of value, mean, range, list"):
        results.paper_cell("001", {"cells": [["Table 5", "I", "I"]], "reduce": "median"}, 3)
