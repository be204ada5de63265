"""The sphere collision model (app.collision) against PyBullet's closest points on the real geometry,
finite differences, and the shapes it was fitted to."""

import numpy as np
import pybullet as pb
import pytest

from app import RobotModel
from app.collision import World, WorldBox, collision_model
from app.collision.pairs import NEAR, sample_configs
from app.collision.robot_spheres import spheres_key
from app.collision.sampling import mesh_samples
from app.collision.shapes import collision_shapes
from app.errors import InputError
from app.sim.urdf_loader import load_urdf
from tests.conftest import WIDOWX_URDF
from tests.sphere_truth import add_box, true_distances

PB_TOL = 1.5e-3  # [m] PyBullet's GJK on capsules and hulls (up to 0.75 mm against exact box distances) and its
# boxes' corners rounded by its collision margin (up to 1.5 mm farther than the exact box distance of a box link)
WORLD = World(boxes=(WorldBox("table", (0.4, 0.4, 0.02), (0.25, 0.0, -0.0205)),
                     WorldBox("block", (0.03, 0.05, 0.06), (0.3, 0.1, 0.06), (0.92, 0.0, 0.0, 0.39))))


@pytest.fixture(scope="module")
def widowx_cm():
    model = RobotModel.from_urdf(str(WIDOWX_URDF))
    return model, collision_model(model, WORLD)


@pytest.fixture(scope="module")
def truth(widowx_cm):
    model, cm = widowx_cm
    client = pb.connect(pb.DIRECT)
    body = load_urdf(client, str(WIDOWX_URDF))
    boxes = {b.name: add_box(client, b.half, b.pos, tuple(np.array(b.quat) / np.linalg.norm(b.quat)))
             for b in WORLD.boxes}
    q = sample_configs(model, 1000, seed=7)
    yield q, np.array([true_distances(client, body, model, cm, qi, boxes) for qi in q])
    pb.disconnect(client)


def test_sphere_distance_never_reports_clear_where_pybullet_measures_closer(widowx_cm, truth):
    """Over 1,000 random configurations: where PyBullet's shapes are apart the sphere distance is never
    larger; where they penetrate the spheres penetrate too (no false clear)."""
    model, cm = widowx_cm
    q, true = truth
    d, _ = cm.distances(q, with_gradient=False)
    apart = true >= 0
    assert (d[apart] <= true[apart] + 1e-9).all(), (true - d)[apart].min()
    assert (d[~apart] <= 0).all()
    assert apart.sum() > 10_000 and (~apart).sum() > 100  # both cases seen


def test_sphere_distance_is_within_the_stated_excess_of_pybullets(widowx_cm, truth):
    """true - sphere <= excess_a + excess_b (+ PyBullet's own tolerance) for every pair apart."""
    model, cm = widowx_cm
    q, true = truth
    d, _ = cm.distances(q, with_gradient=False)
    apart = true >= 0
    over = (true - d - cm.pair_excess)[apart]
    assert over.max() <= PB_TOL, over.max()


def test_distance_gradients_match_finite_differences(widowx_cm):
    model, cm = widowx_cm
    q = sample_configs(model, 30, seed=3)
    _, J = cm.distances(q)
    eps = 1e-6
    def dist(x):
        return cm.distances(x, with_gradient=False)[0]
    fd = np.stack([(dist(q + eps * e) - dist(q - eps * e)) / (2 * eps) for e in np.eye(model.n_dofs)], axis=-1)
    assert J.shape == (30, cm.n_pairs, model.n_dofs)
    assert np.abs(fd - J).max() < 1e-6


def test_spheres_enclose_every_face_of_each_collision_shape(widowx_cm):
    """Dense samples (1 mm) of every face of every moving link's shape lie inside its spheres."""
    model, cm = widowx_cm
    shapes, _ = collision_shapes(WIDOWX_URDF.read_text(), str(WIDOWX_URDF))
    for shape in shapes:
        if shape.hull is None or shape.link not in cm.robot.spheres:
            continue
        pts, _ = mesh_samples(shape.hull, 0.001)
        pts = pts @ shape.R.T + shape.p
        s = cm.robot.spheres[shape.link]
        outside = (np.linalg.norm(pts[:, None] - s[None, :, :3], axis=2) - s[None, :, 3]).min(axis=1)
        assert outside.max() <= 1e-9, (shape.source, outside.max())


