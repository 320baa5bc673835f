"""Checks as data: rules a study's summaries must meet, written as mappings (YAML or JSON).

A rule is ``{metric, where, on, at_least, at_most, says}``: the summaries of ``metric`` whose
setting contains every ``where`` entry, judged on their ``mean`` (default), interval ``low`` or
``high`` against ``at_least`` and/or ``at_most``; ``says`` is the claim in words. ``load_rules``
validates the mappings (a one-line ``DataError`` naming the rule and field); ``apply_rules``
gives one :class:`Verdict` per matching summary, or one verdict with ``passed=None`` for a rule
that no summary matched (nothing measured is never a pass).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from recprivacy.errors import DataError
from recprivacy.experiments.kit.aggregate import Summary
from recprivacy.experiments.kit.measurement import Scalar

SIDES = ("mean", "low", "high")
RULE_KEYS = ("metric", "where", "on", "at_least", "at_most", "says")


@dataclass(frozen=True)
class Rule:
    """One check (module docstring)."""

    metric: str
    says: str
    where: Mapping[str, Scalar] = field(default_factory=dict)
    on: str = "mean"
    at_least: float | None = None
    at_most: float | None = None

    def matches(self, summary: Summary) -> bool:
        return summary.metric == self.metric and all(summary.setting.get(k) == v for k, v in self.where.items())

    def holds(self, value: float) -> bool:
        return (self.at_least is None or value >= self.at_least) and (self.at_most is None or value <= self.at_most)


@dataclass(frozen=True)
class Verdict:
    """A rule applied to one summary (``summary``/``value`` None when none matched)."""

    rule: Rule
    summary: Summary | None
    value: float | None
    passed: bool | None


def load_rules(items: Sequence[Any], source: str = "checks") -> list[Rule]:
    """Rules from a list of mappings (module docstring)."""
    return [_rule(item, f"{source}[{n}]") for n, item in enumerate(items)]


def _rule(item: Any, where: str) -> Rule:
    if not isinstance(item, dict):
        raise DataError(f"{where}: expected a mapping with keys {', '.join(RULE_KEYS)}, got {item!r}")
    unknown = sorted(set(item) - set(RULE_KEYS))
    if unknown:
        raise DataError(f"{where}: unknown key(s) {', '.join(unknown)}; expected {', '.join(RULE_KEYS)}")
    if not isinstance(item.get("metric"), str) or not isinstance(item.get("says"), str):
        raise DataError(f"{where}: 'metric' and 'says' must be text")
    if item.get("on", "mean") not in SIDES:
        raise DataError(f"{where}: on: expected one of {', '.join(SIDES)}, got {item['on']!r}")
    if not isinstance(item.get("where", {}), dict):
        raise DataError(f"{where}: where: expected a mapping of setting keys to values")
    bounds = {k: item.get(k) for k in ("at_least", "at_most")}
    if all(v is None for v in bounds.values()) or any(v is not None and not isinstance(v, int | float) for v in bounds.values()):
        raise DataError(f"{where}: expected a number in at_least and/or at_most, got {bounds}")
    return Rule(item["metric"], item["says"], dict(item.get("where", {})), item.get("on", "mean"), **bounds)


def apply_rules(rules: Iterable[Rule], summaries: Sequence[Summary]) -> list[Verdict]:
    """Each rule against every summary it matches (module docstring)."""
    out = []
    for rule in rules:
        hits = [s for s in summaries if rule.matches(s)]
        out += [Verdict(rule, s, getattr(s, rule.on), rule.holds(getattr(s, rule.on))) for s in hits]
        if not hits:
            out.append(Verdict(rule, None, None, None))
    return out
