"""The matrix's report: a colour-coded figure and its table (rows defences, columns attacks,
each cell the stronger attacker's success with its interval, the verdict, and the defence's
change), one long table of every cell and attacker (written as CSV with the run), a
privacy-utility frontier (a panel per attack), and claimed against measured epsilon."""

from __future__ import annotations

import math
from typing import Any

from recprivacy.experiments.audit.answer import ANSWER_COLUMNS
from recprivacy.experiments.matrix.cells import DIGITS, Canaries, Change, Judged, MatrixCell, defence_change
from recprivacy.experiments.matrix.options import MatrixOptions
from recprivacy.experiments.matrix.plan import ATTACKS, AttackColumn, not_applicable
from recprivacy.experiments.matrix.records import Outcome
from recprivacy.experiments.matrix.release import release_text
from recprivacy.experiments.matrix.uploads import uploads_text
from recprivacy.experiments.matrix.world import Row
from recprivacy.experiments.results import Results
from recprivacy.metrics.epsilon import judge_claim
from recprivacy.metrics.verdict import RULE
from recprivacy.report.figures import FrontierPanel, frontier_plot, heatmap

LONG_COLUMNS = ["defence", "attack", "attacker", "strongest attack", "metric", "value", "low", "high", "baseline", "baseline name",
                "margin", "margin low", "margin high", "chance", "members (or users)", "non-members", "verdict",
                "change vs undefended", "defence verdict", "reason"]  # fmt: skip


def _fmt(j: Judged) -> str:
    """An attacker's value [95% CI] at the ``cells.DIGITS`` a defence's change is computed from."""
    return f"{j.value.value:.{DIGITS}f} [{j.value.low:.{DIGITS}f}, {j.value.high:.{DIGITS}f}]"


def attackers(cell: MatrixCell) -> list[tuple[str, Judged]]:
    """The cell's attackers that ran, by name (``frozen``, ``adaptive``)."""
    return [(name, j) for name, j in (("frozen", cell.frozen), ("adaptive", cell.adaptive)) if j is not None]


def cell_change(cell: MatrixCell, undefended: MatrixCell, attack: str) -> Change | None:
    """The change a defended cell's stronger attacker shows against the undefended cell's: the
    column's paired change where it measured one (``MatrixCell.change``), else ``cells.defence_change``;
    None for the undefended cell or when either has no attacker."""
    if cell.best is None or undefended.best is None or cell is undefended:
        return None
    return cell.change or defence_change(cell.best, undefended.best, attack)


def change_text(change: Change) -> str:
    """The change, its interval, the undefended value it is taken from and its verdict word."""
    e, d = change.estimate, DIGITS
    return f"change {e.value:+.{d}f} [{e.low:+.{d}f}, {e.high:+.{d}f}] vs {change.undefended:.{d}f} undefended: {change.verdict.label}"


def cell_headline(cell: MatrixCell, change: Change | None) -> str:
    """The stronger attacker's value [95% CI], which attacker it is and its verdict word, then
    the defence's change: the printed value minus the printed undefended value."""
    which = f"{cell.best_name} {cell.best.attack}" if cell.best.attack else cell.best_name
    text = f"{_fmt(cell.best)} {which}, {cell.best.verdict.label}"
    return f"{text}; {change_text(change)}" if change else text


def cell_text(cell: MatrixCell, change: Change | None, channel: str | None = None) -> str:
    """A matrix cell: the ``cell_headline``, then the other attacker (or why it did not run), then
    the readings beside the verdict's (``MatrixCell.beside``). ``channel``: the defence protects another channel than the attack observes and that is the
    only reason the cell is empty (``plan.not_applicable``): the cell reads "—", the table's one
    note names each such defence's channel (``not_applicable_note``) and the long table keeps the
    whole reason."""
    if cell.best is None:
        return "—" if channel else cell.reason
    text = cell_headline(cell, change)
    if cell.frozen is None or cell.adaptive is None:
        text = f"{text}; {cell.reason}"
    elif cell.adaptive is not cell.frozen:
        name, other = next((n, j) for n, j in attackers(cell) if n != cell.best_name)
        text = f"{text}; {name} {_fmt(other)}, {other.verdict.label}"
    return text + "".join(f"; {name}: {_fmt(j)} {j.attack}, {j.verdict.label}" for name, j in cell.beside.items())


