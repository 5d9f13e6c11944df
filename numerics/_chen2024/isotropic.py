"""Oracle-tuned excess risks of pre-gd, GD, ridge, OLS and Lasso on one isotropic sparse setting,
Chen, Zhao, Zou (2024) Theorem 5.3 (reference chen2024 §4.4-4.5).

`isotropic_risks` draws two independent sets of prompts from `data.sample_sparse_regression`
(Sigma = I, w* uniform on ``±1/sqrt(s)`` over a random support): each estimator's grid (step size
relative to ``1/lambda_max`` and step count for GD and pre-gd, lambda for ridge, alpha for Lasso)
is tuned on the first set and its risks read on the second (`sparse_regression.oracle_tuned`), so
the reported means carry no selection bias. OLS needs no tuning and is read on both sets. The
curvature ``lambda_max`` of each evaluation prompt's preprocessed Gram is returned too: it turns
pre-gd's tuned relative step into the absolute one (reference §7 item 11).
`isotropic_setting` is the same as plain numpy arrays, drawn from a seed: what the claim
CZZ-T5.3 caches per setting (`validation.cache` producer "isotropic-setting").
Nothing here imports `theory`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from icl_verify.numerics._core.data import sample_sparse_regression
from icl_verify.numerics._core.estimators import feature_label_correlations
from icl_verify.numerics._core.sparse_regression import (
    TunedRisks,
    gd_excess_risks,
    largest_gram_eigenvalue,
    lasso_excess_risks,
    least_squares_excess_risks,
    oracle_tuned,
)

from icl_verify.settings import SparseSetting

__all__ = ["IsotropicRisks", "isotropic_risks", "isotropic_setting"]


@dataclass(frozen=True, eq=False)
class IsotropicRisks:
    """Per-prompt excess risks of each estimator on the evaluation prompts of one (d, n, s, sigma).

    Attributes:
        ols: (2N,) OLS (minimum norm when d > n) on the tuning and the evaluation prompts.
        ridge, gd, pregd: tuned on the tuning prompts, read on the N evaluation prompts
            (`TunedRisks`; for GD and pre-gd the grid axes are (eta, step count)).
        lasso: as ridge, or None when no alpha grid was given.
        pregd_curvature: (N,) ``lambda_max(R_hat Sigma_hat R_hat)`` of each evaluation prompt,
            the unit of pre-gd's relative step: its absolute step is ``eta / pregd_curvature``.
    """

    ols: torch.Tensor
    ridge: TunedRisks
    gd: TunedRisks
    pregd: TunedRisks
    lasso: TunedRisks | None
    pregd_curvature: torch.Tensor


def isotropic_risks(
    d: int,
    n: int,
    s: int,
    sigma: float,
    *,
    prompts: int,
    generator: torch.Generator,
    etas,
    steps,
    lambdas,
    alphas=None,
    device=None,
) -> IsotropicRisks:
    """Exact excess risks ``||v - w*||^2`` (Sigma = I) of every estimator of Theorem 5.3 at one n.

    Two independent sets of `prompts` prompts each (float64): tuning and evaluation. GD and
    pre-gd (Algorithm 1) run with ``eta`` in units of ``1/lambda_max`` of each prompt's (raw or
    preprocessed) Gram matrix, recorded at every entry of `steps`; ridge over `lambdas` in the
    paper's normalisation; Lasso over `alphas` (scikit-learn's normalisation).

    >>> g = torch.Generator().manual_seed(0)
    >>> r = isotropic_risks(16, 64, 2, 0.5, prompts=4, generator=g, etas=[1.0], steps=[4, 16],
    ...                     lambdas=[0.0, 0.1], alphas=[0.05])
    >>> tuple(r.ols.shape), tuple(r.pregd.risks.shape), r.lasso.mean < float(r.ols.mean())
    ((8,), (4,), True)
    >>> c = r.pregd_curvature  # ~ beta^2 = 1/s = 0.5, inflated by R_hat's and Sigma_hat's noise
    >>> tuple(c.shape), bool(((c > 0.25) & (c < 1.0)).all())
    ((4,), True)
    """
    setting = SparseSetting(d, s, sigma)
    sets = [
        sample_sparse_regression(
            prompts,
            setting,
            n,
            generator=generator,
            signal="sign",
            device=device,
            dtype=torch.float64,
        )
        for _ in range(2)
    ]  # tuning, evaluation: X (N, n, d), y (N, n), w_star (N, d)
    eta = torch.as_tensor(etas, dtype=torch.float64, device=sets[0].X.device)[:, None]  # (E, 1)

    def grids(p):
        ridge = least_squares_excess_risks(p.X, p.y, p.w_star, lambdas)  # (K, N)
        gd, pregd = (
            gd_excess_risks(
                p.X[None], p.y[None], p.w_star[None], eta, steps, preprocessed=pre, relative=True
            ).movedim(-1, 1)  # (E, T, N)
            for pre in (False, True)
        )
        lasso = None if alphas is None else lasso_excess_risks(p.X, p.y, p.w_star, alphas)
        return ridge, gd, pregd, lasso

    tuning, evaluation = grids(sets[0]), grids(sets[1])
    ols = torch.cat([least_squares_excess_risks(p.X, p.y, p.w_star)[0] for p in sets])  # (2N,)
    ridge, gd, pregd, lasso = (
        None if tune is None else oracle_tuned(tune, held_out=held)
        for tune, held in zip(tuning, evaluation, strict=True)
    )
    held = sets[1]
    preprocessed = held.X * feature_label_correlations(held.X, held.y)[..., None, :]  # (N, n, d)
    return IsotropicRisks(
        ols=ols,
        ridge=ridge,
        gd=gd,
        pregd=pregd,
        lasso=lasso,
        pregd_curvature=largest_gram_eigenvalue(preprocessed),  # (N,)
    )


#: The cache name of `isotropic_setting`'s arrays and the version of the code making them (bump
#: it when a change can alter them; `validation.cache.producers`).
ARTEFACT, ARTEFACT_VERSION = "isotropic-setting", 4


def isotropic_setting(
    d: int,
    n: int,
    s: int,
    sigma: float,
    *,
    prompts: int,
    seed: int,
    etas,
    steps,
    lambdas,
    alphas=None,
    device="cpu",
) -> dict[str, np.ndarray]:
    """`isotropic_risks` on prompts drawn from ``seed`` (a generator on ``device``), as numpy:
    per estimator e ("ols", "ridge", "gd", "pregd", "lasso") its per-prompt excess risks
    (OLS: (2N,), the others (N,) on the evaluation prompts; "lasso" only with ``alphas``) and,
    for the tuned ones, ``"<e>_index"``, the chosen grid point ((eta, t) indices for GD and
    pre-gd); and per evaluation prompt pre-gd's absolute ``eta t`` (``"pregd_eta_t"``: its
    tuned relative step over ``lambda_max`` of the preprocessed Gram, times t) and
    ``s lambda_max`` (``"pregd_s_curvature"``, 1 where ``R_hat Sigma_hat R_hat ~ I/s`` on S).

    >>> row = isotropic_setting(16, 64, 2, 0.5, prompts=4, seed=0, etas=[1.0], steps=[4, 16],
    ...                         lambdas=[0.0, 0.1])
    >>> sorted(row)[:4], row["ols"].shape, row["pregd_index"].tolist()[0]
    (['gd', 'gd_index', 'ols', 'pregd'], (8,), 0.0)
    >>> t = [4, 16][int(row["pregd_index"][1])]  # eta t = 1 x t / lambda_max
    >>> bool(np.allclose(row["pregd_eta_t"] * row["pregd_s_curvature"], 2 * t))
    True
    """
    generator = torch.Generator(device=device).manual_seed(int(seed))
    risks = isotropic_risks(
        d,
        n,
        s,
        sigma,
        prompts=prompts,
        generator=generator,
        etas=etas,
        steps=steps,
        lambdas=lambdas,
        alphas=alphas,
        device=device,
    )
    row = {"ols": risks.ols.cpu().numpy()}
    for name in ("ridge", "gd", "pregd", "lasso"):
        tuned = getattr(risks, name)
        if tuned is not None:
            row[name] = tuned.risks.cpu().numpy()
            row[f"{name}_index"] = np.array(tuned.index, dtype=float)
    eta, t = (etas[risks.pregd.index[0]], steps[risks.pregd.index[1]])
    curvature = risks.pregd_curvature.cpu().numpy()  # (N,) lambda_max, preprocessed Gram
    row["pregd_eta_t"] = eta * t / curvature  # absolute step times steps, per prompt
    row["pregd_s_curvature"] = s * curvature  # 1 where R_hat Sigma_hat R_hat ~ I/s on S
    return row
