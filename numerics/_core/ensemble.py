"""The trained ensemble of He et al. (2025) §3 (reference §0.5) that the trained-model claims read.

One online training of E one-layer attention models (`numerics.MultiHeadAttention` via
`numerics.train`; softmax (2.2), or linear attention (5.1), or a normalised activation
(5.2)) on the prompts of §0.2 (d, L, sigma2), from PyTorch's default
``nn.Linear`` init, with Adam on fresh prompts every step. Member e has ``heads[e]`` heads (all
members padded to the largest H) and init seed ``seed + e``. The members share one data stream
(``data_streams="shared"``: one generator draws every member's independent prompts, about 1.5x
faster on the CPU than one per member). The history logs omega_h, mu_h and the validation loss
of every member every ``log_every`` steps, and the full KQ and OV circuits at the same steps.

A training is resumable: given a checkpoint folder, the trainer writes its checkpoint (histories
included) there every ``checkpoint_every`` steps, and at a deadline; a killed or stopped run
resumes from it. `TrainedEnsemble.arrays` / `TrainedEnsemble.from_arrays` turn the result into plain
numpy arrays and back, so a caller can store it.

Read-outs of the trained members: `member_kinds` (single-head, paired, trapped), `representative`
(the member shown for one H), and `mse_by_test_length`, the Monte Carlo test MSE of trained
members (of one or several ensembles) and of the GD and Bayes baselines at test lengths L' other
than the training L (Figure 4, §HE-5.1-LENGTH), all on the same nested prompts.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import ClassVar

import numpy as np
import torch
from icl_verify.numerics._core.circuits import CircuitSummary, summarize_circuits
from icl_verify.numerics._core.data import Prompts, embed, kms_covariance, sample_linear_regression
from icl_verify.numerics._core.estimators import bayes_prediction, gd_prediction
from icl_verify.numerics._core.models import AttentionConfig, MultiHeadAttention
from icl_verify.numerics._core.montecarlo import JointMonteCarloEstimate, monte_carlo_losses
from icl_verify.numerics._core.trainer import (
    LinearRegressionTask,
    MultiTaskRegressionTask,
    TrainConfig,
    train,
)

from icl_verify import MAX_PROMPT_LENGTH
from icl_verify.covariance import check_rho
from icl_verify.heads import head_types
from icl_verify.settings import Setting

__all__ = [
    "EnsembleTraining",
    "MemberKinds",
    "TrainedEnsemble",
    "member_kinds",
    "representative",
    "mse_by_test_length",
    "train_ensemble",
]

WEIGHT_NAMES = ("W_Q", "W_K", "W_V", "W_O")
NO_BASELINES: Mapping[str, float] = MappingProxyType({})  # an empty, immutable default


@dataclass(frozen=True, kw_only=True)
class EnsembleTraining:
    """What is trained, and how: the data model, the members' heads, Adam and the bookkeeping.

    Its fields are the whole configuration of a training (`dataclasses.asdict` is a complete
    cache key, with the device). The reference's sizes (§0.5): d = 5, L = 40, sigma2 = 0.1,
    H in {1, 2, 3, 4, 8}, lr 1e-3, 500k steps, batch 256.
    """

    d: int  # covariate dimension
    L: int  # training prompt length (in-context examples per prompt)
    sigma2: float  # label-noise variance
    heads: tuple[int, ...]  # heads[e]: active heads of member e (its init seed: seed + e)
    lr: float  # learning rate (of `optimizer`)
    steps: int  # Adam steps
    batch: int  # fresh prompts per member per step
    seed: int  # init seed of member 0, and of the shared data stream
    log_every: int  # omega, mu, validation loss and circuits logged every this many steps
    checkpoint_every: int  # checkpoint every this many steps (0: only at the end)
    validation_batch: int  # fixed validation prompts per member
    # "softmax", "linear" (its 1/L: 1/L of training), a spec (5.2), or one of these per member
    attention: str | tuple[str, ...] = "softmax"
    # covariates x ~ N(0, Sigma) with the KMS matrix Sigma_ij = rho^|i-j| (§HE-5.3); 0: I_d
    rho: float = 0.0
    # multi-task prompts (§HE-5.4-MT) when given: the K supports S_k (0-based); then sigma2 is
    # the code's relative noise (task k's context labels: variance sigma2 |S_k|; query noiseless)
    supports: tuple[tuple[int, ...], ...] = ()
    # with supports: one coefficient vector restricted to every S_k (the prose) instead of one
    # independent vector per task (the authors' code, the default)
    shared_beta: bool = False
    # the optimizer (`numerics.TrainConfig`): "adam" (the paper's), "adamw" or "sgd", with
    # AdamW's decoupled weight decay or SGD's heavy-ball momentum
    optimizer: str = "adam"
    weight_decay: float = 0.0
    momentum: float = 0.0

    # its cache name, and the version of the code making it: bump it when a change can alter
    # what `make` returns (`validation.cache.producers`; tests/validation/test_cache_versions.py)
    ARTEFACT: ClassVar[str] = "trained-ensemble"
    ARTEFACT_VERSION: ClassVar[int] = 1

    def __post_init__(self) -> None:
        rho = check_rho(self.rho)
        if self.supports and rho != 0:
            raise ValueError(f"rho must be 0 for multi-task prompts (supports given), got {rho!r}")
        object.__setattr__(self, "supports", tuple(tuple(s) for s in self.supports))
        if self.shared_beta and not self.supports:
            raise ValueError("shared_beta needs multi-task prompts (supports given)")

    def make(self, device="cpu", checkpoint_dir=None, progress=False, deadline=None, inputs=()):
        """`train_ensemble` of this training (the artefact protocol of `validation.Runtime`)."""
        return train_ensemble(self, device, checkpoint_dir, progress, deadline)

    def load(self, arrays: Mapping[str, np.ndarray]) -> TrainedEnsemble:
        """The trained ensemble stored as ``arrays`` (`TrainedEnsemble.arrays`)."""
        return TrainedEnsemble.from_arrays(self, arrays)

    def task(self) -> LinearRegressionTask | MultiTaskRegressionTask:
        """The trainer's task: KMS or isotropic linear regression, or the multi-task prompts."""
        if self.supports:
            return MultiTaskRegressionTask(
                self.d, self.L, self.supports, self.sigma2, self.shared_beta
            )
        covariance = kms_covariance(self.d, self.rho) if self.rho else None
        return LinearRegressionTask(self.d, self.L, self.sigma2, covariance)


