"""The ``recprivacy`` command line.

    recprivacy audit [--dataset synthetic] [--data-dir PATH] [--model NAME] [--seeds N] [--config PATH] [--set k=v] [--out runs]
    recprivacy audit --interactions FILE (--lists FILE | --target module:name [--fit]) [--members FILE]
                     [--test FILE] [--user-features FILE] [--exposures FILE] [--shadow-model NAME]
                     [--user-col C] [--item-col C] [--rank-col C]
                     [--executor inprocess|ray] [--ray-address HOST:PORT]
    recprivacy train --dataset D --model M [--data-dir PATH] [--set k=v] [--out runs]
    recprivacy matrix [--dataset ml-100k] [--model bpr] [--data-dir PATH] [--config PATH] [--set k=v] [--out runs]
    recprivacy run CONFIG.yaml [--set k=v] [--out DIR] [--engine simulator|flower-sim|flower]
                   [--executor inprocess|ray] [--ray-address HOST:PORT] [--resume RUN_DIR]
    recprivacy synthesize --out DIR [--dataset D] [--privacy prefs.csv] [--k 0.2] [--gamma 0.5] [--config PATH]
    recprivacy devices CONFIG.yaml --out DIR [--set k=v]
    recprivacy datasets list
    recprivacy datasets describe NAME [--data-dir PATH]
    recprivacy report RUN_DIR

Bad input (any ``RecPrivacyError``, including invalid configs) prints one line
``error: <message>`` to stderr and exits with code 2, leaving no run folder behind;
``recprivacy --debug ...`` shows the traceback instead. After a run, the first table of the
report (the risk summary of an audit, the test metrics of a training run) is printed with the
path of the report.

Start-up: this module imports only the light libraries (typer, rich, pydantic, yaml) and
``recprivacy.config``; each command imports the studies, data loaders and report it needs
inside its function, so ``--help``, ``datasets list`` and one-line errors do not pay for torch,
pandas or scikit-learn (``tests/unit/test_cli_imports.py``).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import yaml
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table as RichTable

from recprivacy import cli_endpoint as ep
from recprivacy import cli_erasure
from recprivacy.config import Config, default_audit_config, default_synthesize_config, load_config
from recprivacy.errors import ConfigError, RecPrivacyError
from recprivacy.models import MODEL_NAMES
from recprivacy.progress import set_verbose, tracked

if TYPE_CHECKING:
    from recprivacy.experiments import Results
    from recprivacy.experiments.audit.audit_inputs import AuditInputs
    from recprivacy.experiments.target import Target

app = typer.Typer(
    name="recprivacy",
    help="Measure and reduce privacy leakage in recommender systems.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
datasets_app = typer.Typer(help="List the built-in datasets or describe one.", no_args_is_help=True)
app.add_typer(datasets_app, name="datasets")

_STATE: dict[str, Any] = {"debug": False, "threads": None}

SetOption = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a config key, e.g. --set model.params.n_epochs=5 (repeatable)."),
]
#: the ``--help`` panels of options shared by the commands
DATA, OUTPUT = "Data and model", "Output"
OutOption = Annotated[Path | None, typer.Option("--out", help="Folder of run folders (default: output.dir, 'runs').",
                                                rich_help_panel=OUTPUT)]
DataDirOption = Annotated[Path | None, typer.Option("--data-dir", help="Folder holding the dataset files.",
                                                    rich_help_panel=DATA)]


def examples(*lines: str) -> str:
    """A command's ``--help`` epilog: ``Examples:`` and then one line each (rich help keeps a
    paragraph per line)."""
    return "\n\n".join(["Examples:", *lines])


def _names(names: Sequence[str]) -> str:
    """Choices as a help text lists them: ``a, b, c``."""
    return ", ".join(names)


def _version(value: bool) -> None:
    """``--version``: print recprivacy's version and stop."""
    if value:
        from importlib.metadata import version

        typer.echo(f"recprivacy {version('recprivacy')}")
        raise typer.Exit()


