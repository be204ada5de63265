"""Target generators: each task type's targets over time, per environment, in its own frame."""

import numpy as np
import pytest

from app.control.motions import CircleMotion, FingertipsMotion, PathMotion, StaticMotion, TargetGenerator
from app.kinematics.rotations import quat_to_matrix


def test_circle_targets_lie_on_the_circle_with_the_matching_velocity():
    task = CircleMotion(center=(0.3, 0.0, 0.2), radius=0.1, angular_speed_range=(-3.0, 3.0))
    gen = TargetGenerator(task, 4, np.array([0.0, 0.1, 0.0]), seed=2)
    assert len(set(np.round(gen.omega, 9))) == 4  # each environment its own speed
    for t in (0.0, 0.7, 2.3):
        tg = gen(t)
        assert tg.pos.shape == (4, 1, 3) and tg.quat.shape == (4, 1, 4)
        np.testing.assert_allclose(np.linalg.norm(tg.pos[:, 0, :2] - [0.3, 0.1], axis=1), 0.1, atol=1e-12)
        h = 1e-6
        fd = (gen(t + h).pos - gen(t - h).pos) / (2 * h)
        np.testing.assert_allclose(tg.vel, fd, atol=1e-6)
    same = TargetGenerator(task, 4, np.array([0.0, 0.1, 0.0]), seed=2)
    np.testing.assert_array_equal(same.omega, gen.omega)  # the seed decides


def test_static_target_holds_still_relative_to_the_base():
    tg = TargetGenerator(StaticMotion(center=(0.3, 0.0, 0.2)), 2, np.array([1.0, 0.0, 0.0]), seed=0)(5.0)
    np.testing.assert_allclose(tg.pos[:, 0], [[1.3, 0.0, 0.2]] * 2)
    assert not tg.vel.any()


def test_fingertip_targets_are_gap_apart_along_the_frame_y_axis():
    task = FingertipsMotion(center=(0.3, 0.0, 0.15), gap=0.04, gap_amplitude=0.02,
                          quat=(0.7071067811865476, 0.0, 0.7071067811865476, 0.0))
    gen = TargetGenerator(task, 1, np.zeros(3), seed=0)
    for t in (0.0, 0.4):
        tg = gen(t)
        d = tg.pos[0, 0] - tg.pos[0, 1]
        np.testing.assert_allclose(np.linalg.norm(d), 0.04 + 0.02 * np.sin(2 * t), atol=1e-12)
        y = quat_to_matrix(np.array(task.quat))[:, 1]
        np.testing.assert_allclose(d / np.linalg.norm(d), y, atol=1e-12)


@pytest.mark.parametrize("t", [0.0, 0.5, 1.7, 4.0])
def test_path_targets_move_along_the_segments_at_the_speed(t):
    task = PathMotion(waypoints=((0.0, 0.0, 0.0), (0.2, 0.0, 0.0), (0.2, 0.1, 0.0)), speed=0.1)
    tg = TargetGenerator(task, 1, np.zeros(3), seed=0)(t)
    s = (0.1 * t) % 0.3
    expected = [s, 0.0, 0.0] if s <= 0.2 else [0.2, s - 0.2, 0.0]
    np.testing.assert_allclose(tg.pos[0, 0], expected, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(tg.vel[0, 0]), 0.1)
