"""``engines.shared_deployments``: within the block, a local Flower deployment is started once
for each set of devices and joined by every later run on the same devices; all are stopped when
the block ends, also when it ends with an error (no process is started here)."""

from __future__ import annotations

from contextlib import ExitStack

import numpy as np
import pytest

from recprivacy.federated import engines

pytest.importorskip("flwr", reason="Flower is in the test extra; install recprivacy[test]")
from recprivacy.federated.flower_app.device import Device, federation_tag  # noqa: E402


def _starter(started: list[str], stopped: list[str]):
    def start(stack: ExitStack) -> str:
        address = f"127.0.0.1:{9000 + len(started)}"
        started.append(address)
        stack.callback(stopped.append, address)
        return address

    return start


def test_each_key_starts_once_and_everything_stops_when_the_block_ends():
    started, stopped = [], []
    with engines.shared_deployments():
        shared = engines._SHARED.get()
        first = shared.address("a", _starter(started, stopped))
        assert shared.address("a", _starter(started, stopped)) == first
        other = shared.address("b", _starter(started, stopped))
        assert started == [first, other] and stopped == []
    assert sorted(stopped) == sorted(started) and engines._SHARED.get() is None


def test_an_error_in_the_block_still_stops_the_deployments():
    started, stopped = [], []
    with pytest.raises(KeyboardInterrupt), engines.shared_deployments():
        engines._SHARED.get().address("a", _starter(started, stopped))
        raise KeyboardInterrupt
    assert stopped == started == ["127.0.0.1:9000"]


def test_the_key_names_the_devices_data():
    devices = [Device(0, np.array([1.0, 0.0], np.float32), np.array([3, 5])), Device(1, np.zeros(2, np.float32), np.array([2]))]
    same = [Device(d.user, d.x.copy(), d.items.copy()) for d in devices]
    assert federation_tag(devices) == federation_tag(same)
    assert federation_tag(devices) != federation_tag([devices[0], Device(1, np.zeros(2, np.float32), np.array([4]))])
    assert federation_tag(devices) != federation_tag(devices[:1])
