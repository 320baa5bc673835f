"""The study kit: typed measurements, resumable cells, one aggregation, executors.

* :mod:`.measurement`: ``Measurement`` (system, study, setting, metric, unit, seed, value, interval);
* :mod:`.cell`: ``Cell`` (a setting and its group), ``CellResult``, the ``Grid`` protocol;
* :mod:`.store`: ``RecordStore``, the run folder's ``records.jsonl`` (a rerun skips stored cells);
* :mod:`.executor`: ``InProcess`` and ``RayExecutor``; :mod:`.bench`: ``Bench`` runs a grid;
* :mod:`.aggregate`: ``aggregate(records, by=...)`` (mean, sample sd, t interval over seeds);
* :mod:`.compare`: our results beside a paper's numbers (``compare``, ``paper_value``, ``paper_row``, ``paper_table``);
* :mod:`.checks`: rules as data (``read_rules``, ``apply_rules``, ``tally``), with :mod:`.rule`
  (``Rule``, ``Verdict``) and :mod:`.judge` (how each kind of rule judges).

``docs/kit.md`` shows how a study is written on the kit.
"""

from recprivacy.experiments.kit.aggregate import Summary, aggregate
from recprivacy.experiments.kit.bench import Bench
from recprivacy.experiments.kit.cell import Cell, CellResult, Grid
from recprivacy.experiments.kit.checks import Rule, Verdict, apply_rules, load_rules, read_rules, tally
from recprivacy.experiments.kit.compare import Comparison, Place, compare, paper_row, paper_table, paper_value
from recprivacy.experiments.kit.executor import EXECUTORS, Executor, InProcess, RayExecutor, make_executor
from recprivacy.experiments.kit.measurement import Measurement, measurements
from recprivacy.experiments.kit.store import RecordStore

__all__ = ["EXECUTORS", "Bench", "Cell", "CellResult", "Comparison", "Executor", "Grid", "InProcess", "Measurement", "Place",
           "RayExecutor", "RecordStore", "Rule", "Summary", "Verdict", "aggregate", "apply_rules", "compare", "load_rules",
           "make_executor", "measurements", "paper_row", "paper_table", "paper_value", "read_rules", "tally"]  # fmt: skip
