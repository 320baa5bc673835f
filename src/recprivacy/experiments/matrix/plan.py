"""What the attack x defence matrix runs: the attacks (columns), the defences (rows), and
which defence applies to which attack.

A defence applies to an attack when it changes what that attack observes. Every attack
observes one channel (``lists`` served to users, ``exposures`` logged as slates, ``model
training``, ``released data``); a defence protects one channel. A defence that protects model
training changes the model, and so every list and exposure it produces: it applies to every
attack on those. A defence that protects released data changes what is released and so the model
trained on it too: it applies to every attack on the central system. Any other defence applies only to attacks on its
own channel; the cell says why not otherwise.

Federated ``uploads`` exist only in a federated system: a centrally trained row makes none, and
an upload defence changes nothing a central target serves, so the two sets of rows meet only in
the no-defence row, whose uploads cell is the undefended federated system (Pure FedRec).
"""

from __future__ import annotations

from dataclasses import dataclass

#: a defence on this channel changes every channel downstream of it
DOWNSTREAM = {"model training": ("model training", "lists", "exposures"), "lists": ("lists",), "exposures": ("exposures",),
              "released data": ("released data", "model training", "lists", "exposures"),
              "uploads": ("uploads",)}


@dataclass(frozen=True)
class AttackColumn:
    """A column: what the attack observes and the metric its cells report."""

    key: str
    title: str
    observes: str
    metric: str


@dataclass(frozen=True)
class DefenceSpec:
    """A row: the channel the defence protects."""

    key: str
    title: str
    protects: str


ATTACKS = (
    AttackColumn("membership", "user-level membership inference (paper 001)", "lists", "ROC AUC"),
    AttackColumn("interactions", "interaction-level membership inference (held-out non-members)", "lists", "ROC AUC"),
    AttackColumn("attribute", "attribute inference from top-k lists", "lists", "balanced accuracy"),
    AttackColumn("exposure", "exposure leakage (recent clicks from a slate)", "exposures", "Recall@10"),
    AttackColumn("canaries", "canary membership (model training)", "model training", "ROC AUC"),
    AttackColumn("recovery", "recovery of a synthetic release (replaced items)", "released data", "Recall@K"),
    AttackColumn("uploads", "attribute inference from federated uploads (paper 004)", "uploads", "weighted F1"),
)


def not_applicable(attack: AttackColumn, defence: DefenceSpec) -> str | None:
    """Why ``defence`` cannot change what ``attack`` observes, or None when it applies."""
    if attack.observes in DOWNSTREAM.get(defence.protects, ()) or defence.protects == "nothing":
        return None
    return f"does not apply: {defence.title} changes {defence.protects}; the attack observes {attack.observes}"
