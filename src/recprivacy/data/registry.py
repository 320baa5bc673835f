"""Datasets by name: where their files are found and which loader reads them.

Names: ``ml-100k``, ``ml-1m``, ``coat``, ``amazon-<category>`` (e.g. ``amazon-musical-instruments``),
``s3rec-<beauty|sports|toys|yelp|lastfm>``, ``mind`` and ``zhihu`` (exposure logs, ``load_exposure``),
``synthetic`` (``recprivacy.data.synthetic.make_synthetic(**options)``). A name may also be a
path: a ``.csv`` / ``.tsv`` / ``.parquet`` file (options ``user_col``, ``item_col``,
``rating_col``, ``time_col``, ``sep`` of ``tabular.load_table``; columns with usual names such as
``user_id``, ``rating``, ``timestamp`` are recognised), a RecBole ``.inter`` file, a folder of
RecBole atomic files, or a LightGCN folder (``train.txt`` and its other parts).

A dataset's folder is searched in this order: ``data_dir`` (the dataset's own folder, or a
parent holding it under one of its folder names such as ``ml-100k/``), then
``$RECPRIVACY_DATA``, then the cache (``$RECPRIVACY_CACHE`` or ``~/.cache/recprivacy``).
MovieLens can be downloaded into the cache (``recprivacy datasets download ml-100k``, or
``download=True`` in Python).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping
from functools import partial
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recprivacy.data.exposure import ExposureLog
from recprivacy.data.interactions import Interactions
from recprivacy.data.loaders import amazon, coat, lightgcn, mind, movielens, recbole, s3rec, tabular, zhihu
from recprivacy.data.loaders.download import MOVIELENS_URLS, cache_root, data_hint, download_movielens
from recprivacy.errors import ConfigError, DataError

_TABLE_SUFFIXES = (".csv", ".tsv", ".tab", ".parquet")


@dataclass(frozen=True)
class DatasetSpec:
    """How to find and read one named dataset.

    ``folders``: folder names searched under each root; ``holds(folder)``: whether a folder
    is this dataset's own; ``loader(folder, **options)`` reads it.
    """

    name: str
    description: str
    formats: str
    features: str
    folders: tuple[str, ...]
    holds: Callable[[Path], bool]
    loader: Callable[..., Any]
    kind: str = "interactions"


def _has_any(*patterns: str) -> Callable[[Path], bool]:
    """A folder test: the folder has a file matching one of the glob ``patterns``."""
    return lambda folder: folder.is_dir() and any(next(folder.glob(p), None) is not None for p in patterns)


def _has_amazon(category: str) -> Callable[[Path], bool]:
    return lambda folder: (
        folder.is_dir() and any(amazon.category_slug(p.name) == category for p in folder.glob("*.json*"))
    )


_ML_FEATURES = "user gender, age, occupation, zip_code; item title, genres (ml-100k: release_date)"

SPECS: dict[str, DatasetSpec] = {
    spec.name: spec
    for spec in (
        DatasetSpec(
            "ml-100k", "MovieLens 100K: 100,000 ratings, 943 users, 1,682 movies",
            "u.data, u.user, u.item (GroupLens)", _ML_FEATURES, ("ml-100k",), _has_any("u.data"), movielens.load_ml100k,
        ),
        DatasetSpec(
            "ml-1m", "MovieLens 1M: 1,000,209 ratings, 6,040 users (or the partial head of ratings.dat)",
            "ratings.dat, users.dat, movies.dat (GroupLens)", _ML_FEATURES, ("ml-1m",),
            _has_any("ratings.dat", movielens.ML1M_PARTIAL_RATINGS), movielens.load_ml1m,
        ),
        DatasetSpec(
            "coat", "Coat shopping: 290 users x 300 coats, 24 self-selected ratings per user (and 16 random ones)",
            "train.ascii, test.ascii, user_item_features/ (Schnabel et al. 2016)",
            "user gender, age (band lower bound), age_band, location, fashion_interest", ("coat",),
            _has_any("train.ascii"), coat.load_coat,
        ),
        DatasetSpec(
            "mind", "MIND news impressions: shown slates, clicks and click histories", "behaviors.tsv (MIND)",
            "none (news ids as items)", ("mind-small-subset", "mind", "MINDsmall_train"),
            _has_any("behaviors.tsv", "*/behaviors.tsv"), mind.load_mind, kind="exposure",
        ),
        DatasetSpec(
            "zhihu", "Zhihu-1M answer impressions with show and read times", "zhihu1M.txt (THUIR Zhihu-Dataset)",
            "none (answer ids as items)", ("zhihu-1m", "zhihu1M", "zhihu"), _has_any(zhihu.ZHIHU_FILE),
            zhihu.load_zhihu, kind="exposure",
        ),
    )
}  # fmt: skip
"""Fixed names; ``amazon-*`` and ``s3rec-*`` specs are made by ``dataset_spec``."""


def dataset_spec(name: str) -> DatasetSpec:
    """The spec of a dataset name (a ConfigError lists the known names)."""
    if name in SPECS:
        return SPECS[name]
    if name.startswith("amazon-") and len(name) > len("amazon-"):
        category = name.removeprefix("amazon-")
        return DatasetSpec(
            name, f"Amazon 5-core reviews, {category.replace('-', ' ')}", "JSON lines (McAuley lab)",
            "none", (f"amazon-5core-{category}", name), _has_amazon(category),
            partial(amazon.load_amazon, category=category),
        )  # fmt: skip
    if name.startswith("s3rec-") and name.removeprefix("s3rec-") in s3rec.S3REC_FILES:
        key = name.removeprefix("s3rec-")
        stem = s3rec.S3REC_FILES[key]
        return DatasetSpec(
            name, f"S3-Rec sequences, {stem.replace('_', ' ')} (implicit, ordered)", f"{stem}.txt (S3-Rec)",
            "item attributes", ("s3rec-sequences", "s3rec"), _has_any(f"{stem}.txt"),
            partial(s3rec.load_s3rec, dataset=key),
        )  # fmt: skip
    known = sorted(SPECS) + ["amazon-<category>"] + [f"s3rec-{k}" for k in s3rec.S3REC_FILES] + ["synthetic"]
    raise ConfigError(f"unknown dataset {name!r}; expected one of {known}, or a path to a .csv/.parquet/.inter file")


def _roots(data_dir: str | Path | None) -> list[Path]:
    roots = [Path(data_dir).expanduser()] if data_dir is not None else []
    if os.environ.get("RECPRIVACY_DATA"):
        roots.append(Path(os.environ["RECPRIVACY_DATA"]).expanduser())
    return roots + [cache_root()]


def find_data_dir(name: str, data_dir: str | Path | None = None) -> Path | None:
    """The dataset's folder, or None when no search place holds it."""
    spec = dataset_spec(name)
    for root in _roots(data_dir):
        for folder in (root, *(root / f for f in spec.folders)):
            if spec.holds(folder):
                return folder
    return None


