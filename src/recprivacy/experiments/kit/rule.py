"""A check's rule and its verdict (the vocabulary is ``kit.checks``' module docstring).

``Rule`` holds one validated rule (``checks.load_rules`` builds it), ``Verdict`` one judgement
(``kit.judge``), and ``fits`` the one matching of a setting against rule entries, where a list
value means "any of".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from recprivacy.experiments.kit.aggregate import Summary
from recprivacy.experiments.kit.measurement import Scalar

SIDES = ("mean", "low", "high")
THAN = ("more_than", "less_than", "no_less_than", "no_more_than")
CURVE = ("peaks_at", "non_increasing", "non_decreasing", "rises", "varies_less_than")
MAPPINGS = ("where", "unless", "against", *THAN, "varies_less_than")
RULE_KEYS = ("metric", "where", "unless", "on", "at_least", "at_most", "above", "below", "at_largest", *THAN, "offset", "best", "against",
             "times", "over", "min_points", *CURVE, "counts", "says", "shows")  # fmt: skip
FACTS = ("k", "n", "value", "other", "others_low", "others_high", "ratio", "first", "last", "spread", "curve")
Filter = Mapping[str, Scalar | list[Scalar]]


def fits(setting: Mapping[str, Scalar], entries: Filter) -> bool:
    """Whether ``setting`` has every entry (a list value: any of its values)."""
    return all(k in setting and (setting[k] in v if isinstance(v, list) else setting[k] == v) for k, v in entries.items())


@dataclass(frozen=True)
class Rule:
    """One check (module docstring); ``than`` is the one-against-others comparison's key."""

    metric: str
    says: str
    where: Filter = field(default_factory=dict)
    unless: Filter = field(default_factory=dict)
    on: str = "mean"
    at_least: float | None = None
    at_most: float | None = None
    above: float | None = None
    below: float | None = None
    at_largest: str | None = None
    than: str | None = None
    replace: Filter = field(default_factory=dict)
    offset: float = 0.0
    best: str | None = None
    against: Filter = field(default_factory=dict)
    times: float | None = None
    over: str | None = None
    min_points: int = 2
    curve: Mapping[str, Any] = field(default_factory=dict)
    counts: str = "settings"
    shows: str | None = None

    def matches(self, summary: Summary) -> bool:
        setting = summary.setting
        return (summary.metric == self.metric and fits(setting, self.where)
                and not any(fits(setting, {k: v}) for k, v in self.unless.items()))  # fmt: skip

    def within(self, value: float) -> bool:
        """Whether ``value`` meets the bounds: ``at_least``/``at_most`` inclusive, ``above``/``below`` strict."""
        return ((self.at_least is None or value >= self.at_least) and (self.at_most is None or value <= self.at_most)
                and (self.above is None or value > self.above) and (self.below is None or value < self.below))  # fmt: skip


@dataclass(frozen=True)
class Verdict:
    """A rule applied to one summary or curve (``summary``/``value`` None when it judged none).
    ``summary`` is the judged cell (a curve's last point, the best of a set), ``other`` the cell
    it was compared with, ``setting`` what ``says`` may name and ``facts`` what ``shows`` may."""

    rule: Rule
    summary: Summary | None
    value: float | None
    passed: bool | None
    other: Summary | None = None
    setting: Mapping[str, Scalar] = field(default_factory=dict)
    facts: Mapping[str, Any] = field(default_factory=dict)


