"""HE-C-TRUELOSS at smoke size: SGD on the true loss against GD on L̃ from one start.

The SGD and its loss are tested against the sampled-label MSE in
tests/numerics/test_true_loss.py; here the claim's rules.
"""

from dataclasses import replace

import numpy as np
from icl_verify.validation.claim import evaluate
from icl_verify.validation.claims.he2025 import true_loss
from icl_verify.validation.claims.he2025.true_loss import CLAIM_TRUELOSS, approximation_exact
from icl_verify.validation.cli import main
from icl_verify.validation.estimates import AGREES, DISAGREES, Estimate, Measurement

from icl_verify import theory


def test_smoke_contradicts_nothing_and_l_tilde_taken_as_exact_is_rejected(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_TRUELOSS)
    verdicts = CLAIM_TRUELOSS.verdicts(params, prediction, measurement)
    assert DISAGREES not in verdicts.values()
    wrong = CLAIM_TRUELOSS.verdicts(params, approximation_exact(params, prediction), measurement)
    # the 1/L slowdown is resolved at smoke size; the loss gap is judged only where the flow is
    # inside d max omega^2 <= 1, which at smoke (t_end = 5, the flow re-enters near t = 7) is
    # before the fall, where the gap p(2 - p/eta*)/L is still small
    assert wrong["phase_one_log_norm"] == DISAGREES


def test_phase_one_is_slowed_by_one_over_l(at_smoke):
    """The measured ln-norm lies nearer the slowed flow than the plain one (by ~growth/L)."""
    params, prediction, measurement = at_smoke(CLAIM_TRUELOSS)
    measured = measurement.values["phase_one_log_norm"].value
    slowed = prediction.values["phase_one_log_norm"]
    plain = approximation_exact(params, prediction).values["phase_one_log_norm"]
    assert np.abs(measured - slowed).mean() < 0.5 * np.abs(measured - plain).mean()


# docs/paper/cpu-5 (results.json, HE-C-TRUELOSS): the measured true loss at the paper preset's
# second loss record, t = 1.0, in the steep fall of Phase I, and its SE (members and Monte Carlo)
PAPER_T1_LOSS, PAPER_T1_SE = 0.9556932449163633, 0.0005752730598545279


def _paper_lag():
    """At the paper preset: the loss path's prediction minus the unslowed one (L̃ along GD at lr
    plus the gap at its product), and -dL̃/dt x t/L, each at the loss records."""
    params = CLAIM_TRUELOSS.presets["paper"]
    prediction = CLAIM_TRUELOSS.predict(params)
    data, records = prediction.figure_data, params.loss_records
    product = (data["gd_omega"] * data["gd_mu"]).sum(axis=1)[records]
    unslowed = data["gd_loss"][records] + theory.product_gap_limit(
        product, params.L, params.d, params.sigma2
    )
    slope = np.gradient(data["gd_loss"], params.times)[records]
    return (
        params,
        prediction,
        data["path_loss"] - unslowed,
        -slope * params.times[records] / params.L,
    )


def test_the_loss_path_lags_by_the_slope_times_t_over_l():
    """The model (GD at lr(1 - 1/L)) lags GD at lr by t/L: where L̃ falls its loss lies above,
    by the slope x t/L to first order (within 15% where that exceeds 0.001). Fails if the lag is
    dropped (0) or mis-signed (below)."""
    _, _, shift, first_order = _paper_lag()
    steep = first_order > 1e-3
    assert steep.sum() >= 3
    np.testing.assert_allclose(shift[steep], first_order[steep], rtol=0.15)


def test_the_paper_records_steep_fall_agrees_only_with_the_lag():
    """At the paper preset the measured t = 1 record (0.9557) agrees with the model's L̃ + gap,
    by the lag's timing uncertainty alone (level + timing at that record, not the allowance's
    maximum, which is set on the manifold), and disagrees when the lag is dropped or mis-signed
    (the verdict of docs/paper/cpu-5 before it was modelled: residual 0.017, allowance 0.0141)."""
    params, prediction, shift, _ = _paper_lag()
    inside = true_loss._inside(params)
    assert inside[1] and params.times[params.loss_records][1] == 1.0
    predicted = prediction.values["loss_path"]
    value, error = predicted.copy(), np.zeros_like(predicted)
    value[1], error[1] = PAPER_T1_LOSS, 3 * PAPER_T1_SE  # the record; the others as predicted
    measured = Measurement({"loss_path": Estimate(value, error, "bound")})
    checks = [c for c in CLAIM_TRUELOSS.checks(params) if c.quantity == "loss_path"]

    def verdict(shifted):
        [result] = evaluate(checks, prediction.with_values(loss_path=shifted), measured)
        return result.judgement.verdict

    assert verdict(predicted) == AGREES
    assert verdict(predicted - shift[inside]) == DISAGREES  # no lag
    assert verdict(predicted - 2 * shift[inside]) == DISAGREES  # the lag mis-signed
    level, timing = true_loss._path_allowances(params)
    residual = abs(PAPER_T1_LOSS - predicted[1]) - 3 * PAPER_T1_SE
    assert level[1] < residual <= level[1] + timing[1]


def test_the_start_is_no_parting_though_its_mean_is_rounded(at_smoke):
    # at t = 0 every member holds the start: SE 0, and the member mean off by its rounding
    # (the paper preset's 32 members gave 7e-18 there, and the table said "parts at t = 0")
    params, prediction, measurement = at_smoke(CLAIM_TRUELOSS)
    data = dict(measurement.figure_data)
    data["omega"] = data["omega"].copy()
    data["omega"][0] = prediction.figure_data["gd_omega"][0] * (1 + 2 * np.finfo(float).eps)
    data["omega_se"] = data["omega_se"].copy()
    data["omega_se"][0] = 0.0
    table = CLAIM_TRUELOSS.table(params, prediction, replace(measurement, figure_data=data))
    assert "| parts at t = | 0.00 |" not in table


def test_a_bad_start_is_one_line_and_exit_2(tmp_path, capsys):
    args = ["run", "HE-C-TRUELOSS", "--preset", "smoke", "--device", "cpu", "--out", str(tmp_path)]
    assert main([*args, "--set", "init_low=0.2"]) == 2
    err = capsys.readouterr().err
    assert "init_low must be < init_high" in err and err.count("\n") == 1
