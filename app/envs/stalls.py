"""Why an arm did not reach an end-effector action, step by step: the causes ``app.track`` reports
(app.control.stall_causes: ``unreachable``, ``policy_jump``, ``collision_margin``, ``joint_limit``, ``singular``,
``velocity_bound``, else ``unexplained``), so a stall in an evaluation is never silent. An arm stalls when, at
the end of a step, it is farther than STALL_POS / STALL_ROT from that step's target and either a cause holds or it
came less than PROGRESS of the way towards it during the step: an arm following a policy's waypoints lags them
while it moves (the motors' response, the QP's task gain), which is not a stall while it closes in."""

from __future__ import annotations

import numpy as np

from app.control.stall_causes import CAUSES, UNEXPLAINED, StallDiagnosis, StallLimits
from app.kinematics.base_frame import BaseFrame
from app.kinematics.rotations import quat_to_matrix, so3_log

STALL_POS, STALL_ROT = 0.005, 0.05  # [m], [rad]
PROGRESS = 0.1  # the fraction of the way to a step's target an arm must close during the step


class StepStalls:
    """Diagnoses the arms of a world (app.envs.world.EnvWorld) against the step's end-effector targets."""

    def __init__(self, world):
        self.world = world
        run, m = world.run, world.robot.model
        v_bound = np.array(m.v_max, dtype=float)
        held = np.setdiff1d(np.arange(m.n_dofs), world.robot.arm_dofs)
        v_bound[held] = 0.0
        self.diagnosis = StallDiagnosis(m, list(world.layout.ee_links), run.motion.pos_mask, run.motion.rot_mask,
                                        v_bound, run.controller.accel_max, world.tick_dt,
                                        StallLimits(STALL_POS, STALL_ROT))
        self.base = BaseFrame(*world.robot.base_frames())

    def diagnose(self, q_start: np.ndarray, q: np.ndarray, v: np.ndarray, v_prev: np.ndarray, goal: np.ndarray,
                 prev_goal: np.ndarray) -> list[dict]:
        """Per environment: {"stalled": bool, "stall_cause": the first cause by priority ('' on track), "stall":
        {arm: {cause: detail}}} for the measured joints q, v (v_prev: one tick earlier) (n_envs, n_dofs) against
        this step's targets ``goal`` (n_envs, n_arms, 7: position, quat wxyz, environment frames), from the
        joints ``q_start`` at the step's start; the previous step's ``prev_goal`` gives the target's motion."""
        n, k = goal.shape[:2]
        pos_b, quat_b = self.base.targets_to_base(goal[..., :3].reshape(-1, 3), goal[..., 3:].reshape(-1, 4))
        R_b = quat_to_matrix(quat_b).reshape(n, k, 3, 3)
        pos_b = pos_b.reshape(n, k, 3)
        errors = [self.diagnosis.errors(q[e], pos_b[e], R_b[e]) for e in range(n)]
        behind = [np.flatnonzero(self.diagnosis.behind(err)) for err in errors]
        out = [{"stalled": False, "stall_cause": "", "stall": {}} for _ in range(n)]
        if not any(len(b) for b in behind):  # every arm on track: nothing more to look at
            return out
        twist, rows, lim = self._twist_in(goal, prev_goal), self._rows(n), self.diagnosis.limits
        for e in (e for e in range(n) if len(behind[e])):
            before = self.diagnosis.errors(q_start[e], pos_b[e], R_b[e])
            stuck = ((errors[e].pos_err > lim.pos_tol) & (errors[e].pos_err > (1 - PROGRESS) * before.pos_err)) | (
                (errors[e].rot_err > lim.rot_tol) & (errors[e].rot_err > (1 - PROGRESS) * before.rot_err))
            found = {}
            for j in behind[e]:
                causes = self.diagnosis.causes(int(j), q[e], v[e], v_prev[e], pos_b[e, j], R_b[e, j], twist[e, j],
                                               rows[e])
                if causes or stuck[j]:
                    found[self.world.layout.arms[j]] = causes or {UNEXPLAINED: {}}
            first = next((c for c in (*CAUSES, UNEXPLAINED) for a in found.values() if c in a), "")
            out[e] = {"stalled": bool(found), "stall_cause": first, "stall": found}
        return out

    def _twist_in(self, goal: np.ndarray, prev_goal: np.ndarray) -> np.ndarray:
        """The targets' motion into this step (n_envs, n_arms, 6) [m/s, rad/s], base frame."""
        n, k = goal.shape[:2]
        dt = self.world.dt
        lin = (goal[..., :3] - prev_goal[..., :3]).reshape(-1, 3) / dt
        R1, R0 = quat_to_matrix(goal[..., 3:].reshape(-1, 4)), quat_to_matrix(prev_goal[..., 3:].reshape(-1, 4))
        ang = np.array([so3_log(a @ b.T) for a, b in zip(R1, R0)]).reshape(-1, 3) / dt
        return self.base.twists_to_base(np.concatenate([lin, ang], axis=1)).reshape(n, k, 6)

    def _rows(self, n: int) -> list[list[str]]:
        """Per environment the controller's collision rows at their bound on its last tick."""
        names = self.world.controller.telemetry.active_names
        last = names[-1] if names else [[] for _ in range(n)]
        return [list(rows) for rows in last]
