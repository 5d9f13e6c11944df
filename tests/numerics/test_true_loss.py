"""SGD on the true loss of the kernel-sum model (numerics._he2025.true_loss), checked independently.

`conditional_risk` integrates the labels out analytically; here its mean is compared with the
plain sampled-label MSE of `kernel_sum_prediction` (Monte Carlo, a different estimator), and
its gradient with a finite difference of that sampled MSE on common prompts.
"""

import numpy as np
import pytest
import torch
from icl_verify.numerics import (
    TrueLossHistory,
    TrueLossTraining,
    conditional_risk,
    kernel_sum_prediction,
    sample_linear_regression,
    train_true_loss,
    true_loss_summary,
    true_losses,
)

from icl_verify.settings import Setting

OMEGA, MU = [0.3, -0.2, 0.05], [1.2, -0.9, 0.4]
SETTING = Setting(d=5, L=40, sigma2=0.1)


@pytest.fixture(scope="module")
def prompts():
    generator = torch.Generator().manual_seed(3)
    return sample_linear_regression(200_000, SETTING, generator=generator, dtype=torch.float64)


def test_conditional_risk_is_the_sampled_label_mse(prompts):
    omega, mu = torch.tensor(OMEGA, dtype=torch.float64), torch.tensor(MU, dtype=torch.float64)
    sampled = (kernel_sum_prediction(omega, mu, prompts.X, prompts.y, prompts.x_query)
               - prompts.y_query) ** 2  # fmt: skip
    risk = conditional_risk(omega, mu, prompts.X, prompts.x_query, 0.1)
    difference = sampled - risk  # paired: same covariates
    se = difference.std() / np.sqrt(difference.numel())
    assert abs(float(difference.mean())) < 4 * float(se)
    assert float(se) < 0.003  # the check resolves a 1% error of the loss (about 0.3)


def test_true_losses_agrees_with_the_sampled_mse_on_independent_prompts(prompts):
    mean, se = true_losses([OMEGA], [MU], SETTING, 50_000, seed=11)
    omega, mu = torch.tensor(OMEGA, dtype=torch.float64), torch.tensor(MU, dtype=torch.float64)
    sampled = (kernel_sum_prediction(omega, mu, prompts.X, prompts.y, prompts.x_query)
               - prompts.y_query) ** 2  # fmt: skip
    sampled_se = float(sampled.std()) / np.sqrt(sampled.numel())
    assert abs(mean[0] - float(sampled.mean())) < 4 * np.hypot(se[0], sampled_se)


def test_gradient_matches_a_finite_difference_of_the_sampled_mse(prompts):
    """SGD's gradient (autograd of conditional_risk) vs central differences of the plain MSE."""
    omega = torch.tensor(OMEGA, dtype=torch.float64, requires_grad=True)
    mu = torch.tensor(MU, dtype=torch.float64)
    conditional_risk(omega, mu, prompts.X, prompts.x_query, 0.1).mean().backward()
    step = 1e-4
    for h in range(3):
        shift = torch.zeros(3, dtype=torch.float64)
        shift[h] = step
        up, down = (
            (kernel_sum_prediction(omega.detach() + s, mu, prompts.X, prompts.y, prompts.x_query)
             - prompts.y_query) ** 2 for s in (shift, -shift)
        )  # fmt: skip
        per_prompt = (up - down) / (2 * step)
        se = float(per_prompt.std()) / np.sqrt(per_prompt.numel())
        assert abs(float(per_prompt.mean()) - float(omega.grad[h])) < 4 * se + 1e-6


def test_small_lr_sgd_follows_the_members_own_steps_and_is_reproducible():
    training = TrueLossTraining(
        d=5,
        L=40,
        sigma2=0.1,
        omega0=(0.02, -0.03),
        mu0=(0.03, -0.02),
        lr=0.01,
        steps=60,
        members=3,
        batch=32,
        log_every=20,
        seed=4,
    )
    first, second = train_true_loss(training), train_true_loss(training)
    assert np.array_equal(first.omega, second.omega)
    assert first.t.tolist() == pytest.approx([0.0, 0.2, 0.4, 0.6])
    assert not np.allclose(first.omega[-1, 0], first.omega[-1, 1])  # own prompts per member
    growth = np.abs(first.omega[-1]).sum(1) / np.abs(first.omega[0]).sum(1)
    assert (growth > 1.5).all()  # Phase I growth (about e^{2 t} = 3.3 at t = 0.6)


def _history(rng, R=4, E=5, H=3, mu_scale=1.0) -> TrueLossHistory:
    omega = rng.uniform(-0.3, 0.3, (R, E, H))
    return TrueLossHistory(np.arange(R) * 0.1, omega, mu_scale * rng.normal(0, 1, (R, E, H)))


def test_summary_is_the_member_mean_with_its_standard_error():
    """omega, mu and ln ||theta|| = (1/2) ln(|omega|^2 + |mu|^2) averaged over the members
    (axis 1), each with the SE s / sqrt(E) of that mean."""
    history = _history(np.random.default_rng(0))
    summary = true_loss_summary(history, [3], SETTING, 512, seed=0)
    log_norm = 0.5 * np.log((history.omega**2).sum(-1) + (history.mu**2).sum(-1))
    np.testing.assert_allclose(history.log_norm, log_norm, rtol=1e-15)
    for name, values in (("omega", history.omega), ("mu", history.mu), ("log_norm", log_norm)):
        np.testing.assert_allclose(getattr(summary, name), values.mean(1), rtol=1e-14)
        se = values.std(1, ddof=1) / np.sqrt(values.shape[1])
        np.testing.assert_allclose(getattr(summary, f"{name}_se"), se, rtol=1e-12)


def test_summary_loss_adds_the_spread_and_the_members_monte_carlo_errors():
    """The loss at the records is the member mean of `true_losses` on the same prompts; its SE^2
    is the spread's s^2 / E plus the members' Monte Carlo SEs as independent, sum se_e^2 / E^2."""
    history = _history(np.random.default_rng(1))
    summary = true_loss_summary(history, [0, 2], SETTING, 4096, seed=7)
    loss, se = true_losses(history.omega[[0, 2]], history.mu[[0, 2]], SETTING, 4096, seed=7)
    E = loss.shape[1]
    np.testing.assert_allclose(summary.loss, loss.mean(1), rtol=1e-14)
    expected = loss.var(1, ddof=1) / E + (se**2).sum(1) / E**2
    np.testing.assert_allclose(summary.loss_se**2, expected, rtol=1e-12)


def test_at_mu_zero_every_member_has_the_loss_one_plus_sigma2():
    """mu = 0 predicts 0 whatever omega: every member's risk is |x_q|^2 / d + sigma2 on the same
    prompts (no spread), whose mean is 1 + sigma2 up to the Monte Carlo error."""
    history = _history(np.random.default_rng(2), mu_scale=0.0)
    summary = true_loss_summary(history, [1], SETTING, 8192, seed=3)
    _, se = true_losses(history.omega[[1]], history.mu[[1]], SETTING, 8192, seed=3)
    assert abs(float(summary.loss[0]) - 1.1) < 4 * float(se.max())
    assert float(summary.loss_se[0]) == pytest.approx(np.sqrt((se**2).sum()) / 5, rel=1e-12)
