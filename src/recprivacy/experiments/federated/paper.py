"""The numbers paper 004 reports, looked up so our tables can show them beside ours.

The numbers themselves are data: ``recprivacy/papers/004/reference.yaml`` (the paper's tables, read
through the kit's comparator ``experiments.kit.compare``); this module says where in the paper
each of our cells sits. Tables II-V cover FedRec only; Table VI covers FedLightGCN and FedNCF at
ζ = 0.1.
"""

from __future__ import annotations

from recprivacy.experiments.kit.compare import Place, paper_row, paper_value

PAPER = "004"


def paper_f1(dataset: str, model: str, method: str, attribute: str, zeta: float) -> float | None:
    """The paper's DNN (AIA) F1 for a cell (papers/004/reference.yaml): Table II for
    FedRec (Table V's AIA column for APM on ml-100k at ζ = 0.3), Table VI (ζ = 0.1 only) for the others."""
    places: list[Place] = []
    if model == "fedrec":
        places.append(("Table II", f"{dataset}/{attribute}/{method}", f"zeta={zeta}"))
        if (dataset, method) == ("ml-100k", "apm"):
            places.append(("Table V", f"{attribute}/zeta={zeta}", "dnn"))
    elif zeta == 0.1:
        places.append(("Table VI", f"{dataset}/{model}/{method}", attribute))
    return paper_value(PAPER, places)


def paper_by_attacker(dataset: str, model: str, method: str, attribute: str, zeta: float = 0.1) -> dict[str, float]:
    """The paper's F1 by attacker: Table IV at ζ = 0.1, Table V (APM on ml-100k) at ζ = 0.2 and
    0.3; both tables cover FedRec only."""
    if model != "fedrec":
        return {}
    if zeta == 0.1:
        return paper_row(PAPER, "Table IV", f"{dataset}/{attribute}/{method}")
    return paper_row(PAPER, "Table V", f"{attribute}/zeta={zeta}") if (dataset, method) == ("ml-100k", "apm") else {}


def paper_hit20(dataset: str, model: str, method: str) -> float | None:
    """The paper's Hit@20: Table III for FedRec (APM and the FixRec variants), Table VI for the others."""
    if model == "fedrec":
        return paper_value(PAPER, ("Table III", f"{dataset}/{method}", "hit@20"))
    return paper_value(PAPER, ("Table VI", f"{dataset}/{model}/{method}", "hit@20"))
