"""Two-head models of normalised activations, trained per activation and read against debiased GD
(He et al. 2025 §5.2, Table 1, Figures 9-11; reference §HE-5.2-ACT).

With ``phi(v)_i = f(v_i) / sum_j f(v_j)`` in place of the softmax, a trained two-head model with
opposite heads applies a step of debiased one-step GD (4.11). `read_activation_groups` reads an
ensemble whose members come in groups (one group of seeds per activation): which members reached
opposite heads (the group's seeds in the pattern), the group's shown member, and over its paired
seeds the learned (omega, mu), the step they apply (fitted from their predictions,
`numerics.fitted_steps`) and their test MSE over L' beside debiased GD at a
given step, each a mean over the seeds with their spread in its SE
(`icl_verify.statistics.replicate_mean`). Nothing here imports `theory`: the step is fitted, not
derived, and the baseline's step is the caller's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from icl_verify.numerics._core.ensemble import TrainedEnsemble, member_kinds, mse_by_test_length
from icl_verify.numerics._he2025.effective_steps import fitted_steps, relative_mse
from icl_verify.numerics._he2025.length_generalisation import length_curve

from icl_verify.statistics import replicate_mean

__all__ = ["ActivationGroups", "read_activation_groups"]


@dataclass(frozen=True, eq=False)
class ActivationGroups:
    """Groups of members (A groups of ``seeds`` consecutive members) read at the end of training.

    A group *reached* the pattern when some member is paired (`numerics.member_kinds`: a positive
    and a negative non-dummy head); its paired members are its seeds, and each value below is
    their mean with `replicate_mean`'s SE (their spread ⊕ the Monte Carlo SE, the small-sample t
    factor; infinite for one paired seed). Entries of a group that did not reach it: step 0 with
    an infinite error, ratios 0 with infinite SEs, NaN omega, mu and curves (no step, not
    contradicted).

    Attributes:
        paired_count: (A,) paired members per group.
        shown: (A,) the group's member with the lowest final validation loss among its paired
            members (among all of them when none is paired); global member indices (drawn).
        omega, mu: (A,) the paired seeds' mean of their final mean |omega_h| and mean |mu_h|.
        step, step_error: (A,) the fitted step, mean over the paired seeds, and its SE.
        ratio, ratio_se: (A, n) MSE / MSE(dGD at the given step) at each test length, each
            seed's paired ratio (`numerics.relative_mse`) averaged.
        mse, mse_se: (A, n) the paired seeds' mean test MSE and its SE.
        dgd: (n,) debiased GD's MSE at the given step, on the same prompts.
        dgd_fit: (A, n) debiased GD's MSE at the group's mean fitted step (drawn, not compared).
    """

    paired_count: np.ndarray
    shown: np.ndarray
    omega: np.ndarray
    mu: np.ndarray
    step: np.ndarray
    step_error: np.ndarray
    ratio: np.ndarray
    ratio_se: np.ndarray
    mse: np.ndarray
    mse_se: np.ndarray
    dgd: np.ndarray
    dgd_fit: np.ndarray

    @property
    def reached(self) -> np.ndarray:
        """(A,) whether some member of the group is paired."""
        return self.paired_count > 0


def read_activation_groups(
    ensemble: TrainedEnsemble,
    seeds: int,
    lengths: Sequence[int],
    *,
    debiased_step: float,
    n_prompts: int,
    seed: int = 0,
    device: str = "cpu",
    progress: bool = False,
) -> ActivationGroups:
    """Read each group of ``seeds`` consecutive members on its paired seeds: step and test MSE.

    The paired members of every group are fitted together (`fitted_steps`, ``n_prompts``
    prompts seeded by ``seed``) and evaluated with debiased GD at ``debiased_step`` and at each
    group's mean fitted step on the same nested prompts at every L' in ``lengths``
    (`mse_by_test_length`, seeded by ``seed`` too); each group's values are the means over its
    paired seeds (`replicate_mean`, shared prompts).

    >>> from icl_verify.numerics import EnsembleTraining, train_ensemble
    >>> training = EnsembleTraining(d=2, L=8, sigma2=0.1, heads=(2, 2, 2, 2), lr=1e-2,
    ...     steps=200, batch=64, seed=0, log_every=10, checkpoint_every=0, validation_batch=64,
    ...     attention=("softmax", "softmax", "tanh", "tanh"))
    >>> groups = read_activation_groups(train_ensemble(training), 2, [4, 8], debiased_step=0.8,
    ...                                 n_prompts=512)
    >>> groups.shown.shape, groups.ratio.shape, groups.dgd.shape
    ((2,), (2, 2), (2,))
    """
    lengths = [int(n) for n in lengths]
    paired, shown = _groups(ensemble, seeds)
    A, n = shown.size, len(lengths)
    paired_count = np.array([p.size for p in paired])
    omega, mu = np.full(A, np.nan), np.full(A, np.nan)
    # no paired member, no step: 0 with an infinite error (inconclusive, not contradicted)
    step, step_error = np.zeros(A), np.full(A, np.inf)
    ratio, ratio_se = np.zeros((A, n)), np.full((A, n), np.inf)
    mse, mse_se = np.full((A, n), np.nan), np.full((A, n), np.nan)
    dgd, dgd_fit = np.full(n, np.nan), np.full((A, n), np.nan)
    reached = np.flatnonzero(paired_count)
    if reached.size:
        steps, losses = _fit_and_evaluate(
            ensemble, {a: paired[a] for a in reached}, lengths, debiased_step=debiased_step,
            n_prompts=n_prompts, seed=seed, device=device, progress=progress,
        )  # fmt: skip
        dgd = length_curve(losses, "dGD", lengths)[0]
    for a in reached:
        omega[a], mu[a] = (
            np.mean([np.abs(x[-1, e, : ensemble.heads[e]]).mean() for e in paired[a]])
            for x in (ensemble.omega, ensemble.mu)
        )
        step[a], step_error[a] = steps[a].value, steps[a].stderr
        ratios = [relative_mse(losses, f"m{e}", "dGD", lengths) for e in paired[a]]
        curves = [length_curve(losses, f"m{e}", lengths) for e in paired[a]]
        for (value, error), pairs in (((ratio, ratio_se), ratios), ((mse, mse_se), curves)):
            mean = replicate_mean([p[0] for p in pairs], [p[1] for p in pairs])
            value[a], error[a] = mean.value, mean.stderr
        dgd_fit[a] = length_curve(losses, f"dGDfit{a}", lengths)[0]
    return ActivationGroups(
        paired_count=paired_count,
        shown=shown,
        omega=omega,
        mu=mu,
        step=step,
        step_error=step_error,
        ratio=ratio,
        ratio_se=ratio_se,
        mse=mse,
        mse_se=mse_se,
        dgd=dgd,
        dgd_fit=dgd_fit,
    )


def _groups(ensemble: TrainedEnsemble, seeds: int) -> tuple[list[np.ndarray], np.ndarray]:
    """Per group of ``seeds`` consecutive members: its paired members, and the member shown
    (the lowest final test loss among the paired ones; among all when none is paired)."""
    kinds = member_kinds(ensemble)
    A = ensemble.heads.size // seeds
    shown, paired = np.zeros(A, dtype=int), []
    for a in range(A):
        members = np.arange(a * seeds, (a + 1) * seeds)
        paired.append(members[kinds.paired[members]])
        candidates = paired[a] if paired[a].size else members
        shown[a] = int(candidates[np.argmin(ensemble.test_loss[-1, candidates])])
    return paired, shown


def _fit_and_evaluate(ensemble: TrainedEnsemble, paired: dict[int, np.ndarray], lengths: list[int],
                      *, debiased_step: float, n_prompts: int, seed: int, device: str,
                      progress: bool):  # fmt: skip
    """The paired seeds of the groups in ``paired`` (group -> its paired members) fitted
    together (`fitted_steps`), each group's mean fitted step (`replicate_mean`); and the test
    MSE of every one of them, of debiased GD at ``debiased_step`` ("dGD") and at each group's
    mean step ("dGDfit{a}") at every L' on the same nested prompts (`mse_by_test_length`)."""
    every = np.concatenate(list(paired.values()))  # the paired seeds, group-major
    fitted = fitted_steps(ensemble, every, n_prompts=n_prompts, seed=seed, device=device)
    where = {int(e): j for j, e in enumerate(every)}  # member -> its row in `fitted`
    rows = {a: [where[e] for e in members] for a, members in paired.items()}
    steps = {a: replicate_mean(fitted.value[r], fitted.stderr[r]) for a, r in rows.items()}
    losses = mse_by_test_length(
        {f"m{e}": (ensemble, int(e)) for e in every},
        lengths,
        debiased_steps={"dGD": float(debiased_step)}
        | {f"dGDfit{a}": float(steps[a].value) for a in paired},
        bayes=False,
        n_prompts=n_prompts,
        seed=seed,
        device=device,
        progress=progress,
    )
    return steps, losses
