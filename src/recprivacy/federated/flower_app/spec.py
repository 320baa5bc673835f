"""``AppSpec``: everything a Flower run of paper 004 needs to know, as one JSON string.

The same spec travels to the ServerApp and to every ClientApp through the run configuration
(``[tool.flwr.app.config] spec``; ``flwr run --run-config spec.toml`` in a deployment), so a
device that joins from another machine needs nothing but the spec and its own data file. It
names the model, local training, the method (an upload defence of ``recprivacy.defenses.apm``
or an objective-perturbation baseline of ``recprivacy.defenses.federated_dp``, built here with
the same factories as the simulator's study, so their privacy statements are unchanged) and
the server's schedule (``rounds``, ``n_clients`` sampled per round, ``attack_all``: the last
round samples every user) with how many devices train at once (``wave_size``, the server
sends a round's messages in waves of that many nodes; it bounds the ClientApp processes alive
at once, each ~0.5 GB with torch, and leaves the results unchanged). ``timeout`` bounds each
wave's wait for replies. ``federation`` is the tag of the devices' data the study trains on
(``device.federation_tag``); the server refuses a device that holds another.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields

from recprivacy.defenses.apm import make_defence
from recprivacy.defenses.federated_dp import BASELINES, FederatedBaseline, make_baseline
from recprivacy.errors import ConfigError
from recprivacy.federated.models import FederatedModel, make_federated_model
from recprivacy.federated.protocol import LocalTraining, UploadDefence


@dataclass(frozen=True)
class AppSpec:
    """One Flower run (module docstring); ``method_options`` are the keyword arguments of
    ``make_defence`` (upload defences) or ``make_baseline`` (baselines, minus ``blocks``)."""

    model: str
    n_items: int
    n_features: int
    dim: int
    n_users: int
    n_clients: int
    rounds: int
    seed: int = 0
    noise: str = "secure"
    init_std: float = 0.1
    local: dict = field(default_factory=dict)
    method: str = "none"
    method_options: dict = field(default_factory=dict)
    blocks: dict = field(default_factory=dict)
    attack_all: bool = False
    snapshot_rounds: tuple[int, ...] = ()
    timeout: float = 600.0
    wave_size: int = 8
    federation: str = ""

    def __post_init__(self) -> None:
        if self.wave_size < 1:
            raise ConfigError(f"Flower app spec: wave_size must be a positive number of nodes, got {self.wave_size}")

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "AppSpec":
        """The spec of ``to_json``; ConfigError names the missing or unknown keys."""
        try:
            raw = json.loads(text)
        except (TypeError, json.JSONDecodeError) as err:
            raise ConfigError(f"Flower run config 'spec': expected the JSON of an AppSpec ({err})") from None
        known = {f.name for f in fields(cls)}
        if not isinstance(raw, dict) or set(raw) - known:
            raise ConfigError(f"Flower run config 'spec': expected keys among {sorted(known)}, got {sorted(raw)}")
        raw["snapshot_rounds"] = tuple(raw.get("snapshot_rounds", ()))
        return cls(**raw)

    def waves(self) -> int:
        """The most waves a round sends (the attack round may sample every user)."""
        return -(-self.n_users // self.wave_size)

    def training(self) -> LocalTraining:
        return LocalTraining(**self.local)

    def baseline(self) -> FederatedBaseline | None:
        """The objective-perturbation baseline named by ``method``, if it is one."""
        if self.method not in BASELINES:
            return None
        blocks = {a: list(cols) for a, cols in self.blocks.items()}
        return make_baseline(self.method, blocks, **self.method_options)

    def defence(self) -> UploadDefence | None:
        """The upload defence named by ``method`` (None for Pure FedRec and the baselines)."""
        return None if self.method in BASELINES else make_defence(self.method, **self.method_options)

    def federated_model(self) -> FederatedModel:
        """The model: the baseline's own (federated MF) or ``model``."""
        baseline = self.baseline()
        return make_federated_model((baseline and baseline.model) or self.model, self.n_items, self.n_features, self.dim)

    def sampled_all(self, round_: int) -> bool:
        """Whether ``round_`` lets every user take part (the attack round with ``attack_all``)."""
        return self.attack_all and round_ == self.rounds
