"""Per-user privacy preferences of UPC-SDG (paper 003, Definitions 1 and 2).

Each user ``u`` chooses

* ``k_u`` in (0, 1): the share of their training items that is replaced
  (Eq. 1 literally gives the overlap; the text means the replaced share);
* ``gamma_u`` in (0, 1): the cap on the similarity ``f_sim(q_i, q_v)`` between an original item
  and its replacement (Eq. 2; smaller is more private).

Preferences come from one global setting or from a file keyed by the *original* user id:

* CSV with a header: ``user_id`` and at least one of ``k``, ``gamma``; an empty cell takes the
  global default.
* JSON: ``{"default": {"k": 0.2, "gamma": 0.5}, "users": {"196": {"k": 0.5}, ...}}`` (the
  ``default`` block is optional and overrides the global setting), or a list of records
  ``[{"user_id": "196", "k": 0.5, "gamma": 0.3}, ...]``.

Users the file does not name take the global default; they are counted (``n_default``) and
reported. A file naming a user the dataset does not have, naming a user twice, or giving a
value outside (0, 1) is an error naming the file, the line (CSV) or the entry (JSON).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from recprivacy.data.interactions import Interactions
from recprivacy.data.loaders.tabular import header_columns, read_delimited
from recprivacy.errors import ConfigError, DataError

FIELDS = ("k", "gamma")


def check_unit_interval(value: Any, where: str) -> float:
    """``value`` as a float strictly inside (0, 1), else a ConfigError naming ``where``."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: expected a number in (0, 1), got {value!r}") from None
    if isinstance(value, bool) or not 0.0 < number < 1.0:
        raise ConfigError(f"{where}: expected a number strictly between 0 and 1, got {value!r}")
    return number


@dataclass(frozen=True)
class PrivacyPreferences:
    """Per-user ``k`` and ``gamma`` (float arrays indexed by internal user id).

    ``explicit[u]`` is True when user ``u`` set at least one value in the preferences file;
    ``source`` names the file (or ``"global"``).
    """

    k: np.ndarray
    gamma: np.ndarray
    explicit: np.ndarray
    source: str = "global"

    def __post_init__(self) -> None:
        for name in ("k", "gamma", "explicit"):
            arr = np.array(getattr(self, name), dtype=bool if name == "explicit" else np.float64)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        if not (len(self.k) == len(self.gamma) == len(self.explicit)):
            raise ValueError("k, gamma and explicit must have one entry per user")
        for name in FIELDS:
            values = getattr(self, name)
            bad = np.flatnonzero(~((values > 0) & (values < 1)))
            if bad.size:
                raise ConfigError(f"{self.source}: {name} of internal user {bad[0]} is {values[bad[0]]!r}; expected (0, 1)")

    @property
    def n_users(self) -> int:
        return len(self.k)

    @property
    def n_default(self) -> int:
        """Users the preferences file did not name (they take the global default)."""
        return int((~self.explicit).sum())

    @classmethod
    def uniform(cls, n_users: int, k: float, gamma: float) -> "PrivacyPreferences":
        """The same ``k`` and ``gamma`` for every user (what every experiment of the paper uses)."""
        k = check_unit_interval(k, "k")
        gamma = check_unit_interval(gamma, "gamma")
        return cls(np.full(n_users, k), np.full(n_users, gamma), np.zeros(n_users, bool))

    def describe(self) -> dict[str, Any]:
        """Source, user counts and the range of each knob (for reports and the CLI)."""
        return {
            "source": self.source,
            "users": self.n_users,
            "users_from_file": self.n_users - self.n_default,
            "users_with_default": self.n_default,
            **{f"{name}_{stat}": float(getattr(np, stat)(getattr(self, name))) for name in FIELDS
               for stat in ("min", "mean", "max")},
        }


def require_preferences_file(path: str | Path) -> Path:
    """``path`` if it is a file, else a DataError naming it and what it should hold (checked
    before any work: the file is read only after the dataset is loaded)."""
    path = Path(path)
    if not path.is_file():
        raise DataError("privacy preferences file (--privacy) not found; expected a CSV with a header "
                        "user_id,k,gamma or a JSON file of per-user k and gamma", path)
    return path


def load_preferences(path: str | Path, data: Interactions, k: float, gamma: float) -> PrivacyPreferences:
    """Preferences of ``data``'s users from a CSV or JSON file; ``k`` / ``gamma`` are the
    global defaults for users (or cells) the file leaves out."""
    defaults = {"k": check_unit_interval(k, "k"), "gamma": check_unit_interval(gamma, "gamma")}
    path = require_preferences_file(path)
    if path.suffix.lower() == ".json":
        table, defaults = _json_table(path, defaults)
    else:
        table = _csv_table(path)
    return _resolve(table, data, defaults, path)


