"""Prompt samplers for in-context regression, in torch, and the embedding (2.1).

Three task families, each a frozen batch of prompts with any leading batch shape:

- linear regression of He et al. (2025), reference §0.2 (the authors' ``LinearReg``):
  ``x ~ N(0, Sigma)`` (``Sigma = I_d`` unless given, e.g. the KMS matrix of §HE-5.3),
  ``beta ~ N(0, I_d / d)``, ``y = x^T beta + eps`` with ``eps ~ N(0, sigma2)`` on the
  context labels AND on the query label, so every mean squared error has the floor sigma2;
- multi-task regression of He et al. (2025) §HE-5.4-MT (the authors' ``MultiTaskLinearReg``):
  K tasks on fixed supports ``S_k``, independent ``beta^(k) ~ N(0, I_{|S_k|})`` per prompt,
  context-label noise of variance ``sigma2 * |S_k|`` (sigma2 relative to a task's signal),
  noiseless query labels;
- sparse linear regression of Chen, Zhao, Zou (2024) §1.1 and §2.1: ``w*`` with ``s`` non-zero
  coordinates on a support drawn afresh per prompt, ``x ~ N(0, Sigma)``, label noise of
  standard deviation sigma.

Every sampler takes an explicit ``torch.Generator``, draws with it on the generator's device and
puts the prompts on the requested device (by default the generator's), so the same seed on the
same device gives the same numbers. A generator on the CPU serves any device: its prompts are
the CPU's numbers, copied over. The data model is a typed setting (`icl_verify.settings`:
`Setting` for He et al., `SparseSetting` for Chen et al.), valid by construction and trusted
here; the other arguments (the batch shape, the prompt's shape, dtype, device, covariance,
supports) are validated once here, a bad one raising a one-line ``ValueError`` naming it.

Each ``sample_*`` function is its ``*_sampler`` factory called once: the factory validates the
arguments and prepares the constants on the device (a covariance's Cholesky factor, the support
masks) and returns ``draw(batch_shape, generator)``, which, with a generator on its device, only
launches kernels: no host synchronisation, no host-to-device copy, so a trainer draws its
prompts inside a captured CUDA graph (`numerics._core.trainer`).

Where numerics seeds a generator for a device (training data, validation and Monte Carlo
prompts), it asks `seeded_generator`, which puts it on the CPU inside `draw_on_cpu()`: a run on
CUDA then draws the CPU's random stream (Mersenne twister, not CUDA's Philox), the same prompts
as a CPU run, and differs from it only by the arithmetic (``tests/validation/
test_cuda_claims.py``).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import numbers
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import torch

from icl_verify.covariance import kms_covariance as _kms_covariance
from icl_verify.settings import Setting, SparseSetting

__all__ = [
    "Prompts",
    "MultiTaskPrompts",
    "SparsePrompts",
    "sample_linear_regression",
    "sample_multitask_regression",
    "sample_sparse_regression",
    "linear_regression_sampler",
    "multitask_regression_sampler",
    "sparse_regression_sampler",
    "kms_covariance",
    "embed",
    "draw_on_cpu",
    "drawing_on_cpu",
    "seeded_generator",
]


@dataclass(frozen=True)
class Prompts:
    """A batch of in-context regression prompts with leading batch shape ``(...)``.

    Attributes:
        X: ``(..., L, d)`` context covariates x_1..x_L.
        y: ``(..., L)`` context labels (noisy).
        x_query: ``(..., d)`` query covariate.
        y_query: ``(...,)`` query label (noisy for the linear and sparse samplers).
        beta: ``(..., d)`` task vector (sparse for `sample_sparse_regression`).
    """

    X: torch.Tensor
    y: torch.Tensor
    x_query: torch.Tensor
    y_query: torch.Tensor
    beta: torch.Tensor


@dataclass(frozen=True)
class MultiTaskPrompts:
    """A batch of K-task prompts (He et al. 2025, §HE-5.4-MT), leading batch shape ``(...)``.

    Attributes:
        X: ``(..., L, d)`` context covariates.
        y: ``(..., L, K)`` context labels, one column per task (noisy).
        x_query: ``(..., d)`` query covariate.
        y_query: ``(..., K)`` query labels (noiseless, as in the authors' code).
        beta: ``(..., K, d)`` per-task coefficients, zero off each task's support.
        supports: the K supports, each a sorted tuple of 0-based coordinate indices.
    """

    X: torch.Tensor
    y: torch.Tensor
    x_query: torch.Tensor
    y_query: torch.Tensor
    beta: torch.Tensor
    supports: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class SparsePrompts:
    """A batch of sparse-regression prompts of Chen, Zhao, Zou (2024) (2.3), batch shape ``(...)``.

    n labelled examples and q queries; the prompt matrix (2.3) is `embed` of it.

    Attributes:
        X: ``(..., n, d)`` context covariates x_1..x_n.
        y: ``(..., n)`` context labels (noisy).
        X_query: ``(..., q, d)`` query covariates x_{n+1}..x_{n+q}.
        y_query: ``(..., q)`` query labels (noisy, the same noise level).
        w_star: ``(..., d)`` the s-sparse task vector.
    """

    X: torch.Tensor
    y: torch.Tensor
    X_query: torch.Tensor
    y_query: torch.Tensor
    w_star: torch.Tensor


# ---------------------------------------------------------------------------------------------
# argument checks (one line, naming the parameter, its value and the allowed range)


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _batch_shape(value: object) -> tuple[int, ...]:
    shape = (value,) if isinstance(value, numbers.Integral) else value
    if (
        isinstance(value, bool)
        or not isinstance(shape, Sequence)
        or not all(isinstance(n, numbers.Integral) and not isinstance(n, bool) for n in shape)
        or not all(n >= 1 for n in shape)
    ):
        raise ValueError(f"batch_shape must be an int or a tuple of ints >= 1, got {value!r}")
    return tuple(int(n) for n in shape)


def _float_dtype(dtype: object) -> torch.dtype:
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise ValueError(f"dtype must be a torch floating dtype, got {dtype!r}")
    return dtype


def _device(generator: object, device: object) -> torch.device:
    if not isinstance(generator, torch.Generator):
        raise ValueError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    device = generator.device if device is None else torch.device(device)
    if device.type != generator.device.type and generator.device.type != "cpu":
        raise ValueError(
            f"device must be on the generator's device type {generator.device.type!r} (or the "
            f"generator on the CPU), got {str(device)!r}"
        )
    return device


def _covariance_factor(
    covariance: torch.Tensor | None, d: int, device: torch.device, dtype: torch.dtype
) -> torch.Tensor | None:
    """A factor C of Sigma (C C^T = Sigma): the lower Cholesky factor of a (d, d) symmetric
    positive definite Sigma, or, for a diagonal Sigma given as its (d,) diagonal, the (d,)
    vector sqrt(diag) (applied elementwise by `_correlate`: no d x d product)."""
    if covariance is None:
        return None
    if not isinstance(covariance, torch.Tensor) or covariance.shape not in ((d, d), (d,)):
        shape = tuple(covariance.shape) if isinstance(covariance, torch.Tensor) else covariance
        raise ValueError(f"covariance must be a ({d}, {d}) or ({d},) tensor, got {shape!r}")
    sigma = covariance.to(device=device, dtype=torch.float64)
    if sigma.ndim == 1:
        if not bool((torch.isfinite(sigma) & (sigma > 0)).all()):
            raise ValueError("covariance must be a diagonal of finite numbers > 0, got another")
        return sigma.sqrt().to(dtype)
    if not torch.isfinite(sigma).all() or not torch.allclose(sigma, sigma.T, atol=1e-12):
        raise ValueError("covariance must be a finite symmetric matrix, got a non-symmetric one")
    factor, info = torch.linalg.cholesky_ex(sigma)
    if info.item() != 0:
        raise ValueError("covariance must be positive definite, got a singular or indefinite one")
    return factor.to(dtype)


def _correlate(Z: torch.Tensor, factor: torch.Tensor | None) -> torch.Tensor:
    """Rows C z of standard normal rows z (..., d): covariance C C^T (`_covariance_factor`)."""
    if factor is None:
        return Z
    return Z * factor if factor.ndim == 1 else Z @ factor.T


def _gaussian(
    shape: tuple[int, ...], generator: torch.Generator, device: torch.device, dtype: torch.dtype
) -> torch.Tensor:
    """Standard normal numbers drawn on the generator's device, then on ``device`` (no copy
    when they are the same)."""
    return torch.randn(shape, generator=generator, device=generator.device, dtype=dtype).to(device)


def _covariates(
    batch: tuple[int, ...],
    L: int,
    d: int,
    factor: torch.Tensor | None,
    generator: torch.Generator,
    device: torch.device,
    dtype: torch.dtype,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Context covariates (..., L, d) and query covariate (..., d), rows ~ N(0, C C^T)."""
    X = _gaussian((*batch, L, d), generator, device, dtype)  # (..., L, d)
    x_query = _gaussian((*batch, d), generator, device, dtype)  # (..., d)
    return _correlate(X, factor), _correlate(x_query, factor)


