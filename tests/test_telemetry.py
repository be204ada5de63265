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


def test_log_stacks_one_row_per_tick():
    log = TelemetryLog()
    for k in range(4):
        log.record(k * 0.1, np.full(2, k), np.zeros(2), np.ones(2, bool), np.ones(2), np.zeros(2, int),
                   np.full(2, np.inf), np.zeros(2, bool), [[], []])
    arr = log.arrays()
    assert arr["pos_err"].shape == (4, 2)
    np.testing.assert_array_equal(arr["t"], [k * 0.1 for k in range(4)])  # the times given, in tick order
    assert arr["pos_err"][:, 0].tolist() == [0, 1, 2, 3]
