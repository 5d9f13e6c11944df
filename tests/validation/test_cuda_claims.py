"""Every trained claim at the smoke preset gives the same verdicts on CUDA as on the CPU (marker
``cuda``: skipped without a GPU). The two devices draw different prompts (CUDA's Philox against
the CPU's Mersenne twister), so the numbers differ within their error bars; the verdicts, which
those error bars decide, must not."""

import pytest
from icl_verify.validation.registry import trained_claims
from icl_verify.validation.runner import run_claims

pytestmark = pytest.mark.cuda


def test_every_trained_claim_gives_the_same_verdicts_on_cuda_as_on_the_cpu(tmp_path):
    claims = trained_claims()
    verdicts, checks = {}, {}
    for device in ("cpu", "cuda"):
        record = run_claims(claims, preset="smoke", out=tmp_path, run_id=device, seed=0,
                            device=device)  # fmt: skip
        verdicts[device] = {claim.id: claim.verdict for claim in record.claims}
        checks[device] = {(claim.id, c.label): c.verdict for claim in record.claims
                          for c in claim.checks}  # fmt: skip
    differing = {key: (value, checks["cuda"].get(key)) for key, value in checks["cpu"].items()
                 if checks["cuda"].get(key) != value}  # fmt: skip
    assert verdicts["cuda"] == verdicts["cpu"], f"checks (cpu, cuda) that differ: {differing}"
    assert len(verdicts["cpu"]) == len(claims)
