"""HE-OBS3 of He et al. (2025), Section 3, Observation 3: length generalisation (Figure 4).

HE-OBS3 (§3, Figure 4): test MSE against the test length L'; H >= 2 tracks debiased GD
(4.11) and, as well, vanilla GD at its optimal step, H = 1 is worse than H = 2, every softmax
model improves beyond the training L, the multi-head models stay within Theorem 4.2(iii)'s
factor of the Bayes risk, and the single head's error falls more slowly with L' than the
multi-head's (the nonparametric against the parametric rate of Section 4.3, fitted slopes).

Read on the shared trained ensemble (terms and findings: `_observations`). Predictions: `theory`
(optimal_gd, the exact GD risks, the single-head optimum). Measurements:
`numerics.mse_by_test_length` with `numerics._he2025.length_generalisation` (Monte Carlo on nested
prompts), paired ratios `JointMonteCarloEstimate.ratio`, slopes `propagated_loglog_slope`.
Figure: `figures.observations` (its data: `figures.data.obs_length`).

The Bayes factor is judged where Theorem 4.2(iii) speaks of the trained models: GD tuned at
ξ = d/L has risk at most 1 + κ/(σ²(1 + κ)) (κ = ξ(1+σ²)) times the Bayes risk, and the models are
tuned at the training L. At L' = L it is judged on prompts of its own (``bayes_prompts``);
one head would exceed the factor. At other L' the sharp factor of L' is drawn, not judged: the
models are not tuned there, and beyond some L' they exceed it, as R_dGD(η*(L), L') must. The
uniform factor 1 + 1/σ², which every model meets, is drawn only.
"""

from __future__ import annotations

from dataclasses import dataclass

import icl_verify.figures.data.obs_length as fig_data
import numpy as np
from icl_verify.validation.claim import Check, Claim, FigureRef, Source, scaled
from icl_verify.validation.claims.he2025 import PAPER, TEST_LENGTHS
from icl_verify.validation.claims.he2025._ensembles import (
    SharedEnsembleParams,
    check_trained_heads,
)
from icl_verify.validation.claims.he2025._reconstructed import BAYES_BOUND
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.paper_figures import PaperFigure
from icl_verify.validation.params import ParameterError, param
from icl_verify.validation.rules import (
    Inequality,
    Tolerance,
    ZScore,
    fit_loglog_slope,
    propagated_loglog_slope,
)

from icl_verify import numerics, theory


@dataclass(frozen=True, kw_only=True)
class Obs3Params(SharedEnsembleParams):
    """HE-OBS3: test MSE of trained members and baselines against the test length L'."""

    lengths: tuple[int, ...] = param(
        help="test prompt lengths L' (including the training L and some beyond it)", low=1,
        role="length"
    )
    n_prompts: int = param(
        help="Monte Carlo prompts, shared by every model, baseline and L'", low=2, role="count"
    )
    bayes_prompts: int = param(
        help="Monte Carlo prompts at L' = L for the ratio to the Bayes risk against Theorem "
        "4.2(iii)'s sharp factor (a draw of its own; the margin there is about 2%)",
        low=2, role="count",
    )
    compare_heads: tuple[int, ...] = param(
        (1, 2, 4),
        help="H of the trained members compared (per H the lowest validation loss); "
        "must include 1 and an H ≥ 2",
        low=1, role="heads",
    )
    dgd_rtol: float = param(
        0.05,
        help="relative tolerance of the H ≥ 2 test MSE against the debiased-GD risk",
        low=0,
        low_open=True,
    )
    pair_omega: float = param(
        0.13,
        help="KQ scale of the fixed ± pair drawn in Figure 4 (right; the paper's trained value "
        "at d=5, L=40, σ²=0.1)",
        low=0,
        low_open=True,
    )
    pair_mu: float = param(
        3.45, help="OV weight of that fixed ± pair (the paper's 3.45)", low=0, low_open=True
    )

    def validate(self) -> None:
        super().validate()
        check_trained_heads(self, "compare_heads")
        if 1 not in self.compare_heads or max(self.compare_heads) < 2:
            raise ParameterError(
                f"compare_heads must include 1 and an H >= 2, got {list(self.compare_heads)}"
            )
        if self.L not in self.lengths or max(self.lengths) <= self.L:
            raise ParameterError(
                f"lengths must include the training L = {self.L} and a longer L', got "
                f"{list(self.lengths)}"
            )


