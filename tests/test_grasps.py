"""Grasp ranking by batched IK: candidate geometry, the chosen grasp's solutions checked by FK, and the
'ungraspable' / 'unreachable' verdicts."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from app.kinematics.base_frame import BaseFrame
from app.tasks.grasps import POSES, GraspGeometry, candidates, grasp_poses, grasp_rotation, object_yaw, rank_grasps

CUBE = GraspGeometry(np.full(3, 0.025), False)
def yaw_quat(yaw) -> np.ndarray:
    """scipy's (w, x, y, z) of rotations about z by yaw (n,) [rad]."""
    return Rotation.from_euler("z", np.asarray(yaw, float)[:, None]).as_quat()[:, [3, 0, 1, 2]]


Q0 = np.array([0.0, 1.2, 1.0, -0.3, 0.0, 0.0, 0.044, 0.044])


def _rank(widowx, obj, yaw, place, opening=0.09, geo=CUBE):
    n = len(obj)
    quat = yaw_quat(yaw)
    return rank_grasps(widowx, "ee_gripper_link", BaseFrame(np.eye(3), np.zeros(3)), geo, np.asarray(obj, float),
                       quat, np.asarray(place, float), np.tile(Q0, (n, 1)), opening, "x", "y", np.arange(6))


def test_grasp_rotation_points_the_named_axes_where_asked():
    a, c = np.array([0.0, 0.0, -1.0]), np.array([np.cos(0.3), np.sin(0.3), 0.0])
    R = grasp_rotation(a, c, "x", "y")
    assert np.allclose(R @ [1, 0, 0], a) and np.allclose(R @ [0, 1, 0], c)
    assert np.allclose(R.T @ R, np.eye(3)) and np.isclose(np.linalg.det(R), 1.0)
    R2 = grasp_rotation(a, c, "-z", "y")  # a Panda-like tool pointing along -z
    assert np.allclose(R2 @ [0, 0, -1], a) and np.isclose(np.linalg.det(R2), 1.0)


def test_box_candidates_close_across_its_faces_and_round_ones_at_any_yaw():
    yaw, depth, tilt, width = candidates(GraspGeometry(np.array([0.02, 0.03, 0.025]), False))
    assert set(np.round(yaw, 6)) == set(np.round(np.arange(4) * np.pi / 2, 6))
    assert np.allclose(width[np.isclose(np.cos(yaw), 0, atol=1e-9)], 0.06)  # closing along the object's y
    assert len(yaw) == 4 * len(CUBE.depths) * len(CUBE.tilts)
    yaw_r, *_ = candidates(GraspGeometry(np.full(3, 0.02), True, n_yaws=16, tilts=(0.0,)))
    assert len(set(np.round(yaw_r, 6))) == 16


def test_object_yaw_inverts_a_rotation_about_the_vertical():
    yaw = np.array([-1.2, 0.0, 0.7, 3.0])
    assert np.allclose(object_yaw(yaw_quat(yaw)), yaw)


def test_chosen_grasp_solutions_reach_every_pose_by_fk(widowx):
    obj = [[0.3, -0.1, 0.025], [0.4, 0.1, 0.025]]
    place = [[0.3, 0.12, 0.025], [0.28, -0.1, 0.025]]
    plan = _rank(widowx, obj, np.array([0.4, -1.0]), place)
    assert plan.ok.all() and plan.reason == ["", ""]
    for e in range(2):
        yaw = [0.4, -1.0][e] + plan.yaw_offset[e]
        pos, rot = grasp_poses(CUBE, np.array(obj[e]), np.array(yaw), np.array(plan.depth[e] / 0.05),
                               np.array(plan.tilt[e]), np.array(place[e]), "x", "y")
        p_fk, q_fk = widowx.forward_kinematics(plan.q[e], ["ee_gripper_link"])
        assert np.abs(p_fk[:, 0] - pos).max() < 1e-3
        R_fk = Rotation.from_quat(q_fk[:, 0][:, [1, 2, 3, 0]]).as_matrix()
        assert np.abs(R_fk - rot).max() < 1e-2
        assert np.all(plan.q[e] >= widowx.q_lower - 1e-12) and np.all(plan.q[e] <= widowx.q_upper + 1e-12)
    assert plan.q.shape == (2, len(POSES), widowx.n_dofs)


