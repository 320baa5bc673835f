"""The matrix's records (issue 49): every object the report reads survives the record store's JSON
exactly, a cell whose adaptive attacker is its frozen one stays one attacker, and anything else is
refused with a message naming it."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from recprivacy.errors import DataError
from recprivacy.experiments.matrix.cells import MatrixCell, judged
from recprivacy.experiments.matrix.plan import DefenceSpec
from recprivacy.experiments.matrix.records import from_json, to_json
from recprivacy.experiments.matrix.render import cell_text
from recprivacy.experiments.matrix.world import Row
from recprivacy.metrics.intervals import Estimate
from recprivacy.metrics.verdict import Sample
from recprivacy.privacy.accounting import PrivacyStatement


def through_store(value):
    """``value`` written and read back as the record store does (``allow_nan``)."""
    return from_json(json.loads(json.dumps(to_json(value), allow_nan=True)))


def attacker(value: float) -> object:
    e = Estimate(np.float64(value), value - 0.1, value + 0.1, "bootstrap", np.int64(120))
    return judged(e, 0.5, "chance (0.5)", e.shifted(0.5), chance=0.5, sample=Sample(60, 60))


def test_a_row_comes_back_equal_and_its_cell_reads_the_same():
    one = attacker(1 / 3)
    statement = PrivacyStatement.of_parts({"edges": PrivacyStatement(2.0, 1e-6, "RDP", "edge", "run", notes=("a",)),
                                           "none": PrivacyStatement.no_guarantee("u", "s", "r")}, "edges")  # fmt: skip
    cells = {"canaries": MatrixCell(one, one, "no trained part", {"roc_lower": math.nan, "m": 200}),
             "attribute": MatrixCell(attacker(0.7), attacker(0.6)), "exposure": MatrixCell(reason="does not apply")}
    row = Row(DefenceSpec("dpmf_eps1", "DPMF (ε = 1)", "model training"), statement,
              ("Recall@10", Estimate(0.2, 0.1, 0.3, "paired", 50), Estimate(-0.01, -0.02, 0.0, "paired", 50)), cells)  # fmt: skip
    back = through_store(row)
    assert back.spec == row.spec and back.statement == statement and back.utility == row.utility
    assert back.cells["attribute"] == cells["attribute"] and back.cells["exposure"] == cells["exposure"]
    canaries = back.cells["canaries"]
    assert canaries.adaptive is canaries.frozen and canaries.frozen == one and math.isnan(canaries.epsilon["roc_lower"])
    assert type(canaries.frozen.value.value) is float and type(canaries.frozen.value.n) is int
    for key, cell in cells.items():
        assert cell_text(back.cells[key], None) == cell_text(cell, None)


def test_what_the_records_cannot_hold_is_refused_by_name():
    with pytest.raises(TypeError, match="cannot hold a ndarray"):
        to_json({"scores": np.zeros(3)})
    with pytest.raises(DataError, match="unknown type 'Model'"):
        from_json({"__dataclass__": "Model", "fields": {}})
