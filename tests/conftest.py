"""Suite-wide test set-up.

The models and Monte Carlo batches in the tests are tiny; on a small shared machine
several torch threads oversubscribe the cores and run many times slower than one
(measured >10x on the 2-core CI machine), so the whole suite runs torch on one thread.
"""

import pytest


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "heavy: a module whose fixtures or tests run for a minute or more (smoke runs of many "
        "claims, notebooks, real processes and signals); collected first",
    )


def pytest_collection_modifyitems(config, items):
    """The modules marked ``heavy`` first (each keeps its order; a stable sort): `make test`'s
    workers (``--dist loadscope --no-loadscope-reorder``: one module at a time to the next
    free worker, in this order) start on them at once, and the small modules fill in around
    them, instead of one worker ending the suite alone on a minutes-long module dispatched
    last (xdist's default order, by test count, puts these few-test modules last). Tests
    marked ``cuda`` are skipped where torch sees no CUDA device."""
    import torch

    items.sort(key=lambda item: item.get_closest_marker("heavy") is None)
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
