"""Dispatch of a config to its study, and the registry studies add themselves to.

A study is a function ``run(config, options) -> Results`` plus the pydantic model of its
``study_options`` (a :class:`recprivacy.config.StudyOptions` subclass). A module registers one
at import time::

    class MembershipOptions(StudyOptions):
        n_shadow: int = 3

    def run_membership(config: Config, options: MembershipOptions) -> Results: ...

    register_study("membership", run_membership, MembershipOptions, "user-level membership inference")

and is imported by ``recprivacy/experiments/__init__.py`` so the CLI sees it. The options are
validated before any data are loaded, so a typo in ``study_options`` costs nothing. The config
a run records and saves in ``config.yaml`` is resolved (``resolve_config``): it holds every
option the run ran with, defaults filled in (by the options model's ``model_dump``, or the
study's own ``resolve``, such as the audit's, which fills in each planned section's options),
and what the study fitted to the data while it ran (the audit's list lengths). The study itself
runs on the options as given, so it can still tell a value the user set from a default.

A study on the study kit (``experiments.kit``) registers with ``resumable=True`` and takes a
third argument, the ``Bench`` its cells run on: ``run(config, options, bench)``. ``run_config``
then opens the run folder first and passes a bench holding its record store and the chosen
executor, so the run can be continued with ``resume=RUN_DIR`` (``recprivacy run --resume``) and
its cells can run on Ray (``executor``); see :mod:`.run_folder`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recprivacy.config import Config, StudyOptions, validate_options
from recprivacy.data.registry import dataset_inputs
from recprivacy.errors import ConfigError
from recprivacy.experiments.kit import Bench, Executor, InProcess, RecordStore
from recprivacy.experiments.results import Results, write_run
from recprivacy.experiments.run_folder import abandon_run, finish_run, open_run, resume_run
from recprivacy.io import check_output_folder
from recprivacy.models import resolved_params
from recprivacy.models.training import use_threads
from recprivacy.progress import plan, stage

StudyFn = Callable[[Config, Any], Results]
ResolveFn = Callable[[Any], dict[str, Any]]


def dump_options(options: StudyOptions) -> dict[str, Any]:
    """Every option of a validated options model, defaults included, as plain JSON values."""
    return options.model_dump(mode="json")


@dataclass(frozen=True)
class Study:
    """A registered study: its runner, options model, a one-line description, whether its
    cells run on the study kit (``run`` then takes a ``Bench``), how its validated options
    are written out in full (``resolve``), and whether it builds ``config.model`` as configured
    (``builds_model``: its saved config then writes every constructor argument out; a study whose
    methods set the backbone's settings, or that trains its own models, keeps ``model.params`` as
    given, overrides only)."""

    name: str
    run: StudyFn
    options: type[StudyOptions]
    description: str
    resumable: bool = False
    resolve: ResolveFn = dump_options
    builds_model: bool = True


_STUDIES: dict[str, Study] = {}


def register_study(
    name: str, run: StudyFn, options: type[StudyOptions] = StudyOptions, description: str = "", resumable: bool = False,
    resolve: ResolveFn = dump_options, builds_model: bool = True,
) -> Study:
    """Make ``study: <name>`` in a config run ``run(config, options)`` (``run(config, options,
    bench)`` when ``resumable``); ``resolve`` writes its validated options out in full;
    ``builds_model``: see :class:`Study`."""
    if name in _STUDIES and _STUDIES[name].run is not run:
        raise ValueError(f"study {name!r} is already registered by {_STUDIES[name].run.__module__}")
    study = Study(name, run, options, description, resumable, resolve, builds_model)
    _STUDIES[name] = study
    return study


def studies() -> dict[str, Study]:
    """Registered studies by name."""
    return dict(_STUDIES)


def get_study(name: str) -> Study:
    """The registered study, or a ConfigError listing the known ones."""
    if name not in _STUDIES:
        raise ConfigError(f"study: unknown study {name!r}; expected one of: {', '.join(sorted(_STUDIES))}")
    return _STUDIES[name]


def resolve_config(config: Config) -> Config:
    """``config`` with its study options validated and written out in full (``Study.resolve``):
    what the run records and saves. Resolving a resolved config changes nothing."""
    study = get_study(config.study)
    options = validate_options(study.options, config.study_options)
    update: dict[str, Any] = {"study_options": study.resolve(options)}
    if study.builds_model:
        update["model"] = config.model.model_copy(update={"params": resolved_params(config.model.name, config.model.params)})
    return config.model_copy(update=update)


def _overlay(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """``base`` with the values of ``top`` written over it, nested dicts key by key."""
    both = {**base, **top}
    return {k: _overlay(base[k], v) if isinstance(v, dict) and isinstance(base.get(k), dict) else v for k, v in both.items()}


def run_study(config: Config, bench: Bench | None = None) -> Results:
    """Validate the study options, run the study within the configured thread budget
    (``config.threads``, default every core; ``models.training.use_threads``), stamp seed and
    threads, and record the resolved options (module docstring). ``bench``: where a study on
    the kit runs its cells (default: in this process, records in memory); refused for a study
    not on the kit."""
    study = get_study(config.study)
    options = validate_options(study.options, config.study_options)
    if bench is not None:
        _require_kit(study)
    with use_threads(config.threads) as threads:
        results = study.run(config, options, bench or Bench()) if study.resumable else study.run(config, options)
    results.config["study_options"] = _overlay(study.resolve(options), results.config.get("study_options", {}))
    results.config["model"] = resolve_config(config).to_dict()["model"]
    results.seeds.setdefault("seed", config.seed)
    results.threads = threads
    return results


def run_config(
    config: Config, out_root: str | Path | None = None, resume: str | Path | None = None, executor: Executor | None = None
) -> tuple[Results, Path]:
    """Run the study and write its run folder (under ``out_root`` or ``config.output.dir``).

    The output folder is checked first (``recprivacy.io.check_output_folder``): an existing
    file, or a folder inside the dataset's files, is refused before any data are loaded. A
    study on the kit has its options validated, then gets its folder at the start and stores its cells there as they finish;
    ``resume`` continues such a folder (its saved config must equal ``config``), and
    ``executor`` runs the cells (default: in this process). See :mod:`.run_folder`.
    """
    study = get_study(config.study)
    resolved = resolve_config(config)  # a bad option is refused before any folder is made
    if not study.resumable:
        if resume is not None or executor is not None:
            _require_kit(study)
        return _run_whole(config, out_root)
    if resume is not None:
        folder, fresh = resume_run(resume, resolved)[0], False
    else:
        out = _checked_out(config, out_root)
        folder, fresh = open_run(resolved, out, new_results(config)), True
    _begin(config, f" in {folder}")
    try:
        results = run_study(config, Bench(RecordStore(folder), executor or InProcess()))
    except BaseException:
        abandon_run(folder, fresh)
        raise
    stage(f"write the report into {folder}", key="write")
    return results, finish_run(results, folder)


def _begin(config: Config, where: str = "") -> None:
    """Plan the run's last stage, writing the report (the study plans its own before it), and start."""
    plan(["write"], last=True)
    stage(f"run {config.name} (study {config.study}){where}")


