"""The ``study_options`` of the ``matrix`` study (``MatrixOptions``) and of its membership column.

The columns' option blocks live beside their columns (``exposure``, ``interactions``, ``release``,
``uploads``, ``sequential``); the membership column's is here because that column takes the whole
``MatrixOptions`` (it reads ``popularity_alpha`` too), so defining it in ``membership`` would make
the two modules import each other.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, PositiveInt

from recprivacy.config import StudyOptions
from recprivacy.experiments.matrix.exposure import ExposureCellOptions
from recprivacy.experiments.matrix.interactions import InteractionCellOptions
from recprivacy.experiments.matrix.release import ReleaseOptions
from recprivacy.experiments.matrix.sequential import SequentialAuditOptions
from recprivacy.experiments.matrix.uploads import UploadCellOptions


class MembershipCellOptions(StudyOptions):
    """The membership column: the audit section's list length, item-vector size and minimum history."""

    k: PositiveInt = 100
    n_factors: PositiveInt = 100
    min_interactions: PositiveInt = 20
    n_references: PositiveInt = 8


#: the columns ``MatrixOptions.columns`` may select
Column = Literal["membership", "interactions", "attribute", "exposure", "canaries", "recovery", "uploads"]


class MatrixOptions(StudyOptions):
    """Options of the ``matrix`` study (``matrix.study``). ``columns``: the attack columns to
    measure (default: every one); the defence rows are always built. The claimed-vs-measured
    section's sequential-model canary audits run with ``canaries`` and the upload mechanisms'
    per-release audits with ``uploads``; a column not selected reads "not measured" in every row."""

    columns: list[Column] | None = Field(None, min_length=1)

    k: PositiveInt = 10
    attribute: Literal["gender", "age", "occupation"] = "gender"
    attackers: list[Literal["dnn", "tree", "svc", "knn"]] = Field(default_factory=lambda: ["knn", "tree"], min_length=1)
    zeta: float = Field(0.2, gt=0, lt=1)
    seeds: PositiveInt = 3
    holdout_users: float = Field(0.2, gt=0, lt=1)
    exposure: ExposureCellOptions = Field(default_factory=ExposureCellOptions)
    membership: MembershipCellOptions = Field(default_factory=MembershipCellOptions)
    interactions: InteractionCellOptions = Field(default_factory=InteractionCellOptions)
    perturbation_ratio: float = Field(0.5, gt=0, le=1)
    popularity_alpha: float = Field(0.1, gt=0, le=1)
    dpmf_epsilons: list[float] = Field(default_factory=lambda: [1.0, 5.0])
    dpmf: dict[str, Any] = Field(default_factory=lambda: {"n_epochs": 60})
    dpsgd_epsilons: list[float] = Field(default_factory=lambda: [1.0, 4.0, 8.0])
    #: BPR-MF's ``n_factors`` and ``make_private``'s settings of the DP-SGD rows
    dpsgd: dict[str, Any] = Field(default_factory=lambda: {"n_factors": 16, "delta": 1e-6, "batch_users": 512,
                                                           "n_epochs": 40, "lr": 0.01})
    canaries: PositiveInt = 1000
    canary_guesses: PositiveInt = 100
    mechanism_samples: PositiveInt = 20000
    sequential: SequentialAuditOptions = Field(default_factory=SequentialAuditOptions)
    release: ReleaseOptions = Field(default_factory=ReleaseOptions)
    uploads: UploadCellOptions = Field(default_factory=UploadCellOptions)

    def measures(self, column: str) -> bool:
        """Whether the run measures ``column`` (``columns``)."""
        return self.columns is None or column in self.columns