@app.callback()
def main(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks instead of one-line errors.")] = False,
    _: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and stop.")] = False,
    threads: Annotated[int | None, typer.Option("--threads", min=1, help="Threads training may use "
                                                "(overrides the config's threads; default: every core).")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", help="Progress in detail: every training loop's count "
                                          "and each internal step (default: one line per stage).")] = False,
) -> None:  # fmt: skip
    """Measure and reduce privacy leakage in recommender systems."""
    _STATE["debug"] = debug
    _STATE["threads"] = threads
    set_verbose(verbose)


def _thread_updates() -> dict[str, Any]:
    """The config update ``--threads`` asks for (none without it)."""
    return {} if _STATE["threads"] is None else {"threads": _STATE["threads"]}


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn user-facing errors into ``error: <one line>`` and exit code 2 (unless --debug)."""
    try:
        yield
    except (RecPrivacyError, OSError, ValidationError, yaml.YAMLError) as err:
        if _STATE["debug"]:
            raise
        typer.echo(f"error: {' '.join(str(err).split())}", err=True)
        raise typer.Exit(2) from None


# ---------------------------------------------------------------------------- studies


RUN_EXAMPLES = examples(
    "recprivacy run configs/exposure/smoke-synthetic.yaml --set seed=1 --out runs",
    "recprivacy run configs/federated/coat-table2.yaml --engine flower-sim --set dataset.data_dir=DIR",
    "recprivacy run configs/membership/paper-main.yaml --executor ray --ray-address HOST:6379",
    "recprivacy run --resume runs/20260101-120000-paper-main     (continue an interrupted run)",
    "Studies: audit, dipsgnn, exposure, federated, matrix, membership, train, upcsdg (configs/<study>/*.yaml).")
WHERE = "Where it runs"


@app.command(epilog=RUN_EXAMPLES)
def run(
    config: Annotated[Path | None, typer.Argument(help="YAML study configuration (default with --resume: "
                                                  "the one saved in RUN_DIR).")] = None,
    set_: SetOption = None,
    out: OutOption = None,
    engine: Annotated[str | None, typer.Option("--engine", help="Federated studies: simulator, flower-sim or flower.",
                      rich_help_panel=WHERE)] = None,
    resume: Annotated[Path | None, typer.Option("--resume", help="Continue the interrupted run in this folder "
                                                "(studies on the study kit): finished cells are kept.",
                                                rich_help_panel=OUTPUT)] = None,
    executor: Annotated[str, typer.Option("--executor", help="Where the study's cells run: inprocess or ray "
                                          "(the 'ray' extra).", rich_help_panel=WHERE)] = "inprocess",
    ray_address: Annotated[str | None, typer.Option("--ray-address", help="A Ray cluster to join (default: "
                                                    "a local Ray instance).", rich_help_panel=WHERE)] = None,
) -> None:  # fmt: skip
    """Run the study described by a YAML config and write its run folder."""
    with user_errors():
        if config is None and resume is None:
            raise ConfigError("run: expected CONFIG.yaml, or --resume RUN_DIR to continue an interrupted run")
        if config is None:
            from recprivacy.experiments.run_folder import resume_run

            resume_run(resume, None)  # an unfinished run folder, or a one-line error
        path = config if config is not None else resume / "config.yaml"
        loaded = load_config(path, [*(set_ or []), *([f"study_options.engine={engine}"] if engine else [])],
                             updates=_thread_updates())
        if engine and loaded.study != "federated":
            raise ConfigError(f"--engine: expected a federated study, {config} is study {loaded.study!r}")
        kit_options = resume is not None or executor != "inprocess" or ray_address is not None
        _execute(loaded, out, resume=resume, executor=executor if kit_options else None, ray_address=ray_address)


AUDIT_EXAMPLES = examples(
    "recprivacy audit                                        (built-in synthetic data, BPR-MF, every section)",
    "recprivacy audit --dataset ml-100k --data-dir DIR --model lightgcn --seeds 3",
    "recprivacy audit --sections membership,attribute --out runs",
    "recprivacy audit --dataset ml-100k --sections membership --executor ray     (references trained side by side)",
    "recprivacy audit --interactions inter.csv --lists lists.csv --members members.csv --user-features users.csv",
    "How to read the report: docs/reading-a-report.md")
BUILTIN, OWN, ATTACKS = "Built-in target (trained by the audit)", "Your own system", "Attacks and output"


@app.command(epilog=AUDIT_EXAMPLES)
def audit(
    dataset: Annotated[str | None, typer.Option("--dataset", help="Dataset name or path (default: synthetic; names: "
                       "`recprivacy datasets list`).", rich_help_panel=BUILTIN)] = None,
    data_dir: Annotated[Path | None, typer.Option("--data-dir", help="Folder holding the dataset files.",
                        rich_help_panel=BUILTIN)] = None,
    model: Annotated[str | None, typer.Option("--model", help="Target recommender (default: bpr): popularity, itemcf, lfm, "
                     "bpr, als, neumf, ncf, gmf, mlp, lightgcn, sasrec, srgnn.", rich_help_panel=BUILTIN)] = None,
    config: Annotated[Path | None, typer.Option("--config", help="Audit config to start from.")] = None,
    set_: SetOption = None,
    out: Annotated[Path | None, typer.Option("--out", help="Folder of run folders (default: output.dir, 'runs').",
                   rich_help_panel=ATTACKS)] = None,
    interactions: Annotated[Path | None, typer.Option("--interactions", help="Your interactions (CSV/Parquet): audit your own system.", rich_help_panel=OWN)] = None,
    lists: Annotated[Path | None, typer.Option("--lists", help="Logged served lists: user, rank, item columns.", rich_help_panel=OWN)] = None,
    target: Annotated[str | None, typer.Option("--target", help="module:name of your fitted model or callable (histories, k).", rich_help_panel=OWN)] = None,
    fit: Annotated[bool, typer.Option("--fit", help="--target names a training function frame -> model.", rich_help_panel=OWN)] = False,
    members: Annotated[Path | None, typer.Option("--members", help="Users the target was trained on (default: every user).", rich_help_panel=OWN)] = None,
    test: Annotated[Path | None, typer.Option("--test", help="Rows of --interactions held out of the members' training (utility).", rich_help_panel=OWN)] = None,
    user_features: Annotated[Path | None, typer.Option("--user-features", help="User features: user column + gender/age/...", rich_help_panel=OWN)] = None,
    user_col: Annotated[str, typer.Option("--user-col", help="User id column of every file.", rich_help_panel=OWN)] = "user_id",
    item_col: Annotated[str, typer.Option("--item-col", help="Item id column of the interactions, test and lists.", rich_help_panel=OWN)] = "item_id",
    rank_col: Annotated[str, typer.Option("--rank-col", help="Rank column of the lists (1 = first).", rich_help_panel=OWN)] = "rank",
    exposures: Annotated[Path | None, typer.Option("--exposures", help="Logged exposures: user, slate_id (or time), item, "
                         "clicked columns (exposure section).", rich_help_panel=OWN)] = None,
    sections: Annotated[str | None, typer.Option("--sections", help="Comma-separated sections to run (default: all but "
                        "the opt-in interaction_membership): utility, membership, exposure, attribute, dipsgnn, "
                        "synthetic_release, interaction_membership.", rich_help_panel=ATTACKS)] = None,
    shadow_model: Annotated[str | None, typer.Option("--shadow-model", help="Built-in algorithm of the membership "
                            "adversary's shadows (default: the target's, or chosen by mimicry).", rich_help_panel=ATTACKS)] = None,
    seeds: Annotated[int | None, typer.Option("--seeds", min=1, help="Repeat membership inference with N seeds "
                     "(mean and t interval over them).", rich_help_panel=ATTACKS)] = None,
    thorough: Annotated[bool, typer.Option("--thorough", help="The strongest membership attacker: 32 reference "
                        "recommenders of the target's size (slower: BENCHMARKS.md).", rich_help_panel=ATTACKS)] = False,
    executor: Annotated[str | None, typer.Option("--executor", help="Where the membership attack's reference "
                        "recommenders train: inprocess (default) or ray, one task each (the 'ray' extra).",
                        rich_help_panel=WHERE)] = None,
    ray_address: Annotated[str | None, typer.Option("--ray-address", help="A Ray cluster to join (default: "
                           "a local Ray instance).", rich_help_panel=WHERE)] = None,
    endpoint: ep.EndpointOpt = None, user_request: ep.UserRequestOpt = ep.USER_REQUEST,
    history_request: ep.HistoryRequestOpt = ep.HISTORY_REQUEST, items_path: ep.ItemsPathOpt = "items",
    auth_env: ep.AuthEnvOpt = None, qps: ep.QpsOpt = None, concurrency: ep.ConcurrencyOpt = None,
    timeout: ep.TimeoutOpt = None, retries: ep.RetriesOpt = None, budget: ep.BudgetOpt = None, resume: ep.ResumeOpt = None,
) -> None:
    """Audit a recommender and write one report: a built-in model trained by the audit
    (--dataset/--model), or your own system (--interactions with --lists or --target)."""
    set_ = [*(set_ or []), *([f"study_options.membership.seeds={seeds}"] if seeds else []),
            *(["study_options.membership.thorough=true"] if thorough else []),
            *([f"study_options.sections=[{sections}]"] if sections else []),
            *([f"study_options.executor={executor}"] if executor else []),
            *([f"study_options.ray_address={ray_address}"] if ray_address else [])]
    polite = {"qps": qps, "concurrency": concurrency, "timeout": timeout, "retries": retries, "budget": budget}
    templates = {"user_request": user_request, "history_request": history_request, "items_path": items_path,
                 "auth_env": auth_env}  # fmt: skip
    if (endpoint is not None and interactions is None) or resume is not None:
        own = any(v is not None for v in (lists, target, members, test, user_features, exposures, model))
        shadow = [f"study_options.membership.shadow_algorithm={shadow_model}"] if shadow_model else []
        ep.audit_endpoint_command(endpoint, resume, polite, templates, config, dataset, data_dir, set_ + shadow, out, own)
        return
    with user_errors():
        if interactions is None and (lists or target or members or test or user_features or exposures or shadow_model):
            raise ConfigError("--lists, --target, --members, --test, --user-features, --exposures and --shadow-model audit "
                              "your own system; expected --interactions FILE with them")  # fmt: skip
        if interactions is None:
            _execute(_command_config(config, default_audit_config(), dataset, data_dir, model, set_ or []), out)
            return
        if sum(x is not None for x in (lists, target, endpoint)) != 1:
            raise ConfigError("--interactions: expected exactly one of --lists FILE, --target module:name or --endpoint URL")
        if dataset or data_dir or model:
            raise ConfigError("--dataset, --data-dir and --model choose a built-in target the audit trains; with "
                              "--interactions the target is --lists or --target, expected without them")  # fmt: skip
        if fit and target is None:
            raise ConfigError("--fit: expected --target module:name naming a training function (not --lists)")
        name = _slug(f"audit-{interactions.stem}-{lists.stem if lists else target or 'endpoint'}")
        updates = _thread_updates() if config else {"name": name, **_thread_updates()}
        if shadow_model:
            updates["study_options.membership.shadow_algorithm"] = shadow_model
        settings = load_config(config, set_ or [], base=default_audit_config(), updates=updates)
        files = {"interactions": interactions, "lists": lists, "members": members, "test": test,
                 "user_features": user_features, "exposures": exposures}  # fmt: skip
        output, inputs = _read_own(settings, files, {"user_col": user_col, "item_col": item_col, "rank_col": rank_col}, out)
        if endpoint is not None:
            with ep.endpoint_target(endpoint, polite, templates) as own:
                _audit_own(own, inputs, settings, output)
            return
        from recprivacy.experiments.audit.files import load_target
        from recprivacy.experiments.target import Target

        own = Target.from_lists(inputs.lists) if lists else load_target(target, training=fit)
        _audit_own(own, inputs, settings, output)


def _read_own(settings: Config, files: dict[str, Path | None], columns: dict[str, str],
              out: Path | None) -> tuple[Path, AuditInputs]:  # fmt: skip
    """The folder of run folders (checked first) and the user's files, read once with their
    column names (members default to every user of the interactions). The files are single
    tables, so the run may be written next to them (a new ``<time>-<name>`` folder never
    overwrites anything)."""
    from recprivacy.experiments.audit.audit_inputs import AuditInputs
    from recprivacy.io import check_output_folder

    output = out if out is not None else Path(settings.output.dir)
    check_output_folder(output, option="--out" if out is not None else "output.dir")
    return output, AuditInputs.from_files(**files, **columns)


def _audit_own(target: Target, inputs: AuditInputs, settings: Config, output: Path) -> None:
    """Audit ``target`` on ``inputs`` with the command's ``settings`` and write the run under ``output``."""
    from recprivacy.experiments.audit.own import Audit
    from recprivacy.models.training import use_threads

    with use_threads(settings.threads) as threads, tracked():
        results = Audit.from_inputs(target, inputs, settings).run()
    results.threads = threads
    run_dir = results.write(output)
    _print_headline(results)
    Console().print(f"Run written to [bold]{run_dir}[/bold]\nReport: {run_dir / 'report.html'}", soft_wrap=True)


