"""Exposure leakage attack (paper 000): infer a user's recent clicks from one exposed slate.

``ExposureAttack`` (encoder-decoder networks in ``networks``, vocabulary in ``vocab``) is
trained on (past clicks, slate) pairs of some users and attacks the slates of others;
``metrics`` holds the paper's leakage metrics and ``baselines`` the popularity and
exposed-item guesses that put them in context.
"""

from recprivacy.attacks.exposure.attack import ExposureAttack, candidate_matrix, leakage_report, rank_pairs
from recprivacy.attacks.exposure.baselines import BASELINES, evaluate_baselines
from recprivacy.attacks.exposure.metrics import KS, average_metrics, best_ranks, distinct_truth, per_pair_metrics
from recprivacy.attacks.exposure.networks import DECODERS, ENCODERS, ExposureAttackNet
from recprivacy.attacks.exposure.vocab import Vocabulary

__all__ = [
    "BASELINES",
    "DECODERS",
    "ENCODERS",
    "KS",
    "ExposureAttack",
    "ExposureAttackNet",
    "Vocabulary",
    "average_metrics",
    "best_ranks",
    "candidate_matrix",
    "distinct_truth",
    "evaluate_baselines",
    "leakage_report",
    "per_pair_metrics",
    "rank_pairs",
]
