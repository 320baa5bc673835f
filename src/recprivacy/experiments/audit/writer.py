"""What an audit section writes: its text, tables, figures, metrics and the rows it adds to the
risk summary (:class:`Risk`), collected by a :class:`SectionWriter` into the run's ``Results``.

A risk row's verdict comes from the one rule of ``metrics.verdict``: :meth:`SectionWriter.judge`
applies ``judge_attack`` to the attack's margin over the strongest blind or trivial guess on the
same metric and k; a defence's row names :data:`UNDEFENDED` as its baseline and is judged by
``judge_defence``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from recprivacy.experiments.results import Results
from recprivacy.metrics.intervals import Estimate
from recprivacy.metrics.verdict import Verdict, judge_attack

RISK_COLUMNS = ["attack", "metric", "value [95% CI]", "baseline (name)", "margin [95% CI]", "verdict"]

#: baseline name of a defence's row: its value is the defended attack, the baseline the same attack
#: undefended on the same targets, the margin the change, judged by ``metrics.verdict.judge_defence``
UNDEFENDED = "undefended attack, same targets"


@dataclass(frozen=True)
class Risk:
    """One row of the risk summary: the attack's ``value`` (with its ``interval`` when the
    section measured one), the ``baseline`` it is judged against (``baseline_name`` says which:
    the strongest blind or trivial guess on the same metric and k), the ``margin`` over it
    with its interval, and the ``verdict`` of ``metrics.verdict``."""

    attack: str
    metric: str
    value: float
    blind_guess: float
    verdict: str
    baseline_name: str = "blind guess"
    interval: tuple[float, float] | None = None
    margin: Estimate | None = None

    def row(self) -> list[str]:
        """The risk summary's cells (``RISK_COLUMNS``); a margin the sample cannot resolve (TPR
        at an FPR below ``1 / n``) prints as "not resolvable with n = ...", never as a number."""
        if self.margin is not None and not self.margin.resolvable:
            return [self.attack, self.metric, str(self.margin), f"- ({self.baseline_name})", str(self.margin), self.verdict]
        value = f"{self.value:.4f}" + (f" [{self.interval[0]:.4f}, {self.interval[1]:.4f}]" if self.interval else " (no interval)")
        if self.margin is None:
            margin = f"{self.value - self.blind_guess:+.4f} (no interval)"
        else:
            margin = f"{self.margin.value:+.4f} [{self.margin.low:+.4f}, {self.margin.high:+.4f}]"
        return [self.attack, self.metric, value, f"{self.blind_guess:.4f} ({self.baseline_name})", margin, self.verdict]


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

    def add_risk(self, attack: str, metric: str, value: float, blind_guess: float, verdict: str) -> None:
        """A row without intervals (prefer :meth:`judge`, which applies the one verdict rule)."""
        self.risks.append(Risk(attack, metric, float(value), float(blind_guess), verdict))

    def add_risk_row(self, risk: Risk) -> None:
        self.risks.append(risk)

    def judge(self, attack: str, metric: str, value: Estimate, baseline: float, baseline_name: str,
              margin: Estimate, note: str = "", chance: float | None = None) -> Verdict:  # fmt: skip
        """Judge an attack by ``metrics.verdict.judge_attack`` (its ``margin`` over ``baseline``,
        the strongest blind or trivial guess on the same metric and k; ``chance`` for a metric
        symmetric around a blind guess, 0.5 for ROC AUC) and add the risk row; ``note`` (e.g.
        the attacker's name) is appended to the verdict in brackets."""
        verdict = judge_attack(margin, baseline_name, attack=value, chance=chance)
        text = f"{verdict.text} ({note})" if note else verdict.text
        self.risks.append(Risk(attack, metric, value.value, float(baseline), text, baseline_name,
                               (value.low, value.high), margin))  # fmt: skip
        return verdict
