"""Privacy primitives: randomisation mechanisms, noise calibration and accounting.

``mechanisms`` holds the noise (Laplace, Gaussian, Piecewise, OUE, randomized response and
DIPSGNN's multi-feature LDP); ``accounting`` turns noise into stated guarantees (DIPSGNN
Theorem 4.2, composition through dp-accounting, ``PrivacyStatement``); ``randomness`` owns
where their noise comes from (``NoiseSource``: secure OS entropy, or a seeded simulation).

The names are imported on first use (PEP 562 ``__getattr__``), so a module that needs one
primitive (a federated device's ClientApp, which Flower starts once per message) does not
import ``data.features`` and its pandas through ``encode_features``.
"""

from __future__ import annotations

from recprivacy.lazy import lazy_getattr

_ACCOUNTING = ("ACCOUNTANTS", "Accountant", "PLDAccountant", "PrivacyStatement", "RDPAccountant", "StatementContext",
               "ZCDPAccountant", "basic_composition", "check_delta", "compose_gaussian", "compose_laplace",
               "dipsgnn_composed_statement", "dipsgnn_epsilon", "dipsgnn_nominal_statement", "dipsgnn_sigma",
               "dpsgd_epsilon", "dpsgd_noise_multiplier", "gaussian_epsilon", "gaussian_event", "gaussian_sigma",
               "laplace_event", "make_accountant", "poisson_sampled_event")  # fmt: skip
_MECHANISMS = ("FeatureBudget", "GaussianMechanism", "LaplaceMechanism", "OptimizedUnaryEncoding",
               "PiecewiseMechanism", "RandomizedResponse", "multi_feature_budget", "perturb_features")  # fmt: skip
#: public name -> module that defines it
_HOME = {
    **dict.fromkeys(_ACCOUNTING, "recprivacy.privacy.accounting"),
    **dict.fromkeys(_MECHANISMS, "recprivacy.privacy.mechanisms"),
    **dict.fromkeys(("NOISE_MODES", "NoiseSource", "check_mode"), "recprivacy.privacy.randomness"),
    "encode_features": "recprivacy.data.features",
}
__all__ = sorted(_HOME)


__getattr__ = lazy_getattr(__name__, _HOME)
