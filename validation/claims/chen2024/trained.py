"""Trained encoders on sparse regression, Chen, Zhao, Zou (2024) §3, §6, App. B (Figures 1b-d,
2b, 3-8): more heads help, layer 1 uses every head and later layers one, pruning, P-probing.

The models (`_encoders`): encoders of `numerics.encoder` trained by `numerics.encoder_training`,
one ensemble per h, one member per (replicate, sigma), the same members' noise levels for
every h so that member e of each h is evaluated on the same prompts (paired).

- CZZ-HEADS (Figures 1b, 3): ICL excess risk against n beside OLS (minimum norm), ridge and
  Lasso (each oracle-tuned over {1, ..., 1e-4} on tuning prompts, read on the evaluation ones).
  Checks, per sigma, averaged over the n grid: risk(h_k) - risk(h_{k+1}) >= 0 for consecutive
  trained h (more heads do not hurt; h = 1 comes first, so it is the worst), and at few shots
  (n <= ``few_shot``) risk(OLS) - risk(h_max) >= 0 and risk(ridge) - risk(h_max) >= 0.
- CZZ-IMPORTANCE (Figures 1c, 4): W (3.1) per (layer, head) by masking each head at n = 10,
  q = 1; the effective number of heads 1 / sum_j W_ij^2 per layer, averaged over the models
  (bootstrap SE over models); layer 1 >= (1 + h) / 2 and every later layer <= (1 + h) / 2
  (the midpoint between "one head" and "all heads"). Reported beside: App. B's sorted average,
  every model's unsorted matrix and the share of single models showing the pattern.
- CZZ-PRUNE (Figures 1d, 5-8): each h_max model pruned to every head of layer 1 and its own
  most important head in each later layer, fine-tuned; ridge probes (lambda ``probe_lam``) from
  the query token after the embedding and after each layer to the query label; per layer
  >= 1 the pruned model's probe risk is closer to the unpruned model's than the 1-head model's
  is: |one - unpruned| - |pruned - unpruned| >= 0.
- CZZ-PPROBE (Figure 2b): GD on the layer-1 query representations of n = 117, q = 11 prompts,
  the learning rate from {1, ..., 1e-6} by lowest mean final risk on tuning prompts: the final
  risk(h = 1) - risk(h) >= 0 for every trained h > 1, per sigma.

The paper's statements are about trained models: its models beat tuned ridge at few shots
(Figures 1b, 3). IMPORTANCE, PRUNE, PPROBE and HEADS's two baseline checks are judged only for
models in that regime: the h_max models' risk at n = 10 below tuned ridge's by 3 paired SEs
(`_encoders.regime`). Outside it their measurements carry the whole range of the quantity as
uncertainty (h effective heads, the null risk s for a risk difference), so they read
inconclusive, never a contradiction, and the report says so; a value outside the quantity's
possible range is still rejected.
(Effective heads lie in (0, h]: masking a head can lower the risk, so W may have negative
entries and 1/ΣW² may fall below 1; it is <= h by Cauchy-Schwarz, the row summing to 1.)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from icl_verify.validation.claim import (
    Check,
    Claim,
    Estimate,
    Inequality,
    Measurement,
    Prediction,
    Source,
)
from icl_verify.validation.claims.chen2024._encoders import (
    EVAL_N,
    GRID,
    MAX_Z,
    REGIME_WHY,
    EncoderParams,
    all_trainings,
    encoder_presets,
    gated,
    per_sigma,
    per_sigma_se,
    regime,
    regime_data,
    regime_line,
    trained_ensembles,
    training,
)
from icl_verify.validation.params import ParameterError, param

from icl_verify import numerics
from icl_verify.statistics import bootstrap_se, mean_se, paired_difference

PAPER = "Chen et al. 2024"
PAPER_RATES = (1.0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)  # P-probing (reference §2.5)
# Lasso is drawn, not checked, solved by FISTA to a KKT violation (sup norm of the gradient
# beyond alpha) of 1e-3: at n << d FISTA stalls (n = 4, 1920 prompts: 1.3e-5 left after 200k
# iterations, 250 s; n = 2: 1.2e-3 after 20k), so the drawn Lasso curve is accurate to that
# stopping point only, and left out (NaN, said in the table) at an n where it is not reached.
LASSO_TOL = 1e-3


def _multi_head_trainings(params: EncoderParams) -> tuple:
    """``Claim.trains`` of CZZ-IMPORTANCE, which reads the h > 1 models only: listed before
    CZZ-HEADS in the catalogue, it starts their training while CZZ-HEADS trains h = 1 on
    another worker (`runner.schedule`)."""
    return tuple(training(params, h) for h in params.heads if h > 1)


# ---------------------------------------------------------------------------------------------
# CZZ-HEADS


@dataclass(frozen=True, kw_only=True)
class HeadsParams(EncoderParams):
    """CZZ-HEADS: the evaluation n grid, few shots, prompts."""

    n_eval: tuple[int, ...] = param(help="in-context examples n of the curves", low=1)
    few_shot: int = param(EVAL_N, help="largest n of 'few shots' (beats OLS and ridge)", low=1)
    n_tune: int = param(help="prompts per member and n tuning ridge and Lasso", low=2)
    n_prompts: int = param(help="prompts per member and n where risks are read", low=2)

    def validate(self) -> None:
        super().validate()
        if min(self.n_eval) > self.few_shot:
            raise ParameterError(
                f"few_shot must be >= the smallest n_eval = {min(self.n_eval)}, got {self.few_shot}"
            )


def predict_heads(params: HeadsParams) -> Prediction:
    """The paper's ordering: every paired gap >= 0 (Figures 1b, 3)."""
    k = len(params.sigmas)
    return Prediction(
        values={
            "more_heads": np.zeros((len(params.heads) - 1, k)),
            "beats_ols": np.zeros(k),
            "beats_ridge": np.zeros(k),
        },
        figure_data={"null_risk": float(params.s)},
    )


