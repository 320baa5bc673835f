"""One rule against a study's summaries: the four kinds of ``kit.checks`` (its module docstring
says what each holds when), each giving the verdicts of what it could judge.

Decisions: a NaN value (not resolvable) is left out before anything is compared, so it is never
judged and never counts as another cell; a comparison with several other cells must hold
against each, and reports the nearest (``other``: the largest for ``more_than``/``no_less_than``,
the smallest for ``less_than``/``no_more_than``); curves are compared only over the same key
values, so a curve missing a point is not measured against a complete one.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable, Sequence

from recprivacy.experiments.kit.aggregate import Summary
from recprivacy.experiments.kit.cell import setting_key
from recprivacy.experiments.kit.measurement import Scalar
from recprivacy.experiments.kit.rule import Filter, Rule, Verdict, fits

OPS: dict[str, Callable[[float, float], bool]] = {"more_than": operator.gt, "less_than": operator.lt,
                                                   "no_less_than": operator.ge, "no_more_than": operator.le}  # fmt: skip
Curve = tuple[dict[str, Scalar], list[Summary]]


def judge(rule: Rule, summaries: Sequence[Summary]) -> list[Verdict]:
    """The verdicts of ``rule`` on the summaries it selects (none when it can judge none)."""
    selected = [s for s in summaries if rule.matches(s) and not math.isnan(_value(rule, s))]
    if rule.at_largest is not None:
        top = max((s.setting[rule.at_largest] for s in selected if rule.at_largest in s.setting), default=None)
        selected = [s for s in selected if rule.at_largest in s.setting and s.setting[rule.at_largest] == top]
    if rule.best is not None:
        return _best(rule, selected, summaries)
    if rule.over is not None:
        return _curves(rule, selected, summaries)
    if rule.than is not None:
        index = _index(rule, summaries)
        return [v for v in (_against_others(rule, s, index) for s in selected) if v is not None]
    return [Verdict(rule, s, _value(rule, s), rule.within(_value(rule, s)), setting=s.setting, facts={"value": _value(rule, s)})
            for s in selected]  # fmt: skip


def _value(rule: Rule, summary: Summary) -> float:
    return getattr(summary, rule.on)


def _index(rule: Rule, summaries: Sequence[Summary]) -> dict[str, Summary]:
    """The rule's metric's resolvable summaries by setting."""
    return {setting_key(s.setting): s for s in summaries if s.metric == rule.metric and not math.isnan(_value(rule, s))}


def replaced(setting: dict[str, Scalar], entries: Filter) -> list[dict[str, Scalar]]:
    """``setting`` with ``entries`` replaced, one setting per combination of list values, leaving
    out ``setting`` itself."""
    choices = [v if isinstance(v, list) else [v] for v in entries.values()]
    out = [{**setting, **dict(zip(entries, combo))} for combo in itertools.product(*choices)]
    return [s for s in out if s != setting]


def _compared(value: float, others: list[float], op: Callable[[float, float], bool], nearest: Callable, times: float = 1.0,
              offset: float = 0.0) -> dict:  # fmt: skip
    """The facts of a comparison of ``value`` with each of ``others`` (not empty), each scaled
    by ``times`` and moved by ``offset``."""
    other = nearest(others)
    return {"passed": all(op(value, times * o + offset) for o in others), "value": value, "other": other,
            "others_low": min(others), "others_high": max(others), "ratio": value / max(other, 1e-12)}  # fmt: skip


def _against_others(rule: Rule, summary: Summary, index: dict[str, Summary]) -> Verdict | None:
    """``summary`` against each cell with the rule's entries replaced; None when there is none."""
    found = [index[k] for k in map(setting_key, replaced(summary.setting, rule.replace)) if k in index]
    if not found:
        return None
    op = OPS[rule.than]
    nearest = max if rule.than in ("more_than", "no_less_than") else min
    times = 1.0 if rule.times is None else rule.times
    facts = _compared(_value(rule, summary), [_value(rule, s) for s in found], op, nearest, times, rule.offset)
    other = nearest(found, key=lambda s: _value(rule, s))
    return Verdict(rule, summary, facts["value"], facts.pop("passed") and rule.within(facts["value"]), other, summary.setting, facts)


