"""Trained-model claims of He et al. (2025), Section 3 (Observations 1-4) and HE-MAN part (ii).

All four read one trained ensemble (`validation.claims._trained`): softmax attention with
H in {1, 2, 3, 4, 8} heads, several init seeds per H, trained online with Adam on the
reference's default setting (§0.5). Terms used throughout:

- dummy head: ``|omega_h mu_h| < 0.05 max_h |omega_h mu_h|`` (`numerics.circuits.DUMMY_THRESHOLD`);
- paired member (H >= 2): its non-dummy heads include both a positive and a negative KQ scale,
  i.e. it reached the multi-head pattern of (4.7);
- trapped member (H >= 2, not paired): all non-dummy heads share one sign and act as one head
  (loss about 0.408, the single-head optimum). HE-OBS2 counts these; HE-OBS1 and HE-OBS4 read
  the pattern of the single-head and paired members and state how many were left out.

Claims:

- HE-OBS1 (§3, (3.1)): each non-dummy head has ``KQ11 = omega_h I_d``, ``kq21 = 0``,
  ``ov21 = 0``, ``ov22 = mu_h`` and ``sign(omega_h) = sign(mu_h)``.
- HE-OBS2 (§3, (4.4)-(4.7)): two-head runs end at opposite heads; paired members have
  homogeneous ``|omega_h|`` and zero-sum OV; and (HE-MAN part (ii), placed here because it reads
  the same models) their group sums lie on the manifold: ``2 omega sum_+ mu = 2 omega |sum_- mu|
  = 2 omega mu*(omega)``, which (4.8) puts at ``1/(1 + kappa)`` up to ``O(kappa d^2 omega^4)``.
- HE-OBS3 (§3, Figure 4): test MSE against the test length L'; H >= 2 tracks debiased GD
  (4.11), H = 1 is worse than H = 2, and every softmax model improves beyond the training L.
- HE-OBS4 (§3, Figures 5 and 13): |omega_h(t)| rises then falls, |mu_h(t)| grows nearly
  monotonically, and the pattern, once formed, persists.

Measured at the quick preset (12 members, Adam lr 3e-3, 10k steps, seed 0; CPU):

- Two of the four two-head runs (init seeds 3 and 4) end trapped with same-sign heads at the
  single-head loss (0.381, 0.378 vs 0.24 for the pairs): paired fraction 2/4 +- 0.25 (binomial
  SE); all H = 3, 4, 8 runs pair. HE-OBS2 reports this as a disagreement with "two-head runs
  converge to opposite heads" (a seed-dependent outcome, as the dynamics side finds on L̃).
- Paired members: common |omega| 0.155-0.169, zero-sum ratios <= 0.009, and
  2 omega sum_+ mu, -2 omega sum_- mu in 0.837-0.904 (mean 0.874) vs 1/(1+kappa) = 0.879.
- Test MSE at L' = 10 / 40 / 100: H=2 0.591 / 0.244 / 0.166, H=4 0.585 / 0.244 / 0.167,
  dGD(eta*) 0.587 / 0.240 / 0.165 (exact 0.596 / 0.243 / 0.167), H=1 0.858 / 0.408 / 0.274,
  ridge (Bayes) 0.198 / 0.115 / 0.105 (16k shared prompts, SE <= 0.012).
- Heads that carry a small share of their group's OV sum in H >= 4 members settle slowly:
  after 10k steps they still have 6-18% off-pattern KQ energy (falling: inconclusive), a
  diagonal spread of 12-14% that no longer falls (disagrees), |omega| spread max/min 1.17
  (H = 8; still falling, so inconclusive), and they hand part of their mu to a same-sign head
  (|mu_h| falls by up to 27% while the group sums grow monotonically, within 2%). Heads
  carrying most of a group sum sit at Adam's noise floor (off-pattern 2-4%).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from icl_verify.figures.circuits import circuit_heatmaps
from icl_verify.figures.length_generalisation import length_generalisation_figure
from icl_verify.figures.style import MEASURED, PALETTE, REFERENCE, THEORY, new_figure
from icl_verify.numerics.data import Prompts, embed, sample_linear_regression
from icl_verify.numerics.estimators import bayes_prediction, gd_prediction
from icl_verify.numerics.montecarlo import monte_carlo_losses
from icl_verify.theory import (
    Setting,
    approximate_loss,
    debiased_gd_risk,
    gd_risk,
    manifold_mu,
    optimal_gd,
    single_head_optimum,
)
from icl_verify.validation.claim import (
    Check,
    Claim,
    Estimate,
    Measurement,
    Prediction,
    Source,
    Tolerance,
    ZScore,
)
from icl_verify.validation.claims._trained import TrainedEnsemble, trained_ensemble
from icl_verify.validation.claims.he2025.optimality import limit_error_term

PAPER = "He et al. 2025"
NOISE_MARGIN = 4.0  # a logged change counts only when it exceeds this many logging-noise SDs



# ---------------------------------------------------------------------------------------------
# members: which reached the pattern


@dataclass(frozen=True)
class MemberKinds:
    """Each member's kind at the end of training, as boolean arrays of shape (E,)."""

    single: np.ndarray  # H = 1
    paired: np.ndarray  # H >= 2 with a positive and a negative non-dummy head
    trapped: np.ndarray  # H >= 2, all non-dummy heads of one sign

    @property
    def pattern(self) -> np.ndarray:
        """Members whose heads the pattern claims read: single-head and paired."""
        return self.single | self.paired


