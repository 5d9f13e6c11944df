"""The claims, one subpackage per paper and one module per claim family.

`validation.registry` finds every `CLAIMS` tuple below this package by itself
(subpackages included; modules whose name starts with "_" are not scanned), so
adding a claim edits no list. `he2025/manifold.py` is a complete, short example.

How to add a claim:

1. Put the mathematics where it belongs first: the formula in `theory` (derived in
   `theory.symbolic` where the algebra is the point), an ODE or optimiser of a
   theory loss in `dynamics`, the simulation (Monte Carlo, training, estimators and
   their standard errors) in `numerics`, the figure in `figures/<family>.py` as
   `figure_x(params, prediction, measurement)` drawing stored numbers only. The
   claim module then reads as a short declaration of what is compared with what.
2. In the paper's subpackage (`he2025/`, or a new one per paper), in the family's
   module (its docstring names the paper sections), declare:

   - the parameters: a frozen `@dataclass(frozen=True, kw_only=True)` subclass of
     `validation.params.SettingParams` (d, L, sigma2) or `Params`, every field made
     with `param(default?, help=..., low=/high=/choices=)`, and `validate()` for
     conditions joining fields (`check_order`);
   - `PRESETS`: "smoke" (seconds; the tests), "quick" (the whole registry in minutes
     on a 2-core CPU) and "paper" (the paper's sizes) instances of that class;
   - `predict(params) -> Prediction` from `theory`/`dynamics`;
     `measure(params, runtime) -> Measurement` from `numerics`/`dynamics`, never
     from the formula under test, each value an `Estimate(value, error, "se"|"bound")`;
     randomness from `runtime.rng(stream)` / `runtime.seed`, expensive artefacts
     through `runtime.cached(name, config, fn)` with every parameter they depend on
     in `config`; `checks(params)`: one `Check(quantity, rule, label)` per compared
     quantity with `ZScore`, `LogLogSlope` or `Tolerance` and a justification that
     says where its tolerance comes from;
   - `CLAIM_X = Claim(id, source, statement, params=..., presets=PRESETS, predict=...,
     measure=..., checks=..., figure="family:figure_x", wrong=scaled("q", 1.5))`
     and list it in the module's `CLAIMS`. `wrong` is a deliberately wrong
     prediction that the rules must call `disagrees`. A claim reproducing several of
     the paper's figures names a tuple of figure functions (one PNG each), and one
     with a table to set beside the paper's gives `table=fn(params, prediction,
     measurement) -> markdown` (HE-5.2-ACT: both).

   Import `numerics` as the module (`from icl_verify import numerics`) and use it
   inside functions: it loads torch lazily, and `icl-verify list` and `show` must
   load neither torch nor matplotlib (tests/test_layers.py).
3. `tests/validation/test_registry_claims.py` then runs it at smoke size, round-trips
   its record, redraws its figure and feeds it the wrong prediction; hand-written
   tests are for mathematics (of the formula, the estimator, the flow).

Randomness that defines the *setting* (a random design shared by prediction and
measurement, `validation.designs`) comes from a `design_seed` parameter; `--seed`
changes only the measurement's randomness.
"""
