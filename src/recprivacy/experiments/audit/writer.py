"""What an audit section writes: its text, tables, figures, metrics and the rows it adds to the
risk summary (:class:`Risk`), collected by a :class:`SectionWriter` into the run's ``Results``.

Every risk row is judged by the one judgement of ``metrics.verdict``: :meth:`SectionWriter.judge`
(an attack's primary metric against the strongest baseline on the same metric and k),
:meth:`SectionWriter.secondary` (a secondary metric, shown without a verdict word),
:meth:`SectionWriter.defence` (a defended attack against the same attack undefended, named by
:data:`UNDEFENDED`) and :meth:`SectionWriter.reference` (the target's utility, not an attack).
Each row names its sample (users attacked, seeds and how they were combined) and keeps every
seed's value; :meth:`Risk.record` is what ``results.json`` stores under ``verdicts``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from recprivacy.experiments.results import Results
from recprivacy.metrics.intervals import Estimate
from recprivacy.metrics.verdict import (ERASURE_WORDS, Sample, Verdict, judge_attack, judge_defence, judge_erasure,
                                        judge_reference, secondary)

RISK_COLUMNS = ["attack", "metric", "value [95% CI]", "baseline (name)", "margin [95% CI]", "verdict", "sample"]

#: baseline name of a defence's row: its value is the defended attack, the baseline the same attack
#: undefended on the same targets, the margin the change, judged by ``metrics.verdict.judge_defence``
UNDEFENDED = "undefended attack, same targets"

KINDS = ("attack", "secondary", "defence", "reference", "erasure")


def printed_margin(value: float, baseline: float) -> float:
    """The margin as printed: the printed value minus the printed baseline (4 decimals each), so
    a reader's subtraction of the two printed numbers gives the printed margin exactly."""
    return round(round(value, 4) - round(baseline, 4), 4)


def _level(e: Estimate) -> str:
    """`` (99.3%)`` after an interval whose level is not the columns' 95%; empty otherwise."""
    return "" if abs(e.level - 0.95) < 1e-9 else f" ({e.level:.1%})"


@dataclass(frozen=True)
class Risk:
    """One row of the risk summary: the ``value`` measured, the ``baseline`` it is set against
    (``baseline_name`` says which), the ``margin`` over it with its interval, the ``verdict`` of
    ``metrics.verdict``, the ``sample`` it was measured on and each seed's value (``per_seed``).
    ``kind``: ``attack`` (primary metric), ``secondary``, ``defence``, ``reference`` or ``erasure``
    (an attack on forgotten users judged with its positive ``control``'s verdict word,
    ``metrics.verdict.judge_erasure``)."""

    attack: str
    metric: str
    value: Estimate
    baseline: float
    baseline_name: str
    margin: Estimate
    verdict: Verdict
    kind: str = "attack"
    sample: Sample | None = None
    per_seed: tuple[float, ...] = ()
    note: str = ""
    chance: float | None = None
    ceiling: float | None = 1.0
    control: str | None = None

    def verdict_cell(self) -> str:
        """The verdict word (the rule's longer sentence for the words that explain themselves),
        then the ``note`` in brackets; the numbers are in the row's other cells."""
        text = self.verdict.label if self.verdict.label in ("leaks", "no leak measured", "inconclusive", "backfires", "reduces",
                                                            "no measurable change", "above", "not above", "costs", "gains",
                                                            "no measurable cost", *ERASURE_WORDS[3:]) else self.verdict.text  # fmt: skip
        return f"{text} ({self.note})" if self.note else text

    def row(self) -> list[str]:
        """The risk summary's cells (``RISK_COLUMNS``); a value the sample cannot resolve (TPR at
        an FPR below ``1 / n``) prints as "not resolvable with n = ...", never as a number."""
        sample = str(self.sample) if self.sample is not None else "-"
        if not self.value.resolvable or not self.margin.resolvable:
            unresolved = str(self.value if not self.value.resolvable else self.margin)
            return [self.attack, self.metric, unresolved, f"- ({self.baseline_name})", unresolved, self.verdict_cell(), sample]
        v, level = self.value, _level(self.margin)
        margin = f"{printed_margin(v.value, self.baseline):+.4f} [{self.margin.low:+.4f}, {self.margin.high:+.4f}]{level}"
        return [self.attack, self.metric, f"{v.value:.4f} [{v.low:.4f}, {v.high:.4f}]{_level(v)}",
                f"{self.baseline:.4f} ({self.baseline_name})", margin, self.verdict_cell(), sample]  # fmt: skip

    def record(self, section: str) -> dict[str, Any]:
        """What ``results.json`` keeps of the row: every number it was judged on (``verdicts``);
        an erasure row also its positive control's verdict word (``control``)."""
        extra = {} if self.control is None else {"control": self.control}
        return {**extra, "section": section, "attack": self.attack, "metric": self.metric, "kind": self.kind,
                "value": self.value.to_dict(), "baseline": self.baseline, "baseline_name": self.baseline_name,
                "margin": self.margin.to_dict(), "printed_margin": printed_margin(self.value.value, self.baseline),
                "label": self.verdict.label, "text": self.verdict.text, "note": self.note, "chance": self.chance,
                "ceiling": self.ceiling, "sample": self.sample.to_dict() if self.sample is not None else None,
                "per_seed": list(self.per_seed), "row": self.row()}  # fmt: skip


