"""``recprivacy verify-erasure``: were deleted users really forgotten? (``experiments.erasure``)

    recprivacy verify-erasure --interactions inter.csv --members members.csv --forgotten deleted.csv
                              --before before_lists.csv --after after_lists.csv --shadow-model als
    recprivacy verify-erasure --before mymodels:fit --after mymodels:fit --fit --interactions ... (retrained)
    recprivacy verify-erasure --dataset ml-100k --model als --forget 0.2 [--fake]   (a built-in demonstration)

``--before`` / ``--after`` name a logged-lists file (``user_id, rank, item_id``) or ``module:name`` of
a model (with ``--fit``: a training function, fitted on the members' and on the retained members'
training rows). Users of ``--interactions`` not in ``--members`` are the never-members. The built-in
demonstration holds out a share of the dataset's users as never-members, trains ``--model`` on the
others (before), forgets ``--forget`` of them and retrains without them (after), or with ``--fake``
keeps the before-model and only stops serving the forgotten users by id.

This module stays light (typer only at import), so ``recprivacy --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

FILES, BUILTIN, RUN = "Your deletion (files)", "Built-in demonstration", "Attack and output"
EXAMPLES = ("recprivacy verify-erasure --interactions inter.csv --members members.csv --forgotten deleted.csv "
            "--before before_lists.csv --after after_lists.csv --shadow-model als",
            "recprivacy verify-erasure --dataset ml-100k --data-dir DIR --model als --forget 0.2 --fake",
            "What the verdicts mean: docs/erasure.md")  # fmt: skip


def verify_erasure(
    interactions: Annotated[Path | None, typer.Option("--interactions", help="Every interaction of members and "
                            "never-members (CSV/Parquet).", rich_help_panel=FILES)] = None,
    members: Annotated[Path | None, typer.Option("--members", help="Users the before-model was trained on.",
                       rich_help_panel=FILES)] = None,
    forgotten: Annotated[Path | None, typer.Option("--forgotten", help="Members whose data were deleted.",
                         rich_help_panel=FILES)] = None,
    before: Annotated[str | None, typer.Option("--before", help="The model before the deletion: a lists file or "
                      "module:name.", rich_help_panel=FILES)] = None,
    after: Annotated[str | None, typer.Option("--after", help="The model after the deletion: a lists file or module:name.",
                     rich_help_panel=FILES)] = None,
    fit: Annotated[bool, typer.Option("--fit", help="--before/--after name training functions frame -> model.",
                   rich_help_panel=FILES)] = False,
    user_col: Annotated[str, typer.Option("--user-col", help="User id column of every file.", rich_help_panel=FILES)] = "user_id",
    item_col: Annotated[str, typer.Option("--item-col", help="Item id column.", rich_help_panel=FILES)] = "item_id",
    dataset: Annotated[str | None, typer.Option("--dataset", help="Dataset name of the demonstration.",
                       rich_help_panel=BUILTIN)] = None,
    data_dir: Annotated[Path | None, typer.Option("--data-dir", help="Folder holding the dataset files.",
                        rich_help_panel=BUILTIN)] = None,
    model: Annotated[str, typer.Option("--model", help="Built-in recommender of the demonstration.",
                     rich_help_panel=BUILTIN)] = "als",
    forget: Annotated[float, typer.Option("--forget", min=0.01, max=0.9, help="Share of the members forgotten.",
                      rich_help_panel=BUILTIN)] = 0.2,
    fake: Annotated[bool, typer.Option("--fake", help="Keep the before-model and only stop serving the forgotten by id.",
                    rich_help_panel=BUILTIN)] = False,
    shadow_model: Annotated[str | None, typer.Option("--shadow-model", help="Built-in algorithm of the adversary's "
                            "references when the after-model cannot be retrained.", rich_help_panel=RUN)] = None,
    seeds: Annotated[int, typer.Option("--seeds", min=1, help="Repeat with N seeds.", rich_help_panel=RUN)] = 1,
    seed: Annotated[int, typer.Option("--seed", help="Seed of groups, references and the demonstration.",
                    rich_help_panel=RUN)] = 0,
    out: Annotated[Path, typer.Option("--out", help="Folder of run folders.", rich_help_panel=RUN)] = Path("runs"),
) -> None:  # fmt: skip
    """Verify an erasure: can the forgotten users still be told apart from users never trained on?"""
    from recprivacy.cli import _print_headline, user_errors
    from recprivacy.errors import ConfigError
    from recprivacy.progress import tracked

    with user_errors(), tracked():
        from recprivacy.io import check_output_folder

        check_output_folder(out, option="--out")
        options = {"seeds": seeds, **({"shadow_algorithm": shadow_model} if shadow_model else {})}
        if dataset is not None:
            if any(v is not None for v in (interactions, members, forgotten, before, after)):
                raise ConfigError("--dataset runs the built-in demonstration; expected it without --interactions, "
                                  "--members, --forgotten, --before and --after")  # fmt: skip
            erasure = _demonstration(dataset, data_dir, model, forget, fake, seed, options)
        else:
            erasure = _from_files(interactions, members, forgotten, before, after, fit, user_col, item_col, seed, options)
        results = erasure.run()
        run_dir = results.write(out)
    _print_headline(results)
    typer.echo(f"Run written to {run_dir}\nReport: {run_dir / 'report.html'}")


def _target(spec: str, fit: bool, user_col: str, item_col: str) -> Any:
    """A lists file (when ``spec`` is a file) or the ``module:name`` target."""
    from recprivacy.experiments.audit.files import load_target
    from recprivacy.experiments.target import Target

    if Path(spec).is_file():
        return Target.from_lists(spec, user_col, "rank", item_col)
    return load_target(spec, training=fit)


def _from_files(interactions: Path | None, members: Path | None, forgotten: Path | None, before: str | None,
                after: str | None, fit: bool, user_col: str, item_col: str, seed: int, options: dict) -> Any:  # fmt: skip
    """The ``Erasure`` of the user's files (module docstring)."""
    from recprivacy.errors import ConfigError
    from recprivacy.experiments.audit.audit_inputs import AuditInputs
    from recprivacy.experiments.audit.files import read_users
    from recprivacy.experiments.erasure.run import Erasure

    given = {"--interactions": interactions, "--members": members, "--forgotten": forgotten, "--before": before,
             "--after": after}  # fmt: skip
    missing = [name for name, value in given.items() if value is None]
    if missing:
        raise ConfigError(f"verify-erasure: expected {', '.join(missing)} (or --dataset NAME for the demonstration)")
    inputs = AuditInputs.from_files(interactions, members=members, user_col=user_col, item_col=item_col)
    return Erasure(_target(before, fit, user_col, item_col), _target(after, fit, user_col, item_col), inputs.interactions,
                   inputs.members, read_users(forgotten, user_col), inputs.non_members, options=options, seed=seed,
                   name=f"erasure-{interactions.stem}")  # fmt: skip