# ---------------------------------------------------------------------------------------------
# where seeded generators live

_DRAW_ON_CPU = contextvars.ContextVar("icl_verify_draw_on_cpu", default=False)


@contextlib.contextmanager
def draw_on_cpu() -> Iterator[None]:
    """Within it, `seeded_generator` puts every generator on the CPU, whatever device it is asked
    for: a run on CUDA draws its training data, validation and Monte Carlo prompts from the CPU's
    stream, copies them to the device, and so sees the CPU run's prompts (the trainer then takes
    its plain path: a CUDA graph cannot replay a draw on the host). On the CPU it changes no
    number. A run's cache keys and checkpoint fingerprints carry it (`drawing_on_cpu`).

    >>> with draw_on_cpu():
    ...     seeded_generator(0, "meta").device.type, drawing_on_cpu()
    ('cpu', True)
    >>> drawing_on_cpu()
    False
    """
    token = _DRAW_ON_CPU.set(True)
    try:
        yield
    finally:
        _DRAW_ON_CPU.reset(token)


def drawing_on_cpu() -> bool:
    """Whether this code runs inside `draw_on_cpu` (what a cache key or fingerprint records).

    >>> drawing_on_cpu()
    False
    """
    return _DRAW_ON_CPU.get()


def seeded_generator(seed: int, device) -> torch.Generator:
    """A ``torch.Generator`` seeded with ``seed`` on ``device``, or on the CPU inside
    `draw_on_cpu`: where numerics makes the generator of a stream it draws for a device.

    >>> seeded_generator(3, "cpu").initial_seed()
    3
    """
    where = "cpu" if drawing_on_cpu() else device
    return torch.Generator(device=where).manual_seed(int(seed))


