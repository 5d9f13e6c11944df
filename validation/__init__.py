"""Claims: the theory's prediction beside the simulation's measurement, with a verdict.

Holds the `icl-verify` command line; will hold the claims registry, presets and reports.
"""