app.command()(ep.serve)
app.command("verify-erasure", epilog=examples(*cli_erasure.EXAMPLES))(cli_erasure.verify_erasure)


TRAIN_EXAMPLES = examples(
    "recprivacy train                                           (BPR-MF on the built-in synthetic data)",
    "recprivacy train --dataset ml-100k --data-dir DIR --model lightgcn --set model.params.n_epochs=50",
    "recprivacy train --dataset data.inter --model itemcf --out runs     (your RecBole atomic file)")


@app.command(epilog=TRAIN_EXAMPLES)
def train(
    dataset: Annotated[str, typer.Option("--dataset", help="Dataset name or path (names: `recprivacy datasets "
                                         "list`).", rich_help_panel=DATA)] = "synthetic",
    model: Annotated[str, typer.Option("--model", help=f"Recommender: {_names(MODEL_NAMES)}.",
                                       rich_help_panel=DATA)] = "bpr",
    data_dir: DataDirOption = None,
    set_: SetOption = None,
    out: OutOption = None,
) -> None:  # fmt: skip
    """Fit one recommender and evaluate it with full-ranking metrics."""
    with user_errors():
        _execute(_command_config(None, {"study": "train"}, dataset, data_dir, model, set_ or []), out)


MATRIX_EXAMPLES = examples(
    "recprivacy matrix --data-dir DIR                         (ml-100k, BPR-MF, every defence)",
    "recprivacy matrix --config configs/matrix/ml-100k.yaml --data-dir DIR     (the settings of RESULTS.md)",
    "recprivacy matrix --dataset synthetic --set study_options.seeds=1 --set study_options.dpmf_epsilons=[1.0]",
    "recprivacy run --resume runs/20260101-120000-matrix-ml-100k-bpr     (continue an interrupted matrix)",
    "Settings (study_options): `recprivacy run` docs, docs/cli.md; the run's config.yaml lists every one it used.")