def resolve_data_dir(name: str, data_dir: str | Path | None = None) -> Path:
    """The dataset's folder; a DataError lists where it was looked for and where to put it."""
    folder = find_data_dir(name, data_dir)
    if folder is not None:
        return folder
    spec = dataset_spec(name)
    looked = ", ".join(str(r) for r in _roots(data_dir))
    fetch = (
        f"; or download it from files.grouplens.org: run `recprivacy datasets download {name}` "
        f"(Python: load_dataset({name!r}, download=True))"
        if name in MOVIELENS_URLS
        else ""
    )
    raise DataError(
        f"dataset {name!r} not found (looked in {looked}); "
        f"{data_hint(f'a folder {spec.folders[0]}/ holding {spec.formats}')}{fetch}"
    )


def load_dataset(
    name: str | Path, data_dir: str | Path | None = None, download: bool = False, **options: Any
) -> Interactions:
    """Interactions of a named dataset, a table file or a RecBole atomic-file folder.

    ``options`` go to the loader (``synthetic``: ``make_synthetic``; tables: ``load_table``).
    ``download=True`` fetches a missing MovieLens release into the cache first.
    """
    if name == "synthetic":
        from recprivacy.data.synthetic import make_synthetic

        return make_synthetic(**options)
    spec = _spec_or_path(name)
    if isinstance(spec, Path):
        return _load_path(spec, **options)
    if spec.kind != "interactions":
        raise ConfigError(f"{name!r} is an exposure log; load it with load_exposure({name!r})")
    return _call_loader(spec.loader, f"dataset {spec.name!r}", _folder(spec, data_dir, download), options)


