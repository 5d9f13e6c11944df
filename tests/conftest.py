"""Suite-wide test set-up.

The models and Monte Carlo batches in the tests are tiny; on a small shared machine
several torch threads oversubscribe the cores and run many times slower than one
(measured >10x on the 2-core CI machine), so the whole suite runs torch on one thread.
"""

import pytest


def pytest_collection_modifyitems(config, items):
    """Tests marked ``cuda`` are skipped where torch sees no CUDA device."""
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True, scope="session")
def _torch_on_one_thread():
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