@app.command(epilog=MATRIX_EXAMPLES)
def matrix(
    dataset: Annotated[str | None, typer.Option("--dataset", help="Dataset name or path (default: ml-100k).",
                       rich_help_panel=DATA)] = None,
    model: Annotated[str | None, typer.Option("--model", help="Target recommender, a factor model (default: bpr).",
                     rich_help_panel=DATA)] = None,
    data_dir: DataDirOption = None,
    config: Annotated[Path | None, typer.Option("--config", help="Matrix config, e.g. configs/matrix/ml-100k.yaml.")] = None,
    set_: SetOption = None,
    out: OutOption = None,
) -> None:  # fmt: skip
    """Run every attack against every defence that applies to what it observes, on one dataset and target: a
    colour-coded matrix with frozen and adaptive attackers, utility costs, privacy statements and measured epsilon.
    Finished cells are kept in the run folder: `recprivacy run --resume RUN_DIR` continues an interrupted run."""
    from recprivacy.experiments.matrix import default_matrix_config

    with user_errors():
        _execute(_command_config(config, default_matrix_config(), dataset, data_dir, model, set_ or []), out)


SYNTHESIZE_EXAMPLES = examples(
    "recprivacy synthesize --out synth                         (the built-in synthetic data, k = 0.2, γ = 0.5)",
    "recprivacy synthesize --dataset ml-100k --data-dir DIR --k 0.3 --gamma 0.4 --out synth",
    "recprivacy synthesize --dataset logs.csv --privacy prefs.csv --out synth     (per-user k and γ)")
