"""``recprivacy.metrics`` resolves its names on first use: ranking alone does not pull in
SciPy's statistics or scikit-learn (what a Flower ClientApp imports), every listed name
resolves, and an unknown one is an AttributeError / ImportError naming it."""

from __future__ import annotations

import subprocess
import sys

import pytest

import recprivacy.metrics as metrics


def test_ranking_alone_imports_neither_scipy_stats_nor_sklearn():
    code = ("import sys, recprivacy.metrics.ranking; "
            "print('scipy.stats' in sys.modules, 'sklearn' in sys.modules)")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]


def test_every_listed_name_resolves_to_its_submodule_function():
    from recprivacy.metrics import attack, ranking

    for name in metrics.__all__:
        assert getattr(metrics, name) is getattr(attack if hasattr(attack, name) else ranking, name)


def test_an_unknown_name_is_an_error_naming_it():
    with pytest.raises(AttributeError, match="no attribute 'recall_at_k'"):
        metrics.recall_at_k  # noqa: B018
    with pytest.raises(ImportError, match="recall_at_k"):
        from recprivacy.metrics import recall_at_k  # noqa: F401
