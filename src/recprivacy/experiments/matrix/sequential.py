"""Claimed against measured epsilon for the sequential-model defences (paper 002: DIPSGNN,
DP-SGD, EdgeRand on the SR-GNN backbone), by a canary audit in one training run each.

``m`` members (one canary each, so no user holds two) get a canary item they never interacted
with, appended as their last interaction with probability 1/2 (``cells.Canaries``); each
defence is trained once on the planted data, with ``n_epochs`` (reduced training, stated in
the report). The attacker knows every user's other interactions and scores canary ``(u, c)``
by the model's standardised score of ``c`` for ``u``'s canary-free sequence,

    s(u, c) = (f(S_u)_c - mean_i f(S_u)_i) / std_i f(S_u)_i,

which is the strongest test of the sample the canary adds (``S_u`` -> ``c``: the input and the
label of one training sample). ``s`` is converted into the one-run bound
(``metrics.epsilon.one_run_epsilon``, guesses on the ``canary_guesses`` highest and lowest)
and the ROC bound (``roc_epsilon``, Clopper-Pearson), and the larger is set against the
whole-run claim by ``judge_claim`` (``untestable`` above ``largest_roc_epsilon``).

Units: DP-SGD's claim is per training sample, exactly what one appended canary adds. DIPSGNN's
and EdgeRand's claims are per transition count (edge) of the input graphs; an appended canary
adds a training *label* and no input edge, and their gradients are not privatised (outside
paper 002's guarantee), so their rows measure leakage outside the claimed unit and a bound below
the claim says nothing about the edges (stated in each row).

Utility cost: each defence's Recall@10 on the members' test split (full ranking, training and
validation masked) against its own backbone trained without the defence on the same planted
data, paired bootstrap over users (``audit.utility_change``); one undefended fit per distinct
backbone.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any, Literal

import numpy as np
import torch
from pydantic import Field, PositiveInt

from recprivacy.config import StudyOptions
from recprivacy.data.interactions import Interactions
from recprivacy.defenses.dipsgnn import DIPSGNN
from recprivacy.defenses.dpsgd import DPSGD
from recprivacy.defenses.edgerand import EdgeRand
from recprivacy.defenses.private_srgnn import PrivateSRGNN
from recprivacy.experiments.audit import utility_change
from recprivacy.experiments.matrix.cells import Canaries
from recprivacy.experiments.train import PreparedData
from recprivacy.metrics.epsilon import judge_claim, largest_roc_epsilon, one_run_epsilon, roc_epsilon

#: report name -> (defence class, the statement of its whole-run claim)
SEQUENTIAL: dict[str, tuple[type[PrivateSRGNN], str]] = {
    "DIPSGNN": (DIPSGNN, "edges, whole training run"),
    "DP-SGD": (DPSGD, "training samples, whole training run"),
    "EdgeRand": (EdgeRand, "edges, whole training run"),
}
EDGE_NOTE = "canary = one appended label, outside the edge-level unit (gradients not privatised)"


class SequentialAuditOptions(StudyOptions):
    """Which defences, how many canaries and guesses, and the (reduced) training of each."""

    defences: list[Literal["DIPSGNN", "DP-SGD", "EdgeRand"]] = Field(default_factory=lambda: list(SEQUENTIAL))
    canaries: PositiveInt = 500
    canary_guesses: PositiveInt = 50
    params: dict[str, Any] = Field(default_factory=lambda: {"n_epochs": 1, "hidden": 32, "user_mode": "none"})


def one_per_user(canaries: Canaries) -> Canaries:
    """The first canary of each user (the rest dropped), inclusion bits kept."""
    _, first = np.unique(canaries.users, return_index=True)
    keep = np.sort(first)
    return Canaries(canaries.users[keep], canaries.items[keep], canaries.included[keep])


def canary_scores(model: PrivateSRGNN, canaries: Canaries, clean: Interactions) -> np.ndarray:
    """``s(u, c)`` of the module docstring, from each canary user's canary-free sequence."""
    sequences = clean.sequences()
    scores = model.score_sequences([sequences[u] for u in canaries.users], canaries.users)
    scores = torch.nan_to_num(scores.double(), neginf=0.0)
    z = (scores - scores.mean(dim=1, keepdim=True)) / scores.std(dim=1, keepdim=True).clamp_min(1e-12)
    return z[torch.arange(len(canaries.users)), torch.as_tensor(canaries.items)].numpy()


def audit_row(name: str, model: PrivateSRGNN, canaries: Canaries, clean: Interactions, k_guess: int) -> list:
    """One row of the claimed-vs-measured table for a fitted sequential ``model``."""
    statement = model.privacy_statement().part(SEQUENTIAL[name][1])
    scores = canary_scores(model, canaries, clean)
    y = canaries.included
    roc = roc_epsilon(y, scores, statement.delta).low
    one_run = one_run_epsilon(y, scores, k_guess, k_guess)
    limit = largest_roc_epsilon(int(y.sum()), int((~y).sum()))
    how = f"larger of the two bounds, {len(y)} canaries"
    reading = judge_claim(statement.epsilon, max(roc, one_run.epsilon), how, limit).text
    if SEQUENTIAL[name][0] is not DPSGD:
        reading += f" [{EDGE_NOTE}]"
    return [f"{name} (SR-GNN)", statement.epsilon if statement.formal else None, statement.delta, statement.accountant,
            statement.unit, statement.scope, roc, one_run.epsilon, f"{one_run.correct} of {one_run.guesses}", reading]  # fmt: skip


def sequential_rows(data: PreparedData, members: np.ndarray, o: SequentialAuditOptions, seed: int,
                    noise: str) -> tuple[list[list], list[list]]:  # fmt: skip
    """Plant one canary per user for at most ``m`` ``members`` (items they never interacted
    with in any split), train each defence once on the planted training data, audit it; also
    the utility rows (module docstring)."""
    canaries = one_per_user(Canaries.draw(data.full, members, o.canaries, seed))
    planted = replace(data, train=canaries.plant(data.train))
    k_guess = min(o.canary_guesses, len(canaries.users) // 2)
    rows, utility, references = [], [], {}
    for name in o.defences:
        model = SEQUENTIAL[name][0].from_params(seed=seed, noise=noise, **o.params).fit(planted.train)
        rows.append(audit_row(name, model, canaries, data.train, k_guess))
        key = repr(sorted(model.backbone.get_params().items()))
        if key not in references:
            references[key] = copy.deepcopy(model.backbone).fit(planted.train)
        value, base, change = utility_change(model, references[key], planted, 10)
        utility.append([f"{name} (SR-GNN)", value.value, value.low, value.high, base, change.value, change.low, change.high])
    return rows, utility