PRESETS_OBS3 = Obs3Params.presets(
    smoke=dict(lengths=(10, 40, 100), n_prompts=2048, bayes_prompts=8192),
    quick=dict(lengths=TEST_LENGTHS, n_prompts=16_384, bayes_prompts=262_144),
    paper=dict(lengths=TEST_LENGTHS, n_prompts=20_480, bayes_prompts=262_144),
)


def _multi(params: Obs3Params) -> list[int]:
    return [h for h in params.compare_heads if h >= 2]


def predict_obs3(params: Obs3Params) -> Prediction:
    """Exact dGD/GD risk curves at the training-L optimal steps; L̃ of the best single head."""
    setting, lengths = params.setting, list(params.lengths)
    tests = [theory.Setting(setting.d, n, setting.sigma2) for n in lengths]
    eta_d = theory.optimal_gd(setting, debiased=True).eta
    eta_v = theory.optimal_gd(setting).eta
    single = theory.single_head_optimum(setting)
    curves = {
        "dgd": np.array([theory.debiased_gd_risk(eta_d, s) for s in tests], dtype=float),
        "gd": np.array([theory.gd_risk(eta_v, s) for s in tests], dtype=float),
        "single": np.array(
            [
                theory.approximate_loss(np.array([single.omega]), np.array([single.mu]), s)
                for s in tests
            ],
            dtype=float,
        ).ravel(),
    }
    at_train, at_end = lengths.index(setting.L), len(lengths) - 1
    decrease_dgd = curves["dgd"][at_train] - curves["dgd"][at_end]
    decrease_single = curves["single"][at_train] - curves["single"][at_end]
    n_multi = len(_multi(params))
    # Theorem 4.2(iii): R_dGD*/R_Bayes <= risk_ratio_bound(xi) for GD tuned at xi = d/L' (the
    # sharp factor, judged at L' = L where the models are tuned); since R_Bayes >= sigma2 the
    # excess-ratio bound 1 + 1/sigma2 bounds the risk ratio at every xi (drawn). Without noise
    # the theorem gives no finite factor.
    bayes = [_bayes_bound(params.d / n, setting.sigma2) for n in lengths]
    curves["bayes_sharp"] = np.array([b.risk_ratio_bound for b in bayes], dtype=float)
    uniform = bayes[0].excess_ratio_bound
    slopes = {
        name: fit_loglog_slope(lengths, curves[name] - setting.sigma2).slope.value
        for name in ("single", "dgd")
    }
    return Prediction(
        values={
            "tf_vs_dgd": np.tile(curves["dgd"], n_multi),
            "dgd_mc": curves["dgd"],
            "gd_ratio": np.tile(curves["dgd"] / curves["gd"], n_multi),
            "single_minus_multi": curves["single"][at_train] - curves["dgd"][at_train],
            "length_gain": np.array(
                [decrease_single if h == 1 else decrease_dgd for h in params.compare_heads]
            ),
            "bayes_factor": np.full(n_multi, bayes[at_train].risk_ratio_bound),
            "rate_gap": np.full(n_multi, slopes["single"] - slopes["dgd"]),
        },
        figure_data=fig_data.Obs3Theory(**curves, bayes_uniform=uniform).to_record(),
    )


