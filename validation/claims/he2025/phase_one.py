"""HE-B-PHASE1 of He et al. (2025), Appendix B (reference §HE-B-PHASE1): Phase I of the
two-head flow, and two-head models trained from the symmetric start against the flow.

Phase I of (B.4): omega = mu = eps e^{2t}, the ratio mu/omega = 1 + kappa u^3/(12 d) (B.7),
the loss drop 4 eps^2 (e^{4t} - 1) (B.9) and the end T1 (B.5)-(B.10), read on the
integrated (B.4) (`_two_head.integrated_phases`, shared with HE-B-PHASE2/3). And a trained
two-head softmax model (`numerics.train_two_head`) against the flow: plain SGD from Def. B.1
follows the gradient flow of Ltilde on the model's weights at t = lr k
(`dynamics.weight_space_flow`: in (omega, mu), (B.4) preconditioned by the product
parametrisation, derived in `dynamics.weight_space`; Phase I rate 2/sqrt(dD), not 2); Adam
does not (drawn, not checked). Time is the paper convention (flow of Ltilde as a plain MSE).
Figure: `figures.dynamics.figure_phase1`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from icl_verify.validation.claim import Check, Claim, FigureRef, Reconstructed, Source
from icl_verify.validation.claims.he2025 import PAPER
from icl_verify.validation.claims.he2025._reconstructed import TIME_CONVENTION
from icl_verify.validation.claims.he2025._two_head import (
    PhasesParams,
    dense_flow,
    integrated_phases,
    solver_bound,
)
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.params import Footprint, ParameterError, SettingParams, param
from icl_verify.validation.rules import Tolerance

from icl_verify import dynamics, numerics


@dataclass(frozen=True, kw_only=True)
class PhaseOneParams(PhasesParams):
    """HE-B-PHASE1: Phase I of (B.4), and two-head models trained by SGD and Adam from Def. B.1."""

    TRAINS_MODELS = True  # inside its measurement, seeded by the run (`Params.TRAINS_MODELS`)

    train_eps: float = param(
        0.02,
        help="Def. B.1 scale of the trained models (above SGD's batch noise)",
        low=0,
        low_open=True,
        high=0.1,
    )
    sgd_lr: float = param(
        help="plain SGD learning rate: step k sits at flow time t = lr k", low=0, low_open=True
    )
    sgd_steps: int = param(help="SGD steps", low=1, role="count")
    adam_lr: float = param(
        1e-3, help="Adam learning rate (drawn, not checked)", low=0, low_open=True
    )
    adam_steps: int = param(help="Adam steps", low=1, role="count")
    members: int = param(
        help="independently trained models per optimiser (ensemble)", low=2, role="ensemble"
    )
    batch: int = param(help="fresh prompts per model per step", low=1, role="held")
    train_records: int = param(help="(ω, μ) records per training", low=1, role="count")
    compare_t: tuple[float, ...] = param(
        help="flow times t = lr k where SGD is compared with the flow", low=0, low_open=True
    )

    def validate(self) -> None:
        if any(b <= a for a, b in zip(self.compare_t, self.compare_t[1:], strict=False)):
            raise ParameterError(
                f"compare_t must be increasing, got compare_t={list(self.compare_t)}"
            )
        if self.compare_t[-1] > self.sgd_lr * self.sgd_steps:
            raise ParameterError(
                f"compare_t must end by sgd_lr * sgd_steps = {self.sgd_lr * self.sgd_steps:g} "
                f"(the trained time), got compare_t={list(self.compare_t)}"
            )

    def footprint(self) -> Footprint:
        """Its trained models (members x batch prompts), not the ODE it compares them with."""
        return SettingParams.footprint(self)


def _flow_at(params: PhaseOneParams, times) -> dynamics.Trajectory:
    """The weight-space flow of L̃ from Def. B.1 at train_eps, saved at `times`."""
    times = np.asarray(times, dtype=float)
    saveat = dynamics.SaveAt(times)
    return dynamics.weight_space_flow(params.train_eps, params.setting, (0.0, times[-1]),
                                      saveat=saveat)  # fmt: skip


def _sgd_allowance(params: PhaseOneParams) -> float:
    """Allowed |ln(SGD) - ln(flow)| up to the last compared time: a relative rate error 1/L
    moves ln μ by its growth since the start over L (derived in `checks_phase1`)."""
    mu = _flow_at(params, [0.0, *params.compare_t]).mu[:, 0]
    return float(np.log(mu.max() / params.train_eps) / params.L)


def _trained(params: PhaseOneParams, optimizer: str, runtime):
    """`numerics.train_two_head` with SGD or Adam, cached and checkpointed by its configuration."""
    lr, steps = (
        (params.sgd_lr, params.sgd_steps) if optimizer == "sgd"
        else (params.adam_lr, params.adam_steps)
    )  # fmt: skip
    training = numerics.TwoHeadTraining(
        d=params.d, L=params.L, sigma2=params.sigma2, optimizer=optimizer, eps=params.train_eps,
        lr=lr, steps=steps, members=params.members, batch=params.batch,
        log_every=max(steps // params.train_records, 1), seed=runtime.seed_for("training"),
    )  # fmt: skip
    return runtime.trained(training)


#: Where the Phase I laws are read: the loss drop (B.9) on t in [0.25, 1] (the drop above the
#: solver's resolution, omega <= eps e^2), the ratio (B.7) on u = d omega^2 in [0.05, 0.1]
#: (mu/omega - 1 of 3e-7 to 3e-6 at d = 5: above the solver's 1e-10, and u small).
DROP_TIMES = np.linspace(0.25, 1.0, 16)
RATIO_U = np.linspace(0.05, 0.1, 16)


def _ratio_omegas(params: PhaseOneParams) -> np.ndarray:
    return np.sqrt(RATIO_U / params.d)


def predict_phase1(params: PhaseOneParams) -> Prediction:
    """Rate 2, T1 from the log deficit, and ln (ω, μ) of the weight-space flow at compare_t."""
    t1, omega_t1 = dynamics.phase_one_end(params.setting, params.eps)
    at_compare = _flow_at(params, params.compare_t)
    fine = _flow_at(params, np.linspace(0.0, params.sgd_lr * params.sgd_steps, 200))
    b4 = dynamics.two_head_flow(  # (B.4) read at t = lr k: drawn, not checked
        params.train_eps, params.setting, (0.0, fine.t[-1]), saveat=dynamics.SaveAt(fine.t)
    )
    return Prediction(
        values={"growth_rate": 2.0, "T1": t1, "sgd_log_omega": np.log(at_compare.omega[:, 0]),
                "sgd_log_mu": np.log(at_compare.mu[:, 0]),
                "loss_drop": dynamics.phase_one_loss_drop(params.eps, DROP_TIMES),
                "ratio_excess": dynamics.phase_one_ratio_excess(params.setting,
                                                                _ratio_omegas(params))},
        figure_data={"omega_T1": omega_t1, "ratio_u": RATIO_U, "flow_t": fine.t,
                     "flow_omega": fine.omega[:, 0],
                     "flow_mu": fine.mu[:, 0], "b4_omega": b4.omega[:, 0], "b4_mu": b4.mu[:, 0]},
    )  # fmt: skip


def measure_phase1(params: PhaseOneParams, runtime) -> Measurement:
    """Growth rate and T1 from the integrated (B.4); SGD- and Adam-trained models' (ω, μ)."""
    phases = integrated_phases(params)
    sgd, adam = _trained(params, "sgd", runtime), _trained(params, "adam", runtime)
    log_omega, log_mu = (sgd.log_mean(name, params.compare_t) for name in ("omega", "mu"))
    path = phases.trajectory
    early = path.t <= phases.peak_time * 1.5
    t_end = 0.5 * math.log(float(_ratio_omegas(params)[-1]) / params.eps) + 0.5
    dense = dense_flow(params, t_end)  # through Phase I, up to omega = sqrt(0.1/d)
    omega, mu, loss = dense.omega[:, 0], dense.mu[:, 0], dense.loss
    drop = loss[0] - np.interp(DROP_TIMES, dense.t, loss)
    # |dLtilde| <= 4|mu||d omega| + 4|omega||d mu| in Phase I (the loss's gradient), each state
    # within 100 x the dense solve's rtol
    drop_bound = 8.0 * params.rtol * np.interp(DROP_TIMES, dense.t, omega * mu)
    excess = np.interp(_ratio_omegas(params), omega, mu / omega - 1.0)  # omega increases here
    excess_bound = params.rtol * (1.0 + excess)
    return Measurement(
        values={
            "growth_rate": solver_bound(phases.growth_rate, params),
            "T1": solver_bound(phases.phase_one_end, params),
            "sgd_log_omega": Estimate(*log_omega, "se"),
            "sgd_log_mu": Estimate(*log_mu, "se"),
            "loss_drop": Estimate(drop, drop_bound, "bound"),
            "ratio_excess": Estimate(excess, excess_bound, "bound"),
        },
        figure_data={
            "ode_t": path.t[early], "ode_omega": path.omega[early, 0], "ode_mu": path.mu[early, 0],
            "sgd_t": sgd.t, "sgd_omega": sgd.omega, "sgd_mu": sgd.mu,
            "adam_t": adam.t, "adam_omega": adam.omega, "adam_mu": adam.mu,
            "adam_steps": adam.t / params.adam_lr,
        },
    )  # fmt: skip


