"""The answer that opens every audit report: one line per risk a section measured, in plain words.

Each line is a risk row of the risk summary whose verdict is on its primary metric (an attack) or
on a defence's change: the risk, the verdict word, what the strongest attack achieved (its number
and interval, the attack's name, against the strongest baseline, and for membership the share of members it finds
at 1% false positives beside the baseline's share; for interaction membership, one line per kind of non-member pair,
the share of training pairs) and the sample. An erasure run (``experiments.erasure``) answers with its
erasure row, its positive control and the attack before the deletion. The ``paper`` membership
protocol is reproduction, not the audit's answer, and is left to the risk summary. :func:`terminal_lines` fits the same lines to a
terminal's width, one line per risk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from recprivacy.experiments.audit.writer import Risk, SectionWriter

ANSWER_COLUMNS = ["risk", "verdict", "what the strongest attack achieves", "sample"]
RISK_NAMES = {"membership": "membership", "attribute": "attribute", "exposure": "exposure",
              "synthetic_release": "synthetic release", "interaction_membership": "interactions"}  # fmt: skip
#: who the TPR at 1% FPR of a section's answer line finds
FOUND = {"membership": "members", "erasure": "members", "interaction_membership": "training pairs"}
BEST = re.compile(r"best: (.+)\)$")
KIND = re.compile(r"\((\w+) non-members")
NAMED = re.compile(r"\(([^()]+)\)$")


@dataclass(frozen=True)
class Answer:
    """One line of the answer: the ``risk``, its ``verdict`` word, the ``finding`` (the number
    first, so that a line cut to a terminal's width keeps it) and the ``sample``."""

    risk: str
    verdict: str
    finding: str
    sample: str

    def row(self) -> list[str]:
        return [self.risk, self.verdict, self.finding, self.sample]


def _interval(r: Risk) -> str:
    v = r.value
    return f"{v.value:.2f} [{v.low:.2f}, {v.high:.2f}]"


def _who(key: str, r: Risk) -> str:
    """The strongest attack's name: membership names it in the row, attribute and exposure rows
    carry the attacker in their note."""
    best = BEST.search(r.attack)
    if best:
        return best.group(1)
    if key == "synthetic_release":
        return "the recovery attacker (release and item embeddings)"
    return f"the {r.note} attacker" if key in ("attribute", "exposure") and r.note else "the attack"


def _finding(key: str, r: Risk, tpr: Risk | None) -> str:
    """What the attack (or, for a defence, the defended attack) achieved, number first."""
    if r.kind == "defence":
        text = f"{r.metric} {_interval(r)} with the defence, {r.baseline:.2f} without it"
        return text + ("; measured under the paper's protocol, not the served one" if "protocol paper" in r.attack else "")
    text = f"{r.metric} {_interval(r)} by {_who(key, r)} vs {r.baseline:.2f} ({r.baseline_name})"
    if key in FOUND and tpr is not None and tpr.value.resolvable:
        text += (f"; finds {tpr.value.value:.0%} of {FOUND[key]} at 1% false positives, where the "
                 f"{_short_baseline(tpr.baseline_name)} finds {tpr.baseline:.0%}")
    return text


def _short_baseline(name: str) -> str:
    """A baseline's name without its FPR suffix (``history statistic: ... at 1% FPR``)."""
    return re.sub(r" at [0-9.]+% FPR$", "", name)


def _risk_name(key: str, r: Risk) -> str:
    name = RISK_NAMES.get(key, key.replace("_", " "))
    if r.kind == "defence":
        return f"defence: {r.attack.split(' vs ')[-1]}"
    if key == "erasure":
        return r.attack.split(":")[0]
    kind = KIND.search(r.attack)
    if key == "interaction_membership" and kind:  # one line per kind, short enough for a terminal's risk column
        return f"{name}, {kind.group(1)} pairs"
    named = NAMED.search(r.attack)
    return f"{name} ({named.group(1)})" if key == "attribute" and named else name


def answers(writers: list[SectionWriter]) -> list[Answer]:
    """The answer lines of every section's attack and defence rows (module docstring)."""
    out = []
    for w in writers:
        for r in w.risks:
            if r.kind not in ("attack", "defence", "erasure") or "protocol paper" in r.attack.split(" vs ")[0]:
                continue
            tpr = next((s for s in w.risks if s.kind == "secondary" and s.attack == r.attack and s.metric == "TPR at 1% FPR"),
                       None)  # fmt: skip
            out.append(Answer(_risk_name(w.key, r), r.verdict.label, _finding(w.key, r, tpr), str(r.sample or "-")))
    return out


def _short_risk(risk: str) -> str:
    """A defence's name without its prefix and settings (its verdict word says it is a defence);
    other risks keep what they name, e.g. ``attribute (gender)``."""
    return re.sub(r" \(.*\)$", "", risk.removeprefix("defence: ")) if risk.startswith("defence: ") else risk


def terminal_lines(rows: list[list[str]], width: int) -> list[str]:
    """One line per answer row (``ANSWER_COLUMNS``), no longer than ``width``: the risk and the
    verdict in columns, then the finding, cut with an ellipsis where the width ends."""
    risk_w = min(max((len(_short_risk(r[0])) for r in rows), default=0), 24)
    verdict_w = max((len(r[1]) for r in rows), default=0)
    lines = []
    for risk, verdict, finding, _ in rows:
        risk = _short_risk(risk)
        risk = risk if len(risk) <= risk_w else risk[: risk_w - 1] + "…"
        line = f"{risk:<{risk_w}}  {verdict:<{verdict_w}}  {finding}"
        lines.append(line if len(line) <= width else line[: max(width - 1, 0)] + "…")
    return lines
