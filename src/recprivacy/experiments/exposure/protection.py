"""The protection cells of the ``exposure`` study (Figs. 8-13): the attack on perturbed slates.

Every selection x replacement x ratio L of ``defenses.exposure_perturbation`` perturbs the
test slates; the attacker trained on clean exposure is kept frozen (the paper), and for the
``adaptive`` strategies an attacker is also retrained on perturbed exposure. Each row holds
Rec*, NDCG*, MRR* at 10, Acc* (Eq. 18) and, for simulated exposure, the slates' Recall@N on
the users' real next items. ``protection_settings`` lists the rows, ``prepare_protection``
fits what they share (the frozen attacker, its test pairs and clean scores, the item
embeddings) and ``protection_row`` measures one; each row is one cell of :mod:`.grid`.

One more row, the *no-information floor*, is the frozen attacker on wholly random slates
(every item uniform): what it scores from its prior alone. Rec* can only fall with L where the
clean attack beats that floor; on tiny synthetic data it may not, so Rec* stays flat or rises
there (measured in ``docs/decisions.md``). Each row is judged by its paired change in Rec*@10
against the same attacker and strategy at L = 0 (``judge_rows``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from recprivacy.attacks.exposure import ExposureAttack
from recprivacy.attacks.exposure.metrics import per_pair_metrics
from recprivacy.data.exposure_pairs import ExposurePairs
from recprivacy.data.interactions import Interactions
from recprivacy.defenses.exposure_perturbation import ExposurePerturbation, next_item_recall, slate_accuracy
from recprivacy.experiments.exposure.cells import attacker_parts, make_attack
from recprivacy.experiments.exposure.options import ExposureOptions
from recprivacy.experiments.exposure.pairs import ExposureData
from recprivacy.metrics.intervals import paired_difference_interval, weighted_mean
from recprivacy.metrics.verdict import Verdict, judge_defence, users_sample
from recprivacy.models.sasrec import SASRec

#: the key of a judged protection row's verdict word (``judge_rows``), beside its sentence in "change vs L = 0"
CHANGE_LABEL = "change verdict"
#: the protection rows' attacker label of the frozen attacker on wholly random slates
FLOOR = "no-information floor"
#: the judgement of a row whose per-pair recalls were not recorded
NOT_JUDGED = "not judged: per-pair Rec*@10 not recorded"
#: the judgement of a row whose attacker and strategy have no L = 0 row
NO_REFERENCE = "not judged: no L = 0 row of this attacker and strategy"
#: the floor row's selection label
FLOOR_SELECTION = "none (every item uniform)"


def item_embeddings(data: ExposureData, train: ExposurePairs, epochs: int, seed: int) -> np.ndarray:
    """SASRec item embeddings for similarity selection (catalogue ids): the target's own when
    it is a SASRec trained on the training users, else a SASRec trained on the training
    pairs' click windows, one sequence per pair (the authors' ``histrain``)."""
    if isinstance(data.target, SASRec):
        return data.target.item_embeddings().numpy()
    p, m = train.histories.shape
    windows = Interactions(users=np.repeat(np.arange(p), m), items=train.histories[:, ::-1].ravel(), n_users=p,
                           n_items=train.n_items, timestamps=np.tile(np.arange(m), p))  # fmt: skip
    model = SASRec(max_len=m, n_epochs=epochs, seed=seed).fit(windows)
    return model.item_embeddings().numpy()


def pair_recall(attack: ExposureAttack, pairs: ExposurePairs, k: int = 10) -> np.ndarray:
    """Per-pair Recall@k over all items (unseen slate items as ``[OOV]``)."""
    return per_pair_metrics(attack.pair_ranks(attack.encode(pairs, "token"), None, k), (k,))[f"recall@{k}"]


def protection_point(attacker: ExposureAttack, test: ExposurePairs, simulated: bool) -> dict[str, float]:
    """Rec*/NDCG*/MRR* at 10 (both candidate modes), Acc* and next-item recall of ``test``,
    with the per-pair recall and users the paired change (``judge_rows``) needs."""
    out = {f"{m}": v for m, v in attacker.evaluate(test, (10,), "all", oov="token").items() if not m.startswith("user/")}
    out["recall@10 (user log)"] = attacker.evaluate(test, (10,), "user_log", oov="token")["recall@10"]
    out["acc*"] = float(slate_accuracy(test).mean())
    out["next-item recall@N"] = float(next_item_recall(test).mean()) if simulated else float("nan")
    out["pair_recall"] = pair_recall(attacker, test)
    out["users"] = attacker.encode(test, "token").users
    return out


@dataclass
class Shared:
    """What every protection cell shares: the frozen attacker, the test pairs its vocabulary
    knows, the item embeddings of similarity selection (None for random only) and its clean scores."""

    attacker: ExposureAttack
    test: ExposurePairs
    embeddings: np.ndarray | None
    clean: dict[str, Any]


def prepare_protection(options: ExposureOptions, data: ExposureData, parts: dict[str, ExposurePairs],
                       attacker: ExposureAttack | None = None) -> Shared:  # fmt: skip
    """The frozen attacker (``attacker`` when already fitted, else ``protection.attacker`` fitted
    on the clean training pairs), its test pairs, embeddings and clean point."""
    opts = options.protection
    seed = options.seeds[0]
    if attacker is None:
        encoder, decoder = attacker_parts(opts.attacker, "study_options.protection.attacker")
        attacker = make_attack(options, encoder, decoder, seed).fit(parts["train"], parts["valid"])
    test = parts["test"].subset(attacker.vocab_.known_rows(parts["test"]))
    emb = item_embeddings(data, parts["train"], opts.embedding_epochs, seed) if set(opts.selections) - {"random"} else None
    return Shared(attacker, test, emb, protection_point(attacker, test, data.source == "simulated"))


def protection_settings(options: ExposureOptions) -> list[dict[str, Any]]:
    """One setting per protection row, in the table's order: the floor first, then every
    selection x replacement x L with the frozen attacker and, for the ``adaptive`` strategies,
    the retrained one."""
    opts = options.protection
    out = [{"selection": FLOOR_SELECTION, "replacement": "uniform", "L": 1.0, "attacker": FLOOR}]
    for selection in opts.selections:
        for replacement in opts.replacements:
            adaptive = opts.adaptive == "all" or f"{selection}/{replacement}" in opts.adaptive
            for ratio in opts.ratios:
                out += [{"selection": selection, "replacement": replacement, "L": ratio, "attacker": who}
                        for who in (("frozen", "adaptive") if adaptive else ("frozen",))]  # fmt: skip
    return out


def protection_row(options: ExposureOptions, data: ExposureData, parts: dict[str, ExposurePairs], shared: Shared,
                   setting: dict[str, Any], noise: str = "secure") -> dict[str, Any]:  # fmt: skip
    """The row of one ``protection_settings`` entry: the floor (the frozen attacker on wholly
    uniform slates), the clean point at L = 0, or the frozen or retrained (adaptive) attacker
    on the test slates perturbed at L; ``noise``: where the perturbation draws from."""
    row = {k: setting[k] for k in ("selection", "replacement", "L", "attacker")}
    simulated, seed = data.source == "simulated", options.seeds[0]
    if row["attacker"] == FLOOR:
        floor = ExposurePerturbation(1.0, seed=seed, noise=noise).fit(data.pairs).perturb(shared.test)
        return {**row, **protection_point(shared.attacker, floor, simulated)}
    if row["L"] == 0:
        return {**row, **shared.clean}
    opts = options.protection
    defence = ExposurePerturbation(row["L"], row["selection"], row["replacement"], opts.reference, opts.mode, opts.exclude_slate,
                                   options.attacker.batch_size, seed, opts.batch_pool, noise)  # fmt: skip
    defence.fit(data.pairs, shared.embeddings)
    perturbed = defence.perturb(shared.test)
    attacker = shared.attacker
    if row["attacker"] == "adaptive":
        attacker = make_attack(options, attacker.encoder, attacker.decoder, seed)
        attacker.fit(defence.perturb(parts["train"]), defence.perturb(parts["valid"]))
    return {**row, **protection_point(attacker, perturbed, shared.test.next_items is not None)}


def judge_rows(rows: list[dict]) -> list[dict]:
    """Each row's ``change vs L = 0`` (the sentence) and ``CHANGE_LABEL`` (its word):
    ``judge_defence`` on the paired (same pairs, bootstrap over users) change in Rec*@10 against
    the same attacker and strategy at L = 0 (the floor against the frozen clean attack), its
    sample the row's distinct users; "backfires" when the attacker gains. The L = 0 row itself
    says "reference"; a row (or its reference) without the per-pair recalls (records written
    before they were kept) says ``NOT_JUDGED``, and a row without an L = 0 row to compare with
    ``NO_REFERENCE`` (both labelled "not judged")."""
    clean = {(r["selection"], r["replacement"], r["attacker"]): r for r in rows if r["L"] == 0}
    frozen = next((r for r in rows if r["L"] == 0 and r["attacker"] == "frozen"), None)
    out = []
    for r in rows:
        ref = frozen if r["attacker"] == FLOOR else clean.get((r["selection"], r["replacement"], r["attacker"]))
        if ref is r:
            verdict = Verdict("reference", "reference")
        elif ref is None or "pair_recall" not in r or "pair_recall" not in ref:
            verdict = Verdict("not judged", NO_REFERENCE if ref is None else NOT_JUDGED)
        else:
            _, _, change = paired_difference_interval(weighted_mean(r["pair_recall"]), weighted_mean(ref["pair_recall"]),
                                                      r["users"])  # fmt: skip
            users = users_sample(len(np.unique(r["users"])))
            verdict = judge_defence(change, "Rec*@10", sample=users)
        out.append({**r, "change vs L = 0": verdict.text, CHANGE_LABEL: verdict.label})
    return out
