"""The bias / variance / cross split of the excess risk of preprocess-then-GD, by iterating GD:
Chen, Zhao, Zou (2024) App. D, eqs. (D.1)-(D.3) (reference chen2024 §4.1, §4.5).

With R_hat held fixed, GD from 0 on the preprocessed covariates ``x_tilde = R_hat x`` is linear
in the labels: run on the noiseless labels ``X w*`` it gives the signal part
``v_s = R_hat w_tilde^t(X w*)``, on the noise ``eps = y - X w*`` alone the noise part
``v_e = R_hat w_tilde^t(eps)``, and ``v = v_s + v_e``. The excess risk of v splits exactly:

    (v - w*)^T Sigma (v - w*) = bias + variance + cross,
    bias = (v_s - w*)^T Sigma (v_s - w*),  variance = v_e^T Sigma v_e,
    cross = 2 (v_s - w*)^T Sigma v_e.

The paper writes excess = bias + variance (D.2)-(D.3); the cross term is linear in eps given
(R_hat, X), so it vanishes in expectation when R_hat does not see the noise, as with sample
splitting, but not for Algorithm 1 as stated (R_hat from the same labels).

- `pre_gd_parts`: the four parts per prompt, R_hat from the prompt's own labels or given;
- `split_pre_gd_parts`: the parts on fresh tasks with sample splitting: R_hat from the first
  half of a sample of size 2n, GD on the second half;
- `sign_prior_parts`: the parts at an absolute step on fresh isotropic prompts (Theorem 5.3's
  setting; Lemma F.1);
- `proof_terms`: what Lemmas D.4-D.7 bound, per prompt, with R_hat from the prompt's labels or
  from `independent_correlations` (an independent sample with the same w*): which step of the
  proof the cross term touches.

Sigma is diagonal here (its (d,) diagonal ``spectrum``), as in the setting of §5. Nothing here
imports `theory`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from icl_verify.numerics._core.data import sample_sparse_regression
from icl_verify.numerics._core.estimators import feature_label_correlations, gd_path
from icl_verify.numerics._core.sparse_regression import excess_risk, largest_gram_eigenvalue

from icl_verify.settings import SparseSetting

__all__ = [
    "PreGdParts",
    "ProofTerms",
    "independent_correlations",
    "pre_gd_parts",
    "proof_terms",
    "sign_prior_parts",
    "split_pre_gd_parts",
]


@dataclass(frozen=True, eq=False)
class PreGdParts:
    """Per prompt (N,): the bias, variance and cross parts of pre-gd's excess risk, the excess
    itself (their sum up to rounding), and the absolute step ``eta / lambda_max`` used."""

    bias: np.ndarray
    variance: np.ndarray
    cross: np.ndarray
    excess: np.ndarray
    step: np.ndarray

    def stacked(self) -> np.ndarray:
        """bias, variance, cross, excess as rows: (4, N)."""
        return np.stack([self.bias, self.variance, self.cross, self.excess])


def pre_gd_parts(
    X: np.ndarray,
    y: np.ndarray,
    w_star: np.ndarray,
    eta: float,
    t: int,
    spectrum,
    r_hat: np.ndarray | None = None,
    absolute: bool = False,
) -> PreGdParts:
    """Bias, variance, cross and excess of t steps of pre-gd (module docstring), from GD
    iterated (`estimators.gd_path`) on ``X w*`` and on ``y - X w*`` with the same preprocessing.

    ``eta`` is relative: the absolute step of each prompt is ``eta / lambda_max`` of its
    preprocessed Gram ``X_tilde^T X_tilde / n``; ``absolute=True``: ``eta`` is the step
    itself. ``r_hat`` None: Algorithm 1's
    ``X^T y / n`` of the same prompts. Shapes: X (N, n, d), y (N, n), w_star (N, d),
    spectrum (d,), r_hat (N, d) -> (N,) each, float64.

    >>> rng = np.random.default_rng(0)
    >>> X, w = rng.standard_normal((3, 40, 4)), np.array([0.5, -0.5, 0.0, 0.0])
    >>> y = X @ w + 0.3 * rng.standard_normal((3, 40))
    >>> parts = pre_gd_parts(X, y, np.tile(w, (3, 1)), 1.0, 8, np.ones(4))
    >>> bool(np.allclose(parts.bias + parts.variance + parts.cross, parts.excess))
    True
    >>> noiseless = pre_gd_parts(X, X @ w, np.tile(w, (3, 1)), 1.0, 8, np.ones(4))
    >>> bool(np.all(noiseless.variance == 0)), bool(np.allclose(noiseless.bias, noiseless.excess))
    (True, True)
    """
    X, y, w_star = (torch.from_numpy(np.asarray(a, dtype=np.float64)) for a in (X, y, w_star))
    diagonal = torch.as_tensor(np.asarray(spectrum), dtype=torch.float64)  # (d,)
    if r_hat is None:
        r_hat = feature_label_correlations(X, y)  # (N, d)
    else:
        r_hat = torch.from_numpy(np.asarray(r_hat, dtype=np.float64))
    X_tilde = X * r_hat[..., None, :]  # (N, n, d)
    if absolute:
        step = torch.full((X.shape[0],), float(eta), dtype=torch.float64)  # (N,)
    else:
        step = eta / largest_gram_eigenvalue(X_tilde)  # (N,) absolute steps
    clean = torch.einsum("rnd,rd->rn", X, w_star)  # (N, n): X w*
    labels = torch.stack([clean, y - clean])  # (2, N, n): X w* and eps
    signal, noise = r_hat * gd_path(X_tilde, labels, step, [t])[..., 0, :]  # (N, d) each
    bias_error = signal - w_star  # (N, d)
    zeros = torch.zeros_like(noise)
    return PreGdParts(
        bias=excess_risk(bias_error, zeros, diagonal).numpy(),
        variance=excess_risk(noise, zeros, diagonal).numpy(),
        cross=(2.0 * torch.sum(bias_error * diagonal * noise, dim=-1)).numpy(),
        excess=excess_risk(signal + noise, w_star, diagonal).numpy(),
        step=step.numpy(),
    )


def split_pre_gd_parts(
    n: int,
    *,
    spectrum,
    s: int,
    sigma: float,
    tasks: int,
    eta: float,
    t: int,
    seed: int,
    chunk: int,
) -> PreGdParts:
    """`pre_gd_parts` with sample splitting on `tasks` fresh tasks: each a sample of size 2n
    (`data.sample_sparse_regression`, ``x ~ N(0, diag(spectrum))``, ``w* = ±1/sqrt(s)`` on a
    random support), R_hat from its first n examples, GD (relative step eta, t steps) on the
    other n, whose noise R_hat does not see: ``E[cross | R_hat, X] = 0``. Drawn in chunks of
    `chunk` tasks (memory) from one CPU generator seeded with ``seed``; (tasks,) each.

    >>> parts = split_pre_gd_parts(32, spectrum=np.ones(6), s=2, sigma=0.5, tasks=5, eta=1.0,
    ...                            t=4, seed=0, chunk=2)
    >>> parts.cross.shape, bool(np.allclose(parts.stacked()[:3].sum(0), parts.excess))
    ((5,), True)
    """
    diagonal = torch.as_tensor(np.asarray(spectrum), dtype=torch.float64)  # (d,): Sigma
    generator = torch.Generator().manual_seed(int(seed))
    setting = SparseSetting(diagonal.numel(), s, sigma)
    parts = []
    for size in np.diff(np.r_[0:tasks:chunk, tasks]):
        sample = sample_sparse_regression(
            int(size),
            setting,
            2 * n,
            generator=generator,
            signal="sign",
            dtype=torch.float64,
            covariance=diagonal,
        )  # X (size, 2n, d)
        X, y = sample.X.numpy(), sample.y.numpy()
        r_hat = feature_label_correlations(sample.X[:, :n], sample.y[:, :n]).numpy()  # (size, d)
        parts.append(
            pre_gd_parts(X[:, n:], y[:, n:], sample.w_star.numpy(), eta, t, spectrum, r_hat)
        )
    fields = ("bias", "variance", "cross", "excess", "step")
    return PreGdParts(**{f: np.concatenate([getattr(p, f) for p in parts]) for f in fields})


def sign_prior_parts(
    n: int,
    *,
    setting: SparseSetting,
    tasks: int,
    step: float,
    t: int,
    seed: int,
    chunk: int,
) -> PreGdParts:
    """`pre_gd_parts` at the absolute step ``step`` on `tasks` fresh prompts of the isotropic
    setting of Chen et al. Theorem 5.3 (Sigma = I, ``w* = ±1/sqrt(s)`` on a random support of
    size s, noise sigma, for ``setting = SparseSetting(d, s, sigma)``, n examples;
    `data.sample_sparse_regression`), R_hat from each prompt's own labels
    (Algorithm 1 as stated). Drawn in chunks of `chunk` prompts (memory) from one CPU
    generator seeded with ``seed``; (tasks,) each.

    >>> from icl_verify.settings import SparseSetting
    >>> parts = sign_prior_parts(64, setting=SparseSetting(d=8, s=2, sigma=0.5), tasks=5, step=1.0,
    ...                          t=6, seed=0, chunk=2)
    >>> parts.bias.shape, bool(np.all(parts.step == 1.0))
    ((5,), True)
    """
    generator = torch.Generator().manual_seed(int(seed))
    parts = []
    for size in np.diff(np.r_[0:tasks:chunk, tasks]):
        sample = sample_sparse_regression(int(size), setting, n, generator=generator,
                                          signal="sign", dtype=torch.float64)  # fmt: skip
        parts.append(pre_gd_parts(sample.X.numpy(), sample.y.numpy(), sample.w_star.numpy(),
                                  step, t, np.ones(setting.d), absolute=True))  # fmt: skip
    fields = ("bias", "variance", "cross", "excess", "step")
    return PreGdParts(**{f: np.concatenate([getattr(p, f) for p in parts]) for f in fields})


@dataclass(frozen=True, eq=False)
class ProofTerms:
    """Per prompt (N,), the quantities Lemmas D.4-D.7 bound (reference chen2024 §4.1):

    Attributes:
        covariance_gap: ``||R_hat Sigma_hat R_hat - R Sigma R||_2`` (D.4), ``Sigma_hat = X^T X / n``
            the prompt's sample covariance, ``R = diag(Sigma w*)``.
        noise_term: ``||(1/n) R_hat X^T eps||^2`` (D.7), ``eps = y - X w*``.
        beta: ``min_{i in S} |r_i|``, S the support of w*.
        parts: `PreGdParts` at (eta, t) with this R_hat: bias (D.5), variance (D.6), cross.
    """

    covariance_gap: np.ndarray
    noise_term: np.ndarray
    beta: np.ndarray
    parts: PreGdParts


def proof_terms(X, y, w_star, eta: float, t: int, spectrum, r_hat=None) -> ProofTerms:
    """`ProofTerms` of the prompts (X (N, n, d), y (N, n), w_star (N, d)) at relative step eta
    and t steps, R_hat from their own labels (None) or given (N, d); float64.

    >>> rng = np.random.default_rng(0)
    >>> X, w = rng.standard_normal((3, 400, 4)), np.array([0.5, -0.5, 0.0, 0.0])
    >>> terms = proof_terms(X, X @ w, np.tile(w, (3, 1)), 1.0, 8, np.ones(4))
    >>> terms.noise_term.tolist(), terms.beta.tolist()  # no noise; r = w*
    ([0.0, 0.0, 0.0], [0.5, 0.5, 0.5])
    >>> bool(np.all(terms.covariance_gap < 0.2))  # R_hat Sigma_hat R_hat near R R at n = 400
    True
    """
    X, y, w = (torch.from_numpy(np.asarray(a, dtype=np.float64)) for a in (X, y, w_star))
    diagonal = torch.as_tensor(np.asarray(spectrum), dtype=torch.float64)  # (d,)
    r_hat = (
        feature_label_correlations(X, y)
        if r_hat is None
        else torch.from_numpy(np.asarray(r_hat, dtype=np.float64))
    )  # (N, d)
    n = X.shape[-2]
    r = diagonal * w  # (N, d): Sigma w*
    sample = X.mT @ X / n  # (N, d, d)
    gap = r_hat[..., :, None] * sample * r_hat[..., None, :] - torch.diag_embed(r * diagonal * r)
    noise = torch.einsum("rnd,rn->rd", X, y - torch.einsum("rnd,rd->rn", X, w)) / n  # (N, d)
    support = w != 0
    beta = torch.where(support, r.abs(), torch.inf).min(dim=-1).values
    return ProofTerms(
        covariance_gap=torch.linalg.matrix_norm(gap, ord=2).numpy(),
        noise_term=((r_hat * noise) ** 2).sum(dim=-1).numpy(),
        beta=beta.numpy(),
        parts=pre_gd_parts(X.numpy(), y.numpy(), w.numpy(), eta, t, spectrum, r_hat.numpy()),
    )


def independent_correlations(w_star, n: int, spectrum, sigma: float, seed: int) -> np.ndarray:
    """Algorithm 1's ``r_hat`` from an independent sample of size n per prompt, with the prompt's
    own w* (N, d): ``x ~ N(0, diag(spectrum))``, ``y = x^T w* + sigma eps``; (N, d) float64.

    >>> r = independent_correlations(np.array([[1.0, 0.0]]), 20000, np.ones(2), 0.5, seed=0)
    >>> bool(np.allclose(r, [[1.0, 0.0]], atol=0.05))
    True
    """
    w = torch.from_numpy(np.asarray(w_star, dtype=np.float64))  # (N, d)
    scale = torch.as_tensor(np.asarray(spectrum), dtype=torch.float64).sqrt()  # (d,)
    generator = torch.Generator().manual_seed(int(seed))
    X = torch.randn((*w.shape[:-1], n, w.shape[-1]), generator=generator, dtype=torch.float64)
    X = X * scale  # (N, n, d)
    noise = torch.randn((*w.shape[:-1], n), generator=generator, dtype=torch.float64)
    y = torch.einsum("rnd,rd->rn", X, w) + sigma * noise
    return feature_label_correlations(X, y).numpy()

