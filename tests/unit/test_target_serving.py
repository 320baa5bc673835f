"""A model target is served every user's time-ordered history in one call, in original ids, and
what it returns (array, tensor or ragged lists) is checked and mapped back to internal ids."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.errors import DataError
from recprivacy.experiments.target import Target

ITEMS = np.array(["a", "b", "c", "d"])
# user 7: d (t=2) then a (t=5); user 9: c (t=1); user 8: nothing
DATA = Interactions(users=[0, 1, 0], items=[0, 2, 3], n_users=3, n_items=4, timestamps=[5, 1, 2],
                    user_ids=np.array([7, 9, 8]), item_ids=ITEMS)  # fmt: skip


class Recorder:
    """Records each call; serves the items of ``ITEMS`` not in the history, in catalogue order."""

    def __init__(self, shape: str = "array") -> None:
        self.calls: list[list[list[str]]] = []
        self.shape = shape

    def recommend(self, histories, k):
        self.calls.append([list(h) for h in histories])
        rows = [[i for i in ITEMS if i not in set(h)] for h in histories]
        if self.shape == "ragged":
            return rows  # lists of different lengths: the first k of each is used
        table = np.array([r[:k] for r in rows])
        return torch.as_tensor(np.searchsorted(ITEMS, table)) if self.shape == "tensor" else table


@pytest.mark.parametrize("shape", ["array", "ragged"])
def test_histories_go_in_one_call_oldest_first_and_lists_come_back_as_internal_ids(shape):
    model = Recorder(shape)
    served = Target.from_model(model).serve(np.array([0, 2, 1]), 2, DATA, trained=False)
    assert model.calls == [[["d", "a"], [], ["c"]]]
    np.testing.assert_array_equal(served, [[1, 2], [0, 1], [0, 1]])


def test_a_tensor_of_internal_positions_is_refused_when_ids_are_strings():
    with pytest.raises(DataError, match=r"the target returned item id 1, which is not in the interactions"):
        Target.from_model(Recorder("tensor")).serve(np.array([0]), 2, DATA, trained=False)


def test_short_or_missing_lists_name_the_user():
    with pytest.raises(DataError, match=r"the target returned 1 items for user 9; expected k = 2"):
        Target.from_model(lambda histories, k: [["a", "b"], ["a"]]).serve(np.array([0, 1]), 2, DATA, trained=False)
    with pytest.raises(DataError, match=r"the target returned 1 lists for 2 histories"):
        Target.from_model(lambda histories, k: [["a", "b"]]).serve(np.array([0, 1]), 2, DATA, trained=False)


def test_an_item_served_twice_names_the_user_and_item():
    with pytest.raises(DataError, match=r"the target returned item id 'b' twice for user 9; expected k = 2 distinct items"):
        Target.from_model(lambda histories, k: [["a", "b"], ["b", "b"]]).serve(np.array([0, 1]), 2, DATA, trained=False)
