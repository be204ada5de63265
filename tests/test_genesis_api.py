"""Genesis's names, shapes and meaning on the scene robot, each keyword with the values Genesis's docs
use, checked against PyBullet's FK of the bodies in their own environment's frame."""

import numpy as np
import pybullet as pb
import pytest

from app import InputError, UnknownNameError
from app.kinematics.rotations import quat_to_matrix, xyzw_to_wxyz
from app.sim.scene import Scene
from tests.conftest import WIDOWX_URDF, random_configs

EE = "ee_gripper_link"
N_ENVS = 4
DOWN = [0.0, 1.0, 0.0, 0.0]


@pytest.fixture()
def scene4():
    scene = Scene()
    robot = scene.add_robot(str(WIDOWX_URDF), base_pos=[0.05, -0.1, 0.02], base_quat=[np.cos(0.3), 0, 0, np.sin(0.3)])
    scene.build(n_envs=N_ENVS, env_spacing=(1.2, 0.9))
    yield scene, robot
    scene.close()


def _pb_frame(robot, env, link, q=None):
    """PyBullet's frame of ``link`` in environment ``env`` (at q if given), in that environment's frame."""
    body = robot.bodies[env]
    if q is not None:
        for joint, value in zip(robot.model.dof_names, q):
            pb.resetJointState(body.body_id, body.joint_index[joint], float(value), physicsClientId=robot.client)
    s = pb.getLinkState(body.body_id, body.link_index[link], computeForwardKinematics=True, physicsClientId=robot.client)
    return np.array(s[4]) - robot.env_origins[env], quat_to_matrix(xyzw_to_wxyz(np.array(s[5])))


def _targets(robot, n, seed, link=EE):
    q = random_configs(robot.model, n, seed=seed)
    pos, quat = robot.forward_kinematics(q, links_idx_local=[robot.get_link(link).idx_local], envs_idx=range(n))
    return pos[:, 0], quat[:, 0]


def test_genesis_default_options_reach_targets_checked_by_pybullet(scene4):
    _, robot = scene4
    pos, quat = _targets(robot, N_ENVS, seed=1)
    q, err = robot.inverse_kinematics(robot.get_link(EE), pos=pos, quat=quat, init_qpos=None, respect_joint_limit=True,
                                      max_samples=50, max_solver_iters=20, damping=0.01, pos_tol=5e-4, rot_tol=5e-3,
                                      pos_mask=[True, True, True], rot_mask=[True, True, True], max_step_size=0.5,
                                      dofs_idx_local=None, return_error=True, envs_idx=None)
    assert q.shape == (N_ENVS, robot.n_dofs) and err.shape == (N_ENVS, 6)
    for env in range(N_ENVS):
        p, R = _pb_frame(robot, env, EE, q[env])
        np.testing.assert_allclose(p, pos[env], atol=5e-4)
        np.testing.assert_allclose(R, quat_to_matrix(quat[env]), atol=5e-3)
        assert np.linalg.norm(err[env, :3]) <= 5e-4 and np.linalg.norm(err[env, 3:]) <= 5e-3


def test_max_samples_counts_every_attempt_and_max_solver_iters_each_one(scene4):
    _, robot = scene4
    unreachable = np.tile([1.5, 0.0, 0.3], (N_ENVS, 1))
    info = robot.inverse_kinematics(EE, unreachable, None, max_samples=3, max_solver_iters=7, return_info=True)
    assert not info.converged.any()
    assert np.all(info.restarts <= 2)  # three attempts: the first and two more
    assert np.all(info.iters <= 3 * 7)
    with pytest.raises(InputError, match="max_samples or max_restarts|give max_samples"):
        robot.inverse_kinematics(EE, unreachable, None, max_samples=3, max_restarts=2)
    with pytest.raises(InputError, match="max_samples must be an integer >= 1"):
        robot.inverse_kinematics(EE, unreachable, None, max_samples=0)


