"""The QP controller in PyBullet DIRECT: limits, table margin, reaching, posture, stalls, QP failure."""

import logging

import numpy as np

from app.control.controllers import QPController, QPControllerConfig
from app.ik.limits import DistanceRows
from app.ik.tasks import FrameTask
from app.kinematics.rotations import quat_to_matrix
from app.sim.collision import CollisionPairs, min_distance
from app.sim.scene import BoxSpec, Scene
from tests.conftest import WIDOWX_URDF

EE = "ee_gripper_link"
# Measured slack of PyBullet's position motors behind a QP command that stops exactly at a limit:
# the controller never commands past a limit, the physics overshoots by at most this much.
LIMIT_SLACK = 0.005  # [rad] (measured 0.0003 with the braking bound of JointLimits)
VELOCITY_SLACK = 0.01  # fraction of the velocity bound (measured 0.004)
QP_TOLERANCE = 1e-5  # fraction of a bound a QP answer may pass it by: OSQP's eps_abs = eps_rel = 1e-6 (app.ik.qp)
# on scaled rows; measured 1.7e-6 over the 1200 ticks x 3 environments of the test below


def _scene(n_envs=None, table=False):
    scene = Scene()
    robot = scene.add_robot(str(WIDOWX_URDF))
    if table:
        scene.add_box(BoxSpec("table", (0.8, 0.8, 0.04), (0.3, 0.0, -0.0205)))
    scene.build(n_envs=n_envs)
    return scene, robot


def _run(scene, controller, target_pos, target_quat, seconds, commands=None):
    """Measured (q, v) of every tick, shape (n_ticks, n_envs, n_dofs) each; ``commands`` (a list) gets every
    tick's commanded joint velocity."""
    qs, vs = [], []
    for _ in range(int(round(seconds / scene.dt))):
        controller.step(scene.t, target_pos, target_quat)
        if commands is not None:
            commands.append(np.array(controller.last_qdot))
        scene.step()
        q, v = controller.robot.read_states()
        qs.append(q)
        vs.append(v)
    return np.array(qs), np.array(vs)


def test_targets_beyond_limits_never_cross_joint_or_velocity_limits():
    scene, robot = _scene(n_envs=3)
    model = robot.model
    task = FrameTask(model, EE, gain=20.0)
    ctrl = QPController(robot, task, QPControllerConfig(dt=scene.dt))
    far = np.array([[0.0, 0.0, 1.5], [-0.6, 0.0, 0.1], [0.1, 0.9, -0.4]])
    commands = []
    qs, vs = _run(scene, ctrl, far, np.tile([0.0, 1.0, 0.0, 0.0], (3, 1)), 5.0, commands)
    cmd = np.array(commands)  # (n_ticks, 3, n_dofs): every tick's command, not only the last
    assert cmd.shape == vs.shape and len(cmd) == int(round(5.0 / scene.dt))
    assert np.all(qs >= model.q_lower - LIMIT_SLACK) and np.all(qs <= model.q_upper + LIMIT_SLACK)
    assert ctrl.telemetry.arrays()["solver_ok"].all()
    assert np.all(np.abs(cmd) <= model.v_max * (1 + QP_TOLERANCE))
    assert np.all(np.abs(vs) <= model.v_max * (1 + VELOCITY_SLACK))
    assert np.abs(cmd).max(axis=(0, 1)).max() > 0.5 * model.v_max.min()  # it did push hard against the bounds
    scene.close()


def test_table_margin_holds_while_target_is_inside_the_table():
    scene, robot = _scene(table=True)
    task = FrameTask(robot.model, EE, gain=10.0, rot_mask=(False, False, False))
    cfg = QPControllerConfig(dt=scene.dt, d_safe=0.01)
    ctrl = QPController(robot, task, cfg, CollisionPairs(obstacles=("table",)))
    target = np.array([[0.35, 0.05, -0.05]])  # 5 cm inside the table
    dists = []
    for _ in range(int(3.0 / scene.dt)):
        ctrl.step(scene.t, target, None)
        scene.step()
        dists.append(min_distance(robot, scene.box_ids["table"], 0, movable_only=True))
    assert min(dists) >= cfg.d_safe - 1e-3
    assert dists[-1] < cfg.d_safe + 2e-3  # it does press down to the margin
    scene.close()


