"""APM and the clip-and-noise upload defences (paper 004 Eq. 12 and the Table II baselines)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import torch

from recprivacy.defenses.apm import apm_epsilons, laplace_defence, make_defence
from recprivacy.errors import ConfigError
from recprivacy.privacy.accounting import StatementContext, compose_gaussian

COMPONENTS = {"E_U": "user", "item": "item", "mlp1.user": "mlp1", "mlp2.weight": "mlp2"}


def _uploads(b: int = 3, scale: float = 3.0) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    shapes = {"E_U": (4, 5), "item": (50, 4), "mlp1.user": (6, 4), "mlp2.weight": (1, 6)}
    return {n: torch.randn((b, *s), generator=g) * scale for n, s in shapes.items()}


def _rngs(b: int, seed: int = 0) -> list[np.random.Generator]:
    return [np.random.default_rng([seed, i]) for i in range(b)]


def test_apm_budgets_follow_eq12_with_the_section_5_7_mapping_by_default():
    assert apm_epsilons() == {"user": 30.0, "mlp1": 40.0, "mlp2": 50.0, "item": 60.0}
    assert apm_epsilons(resistance="paper_eq11") == {"user": 30.0, "item": 40.0, "mlp1": 50.0, "mlp2": 60.0}


@pytest.mark.parametrize(("component", "eps"), [("user", 30), ("mlp1", 40), ("mlp2", 50), ("item", 60)])
def test_laplace_scale_per_component_is_two_delta_over_p(component, eps):
    apm = make_defence("apm", delta=0.5)
    assert math.isclose(apm.noise_scale(component), 2 * 0.5 / eps)
    assert math.isclose(make_defence("apm", delta=0.2).noise_scale(component), 2 * 0.2 / eps)


def test_fixed_budget_baselines():
    assert math.isclose(make_defence("fixrec_max").noise_scale("item"), 1 / 30)
    assert math.isclose(make_defence("fixrec_min").noise_scale("user"), 1 / 60)
    assert math.isclose(make_defence("ldp").noise_scale("mlp2"), 0.025)
    assert math.isclose(make_defence("gaussian").noise_scale("user"), 0.0354)
    assert make_defence("none") is None


def test_clipping_bounds_every_uploaded_value_before_noise():
    tiny = laplace_defence("tiny", {c: 1e12 for c in ("user", "item", "mlp1", "mlp2")}, delta=0.5)
    up = _uploads()
    out = tiny.perturb(up, COMPONENTS, _rngs(3))
    for name, value in out.items():
        assert value.abs().max() <= 0.5 + 1e-6
        inside = up[name].abs() < 0.5
        torch.testing.assert_close(value[inside], up[name][inside], atol=1e-6, rtol=0)
        torch.testing.assert_close(value[~inside].abs(), torch.full_like(value[~inside], 0.5))


def test_noise_per_component_has_the_laplace_spread_of_its_budget():
    apm = make_defence("apm")
    up = {n: torch.zeros((2, 20000)) for n in ("E_U", "item")}
    out = apm.perturb(up, {"E_U": "user", "item": "item"}, _rngs(2))
    for name, eps in (("E_U", 30), ("item", 60)):
        std = float(out[name].double().std())
        assert abs(std - math.sqrt(2) / eps) < 0.05 * math.sqrt(2) / eps


def test_noise_comes_from_each_clients_own_stream_and_input_is_kept():
    apm = make_defence("apm")
    up = _uploads(b=3)
    before = {k: v.clone() for k, v in up.items()}
    both = apm.perturb(up, COMPONENTS, _rngs(3))
    alone = apm.perturb({k: v[1:2] for k, v in up.items()}, COMPONENTS, _rngs(3)[1:2])
    for k in up:
        assert torch.equal(up[k], before[k])
        assert torch.equal(both[k][1], alone[k][0])
        assert not torch.equal(both[k][0], both[k][1])


def test_privacy_statement_composes_over_parameters_and_rounds():
    apm = make_defence("apm")
    counts = {"user": 10, "item": 100, "mlp1": 5, "mlp2": 2}
    one = apm.privacy_statement(StatementContext(rounds=1, counts=counts))
    assert one.epsilon == 10 * 30 + 100 * 60 + 5 * 40 + 2 * 50
    assert one.setting == "local" and one.delta == 0
    assert apm.privacy_statement(StatementContext(rounds=7, counts=counts)).epsilon == 7 * one.epsilon
    gauss = make_defence("gaussian").privacy_statement(StatementContext(rounds=2, counts={"user": 10}))
    assert gauss.formal and gauss.delta == 1e-5
    assert gauss.epsilon == compose_gaussian(0.0354 / (2 * 0.5), 20, 1e-5)
    strict = make_defence("gaussian").privacy_statement(StatementContext(rounds=2, counts={"user": 10}, delta=1e-7))
    assert strict.delta == 1e-7 and strict.epsilon > gauss.epsilon


def test_without_upload_sizes_the_statement_is_one_scalar_of_the_least_noised_component():
    scalar = make_defence("apm").privacy_statement(StatementContext(rounds=3))
    assert scalar.epsilon == 3 * 60.0  # item: l = 3, the largest budget, the smallest λ
    assert "one clipped scalar" in scalar.unit and "'item'" in scalar.notes[0]
    assert make_defence("apm").privacy_statement() == replace(scalar, epsilon=60.0, scope="1 round(s) x 1 clipped scalars")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"name": "apm", "eps_min": 0}, "eps_min"),
        ({"name": "ldp", "epsilon": -1}, "epsilon"),
        ({"name": "apm", "resistance": "magic"}, "resistance"),
        ({"name": "apm", "delta": 0}, "delta"),
        ({"name": "laplace"}, "defence"),
    ],
)
def test_bad_defence_settings_are_one_line_config_errors(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        make_defence(**kwargs)
