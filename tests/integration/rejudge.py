"""Re-judging a run by hand: the verdict rule as the report's sentence states it, in a few lines
written apart from ``recprivacy.metrics.verdict`` (never calling it), applied to the numbers
``results.json`` records under ``verdicts``."""

from __future__ import annotations

from typing import Any

MIN_GROUP = 10  # the report's rule sentence: "fewer than 10 members or fewer than 10 non-members"


def word(record: dict[str, Any]) -> str:
    """The verdict word the rule sentence gives a record's own numbers."""
    kind, v, m, s = record.get("kind", "attack"), record["value"], record["margin"], record.get("sample")
    if kind == "secondary":
        return "secondary"
    if not (v["resolvable"] and m["resolvable"]):
        return "not resolvable"
    if kind == "reference":
        if record["attack"].startswith("target utility"):
            return "above" if m["low"] > 0 else "not above"
        return "costs" if m["high"] < 0 else "gains" if m["low"] > 0 else "no measurable cost"
    if s is not None and (s["positives"] < MIN_GROUP or (s["negatives"] is not None and s["negatives"] < MIN_GROUP)):
        return "not enough users"
    if kind == "defence":
        return "backfires" if m["low"] > 0 else "reduces" if m["high"] < 0 else "no measurable change"
    ceiling, chance = record.get("ceiling", 1.0), record.get("chance")
    if ceiling is not None and v["value"] >= ceiling and record["baseline"] >= ceiling:
        return "saturated"
    if chance is not None and v["high"] < chance:
        attack = "below blind guess"
    else:
        attack = "leaks" if m["low"] > 0 else "no leak measured" if m["high"] <= 0 else "inconclusive"
    return erasure_word(attack, record["control"]) if kind == "erasure" else attack


def erasure_word(forgotten: str, control: str) -> str:
    """The erasure rule sentence: the attack word on the forgotten users, then the positive control's."""
    if forgotten == "leaks":
        return "not erased"
    if control != "leaks":
        return "inconclusive: the attack cannot tell retained members either"
    return "not erased" if forgotten == "below blind guess" else "no evidence the forgotten users are distinguishable"


def check_audit(results: dict[str, Any], report_md: str) -> list[str]:
    """Every risk-summary row of an audit's ``results.json`` re-judged; returns the words."""
    records, rows = results["verdicts"], results["tables"]["risk_summary"]["rows"]
    assert [r["row"] for r in records] == rows, "the risk summary is not what results.json judged"
    for r in records:
        assert r["label"] == word(r), (r["attack"], r["metric"], r["label"], word(r))
        cells = r["row"]
        assert cells[5].startswith(r["label"] if r["kind"] != "secondary" else "secondary"), cells
        assert cells[5] in report_md and cells[0] in report_md
        if r["value"]["resolvable"] and r["margin"]["resolvable"]:
            value, baseline, margin = (float(cells[i].split(" ")[0]) for i in (2, 3, 4))
            assert f"{margin:+.4f}" == f"{value - baseline:+.4f}", cells  # value - baseline at the printed precision
            assert r["value"]["low"] <= r["value"]["value"] <= r["value"]["high"]
        if r["kind"] != "secondary":
            assert r["sample"] is not None and r["sample"]["text"] in cells[6], cells
    return [r["label"] for r in records]


def check_matrix(results: dict[str, Any]) -> list[str]:
    """Every attacker of every matrix cell re-judged, and each defence's change re-derived from
    the two values it is printed beside; returns the words."""
    for r in results["verdicts"]:
        assert r["label"] == word(r), (r["defence"], r["attack"], r["attacker"], r["label"], word(r))
        if "change" in r:
            change = r["change"]
            assert f"{change['value']:+.3f}" == f"{r['defended'] - r['undefended']:+.3f}", r
            expected = "backfires" if change["low"] > 0 else "reduces" if change["high"] < 0 else "no measurable change"
            assert r["change_label"] in (expected, "not enough users", "not resolvable"), r
    return [r["label"] for r in results["verdicts"]]
