"""app.episode.guided_blocks: a sharded run's blocks cut as the workers ask, so that they finish together."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from app.episode.guided_blocks import GuidedBlocks, guided_size, water_level


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_before_any_block_finished_each_worker_gets_a_share_of_what_is_left():
    blocks = GuidedBlocks(64, 2, lambda envs: envs)
    assert [len(blocks.items[blocks.take(w)]) for w in (0, 1, 1)] == [32, 16, 8]
    assert guided_size(3, 2, 2) == 2 and guided_size(1, 2, 2) == 1
    tiny = GuidedBlocks(2, 2, lambda envs: envs)
    assert [tiny.take(0), tiny.take(1), tiny.take(0)] == [0, 1, None]  # one each, however few


def test_the_water_level_shares_work_between_workers_free_at_different_times():
    assert water_level([0.0, 2.0], 4.0) == 3.0  # 3 s here, 1 s there
    assert water_level([0.0, 10.0], 4.0) == 4.0  # the late one is not needed
    assert water_level([5.0], 1.5) == 6.5


def test_a_worker_that_asks_after_a_block_finished_gets_the_block_that_ends_it_with_the_busy_one():
    """Paces of 0.35 s an environment: this process took 32 at 0 s, an actor 16 at 2 s (after Ray's start); the
    actor's next block and this process's last one end within one environment's time of each other."""
    clock, per_env = Clock(), 0.35
    blocks = GuidedBlocks(64, 2, lambda envs: envs, clock)
    ends = {}
    here = blocks.take(0)
    clock.t = 2.0
    there = blocks.take(1)
    clock.t = 2.0 + 16 * per_env
    blocks.finished(there, 1, None)
    there = blocks.take(1)
    ends[1] = clock.t + len(blocks.envs[there]) * per_env
    clock.t = 32 * per_env
    blocks.finished(here, 0, None)
    here = blocks.take(0)
    ends[0] = clock.t + len(blocks.envs[here]) * per_env
    assert blocks.take(0) is None and blocks.take(1) is None and len(blocks.items) == 4
    assert abs(ends[0] - ends[1]) <= per_env, ends


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 300), st.integers(1, 8), st.lists(st.tuples(st.integers(0, 7), st.floats(0.0, 5.0)),
                                                         min_size=1, max_size=200))
def test_blocks_cover_each_environment_once_in_order_whoever_asks_and_finishes(n_envs, workers, asks):
    clock = Clock()
    blocks = GuidedBlocks(n_envs, workers, lambda envs: envs.tolist(), clock)
    holding: dict[int, int] = {}
    for worker, wait_s in asks:
        worker %= workers
        clock.t += wait_s
        if worker in holding:
            blocks.finished(holding.pop(worker), worker, None)
        if (i := blocks.take(worker)) is not None:
            holding[worker] = i
    while (i := blocks.take(0)) is not None:
        pass
    cut = np.concatenate(blocks.envs)
    np.testing.assert_array_equal(cut, np.arange(n_envs))
    assert blocks.items == [b.tolist() for b in blocks.envs] and blocks.left() == 0
    smallest = min(2, -(-n_envs // workers))
    assert all(len(b) >= smallest for b in blocks.envs[:-1])
