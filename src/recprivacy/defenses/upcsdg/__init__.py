"""UPC-SDG (paper 003): privacy-controllable synthetic interaction data.

``preferences`` (per-user k and γ), ``embeddings`` (frozen BPR-MF features), ``similarity``
(``f_sim``, Eq. 2), ``selection`` (attention and the lowest-k choice, Eqs. 3-7),
``generation`` (replacement scores, straight-through Gumbel, duplicate-free assignment,
Eqs. 8-12), ``model`` (the ``UPCSDG`` estimator, losses Eqs. 13-16, training and ablations),
``release`` (the synthetic dataset, its privacy record, and its ``public/`` and ``private/``
folders).
"""

from recprivacy.defenses.upcsdg.embeddings import FrozenEmbeddings, pretrain_bpr
from recprivacy.defenses.upcsdg.model import UPCSDG
from recprivacy.defenses.upcsdg.preferences import PrivacyPreferences, load_preferences, require_preferences_file
from recprivacy.defenses.upcsdg.release import RELEASE_FOLDERS, SyntheticRelease, write_release

__all__ = ["RELEASE_FOLDERS", "UPCSDG", "FrozenEmbeddings", "PrivacyPreferences", "SyntheticRelease",
           "load_preferences", "pretrain_bpr", "require_preferences_file", "write_release"]
