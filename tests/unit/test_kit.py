"""The study kit's parts on hand-made data: measurements, the record store, aggregation,
paper comparison and checks as data."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from recprivacy.errors import DataError
from recprivacy.experiments.kit import (
    Bench,
    Cell,
    CellResult,
    Measurement,
    RecordStore,
    aggregate,
    apply_rules,
    compare,
    load_rules,
    paper_row,
    paper_table,
    paper_value,
    read_rules,
    tally,
    measurements,
)
from recprivacy.experiments.reference import PaperReference


def m(value: float, seed: int, metric: str = "auc", **setting) -> Measurement:
    return Measurement("membership", "smoke", setting or {"code": "SISI"}, metric, value, seed, "ratio")


# ---------------------------------------------------------------------------- measurements


def test_measurement_round_trips_through_json():
    original = Measurement("exposure", "tables", {"k": 20, "defended": True}, "recall", 0.25, 3, "ratio", (0.2, 0.3))
    assert Measurement.from_json(json.loads(json.dumps(original.to_json()))) == original


@pytest.mark.parametrize(("change", "message"), [
    ({"value": "high"}, "value must be a number, got 'high'"),
    ({"seed": 1.5}, "seed must be an integer"),
    ({"interval": [0.1]}, r"interval must be null or \[low, high\]"),
    ({"setting": [1]}, "setting must be a JSON object"),
])  # fmt: skip
def test_malformed_measurement_names_the_field(change, message):
    obj = {**m(0.5, 0).to_json(), **change}
    with pytest.raises(DataError, match=message):
        Measurement.from_json(obj, "records.jsonl:3")


def test_measurements_keep_numbers_and_booleans_only():
    found = measurements("membership", "s", {"code": "SISI"}, 0, {"auc": 0.7, "n_pos": 30, "ok": True, "blind": {"auc": 0.5}})
    assert [(x.metric, x.value) for x in found] == [("auc", 0.7), ("n_pos", 30.0), ("ok", 1.0)]


# ---------------------------------------------------------------------------- aggregation


def test_aggregate_gives_hand_computed_mean_sample_sd_and_t_interval():
    records = [m(0.6, 0), m(0.8, 1), m(0.7, 2), m(0.9, 0, code="MIMI")]
    sisi, mimi = aggregate(records)
    # values 0.6, 0.8, 0.7: mean 0.7; sample sd sqrt((0.01 + 0.01 + 0) / 2) = 0.1;
    # t(0.975, 2 df) = 4.302653 -> half width 4.302653 * 0.1 / sqrt(3) = 0.248414
    assert sisi.setting == {"code": "SISI"} and sisi.n == 3 and sisi.seeds == (0, 1, 2)
    assert sisi.mean == pytest.approx(0.7) and sisi.sd == pytest.approx(0.1)
    assert (sisi.low, sisi.high) == pytest.approx((0.7 - 0.248414, 0.7 + 0.248414), abs=1e-6)
    # one seed: no spread to estimate (NaN, never 0) and a point interval
    assert mimi.mean == 0.9 and math.isnan(mimi.sd) and mimi.low == mimi.high == 0.9


def test_aggregate_by_pools_the_other_setting_keys():
    records = [m(0.5, 0, code="SISI", k=10), m(0.7, 0, code="SISI", k=20), m(0.2, 0, "tpr", code="SISI", k=10)]
    auc, tpr = aggregate(records, by=("code",))
    assert (auc.setting, auc.metric, auc.mean, auc.n) == ({"code": "SISI"}, "auc", pytest.approx(0.6), 2)
    assert auc.sd == pytest.approx(math.sqrt(0.02))
    assert (tpr.metric, tpr.mean, tpr.n) == ("tpr", 0.2, 1)


# ---------------------------------------------------------------------------- the store


class Counting:
    """A grid that records which cells it measured: value = 10 * x + seed."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def prepare(self, group: str) -> int:
        return int(group)

    def measure(self, cell: Cell, seed: int) -> CellResult:
        self.calls.append(cell.key)
        value = 10.0 * cell.setting["x"] + seed
        arrays = {"scores": np.arange(3.0) * value} if cell.setting["x"] == 0 else {}
        return CellResult([Measurement("toy", "count", cell.setting, "value", value, seed)], arrays)


CELLS = [Cell({"x": x, "seed": s}, str(s)) for s in (0, 1) for x in (0, 1, 2)]


def test_a_rerun_skips_stored_cells(tmp_path):
    grid = Counting()
    first = Bench(RecordStore(tmp_path)).run(grid, CELLS)
    assert len(grid.calls) == 6
    again = Counting()
    second = Bench(RecordStore(tmp_path)).run(again, CELLS)
    assert again.calls == []
    assert {k: r.values() for k, r in second.items()} == {k: r.values() for k, r in first.items()}
    assert np.array_equal(second[CELLS[3].key].arrays["scores"], np.arange(3.0) * 1.0)


