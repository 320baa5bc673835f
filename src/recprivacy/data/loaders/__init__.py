"""Loaders for datasets in their original formats, one module per source format.

Each returns an ``Interactions`` (MIND: an ``ExposureLog``) with the source's original ids,
ratings and times where the source has them, feature tables, and a provenance entry naming
the file and format. Load by name through ``recprivacy.data.registry``.
"""

from recprivacy.data.loaders.amazon import load_amazon
from recprivacy.data.loaders.coat import load_coat
from recprivacy.data.loaders.download import cache_root, download_movielens
from recprivacy.data.loaders.mind import load_mind
from recprivacy.data.loaders.movielens import load_ml1m, load_ml1m_users, load_ml100k, load_ml100k_users
from recprivacy.data.loaders.recbole import load_recbole, read_atomic, write_recbole
from recprivacy.data.loaders.s3rec import load_s3rec
from recprivacy.data.loaders.tabular import load_table

__all__ = [
    "cache_root",
    "download_movielens",
    "load_amazon",
    "load_coat",
    "load_mind",
    "load_ml100k",
    "load_ml100k_users",
    "load_ml1m",
    "load_ml1m_users",
    "load_recbole",
    "load_s3rec",
    "load_table",
    "read_atomic",
    "write_recbole",
]