def _other_channel(world: Row, attack: AttackColumn) -> str | None:
    """The world's channel when its cell for ``attack`` is empty only because of it."""
    reason = not_applicable(attack, world.spec)
    return world.spec.protects if reason is not None and world.cells[attack.key].reason == reason else None


def not_applicable_note(worlds: list[Row]) -> str:
    """One note for every "—" cell: which defences protect which other channel."""
    channels: dict[str, list[str]] = {}
    for w in worlds:
        if any(_other_channel(w, a) for a in ATTACKS):
            channels.setdefault(w.spec.protects, []).append(w.spec.title)
    if not channels:
        return ""
    which = "; ".join(f"{', '.join(titles)} protect{'s' if len(titles) == 1 else ''} {channel}"
                      for channel, titles in channels.items())  # fmt: skip
    return (f"; — : the defence protects another channel than the column's attack observes, so the cell does not apply "
            f"({which}; the long table says why)")


def render(results: Results, outcome: Outcome, options: MatrixOptions, canaries: Canaries) -> None:
    """Add the matrix's tables, figures and sections to ``results`` (``outcome``: the rows and
    the tables of the sequential-model defences and the upload mechanisms, ``records.Outcome``)."""
    worlds = outcome.rows
    undefended = worlds[0].cells
    changes = {(w.spec.key, a.key): cell_change(w.cells[a.key], undefended[a.key], a.title) for w in worlds for a in ATTACKS}
    rows = [[w.spec.title] + [cell_text(w.cells[a.key], changes[w.spec.key, a.key], _other_channel(w, a)) for a in ATTACKS]
            + [_utility(w), w.statement.sentence()] for w in worlds]  # fmt: skip
    columns = ["defence"] + [f"{a.title} ({a.metric}; observes {a.observes})" for a in ATTACKS] + ["utility cost", "privacy statement"]
    table = results.add_table("matrix", columns, rows, "Each cell: the stronger attacker's success [95% CI; membership and "
                              "interactions: 1 - 0.05/m for the best of m attacks], which attacker, its verdict against the strongest "
                              "baseline; the defence's change = that value minus the undefended "
                              f"value printed beside it; then the other attacker{not_applicable_note(worlds)}")  # fmt: skip
    long = results.add_table("matrix-cells", LONG_COLUMNS, _long_rows(worlds, changes), "Every cell and attacker (also as CSV)")
    results.verdicts.extend(verdict_records(worlds, changes))
    figures = [_figure(results, worlds, changes), _frontier(results, worlds, options)]
    backfires = [f"{w.spec.title} against {a.title}" for w in worlds for a in ATTACKS
                 if (c := changes[w.spec.key, a.key]) is not None and c.verdict.label == "backfires"]  # fmt: skip
    text = [_intro(options, canaries), RULE, release_text(options.release, outcome.target)]
    if undefended["uploads"].utility is not None:  # the uploads column ran
        text.append(uploads_text(options.uploads, undefended["uploads"]))
    if backfires:
        text.append("**Defences that backfire** (the attack gains, interval of the change above zero): "
                    + "; ".join(backfires) + ".")  # fmt: skip
    results.add_section("At a glance", "Rows are defences, columns attacks. Each cell names the stronger attacker's verdict "
                        "and, in a defended row, the defence's; the intervals, samples and attackers are in the table "
                        "below, the privacy-utility frontier after it.", [], figures[:1])  # fmt: skip
    answer = results.add_table("answer", ANSWER_COLUMNS, answer_rows(worlds, changes),
                               "One line per attack: its verdict where it first applies (the undefended row, else the "
                               "first defence it observes), the cheapest and the strongest of the defences that reduce it, "
                               "each with its change and utility change, and the defences that backfire")  # fmt: skip
    results.add_section("The answer by attack", "The heat map in words, as `recprivacy matrix` prints it on the terminal.",
                        [answer])  # fmt: skip
    results.add_section("Attack x defence matrix", "\n\n".join(text), [table, long], figures[1:])
    uploads = results.add_table("matrix-epsilon-uploads", ["defence (paper 004)", "claimed ε", "δ", "accountant",
                                                           "unit of privacy", "ROC lower bound (95%)",
                                                           "largest bound this sample can show", "reading"],
                                outcome.mechanisms, "Per-release audits of the upload "
                                "defences (their own perturb, clipping included); module experiments.matrix.mechanisms")  # fmt: skip
    claims, utility = outcome.sequential
    sequential_utility = results.add_table(
        "matrix-sequential-utility", ["defence", "Recall@10", "low", "high", "Recall@10 of its backbone undefended", "change",
                                      "change low", "change high"], utility,
        "Utility cost of the sequential-model defences: Recall@10 on the members' test split against the same SR-GNN "
        "trained without the defence on the same data (paired bootstrap over users)")  # fmt: skip
    results.add_section("Claimed against measured epsilon", _epsilon_text(options.sequential),
                        [_epsilon_table(results, worlds, claims), uploads, sequential_utility])  # fmt: skip
    statements = [[w.spec.title, w.statement.sentence(), w.statement.unit, w.statement.scope, w.statement.accountant,
                   " ".join(w.statement.notes), w.statement.noise] for w in worlds]  # fmt: skip
    results.add_section("Privacy statements", "", [results.add_table(
        "matrix-statements", ["defence", "claim", "protects", "scope", "accountant", "notes", "noise"], statements,
        "Each defence's privacy_statement(), one field per column")])  # fmt: skip


