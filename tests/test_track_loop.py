"""app.control.trajectory_loop converts a trajectory's targets before its loop and diagnoses after it: the commands,
telemetry and stretches must be exactly those of ticking the controllers' own ``track``/``step`` with each tick's
targets and diagnosing inline, also for a base that is turned and moved (where numpy's products of a whole
trajectory and of one tick round differently)."""

import numpy as np
import pytest

from app.control.ik_controller import PoseIKController, PoseIKControllerConfig
from app.control.motions import Targets
from app.control.qp_controller import QPController, QPControllerConfig
from app.control.robot_protocol import IntegratorRobot
from app.control.stall_causes import StallDiagnosis
from app.control.stall_stretches import StretchLog
from app.control.trajectory_loop import _diagnose, _to_base, track
from app.control.trajectory_targets import sample_ticks
from app.ik.tasks import FrameTask
from app.kinematics.base_frame import BaseFrame
from app.kinematics.rotations import quat_multiply

EE, RATE, DT = "ee_gripper_link", 250.0, 1.0 / 250.0
YAW = 0.7  # [rad] the base turned about z, and moved
BASE_R = np.array([[np.cos(YAW), -np.sin(YAW), 0.0], [np.sin(YAW), np.cos(YAW), 0.0], [0.0, 0.0, 1.0]])
BASE_P = np.array([0.11, -0.07, 0.03])
DOWN = np.array([np.sqrt(0.5), 0.0, np.sqrt(0.5), 0.0])


def _targets():
    """1.2 s of waypoints at 30 Hz in the environment frame: a circle pointing down, turning about the approach
    axis, with a 6 cm jump at 0.6 s (a stretch behind, diagnosed)."""
    t = np.arange(0.0, 1.2, 1.0 / 30)
    local = np.stack([0.3 + 0.03 * np.cos(3 * t), 0.03 * np.sin(3 * t), 0.1 + 0.01 * t], axis=1)
    local[t >= 0.6, 1] += 0.06
    pos = local @ BASE_R.T + BASE_P
    turn = np.stack([np.cos(0.4 * t), np.sin(0.4 * t), np.zeros_like(t), np.zeros_like(t)], axis=1)
    quat = quat_multiply(np.array([np.cos(YAW / 2), 0.0, 0.0, np.sin(YAW / 2)]), quat_multiply(DOWN, turn))
    return sample_ticks(t, pos[:, None], quat[:, None], RATE)


def _controller(kind, robot):
    if kind == "ik":
        return PoseIKController(robot, [EE], config=PoseIKControllerConfig(dt=DT))
    return QPController(robot, FrameTask(robot.model, EE), QPControllerConfig(dt=DT))


def _by_hand(kind, widowx, targets, diagnosis, q0):
    """Tick by tick as before: the controller's own conversion of each tick's targets, the diagnosis inline."""
    robot = IntegratorRobot(widowx, 1, q0, BASE_R, BASE_P)
    controller = _controller(kind, robot)
    base, log, qs = _to_base(BaseFrame(BASE_R, BASE_P), targets), StretchLog(["arm"]), []
    v_prev = robot.read_states()[1][0]
    for k, t in enumerate(targets.t.tolist()):
        if kind == "ik":
            controller.track(t, Targets(targets.pos[k][None], targets.quat[k][None], targets.vel[k][None]))
        else:
            twist = np.concatenate([targets.vel[k], targets.omega[k]], axis=1)
            controller.step(t, targets.pos[k], targets.quat[k], twist)
        q, v = (a[0] for a in robot.read_states())
        qs.append(q)
        tel, lim = controller.telemetry, diagnosis.limits
        if tel.pos_err[-1].max() > 0.5 * lim.pos_tol or tel.rot_err[-1].max() > 0.5 * lim.rot_tol:
            _diagnose(diagnosis, log, ["arm"], tel.active_names[-1], k, t, q, v, v_prev, base)
        else:
            log.on_track("arm")
        v_prev = v
        robot.step()
    return np.array(qs), controller.telemetry.arrays(), log.stretches()


@pytest.mark.parametrize("kind", ["ik", "qp"])
def test_the_loop_commands_and_reports_exactly_what_ticking_the_controller_by_hand_does(widowx, kind):
    """Joints, telemetry and stretches (with causes and details) bitwise equal to the tick-by-tick loop; the jump
    makes at least one stretch, so the diagnosis after the loop is exercised."""
    targets = _targets()
    q0 = widowx.mid_config()
    diagnosis = StallDiagnosis(widowx, [EE], (True,) * 3, (True,) * 3, widowx.v_max, 40.0, DT)
    q_ref, tel_ref, stretches_ref = _by_hand(kind, widowx, targets, diagnosis, q0)
    robot = IntegratorRobot(widowx, 1, q0, BASE_R, BASE_P)
    controller = _controller(kind, robot)
    result = track(robot, controller, diagnosis, ["arm"], targets, robot.step)
    np.testing.assert_array_equal(result.q, q_ref)
    tel = controller.telemetry.arrays()
    for name in tel_ref:
        np.testing.assert_array_equal(tel[name], tel_ref[name], err_msg=name)
    assert stretches_ref and [s.as_dict() for s in result.stretches] == [s.as_dict() for s in stretches_ref]
    assert result.diagnosed_ticks > 0
