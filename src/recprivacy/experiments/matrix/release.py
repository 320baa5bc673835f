"""The released-data channel of the matrix (paper 003): UPC-SDG rows and the column *recovery
of a synthetic release*.

**Rows.** UPC-SDG releases a synthetic version of the (canary-planted) training data: for every
user a share ``k`` of their items, chosen by the trained attention, is replaced by generated
items whose ``f_sim`` to the original is at most γ (a hard cap: an item with no candidate within
γ is dropped); the other items are released unchanged. The generator's frozen features are the
target's own factors, as in the audit's synthetic-release section, and it is built by that
section's function (``experiments.upcsdg.release.fit_generator``), one row per γ (``ReleaseOptions``).

A release protects everything downstream of it (``plan.DOWNSTREAM``): the row's model is the
configured target algorithm retrained on the release (early stopping on the real validation
split); it serves the lists and slates and is what the canary attacker reads, so every column
applies. Utility cost: that model's Recall@10 on the members' real test split against the
undefended target (``audit.utility_change``, in ``study.build_worlds``). Privacy statement:
``UPCSDG.privacy_statement()`` (no formal guarantee, hence no claimed-vs-measured epsilon
row). ``World.refit`` repeats the whole pipeline on other training data (features from the
configured algorithm fitted on it, a release of it, the algorithm retrained on the release):
the adaptive membership attacker's shadow.

**Column.** Replaced-item recovery (``attacks.recovery.ReplacementRecoveryAttack``): the attacker
holds the release and item embeddings and ranks, for each user, the items the user does not
have by how likely each is a replaced original; Recall@K over the users with a replaced or
dropped item, against the popularity guess of the release on the same users and K (paired
bootstrap over users, ``experiments.upcsdg.release.judged_recovery``). Threat model: *blind* by
default (the public release does not flag synthetic rows) or *informed* (``informed``: the
attacker knows which released items are replacements; a worst case). The *frozen* attacker's
embeddings are not adapted to the release: the generator's own features (public embeddings at
their most informative); the *adaptive* one learns them from the release (the item factors of
the row's model, which was trained on it).

**No defence** releases the raw data: nothing is replaced, so there is no replaced item to
recover, and every interaction (those UPC-SDG would replace included) is disclosed as it is.
That cell says so and holds no measurement; the UPC-SDG cells are judged against the
popularity guess instead of a change from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from pydantic import Field, field_validator

from recprivacy.attacks.recovery import ReplacementRecoveryAttack
from recprivacy.config import Config
from recprivacy.data.interactions import Interactions
from recprivacy.defenses.upcsdg import FrozenEmbeddings, SyntheticRelease
from recprivacy.defenses.upcsdg.preferences import check_unit_interval
from recprivacy.experiments.matrix.cells import Judged, MatrixCell, judged
from recprivacy.experiments.matrix.plan import ATTACKS, DefenceSpec, not_applicable
from recprivacy.experiments.matrix.world import World
from recprivacy.experiments.results import Results
from recprivacy.experiments.train import PreparedData
from recprivacy.experiments.upcsdg.audit import SyntheticReleaseOptions
from recprivacy.experiments.upcsdg.options import GeneratorParams
from recprivacy.experiments.upcsdg.release import fit_generator, judged_recovery
from recprivacy.metrics.verdict import users_sample
from recprivacy.models import make_model
from recprivacy.models.base import Recommender

ATTACK = next(a for a in ATTACKS if a.key == "recovery")
RAW_RELEASE = ("does not apply: without a defence the raw data is released; nothing is replaced, so there is no "
               "replaced item to recover: every interaction, those UPC-SDG would replace included, is disclosed as it "
               "is (recovery is trivially total)")  # fmt: skip


class ReleaseOptions(SyntheticReleaseOptions):
    """The audit's synthetic-release options (share ``k`` replaced, cap ``gamma``, ``generator``
    parameters of ``UPCSDG``, the recovery attacker's ``attack_k``; the audit's defaults, except
    that the generator scores every item as published, ``pool_size=None``, where the audit pools
    candidates on large catalogues), a UPC-SDG row for ``gamma`` and for each of ``more_gammas``,
    and the recovery attacker's threat model."""

    generator: GeneratorParams = Field(default_factory=lambda: {"pool_size": None})
    more_gammas: list[float] = Field(default_factory=list)
    informed: bool = False

    @field_validator("more_gammas")
    @classmethod
    def _caps(cls, values: list[float]) -> list[float]:
        return [check_unit_interval(v, f"release.more_gammas[{n}]") for n, v in enumerate(values)]

    @property
    def gammas(self) -> list[float]:
        """The γ of every UPC-SDG row."""
        return [self.gamma, *self.more_gammas]