def checks_phase1(params: PhaseOneParams) -> tuple[Check, ...]:
    growth_tol = 4.0 * (1.0 + params.setting.kappa) * (params.eps * math.e**2) ** 2
    allowance = _sgd_allowance(params)
    sgd_why = (
        "SGD with small lr follows the gradient flow of the TRUE population loss on the weights; "
        "the weight-space flow of L̃ (dynamics.weight_space) differs from it only through "
        "L̃'s approximation error, whose coefficients are off by a relative O(1/L) (the "
        "linear term -2 μᵀ ω exactly by the factor 1 - 1/L, derived from the softmax's "
        "derivative at ω = 0). A relative rate error 1/L moves ln ω, ln μ by (their "
        "growth since the start)/L: allowed = ln(μ_flow(t_max)/ε)/L = "
        f"{allowance:.3f}; uncertainty = 1 SE of the ensemble mean over independent data "
        "streams. (B.4) itself at t = lr k is off by ln 10-ish here (figure), because ω, μ "
        "are products of weights."
    )
    kappa, eps = params.setting.kappa, params.eps
    drop_tol = 6.0 * (1.0 + kappa) * (eps * math.exp(2.0 * DROP_TIMES[-1])) ** 2
    omega_top = float(_ratio_omegas(params)[-1])
    ratio_tol = 2.0 * (1.0 + kappa) * omega_top**2 + RATIO_U[-1] ** 2 / 10
    return (
        Check("loss_drop", Tolerance(
            "(B.9) integrates dL̃/dt = -2(ω'² + μ'²) with ω = μ = ε e^{2t}; the first corrections "
            "(ω' = 2ω(1 − 2(1+κ)ω²) and ln ω = 2t − (1+κ)ω²) change the integrand by a relative "
            f"6(1+κ)ω² at most: {drop_tol:.2g} at t = 1", rtol=drop_tol),
            "L̃(0) − L̃(t) vs 4ε²(e^{4t} − 1), t in [0.25, 1]"),
        Check("ratio_excess", Tolerance(
            "(B.7): δ = μ/ω − 1 obeys δ' = −(4 − 8ω²)δ + 4c(u cosh u − sinh u), forced like "
            "e^{12t}; the derivation takes the rate of u³ as 12 (it is 12 − 24(1+κ)ω²), the "
            "restoring rate as 4 and the forcing as (4/3)cu³ (next term u⁵/30): relative error "
            f"2(1+κ)ω² + u²/10 = {ratio_tol:.2g} at u = 0.1", rtol=ratio_tol),
            "μ/ω − 1 vs κu³/(12d), u = dω² in [0.05, 0.1]"),
        Check("growth_rate", Tolerance(
            "linearisation (B.5): ω' = 2 μ, μ' = 2 ω; fitted on t in [0, 1] where the "
            "rate correction 4(1+κ) ω² ≤ 4(1+κ)(ε e²)² is the tolerance",
            atol=growth_tol), "Phase I growth rate d ln ω/dt"),
        Check("T1", Tolerance(
            "T1 from the leading-order log deficit (1+κ)w² + (κ/d)(sinh(dw²) - dw²) = "
            "-ln 0.9; tolerance 5%: it neglects μ/ω - 1 and O(ω⁴) terms",
            rtol=0.05), "T1, end of Phase I (ω 10% below ε e^{2t})"),
        Check("sgd_log_omega", Tolerance(sgd_why, atol=allowance),
              "ln ω of SGD-trained model vs weight-space flow of L̃ at t = lr·k"),
        Check("sgd_log_mu", Tolerance(sgd_why, atol=allowance),
              "ln μ of SGD-trained model vs weight-space flow of L̃ at t = lr·k"),
    )  # fmt: skip


