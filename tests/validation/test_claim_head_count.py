"""HE-A-HEADS at smoke size, its theory argument, its figures and its parameter errors.

The read-outs are tested on synthetic histories in tests/numerics/test_head_count.py; here:
the argument of the claim's docstring (on homogeneous points L̃ of H heads is the two-head
L̃ of the group sums, each head's mu gets the full dL̃/dM and its omega 1/n of dL̃/domega),
checked by finite differences of `theory.approximate_loss`; the claim's numbers against the
ensemble's own logs; the figures; bad parameters through the CLI.
"""

import matplotlib.pyplot as plt
import numpy as np
import pytest
from icl_verify.theory import Setting, approximate_loss, manifold_mu
from icl_verify.validation.claims.he2025.head_count import CLAIM_HEADS
from icl_verify.validation.cli import main
from icl_verify.validation.estimates import DISAGREES

SETTING = Setting(d=5, L=40, sigma2=0.1)


@pytest.mark.parametrize("n", [1, 2, 4])
def test_an_even_split_is_the_two_head_loss_with_rescaled_gradients(n):
    """n heads per sign at (±omega, ±M/n): the loss of (omega, M), (-omega, -M); central
    differences give dL/dmu_h = dL/dM and dL/domega_h = (dL/domega) / n."""
    omega, M, h = 0.17, 2.4, 1e-6

    def two(w, m):
        return float(approximate_loss(np.array([w, -w]), np.array([m, -m]), SETTING))

    def many(w, m):  # (2n,) heads: n positive, n negative
        return float(approximate_loss(w, m, SETTING))

    w = np.r_[np.full(n, omega), np.full(n, -omega)]
    m = np.r_[np.full(n, M / n), np.full(n, -M / n)]
    assert many(w, m) == pytest.approx(two(omega, M), abs=1e-14)
    # the two-head derivatives along the group (both signs move together, as in `two`)
    d_omega = (two(omega + h, M) - two(omega - h, M)) / (2 * h)
    d_M = (two(omega, M + h) - two(omega, M - h)) / (2 * h)
    step = np.zeros(2 * n)
    step[0] = h
    assert (many(w, m + step) - many(w, m - step)) / (2 * h) == pytest.approx(d_M / 2, rel=1e-6)
    assert (many(w + step, m) - many(w - step, m)) / (2 * h) == pytest.approx(
        d_omega / (2 * n), rel=1e-6
    )  # per head of one sign: half of the pair's derivative, 1/n of it per head


def test_gradient_flow_from_matched_starts_shares_the_product_not_omega():
    """The docstring's numbers: from one matched start the four-head flow of L̃ reaches the
    two-head flow's 2 omega M at t = 1e3 but a smaller omega (about 0.89 of it)."""
    from icl_verify.dynamics.solve import gradient_flow

    ends = []
    for n in (1, 2):
        w = np.r_[np.full(n, 0.01), np.full(n, -0.01)]
        m = np.r_[np.full(n, 0.02 / n), np.full(n, -0.02 / n)]
        path = gradient_flow(w, m, SETTING, (0.0, 1e3))
        ends.append((path.omega[-1, 0], path.mu[-1, :n].sum()))
    (omega_2, M_2), (omega_4, M_4) = ends
    assert 2 * omega_4 * M_4 == pytest.approx(2 * omega_2 * M_2, abs=1e-3)
    assert omega_4 / omega_2 == pytest.approx(0.89, abs=0.01)


def test_every_split_of_the_group_sums_has_the_manifold_minimum():
    """The group sums mu*(omega) minimise L̃ for H = 2, 4, 8 alike (any split)."""
    rng = np.random.default_rng(0)
    omega = 0.16
    star = float(manifold_mu(omega, SETTING))
    losses = []
    for n in (1, 2, 4):
        share = rng.dirichlet(np.ones(n))
        w = np.r_[np.full(n, omega), np.full(n, -omega)]
        losses.append(float(approximate_loss(w, np.r_[star * share, -star * share], SETTING)))
        scaled = float(approximate_loss(w, 1.02 * np.r_[star * share, -star * share], SETTING))
        assert scaled > losses[-1]
    assert np.ptp(losses) < 1e-13


def test_smoke_numbers_come_from_the_ensembles_logs_and_the_wrong_sums_are_rejected(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_HEADS)
    data = measurement.figure_data
    assert data["compared"].tolist() == [2.0, 4.0]  # both have a paired member at smoke
    relative = measurement.values["omega_vs_ref"].value
    assert relative == pytest.approx(data["omega_mean"][1:] / data["omega_mean"][0] - 1)
    # smoke has one member per H: its per-H mean is the last-quarter mean of its own logs
    k = list(data["shown_heads"]).index(4.0)
    omega, mu = data["omega"][:, k, :4], data["mu"][:, k, :4]  # (n, 4)
    share = np.abs(omega * mu)
    live = share[-1] > 0.05 * share[-1].max()
    weighted = share[:, live].sum(axis=1) / np.abs(mu[:, live]).sum(axis=1)  # (n,)
    assert data["omega_mean"][1] == pytest.approx(weighted[-(weighted.size // 4) :].mean())
    assert np.all(measurement.values["omega_vs_ref"].error > 0)
    wrong = CLAIM_HEADS.verdicts(params, CLAIM_HEADS.wrong(params, prediction), measurement)
    assert wrong["sums_vs_ref"] == DISAGREES
    assert measurement.values["dummy_kq"].value.size >= 1  # smoke's H = 4 member has one


def test_figures_draw_the_member_with_a_dummy_head(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_HEADS)
    assert measurement.figure_data["figure_has_dummy"] == 1.0
    figure_13, figure_14 = CLAIM_HEADS.draw(params, prediction, measurement)
    assert len(figure_13.axes) == 2 * 3  # H = 2, 4 and the comparison column
    # 5 snapshots x 4 heads x (KQ, OV) + 2 colour bars + 3 trajectory panels
    assert len(figure_14.axes) == 5 * 4 * 2 + 2 + 3
    plt.close(figure_13)
    plt.close(figure_14)


@pytest.mark.parametrize(
    "setting, message",
    [
        ("compare_heads=2", "compare_heads must list at least two numbers of heads"),
        ("compare_heads=2,5", "compare_heads must list numbers of heads that are trained"),
        ("figure_heads=1", "figure_heads must be a trained number of heads >= 2"),
    ],
)
def test_bad_parameters_are_one_line_and_exit_2(tmp_path, capsys, setting, message):
    args = ["run", "HE-A-HEADS", "--preset", "smoke", "--device", "cpu", "--out", str(tmp_path)]
    assert main([*args, "--set", setting]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