def test_a_truncated_last_line_is_rerun_and_cut_off(tmp_path):
    Bench(RecordStore(tmp_path)).run(Counting(), CELLS)
    path = tmp_path / "records.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:4]) + lines[4][: len(lines[4]) // 2])  # a crash in the middle of line 5
    grid = Counting()
    results = Bench(RecordStore(tmp_path)).run(grid, CELLS)
    assert grid.calls == [CELLS[4].key, CELLS[5].key]
    assert [json.loads(line)["cell"] for line in path.read_text().splitlines()] == [dict(c.setting) for c in CELLS]
    assert results[CELLS[5].key].values() == {"value": 21.0}


def test_a_broken_line_in_the_middle_names_file_and_line(tmp_path):
    Bench(RecordStore(tmp_path)).run(Counting(), CELLS[:3])
    path = tmp_path / "records.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], "{not json", lines[2]]) + "\n")
    with pytest.raises(DataError, match=r"records.jsonl:2: unreadable line"):
        RecordStore(tmp_path).load()


def test_a_store_in_memory_also_skips_finished_cells():
    store, grid = RecordStore(), Counting()
    Bench(store).run(grid, CELLS[:2])
    Bench(store).run(grid, CELLS)
    assert len(grid.calls) == 6 and store.path is None


def test_a_cell_alone_is_its_own_group():
    cells = [Cell.alone({"x": x, "seed": 0}) for x in (0, 1)]
    assert [c.group for c in cells] == [c.key for c in cells] and cells[0].group != cells[1].group


def test_details_round_trip_in_the_record_line_and_a_bad_one_names_it(tmp_path):
    cell, details = Cell({"x": 0, "seed": 0}), {"statement": {"epsilon": None, "notes": ["no formal guarantee"]}}
    RecordStore(tmp_path).add(cell, CellResult([], details=details))
    RecordStore(tmp_path).add(Cell({"x": 1, "seed": 0}), CellResult([]))
    loaded = RecordStore(tmp_path).load()
    assert loaded[cell.key].details == details and loaded[Cell({"x": 1, "seed": 0}).key].details == {}
    path = tmp_path / "records.jsonl"
    assert "details" not in path.read_text().splitlines()[1]  # a cell without details writes none
    first, second = path.read_text().splitlines()
    path.write_text(json.dumps({**json.loads(first), "details": [details]}) + "\n" + second + "\n")
    with pytest.raises(DataError, match=r"records.jsonl:1: details must be a JSON object"):
        RecordStore(tmp_path).load()


# ---------------------------------------------------------------------------- paper and checks


def test_compare_pairs_summaries_with_the_papers_cells():
    paper = PaperReference("001", "t", "", {("Table 3", "SISI", "auc"): 0.9})
    summaries = aggregate([m(0.6, 0), m(0.8, 1), m(0.5, 0, code="MIMI")])
    (found,) = compare(summaries, paper, lambda s: ("Table 3", s.setting["code"], s.metric))
    assert (found.table, found.row, found.paper, found.ours.mean) == ("Table 3", "SISI", 0.9, pytest.approx(0.7))
    assert found.difference == pytest.approx(-0.2)


def test_paper_value_takes_the_first_place_the_paper_has_a_number_at():
    paper = PaperReference("004", "t", "", {("Table II", "a", "x"): 0.5, ("Table V", "b", "y"): 0.25})
    assert paper_value(paper, ("Table II", "a", "x")) == 0.5
    assert paper_value(paper, [("Table II", "a", "z"), ("Table V", "b", "y")]) == 0.25  # falls back to the second table
    assert paper_value(paper, [("Table II", "a", "x"), ("Table V", "b", "y")]) == 0.5  # the first found wins
    assert paper_value(paper, None) is None and paper_value(paper, []) is None and paper_value(paper, ("T", "a", "x")) is None
    (pair,) = compare([("a", "x", 0.6), ("a", "w", 0.1)], paper, lambda item: ("Table II", item[0], item[1]))
    assert (pair.ours, pair.paper) == (("a", "x", 0.6), 0.5)
    assert compare([0.75], paper, lambda _: ("Table V", "b", "y"))[0].difference == 0.5  # a number is its own mean
    assert paper_row(paper, "Table V", "b") == {"y": 0.25} and paper_table(paper, "Table II") == {"a": {"x": 0.5}}
    assert paper_value("001", ("Table 5", "I", "I")) == 0.998  # a paper id reads the packaged reference


def test_rules_as_data_judge_mean_or_interval_and_never_pass_on_nothing():
    rules = load_rules([
        {"metric": "auc", "where": {"code": "SISI"}, "at_least": 0.55, "says": "beats a blind guess"},
        {"metric": "auc", "where": {"code": "SISI"}, "on": "low", "at_least": 0.55, "says": "clearly"},
        {"metric": "recall", "at_most": 0.1, "says": "absent metric"},
    ])  # fmt: skip
    verdicts = apply_rules(rules, aggregate([m(0.6, 0), m(0.8, 1)]))
    assert [v.passed for v in verdicts] == [True, False, None]
    assert verdicts[0].value == pytest.approx(0.7)


def test_rules_compare_two_cells_and_tally_k_of_n():
    summaries = aggregate([m(0.3, 0, enc="a", dec="point"), m(0.5, 0, enc="a", dec="gru"), m(0.2, 0, enc="a", dec="lstm"),
                           m(0.4, 0, enc="b", dec="gru")])  # fmt: skip
    rules = load_rules([
        {"metric": "auc", "more_than": {"dec": "point"}, "counts": "pairs", "says": "sequence beats point"},
        {"metric": "auc", "where": {"enc": "b"}, "less_than": {"dec": "point"}, "says": "b has no point cell"},
        {"metric": "auc", "at_least": 0.25, "says": "above a quarter"},
    ])  # fmt: skip
    verdicts = apply_rules(rules, summaries)
    # rule 1: a+gru (0.5 > 0.3) and a+lstm (0.2 < 0.3); a+point is its own other cell, b+gru has none
    assert [(v.summary.setting["dec"], v.other.mean, v.passed) for v in verdicts[:2]] == [("gru", 0.3, True), ("lstm", 0.3, False)]
    assert verdicts[2].passed is None
    assert tally(verdicts) == [["sequence beats point", False, "1 of 2 pairs"], ["above a quarter", False, "3 of 4 settings"]]


def test_unless_leaves_cells_out_and_nan_is_never_judged():
    summaries = aggregate([m(0.1, 0, L=0.0, sel="a"), m(0.1, 0, L=0.0, sel="b"), m(0.3, 0, L=0.5, sel="a"),
                           m(0.2, 0, L=0.5, sel="b"), m(math.nan, 0, L=1.0, sel="a"), m(0.4, 0, L=1.0, sel="b")])  # fmt: skip
    rules = load_rules([{"metric": "auc", "where": {"sel": "a"}, "unless": {"L": 0}, "more_than": {"sel": "b"}, "says": "a beats b"}])
    verdicts = apply_rules(rules, summaries)
    # L = 0 is left out (0.1 vs 0.1 would fail), L = 1 has a NaN: only L = 0.5 is judged
    assert [(v.summary.setting["L"], v.passed) for v in verdicts] == [(0.5, True)]
    assert apply_rules(load_rules([{"metric": "auc", "where": {"L": 1.0, "sel": "a"}, "at_most": 1, "says": "x"}]), summaries)[0].passed is None


def test_read_rules_gives_named_parts_and_names_the_file_in_errors(tmp_path):
    path = tmp_path / "checks.yaml"
    path.write_text("attack:\n  - {metric: auc, at_least: 0.5, says: beats a guess}\nsweep: []\n")
    parts = read_rules(path)
    assert list(parts) == ["attack", "sweep"] and parts["attack"][0].at_least == 0.5
    path.write_text("attack:\n  - {metric: auc, says: no bound}\n")
    with pytest.raises(DataError, match=r"checks.yaml: attack\[0\]: expected a number in at_least"):
        read_rules(path)
    path.write_text("- {metric: auc, at_least: 0.5, says: x}\n")
    with pytest.raises(DataError, match="expected a mapping of part names to lists of rules"):
        read_rules(path)


@pytest.mark.parametrize(("rule", "message"), [
    ({"metric": "auc", "says": "x"}, r"checks\[0\]: expected a number in at_least, at_most, above or below"),
    ({"metric": "auc", "says": "x", "at_least": 0.5, "on": "median"}, "on: expected one of mean, low, high"),
    ({"metric": "auc", "says": "x", "at_least": 0.5, "beyond": 1}, "unknown key"),
    ({"metric": "auc", "says": "x", "more_than": {"d": 1}, "less_than": {"d": 2}}, "expected one kind of rule, got more_than, less_than together"),
    ({"metric": "auc", "says": "x", "more_than": "point"}, "more_than: expected a mapping"),
])  # fmt: skip
def test_bad_rules_are_one_line_errors(rule, message):
    with pytest.raises(DataError, match=message):
        load_rules([rule])
