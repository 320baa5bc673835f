"""The ServerApp and its strategy: the honest-but-curious server of paper 004.

``RecStrategy`` (a ``flwr.serverapp.strategy.Strategy``) knows only what paper 004's server
knows: the global model Θ, the schedule (``AppSpec``) and what devices upload. Before the
first round it asks each node which user it is as the node connects (``query``; it waits at
most ``spec.timeout`` seconds for all ``n_users`` nodes) and refuses a device whose data are of
another federation than the spec's as soon as it answers (``refuse_foreign``). Each round it samples users with
``protocol.sample_clients`` (every user in the attack round with ``attack_all``), sends them
Θ with the round number, and averages the uploads with ``protocol.aggregate`` in user order,
so the result does not depend on arrival order. The ServerApp hands the strategy its grid
through ``Waves``, which sends a round's messages ``spec.wave_size`` nodes at a time (and asks
for the replies every ``POLL_SECONDS``): each
message makes a SuperNode start a ClientApp process (which imports torch), so a round never
has more than ``wave_size`` of them alive on the federation's machines. A device's update
depends only on Θ, the round, the seed and its own data, so the waves change when devices
train, never what they upload. A round with a failed or missing reply raises
``RecPrivacyError`` naming the round, how many devices failed and the first one: paper 004's
FedAvg has no rule for a missing device, and dropping it would change the sampled round.

``ServerLog`` is the server's record, which the attacker reads: for each round the sampled
users and seconds, Θ after the rounds in ``spec.snapshot_rounds``, and the last round's
uploads with the Θ they started from. ``app`` (the deployment's ServerApp) writes it with
``torch.save`` to the run config's ``out`` path, also when the run fails.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import torch
from flwr.app import ArrayRecord, ConfigRecord, Context, Message, MessageType, MetricRecord, RecordDict
from flwr.serverapp import Grid, ServerApp
from flwr.serverapp.strategy import Strategy
from torch import Tensor

from recprivacy.errors import RecPrivacyError
from recprivacy.federated.flower_app.client import spec_in_run_config
from recprivacy.federated.flower_app.spec import AppSpec
from recprivacy.federated.protocol import aggregate, initial_state, sample_clients


@dataclass
class ServerLog:
    """What the server saw (module docstring). ``error``: the one-line reason a run failed."""

    users: dict[int, np.ndarray] = field(default_factory=dict)
    seconds: dict[int, float] = field(default_factory=dict)
    snapshots: dict[int, dict[str, Tensor]] = field(default_factory=dict)
    last_before: dict[str, Tensor] = field(default_factory=dict)
    last_uploads: dict[str, Tensor] = field(default_factory=dict)
    final: dict[str, Tensor] = field(default_factory=dict)
    error: str | None = None


class RecStrategy(Strategy):
    """Algorithm 1's server (module docstring)."""

    def __init__(self, spec: AppSpec, log: ServerLog) -> None:
        self.spec = spec
        self.log = log
        self.node_of: dict[int, int] = {}
        self.sent: dict[int, int] = {}
        self.before: dict[str, Tensor] = {}
        self.started = 0.0

    def configure_train(self, server_round: int, arrays: ArrayRecord, config: ConfigRecord, grid: Grid) -> Iterable[Message]:
        if not self.node_of:
            self.node_of = _identify_nodes(grid, self.spec.n_users, self.spec.timeout, self.spec.federation)
        self.started = time.perf_counter()
        users = np.arange(self.spec.n_users) if self.spec.sampled_all(server_round) else \
            sample_clients(self.spec.n_users, self.spec.n_clients, self.spec.seed, server_round)
        self.sent = {self.node_of[int(u)]: int(u) for u in users}
        self.before = arrays.to_torch_state_dict()
        content = RecordDict({"arrays": arrays, "config": ConfigRecord({"round": server_round})})
        return [Message(content, node, MessageType.TRAIN, group_id=str(server_round)) for node in self.sent]

    def aggregate_train(self, server_round: int, replies: Iterable[Message]) -> tuple[ArrayRecord | None, MetricRecord | None]:
        replies = list(replies)
        _check_replies(server_round, replies, self.sent)
        ordered = sorted(replies, key=lambda m: int(m.content["metrics"]["user"]))
        users = np.array([int(m.content["metrics"]["user"]) for m in ordered])
        records = [m.content["arrays"].to_torch_state_dict() for m in ordered]
        stacked = {name: torch.stack([r[name] for r in records]) for name in self.before}
        params = aggregate(stacked, users, server_round)
        self._record(server_round, users, stacked, params)
        return ArrayRecord(params), None

    def configure_evaluate(self, server_round: int, arrays: ArrayRecord, config: ConfigRecord, grid: Grid) -> Iterable[Message]:
        return []

    def aggregate_evaluate(self, server_round: int, replies: Iterable[Message]) -> MetricRecord | None:
        return None

    def summary(self) -> None:
        """Nothing to log beyond the spec (Flower calls this when the run starts)."""

    def _record(self, t: int, users: np.ndarray, uploads: dict[str, Tensor], params: dict[str, Tensor]) -> None:
        self.log.users[t] = users
        self.log.seconds[t] = time.perf_counter() - self.started
        if t in self.spec.snapshot_rounds:
            self.log.snapshots[t] = params
        if t == self.spec.rounds:
            self.log.last_before, self.log.last_uploads = self.before, uploads
        self.log.final = params


