"""Camera framing: every environment of a grid is inside the field of view; one environment is unchanged."""

import numpy as np

from app.render.framing import frame_environments
from app.sim.scene import grid_origins


def test_one_environment_keeps_the_scene_camera():
    eye, target = frame_environments(np.array([1.0, -1.0, 0.8]), np.array([0.2, 0.0, 0.1]), 45.0, np.zeros((1, 3)))
    np.testing.assert_array_equal(eye, [1.0, -1.0, 0.8])
    np.testing.assert_array_equal(target, [0.2, 0.0, 0.1])


def test_every_environment_origin_is_inside_the_vertical_field_of_view():
    origins = grid_origins(16, (1.0, 1.0))
    fov = 45.0
    eye, target = frame_environments(np.array([1.0, -0.9, 0.7]), np.array([0.25, 0.0, 0.12]), fov, origins)
    view = (target - eye) / np.linalg.norm(target - eye)
    np.testing.assert_allclose(np.cross(view, (eye - [1.0, -0.9, 0.7]) - (target - [0.25, 0.0, 0.12])), 0,
                               atol=1e-9)  # moved back along its own line of sight
    for p in origins + [0.25, 0.0, 0.12]:
        d = (p - eye) / np.linalg.norm(p - eye)
        assert np.degrees(np.arccos(d @ view)) < fov / 2