def measure_heads(params: HeadsParams, runtime) -> Measurement:
    """Per n: fresh prompts per member, each h's squared errors, OLS, tuned ridge and Lasso."""
    trained = trained_ensembles(params, runtime)
    gate = regime(params, runtime, trained[max(params.heads)])
    per_n = []
    for i, n in enumerate(runtime.progress(params.n_eval, "n")):
        compared = numerics.compare_with_baselines(
            list(trained.values()), n, n_tune=params.n_tune, n_read=params.n_prompts, grid=GRID,
            lasso_tol=LASSO_TOL, seed=runtime.seed_for(f"prompts-{i}"), device=runtime.device,
        )  # fmt: skip
        per_n.append([*compared.encoders, compared.ols, compared.ridge, compared.lasso])
    names = [f"h{h}" for h in params.heads] + ["ols", "ridge", "lasso"]
    errors = dict(zip(names, np.stack(per_n, axis=2), strict=True))  # each (E, n, prompts)
    R, few = params.replicates, np.asarray(params.n_eval) <= params.few_shot
    pairs = [  # over every n
        numerics.noise_level_gap(errors[f"h{a}"], errors[f"h{b}"], R)
        for a, b in itertools.pairwise(params.heads)
    ]
    values = {"more_heads": Estimate([p[0] for p in pairs], [p[1] for p in pairs])}
    for name in ("ols", "ridge"):  # at few shots, against the h_max models
        gap = numerics.noise_level_gap(errors[name][:, few], errors[names[-4]][:, few], R)
        values[f"beats_{name}"] = gated(Estimate(*gap), gate, float(params.s))
    data = {"n": np.asarray(params.n_eval, dtype=float)} | regime_data(gate)
    for name, value in errors.items():  # per sigma and n: mean over replicates and prompts
        data[f"{name}_mean"], data[f"{name}_se"] = per_sigma_se(*mean_se(value), params)
    return Measurement(values=values, figure_data=data)


def checks_heads(params: HeadsParams) -> tuple[Check, ...]:
    why = (
        "Paired Monte Carlo: member e of every h and the baselines on the same prompts, "
        "excess risks against the noiseless label (transformer) or exact (baselines, tuned on "
        f"separate prompts); SE from {params.n_prompts} prompts per member and n, independent "
        f"across n; one-sided, {MAX_Z:g} SE, no margin. beats_ols and beats_ridge: " + REGIME_WHY
    )
    return (
        Check("more_heads", Inequality("at_least", why, max_z=MAX_Z),
              "risk(h_k) − risk(h_{k+1}) per σ, mean over n ≥ 0"),
        Check("beats_ols", Inequality("at_least", why, max_z=MAX_Z),
              f"risk(OLS) − risk(h_max), n ≤ {params.few_shot} ≥ 0"),
        Check("beats_ridge", Inequality("at_least", why, max_z=MAX_Z),
              f"risk(ridge) − risk(h_max), n ≤ {params.few_shot} ≥ 0"),
    )  # fmt: skip