#: each column's risk in a few words (the answer's risk column)
RISKS = {"membership": "membership", "interactions": "interactions", "attribute": "attribute (lists)",
         "exposure": "exposure", "canaries": "canary membership", "recovery": "release recovery",
         "uploads": "attribute (uploads)"}  # fmt: skip


def answer_rows(worlds: list[Row], changes: dict[tuple[str, str], Change | None]) -> list[list[str]]:
    """One answer line (``audit.answer.ANSWER_COLUMNS``) per attack column that was measured: the
    stronger attacker's verdict and value where the attack first applies (the undefended row, else
    the first defence whose channel it observes), the defences that reduce it (``_reductions``) and
    those that backfire."""
    rows = []
    for a in ATTACKS:
        measured = [w for w in worlds if w.cells[a.key].best is not None]
        if not measured:
            continue
        first, best = measured[0], measured[0].cells[a.key].best
        where = "undefended" if first is worlds[0] else f"under {first.spec.title}"
        finding = f"{a.metric} {best.value.value:.2f} [{best.value.low:.2f}, {best.value.high:.2f}] {where}"
        word = {w.spec.key: c.verdict.label for w in measured[1:] if (c := changes[w.spec.key, a.key]) is not None}
        reduced = [w for w in measured[1:] if word.get(w.spec.key) == "reduces"]
        if reduced:
            finding += "; " + _reductions(reduced, a.key, changes)
        elif first is worlds[0] and len(measured) > 1:
            finding += "; no defence measurably reduces it"
        if backfire := [w.spec.title for w in measured[1:] if word.get(w.spec.key) == "backfires"]:
            finding += "; backfires: " + ", ".join(backfire)
        rows.append([RISKS[a.key], best.verdict.label, finding, str(best.sample or "-")])
    return rows


def _reductions(reduced: list[Row], key: str, changes: dict[tuple[str, str], Change | None]) -> str:
    """Of the defences whose change reads "reduces": the cheapest (the smallest utility loss, among
    those whose utility was measured) and the strongest (the most negative change), each with its
    change and utility change; one name when they are the same defence."""
    def said(w: Row) -> str:
        return f"{w.spec.title} ({changes[w.spec.key, key].estimate.value:+.2f}{_cost(w)})"

    strongest = min(reduced, key=lambda w: changes[w.spec.key, key].estimate.value)
    priced = [w for w in reduced if w.utility is not None]
    cheapest = max(priced, key=lambda w: w.utility[2].value) if priced else strongest
    if cheapest is strongest:
        return f"reduced most and most cheaply by {said(strongest)}"
    return f"cheapest reduction: {said(cheapest)}; strongest: {said(strongest)}"


def _cost(world: Row) -> str:
    """``, utility Recall@10 -0.198`` (the row's utility change), or nothing when not measured."""
    if world.utility is None:
        return ""
    name, _, change = world.utility
    return f", utility {name.split(' (')[0]} {change.value:+.3f}"