def _csv_table(path: Path) -> pd.DataFrame:
    """``user_id, k, gamma`` as text, indexed by file line."""
    present = [c.strip() for c in header_columns(path, ",")]
    if "user_id" not in present or not any(f in present for f in FIELDS):
        raise DataError(f"expected a header with user_id and at least one of k, gamma; found {present}", path, 1)
    unknown = [c for c in present if c not in ("user_id", *FIELDS)]
    if unknown:
        raise DataError(f"unknown column(s) {unknown}; expected user_id, k, gamma", path, 1)
    frame = read_delimited(path, ",", {"user_id": "str"}, header=True, quoted=True)
    frame.columns = [c.strip() for c in frame.columns]
    out = pd.DataFrame({"user_id": frame["user_id"].astype(str).str.strip()}, index=frame.index)
    for name in FIELDS:
        out[name] = frame[name].astype(str).str.strip() if name in frame.columns else ""
    return out


def _json_table(path: Path, defaults: dict[str, float]) -> tuple[pd.DataFrame, dict[str, float]]:
    """Records from either JSON layout, indexed by a label naming each entry."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise DataError(f"not valid JSON: {err}", path, getattr(err, "lineno", None)) from None
    if isinstance(doc, dict) and set(doc) <= {"default", "users"}:
        block = doc.get("default") or {}
        _check_keys(block, FIELDS, path, "default")
        defaults = {**defaults, **{n: check_unit_interval(v, f"{path}: default.{n}") for n, v in block.items()}}
        users = doc.get("users") or {}
        if not isinstance(users, dict):
            raise DataError("'users' must map user ids to {k, gamma} objects", path)
        records = [{"user_id": uid, **_object(v, path, f"users[{uid!r}]")} for uid, v in users.items()]
        labels = [f"users[{uid!r}]" for uid in users]
    elif isinstance(doc, list):
        records = [_object(v, path, f"entry {n}") for n, v in enumerate(doc)]
        labels = [f"entry {n}" for n in range(len(doc))]
    else:
        raise DataError("expected {\"default\": {...}, \"users\": {...}} or a list of {user_id, k, gamma} records", path)
    for record, label in zip(records, labels):
        _check_keys(record, ("user_id", *FIELDS), path, label)
        if "user_id" not in record:
            raise DataError(f"{label}: missing user_id", path)
    table = pd.DataFrame(
        {"user_id": [str(r["user_id"]) for r in records],
         **{n: ["" if r.get(n) is None else r[n] for r in records] for n in FIELDS}},
        index=pd.Index(labels, name="entry"),
    )
    return table, defaults


def _object(value: Any, path: Path, label: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DataError(f"{label}: expected an object with k and/or gamma, got {value!r}", path)
    return value


def _check_keys(record: dict[str, Any], allowed: tuple[str, ...], path: Path, label: str) -> None:
    unknown = [key for key in record if key not in allowed]
    if unknown:
        raise DataError(f"{label}: unknown key(s) {unknown}; expected {list(allowed)}", path)


def _resolve(table: pd.DataFrame, data: Interactions, defaults: dict[str, float], path: Path) -> PrivacyPreferences:
    """Map file rows onto internal users, validating ids and values."""
    where = (lambda label: (path, label)) if table.index.name == "line" else (lambda label: (path, None))
    lookup = pd.Series(np.arange(data.n_users), index=pd.Index(data.user_ids).astype(str))
    users = lookup.reindex(table["user_id"]).to_numpy()
    if np.isnan(users.astype(float)).any():
        pos = int(np.flatnonzero(np.isnan(users.astype(float)))[0])
        raise DataError(_at(table, pos, f"user {table['user_id'].iloc[pos]!r} is not a user of {data.name}"), *where(table.index[pos]))
    users = users.astype(np.int64)
    dup = pd.Series(users).duplicated().to_numpy()
    if dup.any():
        pos = int(np.argmax(dup))
        raise DataError(_at(table, pos, f"user {table['user_id'].iloc[pos]!r} is listed twice"), *where(table.index[pos]))
    values = {}
    for name in FIELDS:
        cells = table[name].astype(object)
        given = (cells.astype(str) != "").to_numpy()
        numbers = pd.to_numeric(cells.where(given, np.nan), errors="coerce").to_numpy(dtype=np.float64)
        bad = given & ~((numbers > 0) & (numbers < 1))
        if bad.any():
            pos = int(np.argmax(bad))
            message = f"{name}: expected a number strictly between 0 and 1, got {cells.iloc[pos]!r}"
            raise DataError(_at(table, pos, message), *where(table.index[pos]))
        column = np.full(data.n_users, defaults[name])
        column[users[given]] = numbers[given]
        values[name] = column
    explicit = np.zeros(data.n_users, dtype=bool)
    explicit[users] = True
    return PrivacyPreferences(values["k"], values["gamma"], explicit, source=str(path))


def _at(table: pd.DataFrame, pos: int, message: str) -> str:
    """Prefix JSON messages with the entry label (CSV messages carry the line in the path)."""
    return message if table.index.name == "line" else f"{table.index[pos]}: {message}"
