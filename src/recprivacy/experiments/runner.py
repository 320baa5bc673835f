"""Dispatch of a config to its study, and the registry studies add themselves to.

A study is a function ``run(config, options) -> Results`` plus the pydantic model of its
``study_options`` (a :class:`recprivacy.config.StudyOptions` subclass). A module registers one
at import time::

    class MembershipOptions(StudyOptions):
        n_shadow: int = 3

    def run_membership(config: Config, options: MembershipOptions) -> Results: ...

    register_study("membership", run_membership, MembershipOptions, "user-level membership inference")

and is imported by ``recprivacy/experiments/__init__.py`` so the CLI sees it. The options are
validated before any data are loaded, so a typo in ``study_options`` costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recprivacy.config import Config, StudyOptions, validate_options
from recprivacy.data.registry import dataset_inputs
from recprivacy.errors import ConfigError
from recprivacy.experiments.results import Results, write_run
from recprivacy.io import check_output_folder
from recprivacy.models.training import use_threads
from recprivacy.progress import stage

StudyFn = Callable[[Config, Any], Results]


@dataclass(frozen=True)
class Study:
    """A registered study: its runner, options model and a one-line description."""

    name: str
    run: StudyFn
    options: type[StudyOptions]
    description: str


_STUDIES: dict[str, Study] = {}


def register_study(
    name: str, run: StudyFn, options: type[StudyOptions] = StudyOptions, description: str = ""
) -> Study:
    """Make ``study: <name>`` in a config run ``run(config, options)``."""
    if name in _STUDIES and _STUDIES[name].run is not run:
        raise ValueError(f"study {name!r} is already registered by {_STUDIES[name].run.__module__}")
    study = Study(name, run, options, description)
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


def run_study(config: Config) -> Results:
    """Validate the study options, run the study within the configured thread budget
    (``config.threads``, default every core; ``models.training.use_threads``), and stamp
    seed and threads."""
    study = get_study(config.study)
    options = validate_options(study.options, config.study_options)
    with use_threads(config.threads) as threads:
        results = study.run(config, options)
    results.seeds.setdefault("seed", config.seed)
    results.threads = threads
    return results


def run_config(config: Config, out_root: str | Path | None = None) -> tuple[Results, Path]:
    """Run the study and write its run folder (under ``out_root`` or ``config.output.dir``).

    The output folder is checked first (``recprivacy.io.check_output_folder``): an existing
    file, or a folder inside the dataset's files, is refused before any data are loaded.
    """
    option = "--out" if out_root is not None else "output.dir"
    out = out_root if out_root is not None else config.output.dir
    check_output_folder(out, inputs=dataset_inputs(config.dataset.name, config.dataset.data_dir), option=option)
    stage(f"run {config.name} (study {config.study})")
    results = run_study(config)
    stage(f"write the run folder under {out}")
    return results, write_run(results, out)


def new_results(config: Config) -> Results:
    """Empty ``Results`` for a study run of ``config``."""
    return Results(name=config.name, study=config.study, config=config.to_dict(), noise=config.noise_source().describe())
