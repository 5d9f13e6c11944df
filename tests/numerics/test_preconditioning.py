"""numerics._he2025.preconditioning: the learned and fitted preconditioners, bootstrap, paired
risks.

Independent sources: a softmax pair built from given circuits (its applied preconditioner is
2 mu omega Gamma up to O(omega^2)), the delta-method SE of a distance (bootstrap), and the exact
risk of preconditioned debiased GD (theory, Lemma E.4) for the Monte Carlo on KMS prompts.
"""

import numpy as np
import pytest
import torch
from icl_verify.numerics import (
    EnsembleTraining,
    MultiHeadAttention,
    TrainedEnsemble,
    bootstrap_distances,
    fitted_preconditioners,
    head_opposition,
    learned_preconditioners,
    model_preconditioners,
    preconditioned_losses,
    read_paired_preconditioners,
    settled_opposition,
    train_ensemble,
)
from icl_verify.numerics._core.ensemble import WEIGHT_NAMES
from icl_verify.theory import Setting, optimal_preconditioner, preconditioned_gd_risk

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


def _blocks(first, second):
    """KQ of one member with two heads whose KQ11 blocks are first and second: (2, D+1, D+1)."""
    KQ = np.zeros((2, D + 1, D + 1))
    KQ[0, :D, :D], KQ[1, :D, :D] = first, second
    return KQ


def test_settled_opposition_is_the_relative_size_of_the_part_not_along_minus_k1():
    # K2 = -(K1 + e B) with B perpendicular to K1 (Frobenius): cos = -|K1| / |K1 + e B|, and
    # ||K2/|K2| + K1/|K1|||_F = sqrt(2 (1 + cos)). Constant logs: no noise, no drift.
    B = np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])  # antisymmetric
    A = np.diag([1.0, 2.0, 3.0])  # symmetric: <A, B> = 0
    history = np.stack([_blocks(A, -(A + 0.3 * B))] * 40)[:, None]  # (n, M, H, D+1, D+1)
    value, error = settled_opposition(history, D)
    cos = -np.linalg.norm(A) / np.linalg.norm(A + 0.3 * B)
    assert value == pytest.approx(np.sqrt(2 * (1 + cos)), rel=1e-12)
    assert error == pytest.approx(0.0, abs=1e-12)
    # still approaching the pattern (the third quarter further from it than the noise allows):
    # not judged yet, its error is the whole value; logs lost at a resume (NaN) are skipped
    falling = np.stack([_blocks(A, -(A + e * B)) for e in np.linspace(1.0, 0.3, 40)])[:, None]
    falling = np.concatenate([falling, np.full((2, *falling.shape[1:]), np.nan)])
    value, error = settled_opposition(falling, D)
    assert error == pytest.approx(value) and value > 0


def _paired_ensemble(gammas, omega, mu, n_logs=40):
    """Members m with heads (omega Gamma_m, mu), (-omega Gamma_m, -mu) on KMS covariates of
    correlation RHO, and a last, trapped member (two heads omega I, mu): constant logs."""
    gammas = np.asarray(gammas)
    KQ = np.stack(
        [_blocks(omega * g, -omega * g) for g in gammas] + [_blocks(*[omega * np.eye(D)] * 2)]
    )
    OV = np.zeros_like(KQ)
    OV[:-1, 0, -1, -1], OV[:-1, 1, -1, -1], OV[-1, :, -1, -1] = mu, -mu, mu
    model = MultiHeadAttention.from_circuits(torch.as_tensor(KQ), torch.as_tensor(OV), "softmax", L)
    E = KQ.shape[0]
    signs = np.array([[1.0, -1.0]] * (E - 1) + [[1.0, 1.0]])  # (E, 2)
    return TrainedEnsemble(
        d=D, L=L, sigma2=SIGMA2, attention="softmax", heads=np.full(E, 2),
        weights={name: getattr(model, name).detach().numpy() for name in WEIGHT_NAMES},
        steps=np.arange(n_logs), test_loss=np.zeros((n_logs, E)),
        omega=np.broadcast_to(omega * signs, (n_logs, E, 2)).copy(),
        mu=np.broadcast_to(mu * signs, (n_logs, E, 2)).copy(),
        KQ_history=np.broadcast_to(KQ, (n_logs, *KQ.shape)).copy(),
        OV_history=np.broadcast_to(OV, (n_logs, *OV.shape)).copy(), rho=RHO,
    )  # fmt: skip


