"""Audit building blocks: random-ranking baseline, popularity curves, section planning."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from recprivacy.config import default_audit_config, load_config
from recprivacy.errors import ConfigError
from recprivacy.experiments.audit import (
    AuditOptions,
    audit_sections,
    plan_sections,
    popularity_curves,
    random_ranking_expectation,
)

REPO = Path(__file__).resolve().parents[2]


def csr(rows: list[list[int]], n_items: int) -> sp.csr_matrix:
    r = [u for u, items in enumerate(rows) for _ in items]
    c = [i for items in rows for i in items]
    return sp.csr_matrix((np.ones(len(c)), (r, c)), shape=(len(rows), n_items))


def test_random_ranking_expectation_hand_computed():
    # 5 items, k = 2.  user 0: 1 masked, test {1, 2}: C=4, T=Tc=2 -> recall 2*2/(4*2) = 0.5,
    # ndcg (2/4) D(2)/D(2) = 0.5.  user 1: nothing masked, test {0}: C=5 -> recall 2/5 = 0.4,
    # ndcg (1/5)(1 + 1/log2 3) / 1.  user 2: no test item, not averaged.  user 3: item 4 masked
    # and in test {3, 4}: C=4, T=2, Tc=1 -> recall 2*1/(4*2) = 0.25, ndcg (1/4) D(2)/D(2) = 0.25.
    test = csr([[1, 2], [0], [], [3, 4]], 5)
    masked = csr([[0], [], [1], [4]], 5)
    out = random_ranking_expectation(test, masked, 2)
    assert out["recall"] == pytest.approx((0.5 + 0.4 + 0.25) / 3)
    assert out["ndcg"] == pytest.approx((0.5 + 0.2 * (1 + 1 / math.log2(3)) + 0.25) / 3)


def test_random_ranking_expectation_matches_enumeration():
    """Average of Recall@2 / NDCG@2 over every ordering of a user's 4 candidates."""
    from itertools import permutations

    relevant = {0, 3}
    recalls, ndcgs = [], []
    idcg = 1 + 1 / math.log2(3)
    for order in permutations(range(4)):
        hits = [order[j] in relevant for j in range(2)]
        recalls.append(sum(hits) / 2)
        ndcgs.append(sum(h / math.log2(j + 2) for j, h in enumerate(hits)) / idcg)
    out = random_ranking_expectation(csr([[0, 3]], 5), csr([[4]], 5), 2)
    assert out["recall"] == pytest.approx(np.mean(recalls))
    assert out["ndcg"] == pytest.approx(np.mean(ndcgs))


def test_popularity_curves_hand_computed():
    curves = popularity_curves(np.array([1, 5, 3, 0]), np.array([[1, 2], [1, 0]]))
    np.testing.assert_allclose(curves["x"], [0.25, 0.5, 0.75, 1.0])
    np.testing.assert_allclose(curves["train"], [5 / 9, 8 / 9, 1.0, 1.0])
    np.testing.assert_allclose(curves["recs"], [0.5, 0.75, 1.0, 1.0])
    assert float(curves["coverage"]) == 0.75


def test_plan_sections_validates_names_and_options():
    assert [s.name for s, _ in plan_sections(AuditOptions())] == [s.name for s in audit_sections() if s.default]  # opt-in sections run only when named
    (section, options), = plan_sections(AuditOptions(sections=["utility"], utility={"k": 5}))
    assert section.name == "utility" and options.k == 5
    with pytest.raises(ConfigError, match=r"study_options.sections: unknown audit section 'utilty'; registered sections: utility"):
        plan_sections(AuditOptions(sections=["utilty"]))
    with pytest.raises(ConfigError, match=r"study_options.membrship: unknown audit section"):
        plan_sections(AuditOptions(membrship={}))
    with pytest.raises(ConfigError, match=r"unknown key 'kk' in study_options.utility; allowed keys: k, max_users"):
        plan_sections(AuditOptions(utility={"kk": 5}))


def test_shipped_default_config_is_what_audit_runs():
    assert load_config(REPO / "configs" / "audit" / "default.yaml") == load_config(base=default_audit_config())
