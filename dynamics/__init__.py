"""Gradient-flow ODEs on the approximate loss of He et al. (2025), integrated with scipy.

Will hold the H-head flow d theta/dt = -grad Ltilde, discrete gradient descent on
Ltilde, the two-head reduced system of Appendix B with its three phases, and
phase portraits. Float64 numpy only; no torch.
"""