def _bayes_bound(xi: float, sigma2: float) -> theory.BayesComparison:
    """`theory.compare_with_bayes`, with infinite bounds when σ² = 0 (no finite factor)."""
    if sigma2 > 0:
        return theory.compare_with_bayes(xi, sigma2)
    return theory.BayesComparison(xi, 0.0, np.nan, np.nan, np.nan, np.nan, np.inf, np.inf)


def measure_obs3(params: Obs3Params, runtime) -> Measurement:
    """Monte Carlo test MSE on nested prompts (`numerics.mse_by_test_length`).

    Every model and baseline sees the same prompts at every L', so differences between models
    and between lengths are paired. The dGD and GD baselines run at the steps that are optimal
    at the training L (the reference's Figure 4), a setting of the comparison taken from
    `theory.optimal_gd`; "dGD at η_eff" uses each trained model's own
    η_eff = sum_h ω_h μ_h (the first-order step of (4.10)).
    """
    ensemble = runtime.trained(params.training())
    setting, lengths, seed = params.setting, list(params.lengths), runtime.seed_for("prompts")
    members = [numerics.representative(ensemble, h) for h in params.compare_heads]
    eta_eff = ensemble.first_order_steps(members)
    heads = fig_data.shown_heads(params.compare_heads, params.heads)
    drawn = heads[len(members) :]  # Figure 4 only
    shown = members + [numerics.representative(ensemble, h) for h in drawn]
    losses = _nested_losses(params, runtime, ensemble, shown, eta_eff, seed)
    index = {h: k for k, h in enumerate(heads)}  # H -> k in losses
    L, longest, multi = setting.L, max(lengths), _multi(params)
    tf = np.array([numerics.length_curve(losses, f"member{index[h]}", lengths) for h in multi])
    single_gap = losses.difference(f"member{index[1]}@{L}", f"member{index[multi[0]]}@{L}")
    gains = [
        losses.difference(f"member{k}@{L}", f"member{k}@{longest}") for k in range(len(members))
    ]
    gd_ratio = _paired_ratios(losses, [index[h] for h in multi], "GD", lengths)  # (H, L')
    bayes_ratio = _paired_ratios(losses, [index[h] for h in multi], "Bayes", lengths)
    slopes = {}  # H -> fitted slope of log(MSE - sigma2) on log L', SE from the points' SEs
    for h in params.compare_heads:
        mean, se = numerics.length_curve(losses, f"member{index[h]}", lengths)
        slopes[h] = propagated_loglog_slope(lengths, Estimate(mean - setting.sigma2, se))
    rate_gap = [(slopes[1].value - slopes[h].value, np.hypot(slopes[1].error, slopes[h].error))
                for h in multi]  # fmt: skip
    sharp = _sharp_bayes_ratio(params, runtime, ensemble, members, index)  # (2, H)

    def curves(names) -> np.ndarray:  # (names, 2, L'): mean, SE
        return np.array([numerics.length_curve(losses, name, lengths) for name in names])

    figure_data = fig_data.Obs3Data(
        lengths=np.array(lengths, dtype=float),
        eta_eff=eta_eff,
        members=np.array(members, dtype=float),
        heads=heads,
        models=curves([f"member{index[h]}" for h in heads]),
        baselines=curves(fig_data.BASELINES),
        at_eta_eff=curves([f"dGDeff{index[h]}" for h in params.compare_heads]),
        fixed=_fixed_kernels(params, seed, runtime.device),
        bayes_ratio_mean=bayes_ratio[0],  # (H >= 2, L'), paired
        bayes_ratio_se=bayes_ratio[1],
        slopes=np.array([[slopes[h].value, slopes[h].error] for h in params.compare_heads]),
        bayes_sharp_ratio=sharp,
    )
    return Measurement(
        values={
            "tf_vs_dgd": Estimate(tf[:, 0].ravel(), tf[:, 1].ravel()),  # tf: (H, mean/SE, L')
            "dgd_mc": Estimate(*numerics.length_curve(losses, "dGD", lengths)),
            "gd_ratio": Estimate(gd_ratio[0].ravel(), gd_ratio[1].ravel()),
            "bayes_factor": Estimate(sharp[0], sharp[1]),
            "rate_gap": Estimate(*np.array(rate_gap).T),
            "single_minus_multi": Estimate(single_gap.mean, single_gap.stderr),
            "length_gain": Estimate(
                np.array([g.mean for g in gains]), np.array([g.stderr for g in gains])
            ),
        },
        figure_data=figure_data.to_record(),
    )


