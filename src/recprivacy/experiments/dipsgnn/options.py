"""``study_options`` of the ``dipsgnn`` study (paper 002) and the methods it compares.

Defaults are the paper's ML-1M setting (§5.1 and Fig. 6): eps1 = 20 for user features,
eps2 = 5 for edges, delta = 2.5e-7 (the authors' code default, below one over the number of
edges), row norm C = 0.2 (best on ML-1M in Fig. 6), sequences of at most 100 interactions, five
seeds, and ML-1M's gender, age and occupation as user features.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, field_validator

from recprivacy.config import StudyOptions

ML1M_CATEGORIES = {"gender": ["F", "M"], "age": [1, 18, 25, 35, 45, 50, 56], "occupation": list(range(21))}

#: method -> (Table 2 type, label)
METHODS: dict[str, tuple[str, str]] = {
    "BPRMF": ("Nonp", "BPR-MF"),
    "SASRec": ("Nonp", "SASRec"),
    "LightGCN": ("Nonp", "LightGCN"),
    "SRGNN": ("Nonp", "SR-GNN (no user)"),
    "APGNN": ("Nonp", "APGNN (SR-GNN + user features)"),
    "DPMF_imp": ("Priv", "DPMF_imp"),
    "DPMF_exp": ("Priv", "DPMF_exp"),
    "DPSGD": ("Priv", "DP-SGD (SR-GNN)"),
    "EdgeRand": ("Priv", "EdgeRand"),
    "DIPSGNN": ("Ours", "DIPSGNN (noise std sigma)"),
    "DIPSGNN_legacy": ("Ours", "DIPSGNN, authors' code (std sigma^2, no test noise)"),
    "Nonp": ("Ablation", "Nonp (no noise, features)"),
    "Nonp-U": ("Ablation", "Nonp-U (no noise, user id)"),
    "Priv-U": ("Ablation", "Priv-U (noise, user id)"),
}
TABLE2_METHODS = ["BPRMF", "SASRec", "LightGCN", "SRGNN", "APGNN", "DPMF_imp", "DPMF_exp", "DPSGD", "EdgeRand",
                  "DIPSGNN", "DIPSGNN_legacy"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FeatureSpec(_Strict):
    """User feature columns (and their declared domains) read by the SR-GNN-family models."""

    numeric: list[str] = Field(default_factory=list)
    categorical: list[str] = Field(default_factory=list)
    categories: dict[str, list[Any]] = Field(default_factory=dict)
    bounds: dict[str, tuple[float, float]] = Field(default_factory=dict)


class SweepSpec(_Strict):
    """One sweep of Figs. 3-6: a parameter, its values and the methods compared."""

    parameter: Literal["eps2", "eps1", "n_steps", "C"]
    values: list[float] = Field(min_length=1)
    methods: list[str] = Field(default_factory=lambda: ["DIPSGNN", "EdgeRand"])


def ml1m_features() -> FeatureSpec:
    """ML-1M's user features with their declared domains (the paper's user side)."""
    return FeatureSpec(categorical=["gender", "age", "occupation"], categories=ML1M_CATEGORIES)


def feature_params(features: FeatureSpec | None) -> dict[str, Any]:
    """SR-GNN-family arguments for the user side: ``features`` (numeric and categorical columns
    with their declared domains), or user-id embeddings without them."""
    if features is None:
        return {"user_mode": "id"}
    return {"user_mode": "features", "user_numeric": features.numeric, "user_categorical": features.categorical,
            "user_categories": features.categories or None, "user_bounds": features.bounds or None}


class DIPSGNNOptions(StudyOptions):
    """``study_options`` of the ``dipsgnn`` study (package docstring)."""

    methods: list[str] = Field(default_factory=lambda: list(TABLE2_METHODS))
    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2, 3, 4], min_length=1)
    max_len: PositiveInt = 100
    test_ratio: float = Field(0.2, gt=0, lt=1)
    test_context: Literal["test_segment", "full_history"] = "test_segment"
    eps1: float = Field(20.0, gt=0)
    eps2: float = Field(5.0, gt=0)
    delta: float = Field(2.5e-7, gt=0, lt=1)
    C: float = Field(0.2, gt=0)
    features: FeatureSpec | None = Field(default_factory=ml1m_features)
    method_params: dict[str, dict[str, Any]] = Field(default_factory=dict)
    sweeps: list[SweepSpec] = Field(default_factory=list)
    paper_column: Literal["ML-1M", "Yelp", "Tmall"] | None = None

    @field_validator("methods")
    @classmethod
    def _known_methods(cls, methods: list[str]) -> list[str]:
        unknown = [m for m in methods if m not in METHODS]
        if unknown or not methods:
            raise ValueError(f"unknown method(s) {unknown}; expected some of {list(METHODS)}")
        return methods