def test_cube_wider_than_the_opening_is_ungraspable_and_far_one_unreachable(widowx):
    plan = _rank(widowx, [[0.3, 0.0, 0.025]], np.zeros(1), [[0.3, 0.1, 0.025]], opening=0.04)
    assert not plan.ok[0] and plan.reason == ["ungraspable"]
    plan = _rank(widowx, [[0.9, 0.0, 0.025]], np.zeros(1), [[0.3, 0.1, 0.025]])
    assert not plan.ok[0] and plan.reason == ["unreachable"] and plan.n_reachable[0] == 0


def test_unreachable_place_makes_the_pick_unreachable(widowx):
    plan = _rank(widowx, [[0.3, 0.0, 0.025]], np.zeros(1), [[0.95, 0.0, 0.025]])
    assert plan.reason == ["unreachable"]


@pytest.mark.parametrize("n_envs", [1, 5])
def test_ranking_batches_equal_single_environment_calls(widowx, n_envs):
    rng = np.random.default_rng(3)
    obj = np.c_[rng.uniform(0.25, 0.4, n_envs), rng.uniform(-0.1, 0.1, n_envs), np.full(n_envs, 0.025)]
    yaw = rng.uniform(-1.5, 1.5, n_envs)
    place = obj + [0.0, 0.1, 0.0]
    batch = _rank(widowx, obj, yaw, place)
    for e in range(n_envs):
        one = _rank(widowx, obj[e:e + 1], yaw[e:e + 1], place[e:e + 1])
        assert one.yaw_offset[0] == batch.yaw_offset[e] and np.allclose(one.q[0], batch.q[e])


def _rank_with(widowx, world, obj, place, min_distance=0.0):
    from app.collision import collision_model
    quat = yaw_quat(np.zeros(len(obj)))
    return rank_grasps(widowx, "ee_gripper_link", BaseFrame(np.eye(3), np.zeros(3)), CUBE, np.asarray(obj, float),
                       quat, np.asarray(place, float), np.tile(Q0, (len(obj), 1)), 0.09, "x", "y", np.arange(6),
                       collision=collision_model(widowx, world, self_pairs=()), min_distance=min_distance)


def test_grasps_whose_solutions_hit_a_box_are_rejected(widowx):
    from app.collision import World, WorldBox
    obj, place = [[0.3, -0.1, 0.025]], [[0.3, 0.12, 0.025]]
    free = _rank(widowx, obj, np.zeros(1), place)
    assert free.ok.all()
    # a wall standing where the chosen grasp's forearm passes: that candidate is rejected, another chosen
    p_fk, _ = widowx.forward_kinematics(free.q[0, 1][None], ["link_4"])
    wall = World(boxes=(WorldBox("wall", (0.01, 0.01, 0.01), tuple(p_fk[0, 0])),))
    blocked = _rank_with(widowx, wall, obj, place)
    assert blocked.ok.all() and blocked.n_reachable[0] < free.n_reachable[0]
    model = _collision(widowx, wall)
    assert model.clear(blocked.q[0], 0.0).all() and not model.clear(free.q[0], 0.0).all()


def test_grasps_all_inside_a_box_fail_as_collision_not_unreachable(widowx):
    from app.collision import World, WorldBox
    obj, place = [[0.3, -0.1, 0.025]], [[0.3, 0.12, 0.025]]
    box = World(boxes=(WorldBox("crate", (0.06, 0.06, 0.06), (0.3, -0.1, 0.05)),))
    plan = _rank_with(widowx, box, obj, place)
    assert not plan.ok.any() and plan.reason == ["collision"] and plan.n_reachable[0] == 0


def _collision(widowx, world):
    from app.collision import collision_model
    return collision_model(widowx, world, self_pairs=())
