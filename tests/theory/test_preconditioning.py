"""theory._preconditioning (He et al. 2025 §5.3, Lemma E.4) against independent sources.

- the isotropic case already in theory (optimal_gd, gd_risk, debiased_gd_risk), to roundoff;
- the KMS inverse against numpy.linalg.inv (roundoff u cond(Sigma));
- the optimal preconditioners against a numerical minimisation of the risk over the d(d+1)/2
  entries of a symmetric Gamma (scipy), to the accuracy of the optimiser's stopping point;
- the risk against a numpy Monte Carlo of the predictors on KMS prompts (4 SE), at Gamma* and
  at another Gamma, vanilla and debiased;
- the sympy derivation (theory.symbolic.preconditioning) against the numpy optimum.
"""

import numpy as np
import pytest
from icl_verify.theory import (
    Setting,
    debiased_gd_risk,
    gd_risk,
    kms_inverse,
    optimal_gd,
    optimal_preconditioner,
    preconditioned_gd_risk,
)
from icl_verify.theory.symbolic.preconditioning import derive_preconditioned_gd, trace_sigma
from icl_verify.theory.symbolic.symbols import L as sym_L
from icl_verify.theory.symbolic.symbols import d as sym_d
from icl_verify.theory.symbolic.symbols import sigma2 as sym_sigma2
from scipy.optimize import minimize

from icl_verify.covariance import check_covariance, kms_covariance

U = np.finfo(float).eps
SETTING = Setting(d=4, L=20, sigma2=0.1)
SIGMA = kms_covariance(4, 0.5)


@pytest.mark.parametrize("debiased", [False, True])
def test_isotropic_case_is_the_scalar_step_of_theory(debiased):
    setting = Setting(d=5, L=40, sigma2=0.1)
    identity = np.eye(5)
    tuned = optimal_gd(setting, debiased=debiased)
    gamma = optimal_preconditioner(identity, setting, debiased=debiased)
    np.testing.assert_allclose(gamma, tuned.eta * identity, rtol=0, atol=4 * U)
    scalar = debiased_gd_risk if debiased else gd_risk
    for eta in (0.3, tuned.eta, 1.2):
        risk = preconditioned_gd_risk(eta * identity, identity, setting, debiased=debiased)
        assert risk == pytest.approx(float(scalar(eta, setting)), rel=0, abs=16 * U)
    assert preconditioned_gd_risk(gamma, identity, setting, debiased) == pytest.approx(
        tuned.risk, rel=0, abs=16 * U
    )


@pytest.mark.parametrize("d, rho", [(1, 0.3), (2, -0.7), (5, 0.5), (12, 0.95)])
def test_kms_inverse_is_the_inverse(d, rho):
    sigma = kms_covariance(d, rho)
    numeric = np.linalg.inv(sigma)
    bound = 10 * U * np.linalg.cond(sigma) * np.abs(numeric).max()
    assert np.abs(kms_inverse(d, rho) - numeric).max() <= bound


def _symmetric(entries: np.ndarray, d: int) -> np.ndarray:
    gamma = np.zeros((d, d))
    gamma[np.triu_indices(d)] = entries
    return gamma + np.triu(gamma, 1).T


@pytest.mark.parametrize("debiased", [False, True])
def test_optimal_preconditioner_minimises_the_risk_numerically(debiased):
    d = SETTING.d
    upper = np.triu_indices(d)

    def risk(entries):
        return preconditioned_gd_risk(_symmetric(entries, d), SIGMA, SETTING, debiased)

    start = np.eye(d)[upper]
    result = minimize(risk, start, method="BFGS", options={"gtol": 1e-10})
    # the risk is quadratic in the entries: central differences are exact up to roundoff, so
    # its gradient at the stopping point and its Hessian bound the distance to the minimiser
    n, h = start.size, 1e-3
    basis = np.eye(n) * h
    gradient = np.array([(risk(result.x + e) - risk(result.x - e)) / (2 * h) for e in basis])
    hessian = np.array(
        [[(risk(result.x + a + b) - risk(result.x + a - b) - risk(result.x - a + b)
           + risk(result.x - a - b)) / (4 * h * h) for b in basis] for a in basis]
    )  # fmt: skip
    lowest = np.linalg.eigvalsh(hessian).min()
    bound = np.linalg.norm(gradient) / lowest + 1e-8  # + the differences' roundoff / h^2 * u
    found = _symmetric(result.x, d)
    exact = optimal_preconditioner(SIGMA, SETTING, debiased=debiased)
    assert np.abs(found - exact).max() <= bound
    assert risk(exact[upper]) <= result.fun + 1e-14