def _demonstration(dataset: str, data_dir: Path | None, model: str, forget: float, fake: bool, seed: int,
                   options: dict) -> Any:  # fmt: skip
    """A built-in deletion on ``dataset`` (module docstring): 60% of the users members, ``forget``
    of them forgotten, the after-model retrained without them or (``fake``) the before-model."""
    import numpy as np

    from recprivacy.data.registry import load_dataset
    from recprivacy.experiments.erasure.run import Erasure
    from recprivacy.experiments.target import Target
    from recprivacy.models import make_model

    data = load_dataset(dataset, data_dir)
    ids = np.random.default_rng(seed).permutation(data.user_ids)
    members, never = ids[: int(0.6 * len(ids))], ids[int(0.6 * len(ids)) :]
    forgotten = members[: max(int(forget * len(members)), 1)]
    trained = np.isin(data.user_ids[data.users], members)
    before = make_model(model, seed=seed).fit(data.select(trained))
    kept = trained & ~np.isin(data.user_ids[data.users], forgotten)
    after = before if fake else make_model(model, seed=seed + 1).fit(data.select(kept))
    name = f"erasure-{data.name}-{model}-{'fake' if fake else 'retrained'}"
    return Erasure(Target.from_recommender(before), Target.from_recommender(after), data, members, forgotten, never,
                   options=options, seed=seed, name=name)  # fmt: skip
