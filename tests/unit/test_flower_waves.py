"""The ServerApp's waves (``flower_app.server``): messages go out ``size`` at a time, each wave
pulls its replies until all are in or its timeout passes, and every wave is sent even after one
came back short (no process is started: a grid that answers from a script stands in for the
SuperLink; the deployment tests run the real one)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("flwr", reason="Flower is in the test extra; install recprivacy[test]")
from recprivacy.federated.flower_app import server  # noqa: E402


class ScriptedGrid:
    """Push returns each message's id; the k-th pull returns the replies ``script[k]`` names (the
    last entry from then on), among those still asked for; it records the pushes and counts the
    pulls."""

    def __init__(self, script: list[set[str]]) -> None:
        self.script = script
        self.pushed: list[list[str]] = []
        self.pulls = 0

    def push_messages(self, messages):
        self.pushed.append(list(messages))
        return list(messages)

    def pull_messages(self, ids):
        ready = self.script[min(self.pulls, len(self.script) - 1)]
        self.pulls += 1
        return [SimpleNamespace(metadata=SimpleNamespace(reply_to_message_id=i)) for i in sorted(set(ids) & ready)]


def _ids(replies) -> list[str]:
    return sorted(r.metadata.reply_to_message_id for r in replies)


def test_a_wave_stops_pulling_once_every_reply_is_in(monkeypatch):
    monkeypatch.setattr(server, "POLL_SECONDS", 0.0)
    grid = ScriptedGrid([{"a"}, {"a"}, {"a", "b", "c"}])
    assert _ids(server.exchange(grid, ["a", "b", "c"], timeout=None)) == ["a", "b", "c"]
    assert grid.pulls == 3


def test_a_wave_with_a_silent_device_returns_what_came_within_its_timeout():
    grid = ScriptedGrid([{"a"}])  # "b" never replies
    assert _ids(server.exchange(grid, ["a", "b"], timeout=0.5)) == ["a"]
    assert 2 <= grid.pulls <= 0.5 / server.POLL_SECONDS + 2  # polled at its pace until the deadline


def test_waves_send_size_messages_at_a_time_and_every_wave_after_a_short_one(monkeypatch):
    monkeypatch.setattr(server, "POLL_SECONDS", 0.0)
    grid = ScriptedGrid([{"m0", "m1", "m2", "m4"}])  # m3 never replies; its wave times out
    replies = server.Waves(grid, size=2).send_and_receive([f"m{i}" for i in range(5)], timeout=0.05)
    assert grid.pushed == [["m0", "m1"], ["m2", "m3"], ["m4"]]
    assert _ids(replies) == ["m0", "m1", "m2", "m4"]
