"""numerics._core.data samplers: distributions (Monte Carlo within 4 SE), shapes, seeding,
checks."""

import math

import pytest
import torch
from icl_verify.numerics import (
    MultiTaskPrompts,
    embed,
    kms_covariance,
    sample_linear_regression,
    sample_multitask_regression,
    sample_sparse_regression,
)

from icl_verify.settings import Setting, SparseSetting

SETTING, SPARSE = Setting(d=3, L=5, sigma2=0.1), SparseSetting(d=3, s=2, sigma=0.1)


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _within_4se(samples: torch.Tensor, expected: float) -> None:
    """Mean of i.i.d. samples equals `expected` within 4 standard errors."""
    samples = samples.double().flatten()
    se = samples.std() / math.sqrt(samples.numel())
    assert abs(samples.mean().item() - expected) < 4 * se.item(), (samples.mean().item(), expected)


def test_linear_regression_moments():
    # y = x^T beta + eps: Var y = E||beta||^2 + sigma2 = 1 + sigma2 (beta ~ N(0, I/d));
    # the query label carries the same noise: y_q - x_q^T beta ~ N(0, sigma2).
    d, L, sigma2 = 5, 8, 0.3
    setting = Setting(d, L, sigma2)
    p = sample_linear_regression(20000, setting, generator=_gen(), dtype=torch.float64)
    _within_4se(p.y**2, 1 + sigma2)
    _within_4se(p.y_query**2, 1 + sigma2)
    _within_4se((p.y_query - (p.x_query * p.beta).sum(-1)) ** 2, sigma2)
    _within_4se((p.y - torch.einsum("bld,bd->bl", p.X, p.beta)) ** 2, sigma2)
    _within_4se(p.beta[:, 0] * p.beta[:, 1], 0.0)
    _within_4se(d * p.beta**2, 1.0)


def test_noiseless_labels_are_exactly_linear():
    p = sample_linear_regression(7, Setting(4, 6, 0.0), generator=_gen(), dtype=torch.float64)
    torch.testing.assert_close(p.y, torch.einsum("bld,bd->bl", p.X, p.beta), rtol=0, atol=1e-14)


def test_covariance_is_respected():
    # Empirical E[x_i x_j] vs Sigma_ij; SE of the product of a Gaussian pair is
    # sqrt((Sigma_ii Sigma_jj + Sigma_ij^2) / n).
    d, rho = 4, 0.6
    sigma = kms_covariance(d, rho)
    p = sample_linear_regression(
        5000, Setting(d, 10, 0.1), generator=_gen(1), dtype=torch.float64, covariance=sigma
    )
    rows = p.X.reshape(-1, d)
    n = rows.shape[0]
    empirical = rows.T @ rows / n
    se = torch.sqrt((torch.diag(sigma)[:, None] * torch.diag(sigma)[None, :] + sigma**2) / n)
    assert ((empirical - sigma).abs() < 4 * se).all()


def test_kms_inverse_is_the_tridiagonal_of_the_reference():
    # reference §HE-5.3: Sigma^{-1} = tridiag(-rho; 1, 1+rho^2, ..., 1+rho^2, 1; -rho) / (1-rho^2)
    d, rho = 6, -0.4
    diagonal = torch.full((d,), 1 + rho**2, dtype=torch.float64)
    diagonal[0] = diagonal[-1] = 1.0
    inverse = (
        torch.diag(diagonal)
        - rho * (torch.diag(torch.ones(d - 1), 1) + torch.diag(torch.ones(d - 1), -1)).double()
    ) / (1 - rho**2)
    torch.testing.assert_close(kms_covariance(d, rho) @ inverse, torch.eye(d, dtype=torch.float64))


def test_same_seed_same_numbers_and_new_seed_new_numbers():
    a = sample_linear_regression((3, 2), Setting(5, 7, 0.1), generator=_gen(5))
    b = sample_linear_regression((3, 2), Setting(5, 7, 0.1), generator=_gen(5))
    c = sample_linear_regression((3, 2), Setting(5, 7, 0.1), generator=_gen(6))
    for name in ("X", "y", "x_query", "y_query", "beta"):
        assert torch.equal(getattr(a, name), getattr(b, name))
        assert not torch.equal(getattr(a, name), getattr(c, name))


@pytest.mark.cuda
def test_generates_on_the_generator_device():
    g = torch.Generator(device="cuda").manual_seed(0)
    p = sample_linear_regression(4, Setting(5, 7, 0.1), generator=g)
    assert p.X.device.type == "cuda"
    q = sample_linear_regression(
        4, Setting(5, 7, 0.1), generator=torch.Generator("cuda").manual_seed(0)
    )
    assert torch.equal(p.X, q.X)


def test_multitask_structure_and_noise():
    supports = ((0, 1, 2, 3), (2, 3, 4, 5))
    p = sample_multitask_regression(
        20000, Setting(6, 5, 0.1), supports, generator=_gen(2), dtype=torch.float64
    )
    assert isinstance(p, MultiTaskPrompts) and p.supports == supports
    assert p.y.shape == (20000, 5, 2) and p.beta.shape == (20000, 2, 6)
    assert (p.beta[:, 0, 4:] == 0).all() and (p.beta[:, 1, :2] == 0).all()
    _within_4se(p.beta[:, 0, :4] ** 2, 1.0)  # beta^(k) ~ N(0, I_{|S_k|})
    residual = p.y - torch.einsum("bld,bkd->blk", p.X, p.beta)
    for k, support in enumerate(supports):
        _within_4se(residual[..., k] ** 2, 0.1 * len(support))  # context noise 0.1 |S_k|
    torch.testing.assert_close(p.y_query, torch.einsum("bd,bkd->bk", p.x_query, p.beta))
    Z = embed(p)
    assert Z.shape == (20000, 8, 6)
    assert (Z[:, 6:, -1] == 0).all() and torch.equal(Z[:, 6:, :5], p.y.transpose(-1, -2))


