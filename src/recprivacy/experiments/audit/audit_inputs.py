"""``AuditInputs``: everything an audit of the user's own system reads, in one object.

    inputs = AuditInputs.from_files("inter.csv", members="members.csv", test="test.csv", user_col="uid")
    inputs = AuditInputs(frame, members, non_members, test=test_frame, user_features=features)

It holds the interactions, the members and non-members, the held-out test (and validation)
rows, the user features, the logged exposures and the logged lists, under recprivacy's column
names (``user_id``, ``item_id``; lists and exposures as ``ServedLists`` and ``ExposureLog``).
:meth:`AuditInputs.from_files` is the one place that reads the user's files and renames their
columns (``recprivacy audit --interactions`` and ``recprivacy verify-erasure``); the readers of
:mod:`.files` locate every row, so a problem found later is reported as ``file:line``. A Python
caller builds it from frames or ``Interactions`` named that way. :meth:`AuditInputs.prepare` turns
it into the audit's ``PreparedData`` (internal ids, the members' training rows; :mod:`.inputs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, is_dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from recprivacy.data.exposure import ExposureLog
from recprivacy.data.exposure_table import read_exposure_table
from recprivacy.data.interactions import Interactions
from recprivacy.data.served_lists import ServedLists, read_served_lists, shown
from recprivacy.errors import DataError
from recprivacy.experiments.audit.files import id_table, read_users
from recprivacy.experiments.audit.inputs import (Table, as_interactions, check_list_ids, deduplicated, features_by_internal_id,
                                                 held_rows, internal_users, source_of)
from recprivacy.experiments.train import PreparedData, check_not_degenerate

#: how messages and the run's config name interactions given as a frame
INTERACTIONS = "interactions"
#: fields that say where data came from, not what they are (ignored by ``==``)
ORIGIN = ("name", "source", "provenance")


@dataclass(frozen=True, eq=False)
class AuditInputs:
    """The data of an audit (module docstring). Two are ``==`` when they hold the same data,
    wherever it was read from.

    Parameters
    ----------
    interactions:
        Every interaction of members and non-members: ``Interactions``, or a frame with
        ``user_id, item_id`` and optional ``timestamp`` / ``rating`` columns.
    members, non_members:
        Original user ids the target was / was not trained on (kept as a ``pandas.Series``).
    test, valid:
        Rows of ``interactions`` held out of the members' training (optional).
    user_features:
        Frame with a ``user_id`` column (or an index named ``user_id``) and the features.
    exposures:
        Logged exposures: an ``ExposureLog``, or a file or frame ``user_id, slate_id, item_id,
        clicked`` (read here, ``data.exposure_table``).
    lists:
        The logged lists of a lists target (``Audit`` takes them from its target).
    """

    interactions: Table
    members: Sequence[Any] | pd.Series
    non_members: Sequence[Any] | pd.Series = ()
    test: Table | None = None
    valid: Table | None = None
    user_features: pd.DataFrame | None = None
    exposures: ExposureLog | pd.DataFrame | str | Path | None = None
    lists: ServedLists | None = None

    def __post_init__(self) -> None:
        for name in ("members", "non_members"):
            ids = getattr(self, name)
            object.__setattr__(self, name, ids if isinstance(ids, pd.Series) else pd.Series(list(ids)))
        if self.exposures is not None and not isinstance(self.exposures, ExposureLog):
            object.__setattr__(self, "exposures", read_exposure_table(self.exposures))

    @classmethod
    def from_files(cls, interactions: str | Path, *, members: str | Path | None = None, test: str | Path | None = None,
                   user_features: str | Path | None = None, exposures: str | Path | None = None,
                   lists: str | Path | None = None, user_col: str = "user_id", item_col: str = "item_id",
                   rank_col: str = "rank") -> AuditInputs:  # fmt: skip
        """The inputs read from the user's CSV/Parquet files, each read once, their columns renamed.

        Parameters
        ----------
        interactions:
            Every interaction (``user_col``, ``item_col``, optional ``timestamp`` / ``rating``).
        members:
            The members' ids (column ``user_col``); without it every user is a member. The
            users of ``interactions`` who are not members are the non-members.
        test:
            Rows of ``interactions`` held out of the members' training.
        user_features:
            One row per user: ``user_col`` and the features.
        exposures:
            Logged exposures: ``user_col``, ``slate_id`` (or ``time``), ``item_col``, ``clicked``.
        lists:
            Logged lists: ``user_col``, ``rank_col``, ``item_col``.
        user_col, item_col, rank_col:
            The column names of the files (``--user-col``, ``--item-col``, ``--rank-col``).

        Returns
        -------
        AuditInputs
        """
        served = read_served_lists(lists, user_col, rank_col, item_col) if lists else None  # first: the target
        ids, names = {"--user-col": user_col, "--item-col": item_col}, {user_col: "user_id", item_col: "item_id"}
        frame = _renamed(id_table(interactions, ids), names)
        users = frame["user_id"].unique()
        chosen = read_users(members, user_col) if members else pd.Series(users)
        held = _renamed(id_table(test, ids), names) if test else None
        features = _renamed(id_table(user_features, {"--user-col": user_col}), names) if user_features else None
        logged = read_exposure_table(exposures, user_col, item_col) if exposures else None
        return cls(frame, chosen, np.setdiff1d(users, chosen), test=held, user_features=features, exposures=logged,
                   lists=served)

    @property
    def name(self) -> str:
        """The interactions' name (a frame's is ``interactions``): the run's ``dataset.name``."""
        return self.interactions.name if isinstance(self.interactions, Interactions) else INTERACTIONS

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AuditInputs) and _same(self, other)

    __hash__ = None  # type: ignore[assignment]  # equal by content, which frames cannot hash

    def prepare(self, dedup: bool = True) -> PreparedData:
        """The audit's data in internal ids: every interaction (deduplicated as ``dedup`` says,
        ``dataset.preprocessing.dedup``), the members' training, validation and test rows, the
        non-members and the exposures; a ``DataError`` names the file and line (or argument and
        row) of a problem.

        Returns
        -------
        PreparedData
        """
        full = deduplicated(as_interactions(self.interactions, INTERACTIONS), self.interactions, dedup)
        if self.user_features is not None:
            full = replace(full, user_features=features_by_internal_id(self.user_features, full))
        if self.lists is not None:
            check_list_ids(self.lists, full)
        check_not_degenerate(full)
        members = internal_users(self.members, full, "members")
        outsiders = internal_users(self.non_members, full, "non_members")
        both = np.intersect1d(members, outsiders)
        if len(both):
            raise DataError(f"user id {shown(full.user_ids[both[0]])!r} is both a member and a non-member; expected disjoint sets",
                            "non_members")  # fmt: skip
        held = {}
        for part, table in (("test", self.test), ("valid", self.valid)):
            held[part], record = held_rows(table, full, members, part)
            full = full.with_step("hold_out", **record) if record else full
        member_rows = np.isin(full.users, members)
        train = full.select(member_rows & ~(held["test"] | held["valid"]))
        if len(members) and not len(train):  # only held-out rows: test (or valid) holds them all
            raise DataError(f"holds every interaction of the {len(members)} members, so the target's training data would "
                            "be empty; expected rows of the interactions held out of the members' training, not all",
                            source_of(self.test if self.test is not None else self.valid, "test"))  # fmt: skip
        return PreparedData(full, train, full.select(member_rows & held["valid"]), full.select(member_rows & held["test"]),
                            outsiders, self.exposures)  # fmt: skip


def _renamed(frame: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """``frame`` with the id columns renamed as ``names`` says; a column that already bears a
    new name but is not an id column is dropped (it would be a second id column)."""
    clashing = [new for new in names.values() if new in frame.columns and new not in names]
    return frame.drop(columns=clashing).rename(columns=names)


def _same(a: object, b: object) -> bool:
    """Whether ``a`` and ``b`` hold the same data: frames and series by their values (not by the
    file lines they were read from), arrays element by element, dataclasses field by field
    except where their data came from, anything else by ``==``."""
    if isinstance(a, (pd.DataFrame, pd.Series)):
        return type(a) is type(b) and a.reset_index(drop=True).equals(b.reset_index(drop=True))
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and np.array_equal(a, b)
    if is_dataclass(a):
        return type(a) is type(b) and all(_same(getattr(a, f.name), getattr(b, f.name)) for f in fields(a)
                                          if f.name not in ORIGIN)  # fmt: skip
    return bool(a == b)
