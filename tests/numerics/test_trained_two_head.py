"""Evidence, smoke size: a two-head softmax model trained from the default init (He et al. 2025
§HE-OBS1-3, d = 5, L = 40, sigma2 = 0.1) forms an opposite-head pair and predicts about as well as
the best debiased one-step GD (4.11) on the same prompts.

Thresholds. Sign matching is exact (a sign). Zero-sum ``|sum mu| / sum |mu| < 0.05`` and KQ
homogeneity ``max/min |omega_h| < 1.05`` are the reference's agreement rules (§HE-OBS2). The
loss gap: the best dGD risk here is about 0.243 and the best single head's about 0.406
(reference §HE-OBS3), so a gap bound of 0.03 separates "tracks dGD" from "single-head-like" by
a wide margin. Measured with this test (seed 0, Adam lr 3e-3, batch 256, 1500 steps): TF 0.2519,
dGD 0.2461 (least-squares eta 0.866), gap 0.0058 +- 0.0013, omega = ±0.21, mu = ±2.06; omega
keeps descending the valley of minima towards the paper's 0.13 with longer training.

Seed. From the default init some seeds settle where both heads have the same sign and act as one
head (loss about 0.408, the single-head optimum; zero-sum ratio 1): at lr 3e-3, seeds 3, 4, 7 of
0..7 were still there after 20k steps, while seeds 0, 1, 2, 5, 6 formed the pair (gap to the best
dGD 0.0026-0.0042 +- 0.0006 at 20k steps, omega = ±0.162, mu = ±2.7). Seed 0 forms the pair within
250 steps; the test pins it and says so: it checks the pattern of a run that forms the pair, not
how often runs do.
"""

import torch
from icl_verify.numerics import (
    AttentionConfig,
    LinearRegressionTask,
    TrainConfig,
    embed,
    gd_prediction,
    sample_linear_regression,
    summarize_circuits,
    train,
)

from icl_verify.settings import Setting

d, L, SIGMA2 = 5, 40, 0.1


def test_two_head_model_forms_a_pair_and_tracks_debiased_gd():
    config = TrainConfig(
        lr=3e-3, batch=256, steps=1500, seed=0, validation_batch=256, log_every=500, device="cpu"
    )
    result = train(
        AttentionConfig(d=d, heads=2), LinearRegressionTask(d, L, SIGMA2), config, progress=False
    )

    (summary,) = summarize_circuits(result.model.KQ, result.model.OV, d)
    assert not summary.dummy.any()
    assert summary.sign_matching
    assert summary.zero_sum_ratio < 0.05
    assert summary.kq_homogeneity < 1.05
    assert (summary.diagonality > 0.99).all()  # KQ11 ~ omega I (reference: ratios > 0.99)

    prompts = sample_linear_regression(
        8192, Setting(d, L, SIGMA2), generator=torch.Generator().manual_seed(2024)
    )
    with torch.no_grad():
        tf_error = (result.model(embed(prompts)[None])[0] - prompts.y_query) ** 2  # (n,)
    # best debiased GD on these very prompts: the least-squares step size for the dGD direction
    direction = gd_prediction(prompts.X, prompts.y, prompts.x_query, 1.0, debiased=True)
    eta = (direction * prompts.y_query).sum() / (direction**2).sum()
    dgd_error = (eta * direction - prompts.y_query) ** 2
    gap = tf_error - dgd_error  # paired: same prompts
    se = gap.std() / gap.numel() ** 0.5
    print(
        f"TF {tf_error.mean():.4f}  dGD {dgd_error.mean():.4f} (eta {eta:.3f})  "
        f"gap {gap.mean():.4f} +- {se:.4f}  omega {summary.omega}  mu {summary.mu}"
    )
    assert gap.mean() + 4 * se < 0.03
