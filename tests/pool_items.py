"""Work for app.runtime.work_pool's tests, in a module of its own so that Ray's workers can import it
(tests.pool_items, with the checkout on their path)."""

import os
import time


def here_and_there(args: tuple) -> tuple[int, bool]:
    """Item (i, parent pid, folder): this process's first item ends once an actor has finished item 1, and an actor's
    later items once this process has worked on a later one (files in ``folder``: the actors are other processes)."""
    i, parent, folder = args
    here = os.getpid() == parent
    if here and i >= 2:
        (folder / "here_late").touch()
    elif not here and i == 1:
        (folder / "actor_done").touch()
    wanted = {(True, 0): "actor_done", (False, 2): "here_late"}.get((here, min(i, 2)))
    deadline = time.monotonic() + 60
    while wanted and not (folder / wanted).exists():
        assert time.monotonic() < deadline, f"item {i}: {wanted} never came"
        time.sleep(0.01)
    return i, here


def held_until_released(args: tuple) -> int:
    """Item (i, folder): says it runs (``folder/running.i.PID``), then waits for ``folder/released`` (a test kills
    the worker meanwhile); returns i * i."""
    i, folder = args
    (folder / f"running.{i}.{os.getpid()}").touch()
    deadline = time.monotonic() + 60
    while not (folder / "released").exists():
        assert time.monotonic() < deadline, f"item {i}: never released"
        time.sleep(0.01)
    return i * i