def _require_kit(study: Study) -> None:
    """Refuse kit options (a bench, ``--resume``, ``--executor``) for a study not on the kit."""
    if not study.resumable:
        kit = ", ".join(sorted(n for n, s in _STUDIES.items() if s.resumable))
        raise ConfigError(f"study {study.name!r} does not run on the study kit yet, so it has no --resume or --executor "
                          f"(studies on the kit: {kit})")  # fmt: skip


def _checked_out(config: Config, out_root: str | Path | None) -> str | Path:
    """The folder of run folders, checked (``check_output_folder``)."""
    option = "--out" if out_root is not None else "output.dir"
    out = out_root if out_root is not None else config.output.dir
    check_output_folder(out, inputs=dataset_inputs(config.dataset.name, config.dataset.data_dir), option=option)
    return out


def _run_whole(config: Config, out_root: str | Path | None) -> tuple[Results, Path]:
    """A study not on the kit: run it, then write its whole run folder at once."""
    out = _checked_out(config, out_root)
    _begin(config)
    results = run_study(config)
    stage(f"write the run folder under {out}", key="write")
    return results, write_run(results, out)


def new_results(config: Config) -> Results:
    """Empty ``Results`` for a study run of ``config``."""
    return Results(name=config.name, study=config.study, config=config.to_dict(), noise=config.noise_source().describe())
