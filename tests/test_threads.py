"""The thread splitter: same answers for any thread count, small batches on the calling thread."""

import threading

import numpy as np

from app.kernels import dispatch as threads


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


def test_ik_calls_with_broadcast_or_fresh_targets_reach_the_kernels_as_one_kind_of_array(widowx):
    """Numba compiles a kernel again for read-only arrays (10-35 s of CPU each on a fresh checkout): targets that
    arrive as np.broadcast_to views (one orientation for many positions, no orientation) and as fresh arrays
    reach the IK, closed-form and Jacobian kernels as writeable arrays, and the restart tables always read-only."""
    from app.ik._analytic_kernel import branches_batch, solve_seeded_kernel
    from app.ik._lm import solve_batch_kernel
    from app.ik.analytic import analytic_ik
    from app.kinematics._fk_kernels import jacobian_kernel

    pos = np.array([[0.35, 0.0, 0.2], [0.3, 0.05, 0.25]])
    down = np.array([0.0, 1.0, 0.0, 0.0])
    for quat in (down, np.tile(down, (2, 1)), None):
        widowx.inverse_kinematics("ee_gripper_link", pos=pos, quat=quat, max_restarts=2)
        widowx.inverse_kinematics("ee_gripper_link", pos=pos[0], quat=quat, max_restarts=2)
    widowx.inverse_kinematics("ee_gripper_link", pos=pos, quat=down, seeds=widowx.mid_config()[None], max_restarts=2)
    analytic_ik(widowx, "ee_gripper_link", pos=pos, quat=down)
    analytic_ik(widowx, "ee_gripper_link", pos=pos, quat=np.tile(down, (2, 1)))
    widowx.get_jacobian(widowx.mid_config(), "ee_gripper_link", local_point=[0, 0, 0.01])
    widowx.get_jacobian(np.tile(widowx.mid_config(), (3, 1)), "ee_gripper_link", local_point=[0, 0, 0.01])
    varying = {solve_batch_kernel: (4, 5), solve_seeded_kernel: (4, 5), branches_batch: (0, 1), jacobian_kernel: (3,)}
    for kernel, args in varying.items():
        assert kernel.signatures, kernel
        for sig in kernel.signatures:
            assert all(sig[i].mutable for i in args), (kernel, [str(sig[i]) for i in args])
    for kernel in (solve_batch_kernel, solve_seeded_kernel):
        assert not any(sig[1].mutable for sig in kernel.signatures)  # the restart table
