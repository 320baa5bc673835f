"""Paper reference numbers as data: cells checked by hand against the papers' printed tables,
the studies' lookups over them, and the one-line errors a malformed reference file gives."""

from pathlib import Path

import pytest

from recprivacy.errors import DataError
from recprivacy.experiments.dipsgnn import paper_table2
from recprivacy.experiments.exposure import paper_place
from recprivacy.experiments.exposure.render import _paper_table
from recprivacy.experiments.federated.paper import paper_by_attacker, paper_f1, paper_hit20
from recprivacy.experiments.membership import paper as membership_paper
from recprivacy.experiments.kit import paper_value
from recprivacy.experiments.reference import load_reference, reference
from recprivacy.experiments.results import Results
from recprivacy.experiments.upcsdg.paper import paper_cells

# (paper, table, row, column, value as printed in the paper)
HAND_CHECKED = [
    ("000", "Table 5", "mind/max", "recall@10", 0.8506),  # GRU decoders, MIND, Max, Rec@10
    ("000", "Table 3", "zhihu/att", "mrr@20", 0.0500),
    ("001", "Table 4", "N", "L", 0.809),  # lf-2k, shadow NCF, target LFM
    ("001", "Table 2", "ml-1m/target", "N", 0.713),
    ("001", "Table 6", "K-Means", "L", 0.717),
    ("001", "Figure 6", "lf-2k/N", "ml-1m/L", 0.710),  # §5, "achieves an AUC of 0.710"
    ("002", "Table 2", "DPSGD", "Yelp/recall@10", 0.56),
    ("002", "Table 2", "EdgeRand", "Tmall/mrr@10", 9.54),
    ("003", "Table 3", "UPC-SDG_r/k=0.8", "recall", 0.0027),
    ("003", "Table 2", "gowalla/+/lightgcn", "ndcg", 0.0812),
    ("004", "Table V", "gender/zeta=0.3", "knn", 0.627),
    ("004", "Table VI", "ml-1m/fedncf/apm", "gender", 0.658),
    ("004", "Table III", "ml-1m/fixrec_max", "hit@20", 0.043),
]


@pytest.mark.parametrize(("paper", "table", "row", "column", "value"), HAND_CHECKED)
def test_packaged_reference_holds_the_paper_numbers(paper, table, row, column, value):
    assert reference(paper).value(table, row, column) == value


def test_every_paper_has_a_title_and_its_cell_count():
    counts = {p: len(reference(p).cells) for p in ("000", "001", "002", "003", "004")}
    assert counts == {"000": 216, "001": 67, "002": 124, "003": 138, "004": 234}
    assert reference("001").title == "Membership Inference Attacks Against Recommender Systems"
    assert "balanced accuracy" in reference("001").notes


def test_rows_and_tables_keep_file_order_and_absent_cells_are_none():
    r = reference("001")
    assert r.value("Table 4", "N", "X") is None and r.row("Table 99", "N") == {}
    assert r.table("Table 3")["I"] == {"I": 0.926, "L": 0.885, "N": 0.750}
    assert r.entries("Figure 9") == [("k=100", "l=100", 0.998), ("k=20", "l=100", 0.764), ("k=100", "l=20", 0.817)]


def test_study_lookups_read_the_reference():
    # paper 001 through our dataset and algorithm names (s3rec-lastfm stands in for lf-2k)
    assert membership_paper.assumption_value("s3rec-lastfm", "neumf", "lfm") == 0.809
    assert membership_paper.assumption_mean("ml-1m") == pytest.approx((0.998 + 0.792 + 0.706 + 0.931 + 0.871 + 0.670
                                                                       + 0.976 + 0.914 + 0.998) / 9)
    assert membership_paper.assumption_mean("synthetic") is None
    assert membership_paper.shadow_size_value(1) == 0.777 and membership_paper.shadow_size_value(0.5) is None
    assert membership_paper.mimi_points() == {(100, 100): 0.998, (20, 100): 0.764, (100, 20): 0.817}
    # paper 002: one dataset's column as method -> (R@20, M@20, R@10, M@10); OOM cells absent
    assert paper_table2("Tmall")["DPSGD"] == (1.53, 0.45, 0.94, 0.41)
    assert "LightGCN" not in paper_table2("Tmall") and paper_table2(None) == {}
    # paper 003: Random has no synthetic rows
    assert paper_cells("Table 2", "office/-/random") == {}
    # paper 004: zeta = 0.3 exists only in Table V (APM on ml-100k)
    assert paper_f1("ml-100k", "fedrec", "apm", "age", 0.3) == 0.498
    assert paper_f1("ml-100k", "fedrec", "ldp", "age", 0.3) is None
    assert paper_by_attacker("ml-100k", "fedrec", "apm", "age", 0.2) == {"dnn": 0.470, "tree": 0.403, "svc": 0.361, "knn": 0.430}
    assert paper_hit20("ml-100k", "fedncf", "ldp") == 0.070 and paper_hit20("ml-100k", "fedrec", "none") is None
    # paper 000: the decoder picks the table, the source and encoder the row
    assert paper_value("000", paper_place("mind", "max", "gru", "recall@10")) == 0.8506


