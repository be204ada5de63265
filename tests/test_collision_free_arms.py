"""Collision-free IK of both Stationary AI arms at once (app.ik.collision_free_arms), refereed by PyBullet on Trossen's
meshes: target pairs made from clear configurations in a bin are solved clear and PyBullet agrees; a pair of targets
only reachable in collision, and one out of reach, are said to be so (never a false clear); the scene robot's
multi-link call does the same in environment frames. Also the meshes' exact distances (convex parts, GJK) agree with
PyBullet's closest points within its rounding."""

from __future__ import annotations

import logging

import numpy as np
import pybullet as pb
import pytest

from app import RobotModel
from app.collision import World, WorldBox, collision_model
from app.collision.pairs import sample_configs
from app.sim.urdf_loader import load_urdf
from tests.conftest import require_reference
from tests.sphere_truth import add_box, true_distances

pytestmark = pytest.mark.slow
LINKS = ["follower_left_ee_gripper_link", "follower_right_ee_gripper_link"]
BIN = (WorldBox("table", (0.6, 0.8, 0.02), (0.1, 0.0, -0.02)),
       WorldBox("wall_front", (0.005, 0.16, 0.05), (0.305, 0.0, 0.05)),
       WorldBox("wall_back", (0.005, 0.16, 0.05), (-0.005, 0.0, 0.05)),
       WorldBox("wall_left", (0.15, 0.005, 0.05), (0.15, 0.155, 0.05)),
       WorldBox("wall_right", (0.15, 0.005, 0.05), (0.15, -0.155, 0.05)))
MARGIN = 0.01  # [m] world and arm clearance asked
PB_ROUNDING = 1.5e-3  # [m] PyBullet's GJK on hulls with its margins, and its boxes' rounded corners


@pytest.fixture(scope="module")
def rig():
    """(model, collision model among the bin, PyBullet client, body, {box name: id})."""
    ref = require_reference()
    path = ref / "trossen_arm_description" / "urdf" / "stationary_ai.urdf"
    model = RobotModel.from_urdf(str(path), package_dirs=[str(ref)])
    cm = collision_model(model, World(boxes=BIN), package_dirs=[str(ref)])
    client = pb.connect(pb.DIRECT)
    body = load_urdf(client, str(path), package_dirs=[str(ref)])
    boxes = {b.name: add_box(client, b.half, b.pos) for b in BIN}
    yield model, cm, client, body, boxes
    pb.disconnect(client)


def _verdict(rig, q: np.ndarray) -> tuple[float, float, float]:
    """PyBullet's closest (world, arms, self) distances [m] of the checked pairs at q."""
    model, cm, client, body, boxes = rig
    d = true_distances(client, body, model, cm, q, boxes)
    kinds = np.array(cm.pair_kinds)
    return tuple(float(d[kinds == k].min()) for k in ("world", "arms", "self"))


def _targets(rig, n: int, seed: int) -> np.ndarray:
    """n two-arm configurations with both grippers in the bin, 15 mm clear of it and of each other and no own contact
    by PyBullet (fingers at mid, where the IK keeps them)."""
    model = rig[0]
    rng = np.random.default_rng(seed)
    arms = [[i for i, name in enumerate(model.dof_names) if name.startswith(f"follower_{side}_joint_")]
            for side in ("left", "right")]
    out = []
    for draw in range(200):
        q = np.broadcast_to(model.mid_config(), (20_000, model.n_dofs)).copy()
        for dofs in arms:
            q[:, dofs] = sample_configs(model, 20_000, seed=1000 * seed + 2 * draw + dofs[0])[:, dofs]
        p = model.forward_kinematics(q, LINKS)[0]
        inside = ((np.abs(p[..., :2] - (0.15, 0.0)).max(-1) < 0.13) & (p[..., 2] > 0.03)).all(axis=1)
        for qi in q[inside][rng.permutation(inside.sum())]:
            if min(_verdict(rig, qi)[:2]) >= 0.015 and _verdict(rig, qi)[2] >= 0.0:
                out.append(qi)
                if len(out) == n:
                    return np.array(out)
    raise AssertionError(f"only {len(out)} clear two-arm configurations found")


def test_mesh_distances_are_exact_against_pybullet_on_random_configurations(rig):
    model, cm, client, body, boxes = rig
    for q in sample_configs(model, 30, seed=5):
        ours = cm.distances(q[None], with_gradient=False)[0][0]
        truth = true_distances(client, body, model, cm, q, boxes)
        apart = (truth < 0.05) & (truth > 0.0)
        assert np.all(ours[apart] <= truth[apart] + 5e-5), "never farther than PyBullet (its precision): a false clear"
        assert np.all(ours[apart] >= truth[apart] - PB_ROUNDING), (cm.pair_names[int(np.argmin(ours - truth))])
        assert np.all(ours[truth < 0] < 5e-5), "in contact: never apart"


def test_a_subset_of_pairs_measures_them_exactly_as_the_whole_model(rig):
    """A subset computes only the frames and bodies its pairs read: one arm's pairs, the pairs between the arms and
    a rig-frame bar against a camera give the whole model's distances and gradients bit for bit, and the same
    clear verdicts at each margin."""
    model, cm = rig[:2]
    q = sample_configs(model, 60, seed=21)
    d, g = cm.distances(q)
    kinds = np.array(cm.pair_kinds)
    left = np.array([all(n.startswith("follower_left") or n in {b.name for b in BIN} or not model.movable_links[
        model.link_index(n)] if n in model.link_names else True for n in pair) for pair in cm.pair_names])
    masks = {"arms": kinds == "arms", "left arm": left & (kinds != "arms"),
             "frame": np.array([pair == ("frame_link", "follower_left_camera_link") for pair in cm.pair_names])}
    assert masks["frame"].sum() == 1 and masks["left arm"].sum() > 50 and masks["arms"].sum() > 20
    for name, mask in masks.items():
        sub = cm.subset(mask)
        ds, gs = sub.distances(q)
        assert np.array_equal(ds, d[:, mask]) and np.array_equal(gs, g[:, mask]), name
        for margin in (0.0, 0.01, 0.05):
            assert np.array_equal(sub.clear(q, margin), (d[:, mask] >= margin).all(axis=1)), (name, margin)


