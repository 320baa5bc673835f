"""Checks as data: rules a study's summaries must meet, written as mappings (YAML or JSON).

A rule names a ``metric`` and selects the summaries of it whose setting contains every
``where`` entry and no ``unless`` entry (a list value means "any of": ``{method: [ldp, apm]}``);
``says`` is the claim in words. It is one of four kinds (``docs/kit.md`` has an example of each):

* **one cell**: each selected summary's ``mean`` (default), interval ``low`` or ``high`` (``on``)
  against ``at_least``/``at_most`` (inclusive) and ``above``/``below`` (strict); the other kinds
  may add these bounds too. ``at_largest: L`` keeps only the selected cells at the largest ``L``
  among them.
* **one against others**: ``more_than``, ``less_than`` (strict), ``no_less_than`` or
  ``no_more_than`` (inclusive) name entries to replace, ``{decoder: point}``: the summary is
  compared with each summary of the metric whose setting is its own with those entries replaced
  (``{replacement: [popularity, batch_popularity]}``: with each present), times ``times`` plus
  ``offset`` (``no_less_than: {method: ldp}, offset: -0.005``: at most 0.005 below LDP's;
  ``times: 0.9``: at least 90% of it). A summary with no
  such other cell, or that is it, is not judged.
* **the best of a set** (``best: max`` or ``min``): the best selected summary against the best
  summary of the metric whose setting contains every ``against`` entry: strictly above (below),
  or with ``times: t`` at least t times it (at most 1/t of it). One verdict per rule.
* **a curve over a key** (``over: N``): the selected summaries grouped by their setting without
  ``N``, each group one curve in increasing ``N`` with ``min_points`` points or more (default and
  least 2): ``peaks_at: 10`` (the largest value is at N = 10; judged only with points on both
  sides of 10), ``non_increasing``/``non_decreasing``
  (no step rises/falls), ``rises`` (the last point above the first), ``varies_less_than:
  {decoder: [gru, lstm]}`` (the curve's range, largest minus smallest value, is below that of
  every curve over the same N with those entries replaced); the conditions given must all hold.

A NaN value (``aggregate``'s "not resolvable") is never judged. ``apply_rules`` gives one
:class:`Verdict` per judged summary or curve, or one verdict with ``passed=None`` for a rule that
judged none (nothing measured is never a pass). ``tally`` gives one ``[says, holds, evidence]``
row per rule and claim: ``says`` may name setting keys of the judged cell or curve in braces
(``"{decoder}: Recall@10 peaks at N = 10"``), one row per distinct text; the evidence is
``"k of n <counts>"``, or the rule's ``shows`` template over the row's facts (``FACTS``: ``k``,
``n`` and, for a row of one verdict, ``value``, ``other`` (the cell compared with: the nearest
one of several), ``others_low``/``others_high``, ``ratio`` (value over other), ``first``,
``last``, ``spread``, ``curve`` (``"N=5: 0.1234, N=10: 0.2345"``)). ``load_rules`` validates the
mappings (a one-line ``DataError`` naming the rule and field); ``read_rules`` reads a YAML file
of named lists of rules (a study's parts, e.g. ``papers/000/checks.yaml``).
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from recprivacy.errors import DataError
from recprivacy.experiments.kit.aggregate import Summary
from recprivacy.experiments.kit.judge import judge
from recprivacy.experiments.kit.rule import CURVE, FACTS, MAPPINGS, RULE_KEYS, SIDES, THAN, Rule, Verdict

BOUNDS = ("at_least", "at_most", "above", "below")
#: the keys each kind of rule may have besides ``COMMON`` (module docstring)
KINDS = {"one cell": BOUNDS, "one against others": (*THAN, "times", "offset", *BOUNDS), "the best of a set": ("best", "against", "times", *BOUNDS),
         "a curve": ("over", "min_points", *CURVE)}  # fmt: skip
COMMON = ("metric", "says", "where", "unless", "on", "at_largest", "counts", "shows")
TYPES = {**dict.fromkeys(("metric", "says", "counts", "shows", "over", "at_largest"), (str, "text")),
         **dict.fromkeys((*BOUNDS, "offset", "times", "peaks_at"), (int | float, "a number")),
         "min_points": (int, "a whole number"),
         **dict.fromkeys(MAPPINGS, (dict, "a mapping of setting keys to values")),
         **dict.fromkeys(("non_increasing", "non_decreasing", "rises"), (bool, "true or false"))}  # fmt: skip


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
    """One validated rule: known keys of the right types, one kind with what it needs."""
    if not isinstance(item, dict):
        raise DataError(f"{where}: expected a mapping with keys {', '.join(RULE_KEYS)}, got {item!r}")
    if True in item:
        raise DataError(f"{where}: a key reads as true: YAML reads an unquoted on (or yes) as true; write \"on\": ...")
    unknown = sorted(set(map(str, item)) - set(RULE_KEYS))
    if unknown:
        raise DataError(f"{where}: unknown key(s) {', '.join(unknown)}; expected {', '.join(RULE_KEYS)}")
    for key, (kind, text) in TYPES.items():
        if key in item and (not isinstance(item[key], kind) or (kind is not bool and isinstance(item[key], bool))):
            raise DataError(f"{where}: {key}: expected {text}, got {item[key]!r}")
    if "metric" not in item or "says" not in item:
        raise DataError(f"{where}: expected 'metric' and 'says'")
    for key, allowed in (("on", SIDES), ("best", ("max", "min"))):
        if key in item and item[key] not in allowed:
            raise DataError(f"{where}: {key}: expected one of {', '.join(allowed)}, got {item[key]!r}")
    _check_kind(item, where)
    _check_template(item.get("shows"), where)
    than = next((k for k in THAN if k in item), None)
    plain = {k: item[k] for k in ("on", *BOUNDS, "at_largest", "offset", "best", "times", "over", "min_points", "counts", "shows") if k in item}
    return Rule(item["metric"], item["says"], where=dict(item.get("where", {})), unless=dict(item.get("unless", {})), than=than,
                replace=dict(item[than]) if than else {}, against=dict(item.get("against", {})),
                curve={k: item[k] for k in CURVE if item.get(k, False) is not False}, **plain)  # fmt: skip


def _check_kind(item: dict, where: str) -> None:
    """The rule's kind (one against others, the best of a set, a curve, else one cell) has what
    it needs and no key of another kind."""
    kinds = [k for k in THAN if k in item] + [k for k in ("best", "over") if k in item]
    if len(kinds) > 1:
        raise DataError(f"{where}: expected one kind of rule, got {', '.join(kinds)} together")
    kind = next((name for name, keys in KINDS.items() if kinds and kinds[0] in keys), "one cell")
    stray = sorted(set(item) - set(COMMON) - set(KINDS[kind]))
    if stray:
        raise DataError(f"{where}: {', '.join(stray)}: not for {kind} rules")
    mappings = [k for k in MAPPINGS if k in item and k not in ("where", "unless") and not item[k]]
    need = {"one cell": "a number in at_least, at_most, above or below", "the best of a set": "against",
            "a curve": "one of " + ", ".join(CURVE)}.get(kind)  # fmt: skip
    present = {"one cell": any(k in item for k in BOUNDS), "the best of a set": "against" in item,
               "a curve": any(item.get(k, False) is not False for k in CURVE)}.get(kind, True)  # fmt: skip
    if mappings or not present:
        empty = f", not an empty {', '.join(mappings)}" if mappings else ""
        raise DataError(f"{where}: expected {need or 'a non-empty mapping'}{empty} ({kind} rule)")


def _check_template(shows: str | None, where: str) -> None:
    """``shows`` may name only ``FACTS``."""
    try:
        names = [name for _, name, _, _ in string.Formatter().parse(shows or "") if name is not None]
    except ValueError as error:
        raise DataError(f"{where}: shows: {error}") from error
    unknown = sorted(set(names) - set(FACTS))
    if unknown:
        raise DataError(f"{where}: shows: unknown fact(s) {', '.join(unknown) or '(empty braces)'}; expected {', '.join(FACTS)}")


def apply_rules(rules: Iterable[Rule], summaries: Sequence[Summary]) -> list[Verdict]:
    """Each rule against the summaries it selects (module docstring)."""
    out = []
    for rule in rules:
        out += judge(rule, summaries) or [Verdict(rule, None, None, None)]
    return out


def tally(verdicts: Iterable[Verdict]) -> list[list]:
    """One ``[says, holds, evidence]`` row per rule and claim text, in order, that judged at
    least one summary or curve; it holds when every judged one passed (module docstring)."""
    rows: dict[tuple[int, str], list[Verdict]] = {}
    for v in verdicts:
        if v.passed is not None:
            rows.setdefault((id(v.rule), _says(v)), []).append(v)
    return [[says, all(v.passed for v in found), _evidence(found)] for (_, says), found in rows.items()]


def _says(verdict: Verdict) -> str:
    try:
        return verdict.rule.says.format(**verdict.setting)
    except (KeyError, IndexError, ValueError) as error:
        raise DataError(f"rule {verdict.rule.says!r}: says names {error}, which the setting {dict(verdict.setting)} lacks") from error


def _evidence(found: list[Verdict]) -> str:
    rule, wins = found[0].rule, sum(bool(v.passed) for v in found)
    if rule.shows is None:
        return f"{wins} of {len(found)} {rule.counts}"
    facts = {"k": wins, "n": len(found), **(found[0].facts if len(found) == 1 else {})}
    try:
        return rule.shows.format(**facts)
    except KeyError as error:
        raise DataError(f"rule {rule.says!r}: shows names {error}, which a row of {len(found)} verdicts lacks") from error