@dataclass(frozen=True)
class TrainedEnsemble:
    """E trained models and their histories (float64 numpy; n logged steps, H = max heads).

    Attributes:
        d, L, sigma2: the training data model (§0.2); rho, supports, shared_beta: as
            `EnsembleTraining`
            (KMS covariates §HE-5.3, multi-task prompts §HE-5.4-MT; omega, mu are then NaN).
        attention: the members' attention, as `EnsembleTraining.attention`.
        heads: (E,) active heads per member; member e's heads are the first ``heads[e]``.
        weights: name -> (E, H, D, D) final W_Q, W_K, W_V, W_O.
        steps: (n,) logged steps; test_loss: (n, E) validation loss;
        omega, mu: (n, E, H) effective head scales (`numerics.omega_mu`).
        KQ_history, OV_history: (n, E, H, D, D) circuits at the logged steps (float32 stored).
        train_seconds: wall-clock seconds the training took (all its resumed parts; NaN when
            it was stored before this was recorded).
    """

    d: int
    L: int
    sigma2: float
    attention: str | tuple[str, ...]
    heads: np.ndarray
    weights: Mapping[str, np.ndarray]
    steps: np.ndarray
    test_loss: np.ndarray
    omega: np.ndarray
    mu: np.ndarray
    KQ_history: np.ndarray
    OV_history: np.ndarray
    train_seconds: float = math.nan
    rho: float = 0.0
    supports: tuple[tuple[int, ...], ...] = ()
    shared_beta: bool = False

    def model(self, members=None, device: str = "cpu") -> MultiHeadAttention:
        """The trained members (all, or the listed indices) as one float32 ensemble model."""
        members = list(range(self.heads.size)) if members is None else list(members)
        heads = tuple(int(self.heads[e]) for e in members)
        attention = self.attention
        if isinstance(attention, tuple):  # one per member
            attention = tuple(attention[e] for e in members)
        config = _model_config(self.d, self.L, heads, attention, len(self.supports) or 1)
        model = MultiHeadAttention(config, seeds=[0] * len(members))
        with torch.no_grad():
            for name in WEIGHT_NAMES:
                stored = torch.as_tensor(self.weights[name][members][:, : max(heads)])
                getattr(model, name).copy_(stored.to(torch.float32))
        return model.to(device)

    def member_indices(self, members: Sequence[int]) -> list[int]:
        """``members`` as a list of member indices; a one-line ValueError unless non-empty and
        each in 0..E-1.

        >>> from types import SimpleNamespace
        >>> TrainedEnsemble.member_indices(SimpleNamespace(heads=np.array([1, 2])), [1, 0])
        [1, 0]
        """
        members = list(members)
        E = self.heads.size
        if not members or not all(
            isinstance(e, numbers.Integral) and not isinstance(e, bool) and 0 <= e < E
            for e in members
        ):
            raise ValueError(
                f"members must be a non-empty list of indices in 0..{E - 1}, got {members}"
            )
        return [int(e) for e in members]

    def circuits(self) -> tuple[np.ndarray, np.ndarray]:
        """Final KQ and OV circuits, each (E, H, D, D) float64 (inactive heads' OV is 0)."""
        model = self.model()
        model.double()
        with torch.no_grad():
            return model.KQ.numpy(), model.OV.numpy()

    def summaries(self, log: int = -1) -> tuple[CircuitSummary, ...]:
        """`numerics.summarize_circuits` of every member at logged step ``log``."""
        if log == -1:
            KQ, OV = self.circuits()
        else:
            KQ, OV = self.KQ_history[log], self.OV_history[log]
        return summarize_circuits(
            torch.as_tensor(KQ), torch.as_tensor(OV), self.d, tuple(map(int, self.heads))
        )

    def first_order_steps(self, members: Sequence[int]) -> np.ndarray:
        """Each listed member's final ``eta_eff = sum_h omega_h mu_h``, the step of the GD-like
        term of its prediction to first order in omega (4.10); shape (len(members),)."""
        members = list(members)
        return (self.omega[-1, members] * self.mu[-1, members]).sum(axis=-1)

    def arrays(self) -> dict[str, np.ndarray]:
        """Everything but the data model, as named numpy arrays (`from_arrays` inverts it)."""
        return {
            **self.weights,
            "heads": self.heads,
            "steps": self.steps,
            "test_loss": self.test_loss,
            "omega": self.omega,
            "mu": self.mu,
            "KQ_history": self.KQ_history,
            "OV_history": self.OV_history,
            "train_seconds": np.asarray(self.train_seconds),
        }

    @classmethod
    def from_arrays(
        cls, training: EnsembleTraining, arrays: Mapping[str, np.ndarray]
    ) -> TrainedEnsemble:
        """The ensemble of `training` from the arrays of `arrays` (e.g. loaded from a file)."""
        return cls(
            d=training.d,
            L=training.L,
            sigma2=float(training.sigma2),
            attention=training.attention,
            heads=np.asarray(arrays["heads"]),
            weights={name: np.asarray(arrays[name]) for name in WEIGHT_NAMES},
            steps=np.asarray(arrays["steps"]),
            test_loss=np.asarray(arrays["test_loss"]),
            omega=np.asarray(arrays["omega"]),
            mu=np.asarray(arrays["mu"]),
            KQ_history=np.asarray(arrays["KQ_history"]),
            OV_history=np.asarray(arrays["OV_history"]),
            train_seconds=float(arrays.get("train_seconds", math.nan)),
            rho=float(training.rho),
            supports=training.supports,
            shared_beta=training.shared_beta,
        )


