"""numerics._chen2024.pre_gd: gd vs pre-gd at tuned learning rates (Chen et al. 2024 Figure 2c).

The rate rule, the divergence guard and the paired gap are checked against direct
computations: every rate's risks from `gd_excess_risks` one rate at a time, argmins in numpy,
and GD iterated by hand past and short of 2 / lambda_max.
"""

import math

import numpy as np
import pytest
import torch
from icl_verify.numerics import (
    SparsePrompts,
    compare_pre_gd,
    gd_excess_risks,
    gd_path,
    largest_gram_eigenvalue,
    sample_sparse_regression,
    stable_learning_rates,
)

from icl_verify.settings import SparseSetting

RATES = [1.0, 0.1, 0.01, 1e-3]
STEPS = [0, 1, 3, 10, 30, 100, 300]
LAMBDAS = [1.0, 0.1, 0.01, 1e-3]  # ridge's grid


def _prompts(batch, seed, sigma=0.2, n=10):
    generator = torch.Generator().manual_seed(seed)
    return sample_sparse_regression(
        batch, SparseSetting(16, 4, sigma), n, generator=generator, dtype=torch.float64
    )


@pytest.fixture(scope="module")
def compared():
    tune, held_out = _prompts(48, 1), _prompts(64, 2)
    return tune, held_out, compare_pre_gd(tune, held_out, RATES, STEPS, LAMBDAS)


def _risks(prompts, rate, preprocessed):
    """(N, T) risks of one rate, computed on its own."""
    X, y, w = prompts.X, prompts.y, prompts.w_star
    return gd_excess_risks(X, y, w, rate, STEPS, preprocessed=preprocessed).numpy()