def _utility(world: Row) -> str:
    if world.utility is None:
        return "not measured"
    name, value, change = world.utility
    return f"{name}: {value.value:.4f}, change {change.value:+.4f} [{change.low:+.4f}, {change.high:+.4f}]"


def _long_rows(worlds: list[Row], changes: dict[tuple[str, str], Change | None]) -> list[list]:
    """One row per attacker of every cell (one row without numbers for a cell without one)."""
    rows = []
    for w in worlds:
        for a in ATTACKS:
            cell, change = w.cells[a.key], changes[w.spec.key, a.key]
            tail = [change_text(change) if change else "", change.verdict.label if change else "", cell.reason]
            if cell.best is None:
                rows.append([w.spec.key, a.key, "", "", a.metric] + [None] * 11 + [""] + tail)
            for name, j in [*attackers(cell), *cell.beside.items()]:
                s = j.sample
                rows.append([w.spec.key, a.key, name, j.attack or "", a.metric, j.value.value, j.value.low, j.value.high, j.baseline,
                             j.baseline_name, j.margin.value, j.margin.low, j.margin.high, j.chance,
                             s.positives if s else None, s.negatives if s else None, j.verdict.text]
                            + (tail if name in ("frozen", "adaptive") else ["", "", cell.reason]))  # fmt: skip
    return rows


def verdict_records(worlds: list[Row], changes: dict[tuple[str, str], Change | None]) -> list[dict[str, Any]]:
    """``Results.verdicts`` of the matrix: every attacker of every cell with the numbers it was
    judged on (``cells.Judged.record``), whether it is the cell's stronger attacker, and in a
    defended cell the defence's change (``cells.Change.record``); then the readings beside the
    verdict's (``MatrixCell.beside``), which are not the cell's stronger attacker and carry no change."""
    records = []
    for w in worlds:
        for a in ATTACKS:
            cell, change = w.cells[a.key], changes[w.spec.key, a.key]
            records += [{"section": "matrix", "kind": "attack", "defence": w.spec.key, "attack": a.key, "attacker": name,
                         "metric": a.metric, "best": j is cell.best, **j.record(),
                         **(change.record() if change else {})} for name, j in attackers(cell)]  # fmt: skip
            records += [{"section": "matrix", "kind": "attack", "defence": w.spec.key, "attack": a.key, "attacker": name,
                         "metric": a.metric, "best": False, **j.record()} for name, j in cell.beside.items()]  # fmt: skip
    return records


def glance_text(cell: MatrixCell, change: Change | None) -> str:
    """A heat-map cell: the stronger attacker's verdict word and margin over its baseline, then
    in a defended cell the defence's verdict word and change; "—" where the cell does not apply."""
    if cell.best is None:
        return "—"
    text = f"{cell.best.verdict.label}\nmargin {cell.best.margin.value:+.{DIGITS}f}"
    return f"{text}\n{change.verdict.label}\nchange {change.estimate.value:+.{DIGITS}f}" if change else text


def _figure(results: Results, worlds: list[Row], changes: dict[tuple[str, str], Change | None]) -> str:
    """The heat map: colour = the stronger attacker's margin over its baseline, text = the verdicts."""
    grid = [[c.best.margin.value if (c := w.cells[a.key]).best else math.nan for a in ATTACKS] for w in worlds]
    text = [[glance_text(w.cells[a.key], changes[w.spec.key, a.key]) for a in ATTACKS] for w in worlds]
    columns = [f"{a.title} ({a.metric})" for a in ATTACKS]
    png = heatmap(grid, [w.spec.title for w in worlds], columns, colorbar="margin over the strongest baseline",
                  cell_text=text, centre=0.0, size=(3.4 + 1.45 * len(ATTACKS), 1.6 + 0.62 * len(worlds)))  # fmt: skip
    return results.add_figure("matrix", png, "Each cell: the stronger attacker's verdict and its margin over the strongest "
                              "baseline on the column's metric (colour: red above the baseline, blue below); in a defended "
                              "row then the defence's verdict and change against the no-defence row; '—': the defence does "
                              "not change what the attack observes (the table says why)")  # fmt: skip