def _nested_losses(params: Obs3Params, runtime, ensemble, shown, eta_eff, seed: int):
    """Test MSE of the `shown` members, debiased GD at each member's η_eff and at η*, GD at
    its η* and Bayes, at every L' on the same nested prompts (drawn from `seed`)."""
    setting, lengths = params.setting, list(params.lengths)
    return numerics.mse_by_test_length(
        {f"member{k}": (ensemble, member) for k, member in enumerate(shown)},
        lengths,
        debiased_steps={
            **{f"dGDeff{k}": float(eta) for k, eta in enumerate(eta_eff)},
            "dGD": theory.optimal_gd(setting, debiased=True).eta,
        },
        gd_steps={"GD": theory.optimal_gd(setting).eta},
        n_prompts=params.n_prompts,
        seed=seed,
        device=runtime.device,
        progress=runtime.show_progress,
    )


def _sharp_bayes_ratio(params: Obs3Params, runtime, ensemble, members, index) -> np.ndarray:
    """MSE over the Bayes risk of the multi-head members at L' = L on prompts of their own
    (bayes_prompts): (mean/SE, H)."""
    L, multi = params.setting.L, _multi(params)
    at_train = numerics.mse_by_test_length(
        {f"member{index[h]}": (ensemble, members[index[h]]) for h in multi},
        [L],
        n_prompts=params.bayes_prompts,
        seed=runtime.seed_for("Bayes prompts"),
        device=runtime.device,
    )
    return _paired_ratios(at_train, [index[h] for h in multi], "Bayes", [L])[:, :, 0]


def _paired_ratios(losses, members: list[int], baseline: str, lengths) -> np.ndarray:
    """MSE(member k) / MSE(baseline) per member and L', paired on the shared prompts:
    (2, members, L') float64, mean then SE (`JointMonteCarloEstimate.ratio`)."""
    ratios = [[losses.ratio(f"member{k}@{n}", f"{baseline}@{n}") for n in lengths] for k in members]
    return np.array([[[r.mean for r in row] for row in ratios],
                     [[r.stderr for r in row] for row in ratios]])  # fmt: skip


def _fixed_kernels(params: Obs3Params, seed: int, device: str) -> fig_data.FixedKernels:
    """Figure 4 (right), drawn only: Monte Carlo test MSE at every L' of the paper's fixed ± pair
    (pair_omega, pair_mu) and of the single head at (1/√d, μ*(L')) of (4.12) with the test
    L' (as the authors' plot), on the prompts of `measure_obs3` (same sampler and seed)."""
    single = [
        theory.single_head_optimum(theory.Setting(params.d, n, params.sigma2))
        for n in params.lengths
    ]
    curves = numerics.fixed_kernel_mse_by_test_length(
        (params.pair_omega, params.pair_mu),
        [head.omega for head in single],
        [head.mu for head in single],
        params.lengths,
        d=params.d,
        sigma2=params.sigma2,
        n_prompts=params.n_prompts,
        seed=seed,
        device=device,
    )
    return fig_data.FixedKernels(curves.pair_mean, curves.pair_se, curves.single_mean,
                                 curves.single_se)  # fmt: skip


def checks_obs3(params: Obs3Params) -> tuple[Check, ...]:
    return (*_dgd_checks(params), *_ordering_checks(params), *_rate_checks(params))


