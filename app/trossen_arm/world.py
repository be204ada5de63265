"""The one simulated world of a process: a PyBullet scene, the arms configured so far, the clock.

Every driver of the process shares it, so two drivers (``move_two.py``) move two arms of one scene, one
physics. Arms are added as their IP addresses are first configured (app.trossen_arm.layout places them) and
stay: a later driver on the same IP finds the arm, its pose and its error state as the last one left them.

``sync()`` (every driver call) steps the physics up to the clock's time; ``run_for(T)`` (a blocking goal)
steps T more and waits for the wall clock as the scale says. ``advance(seconds)`` and ``simulated_time()``
are this package's own (no driver has them): a test or a script can let time pass without a command.
"""

from __future__ import annotations

import atexit
import logging
import threading
from dataclasses import dataclass

import numpy as np

from app.errors import AppError, InputError
from app.ik.robot_model import RobotModel
from app.kinematics.rotations import quat_to_matrix
from app.runtime.outputs import OutputSet
from app.sim.joint_motors import JointMotors
from app.sim.robot import Robot
from app.sim.scene import display_available
from app.trossen_arm.arm_bodies import add_arm, arms_scene
from app.trossen_arm.clock import SimClock, scale_from_env
from app.trossen_arm.joint_space import JointMap
from app.trossen_arm.layout import ArmPlace, layout_from_env, place_of
from app.trossen_arm.live_view import LiveView
from app.trossen_arm.recorder import Goal, Recorder
from app.trossen_arm.seeing import GUI_ENV, OUTPUTS_ENV, Seeing, write_outputs
from app.trossen_arm.simulated_arm import SimulatedArm
from app.trossen_arm.standard import default_joint_limits

log = logging.getLogger(__name__)

PHYSICS_DT = 0.001  # [s]: the arm controller's 1 kHz cycle
POSITION_KP = 16.0  # [1/s]: the position loop's gain (Trossen's default position-mode kp), PyBullet's kp / dt
SLEEP_POSE = np.zeros(7)  # where a WidowX AI rests when powered on: every joint at 0, the gripper closed


@dataclass
class ArmSlot:
    """One arm of the world: where it stands, its robot and model, its controller, who drives it."""

    place: ArmPlace
    robot: Robot
    model: RobotModel
    joints: JointMap
    controller: SimulatedArm
    number: int = 0  # the last number of its IP address

    @property
    def base_T(self) -> np.ndarray:
        """The arm's base frame in the world (4x4)."""
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = quat_to_matrix(np.array(self.place.base_quat)), self.place.base_pos
        return T

    owner: object = None  # the configured driver holding it (one at a time, as a controller takes one)


