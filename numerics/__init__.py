"""Simulation side of icl-verify, in torch on CPU or GPU.

Will hold data samplers, the multi-head softmax attention model of He et al. (2025),
a batched-ensemble trainer, circuit read-outs, in-context estimators and Monte Carlo.
Never imports `theory` or `dynamics`: a measurement must not use the formula it checks.
"""
