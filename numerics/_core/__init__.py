"""The generic machinery of `icl_verify.numerics`: prompts, models, estimators,
Monte Carlo, the trainer (private: its public names are exported by the package)."""
