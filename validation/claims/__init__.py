"""The claims, one subpackage per paper and one module per claim family.

`validation.registry` finds every `CLAIMS` tuple below this package by itself (subpackages
included; modules whose name starts with "_" are not scanned) and orders the claims by the
places they carry, so adding a claim edits no list. `he2025/manifold.py` is a complete, short
example: a claim module reads as a declaration of what is compared with what.

How to add a claim, the whole checklist:

1. The mathematics first, where it belongs, with its tests beside it:
   - the formula in `theory` (derived in `theory.symbolic` where the algebra is the point);
   - an ODE or an optimiser of a theory loss in `dynamics`: it returns numbers (features,
     trajectories), never a verdict;
   - the simulation in `numerics` (Monte Carlo, training, estimators, read-outs of trained
     models; torch lives here and only here): public functions that take plain values (seeds
     as ints, the device string) and return numpy arrays or typed results. A new numerics
     module goes in the paper's part (``numerics/_he2025/``, ``numerics/_chen2024/``; generic
     machinery in ``_core/``), with ``__all__`` and its names' lines in `numerics/__init__.pyi`
     (`tests/test_exports.py` checks both); numerics imports neither theory nor dynamics;
   - statistics from `icl_verify.statistics` (means with SEs, paired differences,
     proportions, bootstrap, slope fits, Richardson), one definition each;
   - the figure in `figures/<family>.py` as ``figure_x(params, prediction, measurement)``,
     drawing stored numbers only.
2. In the paper's subpackage (``he2025/``, ``chen2024/``; a new paper is a new subpackage with
   ``PAPER_ORDER`` and ``OMITTED_FIGURES`` in its ``__init__``), in the family's module:
   - the parameters: a frozen ``@dataclass(frozen=True, kw_only=True)`` subclass of
     `validation.params.SettingParams` (d, L, sigma2), `SparseSettingParams` (d, s, sigma),
     a trained family's (`claims.he2025._ensembles`, `claims.chen2024._encoders`, built on
     `TrainedParams`: it says which trainings the claim reads, ``trainings()``, and a run
     schedules by them) or `Params`, every field made with
     ``param(default?, help=..., low=/high=/choices=, role=)`` (role: a size's part in the
     memory estimate, `params.ROLES`), and ``validate()`` for conditions
     joining fields (`check_order`);
   - ``PRESETS``: "smoke" (seconds; the tests), "quick" (the whole registry in minutes on a
     2-core CPU) and "paper" (the paper's sizes) instances of that class (a trained family's
     claim: ``Params.presets(smoke=..., quick=..., paper=...)``, its own fields on top of the
     family's shared presets);
   - ``predict(params) -> Prediction`` from `theory`/`dynamics`;
   - ``measure(params, runtime) -> Measurement``: calls to named `numerics`/`dynamics`
     functions, never the formula under test, each value an ``Estimate(value, error,
     "se"|"bound")``. Its randomness: ``runtime.seed_for(name)`` (an int per named stream)
     or ``runtime.rng(name)``, never seed arithmetic; a random design shared with
     ``predict`` comes from a ``design_seed`` parameter (`validation.designs`), so ``--seed``
     changes only the measurement. A trained model: ``runtime.trained(spec)`` (a training
     of `numerics` that knows how to make and load itself); another expensive artefact:
     ``runtime.cached(name, config, fn)`` with every input in ``config`` and ``name`` a
     producer of `validation.cache.producers()` (a new one declares ``ARTEFACT`` and
     ``ARTEFACT_VERSION`` beside its function in `numerics`; its version is part of the key). No
     ``import torch`` and no thread settings here: the executor runs every claim on one
     torch thread (`tests/test_layers.py` checks the first);
   - ``checks(params)``: one ``Check(quantity, rule, label)`` per compared quantity, with a
     rule of `validation.rules` (`ZScore`, `Tolerance`, `LogLogSlope`, `Inequality`,
     `BoundTrend`) and a justification that says where its tolerance comes from (a Monte
     Carlo SE, a theorem's error order, a solver's stopping point);
   - ``CLAIM_X = Claim(id, source, statement, params=..., presets=PRESETS, predict=...,
     measure=..., checks=..., figure=FigureRef("icl_verify.figures.family", "figure_x"),
     wrong=scaled("q", 1.5, why="q 50% too high: 10 x the tolerance 0.05."), summary=...,
     catalogue=(section, item), paper_figures=(...))`` listed in the module's
     ``CLAIMS``: ``wrong`` is a deliberately wrong prediction its rules must call
     ``disagrees``, with a docstring (for `scaled`/`shifted` their ``why``, else a named
     function's own) that says what it gets wrong and by how much it misses the rule (the
     claim's page shows it); ``summary`` the one line of the claim tables; ``catalogue`` its
     place in the paper's reference catalogue (the registry's order); ``paper_figures`` the
     paper's numbered figures its records draw (`validation.paper_figures.PaperFigure`,
     gathered by `icl-verify figures`). Several figures: a tuple of `FigureRef`s; a table to
     set beside the paper's: ``table=fn(params, prediction, measurement) -> markdown``.
   The claim record (`Claim`, `Check`, `Source`, `FigureRef`, `scaled`) comes from
   `validation.claim`, the numbers (`Prediction`, `Measurement`, `Estimate`) from
   `validation.estimates`, the rules from `validation.rules`. Import `numerics` as the module
   (``from icl_verify import numerics``) and use it inside functions: it loads torch lazily,
   and `icl-verify list` and `show` must load neither torch nor matplotlib.
3. Regenerate the README's claim tables: ``icl-verify list --markdown --verdicts
   results/<quick run>`` into the README's "The claims and their latest verdicts"
   (`tests/test_readme.py` fails while its copy differs from the registry).
4. `tests/validation/test_registry_claims.py` then runs the claim at smoke size, round-trips
   its record, redraws its figure and feeds it the wrong prediction; hand-written tests are
   for mathematics (of the formula, the estimator, the flow).
"""
