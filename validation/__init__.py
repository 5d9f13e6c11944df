"""Claims: the theory's prediction beside the simulation's measurement, with a verdict.

- `validation.claim`: the `Claim` type, `Estimate`/`Prediction`/`Measurement`, the
  agreement rules (`ZScore`, `Tolerance`, `LogLogSlope`) and the verdicts;
- `validation.claims`: the claims, one module per family (how to add one: its docstring);
- `validation.params`: typed, validated claim parameters (presets are instances
  declared beside each claim); `validation.registry`: finds the claims;
- `validation.runner`, `validation.runtime`, `validation.cache`: running claims,
  resumably, with a configuration-keyed artefact cache;
- `validation.records` (results.json schema) and `validation.report` (report.md);
- `validation.cli`: the `icl-verify` command line.
"""
