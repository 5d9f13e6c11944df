"""numerics._chen2024.encoder_evaluation: trained encoders read from a seed beside closed-form OLS
and
ridge, the regime gate's numbers, probes per layer, P-probing, averages per noise level."""

import numpy as np
import pytest
import torch
from icl_verify.numerics import (
    EncoderTraining,
    TrainedEncoders,
    compare_with_baselines,
    encoder_p_probe,
    evaluation_prompts,
    head_importance,
    layer_probe_errors,
    masked_importance,
    noise_level_gap,
    noise_level_mean,
    noise_level_mean_se,
    ridge_gap,
)

from icl_verify.statistics import mean_se, paired_difference

D, S = 4, 2


def _untrained(sigmas=(0.0, 0.5), d_hid=8, heads=2) -> TrainedEncoders:
    """An ensemble at its initialisation, stored as a trained one (no optimiser step)."""
    training = EncoderTraining(d=D, s=S, d_hid=d_hid, heads=heads, layers=2, sigmas=sigmas,
                               lr=1e-3, steps=1, batch=4)  # fmt: skip
    E = len(training.member_sigmas)
    model = training.model_config().build([training.seed + e for e in range(E)])
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    return TrainedEncoders(training, state, np.zeros(0), np.zeros((0, E)))


def test_the_prompts_are_their_seeds_and_each_member_has_its_noise_level():
    sigmas = (0.0, 0.5)
    p = evaluation_prompts(sigmas, 4000, d=D, s=S, n=6, q=2, seed=3)
    again = evaluation_prompts(sigmas, 4000, d=D, s=S, n=6, q=2, seed=3)
    other = evaluation_prompts(sigmas, 4000, d=D, s=S, n=6, q=2, seed=4)
    assert torch.equal(p.tokens, again.tokens) and not torch.equal(p.tokens, other.tokens)
    X, y, w = p.prompts.X.double(), p.prompts.y.double(), p.prompts.w_star.double()
    noise = y - (X @ w.unsqueeze(-1)).squeeze(-1)  # (E, count, n)
    assert noise[0].abs().max() < 1e-5  # sigma = 0 (float32 labels)
    assert abs(noise[1].std().item() - 0.5) < 0.01  # 24000 draws: SE of the SD 0.0023
    clean = (p.prompts.X_query.double() @ w.unsqueeze(-1)).squeeze(-1)
    torch.testing.assert_close(p.clean.double(), clean, rtol=1e-6, atol=1e-6)
    assert ((p.prompts.w_star != 0).sum(-1) == S).all()


def _ridge_risks(X, y, w, lam):
    """Closed-form ridge (X^T X / n + lam I)^{-1} X^T y / n (lam = 0: minimum-norm OLS) and its
    excess risk ||w_hat - w*||^2, per prompt, in numpy."""
    n = X.shape[-2]
    if lam == 0:
        w_hat = np.stack([np.linalg.pinv(x) @ t for x, t in zip(X, y, strict=True)])
    else:
        gram = np.swapaxes(X, -1, -2) @ X / n + lam * np.eye(X.shape[-1])
        w_hat = np.linalg.solve(gram, np.swapaxes(X, -1, -2) @ y[..., None] / n)[..., 0]
    return ((w_hat - w) ** 2).sum(-1)


@pytest.mark.parametrize("n", [3, 8])  # n < d (OLS minimum norm) and n > d
def test_the_baselines_are_closed_form_ridge_and_ols_tuned_on_separate_prompts(n):
    trained = [_untrained(), _untrained(heads=4)]
    grid, n_tune, n_read = [1.0, 0.1, 0.001], 48, 64
    c = compare_with_baselines(trained, n, n_tune=n_tune, n_read=n_read, grid=grid, seed=5)
    p = evaluation_prompts((0.0, 0.5), n_tune + n_read, d=D, s=S, n=n, seed=5)
    X, y, w = (a.double().numpy() for a in (p.prompts.X, p.prompts.y, p.prompts.w_star))
    for e in range(2):
        risks = np.stack([_ridge_risks(X[e], y[e], w[e], lam) for lam in grid])  # (K, count)
        best = int(np.argmin(risks[:, :n_tune].mean(axis=1)))  # chosen on the tuning prompts
        np.testing.assert_allclose(c.ridge[e], risks[best, n_tune:], rtol=1e-8, atol=1e-12)
        ols = _ridge_risks(X[e, n_tune:], y[e, n_tune:], w[e, n_tune:], 0.0)
        np.testing.assert_allclose(c.ols[e], ols, rtol=1e-8, atol=1e-12)
    if n > D:  # sigma = 0 and n > d: OLS recovers w* (up to the float32 labels' rounding)
        assert c.ols[0].max() < 1e-10
    for k, t in enumerate(trained):  # the encoders' squared errors on the reading prompts
        with torch.no_grad():
            prediction = t.model()(p.tokens[:, n_tune:], n)[..., 0]
        expected = ((prediction - p.clean[:, n_tune:, 0]) ** 2).double().numpy()
        np.testing.assert_array_equal(c.encoders[k], expected)
    assert np.isnan(c.lasso).all()  # not asked for


