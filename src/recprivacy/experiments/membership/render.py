"""Tables and figures of the ``membership`` study, in the layout of paper 001.

``render`` calls each requested experiment's renderer (:mod:`.render_grids`, :mod:`.render_sweeps`,
all writing through :class:`.renderer.Renderer`), then adds the data partition and the long table
of every setting run (TPR at 0.1% and 1% FPR, the attacker advantage, precision and recall).
"""

from __future__ import annotations

from collections.abc import Callable

from recprivacy.experiments.membership.collect import Collected
from recprivacy.experiments.membership.options import MembershipOptions
from recprivacy.experiments.membership.plan import Plan
from recprivacy.experiments.membership.render_grids import (
    render_assumption1,
    render_assumption2,
    render_assumption3,
    render_hit_rate,
    render_kmeans,
)
from recprivacy.experiments.membership.render_sweeps import (
    render_defense,
    render_features,
    render_mimi,
    render_shadow_size,
    render_sweep_k,
    render_sweep_l,
    render_weighting,
)
from recprivacy.experiments.membership.renderer import LONG_COLUMNS, Renderer
from recprivacy.experiments.results import Results

RENDERERS: dict[str, Callable[[Renderer, Plan], None]] = {
    "hit_rate": render_hit_rate, "assumption1": render_assumption1, "assumption2": render_assumption2,
    "assumption3": render_assumption3, "kmeans": render_kmeans, "sweep_k": render_sweep_k, "sweep_l": render_sweep_l,
    "weighting": render_weighting, "mimi": render_mimi, "shadow_size": render_shadow_size, "features": render_features,
    "defense": render_defense,
}  # fmt: skip


def render(results: Results, options: MembershipOptions, datasets: list[str], plans: dict[str, Plan], c: Collected) -> None:
    """Every experiment's section, then the data summary and the long table of all settings."""
    r = Renderer(results, options, datasets, c)
    for name, plan in plans.items():
        RENDERERS[name](r, plan)
    _render_data(r)
    specs = list(c.reports)
    long = r.table("all-settings", LONG_COLUMNS, [r.long_row(s) for s in specs], f"Every setting run; {r.seeds_note()}")
    results.add_section("All settings", "Every attack setting of this run with all its metrics.", [long])


def _render_data(r: Renderer) -> None:
    keys = ["shadow_members", "shadow_nonmembers", "target_members", "target_nonmembers", "vector_users",
            "vector_interactions", "items", "items_in_vector_part", "catalogue", "rows_on_uncovered_items",
            "users_below_min_after_restrict", "implicit"]  # fmt: skip
    rows = [[d, *[r.c.groups[d].get(k) for k in keys]] for d in r.datasets]
    t = r.table("partition", ["dataset", *keys], rows, "Partition of each dataset (first seed)")
    implicit = [d for d in r.datasets if r.c.groups[d].get("implicit")]
    text = (f"Users with at least {r.o.min_interactions} interactions, split '{r.o.split_mode}' into shadow / target / "
            f"vector thirds; members are a random half of shadow and of target. Item coverage '{r.o.item_coverage}': "
            "interactions on items the vector part never saw are dropped (and users then below the minimum), so "
            "every recommended item has a learned vector.")  # fmt: skip
    if implicit:
        text += f" {', '.join(implicit)} carry no ratings: every interaction counts as rating 1 for the item vectors."
    r.results.add_section("Data partition", text, [t])