PRIVACY = "Privacy of the release"


@app.command(epilog=SYNTHESIZE_EXAMPLES)
def synthesize(
    out: Annotated[Path, typer.Option("--out", help="Folder to create public/ (release) and private/ (keep) in.",
                                      rich_help_panel=OUTPUT)],
    dataset: Annotated[str | None, typer.Option("--dataset", help="Dataset name or path (default: synthetic).",
                                                rich_help_panel=DATA)] = None,
    data_dir: DataDirOption = None,
    privacy: Annotated[Path | None, typer.Option("--privacy", help="CSV/JSON of per-user k and gamma by original user id.",
                                                 rich_help_panel=PRIVACY)] = None,
    k: Annotated[float, typer.Option("--k", help="Share of each user's items replaced, in (0, 1).",
                                     rich_help_panel=PRIVACY)] = 0.2,
    gamma: Annotated[float, typer.Option("--gamma", help="Hard cap on a replacement's similarity to its original, in (0, 1); "
                                         "an item with no candidate within it is dropped.", rich_help_panel=PRIVACY)] = 0.5,
    config: Annotated[Path | None, typer.Option("--config", help="UPC-SDG config (dataset preparation, generator).")] = None,
    set_: SetOption = None,
) -> None:
    """Release a UPC-SDG synthetic version of a dataset: OUT/public/ holds the synthetic data (RecBole atomic
    files, LightGCN train.txt); OUT/private/ holds what undoes the protection (replacement map, privacy record)."""
    with user_errors():
        settings = _command_config(config, default_synthesize_config(), dataset, data_dir, None, set_ or [])
        from recprivacy.data.registry import dataset_inputs
        from recprivacy.defenses.upcsdg import RELEASE_FOLDERS
        from recprivacy.experiments.upcsdg import synthesize as synthesize_release
        from recprivacy.io import check_output_folder
        from recprivacy.models.training import use_threads

        inputs = dataset_inputs(settings.dataset.name, settings.dataset.data_dir)  # --data-dir and the dataset's folder
        check_output_folder(out, inputs=inputs, writes=RELEASE_FOLDERS)  # before any data is loaded
        with use_threads(settings.threads), tracked():
            release = synthesize_release(settings, out, privacy, k, gamma)
        s = release.summary
        rows = [[key.replace("_", " "), s[key]] for key in
                ("users", "original_interactions", "replaced_interactions", "realised_ratio_mean", "mean_f_sim", "max_f_sim")]
        rows.append(["interactions with no candidate within gamma (dropped)", s["dropped_interactions"]])
        rows.append(["users with default preferences", s["users_with_default_preferences"]])
        rows.append(["randomness of the release", s["method"]["noise"]])
        _print_rows("Privacy summary", ["", "value"], rows)
        Console().print(f"[bold]{out / 'public'}[/bold]: release this (the synthetic data only).\n"
                        f"[bold]{out / 'private'}[/bold]: keep, it undoes the protection "
                        "(replacement map, per-user privacy in privacy_per_user.csv).", soft_wrap=True)


