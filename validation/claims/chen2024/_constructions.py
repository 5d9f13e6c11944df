"""What the claims on the explicit transformers of Chen, Zhao, Zou (2024) Props. 4.1 and 4.2
share (CZZ-P4.1 in `construction_preprocessing`, CZZ-P4.2 in `construction_gd`): the random
configurations, the scale f_abs and the rounding tolerance.

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

Prediction: `theory._constructions` (numpy float64 Algorithm 1 and GD). Measurement:
`numerics.preprocessing_layer_output` and `numerics.gd_layer_readouts`, the network with the
constructed weights (`numerics._core.linear_transformer`), in float64 and in float32 (weights and
prompts cast), on the CPU whatever the run's device. Both are divided elementwise by the
prompts' absolute evaluation f_abs (`theory.absolute_evaluation`, float64, the
scale of the bound), and compared with a Tolerance equal to the stated rounding bound
(`theory.normalised_error_bound`). Figures: `figures.constructions`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from icl_verify.figures.data.constructions import Sizes
from icl_verify.theory import normalised_error_bound
from icl_verify.validation.params import ParameterError, Params, param
from icl_verify.validation.rules import Tolerance

PRECISIONS = ("float64", "float32")


@dataclass(frozen=True, kw_only=True)
class ConstructionParams(Params):
    """CZZ-P4.1: random (d, n, q) configurations, a few sparse-regression prompts each."""

    n_configs: int = param(help="random configurations (d, n, q[, t, η])", low=1, role="count")
    n_prompts: int = param(4, help="prompts per configuration", low=1, role="count")
    d_min: int = param(
        1, help="smallest covariate dimension d (uniform in [d_min, d_max])", low=1, role="width"
    )
    d_max: int = param(help="largest covariate dimension d", low=1, role="width")
    n_min: int = param(
        1, help="fewest in-context examples n (log-uniform in [n_min, n_max])", low=1, role="length"
    )
    n_max: int = param(help="most in-context examples n", low=1, role="length")
    q_max: int = param(help="most queries q (uniform in [1, q_max])", low=1, role="length")
    sigma: float = param(0.1, help="label-noise standard deviation σ", low=0)
    design_seed: int = param(
        2024, help="seed of the configurations and prompts", low=0, role="count"
    )

    def validate(self) -> None:
        for low, high in (("d_min", "d_max"), ("n_min", "n_max")):
            if getattr(self, low) > getattr(self, high):
                raise ParameterError(
                    f"{low} must be <= {high}, got {low}={getattr(self, low)}, "
                    f"{high}={getattr(self, high)}"
                )


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
    """Largest over prompts of λ_max(|X_tilde|^T |X_tilde| / n), |X_tilde| = |X| r_abs."""
    n = X.shape[-2]
    r_abs = np.einsum("bnd,bn->bd", np.abs(X), np.abs(y)) / n  # (B, d)
    X_abs = np.abs(X) * r_abs[:, None, :]  # (B, n, d)
    return float(np.linalg.eigvalsh(np.swapaxes(X_abs, -1, -2) @ X_abs / n).max())


def draw_configurations(params: ConstructionParams) -> tuple[Configuration, ...]:
    """The random design (from ``design_seed``, shared by prediction and measurement).

    d uniform in [d_min, d_max], n log-uniform in [n_min, n_max], q uniform in [1, q_max], t
    uniform in [1, t_max] (0 without t_max); per prompt w* has s ~ U{1..d} N(0, 1) entries on a
    random support, x ~ N(0, I_d), y = <w*, x> + sigma N(0, 1) (reference chen2024 §1.1).

    >>> from icl_verify.validation.claims.chen2024.construction_gd import PRESETS_42
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


def divide_by_scale(values: np.ndarray, f_abs: np.ndarray) -> np.ndarray:
    """values / f_abs elementwise; entries with f_abs = 0 (the queries' label slots, exactly 0 on
    both sides) are kept as they are."""
    return values / np.where(f_abs > 0, f_abs, 1.0)


def tolerance_bounds(configs, steps) -> dict[str, float]:
    """The Tolerance of each precision: the bound at the largest (d, n, t) drawn (it grows with
    each, so it covers every configuration and step)."""
    d, n = max(c.d for c in configs), max(c.n for c in configs)
    return {p: normalised_error_bound(d, n, steps, p) for p in PRECISIONS}


def configuration_sizes(configs) -> Sizes:
    """The sizes of ``configs`` (`Configuration` each), as the figures draw them."""
    return Sizes(*(np.array([getattr(c, f.name) for c in configs], dtype=float)
                   for f in dataclasses.fields(Sizes)))  # fmt: skip


def rounding_tolerance(bound: float, precision: str, what: str) -> Tolerance:
    return Tolerance(
        f"Rounding only: network and algorithm compute the same polynomial of the prompts, so "
        f"|network − algorithm| ≤ (γ_net + γ_alg) f_abs with γ_K = Ku/(1−Ku) (Higham §3), K "
        f"the longest chain of roundings counted in theory.network_roundings / "
        f"algorithm_roundings (exact products by 0, 1 and sums with zeros add none); divided by "
        f"the float64 f_abs of the prompts, the bound normalised_error_bound depends only on "
        f"(d, n, t) and u and grows with each; taken at the largest d, n drawn{what}, here "
        f"{bound:.3g} ({precision} network vs float64 algorithm). Not fitted to the errors.",
        atol=bound,
    )