@pytest.mark.parametrize("method", ["gd", "pre_gd"])
def test_the_rate_is_the_stable_grid_point_of_lowest_mean_final_risk_on_the_tuning_prompts(
    compared, method
):
    tune, held_out, result = compared
    preprocessed = method == "pre_gd"
    path = getattr(result, method)
    both = [torch.cat([getattr(tune, a), getattr(held_out, a)]) for a in ("X", "y")]
    if preprocessed:
        both[0] = both[0] * (both[0].mT @ both[1][..., None] / 10)[..., 0][:, None, :]
    largest = float(largest_gram_eigenvalue(both[0]).max())
    stable = np.array(RATES) < 2 / largest
    np.testing.assert_array_equal(path.stable, stable)
    direct = np.array([_risks(tune, rate, preprocessed)[:, -1].mean() for rate in RATES])
    expected = np.where(stable, direct, np.inf)
    np.testing.assert_allclose(path.final_means, expected, rtol=1e-12)
    assert path.rate == RATES[int(np.argmin(expected))]
    assert not stable[0] and stable[-1]  # the grid spans the divergence edge
    held = _risks(held_out, path.rate, preprocessed)  # (N', T) at the chosen rate
    np.testing.assert_allclose(path.mean, held.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(path.se, held.std(axis=0, ddof=1) / math.sqrt(64), rtol=1e-10)
    assert path.min_step == STEPS[int(np.argmin(held.mean(axis=0)))]


@pytest.mark.parametrize("method", ["gd", "pre_gd"])
def test_early_stopping_picks_rate_and_step_jointly_on_the_tuning_prompts(compared, method):
    tune, held_out, result = compared
    preprocessed = method == "pre_gd"
    path = getattr(result, method)
    means = np.array(
        [
            _risks(tune, rate, preprocessed).mean(axis=0) if ok else np.full(len(STEPS), np.inf)
            for rate, ok in zip(RATES, path.stable, strict=True)
        ]
    )  # (K, T)
    k, t = np.unravel_index(np.argmin(means), means.shape)
    assert (path.best_rate, path.best_step) == (RATES[k], STEPS[t])
    held = _risks(held_out, RATES[k], preprocessed)[:, t]
    assert path.best_mean == pytest.approx(held.mean(), rel=1e-12)


def test_the_paired_gaps_and_their_se_match_a_direct_computation(compared):
    _, held_out, result = compared
    gd = _risks(held_out, result.gd.rate, False)
    pre = _risks(held_out, result.pre_gd.rate, True)
    difference = gd[:, -1] - pre[:, -1]  # per held-out prompt, paired
    assert result.final_gap == pytest.approx(difference.mean(), rel=1e-12)
    assert result.final_gap_se == pytest.approx(difference.std(ddof=1) / 8.0, rel=1e-10)
    # the pairing matters: the unpaired SE is larger (the two risks share each prompt's w*)
    unpaired = math.hypot(gd[:, -1].std(ddof=1), pre[:, -1].std(ddof=1)) / 8.0
    assert result.final_gap_se < unpaired
    step = STEPS.index
    best = (
        _risks(held_out, result.gd.best_rate, False)[:, step(result.gd.best_step)]
        - _risks(held_out, result.pre_gd.best_rate, True)[:, step(result.pre_gd.best_step)]
    )
    assert result.best_gap == pytest.approx(best.mean(), rel=1e-12)
    assert result.best_gap_se == pytest.approx(best.std(ddof=1) / 8.0, rel=1e-10)


def _least_squares_risks(prompts, lam):
    """(N,) excess risks of ridge (Σ̂ + λI)⁻¹Xᵀy/n, or of minimum-norm OLS at λ = 0, solved
    here on their own (pseudo-inverse, linear solve)."""
    X, y, w = prompts.X, prompts.y, prompts.w_star
    n, d = X.shape[-2], X.shape[-1]
    if lam == 0:
        v = (torch.linalg.pinv(X) @ y[..., None])[..., 0]
    else:
        gram = X.transpose(-1, -2) @ X / n + lam * torch.eye(d, dtype=X.dtype)
        v = torch.linalg.solve(gram, (X.transpose(-1, -2) @ y[..., None])[..., 0] / n)
    return ((v - w) ** 2).sum(-1).numpy()


def test_the_least_squares_baselines_are_tuned_on_the_tuning_prompts_and_paired(compared):
    tune, held_out, result = compared
    means = [_least_squares_risks(tune, lam).mean() for lam in LAMBDAS]
    assert result.ridge.lam == LAMBDAS[int(np.argmin(means))]
    pre = _risks(held_out, result.pre_gd.rate, True)[:, -1]
    for baseline, lam in ((result.ridge, result.ridge.lam), (result.ols, 0.0)):
        risks = _least_squares_risks(held_out, lam)
        assert baseline.mean == pytest.approx(risks.mean(), rel=1e-9)
        assert baseline.gap == pytest.approx((risks - pre).mean(), rel=1e-9)
        assert baseline.gap_se == pytest.approx((risks - pre).std(ddof=1) / 8.0, rel=1e-8)


def test_stability_edge_is_where_gd_starts_to_grow_without_bound():
    prompts = _prompts(1, 3)
    X, y = prompts.X[0], prompts.y[0]
    edge = 2.0 / float(largest_gram_eigenvalue(X))
    below, above = 0.98 * edge, 1.02 * edge
    assert stable_learning_rates(X, y, [below, above], preprocessed=False).tolist() == [True, False]
    norms = gd_path(X, y, torch.tensor([[below], [above]], dtype=X.dtype), [2000]).norm(dim=-1)
    assert float(norms[0, 0]) < 1e3 < float(norms[1, 0])  # the iterates themselves


def test_a_rate_divergent_on_one_held_out_prompt_is_never_chosen():
    tune = _prompts(16, 4)
    small = SparsePrompts(0.1 * tune.X, 0.1 * tune.y, tune.X_query, tune.y_query, tune.w_star)
    # the same w*, lambda_max ~ 0.07: rate 1 is stable, and fastest, on these tuning prompts
    stiff = _prompts(4, 5)  # lambda_max ~ 5: rate 1 diverges there
    result = compare_pre_gd(small, stiff, [1.0, 0.1], STEPS, LAMBDAS)
    assert result.gd.stable.tolist() == [False, True]
    assert result.gd.rate == 0.1 and np.all(np.isfinite(result.gd.mean))
    alone = compare_pre_gd(small, small, [1.0, 0.1], STEPS, LAMBDAS)  # same tuning, no stiff one
    assert alone.gd.rate == 1.0


def test_no_stable_rate_is_one_line_value_error():
    tune = _prompts(4, 6)
    with pytest.raises(ValueError, match=r"^rates must hold a rate below 2 / lambda_max for gd"):
        compare_pre_gd(tune, tune, [10.0, 100.0], STEPS, LAMBDAS)


def test_pre_gd_comparison_is_compare_pre_gd_on_the_tuning_then_held_out_prompts_of_its_seed():
    from icl_verify.numerics import pre_gd_comparison

    result = pre_gd_comparison(
        SparseSetting(16, 4, 0.2), 10, n_tune=24, n_prompts=32, rates=RATES, steps=STEPS,
        lambdas=LAMBDAS, seed=9,
    )
    generator = torch.Generator().manual_seed(9)
    tune, held_out = (
        sample_sparse_regression(
            size, SparseSetting(16, 4, 0.2), 10, generator=generator, dtype=torch.float64
        )
        for size in (24, 32)
    )
    direct = compare_pre_gd(tune, held_out, RATES, STEPS, LAMBDAS)
    for method in ("gd", "pre_gd"):
        ours, theirs = getattr(result, method), getattr(direct, method)
        assert ours.rate == theirs.rate
        np.testing.assert_array_equal(ours.mean, theirs.mean)
    assert (result.final_gap, result.final_gap_se) == (direct.final_gap, direct.final_gap_se)