POLL_SECONDS = 0.2
"""How often a wave asks the SuperLink for its replies (Flower's ``send_and_receive`` asks every
3 s, which a wave of quick devices would mostly spend waiting)."""


class Waves:
    """``grid`` whose ``send_and_receive`` sends the messages ``size`` at a time, each wave
    waiting at most ``timeout`` seconds for its replies, and returns every wave's replies
    (module docstring); everything else is ``grid``'s. Every wave is sent, also after one
    with a missing reply, so the strategy's check names the devices that failed."""

    def __init__(self, grid: Grid, size: int) -> None:
        self.grid = grid
        self.size = size

    def send_and_receive(self, messages: Iterable[Message], *, timeout: float | None = None) -> list[Message]:
        messages = list(messages)
        return [reply for start in range(0, len(messages), self.size)
                for reply in exchange(self.grid, messages[start : start + self.size], timeout)]

    def __getattr__(self, name: str) -> object:
        return getattr(self.grid, name)


def exchange(grid: Grid, messages: list[Message], timeout: float | None) -> list[Message]:
    """Push ``messages`` and pull their replies every ``POLL_SECONDS`` until every one has
    replied or ``timeout`` seconds have passed (``None``: no limit), as Flower's
    ``Grid.send_and_receive`` does at its 3-second pace."""
    waiting = set(grid.push_messages(messages))
    deadline = None if timeout is None else time.monotonic() + timeout
    replies: list[Message] = []
    while waiting:
        pulled = list(grid.pull_messages(waiting))
        replies += pulled
        waiting -= {m.metadata.reply_to_message_id for m in pulled}
        if not waiting or (deadline is not None and time.monotonic() >= deadline):
            break
        time.sleep(POLL_SECONDS)
    return replies