def b4_clock(params: PhaseOneParams, prediction: Prediction) -> Prediction:
    """The wrong prediction of HE-B-PHASE1: (B.4) itself read at t = lr k for the SGD-trained
    model, i.e. ω, μ taken for the flow's coordinates rather than products of weights
    (off by ~ln 10 at the compared times; the allowance is ~0.1)."""
    b4 = dynamics.two_head_flow(params.train_eps, params.setting, (0.0, params.compare_t[-1]),
                                saveat=dynamics.SaveAt(params.compare_t))  # fmt: skip
    values = {**prediction.values, "sgd_log_omega": np.log(b4.omega[:, 0]),
              "sgd_log_mu": np.log(b4.mu[:, 0])}  # fmt: skip
    return Prediction(values, prediction.figure_data)


PRESETS_PHASE1 = {
    "smoke": PhaseOneParams(t_end=1e6, sgd_lr=0.02, sgd_steps=150, adam_steps=100, members=2,
                            batch=256, train_records=15, compare_t=(1.0, 2.0, 3.0)),
    "quick": PhaseOneParams(t_end=1e7, sgd_lr=0.02, sgd_steps=1000, adam_steps=1500, members=4,
                            batch=256, train_records=50,
                            compare_t=(2.0, 4.0, 6.0, 8.0, 12.0, 20.0)),
    "paper": PhaseOneParams(t_end=1e8, sgd_lr=0.005, sgd_steps=8000, adam_steps=20000,
                            members=16, batch=1024, train_records=200,
                            compare_t=(2.0, 4.0, 6.0, 8.0, 12.0, 20.0, 40.0)),
}  # fmt: skip

