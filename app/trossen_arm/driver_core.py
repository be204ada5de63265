"""The driver's life and plumbing: configure (no connection: the IP picks a simulated arm), cleanup, error
recovery, and what every command shares (the checks, the world's sync, blocking, the error state).

Every public call of a configured driver begins with ``_ready()``: the world steps to the clock's time (so a
non-blocking goal went on while the script computed) and an arm in an error state raises. A blocking goal
steps to its end (``_finish``) and raises there if the arm went into an error on the way.
"""

from __future__ import annotations

import logging

import numpy as np

from app.errors import InputError
from app.trossen_arm.cartesian import ToolKinematics
from app.trossen_arm.containers import doubles
from app.trossen_arm.enums import ERROR_INFORMATION, ErrorState, Mode, Model
from app.trossen_arm.failures import NOT_CONFIGURED, logger_name, logic_error, runtime_error
from app.trossen_arm.joint_space import N_JOINTS
from app.trossen_arm.properties import EndEffector
from app.trossen_arm.recorder import Goal
from app.trossen_arm.standard import copied
from app.trossen_arm.world import ArmSlot, SimWorld, world

DRIVER_VERSION = "1.11.0"  # the trossen_arm release whose interface this is
CONTROLLER_VERSION = "1.11.0-sim"
ORDER = {Mode.position: 2, Mode.velocity: 1, Mode.effort: 0, Mode.external_effort: 0}  # a mode's ramp order
WHAT = {Mode.position: "position", Mode.velocity: "velocity", Mode.effort: "effort",
        Mode.external_effort: "external effort"}
MAX_GOAL_TIME = 3600.0  # [s]: one hour of simulated motion for one goal; a longer one is refused, not run


