"""The risk summary that opens every audit report: one row per risk a section reports
(``writer.RISK_COLUMNS``), the rule that gave each verdict, and the sections that did not run.

Planned attack sections that are not registered in this version are named in a note under the
table; no row is ever made up for them.
"""

from __future__ import annotations

from recprivacy.experiments.audit.answer import ANSWER_COLUMNS, RISK_NAMES, answers
from recprivacy.experiments.audit.registry import audit_sections
from recprivacy.experiments.audit.writer import RISK_COLUMNS, UNDEFENDED, SectionWriter
from recprivacy.experiments.results import Results
from recprivacy.metrics.verdict import RULE

#: attack sections the design plans; named as "not yet available" while unregistered
PLANNED_SECTIONS = {
    "membership": "user-level membership inference (paper 001)",
    "exposure": "exposure leakage from what users were shown (paper 000)",
    "attribute": "attribute inference against federated GCN recommenders (paper 004)",
}


#: what each section's attacker observes and the unit of privacy it attacks (the answer's threat model)
OBSERVES = {
    "membership": "a user's interactions and the top-k list the target serves them; unit: a user's presence in the "
                  "training data",
    "attribute": "the top-k lists the target serves, and the attribute of the users who disclosed it; unit: a user's "
                 "attribute",
    "exposure": "the slates a user was shown; unit: the user's recent clicks",
    "synthetic_release": "the public synthetic release and the item embeddings; unit: a replaced interaction",
    "interaction_membership": "a member's interactions (trained and held out alike) and the top-k list the target "
                              "serves them, item popularity and similarity from users held out of training; unit: one "
                              "(user, item) pair in the training data",
    "erasure": "a user's interactions and the top-k list the model after the deletion serves them; unit: a forgotten "
               "user's presence in the training data before the deletion",
}


def add_answer(results: Results, writers: list[SectionWriter], skipped: list[tuple[str, list[str]]],
               data: str = "", unselected: list[str] | None = None) -> None:  # fmt: skip
    """Add the "Answer" section that opens the report: one line per risk (``answer.answers``),
    then the threat model and scope: what each attacker observes, the ``data`` (one sentence), and
    what was not tested (sections ``skipped`` for missing inputs, registered sections ``unselected``)."""
    rows = [a.row() for a in answers(writers)]
    table = results.add_table("answer", ANSWER_COLUMNS, rows, "One line per risk; the numbers behind each verdict are in "
                              "the risk summary below")  # fmt: skip
    ran = [w.key for w in writers if w.key in OBSERVES]
    scope = "; ".join(f"**{RISK_NAMES.get(k, k)}**: {OBSERVES[k]}" for k in ran)
    text = [f"Is the target leaking, and how much? Each line is the strongest attack measured for one risk. "
            f"What each attacker observes: {scope}." if scope else "No attack section ran."]
    if data:
        text.append(f"Data: {data}")
    untested = [f"{name} (inputs missing)" for name, _ in skipped] + [f"{n} (not selected)" for n in unselected or []]
    if untested:
        text.append("Not tested: " + ", ".join(untested) + ".")
    results.add_section("Answer", "\n\n".join(text), [table])


def add_risk_summary(results: Results, writers: list[SectionWriter], ran: list[str],
                     skipped: list[tuple[str, list[str]]], data: str = "") -> None:  # fmt: skip
    """Add the "Answer" (``add_answer``, with the ``data`` sentence), then the "Risk summary" section: the rows of every
    section that ran (``writers``), then notes on planned sections not registered, sections ``skipped`` for missing
    inputs (with what they need) and registered sections not among those that ``ran``."""
    registered = [s.name for s in audit_sections()]
    add_answer(results, writers, skipped, data, [name for name in registered if name not in ran])
    rows = [r.row() for out in writers for r in out.risks]
    results.verdicts.extend(r.record(out.key) for out in writers for r in out.risks)
    table = results.add_table("risk_summary", RISK_COLUMNS, rows,
                              "One row per measured risk; baseline = the strongest thing the adversary can do without the "
                              "target, on the same metric and k")  # fmt: skip
    text = [
        "Each row is one measurement: the attack (or, for utility, the target's own accuracy, a reference and not an "
        "attack), the metric, the value measured with its 95% interval, the strongest baseline on the same metric and k "
        "(what the adversary knows without the target: a blind guess, the majority class, the popularity guess, the "
        "users' own histories), the margin (value - baseline, as printed) with its interval, the verdict and the "
        f"sample (users attacked, seeds and how they were combined). A defence's row compares the defended attack with the "
        f"same attack undefended ({UNDEFENDED}): its margin is the change. {RULE}"
    ]
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