DEVICES_EXAMPLES = examples(
    "recprivacy devices configs/federated/coat-table2.yaml --out deploy",
    "recprivacy run configs/federated/coat-table2.yaml --engine flower --set study_options.superlink=127.0.0.1:9093",
    "Deployment step by step: docs/flower.md")


@app.command(epilog=DEVICES_EXAMPLES)
def devices(
    config: Annotated[Path, typer.Argument(help="YAML config of a federated study.")],
    out: Annotated[Path, typer.Option("--out", help="Folder to create devices/ in (one file per user and federation.json).",
                                      rich_help_panel=OUTPUT)],
    set_: SetOption = None,
) -> None:
    """Write a federated study's device files, one per user, for Flower SuperNodes on other machines: give
    each device owner only their own file, then run the study with --engine flower and study_options.superlink."""
    with user_errors():
        loaded = load_config(config, set_ or [], updates=_thread_updates())
        from recprivacy.data.registry import dataset_inputs
        from recprivacy.experiments.federated.devices import FOLDER, study_devices, write_device_folder
        from recprivacy.io import check_output_folder

        inputs = dataset_inputs(loaded.dataset.name, loaded.dataset.data_dir)
        check_output_folder(out, inputs=inputs, writes=[FOLDER])  # before any data is loaded
        found, manifest = study_devices(loaded)
        folder = write_device_folder(found, manifest, out, inputs)
        _print_rows("Device files", ["", "value"], [[k, manifest[k]] for k in
                                                   ("federation", "dataset", "dataset_sha256", "users", "items", "features")])
        Console().print(
            f"[bold]{folder}[/bold]: one file per user, readable by its owner only; give each device owner their own "
            "file and nothing else.\nOn each device: flower-supernode --superlink HOST:9093 --node-config "
            "'data=\"user-<u>.npz\"' (add --insecure only on a trusted network; docs/flower.md).\n"
            f"Then, on the SuperLink's machine: recprivacy run {config} --engine flower "
            "--set study_options.superlink=127.0.0.1:9093 (and the same --set options as here).", soft_wrap=True)