def _dgd_checks(params: Obs3Params) -> tuple[Check, ...]:
    """The multi-head models against debiased GD (Thm 4.2(i)) and vanilla GD, and the exact
    debiased-GD risk against its Monte Carlo estimate."""
    return (
        Check(
            "tf_vs_dgd",
            Tolerance(
                f"Thm 4.2(i): a ± pair differs from debiased GD by O(ω²) (leading term "
                f"∝ η ω² d^1.5 / √L'); the reference's Monte Carlo at ω = 0.13 finds at most "
                f"1.6% (L' = 10), and with the ω² order {params.dgd_rtol:g} covers trained "
                f"scales up to ω = {0.13 * np.sqrt(params.dgd_rtol / 0.016):.2f}. The step "
                f"η_eff differs from η* by ~1%: at L' = L, where η* is optimal, a second-order "
                f"change of the risk; at other L' a first-order one, at most 1.0% (L' = 10, "
                f"the exact R_dGD at η* ± 1%), within {params.dgd_rtol:g} beside the ω² "
                f"term's 1.6%. Error bar: the Monte Carlo SE.",
                rtol=params.dgd_rtol,
            ),
            f"MSE of H ∈ {_multi(params)} vs R_dGD(η*, L') (all L')",
        ),
        Check(
            "gd_ratio",
            Tolerance(
                f"Vanilla GD at its optimal step differs from debiased GD by the exact gap "
                f"R_dGD/R_GD − 1 (§HE-4.3-RISK: −0.8% to +1.7% over L' = 10..100 at the "
                f"default setting); a model within {params.dgd_rtol:g} of dGD (Thm 4.2(i): a ± "
                f"pair is debiased GD up to O(ω²)) has MSE/GD within "
                f"{params.dgd_rtol:g}·R_dGD/R_GD of that ratio. "
                f"Error bar: the paired delta-method SE of the ratio on the shared prompts.",
                rtol=params.dgd_rtol,
            ),
            f"MSE(H ∈ {_multi(params)}) / MSE(GD η*) vs R_dGD/R_GD (all L', paired)",
        ),
        Check(
            "dgd_mc",
            ZScore(
                "Exact finite-L risk (§HE-4.3-RISK) against its Monte Carlo estimate on "
                "the same prompts: only MC error. Resolution 10%: 4 SE of the quick preset's "
                "16k prompts are about 6% of the risk at L' = 10.",
                max_z=4.0,
                rel_resolution=0.1,
            ),
            "debiased GD (η*) Monte Carlo vs exact risk",
        ),
    )


def _ordering_checks(params: Obs3Params) -> tuple[Check, ...]:
    """Observation 3's and Figure 4's orderings: paired differences of the theory's sign
    and size."""
    return (
        _ordering(
            "single_minus_multi",
            "Observation 3: one head predicts worse than two at the training length, "
            "paired on the same prompts.",
            "MSE(H=1) − MSE(H=2) at L' = L (paired)",
        ),
        _ordering(
            "length_gain",
            "Figure 4: each model's test MSE falls as the test prompt grows beyond the "
            "training length, paired on nested prompts.",
            f"MSE(L' = L) − MSE(L' = {max(params.lengths)}) per H "
            f"{list(params.compare_heads)} (paired)",
        ),
    )


def _ordering(quantity: str, claim: str, label: str) -> Check:
    """A paired difference that must be positive and of the theory's size (rtol 1): `claim`
    states the ordering."""
    ordering = (
        "The measured difference must be positive and of the theory's size, 0 < measured < 2 × "
        "predicted (rtol 1), beyond 1 paired SE. Only the order of magnitude is held because "
        "the single-head values come from L̃, which at ω = 1/√d is itself about 8% below the "
        "true loss (L̃ 0.372 vs the reference's Monte Carlo 0.405 at L' = 40)."
    )
    return Check(quantity, Tolerance(f"{claim} {ordering}", rtol=1.0), label)


