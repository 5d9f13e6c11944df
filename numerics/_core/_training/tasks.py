"""What a member trains on: a task draws its prompts (``task.sampler(device, dtype)``) and says
how a model predicts from them (``task.predict(model, Z)``).

One-layer attention (He et al.) trains on linear-regression prompts (`LinearRegressionTask`,
`MultiTaskRegressionTask`); the encoder and the App. G decoder of Chen et al. on sparse-regression
prompts (`SparseRegressionTask`, loss at the q query positions). `check_tasks` holds a run's
tasks to its model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from icl_verify.numerics._core._training.config import ModelConfig
from icl_verify.numerics._core.data import (
    embed,
    linear_regression_sampler,
    multitask_regression_sampler,
    sparse_regression_sampler,
)
from icl_verify.numerics._core.decoder import Decoder, DecoderConfig, decoder_tokens
from icl_verify.numerics._core.encoder import Encoder, EncoderConfig, encoder_tokens
from icl_verify.numerics._core.models import MultiHeadAttention

from icl_verify.covariance import check_zeta, equicorrelated_covariance
from icl_verify.settings import Setting, SparseSetting

# ``draw(batch, generator)``: a batch of prompts laid out for the model, and their query labels
Sampler = Callable[[int, torch.Generator], tuple[torch.Tensor, torch.Tensor]]


def _embedded(prompts) -> tuple[torch.Tensor, torch.Tensor]:
    """The prompt matrices (2.1) of a batch of prompts and their query labels."""
    return embed(prompts), prompts.y_query


@dataclass(frozen=True)
class LinearRegressionTask:
    """Prompts of `numerics.sample_linear_regression`: d, L, sigma2 (and optional Sigma)."""

    d: int = 5  # covariate dimension
    L: int = 40  # context length
    sigma2: float = 0.1  # label-noise variance
    covariance: torch.Tensor | None = field(default=None, compare=False)  # Sigma; None = I_d

    @property
    def n_labels(self) -> int:
        return 1

    def sampler(self, device: torch.device, dtype: torch.dtype) -> Sampler:
        """``draw(batch, generator)``: prompt matrices (batch, d+1, L+1) and query labels
        (batch,), with no host synchronisation (`numerics.linear_regression_sampler`)."""
        draw = linear_regression_sampler(
            Setting(self.d, self.L, self.sigma2), device=device, dtype=dtype,
            covariance=self.covariance,
        )  # fmt: skip
        return lambda batch, generator: _embedded(draw(batch, generator))

    def predict(self, model: MultiHeadAttention, Z: torch.Tensor) -> torch.Tensor:
        return model(Z)


@dataclass(frozen=True)
class MultiTaskRegressionTask:
    """Prompts of `numerics.sample_multitask_regression` (§HE-5.4-MT)."""

    d: int = 6  # covariate dimension
    L: int = 48  # context length
    supports: tuple[tuple[int, ...], ...] = ((0, 1, 2, 3), (2, 3, 4, 5))  # released setting
    relative_noise: float = 0.1  # context-label noise variance per support coordinate
    shared_beta: bool = False  # one coefficient vector for all tasks (the prose) or one per task

    @property
    def n_labels(self) -> int:
        return len(self.supports)

    def sampler(self, device: torch.device, dtype: torch.dtype) -> Sampler:
        """``draw(batch, generator)``: prompt matrices (batch, d+K, L+1) and query labels
        (batch, K), with no host synchronisation."""
        draw = multitask_regression_sampler(
            Setting(self.d, self.L, self.relative_noise), self.supports,
            shared_beta=self.shared_beta, device=device, dtype=dtype,
        )  # fmt: skip
        return lambda batch, generator: _embedded(draw(batch, generator))

    def predict(self, model: MultiHeadAttention, Z: torch.Tensor) -> torch.Tensor:
        return model(Z)


@dataclass(frozen=True)
class SparseRegressionTask:
    """Prompts of `numerics.sample_sparse_regression` as encoder tokens (reference chen2024
    §2.1: d = 16, s = 4, n = 12 examples, q = 4 queries, w* ~ N(0, I) on its support); the
    loss is the squared error at the q query positions.

    App. G (reference §2.7): ``zeta`` > 0 draws x ~ N(0, I + zeta 11^T)
    (`icl_verify.covariance.equicorrelated_covariance`); ``tokens="decoder"`` lays the prompt
    out for the decoder (`numerics.decoder_tokens`), whose loss at the q = n_G - k + 1
    positions after the first n = k - 1 examples is (G.1) divided by q (a constant factor:
    Adam's steps do not change with it, up to its epsilon).
    """

    d: int = 16  # covariate dimension
    n: int = 12  # labelled examples per prompt
    q: int = 4  # queries per prompt (label slot 0)
    s: int = 4  # support size of w*
    sigma: float = 0.1  # label-noise standard deviation
    zeta: float = 0.0  # x ~ N(0, I + zeta 11^T) (App. G); 0: isotropic
    tokens: str = "encoder"  # "encoder" (2.3) or "decoder" (interleaved, App. G)

    def __post_init__(self) -> None:
        check_zeta(self.zeta)
        if self.tokens not in TOKEN_LAYOUTS:
            raise ValueError(f"tokens must be one of {sorted(TOKEN_LAYOUTS)}, got {self.tokens!r}")

    def sampler(self, device: torch.device, dtype: torch.dtype) -> Sampler:
        """``draw(batch, generator)``: tokens (batch, n + q, d + 1) (encoder) or
        (batch, 2 (n + q), d) (decoder) and query labels (batch, q), with no host
        synchronisation."""
        covariance = None  # zeta = 0 leaves the isotropic draws exactly as they were
        if self.zeta:
            covariance = torch.as_tensor(equicorrelated_covariance(self.d, self.zeta))
        draw = sparse_regression_sampler(
            SparseSetting(self.d, self.s, self.sigma), self.n, q=self.q, device=device,
            dtype=dtype, covariance=covariance,
        )  # fmt: skip
        layout = TOKEN_LAYOUTS[self.tokens]

        def laid_out(batch: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
            prompts = draw(batch, generator)
            return layout(prompts), prompts.y_query

        return laid_out

    def predict(self, model: Encoder | Decoder, Z: torch.Tensor) -> torch.Tensor:
        return model(Z, self.n)


TOKEN_LAYOUTS = {"encoder": encoder_tokens, "decoder": decoder_tokens}
Task = LinearRegressionTask | MultiTaskRegressionTask | SparseRegressionTask


def check_tasks(model_config: ModelConfig, tasks: tuple) -> None:
    """ValueError unless every member's task fits its model and all share one prompt shape.

    >>> from icl_verify.numerics import AttentionConfig
    >>> check_tasks(AttentionConfig(d=3), (LinearRegressionTask(3, 6),))
    >>> check_tasks(AttentionConfig(d=3), (LinearRegressionTask(4, 6),))
    Traceback (most recent call last):
    ...
    ValueError: task must match the model (D = 4) and share L = 6, got LinearRegression...
    """
    for t in tasks:
        if isinstance(model_config, EncoderConfig | DecoderConfig):
            first = tasks[0]
            layout = "encoder" if isinstance(model_config, EncoderConfig) else "decoder"
            fits = (
                isinstance(t, SparseRegressionTask)
                and t.d == model_config.d
                and t.tokens == layout
                and (layout == "encoder" or 2 * (t.n + t.q) <= model_config.positions)
            )
            if not fits or (t.n, t.q) != (first.n, first.q):
                raise ValueError(
                    f"task must be a SparseRegressionTask with d = {model_config.d} and "
                    f"{layout} tokens"
                    + ("" if layout == "encoder" else
                       f" (at most {model_config.positions} of them)")
                    + f" and share n = {first.n} and q = {first.q}, got {t!r}"
                )  # fmt: skip
        elif isinstance(t, SparseRegressionTask) or (
            t.d + t.n_labels != model_config.d_embed or t.L != tasks[0].L
        ):
            raise ValueError(
                f"task must match the model (D = {model_config.d_embed}) and share L "
                f"= {tasks[0].L}, got {t!r}"
            )