# ---------------------------------------------------------------------------------------------
# samplers


def kms_covariance(
    d: int, rho: float, *, dtype: torch.dtype = torch.float64, device=None
) -> torch.Tensor:
    """Kac-Murdock-Szegő covariance ``Sigma_ij = rho^|i-j|`` (He et al. 2025 §HE-5.3), shape (d, d).

    Positive definite for ``-1 < rho < 1`` (the authors' ``generate_covariance_matrix``). The
    torch form of `icl_verify.covariance.kms_covariance`, the one definition.

    >>> kms_covariance(3, 0.5)
    tensor([[1.0000, 0.5000, 0.2500],
            [0.5000, 1.0000, 0.5000],
            [0.2500, 0.5000, 1.0000]], dtype=torch.float64)
    """
    return torch.as_tensor(_kms_covariance(d, rho), dtype=dtype, device=device)


def linear_regression_sampler(
    setting: Setting,
    *,
    device="cpu",
    dtype: torch.dtype = torch.float32,
    covariance: torch.Tensor | None = None,
) -> Callable[[object, torch.Generator], Prompts]:
    """``draw(batch_shape, generator)`` of `sample_linear_regression` with these arguments,
    validated and prepared once (Sigma's Cholesky factor on ``device``); a draw makes no host
    synchronisation.

    >>> from icl_verify.settings import Setting
    >>> draw = linear_regression_sampler(Setting(d=5, L=40, sigma2=0.1))
    >>> tuple(draw((2, 3), torch.Generator().manual_seed(0)).X.shape)
    (2, 3, 40, 5)
    """
    d, L, noise_std = setting.d, setting.L, math.sqrt(setting.sigma2)
    dtype, device = _float_dtype(dtype), torch.device(device)
    factor = _covariance_factor(covariance, d, device, dtype)

    def draw(batch_shape, generator: torch.Generator) -> Prompts:
        batch = _batch_shape(batch_shape)
        X, x_query = _covariates(batch, L, d, factor, generator, device, dtype)
        beta = _gaussian((*batch, d), generator, device, dtype) / math.sqrt(d)  # (..., d)
        noise = _gaussian((*batch, L + 1), generator, device, dtype) * noise_std  # (..., L+1)
        y = torch.einsum("...ld,...d->...l", X, beta) + noise[..., :L]  # (..., L)
        y_query = torch.einsum("...d,...d->...", x_query, beta) + noise[..., L]  # (...,)
        return Prompts(X=X, y=y, x_query=x_query, y_query=y_query, beta=beta)

    return draw


