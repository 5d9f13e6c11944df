# %% [markdown]
# # A claim at your own setting
#
# Every claim runs at any setting its parameters allow (`icl-verify show ID` lists them, with
# their presets and allowed values). CZZ-PREGD is Figure 2c of Chen et al.: gradient descent
# on Algorithm 1's preprocessed covariates ends at a lower excess risk than on the raw ones.
# The paper does not state the prompt length n; the claim reads it as n = 10 and notes that
# from n = 16 = d on, plain GD ends lower at σ = 0. Here it runs at n = 16:

# %%
import os
import tempfile

import icl_verify

PRESET = os.environ.get("TUTORIAL_PRESET", "quick")
OUT = os.environ.get("TUTORIAL_OUT") or tempfile.mkdtemp(prefix="icl-verify-example-")

result = icl_verify.run("CZZ-PREGD", preset=PRESET, out=OUT, n=16)
result  # noqa: B018 (a notebook shows the verdict and its checks)

# %% [markdown]
# The record states every parameter used; a value outside a parameter's range is refused
# before any work, with one line naming it.

# %%
print(result.params)
try:
    icl_verify.run("CZZ-PREGD", preset=PRESET, out=OUT, n=0)
except ValueError as error:
    print(error)

# %% [markdown]
# The claim's figure, drawn from the stored numbers alone:

# %%
result.figure()
