"""The explicit transformers of Chen, Zhao, Zou (2024) Props. 4.1 and 4.2, on random sizes.

- CZZ-P4.1 (Prop. 4.1/C.1, Eq. (4.2)): one linear-attention layer with d heads of dim 3
  (d_hid = 3d) outputs Algorithm 1's data: rows 1..d hold ``x_tilde = r_hat * x`` for the
  examples and the queries, row d+1 the labels with 0 at the queries (compared at the first
  two and last two examples and every query, `compared_columns`).
- CZZ-P4.2 (Prop. 4.2/C.2, eq. (4.3)): stacking t single-head GD layers on it, the (t+1)-layer
  network predicts ``<w_tilde^t, R_hat x_{n+i}>`` at every query, all q queries in parallel.

Reading of the paper's typos (reference chen2024 §7 items 1-2): W_E acts as a (3d, d+1) matrix
on the prompt (2.3), the GD layers' value weight hits the label row d+1, and the read-out is
``W_O = -e_{d+1}`` (the label slots hold minus the prediction); the paper's literal +e_{d+1}
would return the negated prediction, which is CZZ-P4.2's wrong prediction.

Each run draws random configurations (d, n, q, t, eta) from ``design_seed`` and a few prompts
each (sparse regression, s uniform in [1, d]); eta is ``rho / (t lambda_abs)``, rho uniform in
[eta_scale_min, eta_scale_max] and lambda_abs the top eigenvalue of ``|X_tilde|^T |X_tilde| / n``
(abs values): then the absolute evaluation f_abs grows by at most ``e^rho`` over the t steps,
which keeps the rounding bound meaningful (with eta at a fixed fraction of the stable range,
f_abs grows like (1 + c d)^t and the bound says nothing at d = 32, t = 20). Such eta lies in
GD's stable range: ``eta lambda_max(G_tilde) <= rho / t``.

Prediction: `theory.constructions` (numpy float64 Algorithm 1 and GD). Measurement:
`numerics.preprocessing_layer_output` and `numerics.gd_layer_readouts`, the network with the
constructed weights (`numerics.linear_transformer`), in float64 and in float32 (weights and
prompts cast), on the CPU whatever the run's device. Both are divided elementwise by the
prompts' absolute evaluation f_abs (`theory.constructions.absolute_evaluation`, float64, the
scale of the bound), and compared with a Tolerance equal to the stated rounding bound
(`theory.constructions.normalised_error_bound`). Figures: `figures.constructions`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icl_verify.theory.constructions import (
    absolute_evaluation,
    normalised_error_bound,
    preprocessed_gd_predictions,
    preprocessed_prompt,
)
from icl_verify.validation.claim import (
    Check,
    Claim,
    Estimate,
    Measurement,
    Prediction,
    Source,
    Tolerance,
)
from icl_verify.validation.params import ParameterError, Params, check_order, param

from icl_verify import numerics

PAPER = "Chen et al. 2024"
PRECISIONS = ("float64", "float32")


@dataclass(frozen=True, kw_only=True)
class ConstructionParams(Params):
    """CZZ-P4.1: random (d, n, q) configurations, a few sparse-regression prompts each."""

    n_configs: int = param(help="random configurations (d, n, q[, t, eta])", low=1)
    n_prompts: int = param(4, help="prompts per configuration", low=1)
    d_min: int = param(1, help="smallest covariate dimension d (uniform in [d_min, d_max])", low=1)
    d_max: int = param(help="largest covariate dimension d", low=1)
    n_min: int = param(
        1, help="fewest in-context examples n (log-uniform in [n_min, n_max])", low=1
    )
    n_max: int = param(help="most in-context examples n", low=1)
    q_max: int = param(help="most queries q (uniform in [1, q_max])", low=1)
    sigma: float = param(0.1, help="label-noise standard deviation sigma", low=0)
    design_seed: int = param(2024, help="seed of the configurations and prompts", low=0)

    def validate(self) -> None:
        for low, high in (("d_min", "d_max"), ("n_min", "n_max")):
            if getattr(self, low) > getattr(self, high):
                raise ParameterError(
                    f"{low} must be <= {high}, got {low}={getattr(self, low)}, "
                    f"{high}={getattr(self, high)}"
                )


@dataclass(frozen=True, kw_only=True)
class GDConstructionParams(ConstructionParams):
    """CZZ-P4.2: as CZZ-P4.1, with t GD layers (uniform in [1, t_max]) and a step size eta."""

    t_max: int = param(help="most GD layers t", low=1)
    eta_scale_min: float = param(
        0.1, help="smallest rho = eta t lambda_abs (eta's scale, see module)", low=0, low_open=True
    )
    eta_scale_max: float = param(2.0, help="largest rho = eta t lambda_abs", low=0, low_open=True)

    def validate(self) -> None:
        super().validate()
        check_order(self, "eta_scale_min", "eta_scale_max")


PRESETS_41 = {
    "smoke": ConstructionParams(n_configs=4, n_prompts=2, d_max=6, n_max=20, q_max=3),
    "quick": ConstructionParams(n_configs=32, n_prompts=1, d_max=24, n_max=192, q_max=4),
    "paper": ConstructionParams(n_configs=100, n_prompts=1, d_max=32, n_max=256, q_max=8),
}
PRESETS_42 = {
    "smoke": GDConstructionParams(n_configs=4, n_prompts=2, d_max=6, n_max=20, q_max=3, t_max=3),
    "quick": GDConstructionParams(
        n_configs=32, n_prompts=2, d_max=24, n_max=192, q_max=4, t_max=12
    ),
    "paper": GDConstructionParams(
        n_configs=100, n_prompts=2, d_max=32, n_max=256, q_max=8, t_max=20
    ),
}


@dataclass(frozen=True)
class Configuration:
    """One random configuration: sizes, step size and its prompts (float64 numpy)."""

    d: int
    n: int
    q: int
    t: int  # GD layers (0 for CZZ-P4.1)
    eta: float  # step size (1.0, unused, when t = 0)
    X: np.ndarray  # (B, n, d)
    y: np.ndarray  # (B, n)
    X_query: np.ndarray  # (B, q, d)


def _absolute_top_eigenvalue(X: np.ndarray, y: np.ndarray) -> float:
    """Largest over prompts of lambda_max(|X_tilde|^T |X_tilde| / n), |X_tilde| = |X| r_abs."""
    n = X.shape[-2]
    r_abs = np.einsum("bnd,bn->bd", np.abs(X), np.abs(y)) / n  # (B, d)
    X_abs = np.abs(X) * r_abs[:, None, :]  # (B, n, d)
    return float(np.linalg.eigvalsh(np.swapaxes(X_abs, -1, -2) @ X_abs / n).max())


def draw_configurations(params: ConstructionParams) -> tuple[Configuration, ...]:
    """The random design (from ``design_seed``, shared by prediction and measurement).

    d uniform in [d_min, d_max], n log-uniform in [n_min, n_max], q uniform in [1, q_max], t
    uniform in [1, t_max] (0 without t_max); per prompt w* has s ~ U{1..d} N(0, 1) entries on a
    random support, x ~ N(0, I_d), y = <w*, x> + sigma N(0, 1) (reference chen2024 §1.1).

    >>> configs = draw_configurations(PRESETS_42["smoke"])
    >>> len(configs), configs[0].X.shape[0], all(1 <= c.t <= 3 for c in configs)
    (4, 2, True)
    """
    rng = np.random.default_rng(params.design_seed)
    t_max = getattr(params, "t_max", 0)
    configs = []
    for _ in range(params.n_configs):
        d = int(rng.integers(params.d_min, params.d_max + 1))
        n = int(np.rint(np.exp(rng.uniform(np.log(params.n_min), np.log(params.n_max)))))
        q = int(rng.integers(1, params.q_max + 1))
        t = int(rng.integers(1, t_max + 1)) if t_max else 0
        B = params.n_prompts
        X_all = rng.standard_normal((B, n + q, d))  # (B, n+q, d)
        s = rng.integers(1, d + 1, size=B)  # (B,)
        support = rng.random((B, d)).argsort(axis=-1) < s[:, None]  # (B, d)
        w_star = rng.standard_normal((B, d)) * support  # (B, d)
        y = np.einsum("bnd,bd->bn", X_all[:, :n], w_star) + params.sigma * rng.standard_normal(
            (B, n)
        )  # (B, n)
        eta = 1.0
        if t:
            rho = rng.uniform(params.eta_scale_min, params.eta_scale_max)
            eta = rho / (t * _absolute_top_eigenvalue(X_all[:, :n], y))
        configs.append(Configuration(d, n, q, t, eta, X_all[:, :n], y, X_all[:, n:]))
    return tuple(configs)


def _scale(values: np.ndarray, f_abs: np.ndarray) -> np.ndarray:
    """values / f_abs elementwise; entries with f_abs = 0 (the queries' label slots, exactly 0 on
    both sides) are kept as they are."""
    return values / np.where(f_abs > 0, f_abs, 1.0)


def compared_columns(config: Configuration) -> np.ndarray:
    """The tokens CZZ-P4.1 compares: the first two and last two examples and every query.

    The layer applies one map to every example column (only the mask tells examples from
    queries), so these stand for all n; storing all n + q columns made results.json 200 MB at
    the paper preset.

    >>> config = draw_configurations(PRESETS_41["smoke"])[0]
    >>> columns = compared_columns(config)
    >>> bool(np.all(columns[-config.q :] == np.arange(config.n, config.n + config.q)))
    True
    """
    n = config.n
    examples = sorted({0, 1, n - 2, n - 1} & set(range(n)))
    return np.array(examples + list(range(n, n + config.q)))


def _layer_one(matrix: np.ndarray, config: Configuration) -> np.ndarray:
    """The compared part of a (B, d+1, m) layer-1 output, divided by f_abs, flattened."""
    f_abs = absolute_evaluation(config.X, config.y, config.X_query, config.eta, 0)[0]
    columns = compared_columns(config)
    return _scale(matrix[..., columns], f_abs[..., columns]).ravel()


def _prediction_scale(config: Configuration) -> np.ndarray:
    """f_abs of the predictions after 1..t GD layers: (B, t, q)."""
    return absolute_evaluation(config.X, config.y, config.X_query, config.eta, config.t)[1][:, 1:]


def _bounds(configs, steps) -> dict[str, float]:
    """The Tolerance of each precision: the bound at the largest (d, n, t) drawn (it grows with
    each, so it covers every configuration and step)."""
    d, n = max(c.d for c in configs), max(c.n for c in configs)
    return {p: normalised_error_bound(d, n, steps, p) for p in PRECISIONS}


def _sizes(configs) -> dict[str, np.ndarray]:
    return {
        key: np.array([getattr(c, key) for c in configs], dtype=float)
        for key in ("d", "n", "q", "t", "eta")
    }


# -- CZZ-P4.1 ----------------------------------------------------------------------------------


def predict_41(params: ConstructionParams) -> Prediction:
    """Algorithm 1's prompt matrix (4.2) (`theory.constructions.preprocessed_prompt`) / f_abs,
    at the `compared_columns`."""
    configs = draw_configurations(params)
    scaled_ = [_layer_one(preprocessed_prompt(c.X, c.y, c.X_query), c) for c in configs]
    values = np.concatenate(scaled_)
    config = np.concatenate([np.full(v.size, i) for i, v in enumerate(scaled_)])
    bounds = {
        p: np.array([normalised_error_bound(c.d, c.n, 0, p) for c in configs]) for p in PRECISIONS
    }
    return Prediction(
        values={"layer1": values, "layer1_float32": values},
        figure_data={
            "config": config.astype(float),
            **_sizes(configs),
            "bound_float64": bounds["float64"],
            "bound_float32": bounds["float32"],
        },
    )


def measure_41(params: ConstructionParams, runtime) -> Measurement:
    """Layer 1 of the constructed network, float64 and float32, / f_abs (same f_abs as predict)."""
    configs = draw_configurations(params)
    values = {}
    for precision, key in zip(PRECISIONS, ("layer1", "layer1_float32"), strict=True):
        outputs = [
            _layer_one(numerics.preprocessing_layer_output(c.X, c.y, c.X_query, precision), c)
            for c in runtime.progress(configs, f"layer 1 ({precision})", len(configs))
        ]
        values[key] = Estimate(np.concatenate(outputs), 0.0, "bound")
    return Measurement(values=values)


def _tolerance(bound: float, precision: str, what: str) -> Tolerance:
    return Tolerance(
        f"Rounding only: network and algorithm compute the same polynomial of the prompts, so "
        f"|network − algorithm| <= (γ_net + γ_alg) f_abs with γ_K = Ku/(1−Ku) (Higham §3), K "
        f"the longest chain of roundings counted in theory.constructions.network_roundings / "
        f"algorithm_roundings (exact products by 0, 1 and sums with zeros add none); divided by "
        f"the float64 f_abs of the prompts, the bound normalised_error_bound depends only on "
        f"(d, n, t) and u and grows with each; taken at the largest d, n drawn{what}, here "
        f"{bound:.3g} ({precision} network vs float64 algorithm). Not fitted to the errors.",
        atol=bound,
    )


def checks_41(params: ConstructionParams) -> tuple[Check, ...]:
    bounds = _bounds(draw_configurations(params), 0)
    return (
        Check(
            "layer1",
            _tolerance(bounds["float64"], "float64", ""),
            "layer 1 rows 1..d+1 vs (x̃; y, 0) of Alg. 1, / f_abs (float64)",
        ),
        Check(
            "layer1_float32",
            _tolerance(bounds["float32"], "float32", ""),
            "the same, network in float32",
        ),
    )


def _raw_queries(params: ConstructionParams, prediction: Prediction) -> Prediction:
    """Wrong reading: Algorithm 1 rescales the examples only, the queries keep their raw x."""
    configs = draw_configurations(params)
    wrong = []
    for c in configs:
        matrix = preprocessed_prompt(c.X, c.y, c.X_query)  # (B, d+1, m)
        matrix[:, : c.d, c.n :] = np.swapaxes(c.X_query, -1, -2)
        wrong.append(_layer_one(matrix, c))
    values = np.concatenate(wrong)
    return prediction.with_values(layer1=values, layer1_float32=values)


CLAIM_P41 = Claim(
    id="CZZ-P4.1",
    source=Source(PAPER, "4, App. C.1", "Prop. 4.1/C.1, (4.2)"),
    statement="One linear-attention layer (2.2) with d heads of dimension 3 (d_hid = 3d; W_E read "
    "as the 3d × (d+1) embedding (x_i; y; 0) per block) implements Algorithm 1: its output has "
    "x̃ = r̂ ⊙ x in rows 1..d for the examples and the queries and the labels, 0 at the queries, "
    "in row d+1 (Eq. 4.2), for any d, n, q: equal up to floating-point rounding.",
    params=ConstructionParams,
    presets=PRESETS_41,
    predict=predict_41,
    measure=measure_41,
    checks=checks_41,
    figure="constructions:figure_preprocessing",
    wrong=_raw_queries,
    summary=(
        "one layer with d heads of the paper's form (2.2) outputs Algorithm 1's preprocessed "
        "data, examples and queries, on 32 random (d, n, q)"
    ),
    catalogue=(3, 1),
)


# -- CZZ-P4.2 ----------------------------------------------------------------------------------


def predict_42(params: GDConstructionParams) -> Prediction:
    """``<w_tilde^l, R_hat x_{n+i}>`` after l = 1..t GD steps (`theory.constructions`) / f_abs."""
    configs = draw_configurations(params)
    scaled_, config, step = [], [], []
    for i, c in enumerate(configs):
        path = preprocessed_gd_predictions(c.X, c.y, c.X_query, c.eta, c.t)[:, 1:]  # (B, t, q)
        scaled_.append(_scale(path, _prediction_scale(c)).ravel())
        config.append(np.full(path.size, i))
        step.append(np.broadcast_to(np.arange(1, c.t + 1)[None, :, None], path.shape).ravel())
    values = np.concatenate(scaled_)
    d, n = max(c.d for c in configs), max(c.n for c in configs)
    steps = np.arange(1, params.t_max + 1)
    return Prediction(
        values={"predictions": values, "predictions_float32": values},
        figure_data={
            "config": np.concatenate(config).astype(float),
            "step": np.concatenate(step).astype(float),
            **_sizes(configs),
            "bound_steps": steps.astype(float),
            **{
                f"bound_{p}": np.array([normalised_error_bound(d, n, int(t), p) for t in steps])
                for p in PRECISIONS
            },
        },
    )


def measure_42(params: GDConstructionParams, runtime) -> Measurement:
    """The (t+1)-layer network's query read-outs after every GD layer, float64 and float32."""
    configs = draw_configurations(params)
    values = {}
    for precision, key in zip(PRECISIONS, ("predictions", "predictions_float32"), strict=True):
        outputs = [
            _scale(
                numerics.gd_layer_readouts(c.X, c.y, c.X_query, c.eta, c.t, precision),
                _prediction_scale(c),
            ).ravel()
            for c in runtime.progress(configs, f"networks ({precision})", len(configs))
        ]
        values[key] = Estimate(np.concatenate(outputs), 0.0, "bound")
    return Measurement(values=values)


