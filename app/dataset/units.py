"""Unit conventions of recorded joint vectors and their detection.

``si``: joints in [rad], grippers in [m] (the default of this app and of Trossen's kits with the policy in
radians). ``trossen``: what Trossen's recording fork writes otherwise: joints in [deg], grippers in [m] x 10000.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from app.dataset.joint_names import gripper_columns
from app.errors import DatasetError

UNITS = ("si", "trossen")
GRIPPER_SCALE = 10000.0  # trossen gripper value = metres x 10000
# |limit| of the WidowX AI's six joints [rad] (Trossen's URDF), plus a margin for tracking overshoot: a value
# beyond it cannot be radians of a kit's arm
WXAI_JOINT_BOUNDS_RAD = (3.054, 3.142, 2.356, 1.571, 1.571, 3.142)
JOINT_MARGIN_RAD = 0.2
SI_GRIPPER_BOUND_M = 0.1  # the WidowX AI opens 0.044 m per finger; anything above 0.1 is not metres


class UnitsGuess(NamedTuple):
    """The convention a dataset's values are in, and why it was chosen.

    Attributes:
        units: "si" or "trossen".
        reason: One sentence naming the values that decided it.
    """
    units: str
    reason: str


def _scales(n_values: int, to_si: bool) -> np.ndarray:
    """Per-column factor from trossen to si (``to_si``) or back. Shape (n_values,)."""
    scale = np.full(n_values, math.pi / 180.0)
    scale[gripper_columns(n_values)] = 1.0 / GRIPPER_SCALE
    return scale if to_si else 1.0 / scale


def convert(values: np.ndarray, source: str, target: str) -> np.ndarray:
    """``values`` (..., 7 * n_arms) from ``source`` to ``target`` units (``si``/``trossen``), as float64."""
    for units in (source, target):
        if units not in UNITS:
            raise DatasetError(f"unknown units {units!r}; allowed: {list(UNITS)}")
    values = np.asarray(values, dtype=np.float64)
    if source == target:
        return values.copy()
    return values * _scales(values.shape[-1], to_si=target == "si")


def detect_units(values: np.ndarray) -> UnitsGuess:
    """Guess the convention of joint vectors ``values`` (n, 7 * n_arms) from their ranges.

    A gripper above 0.1 or a joint beyond the WidowX AI's limits (+0.2 rad) cannot be SI: ``trossen``;
    otherwise ``si``.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return UnitsGuess("si", "no values to look at; assumed si (rad, m)")
    grippers = gripper_columns(values.shape[-1])
    joints = [c for c in range(values.shape[-1]) if c not in grippers]
    grip_max = float(np.abs(values[..., grippers]).max())
    joint_max = float(np.abs(values[..., joints]).max())
    bounds = np.tile(np.asarray(WXAI_JOINT_BOUNDS_RAD) + JOINT_MARGIN_RAD, len(grippers))
    beyond = np.abs(values[..., joints]).reshape(-1, len(joints)).max(axis=0) - bounds
    if grip_max > SI_GRIPPER_BOUND_M:
        return UnitsGuess("trossen", f"a gripper value reaches {grip_max:.4g}, above the {SI_GRIPPER_BOUND_M} m an "
                                     "SI gripper can hold: assumed trossen (deg, m x 10000)")
    if (beyond > 0).any():
        k = int(np.argmax(beyond))
        return UnitsGuess("trossen", f"joint column {joints[k]} reaches {beyond[k] + bounds[k]:.4g}, beyond the "
                                     f"WidowX AI's {bounds[k]:.3g} rad: assumed trossen (deg, m x 10000)")
    return UnitsGuess("si", f"joints within {joint_max:.3g} and grippers within {grip_max:.3g}, inside the "
                            "WidowX AI's limits in rad and m: assumed si (rad, m)")