def sample_linear_regression(
    batch_shape,
    setting: Setting,
    *,
    generator: torch.Generator,
    device=None,
    dtype: torch.dtype = torch.float32,
    covariance: torch.Tensor | None = None,
) -> Prompts:
    """Linear-regression prompts of He et al. (2025) §0.2 / §HE-2.1 (the authors' ``LinearReg``).

    ``x_i, x_q ~ N(0, Sigma)`` (``Sigma = I_d`` when ``covariance`` is None),
    ``beta ~ N(0, I_d / d)``, ``y_i = x_i^T beta + eps_i`` and ``y_q = x_q^T beta + eps_q``
    with ``eps ~ N(0, sigma2)`` independent, for ``setting = Setting(d, L, sigma2)``. Shapes:
    X (..., L, d), y (..., L), x_query (..., d), y_query (...,), beta (..., d) with
    ``(...) = batch_shape``. A test length L' is ``dataclasses.replace(setting, L=L')``.

    >>> from icl_verify.settings import Setting
    >>> g = torch.Generator().manual_seed(0)
    >>> p = sample_linear_regression((4, 3), Setting(d=5, L=40, sigma2=0.1), generator=g)
    >>> tuple(p.X.shape), tuple(p.y.shape), tuple(p.x_query.shape), tuple(p.y_query.shape)
    ((4, 3, 40, 5), (4, 3, 40), (4, 3, 5), (4, 3))
    >>> sample_linear_regression((4, 0), Setting(d=5, L=40, sigma2=0.1), generator=g)
    Traceback (most recent call last):
    ...
    ValueError: batch_shape must be an int or a tuple of ints >= 1, got (4, 0)
    """
    batch = _batch_shape(batch_shape)
    draw = linear_regression_sampler(
        setting, device=_device(generator, device), dtype=dtype, covariance=covariance
    )
    return draw(batch, generator)


