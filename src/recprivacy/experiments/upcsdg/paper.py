"""The numbers paper 003 reports, looked up so our tables can show them beside ours.

The numbers themselves are data (``recprivacy/papers/003/reference.yaml``), read through the kit's
comparator (``experiments.kit.compare``).
The paper's datasets are Office, Clothing and Gowalla; ``study_options.paper_dataset`` picks the
one quoted (default Office, the closest to Amazon Musical Instruments), and every table names it.
"""

from __future__ import annotations

from recprivacy.experiments.kit.compare import paper_row


def paper_cells(table: str, row: str) -> dict[str, float]:
    """Paper 003's ``METRICS`` at 20 in one row (papers/003/reference.yaml; empty when absent):
    Table 2 rows are ``"<dataset>/<setting>/<model>"``, Table 3 rows ``"<variant>/k=<k>"``."""
    return paper_row("003", table, row)
