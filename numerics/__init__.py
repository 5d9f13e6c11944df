"""Simulation side of icl-verify, in torch on CPU or GPU.

- `data`: prompt samplers (isotropic, KMS covariance, multi-task, sparse), the embedding (2.1);
- `models`: the one-layer multi-head softmax attention of He et al. (2025) eq. (2.2) as a batched
  ensemble, linear attention (5.1), normalised activations (5.2), the kernel-sum predictor (3.2);
- `train`: online training of an ensemble with checkpoints and resume;
- `circuits`: KQ/OV circuits, effective (omega_h, mu_h) and pattern measures;
- `estimators`: in-context estimators (OLS, ridge, Bayes, one-step and t-step GD, debiased GD,
  kernel regressors, Lasso, preprocess-then-GD);
- `montecarlo`: streamed Monte Carlo of population losses with standard errors.

Never imports `theory` or `dynamics`: a measurement must not use the formula it checks.
The everyday names are re-exported here flat.
"""

from icl_verify.numerics.circuits import CircuitSummary, omega_mu, summarize_circuits
from icl_verify.numerics.data import (
    MultiTaskPrompts,
    Prompts,
    embed,
    kms_covariance,
    sample_linear_regression,
    sample_multitask_regression,
    sample_sparse_regression,
)
from icl_verify.numerics.estimators import (
    bayes_prediction,
    gd_prediction,
    kernel_regression_prediction,
    kernel_sum_prediction,
    lasso_prediction,
    multi_step_gd_prediction,
    ols_prediction,
    preconditioned_gd_prediction,
    preprocessed_gd_prediction,
    ridge_prediction,
)
from icl_verify.numerics.models import AttentionConfig, KernelSumModel, MultiHeadAttention
from icl_verify.numerics.montecarlo import (
    LinearInLabels,
    LossLandscape,
    MonteCarloEstimate,
    kernel_sum_loss_grid,
    monte_carlo_loss,
    monte_carlo_losses,
)
from icl_verify.numerics.train import TrainConfig, TrainingDivergedError, TrainResult, train

__all__ = [
    "AttentionConfig",
    "CircuitSummary",
    "KernelSumModel",
    "LinearInLabels",
    "LossLandscape",
    "MonteCarloEstimate",
    "MultiHeadAttention",
    "MultiTaskPrompts",
    "Prompts",
    "TrainConfig",
    "TrainResult",
    "TrainingDivergedError",
    "bayes_prediction",
    "embed",
    "gd_prediction",
    "kernel_regression_prediction",
    "kernel_sum_loss_grid",
    "kernel_sum_prediction",
    "kms_covariance",
    "lasso_prediction",
    "monte_carlo_loss",
    "monte_carlo_losses",
    "multi_step_gd_prediction",
    "ols_prediction",
    "omega_mu",
    "preconditioned_gd_prediction",
    "preprocessed_gd_prediction",
    "ridge_prediction",
    "sample_linear_regression",
    "sample_multitask_regression",
    "sample_sparse_regression",
    "summarize_circuits",
    "train",
]
