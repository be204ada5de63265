"""Which robot DOF each value of a Trossen-layout dataset drives (names only; the robot's DOF names come in).

Per arm (``main``, ``left``, ``right``) the robot needs one DOF ending in ``joint_0`` (for ``left``/``right``:
with the side in its name, e.g. ``follower_left_joint_0``); its prefix then names the arm's ``joint_0..5``, and
every DOF with that prefix ending in ``carriage_joint`` takes the arm's gripper value (both fingers of the
WidowX AI open alike).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.dataset.joint_names import GRIPPER_SLOT, JOINTS_PER_ARM, arms_of, trossen_names
from app.errors import DatasetError


class DofMap(NamedTuple):
    """``values[:, columns[i]]`` drives robot DOF ``dofs[i]``. Both shape (n_mapped,) int."""
    columns: np.ndarray
    dofs: np.ndarray


def _arm_prefix(arm: str, dof_names: list[str]) -> str:
    bases = [n for n in dof_names if n.endswith("joint_0") and "carriage" not in n and (arm == "main" or arm in n)]
    if len(bases) != 1:
        raise DatasetError(f"the dataset's {arm!r} arm needs exactly one robot DOF ending in 'joint_0'"
                           f"{'' if arm == 'main' else f' with {arm!r} in its name'}; the robot's DOFs are "
                           f"{dof_names}")
    return bases[0][:-len("joint_0")]


def map_to_robot(names: list[str], dof_names: list[str]) -> DofMap:
    """The DOFs of a robot (``dof_names``, its movable joints in order) that a dataset of ``names`` drives.

    Raises:
        DatasetError: names not in a Trossen layout, or a robot without the arms they need (one line saying
            what was expected and what the robot has).
    """
    dof_names = list(dof_names)
    columns, dofs = [], []
    for a, arm in enumerate(arms_of(names)):
        prefix = _arm_prefix(arm, dof_names)
        for i in range(GRIPPER_SLOT):
            joint = f"{prefix}joint_{i}"
            if joint not in dof_names:
                raise DatasetError(f"the dataset's {arm}_joint_{i} needs a robot DOF {joint!r}; the robot's DOFs "
                                   f"are {dof_names}")
            columns.append(a * JOINTS_PER_ARM + i)
            dofs.append(dof_names.index(joint))
        fingers = [k for k, n in enumerate(dof_names) if n.startswith(prefix) and n.endswith("carriage_joint")]
        if len(fingers) > 2:
            raise DatasetError(f"the dataset's {arm} gripper matched {len(fingers)} carriage joints; expected 1 or 2 "
                               f"(the robot's DOFs are {dof_names})")
        if not fingers:
            raise DatasetError(f"the dataset's {arm}_joint_6 (gripper) needs a robot DOF '{prefix}...carriage_joint'"
                               f"; the robot's DOFs are {dof_names}")
        columns += [a * JOINTS_PER_ARM + GRIPPER_SLOT] * len(fingers)
        dofs += fingers
    return DofMap(np.array(columns), np.array(dofs))


def robot_layout(dof_names: list[str]) -> tuple[list[str], DofMap]:
    """The Trossen layout a robot records in (one arm, else two) and its map; DatasetError when neither fits."""
    errors = []
    for n_arms in (1, 2):
        names = trossen_names(n_arms)
        try:
            return names, map_to_robot(names, dof_names)
        except DatasetError as exc:
            errors.append(str(exc))
    raise DatasetError(f"the robot fits neither Trossen layout: {errors[0]}")


def values_from_dofs(q: np.ndarray, dof_map: DofMap, n_values: int) -> np.ndarray:
    """Dataset rows (n, n_values) from robot joints ``q`` (n, n_dofs): each value the mean of the DOFs it
    drives (a gripper: its fingers)."""
    out = np.zeros((len(q), n_values))
    count = np.bincount(dof_map.columns, minlength=n_values)
    np.add.at(out.T, dof_map.columns, q[:, dof_map.dofs].T)
    return out / np.maximum(count, 1)
