"""The CUDA-graph step path: on CUDA the whole loop runs on a side stream; the step (sampling,
forward, backward, fused Adam, the bookkeeping on the device) runs as plain launches for
`GRAPH_WARMUP_STEPS` steps, is then captured once as a CUDA graph and replayed
(``TrainConfig.cuda_graph``). The plain launches stay as the fallback: a step that cannot be
captured goes on as they are, and they compute the same numbers. On the CPU, and inside
`numerics.draw_on_cpu` (a graph cannot replay a host draw), every step is plain.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable

import torch
from icl_verify.numerics._core.data import drawing_on_cpu

GRAPH_WARMUP_STEPS = 3  # plain steps before the capture (allocator, Adam state, cuBLAS handles)


def device_options(device: torch.device) -> dict:
    """Adam's options for the device: fused and capturable on CUDA, whose step count then lives
    on the device (graph-capturable, one launch per step instead of a dozen); the plain and
    the graph path use the same optimizer, so they compute the same numbers. A checkpoint's
    param groups carry their own, so they are set again after loading one.

    >>> device_options(torch.device("cpu")), device_options(torch.device("cuda"))
    ({}, {'fused': True, 'capturable': True})
    """
    return {"fused": True, "capturable": True} if device.type == "cuda" else {}


def captured(step: Callable[[], None], generators: list[torch.Generator], stream):
    """``step`` captured as a CUDA graph on ``stream`` (its random draws from ``generators``,
    registered so that every replay advances them as a plain step would); None, with a one-line
    warning, when it cannot be captured: the caller then goes on with plain launches.

    Capturing runs no kernel, so a failed capture changes no weight, moment or generator.
    """
    graph = torch.cuda.CUDAGraph()
    try:
        for generator in generators:
            graph.register_generator_state(generator)
        with torch.cuda.graph(graph, stream=stream):
            step()
    except Exception as error:  # any failure: the plain path computes the same numbers
        reason = " ".join(f"{type(error).__name__}: {error}".split())[:200]
        print(
            f"icl-verify: warning: the training step could not be captured as a CUDA graph "
            f"({reason}); training on with plain launches",
            file=sys.stderr,
        )
        return None
    return graph


class Steps:
    """The loop's steps: ``take(step)`` runs ``one_step`` (launches only, no host
    synchronisation) or replays its graph; inside ``on_stream()`` on CUDA; ``join()`` makes
    the caller's stream wait for them.

    >>> calls = []
    >>> steps = Steps(lambda: calls.append(1), [], torch.device("cpu"), True, start=0, last=5)
    >>> with steps.on_stream():
    ...     for step in range(1, 6):
    ...         steps.take(step)
    >>> steps.join()
    >>> len(calls), steps.graph is None
    (5, True)
    """

    def __init__(
        self,
        one_step: Callable[[], None],
        generators: list[torch.Generator],
        device: torch.device,
        cuda_graph: bool,
        start: int,
        last: int,
    ) -> None:
        self.one_step, self.generators, self.device, self.last = one_step, generators, device, last
        self.capture_after = None  # the step after which the step is captured (None: never)
        self.stream = None
        if device.type == "cuda":
            # the whole loop runs on this stream (a capture needs a side stream)
            self.stream = torch.cuda.Stream(device)
            self.stream.wait_stream(torch.cuda.current_stream(device))
            if cuda_graph and not drawing_on_cpu():  # a graph cannot replay a host draw
                self.capture_after = start + GRAPH_WARMUP_STEPS
        self.graph = None  # the captured step, once it is

    def on_stream(self):
        """The context the loop runs in: the side stream on CUDA, nothing on the CPU."""
        if self.stream is None:
            return contextlib.nullcontext()
        return torch.cuda.stream(self.stream)

    def take(self, step: int) -> None:
        """Optimizer step ``step``: plain launches, or a replay once captured; after the warm-up
        (unless it is the last step) the step is captured."""
        if self.graph is None:
            self.one_step()
        else:
            self.graph.replay()
        if step == self.capture_after and step < self.last:
            self.graph = captured(self.one_step, self.generators, self.stream)

    def join(self) -> None:
        """Make the current stream wait for the loop's side stream (CUDA; nothing on the CPU)."""
        if self.stream is not None:
            torch.cuda.current_stream(self.device).wait_stream(self.stream)
