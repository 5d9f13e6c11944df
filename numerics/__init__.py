"""Simulation side of icl-verify, in torch on CPU or GPU.

- `data`: prompt samplers (isotropic, KMS covariance, multi-task, sparse), the embedding (2.1),
  the seeded generators of a run (on the CPU inside `draw_on_cpu`, whatever the device);
- `models`: the one-layer multi-head softmax attention of He et al. (2025) eq. (2.2) as a batched
  ensemble, linear attention (5.1), normalised activations (5.2) (any spec of
  `icl_verify.activations`), a model built from given circuits, the kernel-sum predictor (3.2);
- `trainer`: online training of an ensemble with checkpoints and resume;
- `circuits`: KQ/OV circuits, effective (omega_h, mu_h) and pattern measures;
- `estimators`: in-context estimators (OLS, ridge, Bayes, one-step and t-step GD, debiased GD,
  kernel regressors, Lasso, preprocess-then-GD);
- `montecarlo`: streamed Monte Carlo of population losses with standard errors;
- `kernel_sum`: Monte Carlo measurements of the kernel-sum predictor (3.2): the ± pair's
  loss and its distance to debiased GD, H heads on the manifold, the single-head optimum;
- `ensemble`: the trained ensemble of He et al. §3 (training, resuming, its members, their
  test MSE at other prompt lengths, several ensembles side by side);
- `effective_steps`: a trained model's effective step, the least-squares slope of its predictions
  on debiased one-step GD, extrapolated to L -> infinity for fixed pairs; a test MSE relative
  to a baseline's (§5.2);
- `patterns`: the head patterns of Observations 1, 2, 4 read off its logged history, the
  paired fraction per H, the logs drawn as snapshots;
- `length_generalisation`: test MSE against the test length L' (Figure 4): one predictor's
  curve from a joint estimate, the fixed ± pair and single head at every L';
- `softmax_pair`: the softmax pair (5.2) emulating a linear-attention head, its gap to it, the
  gap's expansion in eps (Richardson) and its roundoff bounds (§5.1);
- `linear_attention`: trained one-head linear attention (5.1): its learned step, pattern and
  risk, its test MSE over L' beside softmax members and debiased GD (§5.1, Figure 8);
- `head_count`: the paired members' common KQ scale and group sums per H (and relative to a
  reference H), the decay of dummy heads, the member drawn with one (App. A.1);
- `multitask`: the heads of a multi-task model (omega^h, the label block), its mode by a stated
  rule (at every log, and per H), the exact kernel predictor and its gap to a first-order one,
  Gamma_k and zero sums where training settles, per-task test errors beside restricted debiased
  GD (§5.4);
- `normalised_attention`: two-head models of each normalised activation read at the end of
  training: paired members, fitted step with its Adam noise, test MSE over L' against debiased GD
  at that step (§5.2);
- `preconditioning`: the preconditioner a trained model on KMS covariates learned (from its
  circuits) and applies (fitted on its predictions), bootstrap distances, paired risks, the
  heads' settled opposition, all of it for the paired members of an ensemble, and the
  best preconditioner of one-step GD fitted on simulated labels (Lemma E.4) (§5.3);
- `softmax_norm`: samples of ||softmax(omega X^T x_q)||^2 and their summary along a sweep
  (App. C, Figure 20), and the moments of one example under its attention weight (Stein);
- `true_loss`: plain SGD on the true loss of the kernel-sum model (3.2), the labels integrated
  out exactly, and its member means with standard errors (App. C, Figure 21);
- `sparse_regression`: exact excess risks ``(v - w*)^T Sigma (v - w*)`` of the sparse-regression
  estimators, GD and preprocess-then-GD along their paths (Chen, Zhao, Zou 2024 §4-5);
- `linear_transformer`: the multi-layer linear-attention network (2.2) of Chen et al. (2024) and the
  explicit weights of their Propositions 4.1/4.2 (Algorithm 1, then t GD steps);
- `encoder`: the multi-layer post-LN softmax encoder of Chen et al. (2024) §3, batched over
  members, with head masking (App. B) and per-layer representations;
- `decoder`: the GPT-2-style causal decoder of Chen et al. App. G on interleaved prompts, with
  the encoder's attention and head masking;
- `encoder_analysis`: head importance by masking (3.1), App. B's sorted average, linear probes,
  P-probing (§6), evaluation prompts per member;
- `encoder_evaluation`: trained encoders read from a seed: beside OLS, tuned ridge and Lasso
  on the same prompts, against tuned ridge (the regime gate), head importance, probes per
  layer, P-probing; member values averaged per noise level;
- `encoder_training`: the trained encoders of Chen et al. App. B (one ensemble per number of
  heads, a member per noise level and replicate; App. G's decoder and correlated design
  through the same training), pruning and fine-tuning;
- `pre_gd`: GD on raw vs preprocessed data at tuned learning rates, their paired gap (Figure 2c);
- `isotropic`: tuned OLS, ridge, GD, pre-gd and Lasso risks, isotropic sparse regression (Thm 5.3);
- `gd_tuning`: GD and pre-gd oracle-tuned over (step, count) on diagonal-Sigma sparse prompts, the
  risks of Chen et al.'s upper bounds (Thms 5.1, 5.2, §4.3);
- `gd_decomposition`: pre-gd's excess risk split into bias, variance and cross parts by iterated
  GD, with R_hat from the same labels or from an independent sample (App. D, (D.1)-(D.3));
- `sparse_lemmas`: draws of Algorithm 1's correlations r_hat beside r = Sigma w* (Lemmas D.1, D.2),
  and of the noise's correlations ||X^T eps / n||^2 (Lemma F.1);
- `risks`: Monte Carlo risks of one-step GD and debiased GD at several steps, and of the Bayes
  predictor and tuned debiased GD extrapolated to d -> inf at fixed d/L (§4.3, Thm 4.2(iii));
- `threads`: torch on one CPU thread (`single_thread`, the executor's policy; torch-free import).
- `two_head`: two-head models trained from the symmetric start of Def. B.1 (SGD or Adam),
  head 1's (omega, mu) history at t = lr * step (Appendix B).

Never imports `theory` or `dynamics`: a measurement must not use the formula it checks.
The everyday names are exported here flat, and loaded lazily (`icl_verify._lazy`):
importing the package does not import torch until a name is used.
"""

