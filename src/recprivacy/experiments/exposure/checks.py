"""The ``exposure`` study's outcome against the paper's claims and the acceptance trends.

Each check is a row ``[claim, holds, evidence]``: the attack grid (sequence decoders beat
point-wise decoding; the best model at least twice the better blind guess listing k or k*M
items), the slate sweep (Figs. 6-7: Recall@10 peaks at N = 10; point-wise decoding varies
less with N) and the protection curves (Figs. 8-13: Rec* falls with L; uniform replacement
lowers it the most; dissimilar selection keeps more utility than random; similar selection
lowers Rec* more than dissimilar). The report says plainly which hold.

Decision (issue 35): the claims that compare one cell with one other cell (sequence against
point-wise decoding; one selection against another at the same L) are data, the rules of
``papers/000/checks.yaml`` applied by the study kit (``kit.checks``) to summaries built here
from the runs and rows; a rule the grid gives nothing to judge makes no row. The trends over a
whole curve or against the best of a set (peaks, monotone curves, the baselines, the floor)
stay code below: the kit's rules judge one cell, or one against one, not a curve.
"""

from __future__ import annotations

from functools import cache

from recprivacy.experiments.exposure.cells import CANDIDATES, mean_std
from recprivacy.experiments.exposure.grid import ROW_ARRAYS, ROW_KEYS, SYSTEM
from recprivacy.experiments.exposure.protection import FLOOR
from recprivacy.experiments.kit import Rule, Summary, aggregate, apply_rules, measurements, read_rules, tally
from recprivacy.experiments.reference import paper_file


@cache
def paper_rules() -> dict[str, list[Rule]]:
    """The rules of ``papers/000/checks.yaml`` by part (``attack``, ``protection``), read once."""
    return read_rules(paper_file("000", "checks.yaml", "checks"))


def rule_rows(part: str, summaries: list[Summary]) -> list[list]:
    """One row per rule of ``part`` that the summaries let it judge (``kit.checks.tally``)."""
    return tally(apply_rules(paper_rules()[part], summaries))


def attack_summaries(runs: dict) -> list[Summary]:
    """Every ``<candidates>/<metric>`` of each encoder + decoder over seeds, setting
    ``{kind: attack, encoder, decoder}`` (what the ``attack`` rules read)."""
    found = []
    for (e, d, seed), run in runs.items():
        values = {f"{mode}/{metric}": v for mode in CANDIDATES for metric, v in run[mode].items()}
        found += measurements(SYSTEM, "exposure", {"kind": "attack", "encoder": e, "decoder": d}, seed, values)
    return aggregate(found)


def protection_summaries(rows: list[dict], simulated: bool) -> list[Summary]:
    """Each protection row's numbers (one seed), setting ``{kind: protection, selection,
    replacement, L, attacker, slates}`` with ``slates`` "simulated" or "logged"."""
    slates = "simulated" if simulated else "logged"
    found = []
    for r in rows:
        setting = {"kind": "protection", **{k: r[k] for k in ROW_KEYS}, "slates": slates}
        found += measurements(SYSTEM, "exposure", setting, 0, {k: v for k, v in r.items() if k not in ROW_KEYS + ROW_ARRAYS})
    return aggregate(found)


def attack_checks(runs: dict, baselines: dict) -> list[list]:
    """The attack grid against the paper's claims (the ``attack`` rules) and the acceptance bar."""
    models = sorted({(e, d) for e, d, _ in runs})
    rec = {k: mean_std(runs, k, "all", "recall@10")[0] for k in models}
    rows = rule_rows("attack", attack_summaries(runs))
    best = max(rec, key=rec.get)
    for suffix, budget in (("", "k items"), ("@kM", "k*M items, the budget of a sequence decoder's M lists")):
        guess = max(v["recall@10"] for name, v in baselines["all"].items() if name.endswith("@kM") == bool(suffix))
        rows.append([f"best model ({best[0]}+{best[1]}) Recall@10 is at least twice the better baseline listing {budget}",
                     rec[best] >= 2 * guess, f"{rec[best]:.4f} vs {guess:.4f} ({rec[best] / max(guess, 1e-12):.1f}x)"])  # fmt: skip
    return rows


