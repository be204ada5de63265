"""The peer of scripts/bench_plan.py: pybullet-planning's RRT-Connect (``plan_joint_motion``: birrt with PyBullet's
own collision checks, its default 3-degree edge resolution and smoothing) on the same problems, the same pairs
checked (the sphere model's self pairs; the others disabled) and the same time budget."""

from __future__ import annotations

import contextlib
import io
import itertools
import time

import numpy as np
import pybullet as pb

from app.sim.urdf_loader import load_urdf


def _disabled(body, cm) -> set:
    """Link-index pairs of the robot that the sphere model does not check (adjacent, always touching, never near)."""
    names = body.link_index
    checked = {frozenset((a, b)) for a, b in cm.pair_names if a in names and b in names}
    return {(names[a], names[b]) for a, b in itertools.combinations(names, 2) if frozenset((a, b)) not in checked}


def run_peer(model, pkgs, probs, timeout: float) -> tuple[np.ndarray, np.ndarray]:
    """Seconds (P,) and success (P,) of pybullet-planning on each (world, cm, start, goal)."""
    import pybullet_planning as pp

    with contextlib.redirect_stdout(io.StringIO()):
        pp.connect(use_gui=False)
    client = pp.get_client()
    seconds, ok = [], []
    for world, cm, start, goal in probs:
        pb.resetSimulation(physicsClientId=client)
        body = load_urdf(client, model.spec.path, pkgs)
        boxes = []
        for box in world.boxes:
            shape = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=list(box.half), physicsClientId=client)
            w, x, y, z = box.quat
            boxes.append(pb.createMultiBody(0, shape, -1, list(box.pos), [x, y, z, w], physicsClientId=client))
        active = [k for k in range(model.n_dofs) if model.revolute[k]]
        joints = [body.joint_index[model.dof_names[k]] for k in active]
        for name, value in zip(model.dof_names, start):
            pb.resetJointState(body.body_id, body.joint_index[name], float(value), physicsClientId=client)
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            path = pp.plan_joint_motion(body.body_id, joints, [float(goal[k]) for k in active], obstacles=boxes,
                                        self_collisions=True, disabled_collisions=_disabled(body, cm),
                                        max_time=timeout)
        seconds.append(time.perf_counter() - t0)
        ok.append(path is not None)
    pp.disconnect()
    return np.array(seconds), np.array(ok)
