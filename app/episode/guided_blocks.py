"""Blocks of a sharded run's environments cut as the run goes (app.episode.sharding): each worker, as it asks for
work, gets the contiguous block that should make it finish when the others do.

Until a block has finished there is nothing to go by: the asking worker gets ``1/workers`` of what is left (the
guided share of :func:`guided_size`; this process asks first, at once, and an actor after Ray's start). Then the
pace of the finished blocks (seconds from taken to finished, per environment) says when each busy worker will be
free; the environments left are shared so that all end together (a water level over the workers' free times),
and the asking worker takes its part. So the workers finish within about a block's fixed cost of each other with
a few blocks (each repeats the control loop's fixed work per tick, ~0.6 s of CPU for an 18 s QP episode), where
a fixed list of shrinking blocks needs small ones at the end that each pay it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np

TAIL_BLOCK = 2  # environments in the smallest block (fewer where the run has fewer than this per worker)


def guided_size(left: int, workers: int, smallest: int) -> int:
    """A share of the ``left`` environments for one of ``workers``: 1/workers of them, at least ``smallest``."""
    return min(left, max(smallest, -(-left // workers)))


def water_level(free_at: list[float], work_s: float) -> float:
    """The time T at which workers free at ``free_at`` [s] finish ``work_s`` seconds of work shared between them:
    sum of max(0, T - free) over the workers equals ``work_s``."""
    ordered = sorted(free_at)
    for k in range(len(ordered), 0, -1):
        level = (work_s + sum(ordered[:k])) / k
        if level >= ordered[k - 1]:
            return level
    return ordered[0] + work_s


class GuidedBlocks:
    """A :class:`app.runtime.work_pool.Dispenser` of blocks of ``n_envs`` environments (contiguous, in order) for
    ``workers`` workers: ``items`` holds ``item(envs)`` for each block cut so far, ``envs`` the blocks. A block's
    time is from its taking to its finishing, on ``clock`` [s] (monotonic)."""

    def __init__(self, n_envs: int, workers: int, item: Callable[[np.ndarray], object],
                 clock: Callable[[], float] = time.monotonic):
        self.n_envs, self.workers, self.item, self.clock = n_envs, workers, item, clock
        self.smallest = min(TAIL_BLOCK, -(-n_envs // workers))
        self.items: list = []
        self.envs: list[np.ndarray] = []
        self.next = 0  # the first environment not in a block yet
        self.busy: dict[int, tuple[float, int]] = {}  # worker -> (when it took its block [s], its environments)
        self.spent_s, self.done_envs = 0.0, 0  # the finished blocks' time from taken to finished [s], environments
        self.lock = threading.Lock()

    def take(self, worker: int) -> int | None:
        with self.lock:
            left = self.n_envs - self.next
            if left <= 0:
                return None
            now = self.clock()
            size = self._size(worker, left, now)
            envs = np.arange(self.next, self.next + size)
            self.next += size
            self.busy[worker] = (now, size)
            self.envs.append(envs)
            self.items.append(self.item(envs))
            return len(self.items) - 1

    def _size(self, worker: int, left: int, now: float) -> int:
        if self.done_envs == 0:
            return guided_size(left, self.workers, self.smallest)
        per_env_s = max(self.spent_s / self.done_envs, 1e-9)
        others = [max(now, taken + per_env_s * k) for w, (taken, k) in self.busy.items() if w != worker]
        others += [now] * max(0, self.workers - 1 - len(others))  # those not at work now are about to ask
        size = round((water_level([now, *others], left * per_env_s) - now) / per_env_s)
        size = max(self.smallest, min(left, size))
        return left if left - size < self.smallest else size

    def finished(self, i: int, worker: int, result) -> None:
        with self.lock:
            taken, k = self.busy.pop(worker)
            self.spent_s += self.clock() - taken  # all of it: the scene's build, an actor's start, the transfer
            self.done_envs += k

    def left(self) -> int:
        with self.lock:
            return self.n_envs - self.next

    def close(self) -> None:
        with self.lock:
            self.next = self.n_envs
