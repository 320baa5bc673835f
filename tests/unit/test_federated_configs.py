"""Every shipped ``configs/federated`` file loads and its study options validate."""

from __future__ import annotations

from pathlib import Path

import pytest

from recprivacy.config import load_config, validate_options
from recprivacy.experiments.federated import FederatedOptions

CONFIGS = sorted((Path(__file__).resolve().parents[2] / "configs" / "federated").glob("*.yaml"))


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_config_validates(path):
    config = load_config(path)
    assert config.study == "federated"
    options = validate_options(FederatedOptions, config.study_options)
    assert options.methods and options.zetas


def test_there_is_a_config_per_reproduced_table():
    names = {p.stem for p in CONFIGS}
    assert {"ml-100k-table2", "ml-100k-table3", "ml-100k-table4", "ml-100k-table5", "ml-100k-table6-lightgcn",
            "ml-100k-table6-ncf", "ml-100k-fig4", "ml-100k-fig7", "ml-1m-table2"} <= names
