"""The comparison behind the ``golden`` fixture (``tests/conftest.py``): floats to 1e-12 with
NaN equal to NaN, everything else exactly, each difference named by part, field and key."""

from __future__ import annotations

NAN = float("nan")


def test_floats_agree_to_1e_12_and_nan_equals_nan(golden_comparison):
    recorded = {"run": {"metrics": {"auc": 0.75, "tpr": NAN, "n": 3}, "sections": [["Title", "text"]]}}
    measured = {"run": {"metrics": {"auc": 0.75 + 9e-13, "tpr": NAN, "n": 3}, "sections": [["Title", "text"]]}}
    assert golden_comparison(measured, recorded) == []
    assert golden_comparison(float("inf"), float("inf")) == []


def test_each_difference_names_part_field_key_and_the_place_below(golden_comparison):
    recorded = {"run": {"metrics": {"auc": 0.75}, "tables": {"t": {"rows": [[1, "a", 0.5]]}}}}
    measured = {"run": {"metrics": {"auc": 0.75 + 2e-12}, "tables": {"t": {"rows": [[1, "b", NAN]]}}}}
    assert golden_comparison(measured, recorded) == [
        f"part 'run', field 'metrics', key 'auc': measured {0.75 + 2e-12!r}, recorded 0.75",
        "part 'run', field 'tables', key 't' at ['rows'][0][1]: measured 'b', recorded 'a'",
        "part 'run', field 'tables', key 't' at ['rows'][0][2]: measured nan, recorded 0.5",
    ]


def test_structure_and_types_must_agree_exactly(golden_comparison):
    assert golden_comparison({"run": {"a": 1}}, {"run": {"b": 1}}) == [
        "part 'run': measured keys ['a'] are not recorded, recorded keys ['b'] were not measured"]
    assert golden_comparison({"run": {"rows": [1, 2]}}, {"run": {"rows": [1]}}) == [
        "part 'run', field 'rows': measured 2 entries, recorded 1"]
    assert golden_comparison({"p": {"f": 0.5}}, {"p": {"f": "0.5"}}) == ["part 'p', field 'f': measured 0.5, recorded '0.5'"]
    assert golden_comparison({"p": {"f": True}}, {"p": {"f": 1}}) == ["part 'p', field 'f': measured True, recorded 1"]