def test_the_paired_members_are_read_against_the_targets():
    # three pairs at omega = 0.05 with 2 mu omega = 1: Gamma_eff = Gamma_m exactly; the trapped
    # member is left out. Targets: the members' mean (twice) and 2 x it: distances 0, 0 and
    # ||mean||, margin 1 (at targets[1]); the pairs are exactly opposite.
    rng = np.random.default_rng(0)
    gammas = GAMMA + 0.05 * rng.standard_normal((3, D, D))
    ensemble = _paired_ensemble(gammas, 0.05, 10.0)
    mean = gammas.mean(axis=0)
    targets = np.stack([mean, mean, 2 * mean])
    read = read_paired_preconditioners(ensemble, targets, n_prompts=16_384, n_boot=200, seed=1)
    assert read.members.tolist() == [0, 1, 2] and read.shown == 0
    np.testing.assert_allclose(read.learned, gammas, atol=1e-6)  # float32 weights
    np.testing.assert_allclose(read.distances.absolute, [0, 0, np.linalg.norm(mean)], atol=1e-6)
    assert read.margin == pytest.approx(1.0, abs=1e-6)
    assert read.opposition == pytest.approx(0.0, abs=1e-6) and read.opposition_error < 1e-6
    # what the pairs apply is Gamma_eff up to O(omega^2) (see the fitted test above)
    assert np.all(read.first_order_gap < 0.05)
    # the members' risks: their mean, and dGD at their mean Gamma_eff against Lemma E.4's risk
    assert read.risk == pytest.approx(read.member_risks.mean())
    sigma = kms_covariance(D, RHO)
    exact = preconditioned_gd_risk(mean, sigma, Setting(d=D, L=L, sigma2=SIGMA2), debiased=True)
    assert abs(read.dgd_risks[0] - exact) <= 4 * read.dgd_risks_se[0]
    # each pair is dGD at its own Gamma_m to O(omega^2) (1% of the risk here); the excess over
    # dGD at targets[0] is paired on the same prompts
    setting = Setting(d=D, L=L, sigma2=SIGMA2)
    own = [preconditioned_gd_risk(g, sigma, setting, debiased=True) for g in gammas]
    assert np.all(np.abs(read.member_risks - own) < 4 * read.dgd_risks_se[0] + 0.01 * exact)
    np.testing.assert_allclose(read.excess_over_dgd, read.member_risks - read.dgd_risks[1])
    with pytest.raises(ValueError, match="at least two members must be paired, got 1"):
        read_paired_preconditioners(
            _paired_ensemble(gammas[:1], 0.05, 10.0), targets, n_prompts=64, n_boot=10
        )


def test_the_simulated_optimal_preconditioner_is_lemma_e4s_on_isotropic_data():
    """On x ~ N(0, I) the best one-step GD preconditioner is eta* I with eta* = L / (L + 1 +
    d (1 + sigma2)) (Gamma* of Lemma E.4 at Sigma = I, written out here); the fit finds it
    within 5 block standard errors (t with 15 dof, 9 entries: P(any |t| > 5) ~ 0.1%), and its
    off-diagonal entries are 0 to the same accuracy."""
    from icl_verify.numerics import simulated_optimal_preconditioner

    d, L, sigma2 = 3, 20, 0.1
    fit = simulated_optimal_preconditioner(d, L, sigma2, n_prompts=16 * 4096, seed=1)
    eta = L / (L + 1 + d * (1 + sigma2))
    assert fit.blocks == 16 and fit.value.shape == (d, d)
    z = (fit.value - eta * np.eye(d)) / fit.stderr
    assert np.abs(z).max() < 5, z
    assert fit.stderr.max() < 0.02  # resolves a 10% change of eta (0.06)
