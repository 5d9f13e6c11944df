"""What the linear-attention claims of He et al. (2025) §5.1 (Figure 8) share.

One-head linear attention (5.1) against softmax attention, one claim per module:

- HE-5.1-LIN (`linear_attention_gd`): trained online at length L, it reaches the one-step GD
  optimum, step gamma = omega mu = eta_GD*(L) = L/(L+D+1), and the optimal GD risk;
- HE-5.1-SM2LIN (`linear_attention_pair`): two softmax heads (eps KQ, OV/(2 eps)),
  (-eps KQ, -OV/(2 eps)) (5.2) equal one linear head minus a centring term, up to O(eps^2);
- HE-5.1-LENGTH (`linear_attention_length`): tested at L' != L, linear attention keeps its
  training 1/L (GD with a frozen step), softmax models renormalise and keep improving.

LIN and LENGTH read the same trained linear members (`linear_training`, with their parameters
`LinearMembers`; `numerics._he2025.linear_attention`), LENGTH beside the shared softmax ensemble of
HE-OBS1..4. Figures: `figures.linear_attention`.
"""

from __future__ import annotations

from dataclasses import dataclass

from icl_verify.validation.params import Params, param

from icl_verify import numerics


def linear_training(params) -> numerics.EnsembleTraining:
    """The one-head linear-attention members (5.1), trained like the softmax ensemble."""
    return params.training((1,) * params.linear_members, attention="linear")


@dataclass(frozen=True, kw_only=True)
class LinearMembers(Params):
    """The linear-attention members HE-5.1-LIN and HE-5.1-LENGTH read, and their step's accuracy."""

    linear_members: int = param(
        help="linear-attention members (init seeds train_seed + e)", low=1, high=64, role="ensemble"
    )
    step_atol: float = param(
        0.01,
        help="allowed |γ - η_GD*| of the learned step (a step off by 0.01 changes the risk "
        "at L by about 1e-4, below the Monte Carlo resolution), propagated to the risk at L'",
        low=0,
        low_open=True,
    )
