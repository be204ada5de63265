"""Every controller runs against the plain numpy robot (app.control.robot_protocol.IntegratorRobot), no PyBullet:
the controllers speak only the robot protocol."""

import numpy as np

from app.control.controllers import PoseIKController, PoseIKControllerConfig, QPController, QPControllerConfig
from app.control.motions import CircleMotion, FingertipsMotion, StaticMotion, TargetGenerator
from app.control.robot_protocol import IntegratorRobot
from app.ik.tasks import FrameTask
from app.kinematics.rotations import quat_to_matrix

EE = "ee_gripper_link"
DT = 1.0 / 120.0


def _loop(robot, controller, generator, seconds):
    for k in range(int(round(seconds / DT))):
        controller.track(k * DT, generator(k * DT))
        robot.step()


class _CommandLog(IntegratorRobot):
    """The integrator, keeping every commanded (q, qdot): what the controller asked for, before the ideal robot
    clips it to the joint limits."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.commands: list[tuple[np.ndarray, np.ndarray]] = []

    def command(self, q, qdot, position_gain=None):
        self.commands.append((np.array(q, dtype=float), np.array(qdot, dtype=float)))
        super().command(q, qdot, position_gain)


def test_qp_controller_reaches_a_static_target_and_keeps_limits_on_the_integrator(widowx):
    robot = _CommandLog(widowx, n_envs=3)
    task = StaticMotion(center=(0.3, 0.05, 0.2), quat=(0.0, 1.0, 0.0, 0.0), rot_mask=(False, False, True))
    ctrl = QPController(robot, FrameTask(widowx, EE, gain=10.0, rot_mask=task.rot_mask),
                        QPControllerConfig(dt=DT))
    _loop(robot, ctrl, TargetGenerator(task, 3, np.zeros(3), seed=0), 3.0)
    pos = widowx.forward_kinematics(robot.q, [EE])[0][:, 0]
    np.testing.assert_allclose(pos, np.tile(task.center, (3, 1)), atol=1e-3)
    qs, qdots = (np.array(c).reshape(-1, 3, widowx.n_dofs) for c in zip(*robot.commands))
    assert len(qs) == int(round(3.0 / DT))  # every tick's command (unclipped), not only the final state
    assert np.all(qs >= widowx.q_lower) and np.all(qs <= widowx.q_upper)
    assert np.all(np.abs(qdots) <= widowx.v_max + 1e-9)
    assert ctrl.telemetry.arrays()["solver_ok"].all()


def test_pose_ik_controller_tracks_a_circle_on_the_integrator_with_a_rotated_base(widowx):
    R = quat_to_matrix(np.array([np.cos(0.4), 0.0, 0.0, np.sin(0.4)]))
    robot = IntegratorRobot(widowx, n_envs=2, base_R=R, base_p=np.array([0.1, 0.0, 0.0]))
    task = CircleMotion(center=(0.3, 0.0, 0.2), radius=0.05, angular_speed_range=(1.0, 2.0))
    gen = TargetGenerator(task, 2, np.array([0.1, 0.0, 0.0]), seed=1)
    ctrl = PoseIKController(robot, [EE], task.pos_mask, task.rot_mask, PoseIKControllerConfig(dt=DT))
    _loop(robot, ctrl, gen, 1.0)
    ctrl.track(1.0, gen(1.0))  # records the error of the state reached, before it moves on
    tel = ctrl.telemetry.arrays()
    assert tel["solver_ok"].all()  # every IK call converged
    assert tel["pos_err"][-1].max() < 0.01  # one tick behind a moving target on an ideal robot
    # the error is measured in each environment's frame: FK through the base pose
    fk = widowx.forward_kinematics(robot.q, [EE])[0][:, 0] @ R.T + [0.1, 0.0, 0.0]
    np.testing.assert_allclose(np.linalg.norm(fk - gen(1.0).pos[:, 0], axis=1), tel["pos_err"][-1], atol=1e-9)


def test_kinematic_multilink_controller_places_both_fingertips_on_the_integrator(widowx):
    robot = IntegratorRobot(widowx)
    task = FingertipsMotion(center=(0.3, 0.0, 0.15), radius=0.04, angular_speed_range=(1.0, 1.0),
                          quat=(0.7071067811865476, 0.0, 0.7071067811865476, 0.0), rot_mask=(True, False, False))
    ctrl = PoseIKController(robot, list(task.links), task.pos_mask, task.rot_mask,
                            PoseIKControllerConfig(dt=DT, mode="kinematic"))
    _loop(robot, ctrl, TargetGenerator(task, 1, np.zeros(3), seed=0), 0.5)
    assert ctrl.telemetry.arrays()["pos_err"][-1, 0] < 1e-4


def test_a_reset_pose_ik_controller_starts_the_named_environment_again_from_the_measured_state(widowx):
    """With a jerk bound the controller keeps its last IK answers (seeds) and command; after the arm was moved by
    other means (a teleport), reset(envs) makes that environment's next command start from rest, the others go on."""
    robot = _CommandLog(widowx, n_envs=2)
    task = CircleMotion(center=(0.3, 0.0, 0.2), radius=0.05, angular_speed_range=(2.0, 2.0))
    gen = TargetGenerator(task, 2, np.zeros(3), seed=1)
    ctrl = PoseIKController(robot, [EE], task.pos_mask, task.rot_mask, PoseIKControllerConfig(dt=DT, jerk_max=2000.0))
    _loop(robot, ctrl, gen, 0.5)
    moving = np.abs(robot.commands[-1][1]).max(axis=1)
    robot.q[0], robot.v[0] = widowx.mid_config(), 0.0  # env 0 teleported, at rest
    ctrl.reset([0])
    ctrl.track(0.5, gen(0.5))
    step = np.abs(robot.commands[-1][1][0]).max()
    assert moving[0] > 0.1 and step <= 2000.0 * DT * DT * 1.0001  # env 0: one jerk-bounded tick from rest
    assert np.abs(robot.commands[-1][1][1]).max() > 0.05  # env 1 keeps moving


def test_every_controller_answers_reset(widowx):
    robot = IntegratorRobot(widowx, n_envs=2)
    for ctrl in (PoseIKController(robot, [EE], config=PoseIKControllerConfig(dt=DT)),
                 QPController(robot, FrameTask(widowx, EE, gain=10.0), QPControllerConfig(dt=DT))):
        ctrl.reset()
        ctrl.reset([1])