def test_the_exposure_paper_table_puts_the_papers_number_beside_our_mean_over_seeds():
    runs = {("mean", "point", seed): {"user_log": {"recall@10": r, "ndcg@10": 0.3, "mrr@10": 0.2}}
            for seed, r in ((0, 0.5), (1, 0.7))}  # fmt: skip
    results = Results(name="t", study="exposure", config={})
    rows = results.tables[_paper_table(results, "mind", [("mean", "point")], runs)].rows
    assert [row[:4] for row in rows] == [["point", "mean", m, v] for m, v in (("recall@10", 0.6684), ("ndcg@10", 0.3282),
                                                                              ("mrr@10", 0.2255))]  # Table 3, mind/mean
    assert rows[0][4] == pytest.approx(0.6) and rows[0][5] == pytest.approx((0.6 - 0.6684) / 0.6684)


def _write(tmp_path: Path, cells: str) -> Path:
    path = tmp_path / "reference.yaml"
    path.write_text(f"paper: '999'\ntitle: t\ncells:\n{cells}", encoding="utf-8")
    return path


GOOD = "  - {table: T1, row: a, column: b, value: 0.5}\n"


@pytest.mark.parametrize(("cells", "message"), [
    ("  - {table: T1, row: a, value: 0.5}\n", "cells[0]: missing key(s) column"),
    (GOOD + "  - {table: T1, row: a, column: c, value: 'n/a'}\n", "cells[1]: value must be a finite number, got 'n/a'"),
    (GOOD + "  - {table: T1, row: a, column: c, value: .nan}\n", "cells[1]: value must be a finite number"),
    (GOOD + "  - {table: T1, row: a, column: c, value: true}\n", "cells[1]: value must be a finite number, got True"),
    (GOOD + GOOD, "cells[1]: duplicate cell table='T1', row='a', column='b'"),
    ("  - {table: T1, row: '', column: b, value: 1}\n", "cells[0]: table, row and column must be non-empty labels"),
    ("  - [T1, a, b, 0.5]\n", "cells[0]: expected a mapping with keys table, row, column, value"),
])
def test_malformed_cells_are_one_line_errors_naming_file_and_cell(tmp_path, cells, message):
    path = _write(tmp_path, cells)
    with pytest.raises(DataError) as error:
        load_reference(path)
    text = str(error.value)
    assert text.startswith(f"{path}: {message}") and "\n" not in text


def test_a_file_without_cells_or_unparsable_is_a_one_line_error(tmp_path):
    path = tmp_path / "reference.yaml"
    path.write_text("paper: '999'\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"reference\.yaml: expected a mapping with a 'cells' list$"):
        load_reference(path)
    path.write_text("cells: [\n", encoding="utf-8")
    with pytest.raises(DataError, match="cannot read the paper reference") as error:
        load_reference(path)
    assert "\n" not in str(error.value)
    with pytest.raises(DataError, match="no reference numbers for paper '999'"):
        reference("999")


def test_a_well_formed_file_loads_numbers_as_floats(tmp_path):
    r = load_reference(_write(tmp_path, GOOD + "  - {table: T1, row: 2, column: 0.1, value: 3}\n"))
    assert r.paper == "999" and r.value("T1", "2", "0.1") == 3.0 and isinstance(r.value("T1", "2", "0.1"), float)
