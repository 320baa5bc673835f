"""Checks as data: rules a study's summaries must meet, written as mappings (YAML or JSON).

A rule is ``{metric, where, unless, on, at_least, at_most, more_than, less_than, counts, says}``:
the summaries of ``metric`` whose setting contains every ``where`` entry and no ``unless`` entry
(``unless: {L: 0}`` leaves out the unperturbed cells), judged on their ``mean`` (default),
interval ``low`` or ``high`` against ``at_least`` and/or ``at_most`` (inclusive), or against a
second cell: ``more_than: {decoder: point}`` holds when the value is strictly above that of the
summary of the same metric whose setting is this one with those entries replaced
(``less_than``: strictly below). A summary that has no such other cell, or is that cell itself,
is not judged, nor is a NaN value (``aggregate``'s "not resolvable"). ``says`` is the claim in
words and ``counts`` what one judged summary is (``tally``'s "k of n <counts>").

``load_rules`` validates the mappings (a one-line ``DataError`` naming the rule and field);
``apply_rules`` gives one :class:`Verdict` per judged summary, or one verdict with
``passed=None`` for a rule that judged none (nothing measured is never a pass); ``tally`` gives
one ``[says, holds, evidence]`` row per rule that judged some. ``read_rules`` reads a YAML file
of named lists of rules (a study's parts, e.g. ``papers/000/checks.yaml``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from recprivacy.errors import DataError
from recprivacy.experiments.kit.aggregate import Summary
from recprivacy.experiments.kit.measurement import Scalar

SIDES = ("mean", "low", "high")
THAN = ("more_than", "less_than")
RULE_KEYS = ("metric", "where", "unless", "on", "at_least", "at_most", *THAN, "counts", "says")


@dataclass(frozen=True)
class Rule:
    """One check (module docstring)."""

    metric: str
    says: str
    where: Mapping[str, Scalar] = field(default_factory=dict)
    unless: Mapping[str, Scalar] = field(default_factory=dict)
    on: str = "mean"
    at_least: float | None = None
    at_most: float | None = None
    more_than: Mapping[str, Scalar] = field(default_factory=dict)
    less_than: Mapping[str, Scalar] = field(default_factory=dict)
    counts: str = "settings"

    def matches(self, summary: Summary) -> bool:
        setting = summary.setting
        return (summary.metric == self.metric and all(setting.get(k) == v for k, v in self.where.items())
                and not any(k in setting and setting[k] == v for k, v in self.unless.items()))  # fmt: skip

    def other(self, summary: Summary, summaries: Sequence[Summary]) -> Summary | None:
        """The cell a ``more_than``/``less_than`` rule compares ``summary`` with (None if absent or itself)."""
        setting = {**summary.setting, **self.more_than, **self.less_than}
        if setting == summary.setting:
            return None
        return next((s for s in summaries if s.metric == self.metric and s.setting == setting), None)

    def holds(self, value: float, other: float | None = None) -> bool:
        if other is not None and not (value > other if self.more_than else value < other):
            return False
        return (self.at_least is None or value >= self.at_least) and (self.at_most is None or value <= self.at_most)


@dataclass(frozen=True)
class Verdict:
    """A rule applied to one summary (``summary``/``value`` None when none matched); ``other``
    is the cell it was compared with (``more_than``/``less_than`` rules)."""

    rule: Rule
    summary: Summary | None
    value: float | None
    passed: bool | None
    other: Summary | None = None


def load_rules(items: Sequence[Any], source: str = "checks") -> list[Rule]:
    """Rules from a list of mappings (module docstring)."""
    return [_rule(item, f"{source}[{n}]") for n, item in enumerate(items)]


def read_rules(path: Path) -> dict[str, list[Rule]]:
    """The rules of a YAML file mapping part names to lists of rules (module docstring)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise DataError(f"cannot read the checks: {str(error).splitlines()[0]}", path) from error
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise DataError("expected a mapping of part names to lists of rules", path)
    return {str(part): load_rules(items, f"{path}: {part}") for part, items in data.items()}


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
    for key in ("where", "unless", *THAN):
        if not isinstance(item.get(key, {}), dict):
            raise DataError(f"{where}: {key}: expected a mapping of setting keys to values")
    than = {k: dict(item[k]) for k in THAN if k in item}
    if len(than) > 1 or any(not v for v in than.values()):
        raise DataError(f"{where}: expected one non-empty mapping in more_than or less_than, got {than}")
    if not isinstance(item.get("counts", ""), str):
        raise DataError(f"{where}: counts: expected text")
    bounds = {k: item.get(k) for k in ("at_least", "at_most")}
    if (all(v is None for v in bounds.values()) and not than) or any(v is not None and not isinstance(v, int | float) for v in bounds.values()):
        raise DataError(f"{where}: expected a number in at_least and/or at_most (or a more_than/less_than cell), got {bounds}")
    return Rule(item["metric"], item["says"], dict(item.get("where", {})), dict(item.get("unless", {})), item.get("on", "mean"),
                **bounds, **than, counts=item.get("counts", "settings"))  # fmt: skip


def apply_rules(rules: Iterable[Rule], summaries: Sequence[Summary]) -> list[Verdict]:
    """Each rule against every summary it matches (module docstring)."""
    out = []
    for rule in rules:
        found = [v for v in (_judge(rule, s, summaries) for s in summaries if rule.matches(s)) if v is not None]
        out += found or [Verdict(rule, None, None, None)]
    return out


def _judge(rule: Rule, summary: Summary, summaries: Sequence[Summary]) -> Verdict | None:
    """``rule`` on one matching summary; None when its value is NaN or it needs another cell
    that is absent or NaN."""
    value = getattr(summary, rule.on)
    if math.isnan(value):
        return None
    if not (rule.more_than or rule.less_than):
        return Verdict(rule, summary, value, rule.holds(value))
    other = rule.other(summary, summaries)
    if other is None or math.isnan(getattr(other, rule.on)):
        return None
    return Verdict(rule, summary, value, rule.holds(value, getattr(other, rule.on)), other)


def tally(verdicts: Iterable[Verdict]) -> list[list]:
    """One ``[says, holds, "k of n <counts>"]`` row per rule, in order, that judged at least one
    summary; it holds when every judged summary passed."""
    by_rule: dict[int, list[Verdict]] = {}
    for v in verdicts:
        if v.passed is not None:
            by_rule.setdefault(id(v.rule), []).append(v)
    rows = []
    for found in by_rule.values():
        wins = sum(bool(v.passed) for v in found)
        rows.append([found[0].rule.says, wins == len(found), f"{wins} of {len(found)} {found[0].rule.counts}"])
    return rows
