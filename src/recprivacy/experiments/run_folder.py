"""The run folder of a study on the kit: opened before the work, finished after, resumable.

A study whose cells run on the kit (``register_study(..., resumable=True)``) gets its run
folder ``<out>/<YYYYmmdd-HHMMSS>-<name>/`` when the run *starts*: ``config.yaml`` is written
first, and the kit's ``RecordStore`` appends every finished cell to ``records.jsonl`` (with
``arrays/``) as it goes. A folder without ``results.json`` is an unfinished run.

* ``open_run`` makes the folder (``-2``, ``-3``, ... when the name is taken);
* ``resume_run`` checks a folder for ``--resume``: unfinished, with a saved config equal to the
  given one (a one-line ``ConfigError`` naming the first key that differs; ``threads`` and
  ``output`` may differ, they change neither cells nor numbers);
* ``finish_run`` writes the report files into a staging folder beside the run folder
  (``recprivacy.io.staging_folder``) and moves them in, ``results.json`` last, so the folder
  counts as finished only once every file is there;
* ``abandon_run`` removes a fresh folder that stored no cell (bad input leaves nothing behind)
  and otherwise says on stderr how to continue.

Studies not on the kit keep ``results.write_run``: their folder appears, whole, at the end.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import yaml

from recprivacy.config import Config
from recprivacy.errors import ConfigError, DataError
from recprivacy.experiments.kit.store import RECORDS
from recprivacy.experiments.results import Results, run_folder_name, write_contents
from recprivacy.io import remove_stale_staging, staging_folder, write_text_atomic
from recprivacy.progress import stage

#: config keys that may change between a run and its resumption
FREE_KEYS = ("threads", "output")


def saved_config(config: Config) -> dict[str, Any]:
    """The config as ``config.yaml`` holds it (a YAML round trip of ``Config.to_dict``)."""
    return yaml.safe_load(yaml.safe_dump(config.to_dict(), sort_keys=False))


def open_run(config: Config, out_root: str | Path, results: Results) -> Path:
    """A new run folder named after ``results`` holding ``config.yaml`` (module docstring)."""
    out_root = Path(out_root)
    out_root.mkdir(parents=True, exist_ok=True)
    final = run_folder_name(results)
    for n in range(1, 1000):
        folder = out_root / (final if n == 1 else f"{final}-{n}")
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        write_text_atomic(folder / "config.yaml", yaml.safe_dump(config.to_dict(), sort_keys=False))
        return folder
    raise FileExistsError(f"{out_root / final}: too many runs with this name and time")


def resume_run(run_dir: str | Path, config: Config | None) -> tuple[Path, dict[str, Any]]:
    """The folder to resume and its saved config (checked against ``config`` when given)."""
    folder = Path(run_dir)
    if not (folder / "config.yaml").is_file():
        raise DataError("--resume: not a run folder (no config.yaml); expected the folder of an interrupted run", folder)
    if (folder / "results.json").is_file():
        raise DataError("--resume: this run is finished (results.json exists); nothing to resume", folder)
    saved = yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8"))
    if config is not None:
        given = saved_config(config)
        for key in FREE_KEYS:
            given.pop(key, None)
        first = _first_difference({k: v for k, v in saved.items() if k not in FREE_KEYS}, given)
        if first is not None:
            key, was, now = first
            raise ConfigError(f"--resume {folder}: the config differs from its config.yaml at {key} "
                              f"(saved {was!r}, given {now!r}); resume with the saved config")  # fmt: skip
    return folder, saved


def _first_difference(saved: Any, given: Any, key: str = "") -> tuple[str, Any, Any] | None:
    """The first dotted key where two config trees differ, with both values."""
    if isinstance(saved, dict) and isinstance(given, dict):
        for name in [*saved, *(k for k in given if k not in saved)]:
            found = _first_difference(saved.get(name), given.get(name), f"{key}.{name}" if key else str(name))
            if found is not None:
                return found
        return None
    return None if saved == given else (key, saved, given)


def finish_run(results: Results, folder: Path) -> Path:
    """Write the report files into the run folder, ``results.json`` last (module docstring)."""
    remove_stale_staging(folder.parent)
    staging = staging_folder(folder.parent, folder.name)
    try:
        staging.mkdir()
        write_contents(results, staging)
        for entry in sorted(staging.iterdir(), key=lambda p: p.name == "results.json"):
            target = folder / entry.name
            if target.is_dir():
                shutil.rmtree(target)
            os.replace(entry, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def abandon_run(folder: Path, fresh: bool) -> None:
    """After a failed run: remove a fresh folder without records, else say how to continue."""
    if fresh and not (folder / RECORDS).exists():
        shutil.rmtree(folder, ignore_errors=True)
        return
    stage(f"unfinished run kept in {folder}; continue it with: recprivacy run --resume {folder}")
