"""``study_options`` of the ``upcsdg`` study (paper 003) and the settings it measures, checked
before any data load.

* ``SETTINGS``: Table 2's two settings, "−" (k = 0.8, γ = 0.1) and "+" (k = 0.2, γ = 0.9);
* ``VARIANTS``: Table 3's ablations, as generator parameters over UPC-SDG's own (``_s`` random
  selection, ``_r`` uniform random replacements, ``_f`` the replacement closest to f_sim 0.9);
* ``ATTACKS``: the replaced-item recovery attackers of the grid (``attacks.recovery``);
* ranking metrics: ``METRICS`` at ``CUTOFF`` = 20, full ranking (the paper's).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, PositiveInt, field_validator

from recprivacy.config import StudyOptions
from recprivacy.defenses.upcsdg import UPCSDG
from recprivacy.defenses.upcsdg.preferences import check_unit_interval
from recprivacy.errors import ConfigError
from recprivacy.models import make_model

CUTOFF = 20
METRICS = ("precision", "recall", "ndcg")
SETTINGS = {"-": (0.8, 0.1), "+": (0.2, 0.9)}
LABELS = {"random": "Random", "bpr": "BPRMF", "neumf": "NeuMF", "lightgcn": "LightGCN"}
VARIANTS = {"UPC-SDG_s": {"selection": "random"}, "UPC-SDG_r": {"replacement": "random"},
            "UPC-SDG_f": {"replacement": "fixed"}, "UPC-SDG": {}}
ATTACKS = {"blind": "blind, frozen item embeddings", "informed": "informed, frozen item embeddings",
           "release": "blind, embeddings learned from the release", "popularity": "popularity guess (baseline)"}


def _unit_list(values: list[float], name: str) -> list[float]:
    return [check_unit_interval(v, f"{name}[{n}]") for n, v in enumerate(values)]


def generator_params(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` after checking that ``UPCSDG`` accepts them (``seed`` and ``noise`` are set per run)."""
    if "seed" in params:
        raise ConfigError("generator.seed: set the study seed(s) instead; the generator takes each run's seed")
    if "noise" in params:
        raise ConfigError("generator.noise: set the config's top-level noise instead; every defence takes it from there")
    try:
        UPCSDG(**params)
    except TypeError as err:
        raise ConfigError(f"generator: {err}".replace("UPCSDG.__init__() ", "")) from None
    return params


GeneratorParams = Annotated[dict[str, Any], AfterValidator(generator_params)]
"""Parameters of ``UPCSDG`` in ``study_options.generator`` (study and audit), checked by ``generator_params``."""


class UPCSDGOptions(StudyOptions):
    """``study_options`` of the ``upcsdg`` study (see ``recprivacy.experiments.upcsdg.study``)."""

    seeds: list[int] | None = None
    parts: list[Literal["table2", "grid", "ablations", "membership"]] = Field(
        default_factory=lambda: ["table2", "grid", "ablations", "membership"])
    generator: GeneratorParams = Field(default_factory=dict)
    models: list[str] = Field(default_factory=lambda: ["bpr", "neumf", "lightgcn"])
    downstream: dict[str, dict[str, Any]] = Field(default_factory=dict)
    grid_k: list[float] = Field(default_factory=lambda: [0.2, 0.4, 0.6, 0.8])
    grid_gamma: list[float] = Field(default_factory=lambda: [0.1, 0.3, 0.5, 0.7, 0.9])
    ablation_k: list[float] = Field(default_factory=lambda: [0.2, 0.4, 0.6, 0.8])
    ablation_gamma: float = 0.9
    attack_k: PositiveInt = 10
    attack_weight: float = Field(0.5, ge=0.0, le=1.0)
    paper_dataset: Literal["office", "clothing", "gowalla"] = "office"
    membership_algorithm: str = "bpr"
    membership_min_interactions: PositiveInt = 20
    membership_list_k: PositiveInt = 100

    @field_validator("grid_k", "grid_gamma", "ablation_k")
    @classmethod
    def _in_unit_interval(cls, values: list[float]) -> list[float]:
        return _unit_list(values, "value")

    @field_validator("ablation_gamma")
    @classmethod
    def _gamma(cls, value: float) -> float:
        return check_unit_interval(value, "ablation_gamma")

    @field_validator("models")
    @classmethod
    def _models(cls, names: list[str]) -> list[str]:
        for name in names:
            make_model(name)
        return names

    @field_validator("membership_algorithm")
    @classmethod
    def _algorithm(cls, name: str) -> str:
        make_model(name)
        return name