def test_mesh_pair_gradient_rows_match_finite_differences(rig):
    """The rows the QP gets for pairs measured on hulls: d(distance)/dq from GJK's witnesses equals central
    differences, for an arm's link against a wall and for the closest pair of links of the two arms in the bin."""
    model, cm = rig[:2]
    kinds = np.array(cm.pair_kinds)
    q = np.vstack([sample_configs(model, 400, seed=12), _targets(rig, 6, seed=4)])
    d, _ = cm.distances(q, with_gradient=False)
    wall = cm.pair_names.index(("follower_left_link_6", "wall_left"))
    arms = np.flatnonzero(kinds == "arms")
    cases = [(qi, wall) for qi in q[(d[:, wall] > 0.005) & (d[:, wall] < 0.1)][:4]]
    cases += [(qi, int(arms[np.argmin(di[arms])])) for qi, di in zip(q[400:], d[400:])]
    h = 1e-6
    for qi, j in cases:
        assert 0.0 < cm.distances(qi[None], with_gradient=False)[0][0, j]  # apart: smooth there
        g = cm.distances(qi[None])[1][0, j]
        fd = np.array([(cm.distances((qi + h * e)[None], with_gradient=False)[0][0, j]
                        - cm.distances((qi - h * e)[None], with_gradient=False)[0][0, j]) / (2 * h)
                       for e in np.eye(len(qi))])
        assert np.allclose(g, fd, atol=1e-4), (cm.pair_names[j], g, fd)


def test_both_arms_are_solved_clear_in_one_bin_and_pybullet_agrees(rig, caplog):
    model, cm = rig[:2]
    q_src = _targets(rig, 24, seed=1)
    pos, quat = model.forward_kinematics(q_src, LINKS)
    res = model.inverse_kinematics_multilink(LINKS, [pos[:, 0], pos[:, 1]], [quat[:, 0], quat[:, 1]],
                                             avoid_collisions=True, min_distance=MARGIN, arm_min_distance=MARGIN,
                                             collision=cm, return_info=True)
    assert res.collision_free.sum() >= 23  # each has a clear solution: the configuration it was made from
    reached = model.forward_kinematics(res.q, LINKS)[0]
    assert np.abs(reached - pos)[res.collision_free].max() < 1e-4
    for q in res.q[res.collision_free]:
        world, arms, own = _verdict(rig, q)
        assert world >= MARGIN - 1e-3 and arms >= MARGIN - 1e-3 and own >= -1e-3, (world, arms, own)


def test_targets_reached_only_in_collision_and_out_of_reach_are_said_so(rig, caplog):
    model, cm = rig[:2]
    q_src = _targets(rig, 1, seed=2)
    pos, quat = model.forward_kinematics(q_src, LINKS)
    same = [pos[0, 0] * (1, 1, 0) - (0, 0, 0.005), pos[0, 1]]  # the left gripper 5 mm into the table: never clear
    far = [pos[0, 0] + (0.0, 0.0, 1.5), pos[0, 1]]
    with caplog.at_level(logging.WARNING, logger="app.ik.collision_free"):
        res = model.inverse_kinematics_multilink(LINKS, [np.array([same[0], far[0]]), np.array([same[1], far[1]])],
                                                 [np.repeat(quat[:, 0], 2, 0), np.repeat(quat[:, 1], 2, 0)],
                                                 avoid_collisions=True, min_distance=MARGIN, collision=cm,
                                                 return_info=True)
    assert not res.collision_free.any()
    assert res.converged[0] and not res.converged[1]
    assert res.closest[0] is not None and res.closest[0][2] < MARGIN
    assert "out of reach" in caplog.text and "only in collision" in caplog.text


def test_the_scene_robot_solves_both_arms_clear_of_its_boxes_in_environment_frames(rig):
    from app.sim.scene import BoxSpec, Scene

    model = rig[0]
    ref = require_reference()
    scene = Scene()
    robot = scene.add_robot(str(ref / "trossen_arm_description" / "urdf" / "stationary_ai.urdf"),
                            package_dirs=[str(ref)])
    for box in BIN:
        scene.add_box(BoxSpec(box.name, tuple(2 * np.array(box.half)), tuple(box.pos)))
    scene.build(n_envs=2, env_spacing=(1.5, 1.5))
    try:
        q_src = _targets(rig, 2, seed=3)
        pos, quat = model.forward_kinematics(q_src, LINKS)  # the base at the origin: environment frame = base frame
        res = robot.inverse_kinematics_multilink(LINKS, [pos[:, 0], pos[:, 1]], [quat[:, 0], quat[:, 1]],
                                                 avoid_collisions=True, min_distance=MARGIN, return_info=True)
        assert res.collision_free.all() and res.q.shape == (2, model.n_dofs)
        assert np.abs(model.forward_kinematics(res.q, LINKS)[0] - pos).max() < 1e-4
        one = robot.inverse_kinematics_multilink(LINKS, [pos[1, 0], pos[1, 1]], [quat[1, 0], quat[1, 1]],
                                                 avoid_collisions=True, min_distance=MARGIN, envs_idx=[1])
        assert one.shape == (1, model.n_dofs)
    finally:
        scene.close()
