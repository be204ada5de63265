"""No silent drop: the controllers track every link a motion gives (on the numpy integrator robot)."""

import itertools
from pathlib import Path

import numpy as np

from app.config.loader import load_run_config
from app.config.robots import robot_model
from app.control.controllers import CONTROLLER_TYPES, QPController, QPControllerConfig
from app.control.motions import FingertipsMotion, TargetGenerator, Targets
from app.control.robot_protocol import IntegratorRobot
from app.episode.run_report import task_links
from app.errors import ConfigError
from app.ik.robot_model import RobotModel
from app.tasks import TASK_TYPES as MOTION_TYPES

CONFIGS = sorted((Path(__file__).resolve().parents[1] / "configs").glob("*.yaml"))
DT = 1.0 / 60.0


def _link_errors(model, q, links, targets, pos_mask):
    """Position error [m] of each link against its target on the masked axes. Shape (n_envs, n_links)."""
    pos = model.forward_kinematics(q, list(links))[0]
    return np.linalg.norm((pos - targets.pos) * np.asarray(pos_mask), axis=-1)


def test_qp_controller_with_the_fingertips_motion_tracks_both_fingertips(widowx):
    """Both fingertips reach their own targets (2 cm apart); tracking only the first would leave the other off."""
    task = FingertipsMotion(center=(0.3, 0.0, 0.15), radius=0.0, gap=0.02, gap_amplitude=0.0,
                            quat=(0.7071067811865476, 0.0, 0.7071067811865476, 0.0), rot_mask=(True, False, False))
    robot = IntegratorRobot(widowx, n_envs=2)
    ctrl = QPController.from_config(robot, QPControllerConfig(), task, list(task.links), DT)
    gen = TargetGenerator(task, 2, np.zeros(3), seed=0)
    for k in range(180):
        ctrl.track(k * DT, gen(k * DT))
        robot.step()
    err = _link_errors(widowx, robot.q, task.links, gen(3.0), task.pos_mask)
    assert err.max() < 1e-4, err
    assert ctrl.telemetry.arrays()["pos_err"][-1].max() < 1e-3  # the telemetry's error covers both links


def _accepted_runs():
    """(controller type, motion type, run) for every pairing the loader accepts, one per distinct link set."""
    seen, runs = set(), []
    for path, ctype, mtype in itertools.product(CONFIGS, CONTROLLER_TYPES, MOTION_TYPES):
        base = load_run_config(path)
        sets = {"controller": {"type": ctype}}
        if base.motion.type != mtype:
            sets["task"] = {"type": mtype}
        try:
            run = load_run_config(path, sets)
        except ConfigError:
            continue
        key = (ctype, mtype, tuple(task_links(run)), run.scene)
        if key not in seen:
            seen.add(key)
            runs.append((ctype, mtype, run))
    return runs


def test_every_controller_and_motion_the_loader_accepts_tracks_every_target_link():
    """Each link of the run's task gets its own target (FK of another configuration); after the ticks every link
    is at its target (a controller that tracked fewer links would leave the others where they were)."""
    runs = _accepted_runs()
    pairs = {(c, m) for c, m, _ in runs}
    assert ("qp", "fingertips") in pairs and ("ik", "fingertips") in pairs and len(pairs) >= 6, pairs
    models: dict[str, RobotModel] = {}
    for ctype, mtype, run in runs:
        if run.scene not in models:  # the scene's robot, or the rig of its robots
            models[run.scene] = RobotModel(robot_model(run.scene_config).spec)
        model, links = models[run.scene], task_links(run)
        assert links, (ctype, mtype, "the loader accepted a task that moves no link")
        robot = IntegratorRobot(model)
        ctrl = run.controller.controller_cls.from_config(robot, run.controller, run.motion, links, DT)
        q_goal = model.clip(model.mid_config() + np.linspace(-0.15, 0.15, model.n_dofs))
        pos, quat = model.forward_kinematics(q_goal[None], links)
        targets = Targets(pos, quat, np.zeros_like(pos))
        before = _link_errors(model, robot.q, links, targets, run.motion.pos_mask)
        for k in range(150):
            ctrl.track(k * DT, targets)
            robot.step()
        after = _link_errors(model, robot.q, links, targets, run.motion.pos_mask)
        assert before.min() > 1e-2, (ctype, mtype, before)
        assert after.max() < 1e-3, (ctype, mtype, links, after)