def test_envs_idx_solves_only_those_environments(scene4):
    _, robot = scene4
    before = robot.get_qpos()
    pos, quat = _targets(robot, 2, seed=2)
    q = robot.inverse_kinematics(EE, pos, quat, envs_idx=[1, 3])
    assert q.shape == (2, robot.n_dofs)
    np.testing.assert_array_equal(robot.get_qpos(), before)  # IK moves nothing
    robot.set_qpos(q, envs_idx=[1, 3])
    after = robot.get_qpos()
    np.testing.assert_array_equal(after[[0, 2]], before[[0, 2]])
    for row, env in enumerate((1, 3)):
        np.testing.assert_allclose(_pb_frame(robot, env, EE)[0], pos[row], atol=1e-4)
    with pytest.raises(InputError, match=r"pos must have shape \(2, 3\) .*got \(4, 3\)"):
        robot.inverse_kinematics(EE, np.zeros((4, 3)) + 0.3, None, envs_idx=[1, 3])
    with pytest.raises(InputError, match=r"envs_idx \[7\] out of range: valid environments are 0..3"):
        robot.inverse_kinematics(EE, pos, quat, envs_idx=[7])


def test_a_batch_that_does_not_match_n_envs_is_an_input_error_with_both_shapes(scene4):
    _, robot = scene4
    with pytest.raises(InputError, match=r"pos must have shape \(4, 3\) .*got \(2, 3\)"):
        robot.inverse_kinematics(EE, np.full((2, 3), 0.3), None)
    with pytest.raises(InputError, match=r"qpos must have shape \(4, 8\) .* or \(8,\), got \(3, 8\)"):
        robot.set_qpos(np.zeros((3, 8)))
    robot.set_qpos(np.full(8, 0.01))  # one row for every environment, as Genesis broadcasts it
    np.testing.assert_allclose(robot.get_qpos(), 0.01)


def test_dofs_idx_local_holds_the_other_dofs(scene4):
    _, robot = scene4
    init = np.tile(robot.model.mid_config(), (N_ENVS, 1))
    init[:, 6:] = [0.01, 0.03]
    pos, _ = _targets(robot, N_ENVS, seed=3)
    q = robot.inverse_kinematics(EE, pos, None, init_qpos=init, dofs_idx_local=list(range(6)))
    np.testing.assert_array_equal(q[:, 6:], init[:, 6:])
    for env in range(N_ENVS):
        np.testing.assert_allclose(_pb_frame(robot, env, EE, q[env])[0], pos[env], atol=1e-4)


def test_local_point_and_local_points_place_that_point(scene4):
    _, robot = scene4
    point = np.array([0.0, 0.0, 0.03])
    pos, _ = _targets(robot, N_ENVS, seed=4)
    q = robot.inverse_kinematics(EE, pos, None, local_point=point)
    q2 = robot.inverse_kinematics_multilink([robot.get_link(EE)], [pos], [], local_points=[point])
    for env in range(N_ENVS):
        for answer in (q, q2):
            p, R = _pb_frame(robot, env, EE, answer[env])
            np.testing.assert_allclose(p + R @ point, pos[env], atol=1e-4)
    with pytest.raises(InputError, match="local_points is inverse_kinematics_multilink's"):
        robot.inverse_kinematics(EE, pos, None, local_points=[point])


def test_empty_poss_or_quats_leave_that_part_free_and_a_none_entry_frees_one_link(scene4):
    _, robot = scene4
    _, quat = _targets(robot, N_ENVS, seed=5)
    q = robot.inverse_kinematics_multilink([EE], poss=[], quats=[quat])  # orientation only
    for env in range(N_ENVS):
        np.testing.assert_allclose(_pb_frame(robot, env, EE, q[env])[1], quat_to_matrix(quat[env]), atol=2e-3)
    left, _ = _targets(robot, N_ENVS, seed=6, link="left_fingertip")
    _, right_quat = _targets(robot, N_ENVS, seed=6, link="right_fingertip")
    q, err = robot.inverse_kinematics_multilink(["left_fingertip", "right_fingertip"], poss=[left, None],
                                                quats=[None, right_quat], return_error=True)
    assert err.shape == (N_ENVS, 2, 6) and np.all(err[:, 0, 3:] == 0.0) and np.all(err[:, 1, :3] == 0.0)
    for env in range(N_ENVS):
        np.testing.assert_allclose(_pb_frame(robot, env, "left_fingertip", q[env])[0], left[env], atol=1e-4)
        np.testing.assert_allclose(_pb_frame(robot, env, "right_fingertip")[1], quat_to_matrix(right_quat[env]),
                                   atol=2e-3)
    with pytest.raises(InputError, match="link 'right_fingertip': give its position, its quaternion or both"):
        robot.inverse_kinematics_multilink(["left_fingertip", "right_fingertip"], poss=[left, None], quats=[])


