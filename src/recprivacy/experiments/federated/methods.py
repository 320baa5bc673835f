"""Training one method of the ``federated`` study: a federated recommender with one upload
defence of ``defenses.apm`` (``none`` = Pure FedRec, ``apm``, ``fixrec_max``, ``fixrec_min``,
``ldp`` = FedNews / +LDP, ``gaussian`` = FedRec-GN) or one objective-perturbation baseline of
``defenses.federated_dp`` (``fgerai``, ``fgerai_nl``, ``fdpmf`` and the noise-free ``fedmf``;
F-DPMF and FedMF always train federated MF, whatever ``model`` says), on one of the engines of
``federated.engines``, followed by the extra attack round.

``train_method`` is public: the matrix's upload channel (``experiments.matrix.uploads``) trains
its federations with it. ``method_statement`` gives the same statement without training (the
study's driver renders the statements while the training runs in its cells).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from recprivacy.config import Config
from recprivacy.data.interactions import Interactions
from recprivacy.defenses.apm import ClippedNoise, make_defence
from recprivacy.defenses.federated_dp import BASELINES, FederatedBaseline, make_baseline
from recprivacy.experiments.federated.options import FederatedOptions, factory_options
from recprivacy.federated.engines import Federation, Method, train_federation
from recprivacy.federated.features import UserFeatures
from recprivacy.federated.models import FederatedModel, make_federated_model
from recprivacy.federated.protocol import LocalTraining
from recprivacy.federated.simulator import FederatedSimulator, GlobalRecommender
from recprivacy.privacy.accounting import PrivacyStatement, StatementContext
from recprivacy.privacy.randomness import NoiseSource, check_mode


@dataclass(frozen=True)
class TrainedMethod:
    """One method's trained federation: the simulator (model, data, features, defence), the
    rounds' snapshots and the attack round (``engines.Federation``), and the method's privacy
    statement carrying its noise source (None for Pure FedRec)."""

    sim: FederatedSimulator
    federation: Federation
    statement: PrivacyStatement | None

    def recommender(self, round: int | None = None) -> GlobalRecommender:
        """The global model after training round ``round`` (default: the last one trained,
        before the attack round), as a ``Recommender``."""
        params, private = self.federation.snapshots[max(self.federation.snapshots) if round is None else round]
        return GlobalRecommender(self.sim.model, params, self.sim.features, self.sim.train_csr, private)


@dataclass(frozen=True)
class MethodParts:
    """What ``method`` trains with before any round: the federated model, the upload defence
    or the objective-perturbation baseline, and their factory options."""

    method: str
    factory: dict
    model: FederatedModel
    defence: ClippedNoise | None
    baseline: FederatedBaseline | None

    def statement(self, options: FederatedOptions, feats: UserFeatures, noise: NoiseSource) -> PrivacyStatement | None:
        """The privacy statement of ``options.rounds`` training rounds (basic composition for
        the upload defences, the baseline's own accountant otherwise), stamped with ``noise``;
        None for Pure FedRec. It depends on the method's settings, not on what training does."""
        statement = None
        if self.defence is not None:
            counts: dict[str, int] = defaultdict(int)
            for spec in self.model.shared_specs():
                counts[spec.component] += spec.size
            statement = self.defence.privacy_statement(StatementContext(rounds=options.rounds, counts=counts))
        elif self.baseline is not None:
            context = StatementContext(rounds=options.rounds, local_epochs=options.local_epochs, n_columns=feats.dim)
            statement = self.baseline.privacy_statement(context)
        return None if statement is None else noise.stamp(statement)


def method_parts(options: FederatedOptions, method: str, train: Interactions, feats: UserFeatures, dim: int) -> MethodParts:
    """The model and defence (or baseline) of ``method`` at embedding size ``dim``."""
    factory = factory_options(method, options)
    baseline = make_baseline(method, feats.blocks, **factory) if method in BASELINES else None
    model = make_federated_model((baseline and baseline.model) or options.model, train.n_items, feats.dim, dim)
    return MethodParts(method, factory, model, None if baseline else make_defence(method, **factory), baseline)


def method_statement(config: Config, options: FederatedOptions, method: str, train: Interactions, feats: UserFeatures,
                     dim: int) -> PrivacyStatement | None:  # fmt: skip
    """The statement ``train_method`` gives ``method``, without training it."""
    noise = NoiseSource(check_mode(config.noise), config.seed)
    return method_parts(options, method, train, feats, dim).statement(options, feats, noise)


def train_method(config: Config, options: FederatedOptions, method: str, train: Interactions, feats: UserFeatures,
                 dim: int) -> TrainedMethod:  # fmt: skip
    """Train ``method`` (an upload defence of ``defenses.apm`` or a baseline of
    ``defenses.federated_dp``) for ``options.rounds`` rounds plus the attack round on
    ``options.engine``, seeded by ``config.seed`` with ``config.noise`` protection noise, with
    its statement (``MethodParts.statement``)."""
    parts = method_parts(options, method, train, feats, dim)
    baseline = parts.baseline
    sim = FederatedSimulator(parts.model, train, feats.x, LocalTraining(options.lr, options.local_epochs, options.batch_size,
                                                                        options.n_negatives),
                             options.clients_per_round, config.seed, parts.defence, options.init_std,
                             objective=baseline and baseline.objective, feature_privacy=baseline and baseline.features,
                             noise=config.noise)  # fmt: skip
    fed = train_federation(sim, Method(method, parts.factory, feats.blocks), options.rounds, options.eval_every, options.engine,
                           options.attack_clients == "all", options.superlink, desc=f"{options.model} d={dim} {method}",
                           wave_size=options.wave_size)
    return TrainedMethod(sim, fed, parts.statement(options, feats, sim.noise))
