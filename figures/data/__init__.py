"""Typed figure data, one module per figure family: what a claim measures for its figure and
what the figure draws, as frozen dataclasses with ``to_record()`` (the plain JSON-able dict a
claim's record stores in results.json) and ``from_record()`` (the dataclass again, for the
figure and the claim's table). Each record key is spelled once, in the class that owns it.

NumPy only (no matplotlib), so a claim builds its figure's data without loading the plotting
stack; figures import these modules, and validation may (tests/test_layers.py).
"""
