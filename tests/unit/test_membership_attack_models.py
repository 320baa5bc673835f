"""Attack models of the membership attack (paper 001 §2.5, Tables 6-7) and its metric."""

import numpy as np
import pytest
import torch

from recprivacy.attacks.membership.attack_models import KMeansAttack, MLPAttack, SklearnAttack, make_attack
from recprivacy.errors import ConfigError
from recprivacy.metrics.attack import binary_attack_report


def _blobs(n=200, dim=6, gap=3.0, seed=0):
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(n // 2), np.zeros(n - n // 2)].astype(int)
    x = rng.normal(size=(n, dim))
    x[y == 0, 0] += gap  # non-members sit further from the origin
    return x, y


def test_mlp_has_the_papers_layers():
    weights = MLPAttack().init_weights(100, np.random.default_rng(0))
    assert [w.shape for w in weights] == [(100, 32), (32,), (32, 8), (8,), (8, 2), (2,)]


@pytest.mark.parametrize("code_compat", [False, True])
def test_mlp_gradients_match_torch_autograd(code_compat):
    attack = MLPAttack(code_compat=code_compat)
    rng = np.random.default_rng(1)
    weights = attack.init_weights(5, rng)
    x, y = rng.normal(size=(7, 5)), rng.integers(0, 2, size=7)
    loss, grads = attack.loss_and_gradients(weights, x, y)

    tw = [torch.tensor(w, requires_grad=True) for w in weights]
    h = torch.tensor(x)
    for j in range(0, 4, 2):
        h = torch.relu(h @ tw[j] + tw[j + 1])
    out = h @ tw[4] + tw[5]
    if code_compat:
        out = torch.softmax(out, dim=1)
    expected = torch.nn.functional.cross_entropy(out, torch.tensor(y))
    expected.backward()
    assert loss == pytest.approx(expected.detach().item())
    for g, t in zip(grads, tw):
        np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_mlp_learns_separable_data_and_is_seeded():
    x, y = _blobs()
    attack = MLPAttack(seed=0).fit(x, y)
    assert attack.losses_[-1] < attack.losses_[0]
    proba = attack.predict_proba(x)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # the score is the logit margin: member iff P(member) > P(non-member)
    np.testing.assert_allclose(attack.score(x), np.log(proba[:, 1]) - np.log(proba[:, 0]), atol=1e-9)
    assert attack.threshold_ == 0.0
    assert binary_attack_report(y, attack.score(x))["auc"] > 0.95
    np.testing.assert_array_equal(attack.score(x), MLPAttack(seed=0).fit(x, y).score(x))


def test_code_compat_reproduces_the_authors_settings():
    attack = MLPAttack(code_compat=True, batch_size=16, momentum=0.5)
    assert (attack.momentum, attack.batch_size, attack.shuffle) == (0.9, 1, False)


def test_kmeans_calls_the_cluster_with_the_shorter_centre_members():
    x, y = _blobs(gap=6.0)
    attack = KMeansAttack(seed=0).fit(x)
    scores = attack.score(x)
    assert ((scores > attack.threshold_) == (y == 1)).mean() > 0.95


def test_sklearn_classifier_by_name():
    x, y = _blobs()
    attack = make_attack("LogisticRegression", seed=0).fit(x, y)
    assert isinstance(attack, SklearnAttack)
    assert binary_attack_report(y, attack.score(x))["auc"] > 0.95
    assert make_attack("RandomForestClassifier", seed=3, n_estimators=5).model.random_state == 3
    with pytest.raises(ConfigError, match="unknown attack model 'Nope'"):
        make_attack("Nope")


def test_the_papers_auc_is_balanced_accuracy():
    """The paper's "AUC" (its code: 0.5·TPR·FPR + 0.5·(TPR+1)·(1−FPR)) = (1 + TPR − FPR)/2."""
    y = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0])
    scores = np.array([0.9, 0.8, 0.7, 0.2, 0.6, 0.1, 0.3, 0.4, 0.05])
    report = binary_attack_report(y, scores, threshold=0.5)
    tpr, fpr = 3 / 4, 1 / 5
    assert (report["tpr"], report["fpr"]) == (pytest.approx(tpr), pytest.approx(fpr))
    paper = 0.5 * tpr * fpr + 0.5 * (tpr + 1) * (1 - fpr)
    assert report["balanced_accuracy"] == pytest.approx((1 + tpr - fpr) / 2) == pytest.approx(paper)


def test_a_dead_network_is_retrained_from_fresh_weights():
    """If every first-layer ReLU is dead the output is constant; training restarts."""

    class DeadFirst(MLPAttack):
        calls = 0

        def init_weights(self, dim, rng):
            weights = super().init_weights(dim, rng)
            DeadFirst.calls += 1
            if DeadFirst.calls == 1:
                weights[1][:] = -100.0  # no first-layer unit can fire
            return weights

    x, y = _blobs()
    attack = DeadFirst(seed=0).fit(x, y)
    assert attack.restarts_ == 1
    assert binary_attack_report(y, attack.score(x))["auc"] > 0.95
    assert MLPAttack(seed=0).fit(x, y).restarts_ == 0