def test_rot_mask_aligns_one_axis_or_all_and_refuses_two(scene4):
    _, robot = scene4
    pos, _ = _targets(robot, N_ENVS, seed=7)
    down = np.tile(DOWN, (N_ENVS, 1))
    q = robot.inverse_kinematics(EE, pos, down, rot_mask=[False, False, True])
    for env in range(N_ENVS):
        assert _pb_frame(robot, env, EE, q[env])[1][:, 2] @ [0, 0, -1] > np.cos(1e-3)
    with pytest.raises(InputError, match="align 0 axes, 1 axis or all 3"):
        robot.inverse_kinematics(EE, pos, down, rot_mask=[True, False, True])


def test_respect_joint_limit_false_may_leave_the_window_and_true_never_does(scene4):
    _, robot = scene4
    model = robot.model
    q_out = np.tile(model.mid_config(), (N_ENVS, 1))
    q_out[:, 1] = model.q_upper[1] + 0.4  # shoulder beyond its limit
    pos, quat = (a[:, 0] for a in robot.forward_kinematics(q_out, links_idx_local=[model.link_index(EE)]))
    free = robot.inverse_kinematics(EE, pos, quat, respect_joint_limit=False, init_qpos=q_out - 0.05, return_info=True)
    assert free.converged.all() and np.any(free.q[:, 1] > model.q_upper[1])
    kept = robot.inverse_kinematics(EE, pos, quat, init_qpos=np.clip(q_out, model.q_lower, model.q_upper))
    assert np.all(kept >= model.q_lower) and np.all(kept <= model.q_upper)


def test_forward_kinematics_with_qs_links_and_envs_selected(scene4):
    _, robot = scene4
    q = random_configs(robot.model, N_ENVS, seed=8)
    robot.set_qpos(q)
    ee = robot.get_link(EE)
    pos, quat = robot.forward_kinematics(q[[0, 2], :3], qs_idx_local=[0, 1, 2], links_idx_local=[ee.idx_local],
                                         envs_idx=[0, 2])
    assert pos.shape == (2, 1, 3) and quat.shape == (2, 1, 4)
    for row, env in enumerate((0, 2)):
        p, R = _pb_frame(robot, env, EE)
        np.testing.assert_allclose(pos[row, 0], p, atol=1e-6)
        np.testing.assert_allclose(quat_to_matrix(quat[row, 0]), R, atol=1e-6)
    np.testing.assert_allclose(robot.get_links_pos([ee.idx_local])[:, 0], robot.forward_kinematics(q)[0][:, ee.idx])


def test_set_qpos_with_indices_and_zero_velocity(scene4):
    scene, robot = scene4
    robot.control_dofs_position(np.full((N_ENVS, 1), 1.0), [0])
    scene.step()
    v0 = robot.get_dofs_velocity([0])
    assert np.all(np.abs(v0) > 0)
    robot.set_qpos(np.full((2, 1), 0.5), qs_idx_local=[0], envs_idx=[0, 1], zero_velocity=False)
    np.testing.assert_allclose(robot.get_dofs_position([0], envs_idx=[0, 1]), 0.5)
    np.testing.assert_allclose(robot.get_dofs_velocity([0], envs_idx=[0, 1]), v0[:2])
    robot.set_dofs_position(np.full((N_ENVS, 1), 0.2), dofs_idx_local=[0])
    np.testing.assert_allclose(robot.get_dofs_velocity([0]), 0.0)


