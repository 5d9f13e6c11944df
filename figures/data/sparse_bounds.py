"""Figure data of Chen, Zhao, Zou (2024)'s upper-bound claims drawn by `figures.sparse_bounds`
whose numbers are more than the claim's values: CZZ-4.3 (when preprocessing wins, §4.3, §7.10)
and CZZ-D4-7 (the lemmas of Theorem 5.1's proof), under the keys results.json has always held
(``bounds_ratio``, ``margin_term_max``, ``d4_same``, ...).

>>> terms = ProofTerms(np.array([8.0, 16.0]), np.zeros((5, 2, 2, 2)))
>>> sorted(terms.to_record())[:3]
['cross_independent', 'cross_same', 'd4_independent']
>>> ProofTerms.from_record(terms.to_record()).at("d7", "same")[0].tolist()
[0.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from icl_verify.figures.data import FlatRecord, floats


@dataclass(frozen=True)
class WinsTheory(FlatRecord):
    """CZZ-4.3's prediction side for the figure: the ratio of Theorem 5.2's bound to 5.1's per
    n (constants 1), Tr(RΣR)/β² against Tr(Σ) (§4.3's condition), and §4.3's bounds on
    ``s/(n² β²)`` (`theory.margin_term_bounds`: the algebra's κ²s²/n², the printed κ²s²/n and
    the condition's 1/n)."""

    bounds_ratio: np.ndarray  # (N,)
    trace_condition: float
    trace_sigma: float
    margin_over_n2: np.ndarray  # (N,)
    margin_over_n: np.ndarray  # (N,)
    margin_condition: np.ndarray  # (N,)


@dataclass(frozen=True)
class WinsData(FlatRecord):
    """CZZ-4.3's measurement for the figure: per n the tuned GD and pre-gd mean risks and step
    counts on the same prompts, and ``s/(n² β²)`` over the drawn tasks (largest, median, and
    the largest over κ²s²/n²)."""

    n: np.ndarray  # (N,)
    gd_risk: np.ndarray  # (N,)
    pregd_risk: np.ndarray  # (N,)
    gd_t: np.ndarray  # (N,) tuned step counts
    pregd_t: np.ndarray  # (N,)
    margin_term_max: np.ndarray  # (N,)
    margin_term_median: np.ndarray  # (N,)
    margin_ratio_max: np.ndarray  # (N,)


@dataclass(frozen=True)
class ProofTheory(FlatRecord):
    """CZZ-D4-7's prediction side: the n grid and Theorem 5.1's noise term A on it."""

    n: np.ndarray  # (N,)
    A: np.ndarray  # (N,)


#: The quantities of Theorem 5.1's proof per prompt (`numerics.proof_terms`): Lemmas D.4-D.7's
#: and the cross term's share; and where R_hat comes from (the prompt's labels, or an
#: independent sample with the same w*).
TERMS = ("d4", "d5", "d6", "d7", "cross")
SOURCES = ("same", "independent")


@dataclass(frozen=True)
class ProofTerms:
    """CZZ-D4-7's measurement: per term of `TERMS` and R_hat source of `SOURCES`, its mean over
    the evaluation prompts and SE per n. Stored as ``{term}_{source}``, (N, 2) each."""

    n: np.ndarray  # (N,)
    terms: np.ndarray  # (len(TERMS), len(SOURCES), N, 2): mean, SE

    def at(self, term: str, source: str) -> tuple[np.ndarray, np.ndarray]:
        """The mean and SE of ``term`` with R_hat from ``source``, (N,) each."""
        mean, se = self.terms[TERMS.index(term), SOURCES.index(source)].T
        return mean, se

    def to_record(self) -> dict:
        return {"n": self.n} | {
            f"{term}_{source}": self.terms[i, j]
            for i, term in enumerate(TERMS) for j, source in enumerate(SOURCES)
        }  # fmt: skip

    @classmethod
    def from_record(cls, data: Mapping) -> ProofTerms:
        terms = [[floats(data[f"{t}_{s}"]) for s in SOURCES] for t in TERMS]
        return cls(floats(data["n"]), np.array(terms))
