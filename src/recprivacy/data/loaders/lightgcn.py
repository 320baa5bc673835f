"""LightGCN text splits (He et al., SIGIR 2020; the ``data/<name>/`` folders of its reference code).

A folder holds ``train.txt`` and usually ``test.txt`` (optionally ``valid.txt``), one user per
line: ``uid i1 i2 ...`` with 0-based ids; a line may hold a bare user id (no items in that
part). When ``user_list.txt`` / ``item_list.txt`` (``org_id remap_id`` lines, as LightGCN's
data and our UPC-SDG release write them) are present, internal ids are mapped back to the
original ids, so a release written by ``defenses.upcsdg.write_release`` reads back with the
ids it was written with.

``load_lightgcn_parts`` returns each part as an ``Interactions`` sharing one id space (the
files' own split, which UPC-SDG's public data come in); ``load_lightgcn`` returns their union. The
files carry no ratings and no times.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from recprivacy.data.interactions import Interactions
from recprivacy.data.loaders.s3rec import read_user_lines
from recprivacy.data.loaders.tabular import build_interactions, read_delimited, require_file
from recprivacy.errors import DataError

PART_FILES = {"train": "train.txt", "valid": "valid.txt", "test": "test.txt"}
"""Part name -> file name; ``train.txt`` is required, the others are read when present."""


def is_lightgcn_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a LightGCN ``train.txt``."""
    return (folder / PART_FILES["train"]).is_file()


def load_lightgcn_parts(path: str | Path) -> dict[str, Interactions]:
    """The folder's parts (``train`` and whichever of ``valid`` / ``test`` exist), same id spaces."""
    folder = Path(path)
    if not folder.is_dir():
        raise DataError("expected a LightGCN data folder holding train.txt", folder)
    require_file(folder / PART_FILES["train"], "LightGCN train.txt")
    frames = []
    for part, file_name in PART_FILES.items():
        file = folder / file_name
        if file.is_file():
            frames.append(_read_part(file).assign(part=part, source=file_name))
    frame = pd.concat(frames)
    frame["user_id"] = _original_ids(frame["user_id"], folder / "user_list.txt", "user")
    frame["item_id"] = _original_ids(frame["item_id"], folder / "item_list.txt", "item")
    data = build_interactions(
        frame.reset_index(drop=True), name=folder.name, source=folder / PART_FILES["train"], fmt="lightgcn"
    )
    parts = frame["part"].to_numpy()
    return {part: data.select(parts == part, "split", method="given", part=part) for part in dict.fromkeys(parts)}


def load_lightgcn(path: str | Path) -> Interactions:
    """All interactions of a LightGCN folder (its parts together)."""
    folder = Path(path)
    parts = load_lightgcn_parts(folder)
    first = next(iter(parts.values()))
    rows = np.concatenate([p.users for p in parts.values()]), np.concatenate([p.items for p in parts.values()])
    return first.with_changes(users=rows[0], items=rows[1], provenance=first.provenance[:1])


def _read_part(file: Path) -> pd.DataFrame:
    """(user, item) rows of one part file; a repeated item on a user's line is an error."""
    frame = read_user_lines(file, min_items=0)[["user_id", "item_id"]]
    repeated = frame.duplicated().to_numpy()
    if repeated.any():
        row = int(np.argmax(repeated))
        raise DataError(f"item {frame['item_id'].iloc[row]} is listed twice for user {frame['user_id'].iloc[row]}",
                        file, int(frame.index[row]))  # fmt: skip
    return frame


def _original_ids(remapped: pd.Series, list_file: Path, what: str) -> pd.Series:
    """Map ``remap_id`` back to ``org_id`` through ``list_file`` when it exists."""
    if not list_file.is_file():
        return remapped
    table = read_delimited(list_file, " ", {"org_id": "id", "remap_id": "int"}, header=True)
    mapping = pd.Series(table["org_id"].to_numpy(), index=table["remap_id"].to_numpy())
    unknown = ~remapped.isin(mapping.index)
    if unknown.any():
        raise DataError(f"{what} id {remapped[unknown].iloc[0]} is not listed in {list_file.name}", list_file)
    return remapped.map(mapping)
