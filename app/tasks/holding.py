"""What a manipulation motion (pick_place, handover) judges of a held object and of an arm's goal each tick: where
the object sits in the hand, whether it slipped or dropped, whether the end effector reached its segment's goal."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.control.observation import Observation
from app.control.segments import Segments
from app.kinematics.rotations import so3_log

DROP_TIME = 0.1  # [s] a finger may lose contact this long before the object counts as dropped


class HoldCheck(NamedTuple):
    """Per environment: slip [m] of the object in the hand (0 where not holding), the time each has been without
    both fingers on it [s], and whether it dropped (out of the grip) or slipped (moved, still between the fingers)."""

    slip: np.ndarray
    lost_time: np.ndarray
    dropped: np.ndarray
    slipped: np.ndarray


def in_hand(obs: Observation, envs=slice(None)) -> np.ndarray:
    """The object's centre in the end-effector frame of environments ``envs`` (k, 3), as measured now."""
    return np.einsum("kji,kj->ki", obs.ee_rot[envs], obs.obj_pos[envs] - obs.ee_pos[envs])


def check_hold(obs: Observation, held: np.ndarray, holding: np.ndarray, lost_time: np.ndarray, dt: float,
               slip_tol: float) -> HoldCheck:
    """The hold of environments ``holding`` (n_envs,) bool whose object sat at ``held`` (n_envs, 3) in the hand when
    it took hold; ``lost_time`` (n_envs,) [s] as the previous tick left it, dt [s] since then."""
    slip = np.where(holding, np.linalg.norm(in_hand(obs) - held, axis=1), 0.0)
    held_now = obs.contact.all(axis=1)
    lost_time = np.where(holding & ~held_now, lost_time + dt, 0.0)
    gone = slip > slip_tol
    return HoldCheck(slip, lost_time, holding & ((lost_time > DROP_TIME) | (gone & ~held_now)), holding & gone)


def reached(obs: Observation, seg: Segments, pos_tol: float, rot_tol: float) -> np.ndarray:
    """(n_envs,) bool: the end effector within pos_tol [m] and rot_tol [rad] of its segment's goal."""
    pos_ok = np.linalg.norm(obs.ee_pos - seg.p1, axis=1) <= pos_tol
    rel = np.swapaxes(obs.ee_rot, -1, -2) @ seg.R1
    return pos_ok & (np.linalg.norm(so3_log(rel), axis=1) <= rot_tol)