def test_control_dofs_position_takes_dof_indices_second_as_genesis_does(scene4):
    scene, robot = scene4
    target = random_configs(robot.model, N_ENVS, seed=9)
    robot.control_dofs_position(target, np.arange(robot.n_dofs))  # the Genesis pattern
    for _ in range(int(2.0 / scene.dt)):
        scene.step()
    np.testing.assert_allclose(robot.get_dofs_position(), target, atol=2e-3)
    with pytest.raises(TypeError):
        robot.control_dofs_position(target, np.arange(robot.n_dofs), None, np.zeros_like(target))  # velocity: keyword


def test_links_and_joints_carry_genesis_indices(scene4):
    _, robot = scene4
    link = robot.get_link("link_3")
    assert link.idx_local == robot.model.link_index("link_3") == link.idx
    joint = robot.get_joint("joint_2")
    assert joint.dof_idx_local == 2 and joint.dofs_idx_local == [2] and joint.qs_idx_local == [2]
    fixed = next(j.name for j in robot.model.spec.joints if j.type == "fixed")
    assert robot.get_joint(fixed).dof_idx_local is None and robot.get_joint(fixed).dofs_idx_local == []
    with pytest.raises(UnknownNameError, match="unknown joint 'joint_9'.*valid joint names"):
        robot.get_joint("joint_9")
    assert robot.n_qs == robot.n_dofs == 8 and robot.n_links == robot.model.n_links


def test_draw_debug_frame_takes_a_4x4_and_draws_it_in_every_environment_frame(scene4):
    scene, _ = scene4
    T = np.eye(4)
    T[:3, 3] = [0.3, 0.1, 0.2]
    frame = scene.draw_debug_frame(T, axis_length=0.2, origin_size=0.02, axis_radius=0.005)
    assert len(frame.markers) == N_ENVS
    for env, marker in enumerate(frame.markers):
        np.testing.assert_allclose(marker.pose()[0], scene.env_origins[env] + [0.3, 0.1, 0.2])
    one = scene.draw_debug_frame([0.1, 0.0, 0.1], quat=DOWN, envs_idx=[2])
    assert len(one.markers) == 1
    frame.set_T(np.tile(np.eye(4), (N_ENVS, 1, 1)))
    scene.visualizer.update()
    np.testing.assert_allclose(frame.pose()[0], np.zeros((N_ENVS, 3)), atol=1e-9)
    scene.clear_debug_object(one)
    assert one not in scene.markers


def test_pos_mask_axes_and_errors_are_the_environment_frame_with_a_rotated_base():
    scene = Scene()
    robot = scene.add_robot(str(WIDOWX_URDF), base_quat=[np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)])  # 90 deg about z
    scene.build(n_envs=2)
    ee = robot.get_link(EE)
    start = robot.get_links_pos([ee.idx_local])[:, 0]
    target = start + [0.05, 0.0, 0.0]
    q, err = robot.inverse_kinematics(ee, target, None, pos_mask=[True, False, False], return_error=True)
    reached = robot.forward_kinematics(q, links_idx_local=[ee.idx_local])[0][:, 0]
    np.testing.assert_allclose(reached[:, 0], target[:, 0], atol=1e-4)  # environment x, not base x
    q2, err2 = robot.inverse_kinematics(ee, start + [0.3, 0.05, 0.02], None, max_samples=1, max_solver_iters=1,
                                        return_error=True)
    now = robot.forward_kinematics(q2, links_idx_local=[ee.idx_local])[0][:, 0]
    np.testing.assert_allclose(err2[:, :3], start + [0.3, 0.05, 0.02] - now, atol=1e-9)  # the error, env frame
    scene.close()


