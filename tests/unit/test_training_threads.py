"""The thread budget: default every available core, set for a block, bounding torch_threads."""

from __future__ import annotations

import torch

from recprivacy.models.training import available_cores, thread_budget, torch_threads, use_threads


def test_budget_defaults_to_the_available_cores_and_is_restored(monkeypatch):
    monkeypatch.delenv("RECPRIVACY_TRAIN_THREADS", raising=False)
    before = torch.get_num_threads()
    assert thread_budget() == available_cores() >= 1
    with use_threads(1) as budget:
        assert budget == thread_budget() == torch.get_num_threads() == 1
        with torch_threads(4):
            assert torch.get_num_threads() == 1  # never above the budget
        with torch_threads(None):
            assert torch.get_num_threads() == 1
    assert thread_budget() == available_cores()
    assert torch.get_num_threads() == before


def test_none_budget_means_every_core():
    with use_threads(None) as budget:
        assert budget == available_cores()
