"""Erasure verification on MovieLens-100K (issue 51's acceptance, the CI-sized version of
``benchmarks/erasure.py``): 60% of the users are members before the deletion, a fifth of them
forgotten, the rest never-members; k = 50, l = 32, 4 references, one seed.

(a) exact retraining without the forgotten users: "no evidence", the positive control leaks (ALS
    that memorises: 256 factors, alpha 40; and BPR-MF after 5 epochs, whose members served by id
    differ from users served from their history);
(b) a fake unlearning that only stops serving the forgotten users by id (the before-model serves
    them from their history as new users): "not erased" (the memorising ALS);
(c) an ALS regularised until it learns no one in particular: "inconclusive".
"""

from __future__ import annotations

import numpy as np
import pytest

from recprivacy import Audit, Target
from recprivacy.data.registry import load_dataset
from recprivacy.metrics.verdict import NO_EVIDENCE, NO_POWER, NOT_ERASED
from recprivacy.models import make_model

pytestmark = [pytest.mark.realdata, pytest.mark.slow]

MEMORISING_ALS = {"factors": 256, "regularization": 1.0, "alpha": 40.0}
OPTIONS = {"k": 50, "n_factors": 32, "n_references": 4}


@pytest.fixture(scope="module")
def setting(dataset_dir):
    data = load_dataset("ml-100k", dataset_dir("ml-100k").parent)
    ids = np.random.default_rng(0).permutation(data.user_ids)
    members, never = ids[: int(0.6 * len(ids))], ids[int(0.6 * len(ids)):]
    return data, members, members[: len(members) // 5], never


def _verdicts(setting, algorithm: str, params: dict, fake: bool = False) -> dict[str, str]:
    data, members, forgotten, never = setting
    trained = np.isin(data.user_ids[data.users], members)
    before = make_model(algorithm, seed=1, **params).fit(data.select(trained))
    kept = trained & ~np.isin(data.user_ids[data.users], forgotten)
    after = before if fake else make_model(algorithm, seed=2, **params).fit(data.select(kept))
    results = Audit.erasure(Target.from_recommender(before), Target.from_recommender(after), data, members, forgotten,
                            never, options=OPTIONS, seed=0, noise="simulation").run()  # fmt: skip
    return {v["attack"].split(" (")[0]: v["label"] for v in results.verdicts if v["kind"] != "secondary"}


@pytest.mark.parametrize(("algorithm", "params"), [("als", MEMORISING_ALS), ("bpr", {"n_epochs": 5})])
def test_exact_retraining_reads_no_evidence_and_the_control_holds(setting, algorithm, params):
    words = _verdicts(setting, algorithm, params)
    assert words["erasure: forgotten users vs never-members"] == NO_EVIDENCE
    assert words["erasure control: retained members vs never-members"] == "leaks"


def test_a_model_still_trained_on_them_reads_not_erased(setting):
    assert _verdicts(setting, "als", MEMORISING_ALS, fake=True)["erasure: forgotten users vs never-members"] == NOT_ERASED


def test_a_target_without_power_reads_inconclusive(setting):
    words = _verdicts(setting, "als", {"regularization": 10000.0})
    assert words["erasure: forgotten users vs never-members"] == NO_POWER
