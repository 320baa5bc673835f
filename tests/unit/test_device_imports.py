"""A federated device's train path imports no tabular or statistics stack.

Flower starts one ClientApp process for every message a device receives; when it trains, the
process imports the client, the protocol, the noise source and the app spec
(``flower_app.client.train``). None of them needs pandas, SciPy's statistics, scikit-learn or
the centralised models and data tables (``defenses.dpmf`` and what it pulls in), and each of
those costs the device CPU on every message. The shared pieces moved for this stay importable
from their old homes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("flwr", reason="Flower is in the test extra; install recprivacy[test]")

SRC = Path(__file__).resolve().parents[2] / "src"
HEAVY = ("pandas", "scipy.stats", "sklearn", "recprivacy.defenses.dpmf", "recprivacy.models.lfm",
         "recprivacy.data.interactions", "recprivacy.data.features")  # fmt: skip
TRAIN_PATH = """
import recprivacy.federated.flower_app.client
from recprivacy.federated.protocol import local_update, perturb_uploads
from recprivacy.privacy.randomness import NoiseSource
from recprivacy.federated.flower_app.spec import AppSpec
"""


def test_the_device_train_path_imports_no_heavy_module():
    code = f"import sys\n{TRAIN_PATH}\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == []


def test_moved_names_stay_importable_from_their_old_homes():
    from recprivacy.defenses import dpmf, federated_dp, objective_perturbation

    assert dpmf.SENSITIVITY is objective_perturbation.SENSITIVITY == 2.0
    assert dpmf.objective_noise is federated_dp.objective_noise is objective_perturbation.objective_noise


def test_every_privacy_name_resolves_and_an_unknown_one_is_an_error_naming_it():
    import recprivacy.privacy as privacy
    from recprivacy.data import features
    from recprivacy.privacy import accounting, mechanisms, randomness

    for name in privacy.__all__:
        home = next(m for m in (accounting, mechanisms, randomness, features) if hasattr(m, name))
        assert getattr(privacy, name) is getattr(home, name)
    with pytest.raises(AttributeError, match="no attribute 'laplace'"):
        privacy.laplace  # noqa: B018
    with pytest.raises(ImportError, match="laplace"):
        from recprivacy.privacy import laplace  # noqa: F401
