"""``run_diagnostics`` (what ``benchmarks/upcsdg_diagnostics.py`` prints) on the golden smoke
config: the study's candidate mask never replaces with an item the user has, the authors' mask
does; only the learned selection has attention to correlate; every share is a share."""

from __future__ import annotations

from test_upcsdg_golden import STUDY

from recprivacy.config import load_config, validate_options
from recprivacy.experiments.upcsdg import UPCSDGOptions, run_diagnostics


def test_the_diagnostics_of_the_smoke_config_hold_what_the_masks_promise():
    config = load_config(base=STUDY)
    out = run_diagnostics(config, validate_options(UPCSDGOptions, config.study_options))
    assert list(out["selection"]) == ["- attention", "- random", "+ attention", "+ random"]
    assert list(out["releases"]) == ["- unconsumed", "- authors", "+ unconsumed", "+ authors"]
    for name, report in out["selection"].items():
        assert 0 <= report["selected_score_percentile"] <= 1
        assert ("spearman_attention_popularity" in report) == name.endswith("attention")  # random selection has no attention
    for name, report in out["releases"].items():
        assert all(0 <= report[k] <= 1 for k in ("share_owned", "share_identity", "share_heldout")), name
        assert report["share_identity"] == 0 and report["distinct_replacement_items"] > 0
        assert (report["share_owned"] == 0) == name.endswith("unconsumed"), name  # the released code's mask repeats owned items
