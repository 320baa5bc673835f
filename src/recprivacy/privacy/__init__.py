"""Privacy primitives: randomisation mechanisms, noise calibration and accounting.

``mechanisms`` holds the noise (Laplace, Gaussian, Piecewise, OUE, randomized response and
DIPSGNN's multi-feature LDP); ``accounting`` turns noise into stated guarantees (DIPSGNN
Theorem 4.2, composition through dp-accounting, ``PrivacyStatement``); ``randomness`` owns
where their noise comes from (``NoiseSource``: secure OS entropy, or a seeded simulation).
"""

from recprivacy.privacy.accounting import (
    ACCOUNTANTS,
    Accountant,
    PLDAccountant,
    PrivacyStatement,
    RDPAccountant,
    ZCDPAccountant,
    basic_composition,
    check_delta,
    compose_gaussian,
    compose_laplace,
    dipsgnn_composed_statement,
    dipsgnn_epsilon,
    dipsgnn_nominal_statement,
    dipsgnn_sigma,
    dpsgd_epsilon,
    dpsgd_noise_multiplier,
    gaussian_epsilon,
    gaussian_event,
    gaussian_sigma,
    laplace_event,
    make_accountant,
    poisson_sampled_event,
)
from recprivacy.data.features import encode_features
from recprivacy.privacy.mechanisms import (
    FeatureBudget,
    GaussianMechanism,
    LaplaceMechanism,
    OptimizedUnaryEncoding,
    PiecewiseMechanism,
    RandomizedResponse,
    multi_feature_budget,
    perturb_features,
)
from recprivacy.privacy.randomness import NOISE_MODES, NoiseSource, check_mode

__all__ = [
    "ACCOUNTANTS",
    "Accountant",
    "FeatureBudget",
    "GaussianMechanism",
    "LaplaceMechanism",
    "NOISE_MODES",
    "NoiseSource",
    "OptimizedUnaryEncoding",
    "PLDAccountant",
    "PiecewiseMechanism",
    "PrivacyStatement",
    "RDPAccountant",
    "RandomizedResponse",
    "ZCDPAccountant",
    "basic_composition",
    "check_mode",
    "check_delta",
    "compose_gaussian",
    "compose_laplace",
    "dipsgnn_composed_statement",
    "dipsgnn_epsilon",
    "dipsgnn_nominal_statement",
    "dipsgnn_sigma",
    "dpsgd_epsilon",
    "dpsgd_noise_multiplier",
    "encode_features",
    "gaussian_epsilon",
    "gaussian_event",
    "gaussian_sigma",
    "laplace_event",
    "make_accountant",
    "multi_feature_budget",
    "perturb_features",
    "poisson_sampled_event",
]