def checks_42(params: GDConstructionParams) -> tuple[Check, ...]:
    bounds = _bounds(draw_configurations(params), params.t_max)
    return (
        Check(
            "predictions",
            _tolerance(bounds["float64"], "float64", " and t = t_max"),
            "read-out −e_{d+1} after every GD layer vs <w̃^l, R̂x_{n+i}>, / f_abs (float64)",
        ),
        Check(
            "predictions_float32",
            _tolerance(bounds["float32"], "float32", " and t = t_max"),
            "the same, network in float32",
        ),
    )


def _plus_readout(params: GDConstructionParams, prediction: Prediction) -> Prediction:
    """Wrong reading: the paper's literal read-out +e_{d+1}: minus the GD prediction."""
    return prediction.with_values(
        **{
            key: -np.asarray(prediction.values[key])
            for key in ("predictions", "predictions_float32")
        }
    )


CLAIM_P42 = Claim(
    id="CZZ-P4.2",
    source=Source(PAPER, "4, App. C.2", "Prop. 4.2/C.2, (4.3)"),
    statement="Stacking t single-head linear-attention layers (W_K = W_Q = diag(I_d, 0), W_V = "
    "−(η/n) at the label row d+1, W_1 = I) on the layer of Prop. 4.1 gives a (t+1)-layer network "
    "whose read-out W_O = −e_{d+1} (the sign the paper leaves implicit; +e_{d+1} returns the "
    "negated prediction) equals <w̃^t, R̂ x_{n+i}>, t steps of GD (4.3) on Algorithm 1's data, "
    "at all q queries in parallel, for any d, n, q, η, t: equal up to floating-point rounding.",
    params=GDConstructionParams,
    presets=PRESETS_42,
    predict=predict_42,
    measure=measure_42,
    checks=checks_42,
    figure="constructions:figure_gd",
    wrong=_plus_readout,
    summary=(
        "t more one-head layers predict <w̃ᵗ, R̂ x_{n+i}> at every query, read out by "
        "−e_{d+1}; float64 and float32 against a stated rounding bound"
    ),
    catalogue=(3, 2),
)

CLAIMS = (CLAIM_P41, CLAIM_P42)
