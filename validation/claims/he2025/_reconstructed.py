"""Formulas of He et al. (2025) that several claims' predictions rest on and that the paper's
extracted text does not confirm (its math is stripped): the reference catalogue
(`shared/reference/he2025.md`) tags them [RECON] or [OPEN]. Each claim declares the ones it rests
on in its `Source` (`validation.claim.Reconstructed`); a formula only one claim uses is declared
in that claim's module. `tests/validation/test_reconstructed.py` holds every declaration to the
catalogue's tags.

>>> print(MANIFOLD.tag, MANIFOLD.entry)
RECON HE-MAN
"""

from icl_verify.validation.claim import Reconstructed

#: (4.6)-(4.7): mu*(omega) and the solution manifold's group sums (reference §HE-MAN).
MANIFOLD = Reconstructed("(4.6)-(4.7), μ*(ω) and the group sums ±μ*(ω) of S_ω", "HE-MAN", "RECON")

#: (4.4)-(4.5): homogeneous KQ scaling by way of the Stage II lower bound (reference §HE-S2).
STAGE_TWO_BOUND = Reconstructed(
    "(4.4)-(4.5), homogeneous KQ scales by way of the Stage II lower bound", "HE-S2", "RECON"
)

#: Prop. 4.1's error order: the informal version says only that the error vanishes as L grows;
#: the claims check the reference's derived 1/L (exactly 1/(L + D) on the manifold as omega -> 0).
APPROXIMATION_ORDER = Reconstructed(
    "Prop. 4.1's error order in L, checked as the reference's derived 1/L", "HE-P4.1", "OPEN"
)

#: Prop. 4.1's regime: d omega^2 = O(1), bounded mu, L large (reference §HE-P4.1).
APPROXIMATION_REGIME = Reconstructed(
    "Prop. 4.1's regime d ω² = O(1), bounded μ", "HE-P4.1", "RECON"
)

#: Theorem 4.2(iii)'s final inequality, read as the sharp ratio and the uniform excess ratio.
BAYES_BOUND = Reconstructed(
    "Thm 4.2(iii)'s inequality, read as ratio ≤ 1 + κ/(σ²(1+κ)), excess ratio ≤ 1 + 1/σ²",
    "HE-T4.2iii",
    "OPEN",
)

#: The time of App. B's flows: gradient flow of Ltilde as a plain MSE (the authors' code flows
#: Ltilde/2, where every time doubles): rates and times are in this unit (reference §5).
TIME_CONVENTION = Reconstructed(
    "App. B's time unit, the flow of L̃ as a plain MSE (the authors' code flows L̃/2: times double)",
    "5",
    "RECON",
)

#: (5.1): linear attention with a fixed 1/L, no softmax and no mask (reference §HE-5.1-LIN).
LINEAR_ATTENTION = Reconstructed(
    "(5.1), linear attention with a fixed 1/L and no mask", "HE-5.1-LIN", "RECON"
)
