"""Claims: the theory's prediction beside the simulation's measurement, with a verdict.

- `validation.claim`: the `Claim` type, `Estimate`/`Prediction`/`Measurement`, the
  agreement rules (`ZScore`, `Tolerance`, `LogLogSlope`) and the verdicts;
- `validation.claims`: the claims, one module per family (how to add one: its docstring);
- `validation.registry`, `validation.presets` (sizes as data in `preset_sizes`);
- `validation.runner`, `validation.runtime`, `validation.cache`: running claims,
  resumably, with a configuration-keyed artefact cache;
- `validation.records` (results.json schema) and `validation.report` (report.md);
- `validation.cli`: the `icl-verify` command line.
"""