def _command_config(
    path: Path | None,
    base: Mapping[str, Any],
    dataset: str | None,
    data_dir: Path | None,
    model: str | None,
    overrides: Sequence[str],
) -> Config:
    """Config from a file (or ``base``), then the command's options, then ``--set``.

    ``--model`` keeps the configured hyperparameters when it names the configured model and
    starts from the new model's defaults otherwise. Without a file, the run is named
    ``<study>-<dataset>-<model>``.
    """
    start = load_config(path, base=base)
    updates: dict[str, Any] = _thread_updates()
    if dataset is not None:
        updates["dataset.name"] = dataset
    if data_dir is not None:
        updates["dataset.data_dir"] = str(data_dir)
    if model is not None and model != start.model.name:
        updates["model.name"] = model
        updates["model.params"] = {}
    if path is None:
        data_name = Path(dataset).name if dataset else start.dataset.name
        updates["name"] = _slug(f"{start.study}-{data_name}-{model or start.model.name}")
    return load_config(path, overrides, updates=updates, base=base)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "run"


def _execute(config: Config, out: Path | None, resume: Path | None = None, executor: str | None = None,
             ray_address: str | None = None) -> None:  # fmt: skip
    from recprivacy.experiments import run_config
    from recprivacy.experiments.kit import make_executor

    chosen = None if executor is None else make_executor(executor, ray_address)
    with tracked():
        results, run_dir = run_config(config, out, resume=resume, executor=chosen)
    _print_headline(results)
    Console().print(f"Run written to [bold]{run_dir}[/bold]\nReport: {run_dir / 'report.html'}", soft_wrap=True)


#: how a verdict word is coloured on a terminal
VERDICT_STYLES = {"leaks": "bold red", "backfires": "bold red", "inconclusive": "yellow", "below blind guess": "yellow",
                  "not enough users": "yellow", "no leak measured": "green", "reduces": "green"}  # fmt: skip


