"""User-level membership inference against recommender systems (paper 001, Zhang et al., CCS 2021).

Modules, in pipeline order:

* :mod:`.partition`: shadow / target / vector parts, members and non-members, hold-out;
* :mod:`.item_vectors`: item vectors by matrix factorisation of the vector part (or a file);
* :mod:`.lists`: the top-k lists members and non-members receive, and their HR@k;
* :mod:`.features`: user features (Origin, Concat, Hadamard, Similarity);
* :mod:`.attack_models`: the MLP attack, the K-Means baseline, scikit-learn classifiers;
* :mod:`.list_statistics`, :mod:`.references`, :mod:`.calibrated`: training-free statistics of a
  list and of a history, reference recommenders, LiRA and RMIA.

The study runner that composes them (``MembershipLab`` and its ``AttackSpec``) is orchestration
and lives with the membership study, in ``recprivacy.experiments.membership.lab``.
"""

from recprivacy.attacks.membership.attack_models import KMeansAttack, MLPAttack, SklearnAttack, make_attack
from recprivacy.attacks.membership.features import (
    FEATURE_METHODS,
    WEIGHTINGS,
    origin_features,
    recommendation_weights,
    user_features,
)
from recprivacy.attacks.membership.item_vectors import fit_item_vectors, load_item_vectors, save_item_vectors
from recprivacy.attacks.membership.lists import hit_rate, popular_lists, popularity_ranking
from recprivacy.attacks.membership.partition import Group, Partition, partition_dataset

__all__ = [
    "FEATURE_METHODS", "WEIGHTINGS", "Group", "KMeansAttack",
    "MLPAttack", "Partition", "SklearnAttack", "fit_item_vectors", "hit_rate", "load_item_vectors",
    "make_attack", "origin_features", "partition_dataset", "popular_lists", "popularity_ranking",
    "recommendation_weights", "save_item_vectors", "user_features",
]
