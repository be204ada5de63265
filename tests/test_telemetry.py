"""Telemetry: the stall detector's judgement and the log's arrays."""

import numpy as np

from app.control.telemetry import StallDetector, TelemetryLog


def test_stall_fires_only_for_a_static_unreached_target_whose_error_stopped_falling():
    det = StallDetector(3, window=10, err_tol=1e-3)
    target = np.zeros((3, 3))
    flags = []
    for k in range(30):
        err = np.array([0.05, 0.05 * 0.8 ** k, 0.0005])  # stuck / converging / reached
        moving = target.copy()
        flags.append(det.update(err, moving))
    assert flags[-1].tolist() == [True, False, False]
    assert not any(f.any() for f in flags[:9])  # nothing before a full window


def test_a_moving_target_is_never_a_stall():
    det = StallDetector(1, window=5)
    for k in range(20):
        stalled = det.update(np.array([0.05]), np.array([[0.01 * k, 0.0, 0.0]]))
    assert not stalled.any()


def test_log_keeps_every_ticks_values_even_when_the_caller_reuses_its_arrays():
    """A controller fills the same scratch arrays every tick: the log must hold each tick's values (copies),
    stacked (n_ticks, n_envs) in tick order; per-link errors appear only when every tick recorded them."""
    log = TelemetryLog()
    err, ok = np.zeros(2), np.ones(2, bool)
    for k in range(4):
        err[:] = k
        ok[1] = k % 2 == 0
        log.record(k * 0.1, err, err, ok, np.ones(2), np.zeros(2, int), np.full(2, np.inf), np.zeros(2, bool),
                   [[], []], pos_err_links=err[:, None] if k else None)
    arr = log.arrays()
    assert arr["pos_err"].shape == arr["solver_ok"].shape == (4, 2) and arr["t"].shape == (4,)
    assert arr["pos_err"][:, 0].tolist() == [0, 1, 2, 3] and arr["rot_err"][:, 1].tolist() == [0, 1, 2, 3]
    assert arr["solver_ok"][:, 1].tolist() == [True, False, True, False]
    assert np.all(np.diff(arr["t"]) > 0)
    assert "pos_err_links" not in arr  # the first tick did not record them: no ragged stack