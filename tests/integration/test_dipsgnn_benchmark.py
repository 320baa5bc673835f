"""``benchmarks/dipsgnn.py`` and ``dipsgnn_sweeps.py`` run the study's own cells and keep the
runs files' flat records: a Table 2 cell's record is ``record`` of the run the study measures,
a sweep cell's record starts with its point."""

from __future__ import annotations

from test_dipsgnn_study import TINY

from recprivacy.config import load_config
from recprivacy.experiments.dipsgnn import DIPSGNNStudy
from recprivacy.experiments.kit import Bench


def test_the_runs_file_gets_the_records_of_the_study_runs(benchmark_script, tmp_path):
    bench, record, runs_file = benchmark_script("dipsgnn"), benchmark_script("record"), benchmark_script("runs_file")
    study = DIPSGNNStudy.load(load_config(base={**TINY, "study_options": {**TINY["study_options"], "sweeps": []}}))
    runs = tmp_path / "runs.jsonl"
    cells = [study.cell("DIPSGNN", 0), study.cell("DIPSGNN", 0, ("n_steps", 2.0))]
    Bench(runs_file.RunsFile(runs, bench.to_record(study))).run(study.grid, cells)
    table2, sweep = record.load_records(runs)
    again = bench.record(study.run("DIPSGNN", 0))
    assert table2.keys() == again.keys() and {k: v for k, v in table2.items() if k != "fit_seconds"} == {
        k: v for k, v in again.items() if k != "fit_seconds"}  # fmt: skip
    assert list(sweep)[:4] == ["parameter", "value", "method", "seed"] and (sweep["parameter"], sweep["value"]) == ("n_steps", 2.0)
    assert sweep["metrics"] != table2["metrics"]  # two propagation steps train another model
