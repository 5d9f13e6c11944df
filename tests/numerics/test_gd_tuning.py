"""numerics._chen2024.gd_tuning: GD and pre-gd oracle-tuned on diagonal-Sigma sparse prompts (Chen
et al. 2024 Thms 5.1, 5.2, §4.3).

The tuned point is checked against a direct search: every (eta, t) risk recomputed in numpy
(GD iterated by hand, the exact excess risk (v - w*)^T Sigma (v - w*)) on the returned tuning
prompts, argmin of the mean; the risks there against the same on the evaluation prompts; the
draw against the prior (support size s, entries ±1/sqrt(s), covariance diag(spectrum)).
"""

import numpy as np
import pytest
from icl_verify.numerics import tuned_gd

SPECTRUM = np.linspace(0.5, 1.0, 6)
ETAS = (0.3, 1.0, 1.9)
STEPS = (1, 2, 4, 8, 16)


@pytest.fixture(scope="module")
def draw():
    return tuned_gd(24, spectrum=SPECTRUM, s=2, sigma=0.5, reps=12, etas=ETAS, steps=STEPS, seed=3)


def _risks(prompts, eta, t, preprocessed):
    """(N,) excess risks of t GD steps from 0, relative step eta, by explicit iteration."""
    out = []
    for X, y, w_star in zip(prompts.X, prompts.y, prompts.w_star, strict=True):
        n = X.shape[0]
        r = X.T @ y / n if preprocessed else np.ones(X.shape[1])
        Xt = X * r
        step = eta / np.linalg.eigvalsh(Xt.T @ Xt / n)[-1]
        w = np.zeros(X.shape[1])
        for _ in range(t):
            w = w + step * Xt.T @ (y - Xt @ w) / n
        error = r * w - w_star
        out.append(error @ (SPECTRUM * error))
    return np.array(out)


@pytest.mark.parametrize("method", ["gd", "pre_gd"])
def test_the_tuned_point_minimises_the_mean_tuning_risk_and_is_read_on_the_evaluation_set(
    draw, method
):
    preprocessed = method == "pre_gd"
    grid = np.array(
        [[_risks(draw.tuning, eta, t, preprocessed).mean() for t in STEPS] for eta in ETAS]
    )  # (E, T)
    e, t = np.unravel_index(np.argmin(grid), grid.shape)
    tuned = getattr(draw, method)
    assert (tuned.eta, tuned.t, tuned.at_edge) == (ETAS[e], STEPS[t], t == len(STEPS) - 1)
    expected = _risks(draw.evaluation, tuned.eta, tuned.t, preprocessed)
    np.testing.assert_allclose(tuned.risks, expected, rtol=1e-9)


def test_one_seed_gives_the_same_prompts_to_both_methods_and_others_to_another_seed(draw):
    alone = tuned_gd(
        24, spectrum=SPECTRUM, s=2, sigma=0.5, reps=12, etas=ETAS, steps=STEPS, seed=3,
        methods=("gd",),
    )  # fmt: skip
    assert alone.pre_gd is None
    np.testing.assert_array_equal(alone.evaluation.X, draw.evaluation.X)
    np.testing.assert_array_equal(alone.gd.risks, draw.gd.risks)
    other = tuned_gd(
        24, spectrum=SPECTRUM, s=2, sigma=0.5, reps=12, etas=ETAS, steps=STEPS, seed=4,
        methods=("gd",),
    )  # fmt: skip
    assert not np.array_equal(other.evaluation.X, draw.evaluation.X)
    assert not np.array_equal(draw.tuning.X, draw.evaluation.X)  # two independent sets


def test_the_draw_follows_the_prior_and_the_covariance():
    big = tuned_gd(
        400, spectrum=SPECTRUM, s=2, sigma=0.5, reps=40, etas=(1.0,), steps=(1,), seed=0,
        methods=("gd",),
    )  # fmt: skip
    for prompts in (big.tuning, big.evaluation):
        nonzero = prompts.w_star != 0
        np.testing.assert_array_equal(nonzero.sum(axis=1), 2)
        np.testing.assert_allclose(np.abs(prompts.w_star[nonzero]), 1 / np.sqrt(2))
        X = prompts.X.reshape(-1, SPECTRUM.size)  # 16000 draws of x
        np.testing.assert_allclose(X.var(axis=0), SPECTRUM, rtol=0.05)  # SE ~ 1.1%
        noise = prompts.y - np.einsum("bnd,bd->bn", prompts.X, prompts.w_star)
        assert abs(noise.std() - 0.5) < 0.02


def test_an_unknown_method_is_refused():
    with pytest.raises(ValueError, match="methods must be among"):
        tuned_gd(8, spectrum=SPECTRUM, s=2, sigma=0.5, reps=2, etas=(1.0,), steps=(1,), seed=0,
                 methods=("ridge",))  # fmt: skip
