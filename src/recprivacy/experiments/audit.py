"""The ``audit`` study: train a target recommender, run every registered audit section, and
open the report with a risk summary.

An audit *section* is a function ``fn(ctx: AuditContext, out: SectionWriter) -> None``. It reads
the prepared data, the fitted target and its own validated options from ``ctx``, and writes Markdown
text, tables, figures, metrics and risk rows through ``out`` (names are prefixed with the section
key, so sections never collide). A module adds one at import time::

    class MembershipAuditOptions(StudyOptions):
        n_shadow: int = 2

    def membership_section(ctx: AuditContext, out: SectionWriter) -> None:
        ...
        out.add_risk("user-level membership inference", "ROC AUC", auc, 0.5, verdict)

    register_audit_section("membership", membership_section, "Membership inference",
                           MembershipAuditOptions, order=10, fit=fit_membership_options)

The optional ``fit(options, data) -> (options, notes)`` runs after the data are prepared and
before the target is trained: it fits defaults that depend on the data (a list length ``k``
the user did not set becomes the largest that fits the catalogue, see ``fit_list_length``),
refuses an explicitly set value that does not fit with a one-line ``ConfigError``, and returns
notes stating each fitted default, which open the section's text in the report.

Users pick sections and set their options under ``study_options``::

    study: audit
    study_options:
      sections: [utility, membership]     # default: every registered section
      membership: {n_shadow: 4}

The risk summary table has one row per risk a section reports (columns: attack, metric, value
with its interval, the baseline with its name, the margin with its interval, verdict); sections
add rows through ``SectionWriter.judge``, which applies the one verdict rule of
``metrics.verdict``. Planned attack sections that are not registered in this version are named
in a note under the table; no row is ever made up for them.

The built-in ``utility`` section reports the target's full-ranking accuracy against the
expectation of a uniformly random ranking, and how concentrated its recommendations are on
popular items compared with the training data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from pydantic import ConfigDict, Field, PositiveInt

from recprivacy.config import Config, StudyOptions, validate_options
from recprivacy.errors import ConfigError
from recprivacy.experiments.results import Results
from recprivacy.metrics.intervals import Estimate, paired_difference_interval, weighted_mean
from recprivacy.metrics.ranking import evaluate, ranking_metrics
from recprivacy.metrics.verdict import Verdict, judge_attack
from recprivacy.experiments.runner import new_results, register_study
from recprivacy.experiments.target import Target
from recprivacy.experiments.train import (
    PreparedData,
    check_cutoffs,
    describe_target,
    fit_model,
    hold_out_users,
    metrics_rows,
    prepare_data,
)
from recprivacy.models.base import Recommender
from recprivacy.report.figures import line_plot

#: attack sections the design plans; named as "not yet available" while unregistered
PLANNED_SECTIONS = {
    "membership": "user-level membership inference (paper 001)",
    "exposure": "exposure leakage from what users were shown (paper 000)",
    "attribute": "attribute inference against federated GCN recommenders (paper 004)",
}
RISK_COLUMNS = ["attack", "metric", "value [95% CI]", "baseline (name)", "margin [95% CI]", "verdict"]


# ---------------------------------------------------------------------------- sections


@dataclass(frozen=True)
class AuditContext:
    """What a section may use: the config, the prepared data, the audited target and the
    section's own validated options. ``model`` is the target's built-in recommender (None for
    the user's own system; sections that need it declare the input ``builtin``)."""

    config: Config
    data: PreparedData
    target: Target
    options: Any

    @property
    def model(self) -> Recommender | None:
        """The built-in recommender behind the target, if any."""
        return self.target.recommender

    @property
    def members(self) -> np.ndarray:
        """Internal ids of the users the target was trained on (every user not held out)."""
        return member_users(self.data)


def member_users(data: PreparedData) -> np.ndarray:
    """Internal ids of the users with interactions in any split who are not held out."""
    active = (data.train.user_counts() + data.valid.user_counts() + data.test.user_counts()) > 0
    active[data.heldout_users] = False
    return np.flatnonzero(active)


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


SectionFn = Callable[[AuditContext, SectionWriter], None]
OptionsFit = Callable[[Any, PreparedData], tuple[Any, list[str]]]
Supplies = Callable[[Any], set[str]]

#: inputs a section may need, and what provides each (the reason a section is skipped)
INPUTS = {
    "test": "test interactions of members (the `test` argument)",
    "user_features": "user features (the `user_features` argument)",
    "non_members": "users who were not in training (the `non_members` argument)",
    "shadow": "a training function (`Target.from_training`) or a built-in model to train shadows of the same algorithm, "
              "or the adversary's own algorithm (`study_options.membership.shadow_algorithm`, `--shadow-model`)",
    "builtin": "a built-in recommender of recprivacy.models as the target (`recprivacy audit --model`)",
    "exposures": "logged exposures (the `exposures` argument, `--exposures FILE`) or a built-in recommender to replay "
                 "(`recprivacy audit --model`)",
}


def available_inputs(data: PreparedData, target: Target) -> set[str]:
    """The inputs of ``INPUTS`` this audit has."""
    have = {
        "test": len(data.test) > 0,
        "user_features": data.full.user_features is not None,
        "non_members": len(data.heldout_users) > 0,
        "shadow": target.can_retrain,
        "builtin": target.algorithm is not None,
        "exposures": data.exposures is not None or target.algorithm is not None,
    }
    return {name for name, ok in have.items() if ok}


@dataclass(frozen=True)
class AuditSection:
    """A registered audit section."""

    name: str
    run: SectionFn
    title: str
    options: type[StudyOptions]
    order: int
    heldout_users: bool = False
    fit: OptionsFit | None = None
    needs: tuple[str, ...] = ()
    supplies: Supplies | None = None

    def missing(self, have: set[str], options: Any = None) -> list[str]:
        """What this section needs and neither the audit nor the section's own ``options``
        (``supplies``) provide (descriptions from ``INPUTS``)."""
        have = have | (self.supplies(options) if self.supplies else set())
        return [INPUTS[name] for name in self.needs if name not in have]


_SECTIONS: dict[str, AuditSection] = {}


def register_audit_section(
    name: str,
    run: SectionFn,
    title: str,
    options: type[StudyOptions] = StudyOptions,
    order: int = 100,
    heldout_users: bool = False,
    fit: OptionsFit | None = None,
    needs: tuple[str, ...] = (),
    supplies: Supplies | None = None,
) -> AuditSection:
    """Add a section to every audit (sections run and appear by ``order``, then name).
    ``heldout_users``: the section needs users the target never saw (``AuditOptions.holdout_users``);
    ``fit``: fits the section's options to the prepared data before training (module docstring);
    ``needs``: inputs of ``INPUTS`` without which the section is skipped, with the reason;
    ``supplies(options)``: the needed inputs the section's own options stand in for."""
    if name == "sections" or not name.isidentifier():
        raise ValueError(f"audit section name {name!r} must be an identifier other than 'sections'")
    unknown = [n for n in needs if n not in INPUTS]
    if unknown:
        raise ValueError(f"audit section {name!r} needs unknown inputs {unknown}; known: {', '.join(INPUTS)}")
    if name in _SECTIONS and _SECTIONS[name].run is not run:
        raise ValueError(f"audit section {name!r} is already registered by {_SECTIONS[name].run.__module__}")
    section = AuditSection(name, run, title, options, order, heldout_users, fit, tuple(needs), supplies)
    _SECTIONS[name] = section
    return section


def audit_sections() -> list[AuditSection]:
    """Registered sections in report order."""
    return sorted(_SECTIONS.values(), key=lambda s: (s.order, s.name))


class AuditOptions(StudyOptions):
    """``sections``: which sections to run (default all); ``holdout_users``: share of users kept
    out of the target's training (``None``: ``DEFAULT_HOLDOUT`` when a selected section needs
    held-out users, such as membership inference's non-members, else 0); every other key is a
    section name holding that section's options."""

    model_config = ConfigDict(extra="allow")

    sections: list[str] | None = None
    holdout_users: float | None = Field(None, ge=0.0, lt=1.0)


#: share of users held out of the target's training when a section needs non-members
DEFAULT_HOLDOUT = 0.3


def holdout_fraction(options: AuditOptions, plan: list[tuple[AuditSection, Any]]) -> float:
    """``options.holdout_users``, or its default for the planned sections."""
    if options.holdout_users is not None:
        return options.holdout_users
    return DEFAULT_HOLDOUT if any(section.heldout_users for section, _ in plan) else 0.0


def plan_sections(options: AuditOptions) -> list[tuple[AuditSection, Any]]:
    """The sections to run with their validated options (ConfigError on unknown names)."""
    known = {s.name: s for s in audit_sections()}
    registered = ", ".join(known)
    for name in (options.sections or []) + list(options.model_extra or {}):
        if name not in known:
            where = "study_options.sections" if name in (options.sections or []) else f"study_options.{name}"
            raise ConfigError(f"{where}: unknown audit section {name!r}; registered sections: {registered}")
    chosen = [s for s in known.values() if options.sections is None or s.name in options.sections]
    extra = options.model_extra or {}
    return [(s, validate_options(s.options, extra.get(s.name) or {}, ("study_options", s.name))) for s in chosen]


def fit_list_length(section: str, options: Any, key: str, limit: int, limit_reason: str) -> tuple[Any, list[str]]:
    """Fit the list length ``options.<key>`` to ``limit`` (the longest list the data allow).

    A default above ``limit`` becomes ``limit`` and a note says so; a value the user set
    (``study_options.<section>.<key>``) above ``limit``, or a ``limit`` below 1, is a one-line
    ``ConfigError`` naming the key, the value and ``limit_reason`` (why the limit is what it is).
    """
    value = getattr(options, key)
    if value <= limit:
        return options, []
    where = f"study_options.{section}.{key}"
    if key in options.model_fields_set or limit < 1:
        raise ConfigError(f"{where}={value} does not fit the data: {limit_reason}; expected {key} <= {limit}")
    note = f"`{key}` = {limit}, fitted to the data (the default {value} does not fit: {limit_reason})."
    return options.model_copy(update={key: limit}), [note]


def catalogue_fit(section: str, key: str) -> OptionsFit:
    """An options fit that keeps the list length ``<key>`` within the catalogue."""

    def fit(options: Any, data: PreparedData) -> tuple[Any, list[str]]:
        n = data.full.n_items
        return fit_list_length(section, options, key, n, f"the catalogue has {n} items")

    return fit


def fit_plan(plan: list[tuple[AuditSection, Any]], data: PreparedData) -> list[tuple[AuditSection, Any, list[str]]]:
    """Each planned section with its options fitted to ``data`` and the notes that say how."""
    fitted = []
    for section, options in plan:
        options, notes = section.fit(options, data) if section.fit else (options, [])
        fitted.append((section, options, notes))
    return fitted


# ---------------------------------------------------------------------------- the study


def run_audit(config: Config, options: AuditOptions) -> Results:
    """The ``audit`` study (see module docstring): the configured built-in model, trained on
    the prepared data, audited by :func:`audit_prepared` like any other target."""
    plan = plan_sections(options)
    results = new_results(config)
    data = prepare_data(config, results)
    check_cutoffs(config.eval.ks, data)
    fraction = holdout_fraction(options, plan)
    if fraction > 0:
        data = hold_out_users(data, fraction, config.seed)

    def describe(target: Target) -> None:
        describe_target(config, data, target.recommender, results)

    return audit_prepared(config, data, plan, lambda: Target.from_recommender(fit_model(config, data, results)),
                          results, describe)  # fmt: skip


def audit_prepared(
    config: Config,
    data: PreparedData,
    plan: list[tuple[AuditSection, Any]],
    make_target: Callable[[], Target],
    results: Results,
    describe: Callable[[Target], None],
) -> Results:
    """The one audit code path: fit the sections' options to ``data``, make the target, run
    every planned section whose inputs are present, then the risk summary, the target's
    description (``describe``) and the sections' own text.

    Parameters
    ----------
    config:
        Seed, ``eval.ks`` and (for a built-in target) the model's name and parameters.
    data:
        Prepared data: members' train / validation / test splits and held-out users.
    plan:
        Sections with their validated options (:func:`plan_sections`).
    make_target:
        Builds (trains, for a training target) the target, after the options are fitted.
    results:
        Where tables, figures, metrics and sections go.
    describe:
        Adds the section describing the data and the target.

    Returns
    -------
    Results
    """
    fitted = fit_plan(plan, data)
    target = make_target()
    have = available_inputs(data, target)
    writers, skipped = [], []
    for section, section_options, notes in fitted:
        missing = section.missing(have, section_options)
        if missing:
            skipped.append((section.name, missing))
            continue
        out = SectionWriter(section.name, results)
        for note in notes:
            out.write(note)
        with results.timed(f"section:{section.name}"):
            section.run(AuditContext(config, data, target, section_options), out)
        writers.append((section, out))
    _add_risk_summary(results, [out for _, out in writers], [s.name for s, _ in plan], skipped)
    describe(target)
    for section, out in writers:
        results.add_section(section.title, out.text, out.tables, out.figures)
    return results


def _add_risk_summary(results: Results, writers: list[SectionWriter], ran: list[str],
                      skipped: list[tuple[str, list[str]]]) -> None:  # fmt: skip
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
    missing = [desc for name, desc in PLANNED_SECTIONS.items() if name not in _SECTIONS]
    if missing:
        text.append("Not yet available in this version of recprivacy (no rows above): " + "; ".join(missing) + ".")
    if skipped:
        text.append("Skipped sections (their inputs are missing): "
                    + "; ".join(f"`{name}` needs {' and '.join(needs)}" for name, needs in skipped) + ".")  # fmt: skip
    unselected = [s.name for s in audit_sections() if s.name not in ran]
    if unselected:
        text.append("Registered but not selected by `study_options.sections`: " + ", ".join(unselected) + ".")
    results.add_section("Risk summary", "\n\n".join(text), [table])


# ---------------------------------------------------------------------------- utility section


class UtilityOptions(StudyOptions):
    """``k``: length of the recommendation lists whose item popularity is analysed."""

    k: PositiveInt = 10


def random_ranking_expectation(test: sp.csr_matrix, masked: sp.csr_matrix, k: int, per_user: bool = False) -> dict[str, Any]:
    """Expected Recall@k and NDCG@k of a uniformly random ranking of each user's candidates.

    User u has ``C`` candidate (unmasked) items, ``T`` test items of which ``T_c`` are
    candidates. Every rank holds a relevant item with probability ``T_c / C``, so with
    ``k' = min(k, C)`` and ``D(n) = sum_{j<=n} 1 / log2(j + 1)``:

        E[Recall@k] = k' T_c / (C T)        E[NDCG@k] = (T_c / C) D(k') / D(min(T, k))
        E[Precision@k] = k' T_c / (C k)

    averaged over users with ``T >= 1`` (the same users ``metrics.ranking.evaluate`` averages);
    ``per_user``: the arrays over those users (in id order) instead of their means.
    """
    n_items = test.shape[1]
    test = (test != 0).astype(np.int64).tocsr()
    masked = (masked != 0).astype(np.int64).tocsr()
    t = np.diff(test.indptr)
    users = t > 0
    overlap = np.asarray(test.multiply(masked).sum(axis=1)).ravel()
    c = n_items - np.diff(masked.indptr)
    t, tc, c = t[users], (t - overlap)[users], c[users]
    kk = np.minimum(k, c)
    d = np.concatenate(([0.0], np.cumsum(1.0 / np.log2(np.arange(2, max(k, 1) + 2)))))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = {"recall": np.where(c > 0, kk * tc / (c * t), 0.0),
               "ndcg": np.where(c > 0, tc / c * d[kk] / d[np.minimum(t, k)], 0.0),
               "precision": np.where(c > 0, kk * tc / (c * k), 0.0)}  # fmt: skip
    return out if per_user else {name: float(v.mean()) for name, v in out.items()}


def popularity_curves(train_counts: np.ndarray, recommended: np.ndarray) -> dict[str, np.ndarray]:
    """Cumulative shares over the catalogue sorted from most to least popular in training.

    ``x[j]`` = fraction of the catalogue in the ``j + 1`` most popular items; ``train[j]`` and
    ``recs[j]`` = share of training interactions / recommendation slots those items receive.
    """
    n = len(train_counts)
    order = np.argsort(-train_counts, kind="stable")
    rec_counts = np.bincount(recommended.ravel(), minlength=n)
    return {
        "x": np.arange(1, n + 1) / n,
        "train": np.cumsum(train_counts[order]) / max(train_counts.sum(), 1),
        "recs": np.cumsum(rec_counts[order]) / max(rec_counts.sum(), 1),
        "coverage": np.array((rec_counts > 0).mean()),
    }


def utility_section(ctx: AuditContext, out: SectionWriter) -> None:
    """Target accuracy vs a random ranking, and popularity of what it recommends."""
    ks = ctx.config.eval.ks
    data = ctx.data
    metrics = target_test_metrics(ctx, ks)
    masked = data.train.to_csr() + data.valid.to_csr()
    blind = {k: random_ranking_expectation(data.test.to_csr(), masked, k) for k in ks}
    for name, value in metrics.items():
        out.add_metric(name, value)
    columns, rows = metrics_rows(metrics, ks)
    rows += [[f"{m} (random ranking)"] + [blind[k][m] for k in ks] for m in ("recall", "ndcg")]
    out.add_table("metrics", columns, rows, f"Test metrics over {int(metrics['n_users'])} users; random ranking = expectation")
    _utility_risks(ctx, out, ks[0])
    how = (f"Full ranking over all {data.full.n_items} items with each user's training and validation items masked."
           if ctx.model is not None else
           f"Computed from the top-{max(ks)} lists the target serves each test user from their training history.")
    out.write(f"{how} The random-ranking rows give the exact expectation of a uniformly random order of the same "
              "candidates.")
    _popularity_analysis(ctx, out)


def target_test_metrics(ctx: AuditContext, ks: Sequence[int], per_user: bool = False) -> dict[str, Any]:
    """Test metrics of the target: full ranking for a built-in model (training and validation
    items masked), else computed from the top-``max(ks)`` lists it serves the test users.

    Parameters
    ----------
    ctx:
        The audit context.
    ks:
        Cut-offs.
    per_user:
        Per-user arrays over the users with a test interaction (in id order) instead of means.

    Returns
    -------
    dict
        ``<metric>@<k>`` and ``n_users``, as ``metrics.ranking.evaluate`` returns them.
    """
    if ctx.model is not None:
        metrics = evaluate(ctx.model, ctx.data.test, ks=ks, exclude=ctx.data.valid, per_user=per_user)
    else:
        users = np.unique(ctx.data.test.users)
        lists = ctx.target.serve(users, max(ks), ctx.data.train, trained=True)
        metrics = ranking_metrics(lists, ctx.data.test.to_csr()[users], ks=ks, per_user=per_user)
    return metrics if per_user else {name: float(value) for name, value in metrics.items()}


def _utility_risks(ctx: AuditContext, out: SectionWriter, k: int) -> None:
    """Recall@k and NDCG@k of the target beside a random ranking's expectation, per test user,
    with a paired bootstrap interval of the difference: a reference row, not an attack."""
    data = ctx.data
    ours = target_test_metrics(ctx, (k,), per_user=True)
    blind = random_ranking_expectation(data.test.to_csr(), data.train.to_csr() + data.valid.to_csr(), k, per_user=True)
    users = np.unique(data.test.users)
    for m, label in (("recall", "Recall"), ("ndcg", "NDCG")):
        value = np.nan_to_num(np.asarray(ours[f"{m}@{k}"], dtype=np.float64))
        est, base, margin = paired_difference_interval(weighted_mean(value), weighted_mean(blind[m]), users)
        out.add_risk_row(Risk("target utility (reference, not an attack)", f"{label}@{k}", est.value, base,
                              _utility_verdict(est, margin), "random ranking, expectation", (est.low, est.high), margin))


def utility_change(model: Recommender, reference: Recommender, data: PreparedData, k: int) -> tuple[Estimate, float, Estimate]:
    """Recall@k of ``model`` and of ``reference`` on the same test users (full ranking,
    training and validation masked), with a paired bootstrap over users: (model's estimate,
    reference's value, change = model - reference)."""
    ours, theirs = (evaluate(m, data.test, ks=(k,), exclude=data.valid, per_user=True) for m in (model, reference))
    return paired_difference_interval(weighted_mean(np.nan_to_num(ours[f"recall@{k}"])),
                                      weighted_mean(np.nan_to_num(theirs[f"recall@{k}"])), ours["users"])  # fmt: skip


def _utility_verdict(value: Estimate, margin: Estimate) -> str:
    """Reference rows: above a random ranking only when the margin's interval clears zero."""
    base = value.value - margin.value
    ratio = f"{value.value / base:.1f}x, " if base > 0 else ""
    if margin.low > 0:
        return f"reference: above a random ranking ({ratio}margin {margin.value:+.4f} [{margin.low:+.4f}, {margin.high:+.4f}])"
    return "reference: not clearly above a random ranking; check training before trusting the attack results"


def _popularity_analysis(ctx: AuditContext, out: SectionWriter) -> None:
    k = ctx.options.k
    users = np.unique(ctx.data.test.users)
    recs = ctx.target.serve(users, k, ctx.data.train, trained=True)
    curves = popularity_curves(ctx.data.train.item_counts(), recs)
    top = max(1, int(round(0.1 * len(curves["x"])))) - 1
    out.add_metric(f"coverage@{k}", float(curves["coverage"]))
    out.add_metric(f"top10pct_share_recs@{k}", curves["recs"][top])
    out.add_metric("top10pct_share_train", curves["train"][top])
    png = line_plot(
        {"training interactions": (curves["x"], curves["train"]), f"top-{k} recommendations": (curves["x"], curves["recs"])},
        "fraction of catalogue (most popular items first)",
        "cumulative share",
    )
    out.add_figure("popularity", png, f"Where training interactions and top-{k} recommendations fall on the popularity curve.")
    out.write(
        f"**Popularity of recommendations.** The 10% most popular items hold {curves['train'][top]:.1%} of the training "
        f"interactions and receive {curves['recs'][top]:.1%} of the top-{k} recommendation slots; "
        f"{float(curves['coverage']):.1%} of the catalogue is recommended to at least one of {len(users)} users. "
        "Lists close to the popularity curve say little about an individual user; lists that reach further into the "
        "long tail are more personal, which is the signal membership and attribute inference work from."
    )


register_audit_section("utility", utility_section, "Utility of the target recommender", UtilityOptions, order=0,
                       fit=catalogue_fit("utility", "k"), needs=("test",))  # fmt: skip
register_study("audit", run_audit, AuditOptions, "train a target recommender and run every audit section")
