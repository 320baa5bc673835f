"""Exposure (B, E) pairs: the MIND and Zhihu rules on hand-made lines, the impression rule,
simulated exposure against brute force, user-disjoint splits and bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from recprivacy.data.exposure_pairs import (
    ExposurePairs,
    contiguous_split,
    impression_pairs,
    mind_pairs,
    ragged_index,
    simulate_exposure,
    simulation_steps,
    split_pairs,
    user_groups,
    zhihu_pairs,
)
from recprivacy.data.interactions import Interactions
from recprivacy.data.loaders.mind import load_mind
from recprivacy.data.loaders.zhihu import load_zhihu, read_zhihu
from recprivacy.data.synthetic import make_synthetic, make_synthetic_exposure
from recprivacy.errors import ConfigError, DataError
from recprivacy.models.sasrec import SASRec

MIND_LINES = [
    # the later impression comes first in the file: pairs must follow time, not file order
    "2\tU1\t11/12/2019 9:05:58 AM\tN1 N2 N3 N4 N5 N6 N11\tN14-0 N15-0 N16-1 N17-0 N18-0 N19-0 N20-0",
    "1\tU1\t11/11/2019 9:05:58 AM\tN1 N2 N3 N4 N5 N6\tN10-0 N11-1 N12-0 N13-0",
    "3\tU2\t11/11/2019 10:00:00 AM\tN1 N2\tN10-0 N11-0 N12-0 N13-0",
]


def write(tmp_path: Path, name: str, lines: list[str]) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def names(log_ids: np.ndarray, ids: np.ndarray) -> list[list[str]]:
    return [[str(log_ids[i]) for i in row] for row in ids]


def test_mind_rule_on_hand_made_lines(tmp_path: Path) -> None:
    log = load_mind(write(tmp_path, "behaviors.tsv", MIND_LINES))
    pairs = mind_pairs(log, history_len=3, slate_size=4)
    exp = ["N10", "N11", "N12", "N13", "N14", "N15", "N16", "N17", "N18", "N19", "N20"]
    rev = ["N11", "N6", "N5", "N4", "N3", "N2", "N1"]
    assert names(log.item_ids, pairs.histories) == [rev[i : i + 3] for i in range(5)]
    assert names(log.item_ids, pairs.slates) == [exp[i : i + 4] for i in range(5)]
    assert set(log.user_ids[pairs.users]) == {"U1"}
    assert pairs.stats["skipped_short_history"] == 1  # U2 has 2 clicks < M = 3
    u1 = int(np.flatnonzero(log.user_ids == "U1")[0])
    clicks = set(log.item_ids[pairs.user_clicks[u1].indices])
    assert clicks == {"N1", "N2", "N3", "N4", "N5", "N6", "N11", "N16"}  # history plus the '-1' labels
    assert set(log.item_ids[pairs.user_log[u1].indices]) == clicks | set(exp)


def test_mind_rule_stops_at_the_last_offset_that_fits(tmp_path: Path) -> None:
    log = load_mind(write(tmp_path, "behaviors.tsv", MIND_LINES))
    assert len(mind_pairs(log, history_len=6, slate_size=4)) == 2  # 7 clicks leave offsets 0 and 1
    assert len(mind_pairs(log, history_len=3, slate_size=9)) == 3  # 11 exposures leave offsets 0..2


def test_mind_bad_lines_name_the_line(tmp_path: Path) -> None:
    short = write(tmp_path, "a.tsv", [MIND_LINES[0], "9\tU3\t11/11/2019 9:05:58 AM\tN1"])
    with pytest.raises(DataError, match=r"a\.tsv:2"):
        load_mind(short)
    label = write(tmp_path, "b.tsv", [MIND_LINES[1].replace("N12-0", "N12-2")])
    with pytest.raises(DataError, match=r"b\.tsv:1: impression 'N12-2' is not 'NewsID-0' or 'NewsID-1'"):
        load_mind(label)


def test_n_larger_than_every_slate_is_a_clear_error(tmp_path: Path) -> None:
    log = load_mind(write(tmp_path, "behaviors.tsv", MIND_LINES))
    with pytest.raises(DataError, match=r"slate_size N=12.*most impressions per user 11"):
        mind_pairs(log, history_len=3, slate_size=12)
    with pytest.raises(DataError, match=r"slate_size N=8.*longest slate 7"):
        impression_pairs(log, history_len=3, slate_size=8)


ZHIHU_LINES = [
    # a2 is read at 145, after a4 and a5 were shown: the first window's exposures start after 145
    "u1\t8\ta1|100|0,a2|110|145,a3|120|0,a4|130|135,a5|140|0,a6|150|155,a7|160|0,a8|170|0\t0\t",
    "u2\t3\tb1|10|0,b2|20|25,b3|30|0\t1\tquery|40",
]


def test_zhihu_parser_reads_show_and_read_times(tmp_path: Path) -> None:
    table = read_zhihu(write(tmp_path, "zhihu1M.txt", ZHIHU_LINES))
    assert len(table) == 11
    assert table.iloc[1].tolist() == [1, "u1", "a2", 110, 145]
    assert table.iloc[-1].tolist() == [2, "u2", "b3", 30, 0]
    log = load_zhihu(tmp_path)
    assert log.click_times is not None and log.clicked.sum() == 4
    assert np.diff(log.slate_offsets).tolist() == [1] * 11  # every show time is its own slate here


def test_zhihu_rule_windows_start_after_the_latest_read(tmp_path: Path) -> None:
    log = load_zhihu(write(tmp_path, "zhihu1M.txt", ZHIHU_LINES))
    pairs = zhihu_pairs(log, history_len=2, slate_size=2)
    assert names(log.item_ids, pairs.histories) == [["a4", "a2"], ["a6", "a4"]]
    assert names(log.item_ids, pairs.slates) == [["a6", "a7"], ["a7", "a8"]]
    assert pairs.stats["skipped_short_history"] == 1  # u2 has one click
    three = zhihu_pairs(log, history_len=2, slate_size=3)
    assert names(log.item_ids, three.slates) == [["a6", "a7", "a8"]]
    assert three.stats["skipped_short_slate"] == 1
    u1 = int(np.flatnonzero(log.user_ids == "u1")[0])
    assert pairs.user_log[u1].nnz == 8 and pairs.user_clicks[u1].nnz == 3


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("u1\t1\ta1|1|0", r"z\.txt:1: 3 tab-separated fields; expected 5"),
        ("u1\tx\ta1|1|0\t0\t", r"z\.txt:1: itemLen 'x' is not an integer"),
        ("u1\t2\ta1|1|0\t0\t", r"z\.txt:1: itemLen says 2 impressions but the line lists 1"),
        ("u1\t1\ta1|1\t0\t", r"z\.txt:1: impression 'a1\|1' is not 'answer\|showTime\|readTime'"),
    ],
)
def test_zhihu_bad_lines(tmp_path: Path, line: str, message: str) -> None:
    with pytest.raises(DataError, match=message):
        read_zhihu(write(tmp_path, "z.txt", [line]))


def test_impression_rule_on_the_synthetic_log() -> None:
    data = make_synthetic(n_users=30, n_items=200, n_interactions=1500, seed=1)
    log = make_synthetic_exposure(data, n_steps=4, seed=1)
    pairs = impression_pairs(log, history_len=5, slate_size=6)
    assert len(pairs) == len(log)  # every synthetic history has 5 clicks and every slate 10 items
    r = int(np.flatnonzero((log.users == pairs.users[0]))[0])
    assert pairs.histories[0].tolist() == log.history(r)[::-1].tolist()
    assert pairs.slates[0].tolist() == log.slate(r)[:6].tolist()


def test_ragged_index_and_simulation_steps() -> None:
    assert ragged_index(np.array([10, 0, 5]), np.array([2, 0, 3])).tolist() == [10, 11, 5, 6, 7]
    users, t = simulation_steps(np.array([3, 10, 2]), history_len=2, max_pairs_per_user=3)
    assert users.tolist() == [0, 1, 1, 1] and t.tolist() == [2, 4, 7, 9]
    users, t = simulation_steps(np.array([4]), history_len=2, max_pairs_per_user=None)
    assert t.tolist() == [2, 3]


class FixedScores:
    """A non-sequential scorer: item j scores j for every user (so the best unseen items win)."""

    def __init__(self, n_items: int) -> None:
        self.n_items = n_items

    def score(self, users: np.ndarray) -> torch.Tensor:
        return torch.arange(self.n_items, dtype=torch.float32).expand(len(users), -1).clone()


def test_simulated_exposure_excludes_the_prefix_and_records_b_and_next_item() -> None:
    data = Interactions(
        users=np.array([0] * 6 + [1] * 2), items=np.array([9, 3, 8, 1, 7, 0, 2, 4]), n_users=2, n_items=10,
        timestamps=np.array([1, 2, 3, 4, 5, 6, 1, 2]),
    )  # fmt: skip
    pairs = simulate_exposure(FixedScores(10), data, history_len=2, slate_size=3)
    assert pairs.users.tolist() == [0, 0, 0, 0] and pairs.stats["skipped_short_history"] == 1
    assert pairs.histories.tolist() == [[3, 9], [8, 3], [1, 8], [7, 1]]
    assert pairs.next_items.tolist() == [8, 1, 7, 0]
    assert pairs.slates.tolist() == [[8, 7, 6], [7, 6, 5], [7, 6, 5], [6, 5, 4]]


def test_batched_sasrec_slates_equal_one_prefix_at_a_time() -> None:
    data = make_synthetic(n_users=25, n_items=120, n_interactions=900, seed=2)
    model = SASRec(hidden=16, n_blocks=1, max_len=8, n_epochs=1, seed=0).fit(data)
    pairs = simulate_exposure(model, data, history_len=3, slate_size=5, max_pairs_per_user=4)
    seqs = data.sequences()
    for p in range(0, len(pairs), 7):
        prefix = seqs[pairs.users[p]]
        t = int(np.flatnonzero(prefix == pairs.next_items[p])[0])
        scores = model.score_sequences([prefix[:t]])[0]
        scores[torch.as_tensor(prefix[:t])] = -torch.inf
        assert pairs.slates[p].tolist() == torch.topk(scores, 5).indices.tolist()
        assert pairs.histories[p].tolist() == prefix[t - 3 : t][::-1].tolist()


def test_simulation_rejects_a_slate_larger_than_the_unseen_items() -> None:
    data = Interactions(users=np.zeros(4, dtype=np.int64), items=np.arange(4), n_users=1, n_items=5)
    with pytest.raises(DataError, match="slate_size N=3"):
        simulate_exposure(FixedScores(5), data, history_len=2, slate_size=3)
    with pytest.raises(ConfigError, match="max_pairs_per_user"):
        simulate_exposure(FixedScores(5), data, history_len=2, slate_size=1, max_pairs_per_user=0)


def test_user_groups_are_disjoint_and_split_the_pairs() -> None:
    data = make_synthetic(n_users=50, n_items=200, n_interactions=2000, seed=3)
    pairs = impression_pairs(make_synthetic_exposure(data, n_steps=3, seed=3))
    groups = user_groups(np.unique(pairs.users), pairs.n_users, seed=0)
    assert [len(g) for g in groups.values()] == [40, 5, 5]
    parts = split_pairs(pairs, groups)
    assert sum(len(p) for p in parts.values()) == len(pairs)
    seen = [set(p.users) for p in parts.values()]
    assert not (seen[0] & seen[1]) and not (seen[0] & seen[2]) and not (seen[1] & seen[2])
    assert user_groups(np.unique(pairs.users), pairs.n_users, seed=0)["test"].tolist() == groups["test"].tolist()
    with pytest.raises(DataError, match="share users"):
        split_pairs(pairs, {"a": np.array([1, 2]), "b": np.array([2])})


def test_contiguous_split_cuts_the_pairs_in_user_order() -> None:
    import scipy.sparse as sp

    users = np.array([2, 0, 0, 1, 0, 1, 1, 2, 2, 2, 2, 0])  # 4 pairs of user 0, 3 of user 1, 5 of user 2
    empty = sp.csr_matrix((3, 20))
    pairs = ExposurePairs(users, np.arange(12)[:, None], np.arange(12)[:, None], empty, empty, 3, 20)
    parts = contiguous_split(pairs)
    assert [len(p) for p in parts.values()] == [9, 1, 2]  # floor(0.8 * 12), floor(0.9 * 12) - 9, the rest
    assert parts["train"].users.tolist() == [0, 0, 0, 0, 1, 1, 1, 2, 2]
    assert parts["train"].histories[:4, 0].tolist() == [1, 2, 4, 11]  # a user's pairs keep their order
    assert parts["valid"].users.tolist() == [2] and parts["test"].users.tolist() == [2, 2]  # user 2 straddles all three
