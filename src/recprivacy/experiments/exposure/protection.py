"""The protection cells of the ``exposure`` study (Figs. 8-13): the attack on perturbed slates.

Every selection x replacement x ratio L of ``defenses.exposure_perturbation`` perturbs the
test slates; the attacker trained on clean exposure is kept frozen (the paper), and for the
``adaptive`` strategies an attacker is also retrained on perturbed exposure. Each row holds
Rec*, NDCG*, MRR* at 10, Acc* (Eq. 18) and, for simulated exposure, the slates' Recall@N on
the users' real next items.

One more row, the *no-information floor*, is the frozen attacker on wholly random slates
(every item uniform): what it scores from its prior alone. Rec* can only fall with L where the
clean attack beats that floor; on tiny synthetic data it may not, so Rec* stays flat or rises
there (measured in ``docs/decisions.md``). Each row is judged by its paired change in Rec*@10
against the same attacker and strategy at L = 0 (``judge_rows``).
"""

from __future__ import annotations

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
from recprivacy.experiments.results import Results
from recprivacy.metrics.intervals import paired_difference_interval, weighted_mean
from recprivacy.metrics.verdict import judge_defence
from recprivacy.models.sasrec import SASRec

#: the protection rows' attacker label of the frozen attacker on wholly random slates
FLOOR = "no-information floor"


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


def run_protection(options: ExposureOptions, data: ExposureData, parts: dict[str, ExposurePairs], results: Results,
                   attacker: ExposureAttack | None = None, noise: str = "secure") -> list[dict]:  # fmt: skip
    """Frozen and adaptive attacks on perturbed test slates (module docstring), the floor
    first; ``attacker``: an already fitted frozen attacker (default: fit ``protection.attacker``);
    ``noise``: where the perturbation draws from (the config's ``noise``)."""
    opts = options.protection
    encoder, decoder = attacker_parts(opts.attacker, "study_options.protection.attacker")
    seed = options.seeds[0]
    if attacker is None:
        with results.timed("protection:attacker"):
            attacker = make_attack(options, encoder, decoder, seed).fit(parts["train"], parts["valid"])
    test = parts["test"].subset(attacker.vocab_.known_rows(parts["test"]))
    emb = None
    if set(opts.selections) - {"random"}:
        with results.timed("protection:embeddings"):
            emb = item_embeddings(data, parts["train"], opts.embedding_epochs, seed)
    clean = protection_point(attacker, test, data.source == "simulated")
    rows = [floor_row(attacker, data, test, seed, noise)]
    for selection in opts.selections:
        for replacement in opts.replacements:
            adaptive = opts.adaptive == "all" or f"{selection}/{replacement}" in opts.adaptive
            for ratio in opts.ratios:
                strategy = (selection, replacement, ratio)
                rows += protection_rows(options, attacker, data, parts, test, emb, strategy, adaptive, clean, results,
                                        noise)
    return rows


def floor_row(attacker: ExposureAttack, data: ExposureData, test: ExposurePairs, seed: int, noise: str = "secure") -> dict:
    """The no-information floor (module docstring): the frozen attacker on test slates whose
    every item is drawn uniformly."""
    floor = ExposurePerturbation(1.0, seed=seed, noise=noise).fit(data.pairs).perturb(test)
    return {"selection": "none (every item uniform)", "replacement": "uniform", "L": 1.0, "attacker": FLOOR,
            **protection_point(attacker, floor, data.source == "simulated")}  # fmt: skip


def protection_rows(options: ExposureOptions, attacker: ExposureAttack, data: ExposureData, parts: dict, test: ExposurePairs,
                     emb: Any, strategy: tuple[str, str, float], adaptive: bool, clean: dict, results: Results,
                     noise: str = "secure") -> list[dict]:  # fmt: skip
    """Rows of one (selection, replacement, L): frozen attacker, and adaptive if asked."""
    opts = options.protection
    selection, replacement, ratio = strategy
    base = {"selection": selection, "replacement": replacement, "L": ratio}
    if ratio == 0:
        rows = [{**base, "attacker": "frozen", **clean}]
        return rows + ([{**base, "attacker": "adaptive", **clean}] if adaptive else [])
    seed = options.seeds[0]
    defence = ExposurePerturbation(ratio, selection, replacement, opts.reference, opts.mode, opts.exclude_slate,
                                   options.attacker.batch_size, seed, opts.batch_pool, noise)  # fmt: skip
    defence.fit(data.pairs, emb)
    perturbed = defence.perturb(test)
    simulated = test.next_items is not None
    with results.timed("protection:frozen"):
        rows = [{**base, "attacker": "frozen", **protection_point(attacker, perturbed, simulated)}]
    if adaptive:
        with results.timed("protection:adaptive"):
            retrained = make_attack(options, attacker.encoder, attacker.decoder, seed)
            retrained.fit(defence.perturb(parts["train"]), defence.perturb(parts["valid"]))
            rows.append({**base, "attacker": "adaptive", **protection_point(retrained, perturbed, simulated)})
    return rows


def judge_rows(rows: list[dict]) -> list[dict]:
    """Each row's ``change vs L = 0``: ``judge_defence`` on the paired (same pairs, bootstrap
    over users) change in Rec*@10 against the same attacker and strategy at L = 0 (the floor
    against the frozen clean attack); "backfires" when the attacker gains."""
    clean = {(r["selection"], r["replacement"], r["attacker"]): r for r in rows if r["L"] == 0}
    frozen = next((r for r in rows if r["L"] == 0 and r["attacker"] == "frozen"), None)
    out = []
    for r in rows:
        ref = frozen if r["attacker"] == FLOOR else clean.get((r["selection"], r["replacement"], r["attacker"]))
        if ref is None or ref is r:
            out.append({**r, "change vs L = 0": "reference"})
            continue
        _, _, change = paired_difference_interval(weighted_mean(r["pair_recall"]), weighted_mean(ref["pair_recall"]), r["users"])
        out.append({**r, "change vs L = 0": judge_defence(change, "Rec*@10").text})
    return out
