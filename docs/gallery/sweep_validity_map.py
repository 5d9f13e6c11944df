# %% [markdown]
# # A sweep and its validity map
#
# Where does a claim hold? A sweep runs it at every point of a grid, each point a full run
# with its own record. HE-P4.1 compares the Monte Carlo true loss of two-head attention with
# the closed-form approximation L̃ of (4.1); here over the covariate dimension d and the
# prompt length L:

# %%
import os
import tempfile

import icl_verify

PRESET = os.environ.get("TUTORIAL_PRESET", "quick")
OUT = os.environ.get("TUTORIAL_OUT") or tempfile.mkdtemp(prefix="icl-verify-example-")

sweep = icl_verify.sweep("HE-P4.1", {"d": [3, 5, 10], "L": [20, 80]}, preset=PRESET, out=OUT)
print(sweep)
sweep.table()

# %% [markdown]
# The validity map: for two swept keys a grid coloured by verdict, each cell with its worst
# check's score (the distance beyond the prediction over what the rule allows; above 1 the
# measurement contradicts the claim). `icl-verify report` redraws it from `results.json`.

# %%
from IPython.display import Image  # noqa: E402

Image(filename=str(sweep.validity_map))
