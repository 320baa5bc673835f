"""A matrix cell prints what its verdicts are derived from (issue 32): the defence's change is the
printed defended value minus the printed undefended value, an attack below a blind guess is shown
as it is (not flipped), and the defence's verdict follows from the printed numbers alone."""

from __future__ import annotations

import re
from decimal import Decimal
from types import SimpleNamespace

from recprivacy.experiments.matrix.cells import MatrixCell, judged
from recprivacy.experiments.matrix.plan import ATTACKS, DefenceSpec
from recprivacy.experiments.matrix.render import cell_change, cell_text, verdict_records
from recprivacy.metrics.intervals import Estimate, unpaired_difference
from recprivacy.metrics.verdict import Sample, judge_defence

SAMPLE = Sample(60, 60)
NUMBER = r"([+-]?\d+\.\d{3})"
CELL = re.compile(rf"^{NUMBER} \[{NUMBER}, {NUMBER}\] (frozen|adaptive), ([a-z ]+); change {NUMBER} \[{NUMBER}, {NUMBER}\] "
                  rf"vs {NUMBER} undefended: ([a-z ]+)(;|$)")  # fmt: skip


def auc(value: float, low: float, high: float, sample: Sample = SAMPLE):
    """An attacker's ROC AUC judged against chance (0.5)."""
    e = Estimate(value, low, high, "hand-made", 120)
    return judged(e, 0.5, "chance (0.5)", e.shifted(0.5), chance=0.5, sample=sample)


UNDEFENDED = MatrixCell(*[auc(0.66349, 0.6012, 0.72081)] * 2)


def parsed(text: str) -> dict:
    """The numbers and words of a defended cell, as a reader sees them."""
    match = CELL.match(text)
    assert match, text
    keys = ("value", "low", "high", "attacker", "label", "change", "change low", "change high", "undefended", "change label")
    return dict(zip(keys, match.groups()))


def test_the_printed_change_is_the_printed_defended_value_minus_the_printed_undefended_value():
    cell = MatrixCell(auc(0.46186, 0.38263, 0.54216), auc(0.41049, 0.35, 0.47))
    text = cell_text(cell, cell_change(cell, UNDEFENDED, "membership"))
    p = parsed(text)
    assert (p["value"], p["attacker"], p["undefended"]) == ("0.462", "frozen", "0.663")
    assert Decimal(p["change"]) == Decimal(p["value"]) - Decimal(p["undefended"]) == Decimal("-0.201")
    assert text.endswith("; adaptive 0.410 [0.350, 0.470], below blind guess")


def test_an_attack_below_a_blind_guess_says_so_and_is_not_flipped():
    below = auc(0.29448, 0.22634, 0.36907)
    assert below.verdict.label == "below blind guess"
    adaptive = auc(0.50713, 0.42615, 0.5919)
    # the stronger attacker is the one with the larger value, not a "flipped" 0.706
    assert MatrixCell(below, adaptive).best is adaptive
    alone = MatrixCell(below, None, "adaptive not run")
    change = cell_change(alone, UNDEFENDED, "membership")
    assert (change.defended, change.undefended) == (0.294, 0.663)
    assert change.estimate.value == 0.294 - 0.663 and change.verdict.label == "reduces"
    p = parsed(cell_text(alone, change))
    assert (p["value"], p["label"], p["change"]) == ("0.294", "below blind guess", "-0.369")


def read_estimate(text: str) -> Estimate:
    """The value [low, high] a cell starts with, as a reader reads it."""
    value, low, high = (float(x) for x in re.match(rf"^{NUMBER} \[{NUMBER}, {NUMBER}\]", text).groups())
    return Estimate(value, low, high, "read", 120)


def test_the_defence_verdict_follows_from_the_two_printed_values_and_intervals():
    undefended = read_estimate(cell_text(UNDEFENDED, None))
    labels = []
    for attacker in (auc(0.8, 0.75, 0.85), auc(0.66, 0.6, 0.72), auc(0.5, 0.45, 0.55)):
        cell = MatrixCell(attacker)
        text = cell_text(cell, cell_change(cell, UNDEFENDED, "membership"))
        p = parsed(text)
        change = unpaired_difference(read_estimate(text), undefended)
        assert f"{change.value:+.3f} [{change.low:+.3f}, {change.high:+.3f}]" == f"{p['change']} [{p['change low']}, {p['change high']}]"
        assert judge_defence(change, "membership").label == p["change label"]
        labels.append(p["change label"])
    assert labels == ["backfires", "no measurable change", "reduces"]


def test_too_few_members_read_not_enough_users_and_the_change_too():
    few = auc(0.9, 0.85, 0.95, Sample(6, 200))
    assert few.verdict.label == "not enough users"
    assert cell_change(MatrixCell(few), UNDEFENDED, "membership").verdict.label == "not enough users"


def test_every_judged_cell_is_recorded_with_the_numbers_it_was_judged_on():
    empty = {a.key: MatrixCell(reason="does not apply") for a in ATTACKS}
    defended = MatrixCell(auc(0.46186, 0.38263, 0.54216), auc(0.29448, 0.22634, 0.36907))
    worlds = [SimpleNamespace(spec=DefenceSpec("none", "no defence", "nothing"), cells={**empty, "membership": UNDEFENDED}),
              SimpleNamespace(spec=DefenceSpec("dp", "DP", "model training"), cells={**empty, "membership": defended})]
    changes = {(w.spec.key, a.key): cell_change(w.cells[a.key], worlds[0].cells[a.key], a.title) for w in worlds for a in ATTACKS}
    records = verdict_records(worlds, changes)
    assert [(r["defence"], r["attacker"], r["best"]) for r in records] == [
        ("none", "frozen", True), ("none", "adaptive", True), ("dp", "frozen", True), ("dp", "adaptive", False)]
    frozen, adaptive = records[2:]
    assert frozen["metric"] == "ROC AUC" and frozen["label"] == "inconclusive" and adaptive["label"] == "below blind guess"
    assert frozen["value"]["value"] == 0.46186 and frozen["margin"]["low"] == 0.38263 - 0.5 and frozen["baseline"] == 0.5
    assert frozen["chance"] == 0.5 and frozen["sample"]["positives"] == 60 and frozen["baseline_name"] == "chance (0.5)"
    assert (frozen["defended"], frozen["undefended"], frozen["change"]["value"]) == (0.462, 0.663, 0.462 - 0.663)
    assert frozen["change_label"] == adaptive["change_label"] == "reduces"  # -0.201, half-width 0.100
    assert "change" not in records[0]
