"""The model registry: names, presets and clear errors for bad names and parameters."""

from __future__ import annotations

import pytest

from recprivacy.errors import ConfigError
from recprivacy.models import MODELS, NCF, make_model, model_params
from recprivacy.models.bpr import BPRMF


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_name_builds_its_class(name):
    assert type(make_model(name)) is MODELS[name]


def test_ncf_names_preset_the_variant():
    assert make_model("gmf").variant == "gmf"
    assert make_model("mlp").variant == "mlp"
    assert make_model("neumf").variant == "neumf"
    assert make_model("ncf", variant="mlp").variant == "mlp"
    assert MODELS["gmf"] is NCF


def test_parameters_reach_the_constructor():
    model = make_model("bpr", n_factors=8, lr=0.01, seed=3)
    assert isinstance(model, BPRMF)
    assert (model.n_factors, model.lr, model.seed) == (8, 0.01, 3)
    assert make_model("bpr", **model.get_params()).get_params() == model.get_params()


def test_unknown_name_lists_the_valid_names():
    with pytest.raises(ConfigError, match="unknown model 'bprmf'") as err:
        make_model("bprmf")
    for name in MODELS:
        assert name in str(err.value)


def test_unknown_parameter_names_it_and_the_allowed_ones():
    with pytest.raises(ConfigError, match="'n_factor' is not a parameter") as err:
        make_model("lfm", n_factor=10)
    assert "allowed parameters: " + ", ".join(model_params("lfm")) in str(err.value)
    assert "n_factors" in model_params("lfm")


def test_a_preset_parameter_cannot_be_overridden():
    with pytest.raises(ConfigError, match="'variant' is fixed to 'gmf'"):
        make_model("gmf", variant="mlp")
    assert "variant" not in model_params("gmf")