def metric_name(attack: AttackColumn, options: Any) -> str:
    """The column's metric with its k and what it is measured on."""
    names = {"membership": f"ROC AUC (top-{options.membership.k} lists)",
             "interactions": f"ROC AUC (top-{options.interactions.k} lists, held-out pairs)", "attribute": f"balanced accuracy (top-{options.k} lists)",
             "recovery": f"Recall@{options.release.attack_k} of the replaced items"}  # fmt: skip
    return names.get(attack.key, attack.metric)


def _frontier(results: Results, worlds: list[Row], options: Any) -> str:
    """One privacy-utility frontier: a panel per attack, a numbered point per defence that applies."""
    panels = [p for a in ATTACKS if (p := _frontier_panel(worlds, a, options)).points]
    png = frontier_plot(panels, [w.spec.title for w in worlds])
    return results.add_figure("matrix-frontier", png, "Privacy-utility frontier, one panel per attack: each defence that "
                              "applies is a numbered point, its utility change against no defence (x, paired bootstrap "
                              "interval) and the stronger attacker's success (y, its interval as in the table); better is "
                              "right (utility kept) and low (attack weaker); the grey line joins the defences no other beats "
                              "on both; the dashed line is the strongest baseline of the first row the attack applies to")  # fmt: skip


def _frontier_panel(worlds: list[Row], attack: AttackColumn, options: Any) -> FrontierPanel:
    points, utilities = {}, []
    for w in worlds:
        cell = w.cells[attack.key]
        if cell.best is None or (utility := cell.utility or w.utility) is None:
            continue
        name, _, change = utility
        utilities.append(name)
        v = cell.best.value
        points[w.spec.title] = ((change.value, change.low, change.high), (v.value, v.low, v.high))
    first = next((w for w in worlds if w.cells[attack.key].best is not None), None)
    return FrontierPanel(attack.title, "utility change vs no defence: " + "; ".join(dict.fromkeys(utilities)),
                         f"{metric_name(attack, options)}, stronger attacker", points,
                         first.cells[attack.key].best.baseline if first else None,
                         f"strongest baseline ({first.spec.title if first else ''})")  # fmt: skip


def _epsilon_table(results: Results, worlds: list[Row], sequential: list[list]) -> str:
    rows = []
    for w in worlds:
        eps, s = w.cells["canaries"].epsilon, w.statement
        if not eps or not (s.formal or w is worlds[0]):  # a row without a claim: its canary cell measures it
            continue
        measured = max(eps["roc_lower"], eps["one_run"])
        check = judge_claim(s.epsilon, measured, "the larger of the two bounds")
        rows.append([w.spec.title, s.epsilon if s.formal else None, s.delta, s.accountant, s.unit, s.scope, eps["roc_lower"],
                     eps["one_run"], f"{eps['one_run_correct']} of {eps['one_run_guesses']}", check.text])  # fmt: skip
    rows += sequential
    return results.add_table("matrix-epsilon", ["defence", "claimed ε", "δ", "accountant", "unit of privacy", "scope",
                                                "ROC lower bound (95%)", "one-run lower bound (95%)", "one-run guesses right",
                                                "reading"], rows, "Claimed against measured ε (canary audit)")  # fmt: skip


def _epsilon_text(o: Any) -> str:
    return ("Each row with a trained model was audited with canaries planted in its one training run: the ROC lower bound "
            "(Clopper-Pearson, Kairouz et al.) and the one-run bound (Steinke, Nasr and Jagielski 2023; pure-DP test, "
            "guesses on the top and bottom canaries). Both are lower bounds at 95% confidence: one above the claim means the "
            "guarantee is broken; one below it is consistent with the claim and proves nothing more. The canary attacker "
            "reads only the item factors (DPMF's claim covers the item factor matrix). The upload defences of paper 004 (APM, "
            "uniform LDP, Gaussian) have matrix rows of their own federated system, but their whole-run claims (basic "
            "composition over every uploaded scalar and round) are far beyond any test; their own perturbation code is "
            "audited per release below. The sequential-model defences of paper 002 (rows marked SR-GNN: "
            f"{', '.join(o.defences) or 'none selected'}) are each trained once, with reduced training ({dict(sorted(o.params.items()))}), on the "
            f"data with up to {o.canaries} canaries (one per user, an unseen item appended last with probability 1/2) and "
            "scored by the model's standardised score of the canary item for the user's canary-free sequence "
            "(`experiments.matrix.sequential`). DP-SGD's claim is per training sample, the unit a canary adds; DIPSGNN's and "
            "EdgeRand's are per edge of the input graph, which an appended label is not, so their rows measure leakage "
            "outside the claimed unit (said in the row).")