# ---------------------------------------------------------------------------------------------
# training


def _model_config(
    d: int, L: int, heads: tuple[int, ...], attention, n_labels: int = 1
) -> AttentionConfig:
    """The architecture of the members: linear attention keeps the 1/L of the training L."""
    return AttentionConfig(
        d=d,
        heads=heads,
        ensemble=len(heads),
        n_labels=n_labels,
        attention=attention,
        train_length=L,
    )


def train_ensemble(
    training: EnsembleTraining,
    device: str = "cpu",
    checkpoint_dir: str | Path | None = None,
    progress: bool = False,
    deadline: float | None = None,
) -> TrainedEnsemble:
    """Train the ensemble of ``training`` (or resume it from ``checkpoint_dir``).

    With ``checkpoint_dir`` the trainer's checkpoint (``checkpoint.pt``, the circuit history
    included) is written there every ``checkpoint_every`` steps, and a later call with the same
    folder resumes from it: the result equals an uninterrupted run's, bit for bit on the CPU.
    ``progress`` shows a nested progress bar (line 1). ``deadline``: see `numerics.train`
    (`TrainingStopped` after the checkpoint of the step reached).

    >>> training = EnsembleTraining(d=2, L=8, sigma2=0.1, heads=(1, 2), lr=3e-3, steps=20,
    ...     batch=16, seed=0, log_every=10, checkpoint_every=10, validation_batch=64)
    >>> ensemble = train_ensemble(training)
    >>> ensemble.omega.shape, ensemble.heads.tolist(), ensemble.KQ_history.shape
    ((2, 2, 2), [1, 2], (2, 2, 2, 3, 3))
    """
    heads = tuple(int(h) for h in training.heads)
    model_config = _model_config(
        training.d, training.L, heads, training.attention, len(training.supports) or 1
    )
    config = TrainConfig(
        optimizer=training.optimizer,
        lr=training.lr,
        weight_decay=training.weight_decay,
        momentum=training.momentum,
        batch=training.batch,
        steps=training.steps,
        seed=training.seed,
        validation_batch=training.validation_batch,
        device=device,
        log_every=training.log_every,
        checkpoint_every=training.checkpoint_every,
        data_streams="shared",
    )
    folder = Path(checkpoint_dir) if checkpoint_dir is not None else None
    result = train(
        model_config, training.task(), config,
        checkpoint_path=folder / "checkpoint.pt" if folder else None, resume=folder is not None,
        progress=progress, progress_position=1, deadline=deadline,
    )  # fmt: skip
    history = result.history
    return TrainedEnsemble(
        d=training.d,
        L=training.L,
        sigma2=float(training.sigma2),
        attention=training.attention,
        heads=np.asarray(heads, dtype=np.int64),
        weights={
            name: getattr(result.model, name).detach().double().cpu().numpy()
            for name in WEIGHT_NAMES
        },
        steps=history.steps,
        test_loss=history.test_loss,
        omega=history.omega,
        mu=history.mu,
        KQ_history=history.KQ,
        OV_history=history.OV,
        train_seconds=history.seconds,
        rho=float(training.rho),
        supports=training.supports,
        shared_beta=training.shared_beta,
    )