def sweep_checks(curves: dict[str, dict[int, float]]) -> list[list]:
    """The paper's trends for Figs. 6-7 (digest §7): Recall@10 of each decoder peaks at N = 10,
    and point-wise decoding varies less with N than the sequence decoders (Zhihu). ``curves``
    maps a decoder to {N: Recall@10}; decoders with fewer than two slate sizes are left out,
    the peak is checked only where N = 10 has slate sizes on both sides, and the spread only
    over sequence decoders run at the same slate sizes as point-wise decoding."""
    curves = {d: c for d, c in curves.items() if len(c) > 1}
    rows = []
    for decoder, curve in curves.items():
        if not (10 in curve and min(curve) < 10 < max(curve)):
            continue
        peak = max(curve, key=curve.get)
        rows.append([f"{decoder}: Recall@10 peaks at N = 10", peak == 10,
                     ", ".join(f"N={n}: {curve[n]:.4f}" for n in sorted(curve))])  # fmt: skip
    spread = {d: max(c.values()) - min(c.values()) for d, c in curves.items()}
    sizes = curves["point"].keys() if "point" in curves else None
    seq = [v for d, v in spread.items() if d != "point" and curves[d].keys() == sizes]
    if seq:
        rows.append(["point-wise decoding varies less with N than the sequence decoders", spread["point"] < min(seq),
                     f"range over N: point {spread['point']:.4f}, sequence {min(seq):.4f}-{max(seq):.4f}"])  # fmt: skip
    return rows


def protection_checks(rows: list[dict], simulated: bool) -> list[list]:
    """The issue's acceptance trends and the paper's protection claims (the ``protection``
    rules), checked on the rows."""
    frozen = [r for r in rows if r["attacker"] == "frozen"]
    out = _floor_check(rows, frozen)
    curves: dict[tuple[str, str], list[dict]] = {}
    for r in frozen:
        curves.setdefault((r["selection"], r["replacement"]), []).append(r)
    falls = [k for k, c in curves.items() if all(a["recall@10"] >= b["recall@10"] for a, b in zip(c, c[1:]))]
    out.append(["Rec* falls as L grows (frozen attacker), every strategy", len(falls) == len(curves),
                f"{len(falls)} of {len(curves)} strategies non-increasing in L"])  # fmt: skip
    return out + _uniform_check(frozen) + rule_rows("protection", protection_summaries(rows, simulated))


def _floor_check(rows: list[dict], frozen: list[dict]) -> list[list]:
    """The clean attack against its no-information floor (``protection`` module docstring)."""
    floor = [r for r in rows if r["attacker"] == FLOOR]
    clean = max((r for r in frozen if r["L"] == 0), key=lambda r: r["recall@10"], default=None)
    if not floor or clean is None:
        return []
    margin = clean["recall@10"] - floor[0]["recall@10"]
    return [["the clean attack leaks beyond its no-information floor (Rec* of the same attacker on wholly "
             "random slates); without that margin no defence can lower Rec*", margin > 0,
             f"{clean['recall@10']:.4f} at L = 0 vs {floor[0]['recall@10']:.4f} on random slates"]]  # fmt: skip


def _uniform_check(frozen: list[dict]) -> list[list]:
    """Uniform replacement gives the lowest Rec* at the largest L, per selection (where every
    selection ran uniform and at least one other replacement)."""
    top = max(r["L"] for r in frozen)
    per_sel: dict[str, dict[str, dict]] = {}
    for r in frozen:
        if r["L"] == top:
            per_sel.setdefault(r["selection"], {})[r["replacement"]] = r
    if not all("uniform" in reps and len(reps) > 1 for reps in per_sel.values()):
        return []
    ok = [sel for sel, reps in per_sel.items() if min(reps, key=lambda k: reps[k]["recall@10"]) == "uniform"]
    return [[f"uniform replacement lowers Rec* the most (L = {top})", len(ok) == len(per_sel),
             f"lowest for {len(ok)} of {len(per_sel)} selections"]]  # fmt: skip
