"""The cache knows the code: a producer whose code changed has a new version.

`producer_digests.json` records, per producer of `validation.cache.producers()`, the version
and the digest of its code (`validation.cache.code_digest`: its module and every icl_verify
module it imports, docstrings and comments left out). The test fails when the code changed
and the version did not, and when a version was bumped without recording its code. After a
change that can alter what a producer returns: bump its ARTEFACT_VERSION (beside it),
then record it:

    python tests/validation/test_cache_versions.py --record

`--record` refuses to record changed code under an unchanged version, unless the change
provably leaves every number the producer returns as it was (a pure refactor):
`--record --same-numbers PRODUCER ...`, named in the commit.
"""

import json
import sys
from pathlib import Path

import pytest
from icl_verify.validation.cache import code_digest, producers

PRODUCERS = producers()

RECORD = Path(__file__).with_name("producer_digests.json")


def _recorded() -> dict:
    return json.loads(RECORD.read_text())


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_a_producer_whose_code_changed_has_a_new_version(name):
    recorded = _recorded().get(name)
    assert recorded is not None, f"{name}: not recorded; run {Path(__file__).name} --record"
    version, digest = PRODUCERS[name].version, code_digest(PRODUCERS[name].module)
    if digest != recorded["digest"]:
        assert version != recorded["version"], (
            f"{name}: its code changed but its version is still {version}: bump "
            f"its ARTEFACT_VERSION (cached artefacts of the old code would be read), "
            f"then run {Path(__file__).name} --record"
        )
    assert (version, digest) == (recorded["version"], recorded["digest"]), (
        f"{name}: version {version} is not recorded with its code; run "
        f"{Path(__file__).name} --record"
    )


def test_every_recorded_producer_exists():
    assert set(_recorded()) == set(PRODUCERS)


def record(same_numbers: set[str]) -> int:
    old = _recorded() if RECORD.exists() else {}
    new = {}
    for name, producer in sorted(PRODUCERS.items()):
        digest = code_digest(producer.module)
        before = old.get(name)
        if (before and before["digest"] != digest and before["version"] == producer.version
                and name not in same_numbers):  # fmt: skip
            print(f"{name}: code changed under version {producer.version}: bump the version, "
                  "or name it after --same-numbers if no number it returns can change")
            return 1
        new[name] = {"version": producer.version, "digest": digest}
    RECORD.write_text(json.dumps(new, indent=1) + "\n")
    print(f"recorded {len(new)} producers in {RECORD}")
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args[0] != "--record":
        sys.exit(__doc__)
    sys.exit(record(set(args[2:]) if args[1:2] == ["--same-numbers"] else set()))


def test_a_digest_does_not_depend_on_what_the_process_imported_before():
    # ``from icl_verify.validation import api`` names a submodule whether or not this process
    # loaded it already; read by getattr on the package, a fresh process (api not loaded) would
    # take it for the package itself and leave api's code out of the digest
    import subprocess

    script = (
        "import sys\n"
        "if sys.argv[1] == 'loaded':\n"
        "    import icl_verify.validation.api\n"
        "from icl_verify.validation.cache import _defining_module\n"
        "print(_defining_module('icl_verify.validation', 'api'))\n"
    )
    found = [
        subprocess.run([sys.executable, "-c", script, state], capture_output=True, text=True,
                       check=True).stdout.strip()  # fmt: skip
        for state in ("fresh", "loaded")
    ]
    assert found == ["icl_verify.validation.api"] * 2
