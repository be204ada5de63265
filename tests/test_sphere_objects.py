"""The scene's objects in the sphere collision model (app.sim.sphere_world.SceneObjects): a free cube's sphere
distance to every link never exceeds PyBullet's (and is short of it by at most the pair's excess); a held cube
moves with the gripper's carrying link (its gradient matches finite differences, it is checked against the table
by a lower bound of PyBullet's distance) and its pairs with the fingers are left unwatched."""

import numpy as np
import pybullet as pb
import pytest

from app.config.loader import load_run_config
from app.episode.scene_build import build_scene
from app.ik.limits.distance import GraspState
from app.kinematics.rotations import quat_exp
from tests.conftest import ROOT

CUTOFF = 0.3  # [m] pairs farther than this are not compared


@pytest.fixture(scope="module")
def pick_scene():
    """The pick-and-place scene (WidowX AI, gripper, table, a 5 cm cube), one environment, and its sphere model
    of the table and the cube."""
    run = load_run_config(ROOT / "configs" / "pick_place.yaml", sets={"n_envs": 1})
    scene, robot = build_scene(run)
    yield scene, robot, robot.sphere_model(("table",), (), ("cube",))
    scene.close()


def _pybullet_distance(scene, robot, pb_link: int, other: int) -> float:
    pts = pb.getClosestPoints(robot.bodies[0].body_id, other, CUTOFF, pb_link, -1, physicsClientId=scene.client)
    return min((p[8] for p in pts), default=np.inf)


def test_a_free_cube_is_never_farther_by_the_spheres_than_by_pybullet_and_within_the_excess(pick_scene):
    scene, robot, model = pick_scene
    cube, rng = scene.objects["cube"], np.random.default_rng(5)
    index = {name: k for k, name in enumerate(model.pair_names)}
    links = [a for a, b in model.pair_names if b == "cube" and a in robot.bodies[0].link_index]
    compared = 0
    for _ in range(12):
        q = np.clip(robot.model.mid_config() + rng.uniform(-0.8, 0.8, robot.n_dofs), robot.model.q_lower,
                    robot.model.q_upper)
        robot.set_qpos(q)
        quat = quat_exp(rng.uniform(-1.5, 1.5, 3))
        cube.set_pose(rng.uniform([0.15, -0.25, 0.05], [0.45, 0.25, 0.35]), quat)
        objects, _ = robot.sphere_state(model, q[None])
        d, _ = model.distances(q, False, objects=objects)
        for link in links:
            k = index[link, "cube"]
            true = _pybullet_distance(scene, robot, robot.bodies[0].link_index[link], cube.body_ids[0])
            if true == np.inf:
                assert d[k] >= CUTOFF - model.pair_excess[k] - 1e-6
                continue
            compared += 1
            assert d[k] <= max(true, 0.0) + 1e-6, (link, d[k], true)
            if true > 0:
                assert true - d[k] <= model.pair_excess[k] + 1e-6, (link, d[k], true, model.pair_excess[k])
    assert compared > 30


def test_a_held_cube_moves_with_the_carrying_link_and_skips_the_fingers(pick_scene):
    scene, robot, model = pick_scene
    q = robot.model.mid_config()
    q[1:3], q[4] = [1.0, 0.5], -1.2  # the fingers down, near the table
    robot.set_qpos(q)
    carrier = robot.model.link_index("link_6")
    _, p = robot.model.link_frames(q[None])
    tips = (p[0, robot.model.link_index("left_fingertip")] + p[0, robot.model.link_index("right_fingertip")]) / 2
    cube_pos = robot.base.R @ tips + robot.base.p  # between the fingertips, in the environment frame
    scene.objects["cube"].set_pose(cube_pos, (1.0, 0.0, 0.0, 0.0))
    held = GraspState((frozenset(),), (frozenset(),), ({"cube": ""},))  # the motion says: the one gripper holds it
    objects, skipped = robot.sphere_state(model, q[None], held)
    assert objects.link[0, 0] == carrier
    assert {("gripper_left", "cube"), ("gripper_right", "cube"), ("link_6", "cube")} <= skipped[0]
    k = model.pair_names.index(("table", "cube"))
    d, J = model.distances(q, True, objects=objects)
    true = _pybullet_distance_to_table(scene, robot)
    assert d[k] <= true + 1e-6 and true - d[k] <= model.pair_excess[k] + 1e-6
    eps, fd = 1e-6, np.empty(robot.n_dofs)
    for j in range(robot.n_dofs):
        dq = np.zeros(robot.n_dofs)
        dq[j] = eps
        fd[j] = (model.distances(q + dq, False, objects=objects)[0][k]
                 - model.distances(q - dq, False, objects=objects)[0][k]) / (2 * eps)
    assert np.abs(fd).max() > 0.1  # the held cube moves with the arm: its table distance does
    np.testing.assert_allclose(J[k], fd, atol=1e-5)


def _pybullet_distance_to_table(scene, robot) -> float:
    cube, table = scene.objects["cube"].body_ids[0], scene.box_ids["table"][0]
    pts = pb.getClosestPoints(cube, table, CUTOFF, physicsClientId=scene.client)
    return min(p[8] for p in pts)
