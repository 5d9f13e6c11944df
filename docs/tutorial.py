# %% [markdown]
# # Tutorial: a claim at a new setting, a phase portrait, a validity map
#
# A jupytext "percent" script: open it as a notebook (`jupytext --to notebook
# docs/tutorial.py`) or run it as it is (`python docs/tutorial.py`). The test suite and the
# site's build run it at the smoke preset (`TUTORIAL_PRESET=smoke`), so it cannot rot.

# %%
import os
import tempfile

import icl_verify

PRESET = os.environ.get("TUTORIAL_PRESET", "quick")
OUT = os.environ.get("TUTORIAL_OUT") or tempfile.mkdtemp(prefix="icl-verify-tutorial-")


def show(png):
    """A PNG the toolkit wrote: inline in a notebook, its path in a plain run."""
    try:
        from IPython import get_ipython
        from IPython.display import Image, display
    except ImportError:  # IPython is not installed: a plain run
        get_ipython = None
    if get_ipython is None or get_ipython() is None:
        return print(png)
    display(Image(filename=str(png)))

# %% [markdown]
# ## 1. Proposition 4.1 of He et al. at d = 10
#
# HE-P4.1 compares the Monte Carlo true loss of two-head softmax attention with the
# closed-form approximation L̃ of (4.1); the paper's setting is d = 5. At d = 10:

# %%
result = icl_verify.run("HE-P4.1", preset=PRESET, out=OUT, d=10)
print(result.verdict)
result.table()

# %%
figure = result.figure()  # a matplotlib Figure, drawn from the stored numbers
figure  # noqa: B018 (a notebook shows the last expression)

# %% [markdown]
# ## 2. The phase portrait of the two-head gradient flow
#
# The flow of (omega, mu) for two heads on L̃ (Appendix B), from `icl_verify.dynamics`,
# drawn by `icl_verify.figures` (the same as `icl-verify flow two-head`).

# %%
from pathlib import Path  # noqa: E402

from icl_verify.dynamics import phase_portrait  # noqa: E402
from icl_verify.figures.phase_portrait import draw_phase_portrait  # noqa: E402
from icl_verify.theory import Setting  # noqa: E402

portrait = phase_portrait(Setting(d=5, L=40, sigma2=0.1))
show(draw_phase_portrait(portrait, Path(OUT) / "two-head-portrait.png"))

# %% [markdown]
# ## 3. Where a claim holds: a sweep and its validity map
#
# HE-T4.2i (attention approaches debiased GD as omega -> 0) over the prompt length L:

# %%
sweep = icl_verify.sweep("HE-T4.2i", {"L": [20, 40, 80]}, preset=PRESET, out=OUT)
show(sweep.validity_map)
sweep.table()
