"""The two-head flow claims (Appendix B) at smoke size: what they find, and the sharpness of
their rules beyond the wrong predictions the registry test feeds them.

The flow against which the trained model is read, `dynamics.weight_space_flow`, is tested
against the integrated weights in tests/dynamics/test_weight_space.py.
"""

import pytest
from icl_verify.validation.claims.he2025.phase_one import CLAIM_PHASE1
from icl_verify.validation.claims.he2025.phase_three import CLAIM_PHASE3
from icl_verify.validation.claims.he2025.phase_two import CLAIM_PHASE2
from icl_verify.validation.claims.he2025.symmetric_start import CLAIM_INIT
from icl_verify.validation.estimates import AGREES, DISAGREES
from icl_verify.validation.params import ParameterError


def test_init_phase2_and_phase3_agree(at_smoke):
    for claim in (CLAIM_INIT, CLAIM_PHASE2, CLAIM_PHASE3):
        verdicts = claim.verdicts(*at_smoke(claim))
        assert set(verdicts.values()) == {AGREES}, claim.id


def test_phase1_agrees_and_a_t1_off_by_twice_its_tolerance_is_rejected(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_PHASE1)
    verdicts = CLAIM_PHASE1.verdicts(params, prediction, measurement)
    assert verdicts["growth_rate"] == verdicts["T1"] == AGREES
    assert DISAGREES not in verdicts.values()  # SGD follows the weight-space flow
    wrong_t1 = prediction.with_values(T1=1.1 * measurement.values["T1"].value)
    assert CLAIM_PHASE1.verdicts(params, wrong_t1, measurement)["T1"] == DISAGREES


def test_phase1_compare_times_must_lie_in_the_trained_time():
    smoke = CLAIM_PHASE1.presets["smoke"]  # sgd_lr 0.02, 150 steps: trained up to t = 3
    with pytest.raises(ParameterError, match="compare_t must end by sgd_lr"):
        smoke.with_overrides({"compare_t": "1,2,4"})
    with pytest.raises(ParameterError, match="compare_t must be increasing"):
        smoke.with_overrides({"compare_t": "2,1"})


def test_phase_two_rates_grid_bounds_cover_a_four_times_finer_grid():
    """The rates' error bounds are four times the change a four times finer grid makes (at the
    quick preset, where they were set); the change must stay under a quarter of them."""
    from icl_verify.validation.claims.he2025.phase_two import (
        GAP_RATE_GRID_BOUND,
        PRESETS_PHASE2,
        RATE_GRID_BOUND,
        _phase_two_reading,
    )

    params = PRESETS_PHASE2["quick"]
    rate, _, gap_rate = _phase_two_reading(params)
    fine_rate, _, fine_gap_rate = _phase_two_reading(params, points=4 * 4000 + 1)
    assert abs(rate - fine_rate).max() <= RATE_GRID_BOUND / 4
    assert abs(gap_rate - fine_gap_rate) <= GAP_RATE_GRID_BOUND / 4


def test_phase2_peak_scales_as_d_to_minus_half_not_as_a_constant_or_one_over_d(at_smoke):
    """ω_max = Θ̃(d^{−1/2}) (B.16) over the smoke grid d = 100, 400, 1600 (L = 8d): the fitted
    slope lies within the log factor's tilt 1/(2(1+W(800/1.1))) of −1/2, and a d-independent
    peak (slope 0) or ω_max ∝ 1/d (slope −1) is rejected."""
    params, prediction, measurement = at_smoke(CLAIM_PHASE2)
    slope = measurement.values["peak_scaling"].value
    assert -0.5 < slope < -0.5 + 1 / (2 * (1 + 4.98))  # W(727.3) = 4.98...
    assert CLAIM_PHASE2.verdicts(params, prediction, measurement)["peak_scaling"] == AGREES
    for wrong in (0.0, -1.0):
        verdicts = CLAIM_PHASE2.verdicts(
            params, prediction.with_values(peak_scaling=wrong), measurement
        )
        assert verdicts["peak_scaling"] == DISAGREES, wrong


def test_phase2_scaling_grid_needs_three_increasing_dimensions():
    smoke = CLAIM_PHASE2.presets["smoke"]
    for bad in ("100,400", "400,100,1600"):
        with pytest.raises(ParameterError, match="scaling_d must hold at least three"):
            smoke.with_overrides({"scaling_d": bad})
