"""HE-OBS1..4 share one training: one cache key made of exactly the training's fields.

Their running, records, figures and wrong predictions are covered by
tests/validation/test_registry_claims.py; the measurements' mathematics by
tests/numerics/test_trained_ensemble.py and tests/numerics/test_patterns.py.
"""

import dataclasses

import pytest
from icl_verify.validation.cache import ArtefactCache
from icl_verify.validation.claims.he2025.obs_dynamics import CLAIM_OBS4
from icl_verify.validation.claims.he2025.obs_length import CLAIM_OBS3
from icl_verify.validation.claims.he2025.obs_opposite_heads import CLAIM_OBS2
from icl_verify.validation.claims.he2025.obs_patterns import CLAIM_OBS1
from icl_verify.validation.params import ParameterError
from icl_verify.validation.runtime import Runtime

CLAIMS = (CLAIM_OBS1, CLAIM_OBS2, CLAIM_OBS3, CLAIM_OBS4)


@pytest.mark.parametrize("preset", ["smoke", "quick", "paper"])
def test_the_four_claims_share_one_training_per_preset(preset):
    assert len({claim.presets[preset].training() for claim in CLAIMS}) == 1


def test_the_cache_key_holds_exactly_the_training():
    # the content of the key of the quick training: the training's fields, the seed named
    # "seed", the members' attention (He et al. §5 trains other attentions) and the data
    # model's KMS correlation, multi-task supports and their data model (§5.3, §5.4: none
    # here), and the optimiser (Adam, the paper's; HE-ROBUST trains others)
    key = dataclasses.asdict(CLAIMS[0].presets["quick"].training())
    assert key == {
        "d": 5, "L": 40, "sigma2": 0.1, "heads": (1, 1, 2, 2, 2, 2, 3, 3, 4, 4, 4, 8),
        "lr": 3e-3, "steps": 10_000, "batch": 256, "seed": 0, "log_every": 25,
        "checkpoint_every": 1000, "validation_batch": 1024, "attention": "softmax",
        "rho": 0.0, "supports": (), "shared_beta": False, "optimizer": "adam",
        "weight_decay": 0.0, "momentum": 0.0,
    }  # fmt: skip


def test_a_claim_field_keeps_the_training_and_a_training_field_changes_it():
    obs3 = next(claim for claim in CLAIMS if claim.id == "HE-OBS3")
    quick = obs3.presets["quick"].training()
    assert obs3.parameters("quick", {"n_prompts": "4096"}).training() == quick
    assert obs3.parameters("quick", {"steps": "2000"}).training().steps == 2000


@pytest.mark.parametrize(
    ("claim_id", "overrides", "message"),
    [
        ("HE-OBS1", {"show_heads": "1,3"}, "show_heads must list numbers of heads that are"),
        ("HE-OBS3", {"lengths": "10,20,30"}, "lengths must include the training L = 40"),
        ("HE-OBS3", {"compare_heads": "2,4"}, "compare_heads must include 1 and an H >= 2"),
        ("HE-OBS2", {"heads": "1,1"}, "heads must include a member with >= 2 heads"),
        ("HE-OBS4", {"log_every": "50"}, "steps must be >= 12 x log_every"),
    ],
)
def test_settings_the_claims_cannot_read_are_refused_in_one_line(claim_id, overrides, message):
    claim = next(claim for claim in CLAIMS if claim.id == claim_id)
    with pytest.raises(ParameterError, match=message):
        claim.parameters("smoke", overrides)


def test_the_four_measurements_read_one_cached_training(tmp_path):
    runtime = Runtime("cpu", 0, ArtefactCache(tmp_path / "cache"))
    for claim in CLAIMS:
        claim.measure(claim.presets["smoke"], runtime)
    folders = [p for p in runtime.cache.root.iterdir() if (p / "result.npz").exists()]
    assert len(folders) == 1


def test_obs2_tables_count_same_sign_runs_and_set_the_pairs_beside_table_1(tmp_path):
    runtime = Runtime("cpu", 0, ArtefactCache(tmp_path / "cache"))
    params = CLAIM_OBS2.presets["smoke"]
    prediction, measurement = CLAIM_OBS2.predict(params), CLAIM_OBS2.measure(params, runtime)
    table = CLAIM_OBS2.table(params, prediction, measurement)
    data = measurement.figure_data
    for H, runs, paired in zip(data["multi_heads"], data["counts"], data["paired_counts"],
                               strict=True):  # fmt: skip
        assert f"\n| {int(H)} | {int(runs)} | {int(paired)} | {int(runs - paired)} | " in table
    members = [row for row in table.splitlines() if row.count("|") == 10 and row[2].isdigit()]
    assert len(members) == data["paired_heads"].size
    assert f"Runs per H after {int(data['steps']):,} steps" in table
    # Table 1's softmax column beside mu*(0.1267): the reference's 2 omega mu* = 0.8790 there
    # (0.87908 at omega = 0.10, 0.87899 at 0.13) gives mu* = 0.8790 / 0.2534 = 3.469
    assert "| paper, Table 1 (softmax) | 2 | | 0.1267 | 3.5006 | 3.5006 | 3.469 | 0.8871 |" in table


@pytest.mark.parametrize(
    "successes, runs, verdict",
    [
        (2, 4, "disagrees"),  # half the runs break it: 0.5 > 0.1 + SE 0.18
        (3, 4, "inconclusive"),  # one of four: 0.25 <= 0.1 + SE 0.17, and SE > 0.1
        (9, 9, "inconclusive"),  # none of nine: SE 0.1001 still above the rate
        (10, 10, "agrees"),  # none of ten: SE 0.094
        (9, 10, "inconclusive"),
    ],
)
def test_a_share_of_runs_is_judged_with_its_binomial_error(successes, runs, verdict):
    """HE-OBS2's paired fraction and HE-OBS4's early formation: the share of runs breaking the
    reported pattern at most exception_rate = 0.1, one Agresti-Coull SE allowed (the seeds'
    variation), so a few runs can contradict it but only ten can confirm it."""
    from icl_verify.validation.claims.he2025._observations import exception_rule
    from icl_verify.validation.estimates import Estimate

    from icl_verify.statistics import proportion

    fraction, se = proportion([True] * successes + [False] * (runs - successes))
    judged = exception_rule(0.1, "a pattern").judge(1.0, Estimate(fraction, se))
    assert judged.verdict == verdict
