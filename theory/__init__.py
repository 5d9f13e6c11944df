"""Exact and symbolic mathematics of He et al. (2025) and Chen, Zhao, Zou (2024), in float64
numpy and sympy.

The closed forms a researcher needs every day are re-exported here flat:

- the problem `Setting(d, L, sigma2)`;
- the approximate population loss Ltilde of (4.1), its gradient and Hessian,
  the optimal OV weights for fixed KQ scales, the Stage II lower bound (4.5)
  (`approximate_loss`);
- the solution manifold (4.6)-(4.8), the error of its omega -> 0 limit (Theorem 4.2(ii)) and
  the single-head optimum (`manifold`);
- exact finite-(d, L) risks of one-step GD and debiased GD, and the Bayes
  risk in the proportional limit, Theorem 4.2(iii) (`risks`);
- the error terms of the approximations: the gap of Ltilde on the manifold and the
  ± pair's distance to debiased GD, with the biases of their log-log slopes
  (`approximation_error`);
- frozen one-head linear attention at a new prompt length and the softmax head pair that
  emulates a linear head, §5.1 (`linear_attention`);
- two heads with a normalised activation f as debiased GD: a_f, the first-order, second-order
  and kernel-mean steps, §5.2 (`normalised_attention`);
- one-step GD preconditioned by a matrix Gamma on x ~ N(0, Sigma): its exact risk, the optimal
  Gamma (vanilla and debiased, Lemma E.4) and the KMS inverse, §5.3 (`preconditioning`);
- multi-task regression on supports S_k: the per-task first-order predictor and preconditioners
  Gamma_k, the conditions for support-restricted debiased GD, its exact risk and optimum, the
  arithmetic of Table 2, §5.4 (`multitask`);
- the squared norm of the softmax vector, L ||p||^2, to O(1/L^2) and its regime, and the
  moments of one attention weight by Stein's lemma, App. C (`softmax_norm`);
- Chen et al. (2024): what the constructed transformer of Props. 4.1/4.2 must compute
  (Algorithm 1, then t GD steps) and its floating-point error bound (`constructions`);
  the closed form of preprocess-then-GD with its bias/variance/cross parts (D.1-D.3), the
  bounds of Theorems 5.1, 5.2 and Lemmas D.1, D.2 (`sparse_gd`); Theorem 5.3's upper and lower
  bounds, the exact OLS risks and the Lasso rate on isotropic data (`sparse_isotropic`).

`theory.symbolic` derives these formulas with sympy. Nothing here imports torch.
"""

from icl_verify.theory.approximate_loss import (
    approximate_loss,
    approximate_loss_grad,
    approximate_loss_hessian,
    optimal_mu,
    optimal_mu_loss,
    stage_two_lower_bound,
)
from icl_verify.theory.approximation_error import (
    approximation_constant,
    dgd_gap_length_slope_bias,
    dgd_gap_omega_slope_bias,
    dgd_gap_rms_large_d,
    manifold_gap_limit,
    manifold_gap_slope_bias,
    product_gap_limit,
)
from icl_verify.theory.constructions import (
    absolute_evaluation,
    algorithm_roundings,
    higham_gamma,
    network_roundings,
    normalised_error_bound,
    preprocessed_gd_predictions,
    preprocessed_prompt,
)
from icl_verify.theory.linear_attention import (
    FrozenLinearMinimum,
    SoftmaxPairExpansion,
    frozen_linear_attention_minimum,
    frozen_linear_attention_risk,
    frozen_linear_attention_risk_shift,
    softmax_pair_expansion,
)
from icl_verify.theory.manifold import (
    SingleHeadOptimum,
    effective_learning_rate,
    manifold_limit_bound,
    manifold_loss,
    manifold_mu,
    single_head_optimum,
)
from icl_verify.theory.multitask import (
    PAPER_TABLE_2,
    GroupTable,
    SupportConditions,
    first_order_prediction,
    optimal_task_preconditioners,
    paper_mode,
    preconditioned_dgd_risk,
    restricted_dgd_risk,
    restricted_optimum,
    shared_preconditioner,
    support_conditions,
    support_groups,
    task_preconditioners,
)
from icl_verify.theory.normalised_attention import (
    PAPER_TABLE_1,
    ActivationCoefficients,
    activation_coefficients,
    first_order_step,
    kernel_mean_step,
    second_order_step,
)
from icl_verify.theory.preconditioning import (
    debiased_excess_risk_bound,
    kms_inverse,
    optimal_preconditioner,
    preconditioned_gd_risk,
)
from icl_verify.theory.risks import (
    BayesComparison,
    TunedRisk,
    bayes_risk_limit,
    compare_with_bayes,
    debiased_gd_risk,
    gd_risk,
    gd_risk_limit,
    optimal_gd,
)
from icl_verify.theory.setting import Setting
from icl_verify.theory.softmax_norm import (
    NormExpansion,
    TiltedMoments,
    conditional_norm_expansion,
    limit_density,
    softmax_norm_expansion,
    softmax_norm_regime,
    tilted_moments,
)
from icl_verify.theory.sparse_gd import (
    PreprocessedGD,
    RateBound,
    SupportLossRates,
    coordinate_loss_probability,
    lemma_d1_bound,
    lemma_d2_sample_size,
    lemma_d4_bound,
    margin_term_bounds,
    noise_term_independent,
    population_correlations,
    preprocessed_gd_closed_form,
    product_mean_rate,
    sign_prior_constants,
    support_loss_rates,
    support_margin,
    support_retention_sample_size,
    theorem_5_1_bound,
    theorem_5_2_bound,
)
from icl_verify.theory.sparse_isotropic import (
    READINGS,
    STEP_READINGS,
    lasso_rate,
    ols_excess_risk,
    theorem_5_3_d_log_slope,
    theorem_5_3_lower_bound,
    theorem_5_3_n_log_slope,
    theorem_5_3_sparsity_exponent,
    theorem_5_3_step_budget,
    theorem_5_3_step_exponent,
    theorem_5_3_upper_bound,
)