def test_reachable_static_target_is_reached():
    scene, robot = _scene()
    pos, quat = robot.model.forward_kinematics(np.array([0.4, 1.2, 0.9, -0.3, 0.3, 0.5, 0.02, 0.02]), [EE])
    ctrl = QPController(robot, FrameTask(robot.model, EE, gain=10.0), QPControllerConfig(dt=scene.dt))
    _run(scene, ctrl, pos, quat, 3.0)  # (1, 3) and (1, 4): one environment
    tel = ctrl.telemetry.arrays()
    assert tel["pos_err"][-1, 0] <= 1e-3 and tel["rot_err"][-1, 0] <= 1e-2
    assert not tel["stalled"].any()
    scene.close()


def test_posture_changes_while_end_effector_stays_put():
    scene, robot = _scene()
    model = robot.model
    q0 = np.array([1.0, 1.9, 1.5, -0.9, 0.8, 0.5, 0.02, 0.02])  # far from mid-range
    robot.set_qpos(q0)
    pos, _ = model.forward_kinematics(q0, [EE])
    task = FrameTask(model, EE, gain=10.0, rot_mask=(False, False, False))  # 3-D task: a 5-D nullspace
    ctrl = QPController(robot, task, QPControllerConfig(dt=scene.dt, posture_gain=2.0))
    ee = []
    for _ in range(240):
        ctrl.step(scene.t, pos, None)
        scene.step()
        ee.append(model.forward_kinematics(robot.get_qpos(), [EE])[0][0])
    drift = np.linalg.norm(np.diff(np.array(ee), axis=0), axis=1)
    assert drift.max() < 1e-4
    assert np.linalg.norm(robot.get_qpos() - q0) > 0.05  # the posture moved
    scene.close()


def test_stall_fires_on_unreachable_target_and_not_on_reachable():
    scene, robot = _scene(n_envs=2)
    ctrl = QPController(robot, FrameTask(robot.model, EE, gain=10.0, rot_mask=(False, False, False)),
                        QPControllerConfig(dt=scene.dt, stall_window=120))
    targets = np.array([[1.5, 0.0, 0.3], [0.3, 0.1, 0.25]])  # each environment's own frame
    _run(scene, ctrl, targets, None, 3.0)
    stalled = ctrl.telemetry.arrays()["stalled"]
    assert stalled[-1, 0] and not stalled[:, 1].any()
    scene.close()


def test_qp_failure_commands_safe_stop_and_is_reported(monkeypatch, caplog):
    scene, robot = _scene()
    ctrl = QPController(robot, FrameTask(robot.model, EE), QPControllerConfig(dt=scene.dt), CollisionPairs(()))
    # a row 1 m deep in penetration: leaving the margin at gamma = 0.05 per tick asks joint 0 for ~12 rad/s,
    # beyond its velocity bound, so no answer is certified and OSQP finds the QP infeasible
    deep = DistanceRows.from_gradients(np.array([-1.0]), np.eye(robot.n_dofs)[:1], ["deep"], np.zeros(1, dtype=int))
    monkeypatch.setattr(ctrl, "distance_rows", lambda q, grasp=None: deep)
    q_before = robot.get_qpos()
    sent = {}
    monkeypatch.setattr(robot, "control_dofs_position", lambda q, velocity=None, **kw: sent.update(q=q, qdot=velocity))
    with caplog.at_level(logging.WARNING):
        for _ in range(5):
            ctrl.step(scene.t, np.array([[0.3, 0.0, 0.2]]), None)
    np.testing.assert_array_equal(sent["q"], q_before)
    np.testing.assert_array_equal(sent["qdot"], np.zeros(robot.n_dofs))
    assert caplog.text.count("primal infeasible") == 1  # once per failure episode
    assert not ctrl.telemetry.arrays()["solver_ok"].any()
    scene.close()