def _interaction_attackers(o: Any) -> str:
    """What the interactions column's attackers are, for the introduction."""
    if o.references == 0:
        return ("the better of the seen-item filter and the list neighbourhood against the strongest of item popularity, "
                "the user's history similarity and a blind guess, intervals at 1 - 0.05/2 = 97.5%; the attacks have no "
                "trained part, so frozen and adaptive coincide")  # fmt: skip
    adaptive = ("the adaptive attacker's trained the way the row's model was, defence included" if o.adaptive
                else "no adaptive references (study_options.interactions.adaptive = false)")  # fmt: skip
    return (f"the best of the seen-item filter, the list neighbourhood and the reference-calibrated filter ({o.references} "
            f"references trained without the candidate pairs: the frozen attacker's as the undefended target, {adaptive}) "
            "against the strongest of item popularity, the user's history similarity, the references' rankings without "
            "the target and a blind guess, intervals at 1 - 0.05/3 = 98.3%")  # fmt: skip


def _intro(options: Any, canaries: Canaries) -> str:
    o, o_m = options.exposure, options.membership
    selected = "" if options.columns is None else (
        f"This run measured only the columns {', '.join(options.columns)} (study_options.columns); the others read "
        "\"not measured\". ")  # fmt: skip
    return selected + (
        f"Rows are defences, columns attacks. Membership inference runs the audit's membership attacks on top-{o_m.k} "
        f"lists (paper 001's MLP on a shadow, LiRA online and offline and RMIA on {o_m.n_references} references, statistics "
        "of the served lists; the frozen attacker's shadow and references are of the undefended algorithm, the "
        "adaptive attacker's are trained under the row's defence) and names the strongest in each cell; its interval "
        "is at 1 - 0.05/7 = 99.3% (Bonferroni: the best of 7 attacks chosen on the users it is judged on). "
        f"Interaction-level membership (the audit's interaction_membership section on every row) asks which of a member's "
        f"(user, item) pairs trained the row's model, from the top-{options.interactions.k} list served to the member: up "
        f"to {options.interactions.per_user} training pairs per member against as many **held-out** pairs (items the "
        "member really had, held out of training: the verdict's non-members) and as many never-had pairs (the easy "
        f"non-members, shown beside it); {_interaction_attackers(options.interactions)}; every row attacks the same "
        "pairs, so the defence's change has a paired bootstrap interval (its value is still the two printed values' "
        "difference). "
        f"Attribute inference guesses `{options.attribute}` from top-{options.k} lists "
        f"(attackers {', '.join(options.attackers)}, trained on {options.zeta:.0%} of users, {options.seeds} splits pooled); "
        f"the exposure attacker {o.attacker} (dim {o.dim}, at most {o.n_epochs} epochs: reduced training) reads one slate of "
        f"{o.slate_size} items for the user's {o.history_len} recent clicks; the canary attack scores {len(canaries.users)} "
        f"canary interactions, {int(canaries.included.sum())} planted. The *frozen* attacker is trained on the undefended "
        "world, the *adaptive* one knows the defence and retrains on defended data. Each attacker is judged against the "
        "strongest baseline on the same metric and k, what the adversary knows without the target (balanced accuracy: "
        "1/C for C classes; Recall@10: the 10-item popularity or shown-items guess; ROC AUC: 0.5, and for membership "
        "statistics of the users' own histories), and each defence by the change it causes in the stronger attacker's "
        "success: the cell's value minus the undefended value printed beside it, both as printed (3 decimals), with an "
        "unpaired interval (`intervals.unpaired_difference`). Each cell's sample is in the long table and results.json "
        "(`verdicts`). Cells that do not apply say why. DP-SGD, DIPSGNN and "
        "EdgeRand protect sequential (SR-GNN) models; with a centrally trained factor-model target they have no row here: "
        "their claims and utility costs are in the claimed-vs-measured epsilon section."
    )
