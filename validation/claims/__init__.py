"""The claims, one module per claim family; `validation.registry` finds them by itself.

How to add a claim (a small module; see `optimality.py` for a complete example):

1. Pick the family module (or create `validation/claims/<family>.py`; modules whose
   name starts with "_" are helpers and are not scanned). Its docstring names the
   paper sections it covers.
2. Write four functions of the claim's parameters `params` (a dict from the preset):

   - `predict(params) -> Prediction`: the theory's numbers, from `theory` or
     `dynamics` only. `values` holds what is compared; `figure_data` holds curves
     that are only drawn (e.g. the closed form on a fine grid).
   - `measure(params, runtime) -> Measurement`: the simulation's numbers as
     `Estimate(value, error, error_kind)` with error "se" (Monte Carlo / fit
     standard error) or "bound" (a guaranteed solver bound). Use `numerics` for
     anything stochastic, `runtime.rng(stream)` or `runtime.seed` for randomness,
     `runtime.device` for torch, `runtime.cached(name, config, fn)` for expensive
     arrays, `runtime.checkpoint_dir(name, config)` for a trainer's checkpoints,
     `runtime.progress(iterable, description)` for a nested progress bar. Never
     compute the measurement from the formula being checked.
   - `checks(params) -> tuple[Check, ...]`: one `Check(quantity, rule, label)` per
     compared quantity, with a rule from `validation.claim`: `ZScore` (Monte Carlo
     error), `LogLogSlope` (a rate; measure the slope with `fit_loglog_slope`) or
     `Tolerance` (deterministic, tolerance argued from an error term or a solver's
     accuracy). The `justification` says why that rule and that tolerance.
   - `figure(params, prediction, measurement) -> matplotlib Figure`: theory as lines,
     measurement as markers with error bars (`figures.style`), drawn only from the
     prediction and measurement, so `icl-verify report` can redraw it.

3. Collect them: `CLAIM_X = Claim(id=..., source=Source(...), statement="one sentence",
   predict=..., measure=..., checks=..., figure=...)` and list it in the module's
   `CLAIMS` tuple.
4. Add the claim's sizes to all three presets in `validation/preset_sizes.py`
   (smoke: seconds, quick: about a minute or less, paper: the reference's sizes).
5. Test it at smoke size in `tests/validation/test_claim_<family>.py`: it agrees,
   and it disagrees when the prediction is deliberately wrong.

Put randomness that defines the *setting* (a random design shared by prediction
and measurement) under a `design_seed` in the preset; `--seed` changes only the
measurement's randomness.
"""
