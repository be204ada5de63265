"""How an environment's vectors map to the robot: ``agent_pos`` and joint actions in the layout ``app.record``
writes (per arm six joints [rad] and the gripper's finger position [m]: Trossen's ``main_joint_0..6`` or
``left_/right_joint_0..6``), so a policy trained on our datasets reads and commands the same numbers; a robot
without a Trossen layout (no gripper) uses its own DOFs in order. End-effector poses per arm in the environment
frame."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.config.schema import RunConfig
from app.dataset.joint_names import GRIPPER_SLOT, JOINTS_PER_ARM
from app.dataset.robot_map import DofMap, robot_layout, values_from_dofs
from app.episode.run_report import task_links
from app.errors import DatasetError
from app.kinematics.rotations import matrix_to_quat


@dataclass(frozen=True)
class StateLayout:
    """names: one per value; dof_map: which robot DOF each value drives (None: the DOFs themselves); arms: the
    layout's arm names; grippers / gripper_keys: each arm's Gripper and its key in ``robot.grippers`` (empty
    without grippers); ee_links: each arm's end-effector link; target_order: for each controller target (the
    run's task links), the layout arm it belongs to."""

    names: tuple[str, ...]
    dof_map: DofMap | None
    arms: tuple[str, ...]
    grippers: tuple
    gripper_keys: tuple[str, ...]
    ee_links: tuple[str, ...]
    target_order: np.ndarray
    robot: object

    @classmethod
    def of(cls, robot, run: RunConfig) -> StateLayout:
        links = task_links(run)
        try:
            names, dof_map = robot_layout(list(robot.model.dof_names))
        except DatasetError:
            return cls(tuple(robot.model.dof_names), None, ("robot",), (), (), (links[0],), np.zeros(len(links), int),
                       robot)
        arms = tuple(dict.fromkeys(n.split("_joint_")[0] for n in names))
        if len(arms) == 1:
            keys, ee = tuple(robot.grippers)[:1], (links[0],)
        else:
            rig = run.scene_config.robot.arms or {}
            keys, ee = arms, tuple(rig[a] for a in arms)
        order = np.array([ee.index(link) if link in ee else 0 for link in links])
        return cls(tuple(names), dof_map, arms, tuple(robot.grippers[k] for k in keys), keys, ee, order, robot)

    @property
    def n_values(self) -> int:
        return len(self.names)

    def agent_pos(self, q: np.ndarray) -> np.ndarray:
        """The state vector (n_envs, n_values) of joints q (n_envs, n_dofs)."""
        return np.array(q, dtype=float) if self.dof_map is None else values_from_dofs(q, self.dof_map, self.n_values)

    def joint_goals(self, values: np.ndarray, q_now: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A joint action (n_envs, n_values) as (q_goal (n_envs, n_dofs): the arm DOFs it names, the others where
        they are; closing (n_envs, n_arms) of each gripper, from its finger position)."""
        if self.dof_map is None:
            return np.array(values, dtype=float), np.zeros((len(values), 0))
        q_goal = np.array(q_now, dtype=float)
        arm = self.dof_map.columns % JOINTS_PER_ARM != GRIPPER_SLOT
        if not self.grippers:  # no gripper to command: the slot is the finger DOFs' goal, as any joint's
            arm[:] = True
        q_goal[:, self.dof_map.dofs[arm]] = values[:, self.dof_map.columns[arm]]
        if not self.grippers:
            return q_goal, np.zeros((len(values), 0))
        finger = values[:, [a * JOINTS_PER_ARM + GRIPPER_SLOT for a in range(len(self.arms))]]
        return q_goal, self.closing_of(finger)

    def closing_of(self, finger: np.ndarray) -> np.ndarray:
        """Closing fractions (n, n_arms) in [0, 1] of finger positions (n, n_arms) [m]."""
        finger = np.asarray(finger, dtype=float)
        out = np.zeros_like(finger)
        for a, g in enumerate(self.grippers):
            out[:, a] = g.closing_of(finger[:, a:a + 1])
        return np.clip(out, 0.0, 1.0)

    def finger_of(self, closing: np.ndarray) -> np.ndarray:
        """Finger positions (n, n_arms) [m] of closing fractions (n, n_arms)."""
        closing = np.asarray(closing, dtype=float)
        return np.stack([g.finger_of(closing[:, a]) for a, g in enumerate(self.grippers)], axis=1) \
            if self.grippers else closing

    def finger_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Each arm's finger position range (n_arms,) [m]: (low, high)."""
        ends = np.array([[np.mean(g.open), np.mean(g.closed)] for g in self.grippers]).reshape(-1, 2)
        return ends.min(axis=1), ends.max(axis=1)

    def ee_poses(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each arm's end effector at joints q (n_envs, n_dofs): pos (n_envs, n_arms, 3) [m], quat (n_envs,
        n_arms, 4) wxyz, environment frames."""
        m = self.robot.model
        R, p = m.link_frames(q)
        R_b, p_b = self.robot.base_frames()
        idx = [m.link_index(link) for link in self.ee_links]
        rot = R_b @ R[:, idx]
        return p[:, idx] @ R_b.T + p_b, matrix_to_quat(rot.reshape(-1, 3, 3)).reshape(len(q), len(idx), 4)