@dataclass(frozen=True)
class Published:
    """What a UPC-SDG row released, and the features its generator used."""

    release: SyntheticRelease
    features: FrozenEmbeddings


def _fitted(config: Config, train: Interactions, valid: Interactions | None, seed: int) -> Recommender:
    """The configured target algorithm fitted on ``train`` (seeded unless its params set a seed)."""
    return make_model(config.model.name, **{"seed": seed, **config.model.params}).fit(train, valid)


def _refit(config: Config, o: ReleaseOptions, gamma: float, train: Interactions, seed: int) -> Recommender:
    """``World.refit`` of a UPC-SDG row: features from ``train``, a release of it, a model on that."""
    features = FrozenEmbeddings.from_model(_fitted(config, train, None, seed))
    release = fit_generator(train, features, o.k, gamma, o.generator, seed, config.noise).generate()
    return _fitted(config, release.data, None, seed)


def upcsdg_worlds(config: Config, o: ReleaseOptions, data: PreparedData, target: Recommender,
                  results: Results) -> list[World]:  # fmt: skip
    """One UPC-SDG row per γ (module docstring): the release of ``data.train`` and the model on it."""
    features = FrozenEmbeddings.from_model(target)
    worlds = []
    for gamma in o.gammas:
        with results.timed(f"matrix:UPC-SDG release and retraining γ={gamma:g}"):
            generator = fit_generator(data.train, features, o.k, gamma, o.generator, config.seed, config.noise)
            release = generator.generate()
            model = _fitted(config, release.data, data.valid, config.seed)
        spec = DefenceSpec(f"upcsdg_g{gamma:g}", f"UPC-SDG (k = {o.k:g}, γ = {gamma:g})", "released data")
        worlds.append(World(spec, model, generator.privacy_statement(), refit=partial(_refit, config, o, gamma),
                            release=Published(release, features)))  # fmt: skip
    return worlds


def recovery_column(o: ReleaseOptions, worlds: list[World]) -> None:
    """Fill every world's recovery cell (module docstring); ``worlds[0]`` is undefended."""
    for world in worlds:
        world.cells[ATTACK.key] = recovery_cell(o, world, undefended=world is worlds[0])


def recovery_cell(o: ReleaseOptions, world: World, undefended: bool = False) -> MatrixCell:
    """The frozen and adaptive recovery attackers on ``world``'s release, or why there are none."""
    if undefended:
        return MatrixCell(reason=RAW_RELEASE)
    if (why := not_applicable(ATTACK, world.spec)) is not None:
        return MatrixCell(reason=why)
    if not isinstance(world.release, Published):
        return MatrixCell(reason="not measured: the row published no synthetic release")
    frozen, adaptive = (_recovered(o, embeddings, world.release) for embeddings in
                        (world.release.features.items, world.model.item_factors_))  # fmt: skip
    return MatrixCell(frozen, adaptive)


def _recovered(o: ReleaseOptions, embeddings: Any, published: Published) -> Judged:
    release = published.release
    replaced = release.pairs_matrix("replacement_item") if o.informed else None
    attack = ReplacementRecoveryAttack(embeddings, informed=o.informed).fit(release.data, replaced)
    value, blind, margin = judged_recovery(attack, release, o.attack_k)  # one target per user with a replaced item
    return judged(value, blind, f"popularity guess of the release, {o.attack_k} items", margin, sample=users_sample(value.n))


def release_text(o: ReleaseOptions, algorithm: str) -> str:
    """The report's paragraph on the released-data rows and the recovery column."""
    threat = "informed (knows which released items are replacements)" if o.informed else "blind (synthetic rows unflagged)"
    generator = ", ".join(f"{k} = {v}" for k, v in o.generator.items()) or "default settings (at most 30 epochs)"
    return (f"UPC-SDG rows (paper 003) release the training data with a share k = {o.k:g} of each user's items replaced "
            f"within a similarity cap γ (generator: {generator}; features: the target's factors); a release protects "
            f"everything downstream, so the row's model is {algorithm} retrained on the release and every column applies. "
            f"The recovery column is replaced-item recovery by a {threat} attacker, Recall@{o.attack_k} of the replaced "
            f"originals against the popularity guess of the release on the same users and K; frozen: the generator's own "
            f"item features, adaptive: item factors learned from the release. Without a defence the raw data is released "
            f"and there is nothing to recover (every interaction is disclosed as it is). The adaptive membership attacker "
            f"of a DPMF or UPC-SDG row trains its shadow under the same defence.")
