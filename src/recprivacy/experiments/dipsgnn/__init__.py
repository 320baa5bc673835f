"""The ``dipsgnn`` study (paper 002: Table 2, the sweeps of Figs. 3-6, the ablation of Fig. 7)
and the DIPSGNN section of the audit.

* :mod:`.options`: ``study_options`` and the methods compared;
* :mod:`.sequences`: steps 1-2 (data and split) and the test samples;
* :mod:`.methods`: the recommender of each method; :mod:`.collect`: fitting one at one seed
  (step 3); :mod:`.evaluate`: step 4; :mod:`.cells`: every (method, seed) and sweep point as a
  study-kit cell (resumable, in this process or on Ray);
* :mod:`.render`: Table 2 and the other tables and texts; :mod:`.paper`: the paper's numbers;
* :mod:`.sweep`: Figs. 3-6; :mod:`.study`: the study and its public entry ``DIPSGNNStudy``;
* :mod:`.audit`: the audit section.

Protocol (paper 002 §5.1, with the reference code where the paper is silent; docs/decisions.md,
"DIPSGNN (paper 002)"):

1. load the dataset, keep ratings >= 4 (``dataset.preprocessing.implicit_threshold``), 10-core
   (``kcore``), then each user's ``max_len`` most recent interactions (``keep_recent``);
2. per user, the first 80% (``int(0.8 n)``) is training, the rest test (``temporal_split``);
   test items never seen in training are dropped;
3. training samples are all prefixes of each training sequence; SR-GNN-family models hold out a
   random 10% of them to select their epoch; the other baselines train on a random 90% of the
   training interactions and stop early on the other 10% (``random_split``);
4. test samples are the prefixes of each user's test segment (``test_context="test_segment"``,
   the reference code) or the whole history before each test item (``"full_history"``);
   Recall@K and MRR@K (x100) rank the target among *all* items, seen ones included (the paper's
   protocol); the same lists with each user's training items masked (recprivacy's convention)
   are reported beside them;
5. every method runs once per seed; Table 2 shows means (and standard deviations), the paper's
   numbers beside ours, and DIPSGNN's relative improvement over EdgeRand with a paired t-test
   across seeds (``scipy.stats.ttest_rel``, ``*`` for p < 0.01).

Non-sequential baselines (BPR-MF, LightGCN, DPMF) score per user, so all test samples of a user
share one ranking; SASRec scores every test prefix. DPMF_exp reads the star ratings of the
training interactions (4 or 5 after the >= 4 filter: the paper's DPMF baselines used the raw
ratings, outside this protocol). HRNN and Tmall are not available in recprivacy.

The audit section: when the audit's target is a sequential recommender, DIPSGNN is trained on
the same split and its utility and privacy statements are shown beside the target's.
"""

from recprivacy.experiments.dipsgnn import audit  # noqa: F401  (registers the audit section)
from recprivacy.experiments.dipsgnn.collect import MethodRun
from recprivacy.experiments.dipsgnn.methods import GRAPH_MODELS
from recprivacy.experiments.dipsgnn.options import METHODS, DIPSGNNOptions, SweepSpec
from recprivacy.experiments.dipsgnn.paper import PAPER_COLUMN_OF, PAPER_METRICS, paper_table2
from recprivacy.experiments.dipsgnn.render import gap_text, improvement, ordering_text
from recprivacy.experiments.dipsgnn.study import DIPSGNNStudy, run_dipsgnn
from recprivacy.experiments.runner import register_study

register_study("dipsgnn", run_dipsgnn, DIPSGNNOptions,
               "DIPSGNN (paper 002): private sequential recommendation against its baselines", resumable=True,
               builds_model=False)  # model.params override each method's backbone settings

__all__ = [
    "GRAPH_MODELS", "METHODS", "PAPER_COLUMN_OF", "PAPER_METRICS", "DIPSGNNOptions", "DIPSGNNStudy", "MethodRun", "SweepSpec",
    "gap_text", "improvement", "ordering_text", "paper_table2", "run_dipsgnn",
]  # fmt: skip