def _summary_width(piped: int = 100) -> int:
    """The terminal's width; off a terminal ``COLUMNS`` when set, else ``piped``."""
    if sys.stdout.isatty():
        return Console().width
    value = os.environ.get("COLUMNS", "")
    return int(value) if value.isdigit() and int(value) > 0 else piped


def _print_answer(rows: list[list[Any]]) -> None:
    """The audit's answer, one line per risk within the width, the verdict word coloured on a terminal."""
    from rich.text import Text

    from recprivacy.experiments.audit.answer import terminal_lines

    console = Console(width=_summary_width(), highlight=False, no_color=not sys.stdout.isatty())
    for row, line in zip(rows, terminal_lines(rows, console.width)):
        text = Text(line)
        start = line.find("  " + str(row[1])) + 2
        if start >= 2:
            text.stylize(VERDICT_STYLES.get(str(row[1]), ""), start, start + len(str(row[1])))
        console.print(text, soft_wrap=True)


def _print_headline(results: Results) -> None:
    """The audit's answer (``_print_answer``), or else the first table of the first section."""
    if "answer" in results.tables:
        _print_answer(results.tables["answer"].rows)
        return
    names = next((s.tables for s in results.sections if s.tables), [])
    if names:
        table = results.tables[names[0]]
        _print_rows(table.caption or names[0], table.columns, table.rows)


def _print_rows(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    from recprivacy.report.tables import format_value

    table = RichTable(title=title, title_justify="left")
    for i, column in enumerate(columns):
        table.add_column(str(column), ratio=3 if i == 0 else None)
    for row in rows:
        table.add_row(*(format_value(v) for v in row))
    Console(width=_summary_width(piped=150)).print(table)  # logs and pipes get full rows unless COLUMNS says otherwise


# ---------------------------------------------------------------------------- datasets and reports


@datasets_app.command("list", epilog=examples("recprivacy datasets list --data-dir DIR"))
def datasets_list(data_dir: DataDirOption = None) -> None:
    """The datasets recprivacy can load by name, and whether their files were found."""
    with user_errors():
        from recprivacy.data.registry import list_datasets

        entries = list_datasets(data_dir)
        columns = ["name", "kind", "found", "description"]
        _print_rows("Datasets", columns, [[entry[c] for c in columns] for entry in entries])


@datasets_app.command("describe", epilog=examples("recprivacy datasets describe ml-100k --data-dir DIR",
                                                   "recprivacy datasets describe data.inter     (a file of your own)"))
def datasets_describe(
    name: Annotated[str, typer.Argument(help="Dataset name or path.")],
    data_dir: DataDirOption = None,
) -> None:
    """Load a dataset and show its size, density and features."""
    with user_errors():
        from recprivacy.data.registry import load_dataset

        info = load_dataset(name, None if data_dir is None else str(data_dir)).describe()
        rows = [[k, ", ".join(map(str, v)) if isinstance(v, list) else v] for k, v in info.items()]
        _print_rows(f"Dataset {name}", ["", "value"], rows)


@datasets_app.command("download", epilog=examples("recprivacy datasets download ml-100k"))
def datasets_download(name: Annotated[str, typer.Argument(help="ml-100k or ml-1m.")]) -> None:
    """Download a MovieLens release into the cache folder, checking its checksums."""
    with user_errors():
        from recprivacy.data.loaders.download import download_movielens

        folder = download_movielens(name)
        Console().print(f"{name} is in {folder}", soft_wrap=True)


@app.command(epilog=examples("recprivacy report runs/20260101-120000-audit-synthetic-bpr",
                             "How to read the report: docs/reading-a-report.md"))
def report(run_dir: Annotated[Path, typer.Argument(help="A run folder (holding results.json).")]) -> None:
    """Render report.md and report.html of a run folder again from its results.json."""
    with user_errors():
        from recprivacy.experiments import load_results
        from recprivacy.report import write_report

        paths = write_report(load_results(run_dir).to_document(), run_dir)
        Console().print(f"Report: {paths['html']}\nMarkdown: {paths['markdown']}", soft_wrap=True)
