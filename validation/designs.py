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