__all__ = [
    "absolute_evaluation",
    "activation_coefficients",
    "ActivationCoefficients",
    "algorithm_roundings",
    "approximate_loss",
    "approximate_loss_grad",
    "approximate_loss_hessian",
    "bayes_risk_limit",
    "BayesComparison",
    "compare_with_bayes",
    "conditional_norm_expansion",
    "coordinate_loss_probability",
    "debiased_excess_risk_bound",
    "debiased_gd_risk",
    "dgd_gap_length_slope_bias",
    "dgd_gap_omega_slope_bias",
    "dgd_gap_rms_large_d",
    "effective_learning_rate",
    "first_order_prediction",
    "first_order_step",
    "frozen_linear_attention_minimum",
    "frozen_linear_attention_risk",
    "frozen_linear_attention_risk_shift",
    "FrozenLinearMinimum",
    "gd_risk",
    "gd_risk_limit",
    "GroupTable",
    "higham_gamma",
    "kernel_mean_step",
    "kms_inverse",
    "lasso_rate",
    "lemma_d1_bound",
    "lemma_d2_sample_size",
    "lemma_d4_bound",
    "noise_term_independent",
    "limit_density",
    "manifold_gap_limit",
    "product_gap_limit",
    "manifold_gap_slope_bias",
    "approximation_constant",
    "manifold_limit_bound",
    "manifold_loss",
    "manifold_mu",
    "margin_term_bounds",
    "network_roundings",
    "normalised_error_bound",
    "NormExpansion",
    "ols_excess_risk",
    "optimal_gd",
    "optimal_mu",
    "optimal_mu_loss",
    "optimal_preconditioner",
    "optimal_task_preconditioners",
    "paper_mode",
    "PAPER_TABLE_1",
    "PAPER_TABLE_2",
    "population_correlations",
    "preconditioned_dgd_risk",
    "preconditioned_gd_risk",
    "preprocessed_gd_closed_form",
    "preprocessed_gd_predictions",
    "preprocessed_prompt",
    "PreprocessedGD",
    "product_mean_rate",
    "RateBound",
    "READINGS",
    "restricted_dgd_risk",
    "restricted_optimum",
    "second_order_step",
    "Setting",
    "shared_preconditioner",
    "sign_prior_constants",
    "single_head_optimum",
    "SingleHeadOptimum",
    "softmax_norm_expansion",
    "softmax_norm_regime",
    "softmax_pair_expansion",
    "SoftmaxPairExpansion",
    "STEP_READINGS",
    "stage_two_lower_bound",
    "support_conditions",
    "support_groups",
    "support_loss_rates",
    "support_margin",
    "support_retention_sample_size",
    "SupportLossRates",
    "SupportConditions",
    "task_preconditioners",
    "theorem_5_1_bound",
    "theorem_5_2_bound",
    "theorem_5_3_d_log_slope",
    "theorem_5_3_lower_bound",
    "theorem_5_3_n_log_slope",
    "theorem_5_3_sparsity_exponent",
    "theorem_5_3_step_budget",
    "theorem_5_3_step_exponent",
    "theorem_5_3_upper_bound",
    "TiltedMoments",
    "tilted_moments",
    "TunedRisk",
]
