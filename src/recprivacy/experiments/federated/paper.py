"""The numbers paper 004 reports, looked up so our tables can show them beside ours.

The numbers themselves are data: ``recprivacy/papers/004/reference.yaml`` (digest §9, read
through ``experiments.reference``). Tables II-V cover FedRec only; Table VI covers FedLightGCN
and FedNCF at ζ = 0.1.
"""

from __future__ import annotations

from recprivacy.experiments.reference import reference


def _paper(table: str, row: str, column: str) -> float | None:
    return reference("004").value(table, row, column)


def paper_f1(dataset: str, model: str, method: str, attribute: str, zeta: float) -> float | None:
    """The paper's DNN (AIA) F1 for a cell (papers/004/reference.yaml, digest §9): Table II for
    FedRec (Table V's AIA column for APM on ml-100k at ζ = 0.3), Table VI (ζ = 0.1 only) for the others."""
    if model == "fedrec":
        f1 = _paper("Table II", f"{dataset}/{attribute}/{method}", f"zeta={zeta}")
        if f1 is None and (dataset, method) == ("ml-100k", "apm"):
            return _paper("Table V", f"{attribute}/zeta={zeta}", "dnn")
        return f1
    return _paper("Table VI", f"{dataset}/{model}/{method}", attribute) if zeta == 0.1 else None


def paper_by_attacker(dataset: str, model: str, method: str, attribute: str, zeta: float = 0.1) -> dict[str, float]:
    """The paper's F1 by attacker: Table IV at ζ = 0.1, Table V (APM on ml-100k) at ζ = 0.2 and
    0.3; both tables cover FedRec only."""
    if model != "fedrec":
        return {}
    if zeta == 0.1:
        return reference("004").row("Table IV", f"{dataset}/{attribute}/{method}")
    return reference("004").row("Table V", f"{attribute}/zeta={zeta}") if (dataset, method) == ("ml-100k", "apm") else {}


def paper_hit20(dataset: str, model: str, method: str) -> float | None:
    """The paper's Hit@20: Table III for FedRec (APM and the FixRec variants), Table VI for the others."""
    if model == "fedrec":
        return _paper("Table III", f"{dataset}/{method}", "hit@20")
    return _paper("Table VI", f"{dataset}/{model}/{method}", "hit@20")