def _rate_checks(params: Obs3Params) -> tuple[Check, ...]:
    """The trained models against the Bayes risk (Thm 4.2(iii)), and the single head's
    slower nonparametric rate (Section 4.3)."""
    return (
        Check(
            "bayes_factor",
            Inequality(
                "at_most",
                "Theorem 4.2(iii) (§HE-T4.2iii): GD tuned at ξ = d/L has risk at most "
                "1 + κ/(σ²(1+κ)) times the Bayes risk, κ = ξ(1+σ²) (the sharp factor; the "
                "uniform 1 + 1/σ², which even one head meets, is drawn only). The trained "
                "models are tuned at the training L, so the factor is judged at L' = L; beyond "
                "L' ≈ 55 they exceed the factor of their L', as R_dGD(η*(L), L') must (drawn). "
                "Error bar: paired delta-method SE of the ratio on bayes_prompts prompts of "
                "their own; 4 SEs must clear the factor.",
            ),
            f"MSE(H ∈ {_multi(params)}) / MSE(ridge, Bayes) at L' = L vs Thm 4.2(iii)'s "
            f"sharp factor (paired)",
        ),
        Check(
            "rate_gap",
            Tolerance(
                "Section 4.3: the single head is a nonparametric (Nadaraya–Watson) smoother, "
                "the multi-head pair a parametric (GD-like) estimator, so the single head's "
                "excess MSE − σ² falls more slowly with L'. Fitted slopes of log(MSE − σ²) on "
                "log L' (SE propagated from the points'); the difference slope(H=1) − "
                "slope(H) must be positive and of the theory's size (0 < measured < 2 × "
                "predicted), the single head's theory slope coming from L̃ at its optimum, "
                "itself about 8% below the true loss at L' = 40.",
                rtol=1.0,
            ),
            f"fitted slope(H=1) − slope(H) for H ∈ {_multi(params)}, log(MSE − σ²) vs log L'",
        ),
    )


CLAIM_OBS3 = Claim(
    id="HE-OBS3",
    source=Source(PAPER, "3, Obs. 3; 4.3", "Figure 4, (4.11)", BAYES_BOUND),
    statement="Trained models with H ≥ 2 have nearly the test MSE of debiased one-step GD, "
    "and of vanilla GD at its optimal step, at every test length L', within a constant factor "
    "of the Bayes risk (Theorem 4.2(iii)); the one-head model is worse and its error falls "
    "more slowly with L' (nonparametric against parametric rate); every softmax model "
    "improves as L' grows beyond the training L.",
    params=Obs3Params,
    presets=PRESETS_OBS3,
    predict=predict_obs3,
    measure=measure_obs3,
    checks=checks_obs3,
    figure=FigureRef("icl_verify.figures.observations", "figure_obs3"),
    wrong=scaled(
        "tf_vs_dgd",
        1.5,
        why="Multi-head models 50% above debiased GD (about the one-head level): 10 times the "
        "relative tolerance 0.05.",
    ),
    summary="test MSE vs prompt length L': multi-head tracks debiased and vanilla GD, stays "
    "within Thm 4.2(iii)'s factor of Bayes, beats one head, whose rate is slower (Fig. 4)",
    catalogue=(2, 3),
    paper_figures=(
        PaperFigure(
            4,
            ("HE-OBS3",),
            FigureRef("icl_verify.figures.paper", "figure_4"),
            "test MSE vs L' (10..100): left, trained H = 1, 2, 4, 8; right, the two-head TF at "
            "(ω, μ) = (0.13, 3.45), the single-head kernel (1/√d, μ*), GD, dGD and ridge",
            "left: Monte Carlo test MSE of one trained member per H (no +0.1 offset); right: "
            "Monte Carlo of the fixed ± pair and single-head kernel, GD and dGD at the "
            "training-L optimal steps (exact risks as lines, Monte Carlo as markers) and "
            "ridge λ = σ²d (Bayes)",
        ),
    ),
)

CLAIMS = (CLAIM_OBS3,)
