"""Claims of Chen, Zhao, Zou (NeurIPS 2024), *How Transformers Utilize Multi-Head Attention in
In-Context Learning? A Case Study on Sparse Linear Regression*.

One module per claim family; ids (``CZZ-...``) and sections as in `shared/reference/chen2024.md`.
"""