def test_genesis_positional_arguments_are_accepted_in_genesis_order(scene4):
    scene, robot = scene4
    pos, quat = _targets(robot, N_ENVS, seed=12)
    init = robot.get_qpos()
    q = robot.inverse_kinematics(robot.get_link(EE), pos, quat, None, init, True, 50, 20, 0.01, 5e-4, 5e-3)
    for env in range(N_ENVS):
        np.testing.assert_allclose(_pb_frame(robot, env, EE, q[env])[0], pos[env], atol=5e-4)
    T = np.eye(4)
    frame = scene.draw_debug_frame(T, 0.2, 0.02, 0.01)  # (T, axis_length, origin_size, axis_radius)
    assert len(frame.markers) == N_ENVS


def test_arguments_of_the_wrong_type_or_value_are_input_errors(scene4):
    scene, robot = scene4
    pos, _ = _targets(robot, N_ENVS, seed=13)
    bad = [dict(max_solver_iters="a"), dict(max_step_size="a"), dict(damping="a"), dict(pos_tol=np.nan),
           dict(seed=1.5), dict(max_solver_iters=2.5), dict(max_samples=True), dict(pos_mask="abc"),
           dict(pos_mask=[2, 0, 0]), dict(pos_mask=[0.5, 1, 1]), dict(dofs_idx_local=[0.0, 1.0]),
           dict(rot_mask=None), dict(respect_joint_limit="no")]
    robot.inverse_kinematics(EE, pos, None, dofs_idx_local=[0, 1], max_restarts=1)  # valid twins, cached first
    for kwargs in bad:
        with pytest.raises(InputError):
            robot.inverse_kinematics(EE, pos, None, **kwargs)
    with pytest.raises(InputError):
        robot.inverse_kinematics(EE, pos, None, max_restarts=True)  # True must not reuse the solver made for 1
    for kwargs in (dict(axis_length="a"), dict(origin_size="a"), dict(axis_length=-1.0), dict(axis_radius=0.0)):
        with pytest.raises(InputError):
            scene.draw_debug_frame(np.eye(4), **kwargs)
    with pytest.raises(InputError, match="position_gain"):
        robot.control_dofs_position(robot.get_qpos(), position_gain="a")
    with pytest.raises(InputError, match=r"qs_idx_local .* names \[0\] more than once"):
        robot.forward_kinematics(np.zeros((N_ENVS, 8)), qs_idx_local=[0, 0, 1, 2, 3, 4, 5, 6])


def test_zero_velocity_stops_every_dof_as_in_genesis(scene4):
    scene, robot = scene4
    robot.control_dofs_position(np.full((N_ENVS, 2), 1.0), [0, 1])
    scene.step()
    assert np.abs(robot.get_dofs_velocity([1])).min() > 0
    robot.set_qpos(np.zeros((N_ENVS, 1)), qs_idx_local=[0])
    np.testing.assert_array_equal(robot.get_dofs_velocity(), 0.0)


def test_a_debug_frame_drawn_before_build_has_no_pose_until_built():
    from app import AppError

    scene = Scene()
    frame = scene.draw_debug_frame(np.eye(4))
    with pytest.raises(AppError, match="build"):
        frame.pose()
    scene.build(n_envs=2)
    assert frame.pose()[0].shape == (2, 3)
    scene.close()


def test_links_joints_limits_and_scene_reset(scene4):
    scene, robot = scene4
    assert [l.name for l in robot.links] == list(robot.model.link_names)
    assert [j.name for j in robot.joints] == [j.name for j in robot.model.spec.joints]
    lo, hi = robot.get_dofs_limit([1, 2])
    assert lo.shape == (N_ENVS, 2) and np.all(lo == robot.model.q_lower[[1, 2]]) and np.all(hi == robot.model.q_upper[[1, 2]])
    start = robot.get_qpos()
    robot.control_dofs_position(np.zeros(robot.n_dofs))
    for _ in range(20):
        scene.step()
    assert not np.allclose(robot.get_qpos(), start)
    scene.reset()
    np.testing.assert_allclose(robot.get_qpos(), start)
    np.testing.assert_array_equal(robot.get_dofs_velocity(), 0.0)
    assert scene.t == 0.0
