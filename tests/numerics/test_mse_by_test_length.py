"""numerics.mse_by_test_length with several ensembles: a linear-attention member keeps its training
1/L (vanilla GD with a step growing like L'/L, §HE-5.1-LENGTH) while a softmax pair renormalises
(debiased GD at a fixed step), all on the same nested prompts."""

import numpy as np
import pytest
from icl_verify.numerics import mse_by_test_length

D_COV, L, SIGMA2 = 5, 40, 0.1
GAMMA, ETA, OMEGA = 0.9, 0.85, 0.01
LENGTHS = (20, 40, 80)


@pytest.fixture
def linear_and_softmax(pattern_ensemble):
    # linear: one head KQ11 = GAMMA I, OV last row (0, .., 0, 1): y_hat = (GAMMA / L) sum_{i<=L'}
    # y_i x_i^T x_q, i.e. vanilla GD over L' examples with step GAMMA L' / L.
    # softmax: the pair (OMEGA, ETA / (2 OMEGA)), (-OMEGA, -ETA / (2 OMEGA)) ~ debiased GD(ETA).
    linear = pattern_ensemble([[GAMMA]], [[1.0]], d=D_COV, L=L, attention="linear")
    pair = pattern_ensemble(
        [[OMEGA, -OMEGA], [0.3, -0.3]], [[ETA / (2 * OMEGA), -ETA / (2 * OMEGA)], [1.5, -1.5]],
        d=D_COV, L=L,
    )  # fmt: skip
    return linear, pair


def test_linear_attention_is_gd_with_a_growing_step_and_the_pair_is_debiased_gd(
    linear_and_softmax,
):
    linear, pair = linear_and_softmax
    gd_steps = {f"GD{n}": GAMMA * n / L for n in LENGTHS}
    losses = mse_by_test_length(
        {"linear": (linear, 0), "pair": (pair, 0), "wide": (pair, 1)}, LENGTHS,
        debiased_steps={"dGD": ETA}, gd_steps=gd_steps, n_prompts=4096, seed=2,
    )  # fmt: skip
    assert losses.names[:8] == (
        "linear@20", "pair@20", "wide@20", "dGD@20", "GD20@20", "GD40@20", "GD80@20", "Bayes@20",
    )  # fmt: skip
    for n in LENGTHS:
        # the same predictor up to float32 rounding of the model's prediction (relative ~1e-6
        # of O(1) numbers; the paired loss difference is (a - b)(a + b - 2 y_q))
        same = losses.difference(f"linear@{n}", f"GD{n}@{n}")
        assert abs(same.mean) < 1e-5 * losses[f"GD{n}@{n}"].mean
        # the pair differs from dGD(ETA) by an O(omega^2) remainder (reference §HE-T4.2i:
        # RMS ~ eta omega^2 d^1.5 sqrt(1.1 / (6 L')) ~ 1e-4), so its loss by less than
        # 2 RMS(dGD error) RMS(remainder) + RMS(remainder)^2 < 1e-3 (Cauchy-Schwarz)
        assert abs(losses.difference(f"pair@{n}", f"dGD@{n}").mean) < 1e-3
    # the pair renormalises: it gets better with longer prompts; the frozen linear head is past
    # its best length at L' = 80 (exact risk R_GD(2 GAMMA) = 1.00 there vs R_GD(GAMMA) = 0.24 at
    # L' = L, §HE-4.3-RISK)
    gain = losses.difference("pair@20", "pair@80")
    assert gain.mean > 4 * gain.stderr
    worse = losses.difference("linear@80", "linear@40")
    assert worse.mean > 4 * worse.stderr


def test_members_compared_jointly_have_the_numbers_they_have_alone(linear_and_softmax):
    linear, pair = linear_and_softmax
    joint = mse_by_test_length(
        {"linear": (linear, 0), "pair": (pair, 0)}, [40], n_prompts=512, seed=5, bayes=False
    )
    assert joint.names == ("linear@40", "pair@40")
    for name, model in [("linear", (linear, 0)), ("pair", (pair, 0))]:
        alone = mse_by_test_length({name: model}, [40], n_prompts=512, seed=5, bayes=False)
        np.testing.assert_allclose(alone.mean, joint[f"{name}@40"].mean, rtol=1e-14)


def test_bad_arguments_are_refused_in_one_line(linear_and_softmax, pattern_ensemble):
    linear, pair = linear_and_softmax
    other_d = pattern_ensemble([[0.1]], [[1.0]], d=D_COV + 1, L=L)
    other_noise = pattern_ensemble([[0.1]], [[1.0]], d=D_COV, L=L, sigma2=0.5)
    cases = [
        ({"a": (linear, 0), "b": (other_d, 0)}, [40], {}, "models must come from ensembles"),
        ({"a": (linear, 0), "b": (other_noise, 0)}, [40], {}, "with one d and sigma2"),
        ({}, [40], {}, "models must map at least one name"),
        ({"a": (pair, 2)}, [40], {}, r"models\['a'\] must name a member in 0..1"),
        ({"a": (pair, 0)}, [0], {}, r"lengths must be integers in 1..100000, got \[0\]"),
        ({"a": (pair, 0)}, [40.5], {}, "lengths must be integers in 1..100000"),
        ({"a": (pair, 0)}, [100_001], {}, "lengths must be integers in 1..100000"),
        ({"a": (pair, 0)}, [], {}, "lengths must be integers in 1..100000"),
        ({"a": (pair, 0)}, [40], {"gd_steps": {"a": 1.0}}, "must have distinct names"),
        ({"Bayes": (pair, 0)}, [40], {}, "none 'Bayes' when bayes=True"),
    ]
    for models, lengths, kwargs, message in cases:
        with pytest.raises(ValueError, match=message) as error:
            mse_by_test_length(models, lengths, n_prompts=64, **kwargs)
        assert "\n" not in str(error.value)
