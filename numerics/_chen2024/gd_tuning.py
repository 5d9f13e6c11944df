"""Oracle-tuned GD and preprocess-then-GD on sparse regression with a diagonal covariance,
Chen, Zhao, Zou (2024) Theorems 5.1 and 5.2 and their comparison in §4.3 (reference chen2024
§4.1-4.3, §4.5).

`tuned_gd` draws, from one seed, two independent sets of N prompts with n examples each
(`data.sample_sparse_regression`: ``x ~ N(0, diag(spectrum))``, ``w* = ±1/sqrt(s)`` on a
uniform random support of size s, the prior of §4.3, label noise ``N(0, sigma^2)``): a tuning
set and an evaluation set. GD from 0 on ``(1/2n) ||X w - y||^2`` (``gd``, raw covariates,
Thm 5.2) and on Algorithm 1's ``x_tilde = R_hat x`` (``pre_gd``, Thm 5.1, risk of
``v = R_hat w_tilde^t``) run over a grid of relative step sizes (eta in units of
``1/lambda_max`` of each prompt's own Gram matrix) and step counts t; the grid point of lowest
mean excess risk ``(v - w*)^T Sigma (v - w*)`` on the tuning set is the "tuned" one
(`sparse_regression.oracle_tuned`) and its risks are read on the evaluation set, so their mean
carries no selection bias. Both methods tuned on one draw see the same prompts (paired).

Nothing here imports `theory`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from icl_verify.numerics._core.data import sample_sparse_regression
from icl_verify.numerics._core.sparse_regression import gd_excess_risks, oracle_tuned

from icl_verify.settings import SparseSetting

__all__ = ["PromptArrays", "TunedGD", "TunedGDDraw", "tuned_gd"]

METHODS = ("gd", "pre_gd")


@dataclass(frozen=True, eq=False)
class PromptArrays:
    """Sparse-regression prompts as float64 numpy arrays: X (N, n, d), y (N, n), w_star (N, d)."""

    X: np.ndarray
    y: np.ndarray
    w_star: np.ndarray


@dataclass(frozen=True, eq=False)
class TunedGD:
    """One method's oracle-tuned grid point and its excess risks on the evaluation prompts.

    Attributes:
        risks: (N,) per-prompt excess risks at the tuned point, on the evaluation prompts.
        eta: the tuned relative step size (units of 1/lambda_max of each prompt's Gram).
        t: the tuned step count.
        at_edge: whether t is the grid's largest step count (the optimum may lie beyond it).
    """

    risks: np.ndarray
    eta: float
    t: int
    at_edge: bool


@dataclass(frozen=True, eq=False)
class TunedGDDraw:
    """GD and/or pre-gd tuned on one draw of prompts at one n, and the draw.

    Attributes:
        gd, pre_gd: the `TunedGD` of each method asked for, None for the other.
        tuning, evaluation: the two sets of prompts (`PromptArrays`).
    """

    gd: TunedGD | None
    pre_gd: TunedGD | None
    tuning: PromptArrays
    evaluation: PromptArrays


def tuned_gd(
    n: int,
    *,
    spectrum,
    s: int,
    sigma: float,
    reps: int,
    etas,
    steps,
    seed: int,
    methods=METHODS,
) -> TunedGDDraw:
    """GD (``"gd"``) and/or pre-gd (``"pre_gd"``) oracle-tuned over ``etas`` x ``steps`` on
    `reps` tuning prompts and read on `reps` independent evaluation prompts (module docstring),
    both sets drawn in that order from one CPU generator seeded with ``seed``.

    Args:
        n: examples per prompt.
        spectrum: (d,) the diagonal of Sigma.
        s, sigma: the support size of w* and the noise standard deviation.
        reps: prompts per set, N.
        etas: (E,) relative step sizes, in (0, 2) for convergence.
        steps: increasing step counts (T,); ``at_edge`` refers to the last.
        seed: the draw's seed.
        methods: which of "gd", "pre_gd" to tune.

    >>> draw = tuned_gd(64, spectrum=np.linspace(0.5, 1.0, 8), s=2, sigma=0.5, reps=6,
    ...                 etas=(0.5, 1.0), steps=(1, 4, 16), seed=0, methods=("pre_gd",))
    >>> draw.gd is None, draw.pre_gd.risks.shape, draw.pre_gd.t in (1, 4, 16)
    (True, (6,), True)
    >>> draw.evaluation.X.shape, bool(np.all(np.abs(draw.tuning.w_star) ** 2 * 2 <= 1 + 1e-12))
    ((6, 64, 8), True)
    """
    unknown = set(methods) - set(METHODS)
    if unknown:
        raise ValueError(f"methods must be among {METHODS}, got {sorted(unknown)}")
    diagonal = torch.as_tensor(np.asarray(spectrum), dtype=torch.float64)  # (d,): Sigma
    generator = torch.Generator().manual_seed(int(seed))
    setting = SparseSetting(diagonal.numel(), s, sigma)
    sets = [
        sample_sparse_regression(
            reps,
            setting,
            n,
            generator=generator,
            signal="sign",
            dtype=torch.float64,
            covariance=diagonal,
        )
        for _ in ("tune", "evaluate")
    ]  # X (N, n, d), y (N, n), w_star (N, d) each
    eta = torch.tensor(etas, dtype=torch.float64)[:, None]  # (E, 1)
    steps = [int(t) for t in steps]
    tuned = {}
    for method in methods:
        grids = [
            gd_excess_risks(
                p.X[None],
                p.y[None],
                p.w_star[None],
                eta,
                steps,
                preprocessed=method == "pre_gd",
                relative=True,
                covariance=diagonal,
            ).permute(0, 2, 1)  # (E, T, N)
            for p in sets
        ]
        point = oracle_tuned(grids[0], held_out=grids[1])
        e, t = point.index
        tuned[method] = TunedGD(
            risks=point.risks.numpy(),
            eta=float(etas[e]),
            t=steps[t],
            at_edge=t == len(steps) - 1,
        )
    tuning, evaluation = (PromptArrays(p.X.numpy(), p.y.numpy(), p.w_star.numpy()) for p in sets)
    return TunedGDDraw(tuned.get("gd"), tuned.get("pre_gd"), tuning, evaluation)
