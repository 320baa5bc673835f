"""Item feature vectors for the membership attack (paper 001, §2.2).

The adversary factorises the p x q user-item rating matrix ``M^f`` of the vector dataset,
``M^f ≈ M^user (M^item)ᵀ`` with latent size ``l`` (100), and represents item ``i`` by row
``i`` of ``M^item``. No new trainer is written; ``mode`` picks an existing one:

* ``"rating"`` (default; the paper factorises the ratings without naming an objective):
  ``models.LFM(target="rating")``, squared error
  on the *observed* ratings plus L2 (λ 0.01), SGD lr 0.01, 20 epochs, N(0, 0.1²) start.
* ``"implicit"``: ``models.LFM`` on 1/0 targets with one sampled negative per positive.
* ``"svd"``: scikit-learn's ``TruncatedSVD`` of the zero-filled rating matrix; item vectors
  are ``V Σ^½`` so that ``M ≈ (U Σ^½)(V Σ^½)ᵀ``.

Datasets without ratings (the S3-Rec stand-ins) are treated as rating 1 for every
interaction (the issue's instruction). Items the vector dataset never saw keep random
N(0, 0.1²) vectors (the ``item_coverage="init"`` behaviour of :mod:`.partition`; with the default
``"restrict"`` there are none).

Vectors can also be read from a text file, one item per line: the item's original id, then
``l`` numbers, separated by tabs or spaces (``save_item_vectors`` writes this format).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.decomposition import TruncatedSVD

from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError, DataError
from recprivacy.models import make_model

VECTOR_MODES = ("rating", "implicit", "svd")
INIT_STD = 0.1


def fit_item_vectors(
    data: Interactions, n_factors: int = 100, mode: str = "rating", seed: int = 0, **lfm_params: Any
) -> np.ndarray:
    """``[data.n_items, n_factors]`` float32 item vectors learned from ``data`` (see module
    docstring); ``lfm_params`` go to ``LFM`` in the ``rating`` and ``implicit`` modes."""
    if mode not in VECTOR_MODES:
        raise ConfigError(f"item vector mode: expected one of {list(VECTOR_MODES)}, got {mode!r}")
    if not isinstance(n_factors, (int, np.integer)) or n_factors < 1:
        raise ConfigError(f"item vector size l: expected a positive integer, got {n_factors!r}")
    rated = data if data.ratings is not None else data.with_changes(ratings=np.ones(len(data)))
    if mode == "svd":
        vectors = _svd_vectors(rated, n_factors, seed)
    else:
        target = "rating" if mode == "rating" else "implicit"
        model = make_model("lfm", n_factors=n_factors, target=target, seed=seed, **lfm_params).fit(rated)
        vectors = model.item_factors_.numpy()
    seen = data.item_counts() > 0
    if not seen.all():
        rng = np.random.default_rng(seed)
        vectors[~seen] = rng.normal(0.0, INIT_STD, size=(int((~seen).sum()), n_factors))
    return np.ascontiguousarray(vectors, dtype=np.float32)


def _svd_vectors(data: Interactions, n_factors: int, seed: int) -> np.ndarray:
    matrix = data.to_csr("ratings")
    if n_factors >= min(matrix.shape):
        raise ConfigError(
            f"item vector size l={n_factors}: the svd mode needs l < min(users, items) = {min(matrix.shape)} "
            "of the vector dataset"
        )
    svd = TruncatedSVD(n_components=n_factors, random_state=seed).fit(matrix)
    return (svd.components_.T * np.sqrt(svd.singular_values_)).astype(np.float32)


# ---------------------------------------------------------------------------- files


def save_item_vectors(path: str | Path, vectors: np.ndarray, item_ids: Sequence[Any]) -> Path:
    """Write ``item_id<TAB>v_1 ... v_l`` lines atomically (temporary file, then rename)."""
    path = Path(path)
    vectors = np.asarray(vectors)
    if len(vectors) != len(item_ids):
        raise ValueError(f"{len(vectors)} vectors for {len(item_ids)} item ids; expected one each")
    lines = ["\t".join([str(i), *(f"{x:.9g}" for x in row)]) for i, row in zip(item_ids, vectors)]
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load_item_vectors(path: str | Path, item_ids: Sequence[Any]) -> np.ndarray:
    """Vectors of the catalogue ``item_ids`` (original ids) read from ``path``.

    Raises ``DataError`` naming the file (and line) for a missing file, a malformed line,
    lines of different lengths, or catalogue items the file has no vector for.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError("item vector file not found", path)
    table: dict[str, np.ndarray] = {}
    width = None
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            fields = line.split()
            if not fields:
                continue
            try:
                row = np.array(fields[1:], dtype=np.float64)
            except ValueError:
                raise DataError("expected an item id followed by numbers", path, number) from None
            if len(row) == 0 or not np.isfinite(row).all():
                raise DataError("expected an item id followed by finite numbers", path, number)
            if width is not None and len(row) != width:
                raise DataError(f"{len(row)} numbers, but earlier lines have {width}", path, number)
            width = len(row)
            table[fields[0]] = row
    missing = [str(i) for i in item_ids if str(i) not in table]
    if missing:
        raise DataError(
            f"no vector for {len(missing)} of the {len(item_ids)} catalogue items (first: {', '.join(missing[:5])}); "
            "expected one line per item",
            path,
        )
    return np.stack([table[str(i)] for i in item_ids]).astype(np.float32)