class DriverCore:
    """State and plumbing shared by the driver's mixins (see app.trossen_arm.driver.TrossenArmDriver)."""

    def __init__(self) -> None:
        self._slot: ArmSlot | None = None
        self._world: SimWorld | None = None
        self._model, self._ip = Model.wxai_v0, ""
        self._logger = "trossen_arm_driver"
        self._end_effector = EndEffector()
        self._tool: ToolKinematics | None = None
        self._ever_configured = False
        self._settings: dict = {}
        self._cache: dict = {}  # what the outputs computed for the arm's latest physics step

    # ------------------------------------------------------------------ life
    def configure(self, model: Model, end_effector: EndEffector, serv_ip: str, clear_error: bool,
                  timeout: float = 20.0) -> None:
        """Configure the driver: take the simulated arm ``serv_ip`` names (no network connection is opened;
        ``timeout`` [s] is accepted and unused). ``clear_error``: clear the arm's error state, else an arm in
        an error state raises. The joints start idle."""
        if self._slot is not None:
            logging.getLogger(self._logger).warning(
                "Trossen Arm driver cannot be configured again as it is already configured")
            return
        if not isinstance(model, Model):
            raise logic_error(f"model must be wxai_v0: 0, vxai_v0_right: 1, or vxai_v0_left: 2, got {model}")
        try:
            w = world()
            slot = w.arm(serv_ip)
        except InputError as exc:
            raise runtime_error(str(exc)) from None
        if slot.owner is not None:
            raise runtime_error(f"Failed to connect to the arm controller's TCP server at {serv_ip}:50001 due to "
                                "another driver owning the simulated controller")
        self._world, self._model, self._ip = w, Model(model), str(serv_ip)
        self._logger = logger_name(self._model.name, self._ip)
        with w.lock:
            w.sync()
            if clear_error:
                slot.controller.clear_error()
            if slot.controller.error_state != ErrorState.none:
                raise self._error_state_error(slot)
            slot.controller.set_modes(np.arange(N_JOINTS), Mode.idle)
        slot.owner, self._slot, self._ever_configured, self._cache = self, slot, True, {}
        self._set_end_effector(end_effector)
        self._warm_up()
        logging.getLogger(self._logger).info("Driver version: 'v%s'; controller firmware version: 'v%s'",
                                             DRIVER_VERSION, CONTROLLER_VERSION)

    def cleanup(self, reboot_controller: bool = False) -> None:
        """Cleanup the driver: the arm's joints go idle (braked) and the arm is free for another driver.
        ``reboot_controller``: also clear the controller's error state, as a reboot would."""
        slot = self._slot
        if slot is None:
            return
        with self._world.lock:
            self._world.sync()
            if reboot_controller:
                slot.controller.clear_error()
            elif slot.controller.error_state == ErrorState.none:
                slot.controller.set_modes(np.arange(N_JOINTS), Mode.idle)
        slot.owner, self._slot = None, None

    def clear_error(self) -> None:
        """Clear the error state: cleanup() then configure(..., clear_error=True) with the last arguments."""
        if not self._ever_configured:
            raise logic_error("Driver must be configured at least once before calling clear_error()")
        ee = copied(self._end_effector)
        self.cleanup()
        self.configure(self._model, ee, self._ip, True)

    def reboot_controller(self) -> None:
        """Reboot the controller and cleanup the driver (cleanup(True))."""
        self.cleanup(True)

    def get_is_configured(self) -> bool:
        """True if the driver is configured (holds a simulated arm)."""
        return self._slot is not None

    def get_num_joints(self) -> int:
        """Number of joints: 7 (six arm joints, the gripper) once configured, 0 before."""
        return N_JOINTS if self._slot is not None else 0

    def get_error_information(self) -> str:
        """The error information of the arm: what its error state means and the controller's latest log."""
        slot = self._require()
        self._world.sync()
        c = slot.controller
        text = ERROR_INFORMATION[c.error_state]
        return text if not c.error_log else f"{text}; {c.error_log}"

    def _warm_up(self) -> None:
        """Run the per-call numerics once (FK, Jacobian, least squares, inverse dynamics), so a script's first
        1 kHz loop iteration is as quick as the others."""
        from app.trossen_arm.cartesian_sources import TwistSource
        from app.trossen_arm.interpolation import Ramp, state_rows
        slot = self._slot
        q = slot.controller.measured.q_dofs
        _, J = self._tool.pose_and_jacobian(q)
        np.linalg.solve(J.T @ J + np.eye(6), slot.controller.external_efforts()[:6])
        for order in (0, 1, 2):  # each interpolation kind once, and a twist's joint velocities
            for duration in (0.0, 0.1, 1.0):
                Ramp(0.0, duration, state_rows(np.zeros(6)), state_rows(np.ones(6)), order).sample(0.05)
        TwistSource(self._tool, Ramp(0.0, 0.0, state_rows(np.zeros(6)), state_rows(np.zeros(6)), 1), q, J).sample(
            0.01, q)

    # ------------------------------------------------------------------ plumbing
    def _require(self) -> ArmSlot:
        if self._slot is None:
            raise logic_error(NOT_CONFIGURED)
        return self._slot

    def _ready(self) -> ArmSlot:
        """The arm, the world stepped to now; raises if not configured or in an error state."""
        slot = self._require()
        self._world.sync()
        if slot.controller.error_state != ErrorState.none:
            raise self._error_state_error(slot)
        slot.controller.refresh(self._world.t)
        return slot

    def _error_state_error(self, slot: ArmSlot):
        c = slot.controller
        return runtime_error(f"{ERROR_INFORMATION[c.error_state]}; Latest log on the arm controller since powered "
                             f"on: {c.error_log}", self._logger)

    def _finish(self, goal_time: float, blocking: bool, kind: str, goal=None) -> None:
        """After a command of ``kind``: a blocking one steps (and waits) until its goal time, then checks the
        error state. ``goal``: the tool's goal pose (4x4, base frame) or a recorder Goal, or a callable giving
        either, for the recorder (called only where one records)."""
        if self._world.recorder is not None:
            aim = goal() if callable(goal) else goal
            self._world.note(self._slot, kind, aim if isinstance(aim, Goal) else Goal(aim), self._tool)
        if blocking:
            slot = self._slot
            self._world.run_for(goal_time)
            if slot.controller.error_state != ErrorState.none:
                raise self._error_state_error(slot)

    def _values(self, values: object, n: int, what: str) -> np.ndarray:
        """A command's values as floats of length n (the driver's size error otherwise), finite."""
        try:
            arr = doubles(values, n, what)
        except (InputError, TypeError, ValueError) as exc:
            raise logic_error(str(exc), self._logger) from None
        if not np.isfinite(arr).all():
            raise logic_error(f"Invalid {what}: expected finite values, got {arr.tolist()}", self._logger)
        return arr

    def _goal_time(self, goal_time: float) -> float:
        t = float(goal_time)
        if not 0.0 <= t <= MAX_GOAL_TIME:  # an infinite goal never finished (blocking) or left every joint NaN
            raise logic_error(f"Invalid goal time: expected non-negative and finite (at most {MAX_GOAL_TIME:g} s "
                              f"in this simulator), got {goal_time}", self._logger)
        return t

    def _joint_index(self, joint_index: int) -> int:
        j = int(joint_index)
        if not 0 <= j < N_JOINTS:
            raise logic_error(f"Invalid joint index: expected in range [0, {N_JOINTS - 1}], got {joint_index}",
                              self._logger)
        return j

    def _check_modes(self, slot: ArmSlot, idx: np.ndarray, mode: Mode) -> None:
        """Each joint of idx must be in ``mode`` (the real driver refuses a command of another mode)."""
        for j in idx:
            have = slot.controller.modes[j]
            if have != mode:
                raise logic_error(f"Requested to set joint {j} {WHAT[mode]} but it is in mode {have.name}",
                                  self._logger)

    def _set_end_effector(self, end_effector: EndEffector) -> None:
        """Keep a copy of the end effector and move the tool frame to its t_flange_tool."""
        self._end_effector, self._cache = copied(end_effector), {}
        slot = self._slot
        if slot is not None:
            tool = np.array(list(self._end_effector.t_flange_tool), dtype=float)
            self._tool = ToolKinematics(slot.model, slot.joints, tool)
