"""Claims of He, Pan, Chen, Yang (ICML 2025), *In-Context Linear Regression Demystified*.

One module per claim family; ids and sections as in `shared/reference/he2025.md`.
"""
