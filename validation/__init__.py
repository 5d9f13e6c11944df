"""Claims: the theory's prediction beside the simulation's measurement, with a verdict.

- `validation.claim`: the claim record (`Claim`, `Check`, `Source`, `FigureRef`, the wrong
  predictions `scaled`/`shifted`, `evaluate`);
- `validation.estimates`: `Estimate`/`Prediction`/`Measurement` and the verdicts;
  `validation.rules`: the agreement rules (`ZScore`, `Tolerance`, `LogLogSlope`,
  `Inequality`, `BoundTrend`) and the log-log slope fits;
- `validation.claims`: the claims, one module per family (how to add one: its docstring);
- `validation.params`: typed, validated claim parameters (presets are instances
  declared beside each claim); `validation.registry`: finds the claims;
- `validation.runner`, `validation.runtime`, `validation.cache`: running claims,
  resumably, with a configuration-keyed artefact cache;
- `validation.records` (results.json schema, `to_json`) and `validation.report` (report.md);
- `validation.cli`: the `icl-verify` command line.
"""
