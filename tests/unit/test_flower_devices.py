"""A federated device's file and the federation it belongs to (``flower_app.device``), and the
server's check that every device holds the study's data (``server.node_users``): no process is
started here; the joined deployment in ``tests/integration/test_devices_command.py`` runs them."""

from __future__ import annotations

import stat
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

from recprivacy.errors import DataError, RecPrivacyError

pytest.importorskip("flwr", reason="Flower is in the test extra; install recprivacy[test]")
from recprivacy.federated.flower_app.device import Device, devices, federation_tag  # noqa: E402
from recprivacy.federated.flower_app import server  # noqa: E402
from recprivacy.federated.flower_app.server import node_users  # noqa: E402


def _two_users() -> list[Device]:
    train = sp.csr_matrix(np.array([[1, 0, 1, 0], [0, 1, 0, 0]], np.float32))
    return devices(np.array([[1.0, 0.0], [0.0, 1.0]], np.float32), train)


def test_devices_cut_the_training_set_by_user_and_share_one_tag():
    first, second = _two_users()
    assert (first.user, first.items.tolist(), first.x.tolist()) == (0, [0, 2], [1.0, 0.0])
    assert (second.user, second.items.tolist()) == (1, [1])
    assert first.federation == second.federation == federation_tag([first, second])
    assert len(first.federation) == 16 and int(first.federation, 16) >= 0


def test_the_tag_changes_with_any_users_data_and_only_with_data():
    both = _two_users()
    assert federation_tag([replace(d, federation="other") for d in both]) == federation_tag(both)
    assert federation_tag([both[0], replace(both[1], items=np.array([3]))]) != federation_tag(both)
    assert federation_tag([both[0], replace(both[1], x=np.array([0.0, 0.5], np.float32))]) != federation_tag(both)
    assert federation_tag(both[:1]) != federation_tag(both)


def test_a_device_file_round_trips_and_only_its_owner_can_read_it(tmp_path: Path):
    device = _two_users()[0]
    device.save(tmp_path / "user-0.npz")
    assert stat.S_IMODE((tmp_path / "user-0.npz").stat().st_mode) == 0o600
    back = Device.load(tmp_path / "user-0.npz")
    assert (back.user, back.federation) == (device.user, device.federation)
    assert np.array_equal(back.x, device.x) and np.array_equal(back.items, device.items)
    with pytest.raises(FileExistsError):  # a device file is never overwritten
        device.save(tmp_path / "user-0.npz")


def test_a_file_without_the_federation_tag_is_refused_naming_it(tmp_path: Path):
    np.savez(tmp_path / "old.npz", user=0, x=np.zeros(2), items=np.array([1]))
    with pytest.raises(DataError, match=r"old\.npz: expected a device file with arrays user, x, items, federation"):
        Device.load(tmp_path / "old.npz")


def _reply(node: int, user: int, tag: str | None) -> SimpleNamespace:
    content = {"metrics": {"user": user}} | ({} if tag is None else {"config": {"federation": tag}})
    return SimpleNamespace(content=content, metadata=SimpleNamespace(src_node_id=node))


def test_the_server_maps_users_to_nodes_when_every_device_holds_the_runs_data():
    assert node_users([_reply(7, 1, "abc"), _reply(9, 0, "abc")], 2, "abc") == {0: 9, 1: 7}


@pytest.mark.parametrize("tag", ["other", None], ids=["another federation", "no tag"])
def test_the_server_refuses_a_device_of_another_federation_naming_it(tag):
    replies = [_reply(7, 0, "abc"), _reply(9, 1, tag)]
    with pytest.raises(RecPrivacyError, match=rf"1 of 2 hold data of another federation \(first: node 9, user 1, tag "
                                              rf"'{tag or ''}'; this run trains on 'abc'\).*recprivacy devices"):
        node_users(replies, 2, "abc")


def test_the_server_refuses_a_user_claimed_twice_or_missing():
    with pytest.raises(RecPrivacyError, match=r"one node for each user 0\.\.1, got users \[0, 0\]"):
        node_users([_reply(7, 0, "abc"), _reply(9, 0, "abc")], 2, "abc")
    with pytest.raises(RecPrivacyError, match=r"got users \[0, 2\]"):
        node_users([_reply(7, 0, "abc"), _reply(9, 2, "abc")], 2, "abc")


@pytest.fixture
def no_waiting(monkeypatch):
    """No pause between looks, and a query message that is only its destination (Flower's needs a run)."""
    monkeypatch.setattr(server.time, "sleep", lambda s: None)
    monkeypatch.setattr(server, "Message", lambda content, node, kind: SimpleNamespace(metadata=SimpleNamespace(dst_node_id=node)))


class ArrivingGrid:
    """Nodes connect over time (``arrivals[k]``: the nodes connected at the k-th look, the last
    from then on) and answer the query with ``devices[node]`` = (user, tag)."""

    def __init__(self, arrivals: list[list[int]], devices: dict[int, tuple[int, str]]) -> None:
        self.arrivals, self.devices, self.looks, self.asked = arrivals, devices, 0, []

    def get_node_ids(self):
        self.looks += 1
        return self.arrivals[min(self.looks, len(self.arrivals)) - 1]

    def send_and_receive(self, asks, timeout=None):
        nodes = [ask.metadata.dst_node_id for ask in asks]
        self.asked.append(nodes)
        return [SimpleNamespace(has_error=lambda: False, **vars(_reply(n, *self.devices[n]))) for n in nodes]


def test_each_device_is_asked_once_as_it_connects(no_waiting):
    grid = ArrivingGrid([[5], [5], [5, 9, 7]], {5: (1, "abc"), 9: (0, "abc"), 7: (2, "abc")})
    assert server._identify_nodes(grid, 3, timeout=60, federation="abc") == {0: 9, 1: 5, 2: 7}
    assert grid.asked == [[5], [9, 7]]


def test_a_device_of_another_federation_is_refused_before_the_others_connect(no_waiting):
    grid = ArrivingGrid([[5], [5, 9, 7]], {5: (1, "old"), 9: (0, "abc"), 7: (2, "abc")})
    with pytest.raises(RecPrivacyError, match=r"1 of 1 hold data of another federation \(first: node 5, user 1"):
        server._identify_nodes(grid, 3, timeout=60, federation="abc")
    assert grid.looks == 1  # refused at the first device's answer, without waiting for the other two


def test_devices_that_never_all_connect_are_counted_in_the_error(no_waiting):
    grid = ArrivingGrid([[5]], {5: (0, "abc")})
    with pytest.raises(RecPrivacyError, match=r"only 1 of the 2 devices connected within 0.5 s"):
        server._identify_nodes(grid, 2, timeout=0.5, federation="abc")
    assert grid.asked == [[5]]  # asked once, however long it waited for the other
