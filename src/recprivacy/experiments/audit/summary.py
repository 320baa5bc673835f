"""The risk summary that opens every audit report: one row per risk a section reports
(``writer.RISK_COLUMNS``), the rule that gave each verdict, and the sections that did not run.

Planned attack sections that are not registered in this version are named in a note under the
table; no row is ever made up for them.
"""

from __future__ import annotations

from recprivacy.experiments.audit.registry import audit_sections
from recprivacy.experiments.audit.writer import RISK_COLUMNS, UNDEFENDED, SectionWriter
from recprivacy.experiments.results import Results

#: attack sections the design plans; named as "not yet available" while unregistered
PLANNED_SECTIONS = {
    "membership": "user-level membership inference (paper 001)",
    "exposure": "exposure leakage from what users were shown (paper 000)",
    "attribute": "attribute inference against federated GCN recommenders (paper 004)",
}


def add_risk_summary(results: Results, writers: list[SectionWriter], ran: list[str],
                     skipped: list[tuple[str, list[str]]]) -> None:  # fmt: skip
    """Add the "Risk summary" section: the rows of every section that ran (``writers``), then
    notes on planned sections not registered, sections ``skipped`` for missing inputs (with
    what they need) and registered sections not among those that ``ran``."""
    rows = [r.row() for out in writers for r in out.risks]
    table = results.add_table("risk_summary", RISK_COLUMNS, rows,
                              "One row per measured risk; baseline = the strongest blind or trivial guess on the same metric and k")
    text = [
        "Each row is one measurement: the attack (or, for utility, the target's own accuracy, a reference and not an "
        "attack), the metric, the value measured on this run with its 95% interval, the strongest blind or trivial guess "
        "on the same metric and k, the attack's margin over it with its interval, and a verdict by one rule "
        "(`recprivacy.metrics.verdict`): **leaks** only when the margin's interval clears zero, **no leak measured** when "
        "it lies wholly below zero, **inconclusive** when it straddles zero. A defence's row compares the defended attack "
        f"with the same attack undefended ({UNDEFENDED}): the margin is the change, judged **reduces**, **backfires** or "
        "**no measurable change** by the same rule."
    ]
    registered = [s.name for s in audit_sections()]
    missing = [desc for name, desc in PLANNED_SECTIONS.items() if name not in registered]
    if missing:
        text.append("Not yet available in this version of recprivacy (no rows above): " + "; ".join(missing) + ".")
    if skipped:
        text.append("Skipped sections (their inputs are missing): "
                    + "; ".join(f"`{name}` needs {' and '.join(needs)}" for name, needs in skipped) + ".")  # fmt: skip
    unselected = [name for name in registered if name not in ran]
    if unselected:
        text.append("Registered but not selected by `study_options.sections`: " + ", ".join(unselected) + ".")
    results.add_section("Risk summary", "\n\n".join(text), [table])
