"""Issue 49: one defence protocol. Every class under ``recprivacy.defenses`` is either a defence
of one of the three kinds (``defenses.kinds``) with the one ``privacy_statement`` signature, or a
named part of a defence; a new class that is neither fails here."""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import recprivacy.defenses
from recprivacy.data.exposure_pairs import impression_pairs
from recprivacy.data.interactions import Interactions
from recprivacy.data.synthetic import make_synthetic, make_synthetic_exposure
from recprivacy.defenses.apm import ClippedNoise, make_defence
from recprivacy.defenses.dipsgnn import DIPSGNN
from recprivacy.defenses.dp_engine import PrivateRecommender, make_private
from recprivacy.defenses.dpmf import DPMF
from recprivacy.defenses.dpsgd import DPSGD
from recprivacy.defenses.edgerand import EdgeRand
from recprivacy.defenses.exposure_perturbation import ExposurePerturbation
from recprivacy.defenses.federated_dp import (
    FeatureLDP,
    FederatedBaseline,
    FunctionalMechanism,
    ItemObjectiveNoise,
    make_baseline,
)
from recprivacy.defenses.kinds import KINDS, Defence
from recprivacy.defenses.popularity_randomization import PopularityRandomization
from recprivacy.defenses.upcsdg import UPCSDG, FrozenEmbeddings, PrivacyPreferences
from recprivacy.models.base import Recommender
from recprivacy.models.bpr import BPRMF
from recprivacy.models.srgnn import SRGNN
from recprivacy.privacy.accounting import PrivacyStatement, StatementContext

#: classes under ``recprivacy.defenses`` that are parts of a defence, not defences, and why
PARTS = {
    "recprivacy.defenses.dipsgnn.NoisyAggregationNet": "DIPSGNN's network",
    "recprivacy.defenses.edgerand.NoisyAdjacencyNet": "EdgeRand's network",
    "recprivacy.defenses.private_srgnn.PrivateSRGNN": "the base of DIPSGNN, EdgeRand and DPSGD, which state the claims",
    "recprivacy.defenses.trained_copy.TrainedCopy": "the scoring of a training-time engine's trained copy",
    "recprivacy.defenses.dp_engine._Losses": "make_private's per-unit losses",
    "recprivacy.defenses.federated_dp.ObjectiveNoise": "one client's draw of objective noise",
    "recprivacy.defenses.kinds.Defence": "the protocol itself",
    "recprivacy.defenses.upcsdg.candidates.CandidatePools": "UPC-SDG's candidate items",
    "recprivacy.defenses.upcsdg.embeddings.FrozenEmbeddings": "UPC-SDG's input embeddings",
    "recprivacy.defenses.upcsdg.generation.GenerationModule": "UPC-SDG's generation module",
    "recprivacy.defenses.upcsdg.preferences.PrivacyPreferences": "UPC-SDG's per-user k and gamma",
    "recprivacy.defenses.upcsdg.release.SyntheticRelease": "what UPC-SDG's verb returns",
    "recprivacy.defenses.upcsdg.selection.PairBatch": "UPC-SDG's training batch",
    "recprivacy.defenses.upcsdg.selection.SelectionModule": "UPC-SDG's selection module",
    "recprivacy.defenses.upcsdg.similarity.ItemSimilarity": "UPC-SDG's f_sim",
}