def _supports(value: object, d: int) -> tuple[tuple[int, ...], ...]:
    message = (
        "supports must be a non-empty sequence of non-empty sets of distinct indices in "
        f"[0, {d - 1}], got {value!r}"
    )
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) == 0:
        raise ValueError(message)
    supports = []
    for support in value:
        if isinstance(support, str):
            raise ValueError(message)
        try:
            indices = [int(i) for i in support if not isinstance(i, bool) and int(i) == i]
        except (TypeError, ValueError):
            raise ValueError(message) from None
        if len(indices) == 0 or len(indices) != len(support) or len(set(indices)) != len(indices):
            raise ValueError(message)
        if min(indices) < 0 or max(indices) >= d:
            raise ValueError(message)
        supports.append(tuple(sorted(indices)))
    return tuple(supports)


def multitask_regression_sampler(
    setting: Setting,
    supports,
    *,
    shared_beta: bool = False,
    device="cpu",
    dtype: torch.dtype = torch.float32,
) -> Callable[[object, torch.Generator], MultiTaskPrompts]:
    """``draw(batch_shape, generator)`` of `sample_multitask_regression` with these arguments,
    validated and prepared once (the support masks on ``device``); a draw makes no host
    synchronisation.

    >>> from icl_verify.settings import Setting
    >>> draw = multitask_regression_sampler(Setting(6, 48, 0.1), ((0, 1, 2, 3), (2, 3, 4, 5)))
    >>> tuple(draw(4, torch.Generator().manual_seed(0)).y.shape)
    (4, 48, 2)
    """
    d, L = setting.d, setting.L
    supports = _supports(supports, d)
    dtype, device = _float_dtype(dtype), torch.device(device)
    K = len(supports)
    mask = torch.zeros(K, d, dtype=dtype)  # (K, d): 1 on S_k
    for k, support in enumerate(supports):
        mask[k, list(support)] = 1.0
    noise_std = torch.sqrt(setting.sigma2 * mask.sum(dim=1)).to(device)  # (K,)
    mask = mask.to(device)

    def draw(batch_shape, generator: torch.Generator) -> MultiTaskPrompts:
        batch = _batch_shape(batch_shape)
        X, x_query = _covariates(batch, L, d, None, generator, device, dtype)
        tasks = 1 if shared_beta else K  # one vector restricted to each S_k, or one per task
        beta = _gaussian((*batch, tasks, d), generator, device, dtype) * mask  # (..., K, d)
        noise = _gaussian((*batch, L, K), generator, device, dtype) * noise_std  # (..., L, K)
        y = torch.einsum("...ld,...kd->...lk", X, beta) + noise  # (..., L, K)
        y_query = torch.einsum("...d,...kd->...k", x_query, beta)  # (..., K)
        return MultiTaskPrompts(
            X=X, y=y, x_query=x_query, y_query=y_query, beta=beta, supports=supports
        )

    return draw