def test_stated_excess_is_at_most_one_centimetre_per_widowx_link(widowx_cm):
    _, cm = widowx_cm
    assert cm.robot.excess and max(cm.robot.excess.values()) <= 0.01, cm.robot.excess


def test_skipped_pairs_are_adjacent_or_never_near_on_fresh_samples(widowx_cm):
    """Adjacent links are skipped, >= 100,000 samples were used, and pairs called never-near stay > 2 cm
    apart on 20,000 configurations of a third seed (their own spheres, all pairs checked)."""
    from dataclasses import replace

    from app.collision.checker import CollisionModel
    model, cm = widowx_cm
    robot = cm.robot
    assert robot.samples >= 100_000
    assert ("link_5", "link_6") in robot.skipped["adjacent"] and ("link_1", "link_2") in robot.skipped["adjacent"]
    never = robot.skipped["never"]
    assert never
    d, _ = CollisionModel(model, replace(robot, pairs=tuple(never))).distances(sample_configs(model, 20_000, 11),
                                                                                with_gradient=False)
    assert d.min() > NEAR


def test_cache_key_follows_the_file_contents(tmp_path):
    text = WIDOWX_URDF.read_text()
    _, key = spheres_key(text, str(WIDOWX_URDF))
    _, same = spheres_key(text, str(WIDOWX_URDF))
    _, other = spheres_key(text.replace('size="0.05 0.15 0.05"', 'size="0.05 0.16 0.05"'), str(WIDOWX_URDF))
    assert key == same != other
    (tmp_path / "widowx_ai.urdf").write_text(text)
    (tmp_path / "widowx_ai.spheres.yaml").write_text(
        "collision_spheres:\n  link_6:\n    - {center: [0, 0, 0], radius: 0.1}\n")
    _, tuned = spheres_key(text, str(tmp_path / "widowx_ai.urdf"))
    assert tuned != key


def test_clear_agrees_with_the_smallest_distance(widowx_cm):
    """CollisionModel.clear (early exit at the first close pair) equals min(distances) >= min_distance."""
    model, cm = widowx_cm
    q = sample_configs(model, 2000, seed=13)
    d, _ = cm.distances(q, with_gradient=False)
    for min_d in (0.0, 0.01, 0.05):
        np.testing.assert_array_equal(cm.clear(q, min_d), d.min(axis=1) >= min_d)


def test_held_object_moves_with_its_link_and_is_checked_against_the_world():
    """A box held at the gripper: its sphere distance to the table is <= PyBullet's distance between the same
    box (placed by our FK) and the table, within its stated excess; the fingers holding it are not paired."""
    from app.collision import HeldObject
    from app.kinematics.rotations import matrix_to_quat
    model = RobotModel.from_urdf(str(WIDOWX_URDF))
    held = HeldObject("cube", "link_6", (0.02, 0.02, 0.02), (0.12, 0.0, 0.0))
    cm = collision_model(model, World(boxes=WORLD.boxes[:1], held=held))
    pairs = [k for k, (a, b) in enumerate(cm.pair_names) if b == "cube" or a == "cube"]
    others = {a if b == "cube" else b for a, b in (cm.pair_names[k] for k in pairs)}
    assert "table" in others and not others & {"gripper_left", "gripper_right", "link_6", "link_5"}
    k = cm.pair_names.index(("cube", "table")) if ("cube", "table") in cm.pair_names else \
        cm.pair_names.index(("table", "cube"))
    client = pb.connect(pb.DIRECT)
    try:
        table = add_box(client, WORLD.boxes[0].half, WORLD.boxes[0].pos)
        q = sample_configs(model, 200, seed=21)
        d, _ = cm.distances(q, with_gradient=False)
        R, p = model.link_frames(q)
        l6 = model.link_index("link_6")
        for i in range(len(q)):
            centre = p[i, l6] + R[i, l6] @ np.array(held.pos)
            cube = add_box(client, held.half, centre, tuple(matrix_to_quat(R[i, l6])))
            true = min(pt[8] for pt in pb.getClosestPoints(cube, table, 5.0, physicsClientId=client))
            pb.removeBody(cube, physicsClientId=client)
            if true >= 0:
                assert d[i, k] <= true + 1e-9 and true - d[i, k] <= cm.pair_excess[k] + 1e-3
            else:
                assert d[i, k] <= 0
    finally:
        pb.disconnect(client)


