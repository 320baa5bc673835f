"""Training one method of the ``federated`` study: a federated recommender with one upload
defence of ``defenses.apm`` (``none`` = Pure FedRec, ``apm``, ``fixrec_max``, ``fixrec_min``,
``ldp`` = FedNews / +LDP, ``gaussian`` = FedRec-GN) or one objective-perturbation baseline of
``defenses.federated_dp`` (``fgerai``, ``fgerai_nl``, ``fdpmf`` and the noise-free ``fedmf``;
F-DPMF and FedMF always train federated MF, whatever ``model`` says), on one of the engines of
``federated.engines``, followed by the extra attack round (digest G11).

``train_method`` is public: the matrix's upload channel (``experiments.matrix.uploads``) trains
its federations with it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from recprivacy.config import Config
from recprivacy.data.interactions import Interactions
from recprivacy.defenses.apm import make_defence
from recprivacy.defenses.federated_dp import BASELINES, make_baseline
from recprivacy.experiments.federated.options import FederatedOptions, factory_options
from recprivacy.federated.engines import Federation, Method, train_federation
from recprivacy.federated.features import UserFeatures
from recprivacy.federated.models import make_federated_model
from recprivacy.federated.protocol import LocalTraining
from recprivacy.federated.simulator import FederatedSimulator, GlobalRecommender
from recprivacy.privacy.accounting import PrivacyStatement


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


def train_method(config: Config, options: FederatedOptions, method: str, train: Interactions, feats: UserFeatures,
                 dim: int) -> TrainedMethod:  # fmt: skip
    """Train ``method`` (an upload defence of ``defenses.apm`` or a baseline of
    ``defenses.federated_dp``) for ``options.rounds`` rounds plus the attack round on
    ``options.engine``, seeded by ``config.seed`` with ``config.noise`` protection noise. The
    statement covers the ``options.rounds`` training rounds (basic composition for the upload
    defences, the baseline's own accountant otherwise)."""
    factory = factory_options(method, options)
    baseline = make_baseline(method, feats.blocks, **factory) if method in BASELINES else None
    model = make_federated_model((baseline and baseline.model) or options.model, train.n_items, feats.dim, dim)
    defence = None if baseline else make_defence(method, **factory)
    sim = FederatedSimulator(model, train, feats.x, LocalTraining(options.lr, options.local_epochs, options.batch_size,
                                                                  options.n_negatives),
                             options.clients_per_round, config.seed, defence, options.init_std,
                             objective=baseline and baseline.objective, feature_privacy=baseline and baseline.features,
                             noise=config.noise)  # fmt: skip
    fed = train_federation(sim, Method(method, factory, feats.blocks), options.rounds, options.eval_every, options.engine,
                           options.attack_clients == "all", options.superlink, desc=f"{options.model} d={dim} {method}")
    statement = None
    if defence is not None:
        counts: dict[str, int] = defaultdict(int)
        for spec in model.shared_specs():
            counts[spec.component] += spec.size
        statement = defence.privacy_statement(dict(counts), rounds=options.rounds)
    elif baseline is not None:
        statement = baseline.privacy_statement(options.rounds, options.local_epochs, feats.dim)
    return TrainedMethod(sim, fed, None if statement is None else sim.noise.stamp(statement))
