"""``study_options`` of the ``exposure`` study (paper 000), validated before any data load.

Defaults follow paper 000 (§5.1, §5.3; docs/decisions.md, "Exposure leakage (paper 000)", where
it is silent): M = 5 recent clicks, slates of N = 10 items, every
encoder (mean, max, attention) x decoder (point-wise, LSTM, GRU, Transformer) at d = 128 with
Adam (lr 1e-3, batch 400, dropout 0.1), Recall/NDCG/MRR at 5, 10 and 20, N in {5, 10, 15, 20}
for the slate sweep (Figs. 6-7) and every selection x replacement strategy at
L in {0, 0.2, 0.4, 0.6, 0.8} (the authors' code) for the protection curves (Figs. 8-13).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PositiveInt, field_validator

from recprivacy.attacks.exposure import DECODERS, ENCODERS
from recprivacy.config import StudyOptions
from recprivacy.defenses.exposure_perturbation import REPLACEMENTS, SELECTIONS


class AttackerOptions(StudyOptions):
    """Hyperparameters of every attacker (``attacks.exposure.ExposureAttack``); paper defaults."""

    dim: PositiveInt = 128
    n_heads: PositiveInt = 2
    dropout: float = Field(0.1, ge=0.0, lt=1.0)
    tie: Literal["paper", "code", "none"] = "paper"
    norm_first: bool = True
    cls_in_pool: bool = False
    lr: float = Field(1e-3, gt=0.0)
    batch_size: PositiveInt = 400
    n_epochs: PositiveInt = 50
    patience: PositiveInt = 5
    vocab: Literal["train", "full"] = "train"
    point_list: Literal["k", "kM"] = "k"
    schedule: Literal["constant", "warmup"] = "constant"
    warmup_steps: PositiveInt = 4000
    skip: Literal["none", "code"] = "none"


class ProtectionOptions(StudyOptions):
    """The protection experiment (Figs. 8-13). ``adaptive`` lists ``selection/replacement``
    strategies whose attacker is also retrained on perturbed exposure (``all`` for every one)."""

    selections: list[Literal["random", "dissimilar", "similar"]] = Field(default_factory=lambda: list(SELECTIONS))
    replacements: list[Literal["uniform", "popularity", "batch_popularity"]] = Field(
        default_factory=lambda: list(REPLACEMENTS)
    )
    ratios: list[float] = Field(default_factory=lambda: [0.0, 0.2, 0.4, 0.6, 0.8], min_length=2)
    reference: Literal["history", "user", "slate"] = "history"
    mode: Literal["sample", "deterministic"] = "sample"
    exclude_slate: bool = False
    batch_pool: Literal["logs", "slates"] = "logs"
    attacker: str = "att+transformer"
    adaptive: list[str] | Literal["all"] = Field(default_factory=lambda: ["random/uniform"])
    embedding_epochs: PositiveInt = 20

    @field_validator("ratios")
    @classmethod
    def _ratios_in_unit_interval(cls, ratios: list[float]) -> list[float]:
        if any(not 0.0 <= r <= 1.0 for r in ratios):
            raise ValueError("expected replacement ratios L in [0, 1]")
        return sorted(set(ratios))

    @field_validator("adaptive")
    @classmethod
    def _known_strategies(cls, adaptive: list[str] | str) -> list[str] | str:
        for item in [] if adaptive == "all" else adaptive:
            sel, _, rep = item.partition("/")
            if sel not in SELECTIONS or rep not in REPLACEMENTS:
                raise ValueError(f"{item!r} is not 'selection/replacement' with selection in {list(SELECTIONS)} "
                                 f"and replacement in {list(REPLACEMENTS)}")  # fmt: skip
        return adaptive


class ExposureOptions(StudyOptions):
    """Options of the ``exposure`` study (steps in ``recprivacy.experiments.exposure.study``)."""

    source: Literal["simulated", "mind", "zhihu", "impressions"] = "simulated"
    history_len: PositiveInt = 5
    slate_size: PositiveInt = 10
    max_pairs_per_user: PositiveInt | None = 20
    split: Literal["users", "contiguous"] = "users"
    experiments: list[Literal["attack", "slate_sweep", "protection"]] = Field(default_factory=lambda: ["attack"])
    encoders: list[Literal["mean", "max", "att"]] = Field(default_factory=lambda: list(ENCODERS))
    decoders: list[Literal["point", "lstm", "gru", "transformer"]] = Field(default_factory=lambda: list(DECODERS))
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)
    ks: list[PositiveInt] = Field(default_factory=lambda: [5, 10, 20])
    slate_sizes: list[PositiveInt] = Field(default_factory=lambda: [5, 10, 15, 20])
    sweep_encoder: Literal["mean", "max", "att"] = "att"
    attacker: AttackerOptions = Field(default_factory=AttackerOptions)
    protection: ProtectionOptions = Field(default_factory=ProtectionOptions)

    @field_validator("ks")
    @classmethod
    def _ks_include_10(cls, ks: list[int]) -> list[int]:
        if 10 not in ks:
            raise ValueError("ks must include 10 (early stopping, the sweep and the protection curves use Recall@10)")
        return sorted(set(ks))