def sample_multitask_regression(
    batch_shape,
    setting: Setting,
    supports,
    *,
    generator: torch.Generator,
    shared_beta: bool = False,
    device=None,
    dtype: torch.dtype = torch.float32,
) -> MultiTaskPrompts:
    """K-task prompts of He et al. (2025) §HE-5.4-MT, as in the authors' ``MultiTaskLinearReg``.

    ``x_i, x_q ~ N(0, I_d)``; task k has a fixed support ``S_k`` (0-based indices) and
    coefficients ``beta^(k) ~ N(0, I_{|S_k|})`` drawn per prompt, independently across tasks
    (the code's choice), or with ``shared_beta`` one ``beta ~ N(0, I_d)`` restricted to each
    ``S_k`` (the prose's reading, reference §8 item 6: tasks then share the coefficients of
    their common coordinates);
    ``y_ik = beta^(k)^T x_{i,S_k} + eps_ik`` with ``eps_ik ~ N(0, sigma2 * |S_k|)`` on context
    labels only, for ``setting = Setting(d, L, sigma2)``: sigma2 is the noise relative to a
    task's signal variance |S_k| (the code's ``relative_noise``; in the one-task model of
    `sample_linear_regression` the signal variance is 1); query labels are noiseless. The
    released setting is d = 6, supports ((0, 1, 2, 3), (2, 3, 4, 5)), L = 48, sigma2 = 0.1.
    Shapes: X (..., L, d), y (..., L, K), x_query (..., d), y_query (..., K), beta (..., K, d).

    >>> from icl_verify.settings import Setting
    >>> g, released = torch.Generator().manual_seed(0), Setting(d=6, L=48, sigma2=0.1)
    >>> p = sample_multitask_regression(16, released, ((0, 1, 2, 3), (2, 3, 4, 5)), generator=g)
    >>> tuple(p.y.shape), tuple(p.y_query.shape), bool((p.beta[:, 0, 4:] == 0).all())
    ((16, 48, 2), (16, 2), True)
    >>> p = sample_multitask_regression(16, released, ((0, 1, 2, 3), (2, 3, 4, 5)), generator=g,
    ...                                 shared_beta=True)
    >>> bool((p.beta[:, 0, 2:4] == p.beta[:, 1, 2:4]).all())  # the shared coordinates agree
    True
    """
    batch = _batch_shape(batch_shape)
    draw = multitask_regression_sampler(
        setting, supports, shared_beta=shared_beta, device=_device(generator, device),
        dtype=dtype,
    )  # fmt: skip
    return draw(batch, generator)


def sparse_regression_sampler(
    setting: SparseSetting,
    n: int,
    *,
    q: int = 1,
    signal: str = "gaussian",
    device="cpu",
    dtype: torch.dtype = torch.float32,
    covariance: torch.Tensor | None = None,
) -> Callable[[object, torch.Generator], SparsePrompts]:
    """``draw(batch_shape, generator)`` of `sample_sparse_regression` with these arguments,
    validated and prepared once (Sigma's factor on ``device``); a draw makes no host
    synchronisation.

    >>> from icl_verify.settings import SparseSetting
    >>> draw = sparse_regression_sampler(SparseSetting(d=16, s=4, sigma=0.1), 12, q=4)
    >>> tuple(draw(2, torch.Generator().manual_seed(0)).X_query.shape)
    (2, 4, 16)
    """
    d, s, sigma = setting.d, setting.s, setting.sigma
    n, q = _positive_int("n", n), _positive_int("q", q)
    if signal not in ("gaussian", "sign"):
        raise ValueError(f"signal must be 'gaussian' or 'sign', got {signal!r}")
    dtype, device = _float_dtype(dtype), torch.device(device)
    factor = _covariance_factor(covariance, d, device, dtype)

    def draw(batch_shape, generator: torch.Generator) -> SparsePrompts:
        batch = _batch_shape(batch_shape)
        X = _gaussian((*batch, n + q, d), generator, device, dtype)  # (..., n+q, d)
        X = _correlate(X, factor)
        uniform = torch.rand((*batch, d), generator=generator, device=generator.device)
        permutation = uniform.to(device).argsort(dim=-1)
        on_support = (permutation < s).to(dtype)  # (..., d): a uniform random s-subset
        if signal == "gaussian":
            values = _gaussian((*batch, d), generator, device, dtype)
        else:
            coin = torch.randint(0, 2, (*batch, d), generator=generator, device=generator.device)
            coin = coin.to(device)
            values = (2.0 * coin - 1.0).to(dtype) / math.sqrt(s)
        w_star = values * on_support  # (..., d)
        noise = _gaussian((*batch, n + q), generator, device, dtype) * sigma  # (..., n+q)
        y = torch.einsum("...md,...d->...m", X, w_star) + noise  # (..., n+q)
        return SparsePrompts(
            X=X[..., :n, :], y=y[..., :n], X_query=X[..., n:, :], y_query=y[..., n:],
            w_star=w_star,
        )  # fmt: skip

    return draw


