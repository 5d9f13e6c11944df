"""Trained encoders read on fresh prompts, Chen, Zhao, Zou (2024) §3, §6 and App. B: what
CZZ-HEADS, -IMPORTANCE, -PRUNE and -PPROBE measure, each from a trained ensemble
(`numerics.TrainedEncoders`, one member per noise level and replicate) and
an integer seed.

Every function draws its prompts with `evaluation_prompts`: ``count`` prompts per member,
member e's labels with its own noise level, from a ``torch.Generator`` seeded with ``seed``,
so that the ensembles of every h read with the same seed see the same prompts (member e of
each h paired). Errors are taken against the noiseless query label ``x_q^T w*``: the label
noise is independent of the prediction, so ``E (y_hat - y)^2 - sigma^2 = E (y_hat - x_q^T
w*)^2`` and the noise term drops out exactly (the ICL excess risk, reference §2.2).

- `compare_with_baselines` (Figures 1b, 3): per prompt, each encoder's squared error of its
  first query beside the exact excess risks ``||w_hat - w*||^2`` of OLS (minimum norm), ridge
  and Lasso, ridge and Lasso oracle-tuned per member over a grid (`oracle_tuned`) on separate
  tuning prompts of the same draw and read on the rest (no selection bias); `compare_over_n`
  at every n of a curve;
- `ridge_gap`: one ensemble's excess risk against tuned ridge's on the same prompts, their
  paired gap and its SE (the claims' gate "beats tuned ridge at n = 10");
- `masked_importance`: the head importance W (3.1) by masking (`head_importance`);
  `importance_summary` adds the effective heads per layer and their bootstrap mean;
- `layer_probe_errors` (Figures 1d, 5-8): per member, ridge probes from the query token's
  state after the embedding and after each layer to its label (`fit_probe`), fitted on one
  draw (noisy labels) and read on another (noiseless labels);
- `encoder_p_probe` (§6, Figure 2b): P-probing (`p_probe`) of the query states after a layer;
- `noise_level_mean`, `noise_level_mean_se`, `noise_level_gap`: member values grouped by
  noise level (member ``r * S + k`` has ``sigmas[k]``, S noise levels) and averaged over the
  replicates, with the SEs of independent estimates combined (`statistics.mean_of_estimates`);
  the last for two predictors' paired risks; `head_gain`, what more heads gain in units of
  the null risk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from icl_verify.numerics._chen2024.encoder_analysis import (
    HeadImportance,
    PProbe,
    effective_heads,
    fit_probe,
    head_importance,
    member_prompts,
    p_probe,
    sorted_average,
)
from icl_verify.numerics._chen2024.encoder_training import TrainedEncoders
from icl_verify.numerics._core.data import SparsePrompts
from icl_verify.numerics._core.decoder import Decoder
from icl_verify.numerics._core.encoder import Encoder, encoder_tokens
from icl_verify.numerics._core.sparse_regression import (
    lasso_excess_risks,
    least_squares_excess_risks,
    oracle_tuned,
)

from icl_verify.statistics import bootstrap_se, mean_of_estimates, paired_difference

__all__ = [
    "BaselineComparison",
    "EvaluationPrompts",
    "ImportanceSummary",
    "RidgeGap",
    "compare_over_n",
    "compare_with_baselines",
    "encoder_p_probe",
    "evaluation_prompts",
    "head_gain",
    "importance_summary",
    "layer_probe_errors",
    "masked_importance",
    "noise_level_gap",
    "noise_level_mean",
    "noise_level_mean_se",
    "ridge_gap",
]


@dataclass(frozen=True, eq=False)
class EvaluationPrompts:
    """``count`` prompts per member (E members).

    Attributes:
        prompts: the prompts, fields (E, count, ...), on the CPU.
        tokens: their encoder tokens (E, count, n + q, d + 1), on the device.
        clean: the noiseless query labels ``x_q^T w*`` (E, count, q), on the device.
    """

    prompts: SparsePrompts
    tokens: torch.Tensor
    clean: torch.Tensor


def evaluation_prompts(
    sigmas: Sequence[float],
    count: int,
    *,
    d: int,
    s: int,
    n: int,
    q: int = 1,
    seed: int,
    device: str = "cpu",
    covariance: torch.Tensor | None = None,
    layout: Callable[[SparsePrompts], torch.Tensor] = encoder_tokens,
) -> EvaluationPrompts:
    """``count`` fresh s-sparse prompts per member (`member_prompts`), member e's labels with
    noise ``sigmas[e]``, x ~ N(0, ``covariance``) (I when None), drawn on the CPU from ``seed``;
    tokens (by ``layout``, the encoder's by default) and noiseless labels moved to ``device``.
    The same seed gives the same prompts.

    >>> p = evaluation_prompts((0.0, 0.5), 3, d=4, s=2, n=5, q=2, seed=7)
    >>> tuple(p.tokens.shape), tuple(p.clean.shape)
    ((2, 3, 7, 5), (2, 3, 2))
    >>> bool((evaluation_prompts((0.0, 0.5), 3, d=4, s=2, n=5, q=2, seed=7).tokens
    ...       == p.tokens).all())
    True
    """
    generator = torch.Generator().manual_seed(int(seed))
    prompts, tokens, clean = member_prompts(
        sigmas, count, d=d, n=n, s=s, q=q, generator=generator, covariance=covariance,
        layout=layout,
    )  # fmt: skip
    return EvaluationPrompts(prompts, tokens.to(device), clean.to(device))


def _prompts(trained: TrainedEncoders, count: int, n: int, q: int, seed: int, device: str):
    """`evaluation_prompts` in the setting (d, s, member noise levels, covariance, tokens) of
    ``trained``."""
    training = trained.training
    return evaluation_prompts(
        training.member_sigmas, count, d=training.d, s=training.s, n=n, q=q, seed=seed,
        device=device, covariance=training.covariance(), layout=training.tokens,
    )  # fmt: skip


def _squared_errors(model: Encoder | Decoder, tokens: torch.Tensor, n: int, clean: torch.Tensor):
    """(E, B) squared errors of the first query's prediction against its noiseless label."""
    with torch.no_grad():
        return ((model(tokens, n)[..., 0] - clean[..., 0]) ** 2).double().cpu().numpy()


def _tuned(risks: torch.Tensor, count_tune: int) -> np.ndarray:
    """(E, B) per-prompt risks at each member's grid point of lowest mean risk on its first
    ``count_tune`` prompts, read on the rest; ``risks`` (K grid points, E, count_tune + B)."""
    tuned = [
        oracle_tuned(risks[:, e, :count_tune], risks[:, e, count_tune:]).risks
        for e in range(risks.shape[1])
    ]
    return torch.stack(tuned).numpy()


def _float64(prompts: SparsePrompts) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return prompts.X.double(), prompts.y.double(), prompts.w_star.double()


def _same_setting(trained: Sequence[TrainedEncoders]) -> None:
    settings = {
        (t.training.d, t.training.s, t.training.member_sigmas, t.training.zeta,
         t.training.architecture)
        for t in trained
    }  # fmt: skip
    if len(settings) != 1:
        raise ValueError(
            "trained must hold ensembles of one setting (d, s, member noise levels, zeta, "
            f"architecture), got {sorted(settings)}"
        )


@dataclass(frozen=True, eq=False)
class BaselineComparison:
    """Per-prompt excess risks on the reading prompts (E members, B prompts each).

    Attributes:
        encoders: (M, E, B) each trained ensemble's squared error of its first query against
            the noiseless label, in the order given.
        ols: (E, B) exact excess risk of OLS (minimum norm when n < d).
        ridge, lasso: (E, B) exact excess risks of ridge and Lasso at each member's tuned grid
            point; ``lasso`` NaN where neither FISTA nor coordinate descent reaches its
            tolerance (`sparse_regression.lasso_excess_risks`), or not asked for.
    """

    encoders: np.ndarray
    ols: np.ndarray
    ridge: np.ndarray
    lasso: np.ndarray


def compare_with_baselines(
    trained: Sequence[TrainedEncoders],
    n: int,
    *,
    n_tune: int,
    n_read: int,
    grid: Sequence[float],
    lasso_tol: float | None = None,
    seed: int,
    device: str = "cpu",
) -> BaselineComparison:
    """Trained encoders beside OLS, ridge and Lasso on the same prompts (Chen et al. Figures
    1b, 3): ``n_tune + n_read`` prompts per member with n examples and one query
    (`evaluation_prompts` from ``seed``); ridge ``(X^T X / n + lambda I)^{-1} X^T y / n`` and
    the Lasso ``argmin (1/2n) ||X b - y||^2 + alpha ||b||_1`` (FISTA, or coordinate descent
    where it stalls, to a KKT violation of ``lasso_tol``; None: no Lasso), each over ``grid``,
    tuned per member on the first ``n_tune`` prompts (lowest mean excess risk) and read on the
    last ``n_read``, where every encoder and OLS are read too. The ensembles share one setting
    (d, s, noise levels).

    >>> from icl_verify.numerics import EncoderTraining, train_encoders
    >>> trained = train_encoders(EncoderTraining(d=4, s=2, d_hid=8, heads=2, layers=2,
    ...     sigmas=(0.0, 0.5), lr=1e-3, steps=1, batch=4, validation_batch=4))
    >>> c = compare_with_baselines([trained], 6, n_tune=8, n_read=16, grid=[1.0, 0.01], seed=0)
    >>> c.encoders.shape, c.ridge.shape, bool(c.ols[0].max() < 1e-10)  # n > d, sigma = 0
    ((1, 2, 16), (2, 16), True)
    """
    _same_setting(trained)
    p = _prompts(trained[0], n_tune + n_read, n, 1, seed, device)
    read = slice(n_tune, None)
    encoders = np.stack([
        _squared_errors(t.model(device), p.tokens[:, read], n, p.clean[:, read]) for t in trained
    ])  # fmt: skip
    X, y, w = _float64(p.prompts)
    covariance = trained[0].training.covariance()
    ols = least_squares_excess_risks(X, y, w, covariance=covariance)[0, :, read].numpy()
    ridge = _tuned(least_squares_excess_risks(X, y, w, grid, covariance), n_tune)
    lasso = np.full(ols.shape, np.nan)
    if lasso_tol is not None:
        try:
            lasso = _tuned(lasso_excess_risks(X, y, w, grid, covariance, tol=lasso_tol), n_tune)
        except RuntimeError:  # no solver reached the tolerance: left out
            pass
    return BaselineComparison(encoders, ols, ridge, lasso)


def compare_over_n(
    trained: Sequence[TrainedEncoders],
    points: Iterable[tuple[int, int]],
    *,
    n_tune: int,
    n_read: int,
    grid: Sequence[float],
    lasso_tol: float | None = None,
    device: str = "cpu",
) -> BaselineComparison:
    """`compare_with_baselines` at every (n, seed) of ``points`` (fresh prompts from each seed),
    stacked on an n axis after the member axis: encoders (M, E, N, B), ols, ridge and lasso
    (E, N, B) (Chen et al. Figures 1b, 3, 10: risk against n).

    >>> from icl_verify.numerics import EncoderTraining, train_encoders
    >>> trained = train_encoders(EncoderTraining(d=4, s=2, d_hid=8, heads=2, layers=2,
    ...     sigmas=(0.1,), lr=1e-3, steps=1, batch=4, validation_batch=4))
    >>> c = compare_over_n([trained], [(3, 0), (6, 1)], n_tune=8, n_read=16, grid=[1.0])
    >>> c.encoders.shape, c.ridge.shape
    ((1, 1, 2, 16), (1, 2, 16))
    """
    per_n = [
        compare_with_baselines(trained, n, n_tune=n_tune, n_read=n_read, grid=grid,
                               lasso_tol=lasso_tol, seed=seed, device=device)  # fmt: skip
        for n, seed in points
    ]
    return BaselineComparison(
        *(np.stack([getattr(c, f) for c in per_n], axis=-2)
          for f in ("encoders", "ols", "ridge", "lasso"))  # fmt: skip
    )


@dataclass(frozen=True)
class RidgeGap:
    """An ensemble against tuned ridge on the same prompts (means over members and prompts).

    Attributes:
        risk: the ensemble's mean excess risk; ridge: tuned ridge's.
        gap: ridge - risk, the paired mean; gap_se: its SE over the members' prompts.
    """

    risk: float
    ridge: float
    gap: float
    gap_se: float


def ridge_gap(
    trained: TrainedEncoders,
    n: int,
    *,
    count: int,
    grid: Sequence[float],
    seed: int,
    device: str = "cpu",
) -> RidgeGap:
    """The ensemble's excess risk against ridge's, tuned over ``grid`` per member on ``count``
    prompts and read with the ensemble on ``count`` more (`compare_with_baselines`, whose
    ``ridge`` and ``encoders[0]`` these are with ``n_tune = n_read = count``): the paired
    mean of ridge - encoder over all members' reading prompts and its SE.

    >>> from icl_verify.numerics import EncoderTraining, train_encoders
    >>> trained = train_encoders(EncoderTraining(d=4, s=2, d_hid=8, heads=2, layers=2,
    ...     sigmas=(0.1,), lr=1e-3, steps=1, batch=4, validation_batch=4))
    >>> gate = ridge_gap(trained, 10, count=32, grid=[1.0, 0.1], seed=0)
    >>> round(gate.gap, 12) == round(gate.ridge - gate.risk, 12), gate.gap_se > 0
    (True, True)
    """
    p = _prompts(trained, 2 * count, n, 1, seed, device)
    ridge = _tuned(
        least_squares_excess_risks(*_float64(p.prompts), grid, trained.training.covariance()),
        count,
    )
    errors = _squared_errors(trained.model(device), p.tokens[:, count:], n, p.clean[:, count:])
    gap, se = paired_difference(ridge.ravel(), errors.ravel())
    return RidgeGap(float(errors.mean()), float(ridge.mean()), float(gap), float(se))


def masked_importance(
    trained: TrainedEncoders, n: int, *, count: int, seed: int, device: str = "cpu"
) -> HeadImportance:
    """`head_importance` of the ensemble on ``count`` prompts per member with n examples and
    one query (`evaluation_prompts` from ``seed``): per (member, layer, head) the excess-risk
    increase when the head is masked, its paired SE, and W (3.1), ``W_ij = dE_ij / sum_k
    dE_ik``.

    >>> from icl_verify.numerics import EncoderTraining, train_encoders
    >>> trained = train_encoders(EncoderTraining(d=4, s=2, d_hid=8, heads=2, layers=2,
    ...     sigmas=(0.1,), lr=1e-3, steps=1, batch=4, validation_batch=4))
    >>> W = masked_importance(trained, 10, count=64, seed=0).weights
    >>> W.shape, np.allclose(W.sum(axis=-1), 1.0)
    ((1, 2, 2), True)
    """
    p = _prompts(trained, count, n, 1, seed, device)
    return head_importance(trained.model(device), p.tokens, n, p.clean[..., 0])


@dataclass(frozen=True, eq=False)
class ImportanceSummary:
    """`masked_importance` of an ensemble of E models with L layers and h heads, summarised.

    Attributes:
        importance: the `HeadImportance` (W (3.1), risk increases and SEs, (E, L, h)).
        effective: (E, L) effective heads 1 / sum_j W_ij^2 per model and layer.
        mean, se: (L,) their mean over the models and its bootstrap SE over models.
        sorted: (L, h) App. B's aggregate (`sorted_average`).
        pattern_share: the share of models with layer 1 at >= (1 + h)/2 effective heads and
            every later layer at <= (1 + h)/2 (the midpoint between one head and all h).
    """

    importance: HeadImportance
    effective: np.ndarray
    mean: np.ndarray
    se: np.ndarray
    sorted: np.ndarray
    pattern_share: float


def importance_summary(
    trained: TrainedEncoders,
    n: int,
    *,
    count: int,
    seed: int,
    bootstrap: int,
    rng: np.random.Generator,
    device: str = "cpu",
) -> ImportanceSummary:
    """`masked_importance` (n examples, ``count`` prompts per member from ``seed``) with the
    effective heads per layer (`effective_heads`), their mean over the models with a bootstrap
    SE (``bootstrap`` resamples drawn from ``rng``), App. B's sorted average and the share of
    models showing Chen et al.'s pattern (Figures 1c, 4, 9, 11).

    >>> from icl_verify.numerics import EncoderTraining, train_encoders
    >>> trained = train_encoders(EncoderTraining(d=4, s=2, d_hid=8, heads=2, layers=2,
    ...     sigmas=(0.1,), replicates=2, lr=1e-3, steps=1, batch=4, validation_batch=4))
    >>> summary = importance_summary(trained, 6, count=64, seed=0, bootstrap=50,
    ...                              rng=np.random.default_rng(0))
    >>> summary.effective.shape, summary.mean.shape, 0.0 <= summary.pattern_share <= 1.0
    ((2, 2), (2,), True)
    """
    importance = masked_importance(trained, n, count=count, seed=seed, device=device)
    effective = effective_heads(importance.weights)  # (E, layers)
    middle = (1 + trained.training.heads) / 2
    pattern = (effective[:, 0] >= middle) & np.all(effective[:, 1:] <= middle, axis=1)
    return ImportanceSummary(
        importance, effective, np.nanmean(effective, axis=0),
        bootstrap_se(effective, bootstrap, rng), sorted_average(importance.weights),
        float(pattern.mean()),
    )  # fmt: skip


def layer_probe_errors(
    trained: TrainedEncoders,
    n: int,
    *,
    n_fit: int,
    n_read: int,
    lam: float,
    fit_seed: int,
    read_seed: int,
    device: str = "cpu",
) -> np.ndarray:
    """(E, layers + 1, n_read) squared errors of linear probes (Chen et al. Figures 1d, 5-8):
    per member and representation (after the embedding, after each layer), ridge with
    intercept and penalty ``lam`` (`fit_probe`) from the query token's state to its label,
    fitted on ``n_fit`` prompts (from ``fit_seed``, noisy labels, as a probe is trained) and
    read on ``n_read`` others (from ``read_seed``) against the noiseless label.

    >>> from icl_verify.numerics import EncoderTraining, train_encoders
    >>> trained = train_encoders(EncoderTraining(d=4, s=2, d_hid=8, heads=2, layers=2,
    ...     sigmas=(0.1,), lr=1e-3, steps=1, batch=4, validation_batch=4))
    >>> errors = layer_probe_errors(trained, 10, n_fit=64, n_read=32, lam=1e-3, fit_seed=0,
    ...                             read_seed=1)
    >>> errors.shape, bool((errors >= 0).all())
    ((1, 3, 32), True)
    """
    fit = _prompts(trained, n_fit, n, 1, fit_seed, device)
    read = _prompts(trained, n_read, n, 1, read_seed, device)
    model = trained.model(device)
    with torch.no_grad():
        _, fit_states = model(fit.tokens, n, hidden=True)
        _, read_states = model(read.tokens, n, hidden=True)
    out = []
    for e in range(fit.tokens.shape[0]):
        per_layer = []
        for a, b in zip(fit_states, read_states, strict=True):
            probe = fit_probe(a[e, :, n], fit.prompts.y_query[e, :, 0].to(a.device), lam)
            error = (probe(b[e, :, n]) - read.clean[e, :, 0].double()) ** 2
            per_layer.append(error.cpu().numpy())
        out.append(per_layer)
    return np.asarray(out)


def encoder_p_probe(
    trained: TrainedEncoders,
    n: int,
    q: int,
    *,
    layer: int = 1,
    rates: Sequence[float],
    steps: Sequence[int],
    n_tune: int,
    n_read: int,
    tune_seed: int,
    read_seed: int,
    device: str = "cpu",
) -> PProbe:
    """P-probing (Chen et al. §6, Figure 2b) of the ensemble's representations after ``layer``
    (0: the embedding): prompts with n examples and q queries, ``n_tune`` per member (from
    ``tune_seed``) choosing each member's rate from ``rates`` and ``n_read`` (from
    ``read_seed``) where its path is read (`p_probe`: GD from 0 on the first q - 1 query
    states and labels, the last query's excess risk at the recorded ``steps``).

    >>> from icl_verify.numerics import EncoderTraining, train_encoders
    >>> trained = train_encoders(EncoderTraining(d=4, s=2, d_hid=8, heads=2, layers=2,
    ...     sigmas=(0.1,), lr=1e-3, steps=1, batch=4, validation_batch=4))
    >>> result = encoder_p_probe(trained, 10, 5, rates=[0.1, 0.01], steps=[0, 10], n_tune=16,
    ...                          n_read=32, tune_seed=0, read_seed=1)
    >>> result.risks.shape, result.rate.shape
    ((1, 2, 32), (1,))
    """
    model = trained.model(device)
    sets = []
    for seed, count in ((tune_seed, n_tune), (read_seed, n_read)):
        p = _prompts(trained, count, n, q, seed, device)
        with torch.no_grad():
            states = model(p.tokens, n, hidden=True)[1][layer]
        sets.append((states[:, :, n:].cpu(), p.prompts.y_query, p.clean[..., -1].cpu()))
    return p_probe(sets[0], sets[1], rates, steps)


def _by_replicate(values, replicates: int) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    if replicates < 1 or values.shape[0] % replicates:
        raise ValueError(f"replicates must divide the {values.shape[0]} members, got {replicates}")
    return values.reshape(replicates, values.shape[0] // replicates, *values.shape[1:])


def noise_level_mean(values, replicates: int) -> np.ndarray:
    """Member values (E, ...) averaged over the replicates of each noise level: (S, ...) with
    S = E / replicates (member ``r * S + k`` has noise level k, `EncoderTraining`).

    >>> noise_level_mean(np.array([1.0, 10.0, 3.0, 20.0]), replicates=2).tolist()
    [2.0, 15.0]
    """
    return _by_replicate(values, replicates).mean(axis=0)


def noise_level_mean_se(means, ses, replicates: int) -> tuple[np.ndarray, np.ndarray]:
    """Independent per-member estimates ``means`` (E, ...) with SEs ``ses``, averaged over the
    replicates of each noise level (`noise_level_mean`), the SE ``sqrt(sum_r se_r^2) / R``
    (`statistics.mean_of_estimates`): (S, ...) each.

    >>> mean, se = noise_level_mean_se([1.0, 10.0, 3.0, 20.0], [0.3, 1.0, 0.4, 1.0], 2)
    >>> mean.tolist(), se.round(6).tolist()  # sqrt(0.09 + 0.16) / 2
    ([2.0, 15.0], [0.25, 0.707107])
    """
    return mean_of_estimates(_by_replicate(means, replicates), _by_replicate(ses, replicates))


def noise_level_gap(a, b, replicates: int) -> tuple[np.ndarray, np.ndarray]:
    """Two predictors' per-prompt risks ``a``, ``b`` (E, ..., B) on the same prompts (the last
    axis), each member and index of the middle axes an independent draw (e.g. one per n): per
    noise level the paired gap a - b (`statistics.paired_difference`) averaged over the
    replicates (`noise_level_mean_se`), then over the middle axes, the SEs combined as those of
    independent estimates: (S,) each.

    >>> a = np.array([[[3.0, 5.0]], [[2.0, 2.0]]])  # (E = 2, 1 draw, B = 2), one noise level
    >>> mean, se = noise_level_gap(a, np.zeros_like(a), replicates=2)
    >>> mean.tolist(), se.round(6).tolist()  # (4 + 2) / 2; sqrt(1 + 0) / 2
    ([3.0], [0.5])
    """
    mean, se = noise_level_mean_se(*paired_difference(a, b), replicates)  # (S, ...)
    if mean.ndim == 1:
        return mean, se
    return mean_of_estimates(mean.reshape(len(mean), -1), se.reshape(len(se), -1), axis=-1)


def head_gain(one, many, replicates: int, null_risk: float) -> tuple[float, float]:
    """What more heads gain, in units of the null risk: the paired gap risk(h = 1) - risk(h)
    of per-prompt risks ``one``, ``many`` (E, ..., B) (`noise_level_gap`: per noise level,
    over the middle axes), averaged over the noise levels (the SEs combined as independent
    ones) and divided by ``null_risk`` (s = E||w*||^2, the risk of predicting 0), so settings
    of different s compare (Chen et al. App. G: Figure 10 against Figure 3).

    >>> one = np.array([[[3.0, 5.0]], [[2.0, 2.0]]])  # (E = 2, 1 draw, B = 2), one noise level
    >>> head_gain(one, np.zeros_like(one), replicates=2, null_risk=4.0)  # (3, 0.5) / 4
    (0.75, 0.125)
    """
    mean, se = noise_level_gap(one, many, replicates)  # (S,)
    gain, gain_se = mean_of_estimates(mean, se)
    return float(gain) / null_risk, float(gain_se) / null_risk
