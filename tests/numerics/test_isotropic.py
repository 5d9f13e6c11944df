"""numerics.isotropic_setting: the row CZZ-T5.3 caches per setting, against
`isotropic_risks` on the same generator and against its own definitions (pre-gd's absolute
eta t = relative step x t / lambda_max; s lambda_max)."""

import numpy as np
import torch
from icl_verify.numerics import isotropic_risks, isotropic_setting

GRIDS = dict(etas=(0.5, 1.0), steps=(2, 8), lambdas=(0.0, 0.1, 1.0))


def test_the_row_is_isotropic_risks_from_the_seed_as_numpy():
    row = isotropic_setting(10, 40, 2, 0.5, prompts=6, seed=11, alphas=(0.01, 0.1), **GRIDS)
    risks = isotropic_risks(
        10, 40, 2, 0.5, prompts=6, generator=torch.Generator().manual_seed(11),
        alphas=(0.01, 0.1), **GRIDS,
    )  # fmt: skip
    np.testing.assert_array_equal(row["ols"], risks.ols.numpy())
    for name in ("ridge", "gd", "pregd", "lasso"):
        tuned = getattr(risks, name)
        np.testing.assert_array_equal(row[name], tuned.risks.numpy())
        np.testing.assert_array_equal(row[f"{name}_index"], np.array(tuned.index, dtype=float))
    e, t = (int(i) for i in row["pregd_index"])
    curvature = risks.pregd_curvature.numpy()
    np.testing.assert_allclose(row["pregd_eta_t"], GRIDS["etas"][e] * GRIDS["steps"][t] / curvature)
    np.testing.assert_allclose(row["pregd_s_curvature"], 2 * curvature)


def test_without_alphas_there_is_no_lasso_and_every_value_is_a_numpy_array():
    row = isotropic_setting(10, 40, 2, 0.5, prompts=4, seed=0, **GRIDS)
    assert "lasso" not in row and "lasso_index" not in row
    assert all(isinstance(v, np.ndarray) for v in row.values())  # cacheable as .npz
    assert row["ols"].shape == (8,) and row["pregd"].shape == (4,)
