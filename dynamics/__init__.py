"""Gradient-flow ODEs on the approximate loss of He et al. (2025), integrated with scipy.

Holds the H-head flow d theta/dt = -grad Ltilde, discrete gradient descent on
Ltilde, the two-head reduced system of Appendix B with its three phases, and
phase portraits. Float64 numpy only; no torch.

A problem is described by orthogonal objects composed by one entry point, `solve`:

- the vector field: `GradientFlowField` (H heads, -grad Ltilde of (4.1)),
  `TwoHeadField` (the reduced 2-D system (B.4) on the symmetric subspace) or
  `WeightSpaceField` (the flow of Ltilde on a two-head model's weights from Def. B.1,
  read in (omega, mu): (B.4) preconditioned by the product parametrisation);
- the solver: `ODESolver` (stiff scipy method, analytic Jacobian) or
  `GradientDescent` (fixed step lr, t = lr k);
- what to save: `SaveAt` (an increasing time grid, log-spaced by default) and
  `Event`s (zero crossings located by root finding);
- the result: `Trajectory` (t, omega, mu, loss; head types, sign matching,
  zero-sum ratio, KQ dispersion, distance to S_omega).

Everyday wrappers: `gradient_flow`, `two_head_flow`, `weight_space_flow`, `two_head_phases`,
`symmetric_start_flows`, `perturbed_flow_ends`, `phase_portrait`, `random_init_stages`
(with `stage_one_end`, when Stage I is over by its two rates, §HE-S1);
their typed results `TwoHeadPhases` (the measured features of the three phases, each
with its meaning: numbers only, the claims judge them), `SymmetricStartFlows`,
`PhasePortrait`, `RandomInitStages`.

Predictions of Appendix B used by the checks: `phase_one_end` (T1), `phase_one_loss_drop`
(B.9), `phase_one_ratio_excess` (B.7), `phase_two_rate` (B.11)-(B.13),
`equal_ratio_peak` and `lambert_peak_bound` (the omega peak), `late_omega`
(omega ~ (8 kappa d^2 t)^{-1/6}), `late_product_deficit` (2 omega mu below
1/(1+kappa) at finite t) and `naive_late_omega` (the t^{-1/2} law of the
two-timescale reduction (B.18), which the integrated ODE contradicts).

The reference of SGD on the true loss (App. C): `slowed_descent` (gradient descent on
Ltilde slowed by 1 - 1/L, read at the SGD's records), `log_norm`, `phase_one_records`.

Where the flow in mu ends, found by an optimiser with an error bound: `minimise_over_mu`
(KQ scales fixed; HE-MAN) and `homogeneous_minimum` (over every sign pattern of
Theta_bar(omega), Theorem 4.2(ii)).

Time is the flow time of d theta/dt = -grad Ltilde with Ltilde the plain MSE; the
authors' code descends Ltilde/2, so t_code = 2 t.

>>> from icl_verify.theory import Setting
>>> phases = two_head_phases(Setting(d=5, L=40, sigma2=0.1), t_end=1e5)
>>> round(phases.phase_one_end, 3), round(phases.peak_time, 3), round(phases.peak_omega, 4)
(2.885, 3.843, 0.5763)
"""

from icl_verify.dynamics.events import Event
from icl_verify.dynamics.homogeneous import (
    HomogeneousMinimum,
    homogeneous_minimum,
    sign_patterns,
)
from icl_verify.dynamics.minimise import (
    MuMinimum,
    bound_justification,
    dummy_share,
    group_sum_errors,
    group_sums,
    minimise_over_mu,
)
from icl_verify.dynamics.portrait import PhasePortrait, omega_nullcline, phase_portrait
from icl_verify.dynamics.random_init import RandomInitStages, random_init_stages, stage_one_end
from icl_verify.dynamics.saveat import SaveAt
from icl_verify.dynamics.slowed_descent import log_norm, phase_one_records, slowed_descent
from icl_verify.dynamics.solve import gradient_flow, solve
from icl_verify.dynamics.solver import GradientDescent, ODESolver
from icl_verify.dynamics.trajectory import DUMMY, NEGATIVE, POSITIVE, EventRecord, Trajectory
from icl_verify.dynamics.two_head import (
    SymmetricStartFlows,
    TwoHeadField,
    TwoHeadPhases,
    equal_ratio_peak,
    lambert_peak_bound,
    late_omega,
    late_product_deficit,
    naive_late_omega,
    opposite_heads,
    perturbed_flow_ends,
    perturbed_starts,
    phase_one_end,
    phase_one_loss_drop,
    phase_one_ratio_excess,
    phase_two_rate,
    symmetric_init,
    symmetric_start_flows,
    two_head_flow,
    two_head_phases,
)
from icl_verify.dynamics.vector_field import GradientFlowField
from icl_verify.dynamics.weight_space import WeightSpaceField, weight_space_flow

__all__ = [
    "MuMinimum",
    "bound_justification",
    "dummy_share",
    "group_sum_errors",
    "group_sums",
    "minimise_over_mu",
    "HomogeneousMinimum",
    "homogeneous_minimum",
    "sign_patterns",
    "DUMMY",
    "NEGATIVE",
    "POSITIVE",
    "Event",
    "EventRecord",
    "GradientDescent",
    "GradientFlowField",
    "ODESolver",
    "PhasePortrait",
    "RandomInitStages",
    "SaveAt",
    "SymmetricStartFlows",
    "Trajectory",
    "TwoHeadField",
    "TwoHeadPhases",
    "equal_ratio_peak",
    "gradient_flow",
    "lambert_peak_bound",
    "late_omega",
    "late_product_deficit",
    "log_norm",
    "naive_late_omega",
    "omega_nullcline",
    "opposite_heads",
    "perturbed_flow_ends",
    "perturbed_starts",
    "phase_one_end",
    "phase_one_loss_drop",
    "phase_one_ratio_excess",
    "phase_two_rate",
    "phase_one_records",
    "phase_portrait",
    "random_init_stages",
    "slowed_descent",
    "solve",
    "stage_one_end",
    "symmetric_init",
    "symmetric_start_flows",
    "two_head_flow",
    "two_head_phases",
    "WeightSpaceField",
    "weight_space_flow",
]
