"""numerics.preconditioning: the learned and fitted preconditioners, bootstrap, paired risks.

Independent sources: a softmax pair built from given circuits (its applied preconditioner is
2 mu omega Gamma up to O(omega^2)), the delta-method SE of a distance (bootstrap), and the exact
risk of preconditioned debiased GD (theory, Lemma E.4) for the Monte Carlo on KMS prompts.
"""

import numpy as np
import pytest
import torch
from icl_verify.numerics.ensemble import EnsembleTraining, train_ensemble
from icl_verify.numerics.models import MultiHeadAttention
from icl_verify.numerics.preconditioning import (
    bootstrap_distances,
    fitted_preconditioners,
    head_opposition,
    learned_preconditioners,
    model_preconditioners,
    preconditioned_losses,
)
from icl_verify.theory.preconditioning import optimal_preconditioner, preconditioned_gd_risk
from icl_verify.theory.setting import Setting

from icl_verify.covariance import kms_covariance

D, L, SIGMA2, RHO = 3, 20, 0.1, 0.5
GAMMA = np.array([[1.2, -0.4, 0.1], [-0.2, 1.0, -0.3], [-0.2, -0.3, 0.9]])  # not symmetric


def _pair_circuits(omega: float, mu: float, gamma=GAMMA):
    """Heads (omega Gamma, mu), (-omega Gamma, -mu): KQ, OV of shape (1, 2, D+1, D+1)."""
    KQ = torch.zeros(1, 2, D + 1, D + 1, dtype=torch.float64)
    KQ[0, 0, :D, :D] = omega * torch.as_tensor(gamma)
    KQ[0, 1] = -KQ[0, 0]
    OV = torch.zeros(1, 2, D + 1, D + 1, dtype=torch.float64)
    OV[0, 0, -1, -1], OV[0, 1, -1, -1] = mu, -mu
    return KQ, OV


def test_learned_preconditioner_and_opposition_of_a_pair():
    KQ, OV = _pair_circuits(0.1, 4.0)
    np.testing.assert_allclose(learned_preconditioners(KQ, OV, D)[0], 0.8 * GAMMA, atol=1e-15)
    assert head_opposition(KQ, D)[0] == pytest.approx(-1.0, abs=1e-15)
    KQ[0, 1, 0, 0] += 0.5  # head 2 no longer -c head 1
    assert head_opposition(KQ, D)[0] > -0.99


def test_fitted_preconditioner_is_what_a_small_omega_pair_applies():
    """A pair at omega applies 2 mu omega Gamma + O(omega^2): the fit's distance to it shrinks
    by ~4x when omega halves (the even orders cancel in the pair; the cubic term is nearly
    uncorrelated with the features), and is within a few percent at omega = 0.05."""
    gaps = []
    for omega in (0.1, 0.05):
        model = MultiHeadAttention.from_circuits(*_pair_circuits(omega, 0.5 / omega))
        fit = model_preconditioners(model, D, L, SIGMA2, rho=RHO, n_prompts=16_384, seed=1)
        gaps.append(np.abs(fit.value[0] - GAMMA).max())
        assert (np.abs(fit.value[0] - GAMMA) <= 0.05 + 4 * fit.stderr[0]).all()
    assert gaps[1] < gaps[0]


@pytest.fixture(scope="module")
def ensemble():
    training = EnsembleTraining(
        d=D, L=L, sigma2=SIGMA2, heads=(2, 2), lr=1e-2, steps=200, batch=64, seed=0,
        log_every=20, checkpoint_every=0, validation_batch=256, rho=RHO,
    )  # fmt: skip
    return train_ensemble(training)


def test_fitted_preconditioners_of_trained_members_share_prompts(ensemble):
    both = fitted_preconditioners(ensemble, [0, 1], n_prompts=2048, seed=3)
    alone = fitted_preconditioners(ensemble, [1], n_prompts=2048, seed=3)
    np.testing.assert_allclose(both.value[1], alone.value[0], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="members must be a non-empty list of indices in 0..1"):
        fitted_preconditioners(ensemble, [2], n_prompts=2048)


def test_preconditioned_dgd_risk_on_kms_prompts_matches_lemma_e4(ensemble):
    setting, sigma = Setting(d=D, L=L, sigma2=SIGMA2), kms_covariance(D, RHO)
    best = optimal_preconditioner(sigma, setting, debiased=True)
    losses = preconditioned_losses(
        ensemble, {"model": 0}, {"best": best, "other": GAMMA}, n_prompts=40_000, seed=2
    )
    for name, gamma in (("best", best), ("other", GAMMA)):
        exact = preconditioned_gd_risk(gamma, sigma, setting, debiased=True)
        assert abs(losses[name].mean - exact) <= 4 * losses[name].stderr
    assert losses.difference("other", "best").mean > 0  # the optimum is better, paired
    with pytest.raises(ValueError, match=r"gammas\['bad'\] must be a finite \(3, 3\) matrix"):
        preconditioned_losses(ensemble, {"model": 0}, {"bad": np.eye(2)}, n_prompts=64)


def test_bootstrap_se_matches_the_delta_method():
    """Far from the target the distance of the mean is linear in the mean: its SE is the SD of
    the members' projection on the unit direction, over sqrt(M)."""
    rng = np.random.default_rng(0)
    M = 200
    gammas = GAMMA + 0.05 * rng.standard_normal((M, D, D))
    target = 2.0 * GAMMA
    result = bootstrap_distances(gammas, target[None], n_boot=4000, seed=1)
    direction = (gammas.mean(axis=0) - target) / np.linalg.norm(gammas.mean(axis=0) - target)
    projection = (gammas * direction).sum(axis=(1, 2))
    delta = projection.std(ddof=1) / np.sqrt(M)
    assert result.absolute_se[0] == pytest.approx(delta, rel=0.1)
    value, se = result.difference(0, 0)
    assert value == 0 and se == 0
    with pytest.raises(ValueError, match="gammas must be"):
        bootstrap_distances(gammas[:1], target[None])
