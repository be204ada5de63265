"""The thread splitter: same answers for any thread count, small batches on the calling thread."""

import threading

import numpy as np

from app import threads


def _kernel(x, scale):
    return x * scale, np.array([threading.get_ident()] * len(x))


def test_chunks_give_the_same_result_as_one_call_and_the_first_runs_here(monkeypatch):
    x = np.arange(200.0)[:, None]
    monkeypatch.setenv("APP_THREADS", "3")
    out, ids = threads.chunked(_kernel, 200, (x,), (2.0,))
    np.testing.assert_array_equal(out, 2.0 * x)
    assert ids[0] == threading.get_ident() and len(set(ids)) >= 2  # split, the first chunk on this thread


def test_small_batches_stay_on_the_calling_thread(monkeypatch):
    monkeypatch.setenv("APP_THREADS", "4")
    batch = 2 * threads.MIN_CHUNK - 1
    _, ids = threads.chunked(_kernel, batch, (np.zeros((batch, 1)),), (1.0,))
    assert set(ids) == {threading.get_ident()}


def test_thread_count_follows_app_threads(monkeypatch):
    monkeypatch.setenv("APP_THREADS", "1")
    assert threads.n_threads() == 1
    monkeypatch.delenv("APP_THREADS")
    assert threads.n_threads() >= 1