def test_sparse_support_is_uniform_and_signals_match_the_prior():
    d, s, n = 8, 3, 20000
    p = sample_sparse_regression(
        n, SparseSetting(d, s, 0.2), 6, q=2, generator=_gen(3), dtype=torch.float64
    )
    on = (p.w_star != 0).double()
    assert (on.sum(-1) == s).all()
    for j in range(d):  # each coordinate is on the support with probability s/d
        _within_4se(on[:, j], s / d)
    _within_4se(p.w_star[on.bool()] ** 2, 1.0)  # N(0, 1) on the support
    residual = p.y_query - torch.einsum("bqd,bd->bq", p.X_query, p.w_star)
    _within_4se(residual[:, 0] ** 2, 0.2**2)  # sigma is the noise standard deviation
    _within_4se(residual[:, 1] ** 2, 0.2**2)
    _within_4se((p.y - torch.einsum("bnd,bd->bn", p.X, p.w_star))[:, 0] ** 2, 0.2**2)
    q = sample_sparse_regression(100, SparseSetting(d, s, 0.0), 6, generator=_gen(4), signal="sign")
    torch.testing.assert_close(q.w_star.norm(dim=-1), torch.ones(100))  # ||w*|| = 1


def test_sparse_prompt_matrix_is_chen_2_3():
    # E = [[x_1 .. x_n x_{n+1} .. x_{n+q}], [y_1 .. y_n 0 .. 0]], (d+1, n+q)
    p = sample_sparse_regression(3, SparseSetting(5, 2, 0.1), 7, q=4, generator=_gen(5))
    E = embed(p)
    assert E.shape == (3, 6, 11)
    assert torch.equal(E[:, :5, :7], p.X.transpose(-1, -2))
    assert torch.equal(E[:, :5, 7:], p.X_query.transpose(-1, -2))
    assert torch.equal(E[:, 5, :7], p.y) and (E[:, 5, 7:] == 0).all()


def test_embed_layout():
    p = sample_linear_regression((2, 3), Setting(4, 6, 0.1), generator=_gen())
    Z = embed(p)
    assert Z.shape == (2, 3, 5, 7)
    assert torch.equal(Z[..., :4, :6], p.X.transpose(-1, -2))
    assert torch.equal(Z[..., 4, :6], p.y)
    assert torch.equal(Z[..., :4, 6], p.x_query)
    assert (Z[..., 4, 6] == 0).all()


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda g: sample_linear_regression((4, 0), SETTING, generator=g), "batch_shape"),
        (lambda g: sample_linear_regression(4, SETTING, generator=None), "generator"),
        (lambda g: sample_linear_regression(4, SETTING, generator=g, dtype=torch.int64), "dtype"),
        (
            lambda g: sample_linear_regression(4, SETTING, generator=g, covariance=torch.eye(2)),
            "covariance",
        ),
        (
            lambda g: sample_linear_regression(4, SETTING, generator=g, covariance=-torch.eye(3)),
            "covariance",
        ),
        (lambda g: kms_covariance(3, 1.0), "rho"),
        (lambda g: sample_multitask_regression(4, SETTING, ((0, 3),), generator=g), "supports"),
        (lambda g: sample_multitask_regression(4, SETTING, (), generator=g), "supports"),
        (lambda g: sample_sparse_regression(4, SPARSE, 5, generator=g, signal="x"), "signal"),
        (lambda g: sample_sparse_regression(4, SPARSE, 0, generator=g), "n"),
        (lambda g: sample_sparse_regression(4, SPARSE, 5, q=0, generator=g), "q"),
    ],
)
def test_bad_arguments_raise_one_line_naming_the_parameter(call, name):
    # what only the samplers see; the data model's d, L, sigma2, s, sigma are checked when its
    # setting is made (tests/test_settings.py, tests/theory/test_setting.py)
    with pytest.raises(ValueError, match=f"^{name} ") as info:
        call(_gen())
    assert "\n" not in str(info.value)


def test_a_diagonal_covariance_may_be_given_as_its_diagonal():
    # (d,) diag and the (d, d) matrix diag(diag) draw the same prompts from the same seed.
    diagonal = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64)
    setting = SparseSetting(d=3, s=2, sigma=0.1)
    a = sample_sparse_regression(4, setting, 6, generator=_gen(7), dtype=torch.float64,
                                 covariance=diagonal)  # fmt: skip
    b = sample_sparse_regression(4, setting, 6, generator=_gen(7), dtype=torch.float64,
                                 covariance=torch.diag(diagonal))  # fmt: skip
    torch.testing.assert_close(a.X, b.X, rtol=1e-15, atol=0.0)
    torch.testing.assert_close(a.y, b.y, rtol=1e-14, atol=1e-15)
    with pytest.raises(ValueError, match="^covariance must be a diagonal of finite numbers > 0"):
        sample_sparse_regression(4, setting, 6, generator=_gen(), covariance=-diagonal)
