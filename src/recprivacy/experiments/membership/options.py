"""``study_options`` of the ``membership`` study (paper 001), validated before any data load.

Defaults are the paper's (§3.1, and docs/decisions.md, "Membership inference (paper 001)", where
it is silent): k = 100, l = 100, rank-linear weights, the Origin
feature, the MLP attack, users with >= 20 interactions, user-disjoint thirds, restricted item
coverage, a random leave-one-out hold-out for HR@k, popularity randomization with α = 0.1.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, PositiveInt, field_validator
from pydantic_core import PydanticCustomError

from recprivacy.attacks.membership.attack_models import ATTACKS, sklearn_classifier
from recprivacy.config import StrictModel, StudyOptions
from recprivacy.errors import RecPrivacyError
from recprivacy.models import make_model

Experiment = Literal[
    "hit_rate", "assumption1", "assumption2", "assumption3", "kmeans", "sweep_k", "sweep_l", "weighting",
    "mimi", "shadow_size", "features", "defense",
]  # fmt: skip
FeatureMethod = Literal["origin", "concat10", "concat20", "concat100", "hadamard", "similarity"]
TEN_TO_HUNDRED = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]


class DefenseOptions(StrictModel):
    """Popularity Randomization: ``alpha = k / N_cand`` and who deploys it (``target``: the
    target only, the paper's evaluation; ``both``: shadow too, an adversary that knows the
    defence, the adaptive adversary)."""

    alpha: float = Field(0.1, gt=0, le=1)
    scopes: list[Literal["target", "both"]] = Field(default_factory=lambda: ["target", "both"], min_length=1)


class MembershipOptions(StudyOptions):
    """What the ``membership`` study runs (see ``recprivacy.experiments.membership``)."""

    experiments: list[Experiment] = Field(default_factory=lambda: ["assumption1"], min_length=1)
    datasets: list[str] | None = None
    dataset_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    algorithms: list[str] = Field(default_factory=lambda: ["itemcf", "lfm", "neumf"], min_length=1)
    n_seeds: PositiveInt = 1
    k: PositiveInt = 100
    n_factors: PositiveInt = 100
    weighting: Literal["rank", "uniform"] = "rank"
    feature: FeatureMethod = "origin"
    attack: str = "mlp"
    min_interactions: PositiveInt = 20
    split_mode: Literal["user", "record"] = "user"
    item_coverage: Literal["restrict", "init"] = "restrict"
    holdout: Literal["random", "latest", "none"] = "random"
    vector_mode: Literal["rating", "implicit", "svd"] = "rating"
    vector_params: dict[str, Any] = Field(default_factory=dict)
    vector_files: dict[str, str] = Field(default_factory=dict)
    model_params: dict[str, dict[str, Any]] = Field(default_factory=dict)
    attack_params: dict[str, dict[str, Any]] = Field(default_factory=dict)
    defense: DefenseOptions = Field(default_factory=DefenseOptions)
    ks: list[PositiveInt] = Field(default_factory=lambda: list(TEN_TO_HUNDRED), min_length=1)
    ls: list[PositiveInt] = Field(default_factory=lambda: list(TEN_TO_HUNDRED), min_length=1)
    mimi_values: list[PositiveInt] = Field(default_factory=lambda: [20, 50, 100], min_length=1)
    mimi_algorithm: str = "itemcf"
    shadow_fractions: list[float] = Field(default_factory=lambda: [1.0, 0.9, 0.8, 0.7], min_length=1)
    shadow_size_algorithm: str = "lfm"
    feature_methods: list[FeatureMethod] = Field(
        default_factory=lambda: ["origin", "concat10", "concat20", "concat100", "hadamard", "similarity"], min_length=1
    )
    embedding: Literal["pca", "tsne"] = "pca"

    @field_validator("algorithms", "mimi_algorithm", "shadow_size_algorithm")
    @classmethod
    def _known_models(cls, value: Any) -> Any:
        for name in [value] if isinstance(value, str) else value:
            _check(lambda: make_model(name))
        return value

    @field_validator("model_params")
    @classmethod
    def _constructible(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for name, params in value.items():
            _check(lambda: make_model(name, **params))
        return value

    @field_validator("attack")
    @classmethod
    def _known_attack(cls, value: str) -> str:
        if value not in ATTACKS:
            _check(lambda: sklearn_classifier(value))
        return value

    @field_validator("shadow_fractions")
    @classmethod
    def _fractions(cls, value: list[float]) -> list[float]:
        if any(not 0 < f <= 1 for f in value):
            raise PydanticCustomError("fraction", "expected fractions in (0, 1]", {})
        return value


def _check(build: Any) -> None:
    """Run ``build`` and turn a recprivacy error into a one-line pydantic error."""
    try:
        build()
    except (RecPrivacyError, TypeError) as err:
        raise PydanticCustomError("value", "{err}", {"err": " ".join(str(err).split())}) from None