def member_kinds(ensemble: TrainedEnsemble) -> MemberKinds:
    """Classify the members by the signs of their non-dummy heads' final KQ scales.

    >>> from types import SimpleNamespace
    >>> omega = np.array([[[0.4, 0.0], [0.2, -0.2], [0.5, 0.4]]])  # (n=1, E=3, H=2)
    >>> mu = np.array([[[1.6, 0.0], [2.0, -2.0], [1.0, 0.6]]])
    >>> kinds = member_kinds(SimpleNamespace(heads=np.array([1, 2, 2]), omega=omega, mu=mu))
    >>> kinds.single.tolist(), kinds.paired.tolist(), kinds.trapped.tolist()
    ([True, False, False], [False, True, False], [False, False, True])
    """
    omega, mu = ensemble.omega[-1], ensemble.mu[-1]  # (E, H)
    heads = ensemble.heads
    paired = np.zeros(heads.size, dtype=bool)
    for e, H in enumerate(heads):
        live = ~_dummy(omega[e, :H], mu[e, :H])
        signs = np.sign(omega[e, :H][live])
        paired[e] = H >= 2 and (signs > 0).any() and (signs < 0).any()
    single = heads == 1
    return MemberKinds(single=single, paired=paired, trapped=~single & ~paired)


def _dummy(omega: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Dummy heads by `numerics.circuits.DUMMY_THRESHOLD` (the same rule as summarize_circuits)."""
    from icl_verify.numerics.circuits import DUMMY_THRESHOLD

    product = np.abs(omega * mu)
    return product < DUMMY_THRESHOLD * product.max()


def representative(ensemble: TrainedEnsemble, heads: int) -> int:
    """The member with ``heads`` heads and the lowest final validation loss (as one run is shown).

    >>> from types import SimpleNamespace
    >>> e = SimpleNamespace(heads=np.array([1, 2, 2]), test_loss=np.array([[0.4, 0.41, 0.24]]))
    >>> representative(e, 2)
    2
    """
    candidates = np.flatnonzero(ensemble.heads == heads)
    if candidates.size == 0:
        raise ValueError(f"heads must be one of {sorted(set(ensemble.heads.tolist()))}, "
                         f"got {heads}")  # fmt: skip
    return int(candidates[np.argmin(ensemble.test_loss[-1, candidates])])


def logging_noise(series: np.ndarray) -> float:
    """SD of the fluctuation of a logged series about its trend over the last quarter of logs.

    The residual SD of a straight-line fit to the last quarter: it contains the Adam noise,
    including its slow (correlated over many logs) part, but not the trend. series: (n,), n >= 12.

    >>> rng = np.random.default_rng(0)
    >>> x = np.linspace(0, 1, 4000) + 0.01 * rng.normal(size=4000)
    >>> round(logging_noise(x), 3)
    0.01
    """
    x = np.asarray(series, dtype=float)
    last = x[-max(3, x.size // 4) :]
    t = np.arange(last.size)
    residual = last - np.polyval(np.polyfit(t, last, 1), t)
    return float(residual.std(ddof=2))


def settled_value(series: np.ndarray, toward: float | None = None) -> tuple[float, float]:
    """An end-of-training value and its error: ``(x[-1], error)``, from the logged series.

    ``drift = mean(last quarter) - mean(third quarter)``, ``noise = SD(last quarter)``, q logs
    per quarter. The error is ``|drift| + noise``: a settled value is judged to within its Adam
    noise. A value still drifting (``|drift| > 2 noise sqrt(2/q)``, two naive SEs of the
    difference of the quarter means) toward ``toward`` (the claimed limit, a structural
    constant such as 0 or 1) may still reach it: its error is ``|x[-1] - toward|``, so the claim
    reads inconclusive, never contradicted, until the value settles. NaN logs (lost at a
    resume) are skipped.
    series: (n,), n >= 4.

    >>> settled_value(np.r_[np.linspace(1, 0.5, 50), np.full(50, 0.5)], toward=0.0)
    (0.5, 0.0)
    >>> value, error = settled_value(np.linspace(1, 0.5, 100), toward=0.0)  # still falling
    >>> value, error
    (0.5, 0.5)
    >>> round(settled_value(np.linspace(1, 0.5, 100), toward=2.0)[1], 3)  # falling away
    0.163
    """
    x = np.asarray(series, dtype=float)
    quarter = max(1, x.size // 4)
    third, last = x[-2 * quarter : -quarter], x[-quarter:]
    drift = np.nanmean(last) - np.nanmean(third)
    noise = np.nanstd(last)
    value = float(x[-1])
    moving = abs(drift) > 2 * noise * np.sqrt(2 / quarter)
    approaching = toward is not None and moving and drift * (toward - value) > 0
    return value, float(abs(value - toward) if approaching else abs(drift) + noise)


def _setting(params) -> Setting:
    t = params["training"]
    return Setting(d=t["d"], L=t["L"], sigma2=t["sigma2"])


def _heads_text(ensemble: TrainedEnsemble, mask: np.ndarray) -> str:
    counts = {int(h): int(((ensemble.heads == h) & mask).sum()) for h in np.unique(ensemble.heads)}
    return ", ".join(f"H={h}: {c}" for h, c in counts.items())


# ---------------------------------------------------------------------------------------------
# HE-OBS1: per-head circuit patterns


def predict_obs1(params) -> Prediction:
    """The pattern (3.1): diagonal KQ11 with equal entries, zero off-pattern blocks, signs match."""
    return Prediction(
        values={"diagonality": 1.0, "diagonal_spread": 0.0, "kq_off_pattern": 0.0,
                "ov_off_pattern": 0.0, "sign_product": 1.0}  # fmt: skip
    )


_NOISE_FLOORED = ("diagonal_spread", "kq_off_pattern")  # RMS statistics that noise alone lifts
_OBS1_LIMITS = {"diagonality": 1.0, "diagonal_spread": 0.0, "kq_off_pattern": 0.0,
                "ov_off_pattern": 0.0}  # fmt: skip


def measure_obs1(params, runtime) -> Measurement:
    """Circuit measures (`numerics.circuits.summarize_circuits`) of every non-dummy head.

    Each measure is read at the end of training with its `settled_value` error (toward the
    pattern's value), from the circuits logged over the second half of the run; the sign
    product is exact. The RMS-type measures (diagonal spread, KQ off-pattern) are lifted by
    Adam's stationary noise even on an exact mean pattern: a head whose d diagonal entries
    fluctuate independently has entry-wise SD sqrt(d) SD(omega_h), so that relative floor,
    sqrt(d) `logging_noise`(omega_h) / |omega_h|, is added to their error (it matches the
    off-pattern size of settled one- and two-head models at the quick preset, 2-4%).
    """
    ensemble = trained_ensemble(params, runtime)
    kinds = member_kinds(ensemble)
    final = ensemble.summaries()
    logs = range(ensemble.steps.size // 2, ensemble.steps.size)
    history = [ensemble.summaries(log) for log in logs]  # second half, per log
    fields = ("diagonality", "diagonal_spread", "kq_off_pattern", "ov_off_pattern")
    collected = {name: [] for name in (*fields, "sign_product", "member")}
    errors = {name: [] for name in fields}
    for e in np.flatnonzero(kinds.pattern):
        live = ~final[e].dummy
        H = ensemble.heads[e]
        omega = ensemble.omega[:, e, :H]
        # Adam noise floor of a spread/off-pattern RMS: entry-wise fluctuation sqrt(d) SD(omega_h)
        floor = [np.sqrt(ensemble.d) * logging_noise(omega[:, h]) / abs(omega[-1, h])
                 for h in range(H)]  # fmt: skip
        for name in fields:
            series = np.array([getattr(summaries[e], name) for summaries in history])  # (n, H)
            for h in np.flatnonzero(live):
                value, error = settled_value(series[:, h], toward=_OBS1_LIMITS[name])
                collected[name].append(value)
                errors[name].append(error + (floor[h] if name in _NOISE_FLOORED else 0.0))
        signs = np.sign(final[e].omega[live]) * np.sign(final[e].mu[live])
        collected["sign_product"].extend(signs)
        collected["member"].extend([e] * int(live.sum()))
    shown = [representative(ensemble, h) for h in params["show_heads"]]
    KQ, OV = ensemble.circuits()
    values = {name: Estimate(np.array(collected[name]), np.array(errors[name]), "bound")
              for name in fields}  # fmt: skip
    values["sign_product"] = Estimate(np.array(collected["sign_product"]), 0.0, "bound")
    return Measurement(
        values=values,
        figure_data={
            "KQ": KQ[shown],
            "OV": OV[shown],
            "shown_heads": ensemble.heads[shown].astype(float),
            "shown_members": np.array(shown, dtype=float),
            "head_member": np.array(collected["member"], dtype=float),
            "heads": ensemble.heads.astype(float),
            "excluded_trapped": kinds.trapped.astype(float),
            "steps": float(ensemble.steps[-1]),
        },
    )


def checks_obs1(params) -> tuple[Check, ...]:
    atol = params["pattern_atol"]
    why = (
        f"The reference's rule (§HE-OBS1) is about 1% after the authors' 500k Adam steps (their "
        f"H=2 model: diagonal energy 0.99926, last-entry OV energy 0.99994). The off-pattern "
        f"entries change the loss only at second order near the pattern, so Adam removes them "
        f"slowly, and Adam's noise floor on them grows with the learning rate; this preset "
        f"trains {params['training']['steps']} steps at lr {params['training']['lr']:g} and "
        f"holds every non-dummy head to {atol:g} (the paper preset: 0.01). Error bar "
        f"(settled_value): the drift plus noise over the last quarter of the logs; a head "
        f"still converging toward the pattern reads inconclusive, not contradicted. The "
        f"spread and off-pattern RMS also carry Adam's noise floor √d·SD(ω_h)/|ω_h|."
    )
    rule = Tolerance(why, atol=atol)
    return (
        Check("diagonality", rule, "‖diag KQ11‖² / ‖KQ11‖²_F (per head)"),
        Check("diagonal_spread", rule, "std(diag KQ11) / |ω_h| (per head)"),
        Check("kq_off_pattern", rule, "RMS(off-diag KQ11, kq21) / RMS(diag KQ11) (per head)"),
        Check("ov_off_pattern", rule, "RMS(ov21) / |ov22| (per head)"),
        Check(
            "sign_product",
            Tolerance("A sign: +1 when sign(ω_h) = sign(μ_h), −1 otherwise; one mismatched "
                      "head (discrepancy 2) contradicts the claim.", atol=0.5),  # fmt: skip
            "sign(ω_h) sign(μ_h) (per head)",
        ),
    )


def figure_obs1(params, prediction: Prediction, measurement: Measurement):
    data = measurement.figure_data
    heads = data["shown_heads"].astype(int)
    labels = [f"H={h} (member {int(m)})" for h, m in zip(heads, data["shown_members"], strict=True)]
    trapped = int(np.sum(data["excluded_trapped"]))
    title = (
        f"Trained circuits after {int(data['steps'])} Adam steps (lowest validation loss per H); "
        f"{trapped} trapped member(s) not read, see HE-OBS2"
    )
    return circuit_heatmaps(data["KQ"], data["OV"], heads, labels, title)


CLAIM_OBS1 = Claim(
    id="HE-OBS1",
    source=Source(PAPER, "3, Obs. 1", "(3.1)-(3.2)"),
    statement="After training, every non-dummy head of single-head and paired members has "
    "KQ11 = ω_h I_d, kq21 = 0, ov21 = 0, ov22 = μ_h and sign(ω_h) = sign(μ_h) (members trapped "
    "with same-sign heads are counted in HE-OBS2).",
    predict=predict_obs1,
    measure=measure_obs1,
    checks=checks_obs1,
    figure=figure_obs1,
)


# ---------------------------------------------------------------------------------------------
# HE-OBS2 (+ HE-MAN part (ii)): opposite heads, homogeneous KQ, zero-sum OV, the manifold


def _group_quantities(omega: np.ndarray, mu: np.ndarray, live: np.ndarray) -> dict[str, np.ndarray]:
    """Homogeneity, zero-sum ratio and 2 omega |group sums| along logs; omega, mu (n, H)."""
    abs_omega = np.abs(omega[:, live])
    positive, negative = live & (omega[-1] > 0), live & (omega[-1] < 0)
    scale = abs_omega.mean(axis=1)  # (n,): the common |omega| of the pattern
    return {
        "homogeneity": abs_omega.max(axis=1) / abs_omega.min(axis=1) - 1.0,
        "zero_sum": np.abs(mu.sum(axis=1)) / np.abs(mu).sum(axis=1),
        "eta_plus": 2 * scale * mu[:, positive].sum(axis=1),
        "eta_minus": -2 * scale * mu[:, negative].sum(axis=1),
        "omega": scale,
        "sum_plus": mu[:, positive].sum(axis=1),
        "sum_minus": mu[:, negative].sum(axis=1),
    }


def predict_obs2(params) -> Prediction:
    setting = _setting(params)
    fine = np.geomspace(0.03, 1.0, 300)
    return Prediction(
        values={"paired_fraction": 1.0, "homogeneity": 0.0, "zero_sum": 0.0,
                "manifold_eta": 1.0 / (1.0 + setting.kappa)},  # fmt: skip
        figure_data={"omega_fine": fine, "mu_star_fine": manifold_mu(fine, setting)},
    )


_OBS2_LIMITS = {"homogeneity": 0.0, "zero_sum": 0.0}  # structural limits (no theory value)


def measure_obs2(params, runtime) -> Measurement:
    """Fractions of paired members per H; per paired member the end values and their Adam noise.

    The error bar of an end-of-training value is its `settled_value` error (drift still under
    way plus the Adam noise).
    """
    ensemble = trained_ensemble(params, runtime)
    kinds = member_kinds(ensemble)
    multi = np.unique(ensemble.heads[ensemble.heads >= 2])
    counts = np.array([np.sum(ensemble.heads == h) for h in multi], dtype=float)
    paired_counts = np.array([np.sum(kinds.paired & (ensemble.heads == h)) for h in multi])
    per_member = {k: [] for k in ("homogeneity", "zero_sum", "eta_plus", "eta_minus", "omega",
                                  "sum_plus", "sum_minus")}  # fmt: skip
    errors = {k: [] for k in per_member}
    dummies = []
    for e in np.flatnonzero(kinds.paired):
        H = ensemble.heads[e]
        omega, mu = ensemble.omega[:, e, :H], ensemble.mu[:, e, :H]
        live = ~_dummy(omega[-1], mu[-1])
        dummies.append(int((~live).sum()))
        series = _group_quantities(omega, mu, live)
        for key in per_member:
            value, error = settled_value(series[key], toward=_OBS2_LIMITS.get(key))
            per_member[key].append(value)
            errors[key].append(error)
    value = {k: np.array(v) for k, v in per_member.items()}
    error = {k: np.array(v) for k, v in errors.items()}
    fraction = paired_counts / counts
    return Measurement(
        values={
            "paired_fraction": Estimate(fraction, 0.0, "bound"),
            "homogeneity": Estimate(value["homogeneity"], error["homogeneity"]),
            "zero_sum": Estimate(value["zero_sum"], error["zero_sum"]),
            "manifold_eta": Estimate(
                np.concatenate([value["eta_plus"], value["eta_minus"]]),
                np.concatenate([error["eta_plus"], error["eta_minus"]]),
            ),
        },
        figure_data={
            "multi_heads": multi.astype(float),
            "counts": counts,
            "paired_counts": paired_counts.astype(float),
            "binomial_se": np.sqrt(fraction * (1 - fraction) / counts),
            "paired_heads": ensemble.heads[kinds.paired].astype(float),
            "dummy_heads": np.array(dummies, dtype=float),
            "omega": value["omega"],
            "omega_error": error["omega"],
            "sum_plus": value["sum_plus"],
            "sum_minus": value["sum_minus"],
            "sum_plus_error": error["sum_plus"],
            "sum_minus_error": error["sum_minus"],
            "steps": float(ensemble.steps[-1]),
        },
    )


def checks_obs2(params) -> tuple[Check, ...]:
    setting = _setting(params)
    heads = np.asarray(params["training"]["heads"])
    largest_group = max(int(np.sum(heads == h)) for h in np.unique(heads[heads >= 2]))
    curvature = limit_error_term(params["omega_max"], setting)
    reference_rule = (
        "The reference's agreement rule (§HE-OBS2: within 5%); error bar (settled_value): the "
        "end value's drift plus Adam noise over the last quarter of the logs, or its distance "
        "to 0 while it still falls toward 0 (then inconclusive)."
    )
    return (
        Check(
            "paired_fraction",
            Tolerance(
                "The paper says two-head runs converge to opposite heads and shows the pattern for "
                "every H: a single trapped run (same-sign heads acting as one head) contradicts "
                f"it, so the allowance is half a run of the largest group (1/{2 * largest_group}). "
                "How often it happens is the finding (figure (a): fraction ± binomial SE): from "
                "random init the gradient flow on L̃ (dynamics side) ends trapped for 10 of 20 "
                "two-head seeds and none with H >= 4; Adam at lr 3e-3 left two-head seeds 3, 4 "
                "and 7 of 0..7 trapped after 20k steps (numerics side).",
                atol=0.5 / largest_group,
            ),
            "fraction of members reaching opposite heads (per H >= 2)",
        ),
        Check("homogeneity", Tolerance(reference_rule, atol=0.05),
              "max/min |ω_h| − 1 over non-dummy heads (paired members)"),  # fmt: skip
        Check("zero_sum", Tolerance(reference_rule, atol=0.05),
              "|Σ μ_h| / Σ |μ_h| (paired members)"),  # fmt: skip
        Check(
            "manifold_eta",
            Tolerance(
                f"HE-MAN (ii). On the manifold 2ωμ*(ω) = 1/(1+κ) − O(κ d² ω⁴) (4.8); for "
                f"ω <= {params['omega_max']:g} the correction is at most {curvature:.2g} "
                f"(optimality.limit_error_term), which is the atol. The trained models "
                f"minimise the true loss, not L̃, whose error is O(1/L) (Prop. 4.1): rtol = "
                f"1/L = {1 / setting.L:.3g}. Error bar: the end value's drift plus Adam noise "
                f"(settled_value).",
                rtol=1.0 / setting.L,
                atol=curvature,
            ),
            "2 ω Σ₊μ and −2 ω Σ₋μ vs 1/(1+κ) (paired members)",
        ),
    )


def figure_obs2(params, prediction: Prediction, measurement: Measurement):
    """(a) paired fraction per H with binomial SE; (b) group sums on the mu*(omega) curve."""
    data = measurement.figure_data
    figure, axes = new_figure(2, width=4.4)
    fraction_axis, manifold_axis = axes[0]
    heads = data["multi_heads"]
    fraction = data["paired_counts"] / data["counts"]
    positions = np.arange(heads.size)
    fraction_axis.errorbar(positions, fraction, data["binomial_se"], ls="none", marker="o",
                           color=MEASURED, capsize=3, label="measured (± binomial SE)")  # fmt: skip
    fraction_axis.axhline(1.0, color=THEORY, label="claim: every run")
    for x, (p, n) in enumerate(zip(data["paired_counts"], data["counts"], strict=True)):
        fraction_axis.annotate(f"{int(p)}/{int(n)}", (x, fraction[x]), textcoords="offset points",
                               xytext=(6, -10), fontsize=7)  # fmt: skip
    fraction_axis.set_xticks(positions, [f"H={int(h)}" for h in heads])
    fraction_axis.set(ylim=(-0.05, 1.15), ylabel="fraction of runs with opposite heads",
                      title=f"(a) runs with a ± pair after {int(data['steps'])} steps")
    fraction_axis.legend(loc="lower left")

    manifold_axis.plot(prediction.figure_data["omega_fine"], prediction.figure_data["mu_star_fine"],
                       color=THEORY, label=r"$\mu^*(\omega)$ (4.6)")  # fmt: skip
    for k, H in enumerate(np.unique(data["paired_heads"])):
        at = data["paired_heads"] == H
        color = PALETTE[k % len(PALETTE)]
        manifold_axis.errorbar(data["omega"][at], data["sum_plus"][at], data["sum_plus_error"][at],
                               ls="none", marker="o", color=color, ms=4,
                               label=rf"H={int(H)}: $\Sigma_+\mu$")  # fmt: skip
        manifold_axis.errorbar(data["omega"][at], -data["sum_minus"][at],
                               data["sum_minus_error"][at], ls="none", marker="x", color=color,
                               ms=5, label=rf"H={int(H)}: $-\Sigma_-\mu$")  # fmt: skip
    if data["omega"].size:
        low, high = data["omega"].min(), data["omega"].max()
        manifold_axis.set_xlim(0.7 * low, 1.4 * high)
        manifold_axis.set_ylim(0.6 * np.interp(1.4 * high, prediction.figure_data["omega_fine"],
                                               prediction.figure_data["mu_star_fine"]),
                               1.5 * np.interp(0.7 * low, prediction.figure_data["omega_fine"],
                                               prediction.figure_data["mu_star_fine"]))  # fmt: skip
    manifold_axis.set(xlabel=r"common KQ scale $\omega$ = mean $|\omega_h|$ (non-dummy)",
                      ylabel="OV group sum", title="(b) HE-MAN (ii): paired members' group sums")
    manifold_axis.legend(fontsize=6.5, ncols=2, loc="upper right")
    return figure


CLAIM_OBS2 = Claim(
    id="HE-OBS2",
    source=Source(PAPER, "3, Obs. 2; 4.2", "(4.4)-(4.8)"),
    statement="Runs with H >= 2 reach opposite heads (two-head runs: (ω, μ), (−ω, −μ)); their "
    "non-dummy heads share |ω_h|, their OV weights sum to zero, and (HE-MAN (ii)) the group sums "
    "lie on the manifold: 2ωΣ₊μ = −2ωΣ₋μ = 2ωμ*(ω) ≈ 1/(1+κ).",
    predict=predict_obs2,
    measure=measure_obs2,
    checks=checks_obs2,
    figure=figure_obs2,
)


# ---------------------------------------------------------------------------------------------
# HE-OBS3: length generalisation (Figure 4)


def _truncated(prompts: Prompts, length: int) -> Prompts:
    """The first ``length`` context examples of each prompt (query kept): nested prompts."""
    return Prompts(prompts.X[..., :length, :], prompts.y[..., :length], prompts.x_query,
                   prompts.y_query, prompts.beta)  # fmt: skip


class _EnsembleAtLength:
    """All selected members' predictions at one test length, computed once per prompt batch."""

    def __init__(self, model, length: int) -> None:
        self.model, self.length = model, length
        self._prompts, self._predictions = None, None

    def member(self, index: int):
        def predict(prompts: Prompts) -> torch.Tensor:
            if prompts is not self._prompts:
                Z = embed(_truncated(prompts, self.length))  # (n, D, length + 1)
                members = self.model.config.ensemble
                self._predictions = self.model(Z.expand(members, *Z.shape))  # (M, n)
                self._prompts = prompts
            return self._predictions[index]

        return predict


def _obs3_theory(params) -> dict[str, np.ndarray]:
    setting, lengths = _setting(params), np.asarray(params["lengths"])
    tests = [Setting(setting.d, int(n), setting.sigma2) for n in lengths]
    eta_d, eta_v = optimal_gd(setting, debiased=True).eta, optimal_gd(setting).eta
    single = single_head_optimum(setting)
    return {
        "dgd": np.array([debiased_gd_risk(eta_d, s) for s in tests], dtype=float),
        "gd": np.array([gd_risk(eta_v, s) for s in tests], dtype=float),
        "single": np.array([approximate_loss(np.array([single.omega]), np.array([single.mu]), s)
                            for s in tests], dtype=float).ravel(),  # fmt: skip
    }


def predict_obs3(params) -> Prediction:
    """Exact dGD/GD risk curves at the training-L optimal steps; L̃ of the best single head."""
    setting, lengths = _setting(params), list(params["lengths"])
    curves = _obs3_theory(params)
    at_train, at_end = lengths.index(setting.L), len(lengths) - 1
    multi = [h for h in params["compare_heads"] if h >= 2]
    decrease_dgd = curves["dgd"][at_train] - curves["dgd"][at_end]
    decrease_single = curves["single"][at_train] - curves["single"][at_end]
    return Prediction(
        values={
            "tf_vs_dgd": np.tile(curves["dgd"], len(multi)),
            "dgd_mc": curves["dgd"],
            "single_minus_multi": curves["single"][at_train] - curves["dgd"][at_train],
            "length_gain": np.array([decrease_single if h == 1 else decrease_dgd
                                     for h in params["compare_heads"]]),  # fmt: skip
        },
        figure_data=curves,
    )


def measure_obs3(params, runtime) -> Measurement:
    """Monte Carlo test MSE on nested prompts (one draw at the largest L', truncated per L').

    Every model and baseline sees the same prompts at every L', so differences between models
    and between lengths are paired. dGD and GD use the steps that are optimal at the training L
    (the reference's Figure 4); "dGD at η_eff" uses each trained model's own
    eta_eff = sum_h omega_h mu_h (the first-order step of (4.10)).
    """
    ensemble = trained_ensemble(params, runtime)
    setting, lengths = _setting(params), [int(n) for n in params["lengths"]]
    d, L, sigma2 = setting.d, setting.L, setting.sigma2
    D = d * (1 + sigma2)
    eta_d, eta_v = L / (L + D), L / (L + D + 1)  # optimal one-step steps at the training L
    members = [representative(ensemble, h) for h in params["compare_heads"]]
    model = ensemble.model(members, runtime.device)
    omega, mu = ensemble.omega[-1, members], ensemble.mu[-1, members]
    eta_eff = (omega * mu).sum(axis=-1)  # (M,)
    predictors = {}
    for n in lengths:
        at = _EnsembleAtLength(model, n)
        for k, h in enumerate(params["compare_heads"]):
            predictors[f"H{h}@{n}"] = at.member(k)
            predictors[f"dGDeff{h}@{n}"] = (
                lambda p, n=n, eta=float(eta_eff[k]): gd_prediction(
                    p.X[:, :n], p.y[:, :n], p.x_query, eta, debiased=True))  # fmt: skip
        predictors[f"dGD@{n}"] = lambda p, n=n: gd_prediction(
            p.X[:, :n], p.y[:, :n], p.x_query, eta_d, debiased=True)
        predictors[f"GD@{n}"] = lambda p, n=n: gd_prediction(p.X[:, :n], p.y[:, :n], p.x_query,
                                                             eta_v)  # fmt: skip
        predictors[f"Bayes@{n}"] = lambda p, n=n: bayes_prediction(p.X[:, :n], p.y[:, :n],
                                                                   p.x_query, sigma2)  # fmt: skip
    longest = max(lengths)

    def sampler(count: int, generator: torch.Generator) -> Prompts:
        return sample_linear_regression(count, d, longest, sigma2, generator=generator,
                                        device=runtime.device)  # fmt: skip

    with torch.no_grad():
        joint = monte_carlo_losses(predictors, sampler, params["n_prompts"], seed=runtime.seed
                                   % (2**62), device=runtime.device,
                                   progress=runtime.show_progress)  # fmt: skip

    def curve(name: str) -> tuple[np.ndarray, np.ndarray]:
        estimates = [joint[f"{name}@{n}"] for n in lengths]
        return np.array([e.mean for e in estimates]), np.array([e.stderr for e in estimates])

    multi = [h for h in params["compare_heads"] if h >= 2]
    tf = [curve(f"H{h}") for h in multi]
    single_gap = joint.difference(f"H1@{L}", f"H{multi[0]}@{L}")
    gains = [joint.difference(f"H{h}@{L}", f"H{h}@{longest}") for h in params["compare_heads"]]
    figure_data = {"lengths": np.array(lengths, dtype=float), "eta_eff": eta_eff,
                   "members": np.array(members, dtype=float)}  # fmt: skip
    for name in [f"H{h}" for h in params["compare_heads"]] + ["dGD", "GD", "Bayes"] + [
        f"dGDeff{h}" for h in params["compare_heads"]
    ]:
        figure_data[f"{name}_mean"], figure_data[f"{name}_se"] = curve(name)
    return Measurement(
        values={
            "tf_vs_dgd": Estimate(np.concatenate([m for m, _ in tf]),
                                  np.concatenate([s for _, s in tf])),  # fmt: skip
            "dgd_mc": Estimate(*curve("dGD")),
            "single_minus_multi": Estimate(single_gap.mean, single_gap.stderr),
            "length_gain": Estimate(np.array([g.mean for g in gains]),
                                    np.array([g.stderr for g in gains])),  # fmt: skip
        },
        figure_data=figure_data,
    )


def checks_obs3(params) -> tuple[Check, ...]:
    qualitative = (
        "The claim is an ordering: the measured difference must be positive and of the theory's "
        "size, 0 < measured < 2 × predicted (rtol 1), beyond 1 paired SE. Only the order of "
        "magnitude is held because the single-head values come from L̃, which at ω = 1/√d is "
        "itself about 8% below the true loss (L̃ 0.372 vs the reference's Monte Carlo 0.405 "
        "at L' = 40)."
    )
    return (
        Check(
            "tf_vs_dgd",
            Tolerance(
                f"Thm 4.2(i): a ± pair differs from debiased GD by O(ω²) (leading term "
                f"∝ η ω² d^1.5 / √L'); the reference's Monte Carlo at ω = 0.13 finds at most "
                f"1.6% (L' = 10), and with the ω² order {params['dgd_rtol']:g} covers trained "
                f"scales up to ω = {0.13 * np.sqrt(params['dgd_rtol'] / 0.016):.2f}. The step "
                f"η_eff differs from η* by ~1%, a second-order change of the risk. Error bar: "
                f"the Monte Carlo SE.",
                rtol=params["dgd_rtol"],
            ),
            f"MSE of H ∈ {[h for h in params['compare_heads'] if h >= 2]} vs R_dGD(η*, L') "
            f"(all L')",
        ),
        Check(
            "dgd_mc",
            ZScore("Exact finite-L risk (§HE-4.3-RISK) against its Monte Carlo estimate on "
                   "the same prompts: only MC error. Resolution 10%: 4 SE of the quick preset's "
                   "16k prompts are about 6% of the risk at L' = 10.", max_z=4.0,
                   rel_resolution=0.1),  # fmt: skip
            "debiased GD (η*) Monte Carlo vs exact risk",
        ),
        Check("single_minus_multi", Tolerance(qualitative, rtol=1.0),
              "MSE(H=1) − MSE(H=2) at L' = L (paired)"),  # fmt: skip
        Check("length_gain", Tolerance(qualitative, rtol=1.0),
              f"MSE(L' = L) − MSE(L' = {max(params['lengths'])}) per H "
              f"{list(params['compare_heads'])} (paired)"),  # fmt: skip
    )


def figure_obs3(params, prediction: Prediction, measurement: Measurement):
    data, curves = measurement.figure_data, prediction.figure_data
    theory = {"dGD η*": curves["dgd"], "GD η*": curves["gd"], "1 head, L̃ at its optimum":
              curves["single"]}  # fmt: skip
    measured = {}
    for h in params["compare_heads"]:
        measured[f"trained H={h}"] = (data[f"H{h}_mean"], data[f"H{h}_se"])
    two = [h for h in params["compare_heads"] if h >= 2][0]
    eta_two = data["eta_eff"][list(params["compare_heads"]).index(two)]
    measured[f"dGD at η_eff={eta_two:.3f} of H={two} (MC)"] = (data[f"dGDeff{two}_mean"],
                                                            data[f"dGDeff{two}_se"])  # fmt: skip
    measured["dGD η* (MC)"] = (data["dGD_mean"], data["dGD_se"])
    measured["Bayes: ridge λ=σ²d (MC)"] = (data["Bayes_mean"], data["Bayes_se"])
    setting = _setting(params)
    return length_generalisation_figure(
        data["lengths"], theory, measured, setting.L, "dGD η*",
        title=f"Test MSE vs L' (trained at L={setting.L}; {params['n_prompts']} shared prompts)",
    )  # fmt: skip


CLAIM_OBS3 = Claim(
    id="HE-OBS3",
    source=Source(PAPER, "3, Obs. 3; 4.3", "Figure 4, (4.11)"),
    statement="Trained models with H >= 2 have nearly the test MSE of debiased one-step GD at "
    "every test length L', the one-head model is worse, and every softmax model improves as L' "
    "grows beyond the training L.",
    predict=predict_obs3,
    measure=measure_obs3,
    checks=checks_obs3,
    figure=figure_obs3,
)


# ---------------------------------------------------------------------------------------------
# HE-OBS4: training dynamics (Figures 5 and 13)


def _rise_and_fall(series: np.ndarray) -> tuple[float, float]:
    """(1, 0) when |omega|(t) peaks inside the run above both ends by NOISE_MARGIN x
    `logging_noise`; (0, 1) when the peak lies in the last quarter (it may still be rising:
    undecided, error 1); (0, 0) otherwise."""
    x = np.abs(series)
    margin, peak = NOISE_MARGIN * logging_noise(x), int(np.argmax(x))
    if peak >= x.size - max(1, x.size // 4) and x[peak] - x[0] > margin:
        return 0.0, 1.0
    rises_and_falls = 0 < peak and x[peak] - x[-1] > margin and x[peak] - x[0] > margin
    return float(rises_and_falls), 0.0


def _largest_drop(series: np.ndarray, start: int) -> float:
    """Largest fall of the smoothed |mu|(t) below its running maximum from log ``start`` on,
    relative to the final |mu| (moving average over 1/20 of the logs removes the Adam noise)."""
    x = np.abs(series[start:])
    width = max(1, series.size // 20)
    if x.size > width:
        x = np.convolve(x, np.ones(width) / width, mode="valid")
    return float(np.max(np.maximum.accumulate(x) - x) / abs(series[-1]))


def _pattern_held(omega: np.ndarray, mu: np.ndarray, multi: bool) -> np.ndarray:
    """Per log: sign-matched non-dummy heads, and (H >= 2) both signs present. (n, H) -> (n,)."""
    held = np.empty(omega.shape[0], dtype=bool)
    for t in range(omega.shape[0]):
        live = ~_dummy(omega[t], mu[t])
        signs = np.sign(omega[t, live])
        held[t] = bool(np.all(signs == np.sign(mu[t, live]))) and (
            not multi or ((signs > 0).any() and (signs < 0).any()))  # fmt: skip
    return held


def predict_obs4(params) -> Prediction:
    setting = _setting(params)
    fine = np.geomspace(0.02, 2.0, 400)
    return Prediction(
        values={"omega_rise_fall": 1.0, "mu_largest_drop": 0.0, "group_sum_largest_drop": 0.0,
                "persistence": 1.0},  # fmt: skip
        figure_data={"omega_fine": fine, "mu_star_fine": manifold_mu(fine, setting),
                     "single_omega": single_head_optimum(setting).omega,
                     "single_mu": single_head_optimum(setting).mu},  # fmt: skip
    )


def measure_obs4(params, runtime) -> Measurement:
    """Per non-dummy head of paired members: rise-and-fall of |omega|, largest drop of |mu|;
    per paired member: the share of logs after the pattern first forms on which it holds."""
    ensemble = trained_ensemble(params, runtime)
    kinds = member_kinds(ensemble)
    rise, rise_error, drop, group_drop, persistence, formed = [], [], [], [], [], []
    for e in np.flatnonzero(kinds.paired):
        H = ensemble.heads[e]
        omega, mu = ensemble.omega[:, e, :H], ensemble.mu[:, e, :H]
        live = ~_dummy(omega[-1], mu[-1])
        held = _pattern_held(omega, mu, multi=True)
        first = int(np.argmax(held)) if held.any() else held.size - 1
        for h in np.flatnonzero(live):
            value, error = _rise_and_fall(omega[:, h])
            rise.append(value)
            rise_error.append(error)
            drop.append(_largest_drop(mu[:, h], first))
        for group in (live & (omega[-1] > 0), live & (omega[-1] < 0)):
            group_drop.append(_largest_drop(mu[:, group].sum(axis=1), first))
        persistence.append(held[first:].mean() if held.any() else 0.0)
        formed.append(float(ensemble.steps[first]))
    shown = [representative(ensemble, h) for h in params["show_heads"]]
    return Measurement(
        values={
            "omega_rise_fall": Estimate(np.array(rise), np.array(rise_error), "bound"),
            "mu_largest_drop": Estimate(np.array(drop), 0.0, "bound"),
            "group_sum_largest_drop": Estimate(np.array(group_drop), 0.0, "bound"),
            "persistence": Estimate(np.array(persistence), 0.0, "bound"),
        },
        figure_data={
            "steps": ensemble.steps.astype(float),
            "shown_heads": ensemble.heads[shown].astype(float),
            "omega": ensemble.omega[:, shown],
            "mu": ensemble.mu[:, shown],
            "formed_at": np.array(formed),
        },
    )


def checks_obs4(params) -> tuple[Check, ...]:
    return (
        Check(
            "omega_rise_fall",
            Tolerance(f"1 when |ω_h(t)| peaks strictly inside the run and the peak exceeds both "
                      f"ends by {NOISE_MARGIN:g} SDs of the Adam noise (residual SD about a line "
                      f"over the last quarter of the logs), else 0; one head without the peak "
                      f"contradicts the claim. A head peaking in the last quarter may still be "
                      f"rising: undecided (error 1, inconclusive).",
                      atol=0.5),  # fmt: skip
            "|ω_h| rises then falls (per non-dummy head of paired members; 1 = yes)",
        ),
        Check(
            "mu_largest_drop",
            Tolerance("'Nearly monotone' after the pattern forms: the largest fall of |μ_h(t)| "
                      "(moving average over 1/20 of the logs, which removes the Adam noise) below "
                      "its running maximum, relative to the final |μ_h|; 5% allowed for "
                      "'nearly'.", atol=0.05),  # fmt: skip
            "largest drop of smoothed |μ_h| / final |μ_h| after formation (per head)",
        ),
        Check(
            "group_sum_largest_drop",
            Tolerance("The same measure for the OV group sums Σ₊μ, Σ₋μ, which the theory "
                      "determines (HE-MAN: heads sharing a KQ scale are interchangeable, only "
                      "their sum is fixed), so a head can hand its share to a same-sign head "
                      "while the sum grows monotonically.", atol=0.05),  # fmt: skip
            "largest drop of smoothed |Σ₊μ|, |Σ₋μ| / final (per group)",
        ),
        Check(
            "persistence",
            Tolerance("'Preserved': the pattern (sign matching, both signs) must hold on the "
                      "logs after it first forms; 5% of the logs are allowed for heads crossing "
                      "the dummy threshold while they form.", atol=0.05),  # fmt: skip
            "share of logs after formation with the pattern (per paired member)",
        ),
    )


def figure_obs4(params, prediction: Prediction, measurement: Measurement):
    """omega_h(t), mu_h(t) of one member per H with the +-omega(T) and +-mu*(omega) guides."""
    data, guide = measurement.figure_data, prediction.figure_data
    heads = data["shown_heads"].astype(int)
    figure, axes = new_figure(len(heads), 2, width=3.2, height=2.6)
    steps = data["steps"]
    for k, H in enumerate(heads):
        omega, mu = data["omega"][:, k, :H], data["mu"][:, k, :H]
        omega_axis, mu_axis = axes[0, k], axes[1, k]
        for h in range(H):
            color = PALETTE[h % len(PALETTE)] if h < len(PALETTE) else MEASURED
            omega_axis.plot(steps, omega[:, h], color=color, lw=1, label=f"head {h + 1}")
            mu_axis.plot(steps, mu[:, h], color=color, lw=1)
        if H == 1:
            levels = (guide["single_omega"], guide["single_mu"])
            label = r"one-head optimum of $\tilde L$: $\omega=1/\sqrt{d}$, $\mu$"
            for axis, level in zip((omega_axis, mu_axis), levels, strict=True):
                axis.axhline(np.sign(omega[-1, 0]) * level, color=THEORY, ls="--", lw=1,
                             label=label)  # fmt: skip
        else:
            live = ~_dummy(omega[-1], mu[-1])
            scale = np.abs(omega[:, live]).mean(axis=1)  # (n,)
            mu_star = np.interp(scale, guide["omega_fine"], guide["mu_star_fine"])
            for sign in (1, -1):
                omega_axis.axhline(sign * scale[-1], color=REFERENCE, ls=":", lw=1,
                                   label=r"$\pm\omega(T)$" if sign > 0 else None)  # fmt: skip
                mu_axis.plot(steps, sign * mu_star, color=THEORY, ls="--", lw=1,
                             label=r"$\pm\mu^*(\bar\omega(t))$: group-sum guide" if sign > 0
                             else None)  # fmt: skip
            positive = live & (omega[-1] > 0)
            negative = live & (omega[-1] < 0)
            mu_axis.plot(steps, mu[:, positive].sum(axis=1), color="black", lw=1.3,
                         label=r"$\Sigma_+\mu$, $\Sigma_-\mu$")  # fmt: skip
            mu_axis.plot(steps, mu[:, negative].sum(axis=1), color="black", lw=1.3)
        omega_axis.set(xscale="log", title=f"H = {H}", ylabel=r"$\omega_h(t)$")
        mu_axis.set(xscale="log", xlabel="Adam step", ylabel=r"$\mu_h(t)$")
        omega_axis.legend(fontsize=6, loc="best")
        mu_axis.legend(fontsize=6, loc="best")
        if H > 1:
            bound = 2.5 * np.abs(mu[-1, live]).sum()
            mu_axis.set_ylim(-bound, bound)
    return figure


CLAIM_OBS4 = Claim(
    id="HE-OBS4",
    source=Source(PAPER, "3, Obs. 4; App. A.1", "Figures 5, 13"),
    statement="During training |ω_h| first rises and then falls, |μ_h| grows nearly "
    "monotonically, and the sign-matched ± pattern, once formed, is preserved (paired members).",
    predict=predict_obs4,
    measure=measure_obs4,
    checks=checks_obs4,
    figure=figure_obs4,
)

CLAIMS = (CLAIM_OBS1, CLAIM_OBS2, CLAIM_OBS3, CLAIM_OBS4)