def _monte_carlo_risk(gamma, debiased: bool, n: int = 200_000, seed: int = 0):
    """Risk of y_hat = (1/L) sum_i y_i (x_i [- xbar])^T Gamma x_q on N(0, Sigma) covariates.

    Linear in the labels with weights w_i = (1/L) (x_i [- xbar])^T Gamma x_q, so the risk given
    (X, x_q) is ||X^T w - x_q||^2 / d + sigma2 ||w||^2 + sigma2 exactly (beta ~ N(0, I/d));
    averaging it over sampled (X, x_q) is unbiased (see tests/theory/montecarlo_numpy.py).
    """
    rng = np.random.default_rng(seed)
    d, L, sigma2 = SETTING.d, SETTING.L, SETTING.sigma2
    factor = np.linalg.cholesky(SIGMA)
    values = []
    for _ in range(n // 20_000):
        X = rng.standard_normal((20_000, L, d)) @ factor.T  # (m, L, d)
        x_q = rng.standard_normal((20_000, d)) @ factor.T  # (m, d)
        features = X - X.mean(axis=1, keepdims=True) if debiased else X
        w = features @ (gamma @ x_q[..., None])[..., 0][:, :, None] / L  # (m, L, 1)
        w = w[..., 0]
        bias = np.einsum("mld,ml->md", X, w) - x_q  # (m, d)
        values.append((bias**2).sum(axis=1) / d + sigma2 * (w**2).sum(axis=1) + sigma2)
    values = np.concatenate(values)
    return values.mean(), values.std(ddof=1) / np.sqrt(values.size)


@pytest.mark.parametrize("debiased", [False, True])
@pytest.mark.parametrize("which", ["optimal", "other"])
def test_risk_matches_monte_carlo(debiased, which):
    if which == "optimal":
        gamma = optimal_preconditioner(SIGMA, SETTING, debiased=debiased)
    else:  # not symmetric, not a function of Sigma
        gamma = np.linalg.inv(SIGMA) * 0.7 + 0.1 * np.triu(np.ones((4, 4)), 1)
    mean, se = _monte_carlo_risk(gamma, debiased)
    exact = preconditioned_gd_risk(gamma, SIGMA, SETTING, debiased=debiased)
    assert abs(mean - exact) <= 4 * se, (mean, se, exact)


def test_debiased_optimum_differs_from_the_vanilla_one_by_order_one_over_L():
    vanilla = optimal_preconditioner(SIGMA, SETTING)
    debiased = optimal_preconditioner(SIGMA, SETTING, debiased=True)
    gap = np.linalg.norm(vanilla - debiased) / np.linalg.norm(debiased)
    assert 0.1 / SETTING.L < gap < 2 / SETTING.L


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: kms_covariance(3, 1.0), "rho must be a real number in (-1, 1), got 1.0"),
        (lambda: kms_inverse(3, -1.5), "rho must be a real number in (-1, 1), got -1.5"),
        (lambda: check_covariance([[1.0, 0.2], [0.3, 1.0]]), "covariance must be symmetric"),
        (lambda: check_covariance(np.diag([1.0, 0.0])), "covariance must be a symmetric positive"),
        (lambda: check_covariance([[1.0, np.nan], [np.nan, 1.0]]), "covariance must be finite"),
        (lambda: optimal_preconditioner(np.eye(3), SETTING), "covariance must be (4, 4)"),
        (lambda: preconditioned_gd_risk(np.eye(3), SIGMA, SETTING), "gamma must be a finite"),
    ],
)
def test_bad_input_raises_one_line(call, message):
    with pytest.raises(ValueError) as error:
        call()
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


@pytest.mark.parametrize("debiased", [False, True])
def test_symbolic_derivation_gives_the_evaluated_optimum(debiased):
    """theory.symbolic.preconditioning's (a, b, c) and ridge, lambdified, against the numpy form."""
    result = derive_preconditioned_gd().results
    label = "debiased" if debiased else "vanilla"
    values = {sym_L: SETTING.L, sym_d: SETTING.d, sym_sigma2: SETTING.sigma2,
              trace_sigma: float(np.trace(SIGMA))}  # fmt: skip
    a, b, c, ridge = (float(result[k].subs(values)) for k in
                      (f"{label}_a", f"{label}_b", f"{label}_c", "ridge"))  # fmt: skip
    derived = a * np.linalg.inv(b * SIGMA + c * ridge * np.eye(SETTING.d))
    exact = optimal_preconditioner(SIGMA, SETTING, debiased=debiased)
    np.testing.assert_allclose(derived, exact, rtol=0, atol=64 * U)