# ---------------------------------------------------------------------------------------------
# members: which reached the pattern, which one is shown


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

    A member with H >= 2 is *paired* when its non-dummy heads (`icl_verify.heads`) include a
    positive and a negative one (the multi-head pattern (4.7)), else *trapped* (its heads share
    one sign and act as one head).

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
        types = head_types(omega[e, :H], mu[e, :H])
        paired[e] = H >= 2 and (types > 0).any() and (types < 0).any()
    single = heads == 1
    return MemberKinds(single=single, paired=paired, trapped=~single & ~paired)


def representative(ensemble: TrainedEnsemble, heads: int) -> int:
    """The member with ``heads`` heads and the lowest final validation loss (as one run is shown).

    >>> from types import SimpleNamespace
    >>> e = SimpleNamespace(heads=np.array([1, 2, 2]), test_loss=np.array([[0.4, 0.41, 0.24]]))
    >>> representative(e, 2)
    2
    """
    candidates = np.flatnonzero(ensemble.heads == heads)
    if candidates.size == 0:
        raise ValueError(
            f"heads must be one of {sorted(set(ensemble.heads.tolist()))}, got {heads}"
        )
    return int(candidates[np.argmin(ensemble.test_loss[-1, candidates])])


# ---------------------------------------------------------------------------------------------
# the trained members at other prompt lengths (Figure 4)