def _identify_nodes(grid: Grid, n_users: int, timeout: float, federation: str) -> dict[int, int]:
    """``{user: node id}`` of every device, each asked once, as it connects: at most ``timeout``
    seconds for all to connect, and as long for each wave of replies. A device of another
    federation than ``federation`` is refused as soon as it answers (``refuse_foreign``), not
    after every device has connected; every user 0..n_users-1 must have exactly one node."""
    deadline = time.monotonic() + timeout
    replies: list[Message] = []
    asked: set[int] = set()
    while True:
        new = [n for n in grid.get_node_ids() if n not in asked]
        if new:
            asks = [Message(RecordDict({"config": ConfigRecord({})}), n, MessageType.QUERY) for n in new]
            answers = list(grid.send_and_receive(asks, timeout=timeout))
            _check_replies(0, answers, {n: -1 for n in new})
            refuse_foreign(answers, federation)
            asked.update(new)
            replies += answers
        if len(asked) >= n_users or time.monotonic() >= deadline:
            break
        time.sleep(0.2)
    if len(asked) < n_users:
        raise RecPrivacyError(f"only {len(asked)} of the {n_users} devices connected within {timeout:g} s")
    return node_users(replies, n_users, federation)


def refuse_foreign(replies: list[Message], federation: str) -> None:
    """RecPrivacyError naming the first device whose answer holds another federation's tag
    (its file was written from another config, split or dataset)."""
    foreign = [m for m in replies if _tag(m) != federation]
    if foreign:
        m = foreign[0]
        raise RecPrivacyError(f"devices: {len(foreign)} of {len(replies)} hold data of another federation (first: node "
                              f"{m.metadata.src_node_id}, user {int(m.content['metrics']['user'])}, tag {_tag(m)!r}; "
                              f"this run trains on {federation!r}); write their files again with `recprivacy devices` "
                              "from the study's config")


def node_users(replies: list[Message], n_users: int, federation: str) -> dict[int, int]:
    """``{user: node id}`` from the devices' answers to the query; RecPrivacyError for a device
    of another federation (``refuse_foreign``), or users missing or claimed twice."""
    refuse_foreign(replies, federation)
    node_of = {int(m.content["metrics"]["user"]): m.metadata.src_node_id for m in replies}
    if len(node_of) != len(replies) or sorted(node_of) != list(range(n_users)):
        claimed = sorted(int(m.content["metrics"]["user"]) for m in replies)
        raise RecPrivacyError(f"devices: expected one node for each user 0..{n_users - 1}, got users {claimed[:10]}"
                              f"{'...' if len(claimed) > 10 else ''}")
    return node_of


def _tag(reply: Message) -> str:
    """The federation tag a device's answer names ("" from a device without one)."""
    return str(reply.content["config"]["federation"]) if "config" in reply.content else ""


def _check_replies(round_: int, replies: list[Message], sent: dict[int, int]) -> None:
    """RecPrivacyError naming the round and the first device that failed or did not reply."""
    failed = [m for m in replies if m.has_error()]
    missing = set(sent) - {m.metadata.src_node_id for m in replies}
    if failed or missing:
        first = f"node {failed[0].metadata.src_node_id}: {failed[0].error.reason}" if failed else \
            f"node {min(missing)} (user {sent[min(missing)]}) did not reply"
        raise RecPrivacyError(f"Flower round {round_}: {len(failed) + len(missing)} of {len(sent)} devices failed ({first})")


def server_app(spec_of: Callable[[Context], AppSpec], done: Callable[[ServerLog, Context], None]) -> ServerApp:
    """A ServerApp running ``RecStrategy`` for ``spec.rounds`` rounds from ``initial_state``;
    ``done(log, context)`` receives the record, also after a failure."""
    app = ServerApp()

    @app.main()
    def main(grid: Grid, context: Context) -> None:
        log = ServerLog()
        try:
            spec = spec_of(context)
            params, _ = initial_state(spec.federated_model(), spec.n_users, spec.seed, spec.init_std)
            RecStrategy(spec, log).start(Waves(grid, spec.wave_size), ArrayRecord(params), num_rounds=spec.rounds,
                                         timeout=spec.timeout)
        except Exception as err:
            log.error = " ".join(f"{type(err).__name__}: {err}".split())
            raise
        finally:
            done(log, context)

    return app


def _save(log: ServerLog, context: Context) -> None:
    torch.save(log.__dict__, str(context.run_config["out"]))


app = server_app(spec_in_run_config, _save)
