"""Trained one-head linear attention (5.1) read against GD, and its length generalisation beside
softmax models (He et al. 2025 §5.1, Figure 8; reference §HE-5.1-LIN, §HE-5.1-LENGTH).

A one-head linear-attention member predicts ``(gamma / L) sum_i y_i x_i^T x_q`` once its
circuits take the GD pattern (KQ11 = omega I, OV last row (0, ..., 0, mu)), with the step
``gamma = omega mu``; it keeps the 1/L of its training length at every test length L'.

- `learned_steps`: gamma = omega mu of each member over the logs;
- `read_linear_members`: where the step settles, the pattern's off-pattern ratios and the
  Monte Carlo test risk at the training L (`LinearMembers`);
- `linear_vs_softmax_by_test_length`: test MSE over L' of the linear members, the seeds of the
  one- and two-head softmax configurations and debiased GD at a given step, on the same nested
  prompts, each configuration's value a mean over its seeds (`LinearVsSoftmax`).

Nothing here imports `theory`: what these are compared with is the claim's business.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from icl_verify.numerics._core.ensemble import TrainedEnsemble, mse_by_test_length
from icl_verify.numerics._he2025.effective_steps import FittedSteps, fitted_steps, relative_mse
from icl_verify.numerics._he2025.length_generalisation import length_curve
from icl_verify.numerics._he2025.settling import settled_mean

from icl_verify.statistics import replicate_mean

__all__ = [
    "LinearMembers",
    "LinearVsSoftmax",
    "learned_steps",
    "linear_vs_softmax_by_test_length",
    "read_linear_members",
]


def learned_steps(ensemble: TrainedEnsemble) -> np.ndarray:
    """``gamma = omega mu`` of each one-head member at every logged step: (n, E).

    >>> from types import SimpleNamespace
    >>> e = SimpleNamespace(omega=np.array([[[0.5], [2.0]]]), mu=np.array([[[1.6], [0.4]]]))
    >>> learned_steps(e).tolist()
    [[0.8, 0.8]]
    """
    return ensemble.omega[..., 0] * ensemble.mu[..., 0]


@dataclass(frozen=True, eq=False)
class LinearMembers:
    """One-head linear-attention members read at the end of training (E members).

    Attributes:
        step, step_error: (E,) where gamma = omega mu settles, `numerics.settled_mean` of its
            logs (last-quarter mean; drift plus batch-means SE).
        step_history: (n, E) gamma over the logs (`learned_steps`).
        kq_off_pattern, ov_off_pattern: (E,) `numerics.summarize_circuits`' off-pattern RMS
            ratios of the final circuits (KQ: off the diagonal of KQ11; OV: off (D, D)).
        KQ, OV: (E, D, D) final circuits.
        risk, risk_se: (E,) Monte Carlo test MSE at the training L and its SE.
    """

    step: np.ndarray
    step_error: np.ndarray
    step_history: np.ndarray
    kq_off_pattern: np.ndarray
    ov_off_pattern: np.ndarray
    KQ: np.ndarray
    OV: np.ndarray
    risk: np.ndarray
    risk_se: np.ndarray


def read_linear_members(
    ensemble: TrainedEnsemble,
    *,
    n_prompts: int,
    seed: int = 0,
    device: str = "cpu",
    progress: bool = False,
) -> LinearMembers:
    """The learned step and pattern of every one-head member, and its test risk at L.

    The step is read where training settles (`settled_mean` of `learned_steps`): the final
    snapshot fluctuates around it with Adam's noise. The risk is `mse_by_test_length` at the
    training L alone, all members on the same ``n_prompts`` prompts (seeded by ``seed``).

    >>> from icl_verify.numerics import EnsembleTraining, train_ensemble
    >>> training = EnsembleTraining(d=2, L=8, sigma2=0.1, heads=(1, 1), lr=1e-2, steps=40,
    ...     batch=16, seed=0, log_every=2, checkpoint_every=0, validation_batch=64,
    ...     attention="linear")
    >>> members = read_linear_members(train_ensemble(training), n_prompts=512)
    >>> members.step.shape, members.KQ.shape, bool((members.risk_se > 0).all())
    ((2,), (2, 3, 3), True)
    """
    steps = learned_steps(ensemble)  # (n, E)
    settled = np.array([settled_mean(steps[:, e]) for e in range(steps.shape[1])])  # (E, 2)
    summaries = ensemble.summaries()
    E, L = ensemble.heads.size, ensemble.L
    losses = mse_by_test_length(
        {f"linear{e}": (ensemble, e) for e in range(E)},
        [L],
        bayes=False,
        n_prompts=n_prompts,
        seed=seed,
        device=device,
        progress=progress,
    )
    risk = [losses[f"linear{e}@{L}"] for e in range(E)]
    KQ, OV = ensemble.circuits()  # (E, 1, D, D) each
    return LinearMembers(
        step=settled[:, 0],
        step_error=settled[:, 1],
        step_history=steps,
        kq_off_pattern=np.array([s.kq_off_pattern[0] for s in summaries]),
        ov_off_pattern=np.array([s.ov_off_pattern[0] for s in summaries]),
        KQ=KQ[:, 0],
        OV=OV[:, 0],
        risk=np.array([r.mean for r in risk]),
        risk_se=np.array([r.stderr for r in risk]),
    )


@dataclass(frozen=True, eq=False)
class LinearVsSoftmax:
    """Test MSE over the test lengths L' (n of them) of linear and softmax members (Figure 8).

    Every model is a configuration read on its seeds (the members that share it): a value is
    the mean over them with `icl_verify.statistics.replicate_mean`'s SE (their spread ⊕ the Monte
    Carlo SE, with the small-sample t factor), all on the same prompts.

    Attributes:
        lengths: (n,) the test lengths.
        linear_mean, linear_se: (n,) the linear members' mean MSE and its SE.
        linear_members: (E, n) each linear member's MSE (drawn, so the seeds' spread shows).
        linear_rise, linear_rise_se: the members' mean of the paired MSE(longest L') −
            MSE(``rise_from``), and its SE.
        softmax_gain, softmax_gain_se: (2,) paired MSE(L) − MSE(longest L') of the one- and
            the two-head members, mean over each one's seeds.
        two_head_ratio, two_head_ratio_se: (n,) MSE(two heads) / MSE(dGD at the given step),
            paired per member (`numerics.relative_mse`), mean over the members.
        fitted: the fitted steps of the two-head members at the training L (reported beside).
        curves: name -> ((n,) MSE, (n,) SE) for "H1", "H2" (means over the seeds), "dGD" (at
            the given step), "dGDfit" (at the two-head members' mean fitted step) and "Bayes".
    """

    lengths: np.ndarray
    linear_mean: np.ndarray
    linear_se: np.ndarray
    linear_members: np.ndarray
    linear_rise: float
    linear_rise_se: float
    softmax_gain: np.ndarray
    softmax_gain_se: np.ndarray
    two_head_ratio: np.ndarray
    two_head_ratio_se: np.ndarray
    fitted: FittedSteps
    curves: dict[str, tuple[np.ndarray, np.ndarray]]

    @property
    def measured_argmin(self) -> float:
        """The test length with the least linear-attention MSE."""
        return float(self.lengths[int(np.argmin(self.linear_mean))])


def linear_vs_softmax_by_test_length(
    linear: TrainedEnsemble,
    softmax: TrainedEnsemble,
    members: tuple[Sequence[int], Sequence[int]],
    lengths: Sequence[int],
    *,
    debiased_step: float,
    rise_from: int,
    n_prompts: int,
    seed: int = 0,
    device: str = "cpu",
    progress: bool = False,
) -> LinearVsSoftmax:
    """Monte Carlo test MSE of every model and baseline at every L', on the same nested prompts.

    Models: every member of ``linear`` (one-head linear attention) and the members ``members``
    = (ones, twos) of ``softmax``, the seeds of its one- and of its two-head configuration;
    baselines: debiased GD (4.11) at ``debiased_step`` (the caller's, e.g. a theory's optimum:
    what the two-head ratio is taken against), debiased GD at the two-head members' mean step
    fitted from their predictions at the training L (`fitted_steps`; reported, not compared)
    and the Bayes predictor. `mse_by_test_length` evaluates all of them on one draw of
    ``n_prompts`` prompts (seeded by ``seed``, as the fit is), so every difference is paired.
    Each configuration's value is the mean over its seeds (`replicate_mean`, shared prompts).
    ``rise_from``: the L' the linear members' rise to the longest L' is read from; it and the
    training L must be among ``lengths``.

    >>> from icl_verify.numerics import EnsembleTraining, train_ensemble
    >>> common = dict(d=2, L=8, sigma2=0.1, lr=1e-2, steps=40, batch=16, seed=0, log_every=5,
    ...               checkpoint_every=0, validation_batch=64)
    >>> linear = train_ensemble(EnsembleTraining(heads=(1, 1), attention="linear", **common))
    >>> softmax = train_ensemble(EnsembleTraining(heads=(1, 2, 2), **common))
    >>> result = linear_vs_softmax_by_test_length(linear, softmax, ([0], [1, 2]), [4, 8, 16],
    ...     debiased_step=0.8, rise_from=8, n_prompts=512)
    >>> result.linear_members.shape, sorted(result.curves), result.fitted.value.shape
    ((2, 3), ['Bayes', 'H1', 'H2', 'dGD', 'dGDfit'], (2,))
    """
    lengths = [int(n) for n in lengths]
    ones, twos = (list(group) for group in members)
    fitted = fitted_steps(softmax, twos, n_prompts=n_prompts, seed=seed, device=device)
    groups = {"linear": [(linear, e) for e in range(linear.heads.size)],
              "one": [(softmax, m) for m in ones], "two": [(softmax, m) for m in twos]}  # fmt: skip
    names = {g: [f"{g}{j}" for j in range(len(models))] for g, models in groups.items()}
    losses = mse_by_test_length(
        {name: model for g, models in groups.items()
         for name, model in zip(names[g], models, strict=True)},  # fmt: skip
        lengths,
        debiased_steps={"dGD": float(debiased_step), "dGDfit": float(fitted.value.mean())},
        n_prompts=n_prompts,
        seed=seed,
        device=device,
        progress=progress,
    )
    linear_curves = [length_curve(losses, name, lengths) for name in names["linear"]]
    L, longest = softmax.L, max(lengths)
    rise, rise_se = _over_seeds(_gains(losses, names["linear"], longest, rise_from))
    gain = [_over_seeds(_gains(losses, names[g], L, longest)) for g in ("one", "two")]
    ratio, ratio_se = _over_seeds([relative_mse(losses, m, "dGD", lengths) for m in names["two"]])
    curves = {
        f"H{h}": _over_seeds([length_curve(losses, name, lengths) for name in names[g]])
        for h, g in ((1, "one"), (2, "two"))
    }
    curves |= {name: length_curve(losses, name, lengths) for name in ("dGD", "dGDfit", "Bayes")}
    linear_mean, linear_se = _over_seeds(linear_curves)
    return LinearVsSoftmax(
        lengths=np.array(lengths),
        linear_mean=linear_mean,
        linear_se=linear_se,
        linear_members=np.array([mean for mean, _ in linear_curves]),
        linear_rise=float(rise),
        linear_rise_se=float(rise_se),
        softmax_gain=np.array([g[0] for g in gain]),
        softmax_gain_se=np.array([g[1] for g in gain]),
        two_head_ratio=ratio,
        two_head_ratio_se=ratio_se,
        fitted=fitted,
        curves=curves,
    )


def _over_seeds(curves) -> tuple[np.ndarray, np.ndarray]:
    """Per-seed (value, SE) pairs -> the mean over the seeds and its SE (`replicate_mean`)."""
    result = replicate_mean([c[0] for c in curves], [c[1] for c in curves])
    return result.value, result.stderr


def _gains(losses, names: list[str], later: int, earlier: int) -> list[tuple[float, float]]:
    """Per model of ``names``: the paired MSE at L' = ``later`` minus at ``earlier``, (mean, SE)."""
    differences = (losses.difference(f"{m}@{later}", f"{m}@{earlier}") for m in names)
    return [(d.mean, d.stderr) for d in differences]
