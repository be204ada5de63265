"""Camera math: the matrices are PyBullet's, and fit_view frames every point inside the margins (and the
caption's reserve) along the scene camera's line of sight."""

import numpy as np

from app.render.framing import CameraView, box_corners, fit_view


def _view():
    return CameraView(np.array([1.2, -1.2, 0.9]), np.array([0.3, 0.0, 0.15]), 50.0, 320, 240)


def test_box_corners_span_the_box():
    c = box_corners(np.array([1.0, 2.0, 3.0]), np.array([0.2, 0.4, 0.6]))
    np.testing.assert_allclose(c.min(axis=0), [0.9, 1.8, 2.7])
    np.testing.assert_allclose(c.max(axis=0), [1.1, 2.2, 3.3])


def test_project_maps_the_target_to_the_picture_centre():
    view = _view()
    px, in_front = view.project(view.target)
    np.testing.assert_allclose(px, [160, 120], atol=1e-9)
    assert in_front


def test_fit_view_holds_every_point_inside_the_margins_and_fills_one_direction():
    rng = np.random.default_rng(3)
    points = rng.uniform([-2, -2, 0], [2, 2, 0.5], (200, 3))
    view = fit_view(points, [1.2, -1.2, 0.9], [0.3, 0.0, 0.15], 45.0, 640, 480, margin=0.05, top_reserve=0.1)
    px, in_front = view.project(points)
    assert in_front.all()
    x, y = px[:, 0] / 640, px[:, 1] / 480  # fractions of the picture
    assert x.min() >= 0.025 - 1e-6 and x.max() <= 0.975 + 1e-6 and y.min() >= 0.125 - 1e-6 and y.max() <= 0.975 + 1e-6
    assert max(1 - x.max(), x.min()) < 0.03 or max(1 - y.max(), y.min() - 0.1) < 0.03  # tight on one axis
    direction = (view.target - view.eye) / np.linalg.norm(view.target - view.eye)
    np.testing.assert_allclose(direction, np.array([-0.9, 1.2, -0.75]) / np.linalg.norm([-0.9, 1.2, -0.75]))


def test_camera_matrices_are_pybullets():
    import pybullet as pb

    view = _view()
    V = np.reshape(pb.computeViewMatrix(list(view.eye), list(view.target), [0, 0, 1]), (4, 4)).T
    P = np.reshape(pb.computeProjectionMatrixFOV(50.0, 320 / 240, 0.02, 30.0), (4, 4)).T
    np.testing.assert_allclose(view.view, V, atol=1e-6)
    np.testing.assert_allclose(view.projection, P, atol=1e-6)


