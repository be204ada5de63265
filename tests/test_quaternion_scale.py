"""Quaternions of any finite size mean their direction: entries of 1e-200 or 1e200 give the same rotation as the
unit quaternion everywhere one enters (rotations, the PyBullet boundary, robot bases, objects, cameras, actions)."""

import numpy as np
import pybullet as pb
import pytest

from app.kinematics.rotations import quat_normalize, quat_to_matrix, wxyz_to_xyzw, xyzw_to_wxyz
from app.sim.scene import Scene
from app.specs.camera_stream import CameraStream
from app.specs.object_spec import ObjectSpec
from app.validation import as_quaternions
from tests.conftest import WIDOWX_URDF

UNIT = np.array([np.cos(0.35), 0.3, -0.5, 0.8])
UNIT = UNIT / np.linalg.norm(UNIT)
SCALES = [1e-200, 1e-30, 1.0, 1e30, 1e200]


@pytest.mark.parametrize("scale", SCALES)
def test_rotation_helpers_give_the_unit_quaternions_rotation_at_any_scale(scale):
    q = UNIT * scale
    np.testing.assert_allclose(quat_normalize(q), UNIT, atol=1e-15)
    np.testing.assert_allclose(as_quaternions(q, "q"), UNIT, atol=1e-15)
    np.testing.assert_allclose(quat_to_matrix(q), quat_to_matrix(UNIT), atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(wxyz_to_xyzw(q)), 1.0, atol=1e-15)


@pytest.mark.parametrize("scale", [1e-200, 1e200])
def test_a_scaled_robot_base_and_object_pose_are_the_unit_ones_in_pybullet(scale):
    scene = Scene()
    try:
        robot = scene.add_robot(str(WIDOWX_URDF), base_quat=list(UNIT * scale))
        cube = scene.add_object(ObjectSpec(pos=(0.35, 0.0, 0.3)))
        scene.build(n_envs=1)
        cube.set_pose([0.3, 0.1, 0.4], list(UNIT * scale))
        base = pb.getBasePositionAndOrientation(robot.bodies[0].body_id, physicsClientId=scene.client)[1]
        obj = pb.getBasePositionAndOrientation(cube.body_ids[0], physicsClientId=scene.client)[1]
        np.testing.assert_allclose(quat_to_matrix(xyzw_to_wxyz(base)), quat_to_matrix(UNIT), atol=1e-6)
        np.testing.assert_allclose(quat_to_matrix(xyzw_to_wxyz(obj)), quat_to_matrix(UNIT), atol=1e-6)
    finally:
        scene.close()


def test_a_scaled_camera_offset_rides_its_link_as_the_unit_one():
    from app.sim.cameras import SceneCameras

    scene = Scene()
    try:
        robot = scene.add_robot(str(WIDOWX_URDF))
        scene.build(n_envs=1)
        cams = [CameraStream(name=f"c{k}", link="ee_gripper_link", offset_quat=tuple(UNIT * s))
                for k, s in enumerate([1.0, 1e-200, 1e200])]
        poses = SceneCameras(scene, robot, cams).poses(np.zeros(robot.model.n_dofs))
        for name in ("c1", "c2"):
            np.testing.assert_allclose(poses[name][1], poses["c0"][1], atol=1e-12)
    finally:
        scene.close()