def test_track_follows_a_target_generator_with_feed_forward():
    from app.control.motions import CircleMotion, TargetGenerator

    scene, robot = _scene(n_envs=2)
    task = CircleMotion(center=(0.3, 0.0, 0.2), radius=0.05, angular_speed_range=(1.0, 1.0),
                      rot_mask=(False, False, False))
    targets = TargetGenerator(task, robot.n_envs, np.zeros(3), seed=0)
    ctrl = QPController(robot, FrameTask(robot.model, EE, gain=10.0, rot_mask=(False, False, False)),
                        QPControllerConfig(dt=scene.dt))
    for k in range(int(3.0 / scene.dt)):
        ctrl.track(scene.t, targets(scene.t))
        scene.step()
    assert np.all(ctrl.telemetry.arrays()["pos_err"][-240:] < 2e-3)  # the last second: within 2 mm on a moving target
    scene.close()


def test_controller_qp_holds_the_rows_each_task_and_limit_reports():
    """The controller's QP (one compiled builder call) carries the frame task's error and cost, the joint
    limits' box and the collision limit's rows, each as that piece computes it on its own."""
    scene, robot = _scene(n_envs=3, table=True)
    ctrl = QPController(robot, FrameTask(robot.model, EE, gain=7.0), QPControllerConfig(dt=scene.dt),
                        CollisionPairs(obstacles=("table",), max_rows=6))
    rng = np.random.default_rng(5)
    n = robot.n_dofs
    q = robot.model.mid_config() + rng.normal(scale=0.3, size=(3, n))
    q[:, 1:3] += [0.6, 0.5]  # lean towards the table
    q = robot.model.clip(q)  # set_qpos refuses positions outside the joint windows
    robot.set_qpos(q)
    v = rng.normal(scale=0.5, size=q.shape)
    pos, quat = robot.model.forward_kinematics(q + 0.1, [EE])
    rows = ctrl.distance_rows(q)
    assert len(rows) > 0
    qps, err = ctrl.build(q, v, (pos[:, 0], quat_to_matrix(quat[:, 0]), None), rows)

    task = FrameTask(robot.model, EE, gain=7.0)
    task.set_target(pos[:, 0], quat[:, 0])
    err_ref, J = task.compute_error_and_jacobian(q)
    np.testing.assert_allclose(err, err_ref, atol=1e-12)
    box = ctrl.joint_limits.compute_qp_inequalities(q, scene.dt, v)
    np.testing.assert_array_equal(qps.A[:, :n], np.tile(np.eye(n), (3, 1, 1)))
    np.testing.assert_allclose(qps.l[:, :n], box.lo, atol=1e-12)
    np.testing.assert_allclose(qps.u[:, :n], box.hi, atol=1e-12)
    ineq = ctrl.collision_limit.with_rows(rows).compute_qp_inequalities(scene.dt)
    for e in range(3):
        mine = np.flatnonzero(rows.env == e)[:6]
        np.testing.assert_allclose(qps.A[e, n:n + len(mine)], ineq.G[mine], atol=1e-12)
        np.testing.assert_allclose(qps.l[e, n:n + len(mine)], ineq.lo[mine], atol=1e-12)
    w = task.row_weights()
    for e in range(3):  # the cost's task part: 1/2 |W (J x - a gain err)|^2, plus the small posture and damping terms
        x = rng.normal(size=n)
        a = qps.scale[e]
        Jw, Vw = J[e] * w[:, None], 7.0 * err_ref[e] * w
        task_cost = 0.5 * np.sum((Jw @ x - a * Vw) ** 2) - 0.5 * np.sum((a * Vw) ** 2)
        qp_cost = 0.5 * x @ qps.P[e] @ x + qps.c[e] @ x
        assert abs(qp_cost - task_cost) < 1e-2 * (1 + abs(task_cost))  # eps = 1e-3 posture, 1e-9 damping
    scene.close()

def test_bad_targets_are_refused_before_anything_is_commanded():
    import pytest

    from app import InputError

    scene, robot = _scene(n_envs=2)
    ctrl = QPController(robot, FrameTask(robot.model, EE), QPControllerConfig(dt=scene.dt))
    good = np.array([[0.3, 0.0, 0.2], [0.3, 0.0, 0.2]])
    with pytest.raises(InputError, match="one row per environment"):
        ctrl.step(0.0, good[:1], None)
    with pytest.raises(InputError, match="zero quaternion"):
        ctrl.step(0.0, good, np.zeros((2, 4)))
    with pytest.raises(InputError, match="NaN"):
        ctrl.step(0.0, good + [0.0, np.nan, 0.0], None)
    assert ctrl.telemetry.t == []
    scene.close()
