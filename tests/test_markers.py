"""Target frames are bodies: they show in headless camera images (debug lines would not)."""

import numpy as np

from app.sim.camera import Camera
from app.sim.scene import Scene


def test_frame_marker_appears_in_rendered_image_and_moves():
    scene = Scene()
    scene.build()
    cam = Camera.looking_at(scene.client, (0.6, -0.6, 0.5), (0.0, 0.0, 0.1), 50.0, 160, 120)
    empty = cam.frame()
    marker = scene.draw_debug_frame([0.0, 0.0, 0.1], quat=[1.0, 0.0, 0.0, 0.0], axis_length=0.15, axis_radius=0.01)
    shown = cam.frame()
    red = (shown[..., 0] > 150) & (shown[..., 1] < 80) & (shown[..., 2] < 80)
    assert red.sum() > 20 and np.abs(shown.astype(int) - empty).sum() > 0
    marker.set_pose([0.3, 0.3, 0.1], [1.0, 0.0, 0.0, 0.0])
    scene.update_debug_objects()
    np.testing.assert_allclose(marker.pose()[0], [0.3, 0.3, 0.1])
    assert np.abs(cam.frame().astype(int) - shown).sum() > 0
    scene.close()