def heads_beat_ols_by_the_null_risk(params: HeadsParams, prediction: Prediction) -> Prediction:
    """Wrong: transformers beat OLS at few shots by three null risks 3s (OLS's own risk is
    about s(1 - n/d) + noise for n < d, so no model can)."""
    return prediction.with_values(beats_ols=np.full(len(params.sigmas), 3.0 * params.s))


def table_heads(params: HeadsParams, prediction: Prediction, measurement: Measurement) -> str:
    data = measurement.figure_data
    names = [f"h{h}" for h in params.heads] + ["ols", "ridge", "lasso"]
    head = (
        "| σ | n | " + " | ".join(f"h = {n[1:]}" if n.startswith("h") else n for n in names) + " |"
    )
    rows = [
        regime_line(params, data), "",
        f"Figures 1b/3 (d={params.d}, s={params.s}, d_hid={params.d_hid}, {params.layers} "
        f"layers, {params.steps} steps, {params.replicates} model(s) per σ): excess risk ± SE, "
        f"{params.n_prompts} prompts per member and n.", "", head,
        "|" + "---|" * (len(names) + 2),
    ]  # fmt: skip
    for k, sigma in enumerate(params.sigmas):
        for i, n in enumerate(params.n_eval):
            cells = [f"{data[f'{m}_mean'][k][i]:.3f} ± {data[f'{m}_se'][k][i]:.3f}" for m in names]
            rows.append(f"| {sigma:g} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


HEADS_PRESETS = encoder_presets(
    HeadsParams,
    smoke=dict(n_eval=(4, 10), n_tune=32, n_prompts=64),
    quick=dict(n_eval=(4, 6, 8, 10, 12, 16, 20, 24), n_tune=128,
               n_prompts=512),
    paper=dict(n_eval=tuple(range(1, 26)), n_tune=1024, n_prompts=2048),
)  # fmt: skip

CLAIM_HEADS = Claim(
    id="CZZ-HEADS",
    source=Source(PAPER, "3, App. B; Figures 1b, 3"),
    statement="Trained encoders' ICL excess risk falls with more heads (h = 1 worst) at every "
    "noise level, and at few shots (n <= 10 < d = 16) they beat OLS and tuned ridge.",
    params=HeadsParams,
    presets=HEADS_PRESETS,
    predict=predict_heads,
    measure=measure_heads,
    checks=checks_heads,
    figure="trained_encoders:figure_heads",
    table=table_heads,
    wrong=heads_beat_ols_by_the_null_risk,
    trains=all_trainings,
    summary=(
        "risk against n for each h beside OLS, tuned ridge and Lasso on the same prompts: more "
        "heads never hurt (risk(h_k) − risk(h_{k+1}) ≥ 0, mean over n); at n ≤ 10 the h_max "
        "models beat OLS and ridge"
    ),
    catalogue=(2, 2),
)


# ---------------------------------------------------------------------------------------------
# CZZ-IMPORTANCE


@dataclass(frozen=True, kw_only=True)
class ImportanceParams(EncoderParams):
    """CZZ-IMPORTANCE: the masking prompts and the bootstrap."""

    n_prompts: int = param(help="prompts per member (n = 10, q = 1; the paper: 8192)", low=2)
    bootstrap: int = param(2000, help="bootstrap resamples of the models", low=10)


def predict_importance(params: ImportanceParams) -> Prediction:
    """Layer 1 uses every head, each later layer one: thresholds (1 + h) / 2 per h > 1."""
    multi = [h for h in params.heads if h > 1]
    middle = np.array([(1 + h) / 2 for h in multi])
    return Prediction(
        values={
            "layer_1": middle,
            "later_layers": np.repeat(middle[:, None], params.layers - 1, axis=1),
        },
        figure_data={"heads": np.array(multi, dtype=float)},
    )


def measure_importance(params: ImportanceParams, runtime) -> Measurement:
    """Per h > 1: W (3.1) of every model on the same prompts, effective heads per layer."""
    multi = [h for h in params.heads if h > 1]
    trained = trained_ensembles(params, runtime, multi)
    gate = regime(params, runtime, trained[max(params.heads)])
    layer_1, later, data = [], [], regime_data(gate)
    for h in multi:
        importance = numerics.masked_importance(
            trained[h], EVAL_N, count=params.n_prompts, seed=runtime.seed_for("masking"),
            device=runtime.device,
        )  # fmt: skip
        effective = numerics.effective_heads(importance.weights)  # (E, layers)
        mean = np.nanmean(effective, axis=0)
        se = bootstrap_se(effective, params.bootstrap, runtime.rng(f"bootstrap-{h}"))
        pattern = (effective[:, 0] >= (1 + h) / 2) & np.all(effective[:, 1:] <= (1 + h) / 2, 1)
        layer_1.append((mean[0], se[0]))
        later.append((mean[1:], se[1:]))
        data.update({
            f"h{h}_weights": importance.weights, f"h{h}_delta": importance.delta,
            f"h{h}_delta_se": importance.delta_se, f"h{h}_effective": effective,
            f"h{h}_sorted": numerics.sorted_average(importance.weights),
            f"h{h}_pattern_share": float(pattern.mean()), f"h{h}_intact": importance.intact,
        })  # fmt: skip
    scale = float(max(params.heads))  # 1/sum W^2 lies in (0, h] (W may have negative entries)
    values = {
        "layer_1": gated(Estimate(*map(list, zip(*layer_1, strict=True))), gate, scale),
        "later_layers": gated(Estimate(*map(list, zip(*later, strict=True))), gate, scale),
    }
    return Measurement(values=values, figure_data=data)


def checks_importance(params: ImportanceParams) -> tuple[Check, ...]:
    why = (
        f"Effective heads 1/ΣW² averaged over the {len(params.member_sigmas)} models of each h, "
        f"SE by bootstrap over the models ({params.bootstrap} resamples); the threshold "
        "(1 + h)/2 is the midpoint between one head and all h; one-sided at "
        f"{MAX_Z:g} SE. " + REGIME_WHY
    )
    return (
        Check("layer_1", Inequality("at_least", why, max_z=MAX_Z), "layer 1: effective heads"),
        Check("later_layers", Inequality("at_most", why, max_z=MAX_Z),
              "layers ≥ 2: effective heads"),
    )  # fmt: skip


def importance_flat_everywhere(params: ImportanceParams, prediction: Prediction) -> Prediction:
    """Wrong: layer 1 has 2h + 1 effective heads (impossible: 1/ΣW² <= h when the row sums
    to 1, by Cauchy-Schwarz)."""
    return prediction.with_values(layer_1=2.0 * prediction.figure_data["heads"] + 1.0)


def table_importance(
    params: ImportanceParams, prediction: Prediction, measurement: Measurement
) -> str:
    data = measurement.figure_data
    rows = [regime_line(params, data), ""]
    for h in [h for h in params.heads if h > 1]:
        eff = np.asarray(data[f"h{h}_effective"])
        rows += [
            f"h = {h}: effective heads per layer (model rows: σ, replicate); single models "
            f"showing the pattern: {data[f'h{h}_pattern_share']:.0%}.", "",
            "| model | σ | " + " | ".join(f"layer {i + 1}" for i in range(params.layers))
            + " | W (unsorted rows) |",
            "|" + "---|" * (params.layers + 3),
        ]  # fmt: skip
        for e, sigma in enumerate(params.member_sigmas):
            W = np.asarray(data[f"h{h}_weights"])[e]
            matrix = "; ".join(" ".join(f"{v:+.2f}" for v in row) for row in W)
            rows.append(f"| {e} | {sigma:g} | " + " | ".join(f"{v:.2f}" for v in eff[e])
                        + f" | {matrix} |")  # fmt: skip
        rows.append("")
    return "\n".join(rows)


IMPORTANCE_PRESETS = encoder_presets(
    ImportanceParams,
    smoke=dict(n_prompts=128, bootstrap=100),
    quick=dict(n_prompts=2048),
    paper=dict(n_prompts=8192),  # reference §2.3
)

CLAIM_IMPORTANCE = Claim(
    id="CZZ-IMPORTANCE",
    source=Source(PAPER, "3, App. B", "(3.1); Figures 1c, 4"),
    statement="In trained encoders, masking heads shows layer 1 using all its heads (effective "
    "number 1/ΣW² near h) and every later layer dominated by one head (near 1).",
    params=ImportanceParams,
    presets=IMPORTANCE_PRESETS,
    predict=predict_importance,
    measure=measure_importance,
    checks=checks_importance,
    figure="trained_encoders:figure_importance",
    table=table_importance,
    wrong=importance_flat_everywhere,
    trains=_multi_head_trainings,
    summary=(
        "W (3.1) by masking each head at n = 10; effective heads 1/ΣW² per layer, mean over "
        "models with a bootstrap SE: layer 1 ≥ (1+h)/2, later layers ≤ (1+h)/2; App. B's "
        "sorted average, every model's matrix, the share of single models with the pattern"
    ),
    catalogue=(2, 1),
)


# ---------------------------------------------------------------------------------------------
# CZZ-PRUNE


@dataclass(frozen=True, kw_only=True)
class PruneParams(EncoderParams):
    """CZZ-PRUNE: importance prompts, fine-tuning, probes."""

    n_importance: int = param(help="prompts per member choosing the kept heads", low=2)
    prune_steps: int = param(help="fine-tuning steps of the pruned model (paper: 60k)", low=1)
    n_fit: int = param(help="prompts per member fitting each probe", low=2)
    n_prompts: int = param(help="prompts per member reading each probe", low=2)
    probe_lam: float = param(1e-3, help="ridge penalty of the probes (on the weights)", low=0)


def predict_prune(params: PruneParams) -> Prediction:
    return Prediction(
        values={"closer": np.zeros(params.layers)},
        figure_data={"null_risk": float(params.s)},
    )


def measure_prune(params: PruneParams, runtime) -> Measurement:
    """Prune the h_max models by their own W, fine-tune (cached), probe the three models."""
    h = max(params.heads)
    trained = trained_ensembles(params, runtime, [h, 1])
    gate = regime(params, runtime, trained[h])
    importance = numerics.masked_importance(
        trained[h], EVAL_N, count=params.n_importance, seed=runtime.seed_for("importance"),
        device=runtime.device,
    )  # fmt: skip
    kept = numerics.pruned_heads(importance.weights)
    kept = tuple(tuple(tuple(row) for row in member) for member in kept.tolist())
    pruned = runtime.trained(numerics.PrunedTraining(training(params, h), kept, params.prune_steps))
    probe = dict(
        n_fit=params.n_fit, n_read=params.n_prompts, lam=params.probe_lam,
        fit_seed=runtime.seed_for("probe-fit"), read_seed=runtime.seed_for("probe-read"),
        device=runtime.device,
    )  # fmt: skip
    errors = {
        name: numerics.layer_probe_errors(model, EVAL_N, **probe)
        for name, model in (("pruned", pruned), ("unpruned", trained[h]), ("one_head", trained[1]))
    }  # each (E, layers + 1, prompts)
    data = regime_data(gate) | {"kept": kept}
    for name, value in errors.items():
        data[f"{name}_mean"] = value.mean(axis=(0, 2))  # (layers + 1,)
        data[f"{name}_se"] = mean_se(value.mean(axis=0))[1]
        data[f"{name}_per_sigma"] = per_sigma(value.mean(axis=2), params)  # (sigmas, layers+1)
    unpruned = errors["unpruned"].mean(axis=0)  # (layers + 1, prompts): mean over the members
    one, one_se = paired_difference(errors["one_head"].mean(axis=0), unpruned)
    near, near_se = paired_difference(errors["pruned"].mean(axis=0), unpruned)
    closer = Estimate((np.abs(one) - np.abs(near))[1:], (one_se + near_se)[1:])
    return Measurement(values={"closer": gated(closer, gate, float(params.s))}, figure_data=data)


def checks_prune(params: PruneParams) -> tuple[Check, ...]:
    why = (
        "Paired: the three models' probes read on the same prompts (member e of each, same σ); "
        "SE of |a| − |b| bounded by SE(a) + SE(b), each a paired SE over "
        f"{params.n_prompts} prompts; one-sided, {MAX_Z:g} SE. " + REGIME_WHY
    )
    return (
        Check("closer", Inequality("at_least", why, max_z=MAX_Z),
              "per layer ≥ 1: |1-head − unpruned| − |pruned − unpruned|"),
    )  # fmt: skip


def prune_far_apart(params: PruneParams, prediction: Prediction) -> Prediction:
    """Wrong: the pruned model is closer than the 1-head model by three null risks (every
    probe risk here is at most about s, so no gap reaches 3s)."""
    return prediction.with_values(closer=np.full(params.layers, 3.0 * params.s))


def table_prune(params: PruneParams, prediction: Prediction, measurement: Measurement) -> str:
    data = measurement.figure_data
    h = max(params.heads)
    rows = [
        regime_line(params, data), "",
        f"Figure 1d / 5-8: probe excess risk (ridge λ = {params.probe_lam:g}, query token, "
        f"{params.n_fit} fitting and {params.n_prompts} reading prompts per model), mean over "
        f"the models; pruned = h = {h} with layer 1 whole and one head per later layer, "
        f"fine-tuned {params.prune_steps} steps.", "",
        "| representation | pruned | unpruned | 1 head |", "|---|---|---|---|",
    ]  # fmt: skip
    for i in range(params.layers + 1):
        where = "embedding" if i == 0 else f"after layer {i}"
        cells = [f"{data[f'{m}_mean'][i]:.3f} ± {data[f'{m}_se'][i]:.3f}"
                 for m in ("pruned", "unpruned", "one_head")]  # fmt: skip
        rows.append(f"| {where} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


PRUNE_PRESETS = encoder_presets(
    PruneParams,
    smoke=dict(n_importance=64, prune_steps=20, n_fit=64, n_prompts=64),
    quick=dict(n_importance=1024, prune_steps=1000, n_fit=1024, n_prompts=1024),
    paper=dict(n_importance=8192, prune_steps=60_000, n_fit=8192,
               n_prompts=8192),
)  # fmt: skip

CLAIM_PRUNE = Claim(
    id="CZZ-PRUNE",
    source=Source(PAPER, "3, App. B; Figures 1d, 5-8"),
    statement="Pruned to every head of layer 1 and one head per later layer and fine-tuned, a "
    "trained encoder's layer-by-layer probe risks stay close to the unpruned model's, while a "
    "1-head model's lie apart (the difference made in layer 1).",
    params=PruneParams,
    presets=PRUNE_PRESETS,
    predict=predict_prune,
    measure=measure_prune,
    checks=checks_prune,
    figure="trained_encoders:figure_prune",
    table=table_prune,
    wrong=prune_far_apart,
    trains=all_trainings,
    summary=(
        "prune to layer 1 whole + each later layer's top head (each model's own W), fine-tune; "
        "ridge probes (λ = 1e-3, query token) per layer: the pruned model closer to the "
        "unpruned than the 1-head model is"
    ),
    catalogue=(2, 3),
)


# ---------------------------------------------------------------------------------------------
# CZZ-PPROBE


@dataclass(frozen=True, kw_only=True)
class PProbeParams(EncoderParams):
    """CZZ-PPROBE: the long prompts, GD steps, rates."""

    n_probe: int = param(117, help="labelled examples of the P-probing prompts", low=1)
    q_probe: int = param(11, help="queries of the P-probing prompts (GD on q - 1)", low=2)
    gd_steps: int = param(help="GD steps on the query representations", low=1)
    records: int = param(30, help="equally spaced recorded steps", low=1)
    rates: tuple[float, ...] = param(PAPER_RATES, help="learning-rate grid", low=0, low_open=True)
    n_tune: int = param(help="prompts per member choosing the rate", low=2)
    n_prompts: int = param(help="prompts per member where the paths are read", low=2)


def predict_pprobe(params: PProbeParams) -> Prediction:
    multi = [h for h in params.heads if h > 1]
    return Prediction(
        values={"gap": np.zeros((len(multi), len(params.sigmas)))},
        figure_data={"null_risk": float(params.s)},
    )


def measure_pprobe(params: PProbeParams, runtime) -> Measurement:
    """Layer-1 query states of the long prompts, GD on them per h, paired final gaps."""
    trained = trained_ensembles(params, runtime)
    gate = regime(params, runtime, trained[max(params.heads)])
    steps = np.unique(np.round(np.linspace(0, params.gd_steps, params.records + 1))).astype(int)
    finals, data = {}, regime_data(gate) | {"steps": steps.astype(float)}
    for h, ensemble in trained.items():
        result = numerics.encoder_p_probe(
            ensemble, params.n_probe, params.q_probe, layer=1, rates=params.rates, steps=steps,
            n_tune=params.n_tune, n_read=params.n_prompts, tune_seed=runtime.seed_for("tune"),
            read_seed=runtime.seed_for("read"), device=runtime.device,
        )  # fmt: skip
        finals[h] = result.risks[:, -1]  # (E, prompts)
        data[f"h{h}_mean"], data[f"h{h}_se"] = per_sigma_se(*mean_se(result.risks), params)
        data[f"h{h}_rate"] = result.rate
    multi = [h for h in params.heads if h > 1]
    gaps = [numerics.noise_level_gap(finals[1], finals[h], params.replicates) for h in multi]
    gap = Estimate([g[0] for g in gaps], [g[1] for g in gaps])
    return Measurement(values={"gap": gated(gap, gate, float(params.s))}, figure_data=data)


def checks_pprobe(params: PProbeParams) -> tuple[Check, ...]:
    why = (
        "Paired: the h = 1 and h models' representations of the same prompts (member e of each, "
        f"same σ), each rate chosen on {params.n_tune} separate prompts; SE over "
        f"{params.n_prompts} prompts per model; one-sided, {MAX_Z:g} SE. " + REGIME_WHY
    )
    return (
        Check("gap", Inequality("at_least", why, max_z=MAX_Z),
              "final risk(h = 1) − risk(h) per σ"),
    )  # fmt: skip


def pprobe_far_apart(params: PProbeParams, prediction: Prediction) -> Prediction:
    """Wrong: the gap exceeds three null risks (the tuned path never ends far above s)."""
    return prediction.with_values(gap=np.full_like(prediction.values["gap"], 3.0 * params.s))


def table_pprobe(params: PProbeParams, prediction: Prediction, measurement: Measurement) -> str:
    data = measurement.figure_data
    rows = [
        regime_line(params, data), "",
        f"Figure 2b: P-probing (n = {params.n_probe}, q = {params.q_probe}, layer-1 query "
        f"states, {params.gd_steps} GD steps), final excess risk ± SE per σ; chosen rates per "
        "model in brackets.", "",
        "| σ | " + " | ".join(f"h = {h}" for h in params.heads) + " |",
        "|" + "---|" * (len(params.heads) + 1),
    ]  # fmt: skip
    k = len(params.sigmas)
    for i, sigma in enumerate(params.sigmas):
        cells = []
        for h in params.heads:
            rates = ", ".join(f"{r:g}" for r in np.asarray(data[f"h{h}_rate"])[i::k])
            cells.append(f"{data[f'h{h}_mean'][i][-1]:.3f} ± {data[f'h{h}_se'][i][-1]:.3f} "
                         f"[{rates}]")  # fmt: skip
        rows.append(f"| {sigma:g} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


PPROBE_PRESETS = encoder_presets(
    PProbeParams,
    smoke=dict(gd_steps=100, records=5, n_tune=32, n_prompts=64),
    quick=dict(gd_steps=3000, n_tune=256, n_prompts=512),
    paper=dict(gd_steps=9000, n_tune=1024, n_prompts=1024),  # reference §2.5
)

CLAIM_PPROBE = Claim(
    id="CZZ-PPROBE",
    source=Source(PAPER, "6, App. B; Figure 2b"),
    statement="GD on the first layer's query representations (n = 117, q = 11 prompts, rate "
    "tuned over {1, …, 1e-6}) ends at a lower excess risk for h ∈ {4, 8} heads than for h = 1.",
    params=PProbeParams,
    presets=PPROBE_PRESETS,
    predict=predict_pprobe,
    measure=measure_pprobe,
    checks=checks_pprobe,
    figure="trained_encoders:figure_pprobe",
    table=table_pprobe,
    wrong=pprobe_far_apart,
    trains=all_trainings,
    summary=(
        "GD on the layer-1 query states of n = 117, q = 11 prompts, rate from the paper's "
        "grid: final risk(h = 1) − risk(h) ≥ 0"
    ),
    catalogue=(2, 4),
)

CLAIMS = (CLAIM_HEADS, CLAIM_IMPORTANCE, CLAIM_PRUNE, CLAIM_PPROBE)