def test_lasso_is_tuned_like_ridge_and_left_out_where_fista_stalls():
    trained = [_untrained()]
    c = compare_with_baselines([*trained], 12, n_tune=16, n_read=16, grid=[0.1], lasso_tol=1e-6,
                               seed=1)  # fmt: skip
    assert np.isfinite(c.lasso).all() and (c.lasso >= 0).all()
    stalled = compare_with_baselines(trained, 2, n_tune=16, n_read=16, grid=[1e-4],
                                     lasso_tol=1e-14, seed=1)  # fmt: skip
    assert np.isnan(stalled.lasso).all()


def test_the_ensembles_must_share_a_setting():
    with pytest.raises(ValueError, match="one setting"):
        compare_with_baselines([_untrained(), _untrained(sigmas=(0.1, 0.5))], 6, n_tune=4,
                               n_read=4, grid=[1.0], seed=0)  # fmt: skip


def test_the_gate_is_the_paired_gap_of_the_comparison_on_the_same_prompts():
    trained = _untrained()
    gate = ridge_gap(trained, 10, count=64, grid=[1.0, 0.01], seed=9)
    c = compare_with_baselines([trained], 10, n_tune=64, n_read=64, grid=[1.0, 0.01], seed=9)
    gap, se = paired_difference(c.ridge.ravel(), c.encoders[0].ravel())
    assert (gate.risk, gate.ridge) == (c.encoders[0].mean(), c.ridge.mean())
    assert (gate.gap, gate.gap_se) == (gap, se)


def test_masked_importance_is_head_importance_on_the_seeds_prompts():
    trained = _untrained(heads=4)
    result = masked_importance(trained, 10, count=128, seed=2)
    p = evaluation_prompts((0.0, 0.5), 128, d=D, s=S, n=10, seed=2)
    expected = head_importance(trained.model(), p.tokens, 10, p.clean[..., 0])
    np.testing.assert_array_equal(result.delta, expected.delta)
    np.testing.assert_allclose(np.nansum(result.weights, axis=-1), 1.0, rtol=1e-12)


def test_a_least_squares_probe_read_on_its_own_prompts_beats_the_constant():
    # lam = 0 and sigma = 0, fitted and read on the same prompts: the probe is the least-squares
    # fit with intercept, so its mean squared error is at most the labels' variance (the
    # constant fit), after the embedding and after every layer.
    trained = _untrained(sigmas=(0.0,))
    errors = layer_probe_errors(trained, 10, n_fit=200, n_read=200, lam=0.0, fit_seed=4,
                                read_seed=4)  # fmt: skip
    assert errors.shape == (1, 3, 200)
    clean = evaluation_prompts((0.0,), 200, d=D, s=S, n=10, seed=4).clean[0, :, 0].double()
    assert (errors[0].mean(axis=-1) <= clean.var(unbiased=False).item() * (1 + 1e-9)).all()
    larger = layer_probe_errors(trained, 10, n_fit=200, n_read=200, lam=1e6, fit_seed=4,
                                read_seed=4)  # fmt: skip
    assert (larger.mean(axis=-1) >= errors.mean(axis=-1)).all()  # shrunk towards the constant


def test_p_probing_at_rate_zero_predicts_zero_so_its_risk_is_the_squared_label():
    trained = _untrained()
    result = encoder_p_probe(trained, 10, 4, rates=[0.0], steps=[0, 5], n_tune=8, n_read=16,
                             tune_seed=0, read_seed=1)  # fmt: skip
    clean = evaluation_prompts((0.0, 0.5), 16, d=D, s=S, n=10, q=4, seed=1).clean[..., -1]
    expected = (clean.double() ** 2).numpy()  # (E, B)
    np.testing.assert_allclose(result.risks, np.repeat(expected[:, None], 2, axis=1), rtol=1e-12)
    assert result.rate.tolist() == [0.0, 0.0]


def test_members_group_by_noise_level_with_replicates_outermost():
    values = np.arange(6.0)  # R = 3 replicates of S = 2 noise levels: member r * 2 + k
    np.testing.assert_array_equal(noise_level_mean(values, 3), [2.0, 3.0])
    mean, se = noise_level_mean_se(values, np.full(6, 0.6), 3)
    np.testing.assert_allclose(se, np.sqrt(3 * 0.36) / 3)  # independent: sqrt(sum se^2) / R
    with pytest.raises(ValueError, match="replicates must divide"):
        noise_level_mean(values, 4)


def test_the_gap_over_draws_and_replicates_is_the_mean_of_independent_paired_means():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(6, 5, 40)), rng.normal(size=(6, 5, 40))  # (E, N draws, B)
    mean, se = noise_level_gap(a, b, replicates=3)  # (S = 2,)
    per, per_se = mean_se(a - b)  # (E, N): each member and draw's paired mean and SE
    for k in range(2):
        members = per[k::2]  # the 3 replicates of level k, 5 draws each: 15 independent means
        np.testing.assert_allclose(mean[k], members.mean(), rtol=1e-12)
        np.testing.assert_allclose(se[k], np.sqrt((per_se[k::2] ** 2).sum()) / 15, rtol=1e-12)
    one = noise_level_gap(a[:, 0], b[:, 0], replicates=3)  # (E, B): replicates only
    np.testing.assert_allclose(one[0], noise_level_mean(per[:, 0], 3), rtol=1e-12)
