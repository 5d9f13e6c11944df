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
  bounds of Theorems 5.1, 5.2 and Lemmas D.1-D.3 (`sparse_gd`); Theorem 5.3's upper and lower
  bounds, the exact OLS risks and the Lasso rate on isotropic data (`sparse_isotropic`).

`theory.symbolic` derives these formulas with sympy. Nothing here imports torch.

The modules named above are private (``theory/_risks.py`` ...): each public name has one path,
``icl_verify.theory.X``, re-exported below as ``X as X`` (what IDEs and type checkers read);
``__all__`` is derived from those lines. `theory.symbolic` is a public subpackage of its own.
"""

from icl_verify.theory._approximate_loss import approximate_loss as approximate_loss
from icl_verify.theory._approximate_loss import approximate_loss_grad as approximate_loss_grad
from icl_verify.theory._approximate_loss import approximate_loss_hessian as approximate_loss_hessian
from icl_verify.theory._approximate_loss import optimal_mu as optimal_mu
from icl_verify.theory._approximate_loss import optimal_mu_loss as optimal_mu_loss
from icl_verify.theory._approximate_loss import stage_two_lower_bound as stage_two_lower_bound
from icl_verify.theory._approximation_error import approximation_constant as approximation_constant
from icl_verify.theory._approximation_error import (
    dgd_gap_length_slope_bias as dgd_gap_length_slope_bias,
)
from icl_verify.theory._approximation_error import (
    dgd_gap_omega_slope_bias as dgd_gap_omega_slope_bias,
)
from icl_verify.theory._approximation_error import dgd_gap_rms_large_d as dgd_gap_rms_large_d
from icl_verify.theory._approximation_error import manifold_gap_limit as manifold_gap_limit
from icl_verify.theory._approximation_error import (
    manifold_gap_slope_bias as manifold_gap_slope_bias,
)
from icl_verify.theory._approximation_error import product_gap_limit as product_gap_limit
from icl_verify.theory._constructions import absolute_evaluation as absolute_evaluation
from icl_verify.theory._constructions import algorithm_roundings as algorithm_roundings
from icl_verify.theory._constructions import higham_gamma as higham_gamma
from icl_verify.theory._constructions import network_roundings as network_roundings
from icl_verify.theory._constructions import normalised_error_bound as normalised_error_bound
from icl_verify.theory._constructions import (
    preprocessed_gd_predictions as preprocessed_gd_predictions,
)
from icl_verify.theory._constructions import preprocessed_prompt as preprocessed_prompt
from icl_verify.theory._linear_attention import FrozenLinearMinimum as FrozenLinearMinimum
from icl_verify.theory._linear_attention import SoftmaxPairExpansion as SoftmaxPairExpansion
from icl_verify.theory._linear_attention import (
    frozen_linear_attention_minimum as frozen_linear_attention_minimum,
)
from icl_verify.theory._linear_attention import (
    frozen_linear_attention_risk as frozen_linear_attention_risk,
)
from icl_verify.theory._linear_attention import (
    frozen_linear_attention_risk_shift as frozen_linear_attention_risk_shift,
)
from icl_verify.theory._linear_attention import softmax_pair_expansion as softmax_pair_expansion
from icl_verify.theory._manifold import SingleHeadOptimum as SingleHeadOptimum
from icl_verify.theory._manifold import effective_learning_rate as effective_learning_rate
from icl_verify.theory._manifold import manifold_limit_bound as manifold_limit_bound
from icl_verify.theory._manifold import manifold_loss as manifold_loss
from icl_verify.theory._manifold import manifold_mu as manifold_mu
from icl_verify.theory._manifold import single_head_optimum as single_head_optimum
from icl_verify.theory._manifold import (
    step_decrement_slope_bias as step_decrement_slope_bias,
)
from icl_verify.theory._multitask import PAPER_TABLE_2 as PAPER_TABLE_2
from icl_verify.theory._multitask import GroupTable as GroupTable
from icl_verify.theory._multitask import SupportConditions as SupportConditions
from icl_verify.theory._multitask import first_order_prediction as first_order_prediction
from icl_verify.theory._multitask import (
    optimal_task_preconditioners as optimal_task_preconditioners,
)
from icl_verify.theory._multitask import paper_mode as paper_mode
from icl_verify.theory._multitask import preconditioned_dgd_risk as preconditioned_dgd_risk
from icl_verify.theory._multitask import restricted_dgd_risk as restricted_dgd_risk
from icl_verify.theory._multitask import restricted_optimum as restricted_optimum
from icl_verify.theory._multitask import shared_preconditioner as shared_preconditioner
from icl_verify.theory._multitask import support_conditions as support_conditions
from icl_verify.theory._multitask import support_groups as support_groups
from icl_verify.theory._multitask import task_preconditioners as task_preconditioners
from icl_verify.theory._normalised_attention import PAPER_TABLE_1 as PAPER_TABLE_1
from icl_verify.theory._normalised_attention import ActivationCoefficients as ActivationCoefficients
from icl_verify.theory._normalised_attention import (
    activation_coefficients as activation_coefficients,
)
from icl_verify.theory._normalised_attention import first_order_step as first_order_step
from icl_verify.theory._normalised_attention import kernel_mean_step as kernel_mean_step
from icl_verify.theory._normalised_attention import second_order_step as second_order_step
from icl_verify.theory._preconditioning import (
    debiased_excess_risk_bound as debiased_excess_risk_bound,
)
from icl_verify.theory._preconditioning import kms_inverse as kms_inverse
from icl_verify.theory._preconditioning import optimal_preconditioner as optimal_preconditioner
from icl_verify.theory._preconditioning import preconditioned_gd_risk as preconditioned_gd_risk
from icl_verify.theory._risks import BayesComparison as BayesComparison
from icl_verify.theory._risks import TunedRisk as TunedRisk
from icl_verify.theory._risks import bayes_risk_limit as bayes_risk_limit
from icl_verify.theory._risks import compare_with_bayes as compare_with_bayes
from icl_verify.theory._risks import debiased_gd_risk as debiased_gd_risk
from icl_verify.theory._risks import debiasing_gap as debiasing_gap
from icl_verify.theory._risks import gd_risk as gd_risk
from icl_verify.theory._risks import gd_risk_limit as gd_risk_limit
from icl_verify.theory._risks import optimal_gd as optimal_gd
from icl_verify.theory._softmax_norm import MOMENT_LIMIT as MOMENT_LIMIT
from icl_verify.theory._softmax_norm import NormExpansion as NormExpansion
from icl_verify.theory._softmax_norm import TiltedMoments as TiltedMoments
from icl_verify.theory._softmax_norm import conditional_norm_expansion as conditional_norm_expansion
from icl_verify.theory._softmax_norm import limit_density as limit_density
from icl_verify.theory._softmax_norm import softmax_norm_expansion as softmax_norm_expansion
from icl_verify.theory._softmax_norm import softmax_norm_regime as softmax_norm_regime
from icl_verify.theory._softmax_norm import tilted_moments as tilted_moments
from icl_verify.theory._sparse_gd import PreprocessedGD as PreprocessedGD
from icl_verify.theory._sparse_gd import RateBound as RateBound
from icl_verify.theory._sparse_gd import SupportLossRates as SupportLossRates
from icl_verify.theory._sparse_gd import coordinate_loss_probability as coordinate_loss_probability
from icl_verify.theory._sparse_gd import lemma_d1_bound as lemma_d1_bound
from icl_verify.theory._sparse_gd import lemma_d2_sample_size as lemma_d2_sample_size
from icl_verify.theory._sparse_gd import lemma_d3_bound as lemma_d3_bound
from icl_verify.theory._sparse_gd import lemma_d4_bound as lemma_d4_bound
from icl_verify.theory._sparse_gd import margin_term_bounds as margin_term_bounds
from icl_verify.theory._sparse_gd import noise_term_independent as noise_term_independent
from icl_verify.theory._sparse_gd import population_correlations as population_correlations
from icl_verify.theory._sparse_gd import preprocessed_gd_closed_form as preprocessed_gd_closed_form
from icl_verify.theory._sparse_gd import product_mean_rate as product_mean_rate
from icl_verify.theory._sparse_gd import sign_prior_constants as sign_prior_constants
from icl_verify.theory._sparse_gd import support_loss_rates as support_loss_rates
from icl_verify.theory._sparse_gd import support_margin as support_margin
from icl_verify.theory._sparse_gd import (
    support_retention_sample_size as support_retention_sample_size,
)
from icl_verify.theory._sparse_gd import theorem_5_1_bound as theorem_5_1_bound
from icl_verify.theory._sparse_gd import theorem_5_2_bound as theorem_5_2_bound
from icl_verify.theory._sparse_isotropic import READINGS as READINGS
from icl_verify.theory._sparse_isotropic import STEP_READINGS as STEP_READINGS
from icl_verify.theory._sparse_isotropic import app_f1_bias_bound as app_f1_bias_bound
from icl_verify.theory._sparse_isotropic import app_f1_step_count as app_f1_step_count
from icl_verify.theory._sparse_isotropic import app_f1_variance_bound as app_f1_variance_bound
from icl_verify.theory._sparse_isotropic import lasso_rate as lasso_rate
from icl_verify.theory._sparse_isotropic import lemma_f1_noise_bound as lemma_f1_noise_bound
from icl_verify.theory._sparse_isotropic import ols_excess_risk as ols_excess_risk
from icl_verify.theory._sparse_isotropic import theorem_5_3_d_log_slope as theorem_5_3_d_log_slope
from icl_verify.theory._sparse_isotropic import theorem_5_3_lower_bound as theorem_5_3_lower_bound
from icl_verify.theory._sparse_isotropic import theorem_5_3_n_log_slope as theorem_5_3_n_log_slope
from icl_verify.theory._sparse_isotropic import (
    theorem_5_3_sparsity_exponent as theorem_5_3_sparsity_exponent,
)
from icl_verify.theory._sparse_isotropic import theorem_5_3_step_budget as theorem_5_3_step_budget
from icl_verify.theory._sparse_isotropic import (
    theorem_5_3_step_exponent as theorem_5_3_step_exponent,
)
from icl_verify.theory._sparse_isotropic import theorem_5_3_upper_bound as theorem_5_3_upper_bound

from icl_verify.settings import Setting as Setting

# Every name imported above, as `X as X`: the public names, each with one path.
__all__ = sorted(name for name in dir() if not name.startswith("_") and name != "symbolic")