def _best(rule: Rule, selected: list[Summary], summaries: Sequence[Summary]) -> list[Verdict]:
    """The best selected summary against the best of the ``against`` set (one verdict)."""
    others = [s for s in _index(rule, summaries).values() if fits(s.setting, rule.against)]
    if not selected or not others:
        return []
    pick = max if rule.best == "max" else min
    mine, theirs = pick(selected, key=lambda s: _value(rule, s)), pick(others, key=lambda s: _value(rule, s))
    value, other = _value(rule, mine), _value(rule, theirs)
    if rule.times is None:
        beats = value > other if rule.best == "max" else value < other
    else:
        beats = value >= rule.times * other if rule.best == "max" else value * rule.times <= other
    facts = {"value": value, "other": other, "others_low": other, "others_high": other, "ratio": value / max(other, 1e-12)}
    return [Verdict(rule, mine, value, beats and rule.within(value), theirs, mine.setting, facts)]


def curves(key: str, summaries: Sequence[Summary]) -> dict[str, Curve]:
    """The summaries that have ``key`` grouped by their setting without it (first-seen order),
    each group sorted by ``key``: {canonical setting: (setting, points)}."""
    out: dict[str, Curve] = {}
    for s in summaries:
        if key in s.setting:
            rest = {k: v for k, v in s.setting.items() if k != key}
            out.setdefault(setting_key(rest), (rest, []))[1].append(s)
    for _, points in out.values():
        points.sort(key=lambda s: s.setting[key])
    return out


def _curves(rule: Rule, selected: list[Summary], summaries: Sequence[Summary]) -> list[Verdict]:
    """Each curve of the selected summaries over ``rule.over`` with ``rule.min_points`` points or more."""
    every = curves(rule.over, list(_index(rule, summaries).values()))
    verdicts = []
    for setting, points in curves(rule.over, selected).values():
        if len(points) >= max(rule.min_points, 2):
            facts = _curve_facts(rule, setting, points, every)
            if facts is not None:
                verdicts.append(Verdict(rule, points[-1], facts["last"], facts.pop("passed"), None, setting, facts))
    return verdicts


def _curve_facts(rule: Rule, setting: dict[str, Scalar], points: list[Summary], every: dict[str, Curve]) -> dict | None:
    """The curve conditions of ``rule`` on one curve and the facts ``shows`` may name; None
    when one of them cannot be judged (no points on both sides of the peak, no other curve)."""
    xs, ys = [s.setting[rule.over] for s in points], [_value(rule, s) for s in points]
    facts = {"value": ys[-1], "first": ys[0], "last": ys[-1], "spread": max(ys) - min(ys),
             "curve": ", ".join(f"{rule.over}={x}: {y:.4f}" for x, y in zip(xs, ys))}  # fmt: skip
    held = []
    if "peaks_at" in rule.curve:
        peak = rule.curve["peaks_at"]
        if peak not in xs or not xs[0] < peak < xs[-1]:
            return None
        held.append(xs[ys.index(max(ys))] == peak)
    held += [all(a >= b for a, b in zip(ys, ys[1:]))] if "non_increasing" in rule.curve else []
    held += [all(a <= b for a, b in zip(ys, ys[1:]))] if "non_decreasing" in rule.curve else []
    held += [ys[-1] > ys[0]] if "rises" in rule.curve else []
    if "varies_less_than" in rule.curve:
        spreads = [max(v) - min(v) for v in _other_curves(rule, setting, xs, every)]
        if not spreads:
            return None
        facts.update(_compared(facts["spread"], spreads, operator.lt, min))
        held.append(facts.pop("passed"))
    return {**facts, "passed": all(held)}


def _other_curves(rule: Rule, setting: dict[str, Scalar], xs: list, every: dict[str, Curve]) -> list[list[float]]:
    """The values of each curve over the same key values whose setting is ``setting`` with the
    ``varies_less_than`` entries replaced."""
    out = []
    for other in map(setting_key, replaced(setting, rule.curve["varies_less_than"])):
        if other in every and [s.setting[rule.over] for s in every[other][1]] == xs:
            out.append([_value(rule, s) for s in every[other][1]])
    return out
