"""``benchmarks/record.py``'s runs file: the one reader and appender of the resumable benchmarks."""

from __future__ import annotations

import pytest


def test_records_round_trip_and_a_cut_short_last_line_is_left_out(benchmark_script, tmp_path):
    record = benchmark_script("record")
    path = tmp_path / "runs.jsonl"
    assert record.load_records(path) == []
    record.append_record(path, {"method": "none", "seed": 0})
    record.append_record(path, {"method": "apm", "seed": 0, "metrics": {"hit@20": 0.25}})
    with path.open("a") as handle:
        handle.write('{"method": "apm", "se')  # a run killed in the middle of its write
    assert record.load_records(path) == [{"method": "none", "seed": 0}, {"method": "apm", "seed": 0, "metrics": {"hit@20": 0.25}}]


def test_a_broken_line_before_the_last_names_file_and_line(benchmark_script, tmp_path):
    record = benchmark_script("record")
    path = tmp_path / "runs.jsonl"
    path.write_text('{"seed": 0}\n{"seed": \n{"seed": 1}\n')
    with pytest.raises(SystemExit, match=r"runs\.jsonl:2: not a JSON run record"):
        record.load_records(path)