class SimWorld:
    """The scene, its arms and its clock.

    Args:
        scale: Simulated seconds per wall-clock second (app.trossen_arm.clock); None: from the environment.
        gui: A copy of the arms in PyBullet's window (app.trossen_arm.live_view; needs a display); None: as
            APP_TROSSEN_GUI says. APP_TROSSEN_OUTPUTS names a folder for a video and a report
            (app.trossen_arm.seeing).
    """

    def __init__(self, scale: float | None = None, gui: bool | None = None):
        seeing = Seeing.from_env()
        gui = seeing.gui if gui is None else gui
        if gui and not display_available():
            raise InputError(f"{GUI_ENV}=1 opens PyBullet's window, which needs a display: DISPLAY is not set (use "
                             "xvfb-run, or leave the variable out)")
        try:  # checked before any work; configure raises it as the driver's RuntimeError
            self.outputs = None if seeing.outputs is None else \
                OutputSet(seeing.outputs, f"{OUTPUTS_ENV}={seeing.outputs}")
        except AppError as exc:
            raise InputError(str(exc)) from None
        self.layout = layout_from_env()
        self.scene = arms_scene(self.layout.boxes, False, PHYSICS_DT)
        self.clock = SimClock(scale_from_env() if scale is None else scale)
        self.arms: dict[str, ArmSlot] = {}
        self.lock = threading.RLock()
        self._due = 0.0  # [s]: the simulated time waits have asked for (may lie up to half a step ahead)
        self.recorder = Recorder() if self.outputs is not None or gui else None
        self.live = LiveView(tuple(self.layout.boxes)) if gui else None
        if self.outputs is not None:
            atexit.register(self.write_outputs)

    @property
    def t(self) -> float:
        """Simulated time [s] since the world began."""
        return self.scene.t

    def arm(self, ip: str) -> ArmSlot:
        """The arm the address names, loaded into the scene on first use (at the sleep pose, idle)."""
        place = place_of(ip, self.layout)
        slot = self.arms.get(place.name)
        if slot is None:
            slot = self.arms[place.name] = self._load(place)
            slot.number = int(str(ip).split(".")[3])
            log.info("simulated %s (%s) at %s", place.name, ip, place.base_pos)
        return slot

    def _load(self, place: ArmPlace) -> ArmSlot:
        robot = add_arm(self.scene, place)
        joints = JointMap.of(robot.model)
        robot.set_qpos(joints.dofs_of(SLEEP_POSE))
        controller = SimulatedArm(JointMotors(robot, position_gain=POSITION_KP * PHYSICS_DT), joints, default_joint_limits(), PHYSICS_DT)
        return ArmSlot(place, robot, robot.model, joints, controller)

    def sync(self) -> None:
        """Step the physics up to the clock's time (each driver call begins here)."""
        with self.lock:
            self.step_to(self.clock.target())
            self.clock.drop_lag(self.t)

    def run_for(self, seconds: float) -> None:
        """Step ``seconds`` [s] more, then wait for the wall clock (a blocking goal). What is shorter than a
        step is owed, not lost: many short waits add up to the steps they make."""
        with self.lock:
            self._due = max(self._due, self.t) + max(0.0, seconds)
            self.step_to(self._due)
            self.clock.wait_until(self._due)

    def step_to(self, t: float) -> None:
        """Physics steps until the simulated time reaches t [s] (to within half a step)."""
        arms = [slot.controller for slot in self.arms.values()]
        while self.t + 0.5 * PHYSICS_DT < t:
            for arm in arms:
                arm.before_step(self.t)
            self.scene.step()
            for arm in arms:
                arm.after_step()
            if self.recorder is not None and self.recorder.step(self.t, self.arms) and self.live is not None:
                self.live.update(self.recorder, self.arms)

    def note(self, slot: ArmSlot, kind: str, goal: Goal, tool) -> None:
        """A driver's command of ``kind`` to the arm of ``slot`` now, aiming at ``goal`` (its pose in the arm's
        base frame) with the driver's ToolKinematics ``tool``, for the recorder's video, report and window."""
        if self.recorder is not None:
            self.recorder.command(slot.place.name, kind, self.t, goal, slot.base_T, tool)

    def write_outputs(self) -> None:
        """The video and the report (at process exit, where APP_TROSSEN_OUTPUTS asked for them), once."""
        outputs, self.outputs = self.outputs, None
        if outputs is not None and self.scene.client is not None:
            write_outputs(outputs, self.recorder, self)

    def close(self) -> None:
        self.write_outputs()
        if self.live is not None:
            self.live.close()
        self.scene.close()


_WORLD: SimWorld | None = None


def world() -> SimWorld:
    """The process's world, made on first use (and again after a world was closed)."""
    global _WORLD
    if _WORLD is None or _WORLD.scene.client is None:
        _WORLD = SimWorld()
    return _WORLD


def reset_world(scale: float | None = None) -> SimWorld:
    """A new world (the old one closed): every arm back at its sleep pose, time 0. ``scale``: its clock's
    (None: APP_TROSSEN_TIME_SCALE). Drivers configured on the old world must configure again."""
    global _WORLD
    if _WORLD is not None:
        _WORLD.close()
    _WORLD = SimWorld(scale)
    return _WORLD


def advance(seconds: float) -> None:
    """Let ``seconds`` [s] of simulated time pass (non-blocking goals go on), as a script's own wait would."""
    world().run_for(seconds)


def loaded_arms() -> list[tuple[int, ArmSlot]]:
    """(IP's last number, arm) of every arm loaded so far (none before the world exists)."""
    return [] if _WORLD is None else [(slot.number, slot) for slot in _WORLD.arms.values()]


def simulated_time() -> float:
    """The world's simulated time [s]."""
    return world().t
