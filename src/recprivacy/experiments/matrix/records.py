"""The matrix's results as JSON, kept by the study kit's record store (the ``details`` of a cell's
record line), and the report's rows rebuilt from them.

``to_json`` writes the matrix's own dataclasses (a ``Row``, a ``MatrixCell`` and its attackers'
``Judged`` and a defence's paired ``Change``, an ``Estimate``, a ``Sample``, a ``Verdict``, a ``PrivacyStatement``, a
``DefenceSpec``) as ``{"__dataclass__": name, "fields": {...}}``, a tuple as ``{"__tuple__":
[...]}`` and numpy scalars as Python numbers; ``from_json`` rebuilds them. Floats round-trip
exactly (the store writes 17 significant digits, NaN and infinity included), so a resumed run
reports what an uninterrupted one does: the study rebuilds every cell from its JSON, stored or
fresh. A cell whose adaptive attacker *is* its frozen one (no trained part, or the undefended
row) keeps that identity (``"__same__"``): the report prints such a cell once.

``Outcome`` is everything the report is written from.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any

import numpy as np

from recprivacy.errors import DataError
from recprivacy.experiments.matrix.cells import Change, Judged, MatrixCell
from recprivacy.experiments.matrix.plan import ATTACKS, DefenceSpec, not_applicable
from recprivacy.experiments.matrix.world import Row
from recprivacy.metrics.intervals import Estimate
from recprivacy.metrics.verdict import Sample, Verdict
from recprivacy.privacy.accounting import PrivacyStatement

TYPES: dict[str, type] = {t.__name__: t for t in (Change, DefenceSpec, Estimate, Judged, MatrixCell, PrivacyStatement, Row,
                                                  Sample, Verdict)}  # fmt: skip


def to_json(value: Any) -> Any:
    """``value`` as plain JSON values (module docstring); a ``TypeError`` names anything else."""
    if isinstance(value, MatrixCell) and value.adaptive is not None and value.adaptive is value.frozen:
        return {**to_json(replace(value, adaptive=None)), "__same__": True}
    if is_dataclass(value) and TYPES.get(type(value).__name__) is type(value):
        return {"__dataclass__": type(value).__name__, "fields": {f.name: to_json(getattr(value, f.name)) for f in fields(value)}}
    if isinstance(value, tuple):
        return {"__tuple__": [to_json(v) for v in value]}
    if isinstance(value, list):
        return [to_json(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return float(value)
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"the matrix's records cannot hold a {type(value).__name__}: {value!r}")


def from_json(value: Any) -> Any:
    """What ``to_json`` wrote, rebuilt; an unknown dataclass name is a one-line ``DataError``."""
    if isinstance(value, list):
        return [from_json(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__tuple__" in value:
        return tuple(from_json(v) for v in value["__tuple__"])
    if "__dataclass__" not in value:
        return {k: from_json(v) for k, v in value.items()}
    name = value["__dataclass__"]
    if name not in TYPES:
        raise DataError(f"matrix record: unknown type {name!r}; expected one of {', '.join(TYPES)}")
    made = TYPES[name](**{k: from_json(v) for k, v in value["fields"].items()})
    return replace(made, adaptive=made.frozen) if value.get("__same__") else made


@dataclass
class Outcome:
    """What the report is written from: the rows (the central target's, then the upload
    defences'), the target's class name, the sequential-model defences' claimed-vs-measured and
    utility rows (``matrix.sequential``) and the upload mechanisms' audit rows (``matrix.mechanisms``)."""

    rows: list[Row]
    target: str
    sequential: tuple[list[list], list[list]]
    mechanisms: list[list]


def upload_row_cells(row: Row) -> None:
    """An upload defence's row: every column but ``uploads`` does not apply (``plan.DOWNSTREAM``)."""
    for attack in ATTACKS:
        if attack.key not in row.cells:
            row.cells[attack.key] = MatrixCell(reason=not_applicable(attack, row.spec))


def pure_fedrec_cells(pure: MatrixCell, rows: list[Row]) -> None:
    """The central rows' uploads cells: Pure FedRec's where the column applies (the no-defence
    row), why not elsewhere."""
    attack = next(a for a in ATTACKS if a.key == "uploads")
    for row in rows:
        why = not_applicable(attack, row.spec)
        row.cells[attack.key] = replace(pure) if why is None else MatrixCell(reason=why)