CLAIM_PHASE1 = Claim(
    id="HE-B-PHASE1",
    source=Source(PAPER, "App. B", "(B.5)-(B.10)", (Reconstructed(
        "(B.10)'s end T1 of Phase I, read as the log deficit reaching 10%", "HE-B-PHASE1",
        "OPEN"), TIME_CONVENTION)),
    statement="Phase I: ω = μ = ε e^{2t} until T1 (the log deficit (1+κ)ω² + (κ/d)(sinh dω² − "
    "dω²) reaching 10%), with μ/ω = 1 + κu³/(12d) (u = dω²) and L̃ falling as "
    "L̃(0) − 4ε²(e^{4t} − 1); and a two-head softmax model trained by plain SGD from Def. B.1 "
    "follows the gradient flow of L̃ at t = lr·k — the flow on its weights, which in (ω, μ) is "
    "(B.4) preconditioned by the product parametrisation (Phase I rate 2/√(dD), not 2). "
    "Adam (lr 1e-3) follows neither: its steps are normalised (sign-like), so its clock is "
    "not lr·k (shown in the figure, not checked).",
    params=PhaseOneParams, presets=PRESETS_PHASE1,
    predict=predict_phase1, measure=measure_phase1, checks=checks_phase1,
    figure=FigureRef("icl_verify.figures.dynamics", "figure_phase1"),
    wrong=b4_clock,
    summary="Phase I growth e^{2t}, ratio 1 + κ u³/(12d), loss drop, end T1; SGD vs the flow",
    catalogue=(5, 2),
)  # fmt: skip

CLAIMS = (CLAIM_PHASE1,)
