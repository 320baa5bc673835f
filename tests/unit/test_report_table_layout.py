"""The HTML layout of tables (``report.layout``) and the reviewer-facing figure helpers: the
privacy-utility frontier, the heat map's cell text, the ROC band."""

from __future__ import annotations

import io

import numpy as np
import pytest
from matplotlib.image import imread

from recprivacy.metrics.attack import tpr_at_fpr
from recprivacy.metrics.intervals import roc_band
from recprivacy.report import render_html
from recprivacy.report.figures import FrontierPanel, frontier_plot, heatmap, pareto_front
from recprivacy.report.layout import MAX_COLUMNS, column_groups, key_width, split_unmeasured, table_view

LONG = {"columns": ["defence", "attack", "attacker", *[f"n{i}" for i in range(10)], "reason"],
        "rows": [["none", "a", "frozen", *range(10), ""], ["none", "a", "adaptive", *range(10), ""],
                 ["pop", "a", "", *[None] * 10, "does not apply: pop changes lists"],
                 ["pop", "b", "", *[float("nan")] * 10, "does not apply: pop changes lists"],
                 ["dp", "b", "", *[None] * 10, "not measured: too few users"]],
        "caption": "Every cell"}  # fmt: skip


def test_the_key_is_the_fewest_leading_columns_that_identify_a_row():
    assert key_width(LONG["columns"], LONG["rows"]) == 3
    assert key_width(["x", "y"], [["a", 1], ["b", 1]]) == 1


def test_rows_without_any_number_leave_the_table_for_one_note_grouped_by_reason():
    kept, empty = split_unmeasured(LONG["rows"])
    assert [r[2] for r in kept] == ["frozen", "adaptive"] and len(empty) == 3
    view = table_view(LONG)
    assert view["n_unmeasured"] == 3
    assert view["unmeasured"] == [{"why": "does not apply: pop changes lists", "rows": ["pop · a", "pop · b"]},
                                  {"why": "not measured: too few users", "rows": ["dp · b"]}]  # fmt: skip
    assert all(len(part["rows"]) == 2 for part in view["parts"])


def test_a_wide_table_is_split_into_parts_repeating_its_key_and_keeping_every_column():
    view = table_view(LONG)
    assert len(view["parts"]) > 1 and all(len(p["columns"]) <= MAX_COLUMNS for p in view["parts"])
    assert all(p["columns"][:3] == ["defence", "attack", "attacker"] for p in view["parts"])
    shown = [c for p in view["parts"] for c in p["columns"][3:]]
    assert shown == LONG["columns"][3:]
    assert column_groups(MAX_COLUMNS, 1) == [list(range(MAX_COLUMNS))]


def test_a_long_table_is_collapsed_and_a_short_one_is_not():
    rows = [[f"r{i}", i] for i in range(40)]
    assert table_view({"columns": ["k", "v"], "rows": rows, "caption": "c"})["collapsed"]
    assert not table_view({"columns": ["k", "v"], "rows": rows[:5], "caption": "c"})["collapsed"]


def test_the_html_draws_the_note_and_the_parts(tmp_path):
    doc = {"name": "d", "study": "matrix", "tables": {"long": LONG}, "figures": {},
           "sections": [{"title": "S", "text": "", "tables": ["long"], "figures": []}]}  # fmt: skip
    html = render_html(doc, tmp_path)
    assert "3 rows without numbers (n/a) not drawn above" in html and "pop · a, pop · b" in html
    assert "(columns, part 2 of " in html and html.count("<td>n/a</td>") == 0


def _image(png: bytes) -> np.ndarray:
    return imread(io.BytesIO(png))


def test_the_frontier_keeps_only_points_no_other_beats_on_both_axes():
    points = {"a": (0.0, 0.9), "b": (-0.1, 0.6), "c": (-0.2, 0.7), "d": (-0.3, 0.5)}
    assert pareto_front(points) == [(-0.3, 0.5), (-0.1, 0.6), (0.0, 0.9)]


def test_the_frontier_plot_draws_every_panel_with_intervals():
    panel = FrontierPanel("membership", "utility change: Recall@10", "ROC AUC", {"none": ((0, 0, 0), (0.8, 0.7, 0.9)),
                          "dp": ((-0.1, -0.15, -0.05), (0.6, 0.5, 0.7))}, 0.5, "baseline")  # fmt: skip
    one, two = _image(frontier_plot([panel], ["none", "dp"])), _image(frontier_plot([panel] * 4, ["none", "dp"]))
    assert two.shape[0] > one.shape[0]


def test_the_heat_map_writes_the_given_cell_text():
    values = [[0.2, float("nan")], [-0.1, 0.0]]
    plain = _image(heatmap(values, ["a", "b"], ["x", "y"], annotate=False, centre=0.0))
    worded = _image(heatmap(values, ["a", "b"], ["x", "y"], cell_text=[["leaks", "—"], ["below", "no leak"]], centre=0.0))
    assert plain.shape == worded.shape and not np.array_equal(plain, worded)


def test_the_roc_band_holds_the_curve_and_the_curve_is_the_empirical_tpr():
    rng = np.random.default_rng(0)
    y = np.r_[np.ones(200), np.zeros(200)]
    scores = rng.normal(y, 1.0)
    grid = np.array([0.01, 0.1, 0.5, 1.0])
    tpr, low, high = roc_band(y, scores, grid)
    assert tpr == pytest.approx(list(tpr_at_fpr(y, scores, tuple(grid)).values()))
    assert np.all(low <= tpr) and np.all(tpr <= high) and np.all(high - low < 0.3) and tpr[-1] == 1.0
