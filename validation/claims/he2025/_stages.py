"""The gradient flows on Ltilde from small random starts that HE-S1, HE-S2 and HE-S2-BOUND
read (reference §HE-S1, §HE-S2): their parameters (with HE-S2's threshold of S_omega), their
sizes, and the flows per H, computed once (`dynamics.random_init_stages`, cached per H)
whichever claim asks first.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from icl_verify.validation.params import (
    ODE_SAVED_STATES,
    Footprint,
    ParameterError,
    SettingParams,
    param,
)

from icl_verify import dynamics


@dataclass(frozen=True, kw_only=True)
class RandomStartParams(SettingParams):
    """Gradient flows on L̃ from N(0, scale²) starts for several H (the HE-S1/S2 flows)."""

    heads: tuple[int, ...] = param(help="the numbers of heads H run", low=2, role="heads")
    n_seeds: int = param(help="random starts per H", low=2, role="count")
    scale: float = param(
        0.01, help="standard deviation of the initial ω_h and μ_h", low=0, low_open=True
    )
    t_end: float = param(help="flow time at which the end state is read", low=0, low_open=True)
    n_times: int = param(help="saved times, log-spaced from 0 to t_end", low=2, role="count")
    tolerance: float = param(
        0.01,
        help="zero-sum ratio |Σμ|/Σ|μ| and KQ dispersion std/mean |ω_h| counted as 0 below it",
        low=0,
        low_open=True,
        high=1,
    )
    design_seed: int = param(
        8, help="seed of the starts (the setting, not --seed)", low=0, role="count"
    )

    def validate(self) -> None:
        if any(b <= a for a, b in zip(self.heads, self.heads[1:], strict=False)):
            raise ParameterError(f"heads must be increasing, got heads={list(self.heads)}")

    def footprint(self) -> Footprint:
        """An ODE in a few scalars per head: its saved states are what it holds."""
        return Footprint.of_tensor((ODE_SAVED_STATES, "saved states"), (16, "numbers"))


@dataclass(frozen=True, kw_only=True)
class StageTwoParams(RandomStartParams):
    """HE-S2: the flows, and how close to S_omega an end state counts as on it."""

    loss_gap_tolerance: float = param(
        1e-3,
        help="L̃(t_end) − L̃ on S_ω at the mean |ω_h| counted as on S_ω below it",
        low=0,
        low_open=True,
    )


def random_start_presets(cls, **sizes: tuple) -> dict:
    """The sizes of the claims reading the flows (the same flows at each preset): heads, starts
    per H, t_end, saved times, and a claim's own ``sizes`` (smoke, quick, paper) per field.

    >>> random_start_presets(RandomStartParams)["smoke"].heads
    (2, 4)
    """
    flows = {
        "smoke": dict(heads=(2, 4), n_seeds=3, t_end=300.0, n_times=120),
        "quick": dict(heads=(2, 3, 4, 8), n_seeds=40, t_end=1e4, n_times=200),
        "paper": dict(heads=(2, 3, 4, 5, 6, 8), n_seeds=50, t_end=1e5, n_times=300),
    }
    return {
        name: cls(**flow, **{field: values[i] for field, values in sizes.items()})
        for i, (name, flow) in enumerate(flows.items())
    }


def random_start_stages(params: RandomStartParams, runtime) -> dict[int, dynamics.RandomInitStages]:
    """`dynamics.random_init_stages` per H from the starts (design_seed, H, s), cached per H."""
    flows = {field.name: getattr(params, field.name)
             for field in dataclasses.fields(RandomStartParams)}  # fmt: skip
    stages = {}
    for heads in runtime.progress(params.heads, "H"):

        def compute(heads=heads):
            seeds = [(params.design_seed, heads, s) for s in range(params.n_seeds)]
            return dynamics.random_init_stages(
                params.setting, heads, seeds, params.scale, params.t_end, params.tolerance,
                n_times=params.n_times,
            ).arrays()  # fmt: skip

        stored = runtime.cached("random-init-stages", {**flows, "heads": heads}, compute)
        stages[heads] = dynamics.RandomInitStages.from_arrays(stored)
    return stages