def load_exposure(name: str, data_dir: str | Path | None = None, **options: Any) -> ExposureLog:
    """Exposure log (slates, clicks, histories) of a named dataset, e.g. ``mind``."""
    spec = dataset_spec(name)
    if spec.kind != "exposure":
        exposure = [s.name for s in SPECS.values() if s.kind == "exposure"]
        raise ConfigError(f"{name!r} has no exposure log; exposure datasets: {exposure}")
    return _call_loader(spec.loader, f"dataset {spec.name!r}", _folder(spec, data_dir, False), options)


def _folder(spec: DatasetSpec, data_dir: str | Path | None, download: bool) -> Path:
    folder = find_data_dir(spec.name, data_dir)
    if folder is not None:
        return folder
    if download and spec.name in MOVIELENS_URLS:
        return download_movielens(spec.name)
    return resolve_data_dir(spec.name, data_dir)


def dataset_inputs(name: str | Path, data_dir: str | Path | None = None) -> list[Path]:
    """The file or folder ``load_dataset(name, data_dir)`` would read, found without loading
    (none for ``synthetic`` and for a named dataset not found yet), and ``data_dir`` itself when
    it is a folder (the user named it as input; a dataset under it is only one of its entries),
    so a command can refuse an output inside its input before any work."""
    root = None if data_dir is None else Path(data_dir).expanduser()
    given = [root] if root is not None and root.is_dir() else []
    if name == "synthetic":
        return given
    spec = _spec_or_path(name)
    if isinstance(spec, Path):
        return [spec, *given]
    folder = find_data_dir(spec.name, data_dir)
    return [*given, *([] if folder is None else [folder])]


def _spec_or_path(name: str | Path) -> DatasetSpec | Path:
    """A dataset name's spec, or ``name`` as a path: a Path object, text with a folder
    separator or a table / atomic-file suffix, or an existing file or folder that is not
    also a dataset name (or a symbolic link, even a broken one: the path is then named as such)."""
    path = Path(name)
    if isinstance(name, Path) or os.sep in name or path.suffix in (*_TABLE_SUFFIXES, ".inter", ".gz"):
        return path
    try:
        return dataset_spec(name)
    except ConfigError:
        if path.exists() or path.is_symlink():
            return path
        raise


def _load_path(path: Path, **options: Any) -> Interactions:
    if path.is_dir() and lightgcn.is_lightgcn_folder(path):
        return _call_loader(lightgcn.load_lightgcn, "a LightGCN folder", path, options)
    if path.is_dir() or path.suffix == ".inter":
        return _call_loader(recbole.load_recbole, "RecBole atomic files", path, options)
    if not path.is_file():
        raise DataError(f"file not found; {data_hint('the file')}", path)
    return _call_loader(tabular.load_table, "a CSV/Parquet table", path, options)


def _call_loader(loader: Callable[..., Any], what: str, target: Path, options: Mapping[str, Any]) -> Any:
    """``loader(target, **options)``; an option the loader does not take is a ConfigError."""
    bound = getattr(loader, "keywords", {})  # fixed by functools.partial
    params = list(inspect.signature(loader).parameters.values())[1:]
    known = [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in bound]
    unknown = sorted(set(options) - set(known))
    if unknown:
        takes = f"options {', '.join(known)}" if known else "no options"
        raise ConfigError(f"dataset option(s) {unknown} not understood: {what} takes {takes}")
    return loader(target, **options)


def list_datasets(data_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """One row per known dataset: name, description, formats, features, kind, found, path."""
    names = [*SPECS, "amazon-musical-instruments", *(f"s3rec-{k}" for k in s3rec.S3REC_FILES)]
    rows = []
    for name in names:
        spec = dataset_spec(name)
        folder = find_data_dir(name, data_dir)
        rows.append(
            {
                "name": name,
                "description": spec.description,
                "formats": spec.formats,
                "features": spec.features,
                "kind": spec.kind,
                "found": folder is not None,
                "path": None if folder is None else str(folder),
            }
        )
    rows.append(
        {
            "name": "synthetic",
            "description": "built-in synthetic interactions with user attributes (make_synthetic)",
            "formats": "generated",
            "features": "see recprivacy.data.synthetic",
            "kind": "interactions",
            "found": True,
            "path": None,
        }
    )
    return rows