def _truncated(prompts: Prompts, length: int) -> Prompts:
    """The first ``length`` context examples of each prompt (query kept): nested prompts."""
    return Prompts(
        prompts.X[..., :length, :],
        prompts.y[..., :length],
        prompts.x_query,
        prompts.y_query,
        prompts.beta,
    )


class _EnsembleAtLength:
    """All selected members' predictions at one test length, computed once per prompt batch."""

    def __init__(self, model: MultiHeadAttention, length: int) -> None:
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


def mse_by_test_length(
    models: Mapping[str, tuple[TrainedEnsemble, int]],
    lengths: Sequence[int],
    *,
    debiased_steps: Mapping[str, float] = NO_BASELINES,
    gd_steps: Mapping[str, float] = NO_BASELINES,
    n_prompts: int,
    seed: int = 0,
    device: str = "cpu",
    bayes: bool = True,
    progress: bool = False,
) -> JointMonteCarloEstimate:
    """Monte Carlo test MSE (2.5) of trained members and baselines at each test length L'.

    One draw of ``n_prompts`` prompts at the largest L' (`monte_carlo_losses`, seeded by
    ``seed``), truncated to every L' (nested prompts): every predictor sees the same prompts at
    every length, so differences between predictors and between lengths are paired. The
    ensembles may differ (e.g. linear and softmax attention, §HE-5.1-LENGTH) but must share the
    data model's d and sigma2. Predictors, named ``"<name>@<L'>"``, in this order at each L':

    - each key of ``models``: member ``index`` of ``ensemble`` for ``models[key] = (ensemble,
      index)`` (the listed members of one ensemble run in one forward pass per prompt batch);
    - each key of ``debiased_steps``: debiased one-step GD (4.11) at that step;
    - each key of ``gd_steps``: vanilla one-step GD (§HE-4.11) at that step;
    - ``Bayes`` (when ``bayes``): the posterior mean, ridge with lambda = sigma2 d.

    >>> training = EnsembleTraining(d=2, L=8, sigma2=0.1, heads=(1, 2), lr=3e-3, steps=20,
    ...     batch=16, seed=0, log_every=10, checkpoint_every=0, validation_batch=64)
    >>> ensemble = train_ensemble(training)
    >>> losses = mse_by_test_length({"H1": (ensemble, 0), "H2": (ensemble, 1)}, [4, 8],
    ...     debiased_steps={"dGD": 0.8}, gd_steps={"GD": 0.7}, n_prompts=256)
    >>> losses.names[:5]
    ('H1@4', 'H2@4', 'dGD@4', 'GD@4', 'Bayes@4')
    >>> bool(losses["dGD@8"].mean < losses["dGD@4"].mean)  # longer prompts, better estimate
    True
    """
    d, sigma2 = _shared_data_model(models)
    lengths = _test_lengths(lengths)
    names = [*models, *debiased_steps, *gd_steps, *(["Bayes"] if bayes else [])]
    if len(set(names)) != len(names):
        raise ValueError(
            "models, debiased_steps and gd_steps must have distinct names, none 'Bayes' when "
            f"bayes=True, got {names}"
        )
    groups: dict[int, tuple[TrainedEnsemble, list[int]]] = {}  # id(ensemble) -> its members
    slots = {}  # name -> (id(ensemble), position among its ensemble's listed members)
    for name, (ensemble, member) in models.items():
        listed = groups.setdefault(id(ensemble), (ensemble, []))[1]
        slots[name] = (id(ensemble), len(listed))
        listed.append(member)
    built = {key: ensemble.model(members, device) for key, (ensemble, members) in groups.items()}
    predictors = {}
    for n in lengths:
        at = {key: _EnsembleAtLength(model, n) for key, model in built.items()}
        for name, (key, position) in slots.items():
            predictors[f"{name}@{n}"] = at[key].member(position)
        for name, eta in debiased_steps.items():
            predictors[f"{name}@{n}"] = lambda p, n=n, eta=eta: gd_prediction(
                p.X[:, :n], p.y[:, :n], p.x_query, eta, debiased=True
            )
        for name, eta in gd_steps.items():
            predictors[f"{name}@{n}"] = lambda p, n=n, eta=eta: gd_prediction(
                p.X[:, :n], p.y[:, :n], p.x_query, eta
            )
        if bayes:
            predictors[f"Bayes@{n}"] = lambda p, n=n: bayes_prediction(
                p.X[:, :n], p.y[:, :n], p.x_query, sigma2
            )
    longest = Setting(d, max(lengths), sigma2)

    def sampler(count: int, generator: torch.Generator) -> Prompts:
        return sample_linear_regression(count, longest, generator=generator, device=device)

    with torch.no_grad():
        return monte_carlo_losses(
            predictors, sampler, n_prompts, seed=seed, device=device, progress=progress
        )


