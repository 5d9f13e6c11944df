"""Two-head models of normalised activations, trained per activation and read against debiased GD
(He et al. 2025 §5.2, Table 1, Figures 9-11; reference §HE-5.2-ACT).

With ``phi(v)_i = f(v_i) / sum_j f(v_j)`` in place of the softmax, a trained two-head model with
opposite heads applies a step of debiased one-step GD (4.11). `read_activation_groups` reads an
ensemble whose members come in groups (one group of seeds per activation): which members reached
opposite heads, the group's shown member, its learned (omega, mu), the step it applies (fitted
from its predictions, `numerics.effective_steps.fitted_steps`) with the Adam noise of the final
snapshot, and its test MSE over L' beside debiased GD at that step. Nothing here imports
`theory`: the step is fitted, not derived.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from icl_verify.numerics.effective_steps import fitted_steps, relative_mse
from icl_verify.numerics.ensemble import TrainedEnsemble, member_kinds, mse_by_test_length
from icl_verify.numerics.length_generalisation import length_curve

__all__ = ["ActivationGroups", "read_activation_groups"]


@dataclass(frozen=True, eq=False)
class ActivationGroups:
    """Groups of members (A groups of ``seeds`` consecutive members) read at the end of training.

    A group *reached* the pattern when some member is paired (`numerics.member_kinds`: a positive
    and a negative non-dummy head). Entries of a group that did not reach it: step 0 with an
    infinite error, ratios 0 with infinite SEs, NaN omega and mu (no step, not contradicted).

    Attributes:
        paired_count: (A,) paired members per group.
        shown: (A,) the group's member with the lowest final validation loss among its paired
            members (among all of them when none is paired); global member indices.
        omega, mu: (A,) the shown member's final mean |omega_h| and mean |mu_h|.
        step, step_error: (A,) its fitted step and the error: the Monte Carlo SE ⊕ the Adam
            noise (the step times the relative SD of ``sum_h |omega_h mu_h|`` over the last
            quarter of the logs; its drift is not counted, since along the valley omega and mu
            move while the step stays).
        ratio, ratio_se: (A, n) MSE / MSE(dGD at the fitted step) at each test length and its
            paired SE (`numerics.effective_steps.relative_mse`).
        mse, mse_se, dgd: (A, n) the shown member's test MSE, its SE, and debiased GD's MSE at
            the fitted step (NaN for a group that did not reach the pattern).
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

    @property
    def reached(self) -> np.ndarray:
        """(A,) whether some member of the group is paired."""
        return self.paired_count > 0


def read_activation_groups(
    ensemble: TrainedEnsemble,
    seeds: int,
    lengths: Sequence[int],
    *,
    n_prompts: int,
    seed: int = 0,
    device: str = "cpu",
    progress: bool = False,
) -> ActivationGroups:
    """Read each group of ``seeds`` consecutive members: its shown member, step and test MSE.

    The shown members of the groups that reached the pattern are fitted together
    (`fitted_steps`, ``n_prompts`` prompts seeded by ``seed``) and evaluated with debiased GD
    at each one's fitted step on the same nested prompts at every L' in ``lengths``
    (`mse_by_test_length`, seeded by ``seed`` too).

    >>> from icl_verify.numerics.ensemble import EnsembleTraining, train_ensemble
    >>> training = EnsembleTraining(d=2, L=8, sigma2=0.1, heads=(2, 2, 2, 2), lr=1e-2,
    ...     steps=200, batch=64, seed=0, log_every=10, checkpoint_every=0, validation_batch=64,
    ...     attention=("softmax", "softmax", "tanh", "tanh"))
    >>> groups = read_activation_groups(train_ensemble(training), 2, [4, 8], n_prompts=512)
    >>> groups.shown.shape, groups.ratio.shape
    ((2,), (2, 2))
    """
    lengths = [int(n) for n in lengths]
    kinds = member_kinds(ensemble)
    A, n = ensemble.heads.size // seeds, len(lengths)
    paired_count, shown = np.zeros(A, dtype=int), np.zeros(A, dtype=int)
    for a in range(A):
        members = np.arange(a * seeds, (a + 1) * seeds)
        paired = members[kinds.paired[members]]
        candidates = paired if paired.size else members
        shown[a] = int(candidates[np.argmin(ensemble.test_loss[-1, candidates])])
        paired_count[a] = paired.size
    omega, mu = np.full(A, np.nan), np.full(A, np.nan)
    # no paired member, no step: 0 with an infinite error (inconclusive, not contradicted)
    step, step_error = np.zeros(A), np.full(A, np.inf)
    ratio, ratio_se = np.zeros((A, n)), np.full((A, n), np.inf)
    mse, mse_se, dgd = np.full((A, n), np.nan), np.full((A, n), np.nan), np.full((A, n), np.nan)
    reached = np.flatnonzero(paired_count)
    if reached.size:
        fitted = fitted_steps(
            ensemble, shown[reached], n_prompts=n_prompts, seed=seed, device=device
        )
        losses = mse_by_test_length(
            {f"model{a}": (ensemble, int(shown[a])) for a in reached},
            lengths,
            debiased_steps={
                f"dGDfit{a}": float(v) for a, v in zip(reached, fitted.value, strict=True)
            },
            bayes=False,
            n_prompts=n_prompts,
            seed=seed,
            device=device,
            progress=progress,
        )
    for j, a in enumerate(reached):
        m, H = shown[a], int(ensemble.heads[shown[a]])
        omega[a] = np.abs(ensemble.omega[-1, m, :H]).mean()
        mu[a] = np.abs(ensemble.mu[-1, m, :H]).mean()
        product = np.abs(ensemble.omega[:, m, :H] * ensemble.mu[:, m, :H]).sum(axis=-1)  # (n_logs,)
        last = product[-max(1, product.size // 4) :]
        step[a] = fitted.value[j]
        step_error[a] = float(np.hypot(fitted.stderr[j], step[a] * np.std(last) / np.mean(last)))
        ratio[a], ratio_se[a] = relative_mse(losses, f"model{a}", f"dGDfit{a}", lengths)
        mse[a], mse_se[a] = length_curve(losses, f"model{a}", lengths)
        dgd[a] = length_curve(losses, f"dGDfit{a}", lengths)[0]
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
    )
