"""The matrix's answer line, by hand: of the defences whose change reads "reduces", the cheapest
is the one that loses least utility and the strongest the one with the most negative change; one
name when they coincide; a defence whose utility was not measured can be the strongest, not the
cheapest."""

from __future__ import annotations

from types import SimpleNamespace

from recprivacy.experiments.matrix.render import _reductions


def _row(key: str, utility_change: float | None) -> SimpleNamespace:
    utility = None if utility_change is None else ("Recall@10 (members' test)", None, SimpleNamespace(value=utility_change))
    return SimpleNamespace(spec=SimpleNamespace(key=key, title=key.upper()), utility=utility)


def _changes(**values: float) -> dict:
    return {(key, "membership"): SimpleNamespace(estimate=SimpleNamespace(value=v)) for key, v in values.items()}


def test_the_cheapest_and_the_strongest_reduction_are_named_with_their_costs():
    rows = [_row("a", -0.20), _row("b", -0.05), _row("c", -0.10)]
    text = _reductions(rows, "membership", _changes(a=-0.30, b=-0.02, c=-0.10))
    assert text == ("cheapest reduction: B (-0.02, utility Recall@10 -0.050); "
                    "strongest: A (-0.30, utility Recall@10 -0.200)")


def test_one_defence_that_is_both_is_named_once():
    rows = [_row("a", -0.01), _row("b", -0.20)]
    assert _reductions(rows, "membership", _changes(a=-0.40, b=-0.10)) == \
        "reduced most and most cheaply by A (-0.40, utility Recall@10 -0.010)"


def test_a_defence_without_a_measured_utility_is_never_the_cheapest():
    rows = [_row("a", None), _row("b", -0.30)]
    assert _reductions(rows, "membership", _changes(a=-0.50, b=-0.10)) == \
        "cheapest reduction: B (-0.10, utility Recall@10 -0.300); strongest: A (-0.50)"