from icl_verify._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "circuits": (
            "CircuitSummary",
            "kq_circuit",
            "omega_mu",
            "ov_circuit",
            "summarize_circuits",
        ),
        "data": (
            "MultiTaskPrompts",
            "Prompts",
            "SparsePrompts",
            "draw_on_cpu",
            "drawing_on_cpu",
            "embed",
            "kms_covariance",
            "linear_regression_sampler",
            "multitask_regression_sampler",
            "sparse_regression_sampler",
            "sample_linear_regression",
            "sample_multitask_regression",
            "sample_sparse_regression",
            "seeded_generator",
        ),
        "estimators": (
            "bayes_prediction",
            "LassoSolution",
            "feature_label_correlations",
            "gd_coefficients",
            "gd_path",
            "gd_prediction",
            "kernel_head_averages",
            "kernel_regression_prediction",
            "kernel_sum_prediction",
            "lasso_coefficients",
            "lasso_coordinate_descent",
            "lasso_kkt_violations",
            "lasso_prediction",
            "least_squares_coefficients",
            "multi_step_gd_prediction",
            "ols_prediction",
            "preconditioned_gd_prediction",
            "preprocessed_gd_prediction",
            "ridge_prediction",
        ),
        "ensemble": (
            "EnsembleTraining",
            "MemberKinds",
            "TrainedEnsemble",
            "member_kinds",
            "mse_by_test_length",
            "representative",
            "train_ensemble",
        ),
        "effective_steps": (
            "FittedSteps",
            "extrapolated_pattern_steps",
            "fitted_pattern_steps",
            "fitted_steps",
            "relative_mse",
        ),
        "kernel_sum": (
            "ProfileMinimum",
            "SingleHeadMinimum",
            "SquareGaps",
            "fitted_minimum",
            "PairDifferences",
            "loss_difference_to_debiased_gd",
            "loss_differences_to_debiased_gd",
            "pair_loss_landscape",
            "relative_prediction_gap",
            "relative_prediction_gaps",
            "single_head_minimum",
            "single_head_profile",
            "square_gaps_to_debiased_gd",
        ),
        "models": ("AttentionConfig", "KernelSumModel", "MultiHeadAttention"),
        "montecarlo": (
            "JointMonteCarloEstimate",
            "LinearInLabels",
            "LossLandscape",
            "MonteCarloEstimate",
            "RANDOMNESS_BLOCK",
            "kernel_sum_loss_grid",
            "monte_carlo_loss",
            "monte_carlo_losses",
        ),
        "patterns": (
            "CIRCUIT_MEASURES",
            "GROUP_QUANTITIES",
            "GroupPatterns",
            "KernelReading",
            "HeadPatterns",
            "FractionsByH",
            "PatternDynamics",
            "PatternGrid",
            "SEED_QUANTITIES",
            "SeedSpread",
            "group_patterns",
            "head_patterns",
            "kernel_reading",
            "logged_steps",
            "logging_noise",
            "fractions_by_h",
            "pattern_dynamics",
            "pattern_grid",
            "seed_spread",
            "settled_mean",
            "settled_value",
        ),
        "head_count": (
            "DummyDecay",
            "DummyExample",
            "MemberScales",
            "ScalesPerHeads",
            "dummy_decay",
            "dummy_example",
            "member_scales",
            "pooled_spread",
            "relative_to_reference",
            "scales_per_heads",
        ),
        "length_generalisation": (
            "FixedKernelCurves",
            "fixed_kernel_mse_by_test_length",
            "length_curve",
        ),
        "multitask": (
            "BlockPattern",
            "ModeReading",
            "MultiTaskHeads",
            "SettledHeads",
            "SingleKernel",
            "first_order_gaps",
            "kernel_multitask_prediction",
            "mode_history",
            "mode_reading",
            "multitask_heads",
            "multitask_losses",
            "multitask_mode",
            "block_pattern",
            "settled_heads",
            "single_kernel",
        ),
        "normalised_attention": ("ActivationGroups", "read_activation_groups"),
        "preconditioning": (
            "BootstrapDistances",
            "FittedPreconditioners",
            "PairedPreconditioners",
            "bootstrap_distances",
            "fitted_preconditioners",
            "head_opposition",
            "learned_preconditioners",
            "model_preconditioners",
            "preconditioned_losses",
            "read_paired_preconditioners",
            "settled_opposition",
            "SimulatedPreconditioner",
            "simulated_optimal_preconditioner",
        ),
        "linear_attention": (
            "LinearMembers",
            "LinearVsSoftmax",
            "learned_steps",
            "linear_vs_softmax_by_test_length",
            "read_linear_members",
        ),
        "linear_transformer": (
            "LinearAttentionLayer",
            "LinearTransformer",
            "gd_layer",
            "gd_layer_readouts",
            "preprocess_then_gd_transformer",
            "preprocessing_embedding",
            "preprocessing_layer",
            "preprocessing_layer_output",
        ),
        "encoder": ("BlockStack", "Encoder", "EncoderConfig", "attention_heads", "encoder_tokens"),
        "decoder": ("Decoder", "DecoderConfig", "decoder_tokens"),
        "encoder_analysis": (
            "HeadImportance",
            "LinearProbe",
            "PProbe",
            "effective_heads",
            "fit_probe",
            "head_importance",
            "member_prompts",
            "p_probe",
            "probe_excess_risks",
            "sorted_average",
        ),
        "encoder_evaluation": (
            "BaselineComparison",
            "EvaluationPrompts",
            "ImportanceSummary",
            "RidgeGap",
            "compare_over_n",
            "compare_with_baselines",
            "encoder_p_probe",
            "evaluation_prompts",
            "head_gain",
            "importance_summary",
            "layer_probe_errors",
            "masked_importance",
            "noise_level_gap",
            "noise_level_mean",
            "noise_level_mean_se",
            "ridge_gap",
        ),
        "encoder_training": (
            "EncoderTraining",
            "PrunedTraining",
            "TrainedEncoders",
            "fine_tune_pruned",
            "pruned_heads",
            "train_encoders",
        ),
        "pre_gd": (
            "PreGdComparison",
            "TunedPath",
            "compare_pre_gd",
            "pre_gd_comparison",
            "stable_learning_rates",
        ),
        "gd_tuning": ("PromptArrays", "TunedGD", "TunedGDDraw", "tuned_gd"),
        "gd_decomposition": (
            "PreGdParts",
            "ProofTerms",
            "independent_correlations",
            "pre_gd_parts",
            "sign_prior_parts",
            "proof_terms",
            "split_pre_gd_parts",
        ),
        "isotropic": ("IsotropicRisks", "isotropic_risks", "isotropic_setting"),
        "sparse_lemmas": ("CorrelationDraws", "noise_correlation_norms", "sample_correlations"),
        "sparse_regression": (
            "TunedRisks",
            "excess_risk",
            "gd_excess_risks",
            "largest_gram_eigenvalue",
            "lasso_excess_risks",
            "least_squares_excess_risks",
            "oracle_tuned",
        ),
        "risks": (
            "OneStepRisks",
            "ProportionalLimit",
            "extrapolate_in_dimension",
            "one_step_gd_risks",
            "proportional_limit",
        ),
        "softmax_norm": (
            "SoftmaxNormSweep",
            "TiltedMomentEstimates",
            "softmax_norm_samples",
            "softmax_norm_sweep",
            "tilted_moment_estimates",
        ),
        "softmax_pair": (
            "PairExpansion",
            "pair_gap_expansion",
            "pair_roundoff_bounds",
            "softmax_pair_gaps",
        ),
        "threads": ("single_thread",),
        "trainer": (
            "ForeignCheckpointError",
            "LinearRegressionTask",
            "MultiTaskRegressionTask",
            "SparseRegressionTask",
            "TrainConfig",
            "TrainHistory",
            "TrainingDivergedError",
            "TrainingStopped",
            "TrainResult",
            "train",
        ),
        "true_loss": (
            "TrueLossHistory",
            "TrueLossSummary",
            "TrueLossTraining",
            "conditional_risk",
            "train_true_loss",
            "true_loss_summary",
            "true_losses",
        ),
        "two_head": ("TwoHeadHistory", "TwoHeadTraining", "train_two_head"),
    },
)