@dataclass
class SectionWriter:
    """Collects one section's output into the run's ``Results`` (names prefixed ``<key>-``)."""

    key: str
    results: Results
    text: str = ""
    tables: list[str] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
    risks: list[Risk] = field(default_factory=list)

    def write(self, markdown: str) -> None:
        """Append a paragraph of Markdown text."""
        self.text = f"{self.text}\n\n{markdown}".strip()

    def add_table(self, name: str, columns: list[str], rows: list[list], caption: str = "") -> None:
        self.tables.append(self.results.add_table(f"{self.key}-{name}", columns, rows, caption))

    def add_figure(self, name: str, png: bytes, caption: str = "") -> None:
        self.figures.append(self.results.add_figure(f"{self.key}-{name}", png, caption))

    def add_metric(self, name: str, value: float) -> None:
        self.results.metrics[f"{self.key}/{name}"] = float(value)

    def judge(self, attack: str, metric: str, value: Estimate, baseline: float, baseline_name: str, margin: Estimate,
              note: str = "", *, chance: float | None = None, sample: Sample | None = None,
              per_seed: Sequence[float] = ()) -> Verdict:  # fmt: skip
        """Judge an attack's primary metric by ``metrics.verdict.judge_attack`` (its ``margin`` over
        ``baseline``, the strongest baseline on the same metric and k; ``chance``: a blind guess's
        value on the metric) and add the row; ``note`` (e.g. the attacker's name) follows the word."""
        verdict = judge_attack(value, float(baseline), margin, baseline_name, chance=chance, sample=sample)
        self.risks.append(Risk(attack, metric, value, float(baseline), baseline_name, margin, verdict, "attack", sample,
                               tuple(per_seed), note, chance))  # fmt: skip
        return verdict

    def erasure(self, attack: str, metric: str, value: Estimate, baseline: float, baseline_name: str, margin: Estimate,
                control: Verdict, note: str = "", *, sample: Sample | None = None, per_seed: Sequence[float] = ()) -> Verdict:  # fmt: skip
        """Judge an attack on forgotten users as :meth:`judge` does, then the erasure from that word
        and the positive ``control``'s verdict (``metrics.verdict.judge_erasure``), and add the row."""
        attack_verdict = judge_attack(value, float(baseline), margin, baseline_name, chance=0.5, sample=sample)
        verdict = judge_erasure(attack_verdict, control)
        self.risks.append(Risk(attack, metric, value, float(baseline), baseline_name, margin, verdict, "erasure", sample,
                               tuple(per_seed), note, 0.5, control=control.label))  # fmt: skip
        return verdict

    def secondary(self, attack: str, metric: str, primary: str, value: Estimate, baseline: float, baseline_name: str,
                  margin: Estimate, note: str = "", *, sample: Sample | None = None, per_seed: Sequence[float] = ()) -> None:  # fmt: skip
        """A secondary metric of the attack judged on ``primary``: its numbers, no verdict word."""
        self.risks.append(Risk(attack, metric, value, float(baseline), baseline_name, margin, secondary(primary), "secondary",
                               sample, tuple(per_seed), note))  # fmt: skip

    def defence(self, attack: str, metric: str, defended: Estimate, undefended: float, change: Estimate, what: str,
                note: str = "", *, sample: Sample | None = None) -> Verdict:  # fmt: skip
        """A defended attack against the same attack undefended on the same targets: the change
        (``defended - undefended``, paired where the design allows) judged by ``judge_defence``."""
        verdict = judge_defence(change, what, sample=sample)
        self.risks.append(Risk(attack, metric, defended, float(undefended), UNDEFENDED, change, verdict, "defence", sample,
                               note=note))  # fmt: skip
        return verdict

    def reference(self, attack: str, metric: str, value: Estimate, baseline: float, baseline_name: str, margin: Estimate,
                  verdict: Verdict | None = None, *, sample: Sample | None = None) -> None:  # fmt: skip
        """A reference row (utility, not an attack): ``judge_reference`` unless a ``verdict`` of
        ``metrics.verdict`` is given (a private alternative's cost, judged as a defence)."""
        verdict = verdict or judge_reference(margin, baseline_name)
        self.risks.append(Risk(attack, metric, value, float(baseline), baseline_name, margin, verdict, "reference", sample))