@pytest.mark.slow  # fits every other link of the arm afresh (~10 s on 2 cores): nothing cached for a temp file
def test_hand_tuned_spheres_replace_a_links_fit_and_bad_yaml_is_a_config_error(tmp_path):
    """A <urdf>.spheres.yaml (cuRobo's collision_spheres) replaces link_6's spheres, its excess measured
    against the URDF's box; an unknown link there is a ConfigError naming the file and the valid links."""
    from app.collision.robot_spheres import fit_robot
    from app.errors import ConfigError
    text = WIDOWX_URDF.read_text()
    urdf = tmp_path / "widowx_ai.urdf"
    urdf.write_text(text)
    yaml_path = tmp_path / "widowx_ai.spheres.yaml"
    yaml_path.write_text("collision_spheres:\n  link_6:\n    - {center: [0.035, 0.0, 0.0], radius: 0.09}\n"
                         "self_collision_ignore:\n  link_6: [link_1]\n")
    found = fit_robot(text, str(urdf), cached=False)
    np.testing.assert_allclose(found.spheres["link_6"], [[0.035, 0.0, 0.0, 0.09]])
    # the box 0.05 x 0.15 x 0.05 centred at x = 0.035: the sphere reaches 0.09 - 0.025 beyond its faces
    assert found.excess["link_6"] == pytest.approx(0.065, abs=0.003)
    assert ("link_1", "link_6") in found.ignore
    yaml_path.write_text("collision_spheres:\n  link_9:\n    - {center: [0, 0, 0], radius: 0.1}\n")
    with pytest.raises(ConfigError, match="unknown link 'link_9'.*link_6"):
        fit_robot(text, str(urdf), cached=False)


def test_pair_evidence_is_what_the_distances_say_for_each_fact_asked(widowx_cm):
    """CollisionModel.evidence (used to choose pairs): 'ever within near' and 'ever apart' as the exact distances
    of the same configurations say, for the facts asked and False for those not asked."""
    model, cm = widowx_cm
    q = sample_configs(model, 3000, seed=19)
    d, _ = cm.distances(q, with_gradient=False)
    truth_near, truth_apart = (d <= NEAR).any(axis=0), (d > 0).any(axis=0)
    assert truth_near.any() and (~truth_near).any() and (d <= 0).any()  # facts differ; contacts stop a search
    P = len(cm.pair_names)
    ask = np.random.default_rng(3).random((2, P)) < 0.5
    for want_near, want_apart in [(np.ones(P, bool), np.ones(P, bool)), (ask[0], ask[1]), (ask[0], np.zeros(P, bool))]:
        near, apart = cm.evidence(q, NEAR, want_near, want_apart)
        np.testing.assert_array_equal(near, truth_near & want_near)
        np.testing.assert_array_equal(apart, truth_apart & want_apart)


@pytest.mark.parametrize("near", [-0.01, float("nan")])
def test_pair_evidence_refuses_a_negative_or_nan_near_distance(widowx_cm, near):
    model, cm = widowx_cm
    P = len(cm.pair_names)
    with pytest.raises(InputError, match=r"near must be >= 0 m, got"):
        cm.evidence(sample_configs(model, 4, seed=1), near, np.ones(P, bool), np.ones(P, bool))
