"""The numbers paper 002 reports, read from ``papers/002/reference.yaml`` through the kit's
comparator (``experiments.kit.compare``): Table 2, Recall@K and MRR@K in %, eps1 = 20, eps2 = 5,
row = method, column = ``<dataset column>/<metric>``.
"""

from __future__ import annotations

from typing import Any

from recprivacy.experiments.kit.compare import paper_table

PAPER_METRICS = ("recall@20", "mrr@20", "recall@10", "mrr@10")
#: dataset name -> the Table 2 column of the paper it reproduces
PAPER_COLUMN_OF = {"ml-1m": "ML-1M", "s3rec-yelp": "Yelp"}


def paper_table2(column: str | None) -> dict[str, tuple[float, ...]]:
    """Paper 002, Table 2 (eps1 = 20, eps2 = 5) for one dataset ``column`` (ML-1M, Yelp or Tmall):
    ``method -> PAPER_METRICS values`` in % (papers/002/reference.yaml); empty for no column."""
    table = paper_table("002", "Table 2")
    keys = [f"{column}/{m}" for m in PAPER_METRICS]
    return {method: tuple(cells[k] for k in keys) for method, cells in table.items() if keys[0] in cells}


def paper_row(column: str | None, method: str) -> list[Any]:
    """The paper's ``PAPER_METRICS`` of ``method`` in ``column`` (None where it reports none)."""
    values = paper_table2(column).get(method)
    return list(values) if values else [None] * 4