def sample_sparse_regression(
    batch_shape,
    setting: SparseSetting,
    n: int,
    *,
    q: int = 1,
    generator: torch.Generator,
    signal: str = "gaussian",
    device=None,
    dtype: torch.dtype = torch.float32,
    covariance: torch.Tensor | None = None,
) -> SparsePrompts:
    """Sparse linear-regression prompts of Chen, Zhao, Zou (2024) §1.1, §1.2 and §2.1.

    For ``setting = SparseSetting(d, s, sigma)``, n examples and q queries per prompt:
    per prompt a support S of ``s`` distinct coordinates is drawn uniformly; ``w*`` is zero off S
    and on S is ``N(0, 1)`` (``signal="gaussian"``, the experiments: ``E||w*||^2 = s``) or
    ``±1/sqrt(s)`` with fair signs (``signal="sign"``, the prior of their Theorem 5.3:
    ``||w*|| = 1``). ``x ~ N(0, Sigma)`` (identity unless ``covariance`` is given, as a (d, d)
    matrix or, for their theory's diagonal Sigma, as its (d,) diagonal), ``y = x^T w* + xi``
    with ``xi ~ N(0, sigma^2)`` on every label, the n context labels and the q query labels.
    ``sigma`` is the noise standard deviation, as in the paper's grid {0, 0.1, 0.2, 0.4, 0.8}.

    >>> from icl_verify.settings import SparseSetting
    >>> g = torch.Generator().manual_seed(0)
    >>> p = sample_sparse_regression(32, SparseSetting(d=16, s=4, sigma=0.1), 12, q=4, generator=g)
    >>> tuple(p.X.shape), tuple(p.X_query.shape), (p.w_star != 0).sum(dim=-1).tolist() == [4] * 32
    ((32, 12, 16), (32, 4, 16), True)
    """
    batch = _batch_shape(batch_shape)
    draw = sparse_regression_sampler(
        setting, n, q=q, signal=signal, device=_device(generator, device), dtype=dtype,
        covariance=covariance,
    )  # fmt: skip
    return draw(batch, generator)


def embed(prompts: Prompts | MultiTaskPrompts | SparsePrompts) -> torch.Tensor:
    """Prompt matrix Z of He et al. (2025) (2.1) and Chen et al. (2024) (2.3): columns are tokens,
    the queries' label slots are 0.

    ``Z = [[x_1 ... x_L x_q], [y_1 ... y_L 0]]`` of shape ``(..., d+1, L+1)``; for K-task
    prompts the label rows are K, ``Z`` is ``(..., d+K, L+1)`` and the query column ends in 0_K;
    for sparse prompts with n examples and q queries, ``(..., d+1, n+q)``.

    >>> from icl_verify.settings import Setting
    >>> g = torch.Generator().manual_seed(0)
    >>> p = sample_linear_regression(2, Setting(d=3, L=4, sigma2=0.1), generator=g)
    >>> Z = embed(p)
    >>> tuple(Z.shape), bool((Z[:, -1, -1] == 0).all()), bool(torch.equal(Z[:, :3, -1], p.x_query))
    ((2, 4, 5), True, True)
    """
    if isinstance(prompts, SparsePrompts):
        queries = prompts.X_query  # (..., q, d)
        labels = prompts.y[..., None]  # (..., n, 1)
    else:
        queries = prompts.x_query[..., None, :]  # (..., 1, d)
        labels = prompts.y if isinstance(prompts, MultiTaskPrompts) else prompts.y[..., None]
    query_labels = labels.new_zeros((*queries.shape[:-1], labels.shape[-1]))  # (..., q, K)
    tokens = torch.cat(
        [
            torch.cat([prompts.X, labels], dim=-1),  # (..., L, d+K)
            torch.cat([queries, query_labels], dim=-1),  # (..., q, d+K)
        ],
        dim=-2,
    )  # (..., L+q, d+K)
    return tokens.transpose(-1, -2)  # (..., d+K, L+q)
