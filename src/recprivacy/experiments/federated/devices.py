"""The device files of a ``federated`` study, for a Flower federation whose SuperNodes run on
other machines (``recprivacy devices``).

``study_devices`` builds exactly the devices the study trains on: the same dataset, ``max_users``
subset, hold-out split and feature vectors as ``study.prepare`` and ``user_features`` give the
study, cut per user by ``flower_app.device.devices`` (each carries the federation's tag, which
the server checks against the run's). ``write_device_folder`` writes them into ``OUT/devices/``:
one file ``user-<u>.npz`` per user, readable by its owner only (each holds one person's
attributes and items: give every device owner their own file and nothing else), and
``federation.json``, which holds no user's data (the tag, the dataset's name and fingerprint,
how many users, items and features). The folder appears complete or not at all: it is written
in a staging folder beside it (mode 0700) and renamed into place.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from recprivacy.config import Config, validate_options
from recprivacy.errors import ConfigError
from recprivacy.experiments.federated.options import FederatedOptions
from recprivacy.experiments.federated.study import prepare
from recprivacy.experiments.runner import new_results
from recprivacy.federated.features import user_features
from recprivacy.federated.flower_app.device import Device, devices
from recprivacy.io import check_output_folder, staging_folder

FOLDER = "devices"
MANIFEST = "federation.json"


def study_devices(config: Config) -> tuple[list[Device], dict]:
    """The devices ``config``'s federated study trains on, and their manifest (module docstring)."""
    if config.study != "federated":
        raise ConfigError(f"devices: expected a federated study, the config is study {config.study!r}")
    options = validate_options(FederatedOptions, config.study_options)
    results = new_results(config)
    data, train, _ = prepare(config, options, results)
    feats = user_features(train)
    found = devices(feats.x, train.to_csr())
    manifest = {"federation": found[0].federation, "config": config.name, "dataset": data.name,
                "dataset_sha256": results.dataset["sha256"], "users": train.n_users, "items": train.n_items,
                "features": int(feats.x.shape[1]), "files": [f"user-{d.user}.npz" for d in found]}
    return found, manifest


def write_device_folder(found: list[Device], manifest: dict, out: Path, inputs: list[Path]) -> Path:
    """Write ``out/devices/`` (module docstring); refuses an ``out`` that already holds one or
    lies inside an input. Returns the folder."""
    target = check_output_folder(out, inputs=inputs, writes=[FOLDER])
    target.mkdir(parents=True, exist_ok=True)
    staging = staging_folder(target, FOLDER)
    staging.mkdir(mode=0o700)
    try:
        for device in found:
            device.save(staging / f"user-{device.user}.npz")
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        os.rename(staging, target / FOLDER)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target / FOLDER