def _classes() -> dict[str, type]:
    """Every class defined in a module under ``recprivacy.defenses``, by qualified name."""
    out = {}
    for info in pkgutil.walk_packages(recprivacy.defenses.__path__, "recprivacy.defenses."):
        module = importlib.import_module(info.name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__:
                out[f"{module.__name__}.{name}"] = cls
    return out


CLASSES = _classes()
DEFENCES = {name: cls for name, cls in CLASSES.items() if name not in PARTS}


# --------------------------------------------------------------------------- minimal instances


@pytest.fixture(scope="module")
def data() -> Interactions:
    return make_synthetic(n_users=30, n_items=25, n_interactions=300, min_user_interactions=6, seed=0)


def _backbone() -> SRGNN:
    return SRGNN(adjacency="count", user_mode="none", hidden=8, n_epochs=1, batch_size=32, seed=0)


def _transform(defence: Any, *inputs: Any) -> Any:
    """``defence.fit(*inputs)``, checked to return the defence itself."""
    assert defence.fit(*inputs) is defence
    return defence


def _upcsdg(data: Interactions) -> UPCSDG:
    g = torch.Generator().manual_seed(0)
    embeddings = FrozenEmbeddings(torch.randn(data.n_users, 4, generator=g), torch.randn(data.n_items, 4, generator=g), "random")
    return _transform(UPCSDG(n_epochs=1, seed=0, noise="simulation"), data, embeddings,
                      PrivacyPreferences.uniform(data.n_users, 0.2, 0.5))  # fmt: skip


def _exposure(data: Interactions) -> ExposurePerturbation:
    pairs = impression_pairs(make_synthetic_exposure(data, slate_size=5, history_len=2, n_steps=3), 2, 5)
    return _transform(ExposurePerturbation(noise="simulation"), pairs)


#: a fitted (training, transform) or constructed (federated) minimal instance of each defence
INSTANCES: dict[type, Callable[[Interactions], Any]] = {
    PrivateRecommender: lambda d: make_private(BPRMF(n_factors=4, seed=0), delta=1e-3, batch_users=10, n_epochs=1,
                                               noise="simulation").fit(d),
    DIPSGNN: lambda d: DIPSGNN(_backbone(), noise="simulation").fit(d),
    DPSGD: lambda d: DPSGD(_backbone(), eps1=math.inf, delta=1e-3, noise="simulation").fit(d),
    EdgeRand: lambda d: EdgeRand(_backbone(), noise="simulation").fit(d),
    DPMF: lambda d: DPMF(n_factors=4, n_epochs=1, noise="simulation").fit(d),
    PopularityRandomization: lambda d: _transform(PopularityRandomization(noise="simulation"), d),
    ExposurePerturbation: _exposure,
    UPCSDG: _upcsdg,
    ClippedNoise: lambda d: make_defence("apm"),
    FeatureLDP: lambda d: FeatureLDP(1.0, {"gender": (0, 1)}),
    FunctionalMechanism: lambda d: FunctionalMechanism(),
    ItemObjectiveNoise: lambda d: ItemObjectiveNoise(),
    FederatedBaseline: lambda d: make_baseline("fgerai", {"gender": np.array([0, 1])}),
}


# --------------------------------------------------------------------------- the protocol


def test_the_walk_finds_the_defences_and_every_part_still_exists() -> None:
    assert set(PARTS) <= set(CLASSES), sorted(set(PARTS) - set(CLASSES))
    assert set(DEFENCES.values()) == set(INSTANCES), "a new defence needs a minimal instance in INSTANCES"
    assert len(DEFENCES) == 13


@pytest.mark.parametrize("name", sorted(PARTS))
def test_a_part_states_no_claim_of_its_own(name: str) -> None:
    cls = CLASSES[name]
    assert "privacy_statement" not in vars(cls) or cls is Defence


@pytest.mark.parametrize("name", sorted(DEFENCES))
def test_every_defence_has_one_kind_and_the_one_signature(name: str) -> None:
    cls = DEFENCES[name]
    assert getattr(cls, "kind", None) in KINDS, f"{name}: declare kind, one of {KINDS}"
    signature = inspect.signature(cls.privacy_statement)
    assert list(signature.parameters) == ["self", "context"], f"{name}: privacy_statement(self, context=None)"
    context = signature.parameters["context"]
    assert context.default is None and context.annotation == "StatementContext | None"
    assert signature.return_annotation == "PrivacyStatement"
    assert issubclass(cls, Recommender) == (cls.kind == "training"), "training-time defences are recommenders"
    if cls.kind == "transform":
        assert "fit" in dir(cls)


@pytest.mark.parametrize("cls", list(INSTANCES), ids=lambda c: c.__name__)
def test_every_defence_states_its_claim_with_and_without_a_context(cls: type, data: Interactions) -> None:
    defence = INSTANCES[cls](data)
    assert isinstance(defence, Defence)
    default = defence.privacy_statement()
    assert isinstance(default, PrivacyStatement)
    assert defence.privacy_statement(StatementContext()) == default
    contexted = defence.privacy_statement(StatementContext(rounds=2, local_epochs=1, n_columns=4, counts={"user": 3}))
    assert isinstance(contexted, PrivacyStatement)
    assert all(isinstance(label, str) and isinstance(part, PrivacyStatement) for label, part in default.parts)
