"""Random designs that define a claim's setting, shared by its prediction and measurement.

A design is drawn from the claim's own ``design_seed`` parameter, never from the run's
``--seed``: the seed changes the measurement's randomness, not what is measured.
"""

from __future__ import annotations

import numpy as np


def random_head_signs(rng: np.random.Generator, heads_max: int, dummy: bool) -> np.ndarray:
    """A random split of H ~ U{2..heads_max} heads into positive, negative and dummy heads.

    Signs +1 (KQ scale +omega), -1 (-omega) and 0 (a dummy head, KQ scale 0). Every
    pattern holds a positive and a negative head, and, when `dummy` and H >= 3, a dummy
    head; the other heads are +1, -1 or 0 at random, in shuffled order. Shape (H,).

    >>> signs = random_head_signs(np.random.default_rng(1), 6, dummy=True)
    >>> {1, -1} <= set(signs.tolist()), 2 <= signs.size <= 6
    (True, True)
    """
    heads = int(rng.integers(2, heads_max + 1))
    fixed = [1, -1, 0][: min(heads, 3 if dummy else 2)]
    pattern = np.array(fixed + list(rng.choice([1, -1, 0], size=heads - len(fixed))))
    return rng.permutation(pattern)


def linear_head_and_prompts(
    rng: np.random.Generator, D: int, L: int, n_prompts: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A random linear-attention head and centred and uncentred prompts (He et al. §5.1, (5.2)).

    KQ and OV have i.i.d. N(0, 1/D) entries (D, D). The prompts Z (n_prompts, D, L+1) have
    N(0, 1) tokens: the *centred* set has its L context tokens shifted to mean zero per prompt
    (zbar = 0 exactly, so the centring term vanishes); the *uncentred* set adds one random
    offset m ~ N(0, I_D) to every token of a prompt (zbar ~ m, the centring term O(1)).

    >>> KQ, OV, centred, uncentred = linear_head_and_prompts(np.random.default_rng(0), 6, 40, 3)
    >>> centred.shape, bool(np.abs(centred[..., :-1].mean(axis=-1)).max() < 1e-15)
    ((3, 6, 41), True)
    """
    KQ = rng.standard_normal((D, D)) / np.sqrt(D)  # (D, D)
    OV = rng.standard_normal((D, D)) / np.sqrt(D)  # (D, D)
    Z = rng.standard_normal((n_prompts, D, L + 1))  # (B, D, L+1)
    centred = Z.copy()
    centred[..., :-1] -= Z[..., :-1].mean(axis=-1, keepdims=True)
    uncentred = Z + rng.standard_normal((n_prompts, D, 1))  # one offset per prompt
    return KQ, OV, centred, uncentred