def _shared_data_model(models: Mapping[str, tuple[TrainedEnsemble, int]]) -> tuple[int, float]:
    """The d and sigma2 every listed ensemble was trained on; one-line ValueErrors otherwise."""
    if not isinstance(models, Mapping) or not models:
        raise ValueError(
            f"models must map at least one name to (TrainedEnsemble, member index), got {models!r}"
        )
    for name, (ensemble, _) in models.items():
        if ensemble.rho or ensemble.supports:
            raise ValueError(
                f"models[{name!r}] must be trained on isotropic single-task prompts (rho 0, "
                f"no supports), got rho={ensemble.rho}, supports={ensemble.supports}"
            )
    settings = {(ensemble.d, ensemble.sigma2) for ensemble, _ in models.values()}
    if len(settings) != 1:
        raise ValueError(
            f"models must come from ensembles with one d and sigma2, got (d, sigma2) in "
            f"{sorted(settings)}"
        )
    for name, (ensemble, member) in models.items():
        if not (isinstance(member, numbers.Integral) and 0 <= member < ensemble.heads.size):
            raise ValueError(
                f"models[{name!r}] must name a member in 0..{ensemble.heads.size - 1}, "
                f"got {member!r}"
            )
    return settings.pop()


def _test_lengths(lengths: Sequence[int]) -> list[int]:
    """The test lengths L' as ints; a one-line ValueError unless integers in 1..100000."""
    values = list(lengths) if isinstance(lengths, Sequence | np.ndarray) else [lengths]
    if not values or not all(
        isinstance(n, numbers.Integral) and not isinstance(n, bool) and 1 <= n <= MAX_PROMPT_LENGTH
        for n in values
    ):
        raise ValueError(f"lengths must be integers in 1..{MAX_PROMPT_LENGTH}, got {values}")
    return [int(n) for n in values]
