"""`run_claims(..., draw_on_cpu=True)` (`numerics.draw_on_cpu`), where the CI runs: on the CPU
it changes no number, and it keys its own cache entries and checkpoints, leaving the default
keys as they were. On CUDA it makes a run draw the CPU's prompts:
`tests/validation/test_cuda_claims.py`."""

import json
import tempfile

import pytest
import torch
from icl_verify.numerics import (
    AttentionConfig,
    EnsembleTraining,
    LinearRegressionTask,
    TrainConfig,
    draw_on_cpu,
    sample_sparse_regression,
    seeded_generator,
    train,
)
from icl_verify.numerics._core._training.checkpoints import fingerprint
from icl_verify.validation.cache import ArtefactCache, canonical_json
from icl_verify.validation.comparison import compare_runs
from icl_verify.validation.registry import select_claims
from icl_verify.validation.runner import run_claims
from icl_verify.validation.runtime import Runtime

from icl_verify.settings import SparseSetting

# Every place a trained claim seeds a generator for its device: the trainer's data and validation
# streams (HE-5.1-LIN: shared stream; CZZ-G-DECODER: one per member, the decoder), Monte Carlo
# blocks (HE-5.1-LIN's risks), the true-loss trainer and its losses (HE-C-TRUELOSS).
CLAIMS = ("HE-5.1-LIN", "CZZ-G-DECODER", "HE-C-TRUELOSS")


def test_on_the_cpu_a_run_drawn_on_the_cpu_measures_the_default_runs_numbers_bit_for_bit(
    tmp_path,
):
    def run(name: str, on_cpu: bool):
        return run_claims(select_claims(list(CLAIMS)), preset="smoke", out=tmp_path / name,
                          run_id=name, seed=0, device="cpu", workers=1,
                          draw_on_cpu=on_cpu)  # fmt: skip

    records = [run("default", False), run("drawn", True)]
    default, drawn = ({c.id: c for c in record.claims} for record in records)
    assert sorted(default) == sorted(drawn) == sorted(CLAIMS)
    for claim in CLAIMS:  # values, error bars and figure data: the same floats
        assert drawn[claim].measurement == default[claim].measurement, claim
    assert compare_runs(*records).matches
    # and the second run trained afresh under its own keys: no entry of the default cache reused
    entries = [{p.name for p in (tmp_path / name / "cache").iterdir()} for name in ("default",
               "drawn")]  # fmt: skip
    assert entries[0] and entries[1] and not entries[0] & entries[1]


def test_the_default_keys_are_those_before_draw_on_cpu_existed_and_drawing_on_cpu_changes_them():
    # Both pinned strings were printed by the code of commit d4a457c, before draw_on_cpu: the
    # configuration `Runtime.trained` handed the cache for this spec, and the trainer's
    # checkpoint fingerprint of this run.
    spec = EnsembleTraining(d=2, L=8, sigma2=0.1, heads=(1, 2), lr=3e-3, steps=24, batch=16,
                            seed=0, log_every=2, checkpoint_every=12,
                            validation_batch=64)  # fmt: skip
    pinned_key = (
        '{"L":8,"attention":"softmax","batch":16,"checkpoint_every":12,"d":2,"device":"cpu",'
        '"heads":[1,2],"log_every":2,"lr":0.003,"momentum":0.0,"optimizer":"adam","rho":0.0,'
        '"seed":0,"shared_beta":false,"sigma2":0.1,"steps":24,"supports":[],'
        '"validation_batch":64,"weight_decay":0.0}'
    )

    class Recording(ArtefactCache):  # the configurations the cache is asked for
        keys: set

        def cached(self, name, config, compute):
            self.keys.add(canonical_json(config))
            return super().cached(name, config, compute)

    def keys(on_cpu: bool) -> set:
        cache = Recording(tempfile.mkdtemp())
        cache.keys = set()
        Runtime("cpu", 0, cache, draw_on_cpu=on_cpu).trained(spec)
        return cache.keys

    assert keys(False) == {pinned_key}
    assert keys(True) == {canonical_json({**json.loads(pinned_key), "draws": "cpu"})}

    model, task = AttentionConfig(d=2, heads=2, ensemble=3), LinearRegressionTask(2, 8, 0.1)
    config = TrainConfig(steps=20, batch=16, log_every=10, validation_batch=64)
    pinned_fingerprint = (
        "(AttentionConfig(d=2, heads=(2, 2, 2), ensemble=3, n_labels=1, attention='softmax', "
        "train_length=40, init='default', init_scale=0.01), ("
        + ", ".join(["LinearRegressionTask(d=2, L=8, sigma2=0.1, covariance=None)"] * 3)
        + "), TrainConfig(optimizer='adam', lr=0.001, betas=(0.9, 0.999), weight_decay=0.0, "
        "momentum=0.0, batch=16, steps=1, seed=0, validation_batch=64, validation_seed=12345, "
        "device='auto', dtype='float32', log_every=10, checkpoint_every=0, "
        "data_streams='member', compile=False))"
    )
    assert fingerprint(model, (task,) * 3, config) == pinned_fingerprint
    with draw_on_cpu():
        assert fingerprint(model, (task,) * 3, config) == pinned_fingerprint + " drawn on the CPU"


def test_a_cpu_generator_serves_another_device_and_draw_on_cpu_puts_the_generators_there():
    # "meta" stands in for CUDA where there is none: the draw happens on the CPU, then moves
    generator = torch.Generator().manual_seed(0)
    prompts = sample_sparse_regression(
        3, SparseSetting(4, 2, 0.1), 5, signal="sign", generator=generator, device="meta"
    )  # fmt: skip
    assert prompts.X.device.type == prompts.w_star.device.type == "meta"
    with draw_on_cpu():
        assert seeded_generator(0, "meta").device.type == "cpu"


def test_workers_cannot_train_inside_draw_on_cpu():
    config = TrainConfig(steps=2, batch=4, log_every=1, validation_batch=8, workers=2)
    with draw_on_cpu(), pytest.raises(ValueError, match="workers must be 1 inside draw_on_cpu"):
        train(AttentionConfig(d=2, heads=1, ensemble=2), LinearRegressionTask(2, 4, 0.1), config,
              progress=False)  # fmt: skip
