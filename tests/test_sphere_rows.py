"""The QP's collision rows from the link spheres (controller.collision_model: spheres): rows of every environment
from one compiled call, grouped and capped as PyBullet's rows are, gradients that match finite differences of the
sphere distance, a lower bound of PyBullet's own distance, and a QP run that keeps d_safe - 0.1 mm by PyBullet's
measure (the referee) while the spheres drive it."""


import numpy as np
import pytest

from app.config.loader import load_run_config
from app.episode.loop import simulate
from app.episode.motion_factory import run_motion
from app.episode.scene_build import build_scene
from app.errors import ConfigError, InputError
from app.ik.limits.distance import DistanceRows
from app.ik.limits.sphere_rows import NEXT_ROW_BAND, SphereRows, merge_rows
from app.sim.collision import CollisionPairs, distance_rows
from tests.conftest import ROOT
from tests.test_collision import two_envs  # noqa: F401 (the scene of those rows: a table, a post, two envs)


def test_rows_are_grouped_by_environment_closest_first_and_capped(two_envs):
    scene, robot, q = two_envs
    rows = SphereRows(robot.sphere_model(("table", "post"), ()), 0.15, max_rows=6).rows(q)
    assert np.all(np.diff(rows.env) >= 0) and set(rows.env.tolist()) == {0, 1}
    for env in (0, 1):
        d = rows.distance[rows.env == env]
        assert 0 < len(d) <= 6 and np.all(np.diff(d) >= 0) and np.all(d < 0.15)
    assert all("|" in label for label in rows.labels)


def test_row_gradients_match_finite_differences_of_the_sphere_distance(two_envs):
    """Both kinds of row: a pair's closest pair of spheres and its next-closest one (their distances as
    CollisionModel.distances_and_next gives them)."""
    _, robot, q = two_envs
    q = q + np.array([0.0, 0.0, 0.0, 0.0, 0.013, 0.021, 0.0, 0.0])  # off the mid configuration, where the box links
    # face the table and post squarely: there their distance has a kink (a face of closest points), no derivative
    model = robot.sphere_model(("table", "post"), ())
    rows = SphereRows(model, 0.15, max_rows=50).rows(q)
    G = np.einsum("ki,kin->kn", rows.normal, rows.J_a - rows.J_b)  # what the QP's row kernel forms
    pair = {name: k for k, name in enumerate(f"{a}|{b}" for a, b in model.pair_names)}
    d, _, d_next, _ = model.distances_and_next(q, NEXT_ROW_BAND, 0.15)
    kinds, eps = set(), 1e-6
    for r in range(len(rows)):
        env, k = int(rows.env[r]), pair[rows.labels[r]]
        kind = 0 if rows.distance[r] == d[env, k] else 2
        assert kind == 0 or rows.distance[r] == d_next[env, k]
        kinds.add(kind)
        fd = np.empty(q.shape[1])
        for j in range(q.shape[1]):
            dq = np.zeros(q.shape[1])
            dq[j] = eps
            plus, minus = (model.distances_and_next(q[env] + s * dq, NEXT_ROW_BAND, 0.15)[kind][k] for s in (1, -1))
            fd[j] = (plus - minus) / (2 * eps)
        np.testing.assert_allclose(G[r], fd, atol=1e-5)
    assert kinds == {0, 2}  # closest and next rows both checked


def _sphere_and_box_distances(model, q):
    """Every sphere-sphere and sphere-box distance of each checked pair at q (n_dofs,), by numpy: a list (P) of
    sorted arrays."""
    ct = model.tables
    sp, bx, bd = ct.spheres, ct.boxes, ct.bodies
    R, p = model.model.link_frames(q)
    at = lambda link, local: local if link < 0 else R[link] @ local + p[link]  # noqa: E731
    centres = np.array([at(sp.link[s], sp.centre[s]) for s in range(len(sp.link))]).reshape(-1, 3)
    out = []
    for a, b in zip(ct.pairs.a, ct.pairs.b):
        Ca, ra = centres[bd.s0[a]:bd.s1[a]], sp.radius[bd.s0[a]:bd.s1[a]]
        Cb, rb = centres[bd.s0[b]:bd.s1[b]], sp.radius[bd.s0[b]:bd.s1[b]]
        ds = [(np.linalg.norm(Ca[:, None] - Cb[None], axis=2) - ra[:, None] - rb[None]).ravel()]
        for k in range(bd.k0[b], bd.k1[b]):
            l = bx.link[k]
            BR, BP = (bx.R[k], bx.p[k]) if l < 0 else (R[l] @ bx.R[k], R[l] @ bx.p[k] + p[l])
            e = np.abs((Ca - BP) @ BR) - bx.half[k]
            outside = np.linalg.norm(np.maximum(e, 0.0), axis=1)
            ds.append(np.where(outside > 0, outside, e.max(axis=1)) - ra)
        out.append(np.sort(np.concatenate(ds)))
    return out


def test_next_distance_is_the_second_closest_sphere_pair_within_the_band(two_envs):
    """Sphere-box pairs (the links and the table and post) and sphere-sphere ones (self pairs), against every
    distance computed by numpy."""
    _, robot, q = two_envs
    self_pairs = (("base_link", "link_2"), ("base_link", "link_3"), ("link_1", "link_3"), ("link_3", "link_5"),
                  ("link_3", "link_6"), ("link_5", "gripper_left"))  # sphere-sphere, sphere-box and box-box
    model = robot.sphere_model(("table", "post"), self_pairs)
    d, _, d_next, _ = model.distances_and_next(q, NEXT_ROW_BAND, 0.15)
    found = 0
    for env in range(len(q)):
        for k, ds in enumerate(_sphere_and_box_distances(model, q[env])):
            if not len(ds) or ds[0] >= 0.15:  # none: a box link against a box (exact, tests/test_box_links.py)
                continue
            assert d[env, k] == pytest.approx(ds[0], abs=1e-12)
            expected = ds[1] if ds[1] < min(0.15, ds[0] + NEXT_ROW_BAND) else np.inf
            assert d_next[env, k] == pytest.approx(expected, abs=1e-12)
            b = model.tables.pairs.b[k]
            found += np.isfinite(expected) * (1 if model.tables.bodies.k1[b] > model.tables.bodies.k0[b] else 100)
    assert found % 100 >= 1 and found // 100 >= 2  # next rows of both kinds (box links against boxes have none)


def test_sphere_rows_never_report_a_link_farther_than_pybullet_does(two_envs):
    scene, robot, q = two_envs
    rows = SphereRows(robot.sphere_model(("table", "post"), ()), 0.15, max_rows=50).rows(q)
    truth = distance_rows(robot, CollisionPairs(obstacles=("table", "post"), detection_distance=0.3, max_rows=100),
                          q, scene.box_ids)
    closest: dict = {}  # a pair's closest row (a next-closest row is another part of the link, farther by design)
    for env, label, d in zip(rows.env, rows.labels, rows.distance):
        closest[(env, label)] = min(d, closest.get((env, label), np.inf))
    for (env, label), d in closest.items():
        measured = [t for e, name, t in zip(truth.env, truth.labels, truth.distance) if e == env and name == label]
        # enclosing spheres: never farther apart than the shapes, and touching where the shapes intersect
        # (penetration depths themselves differ)
        assert measured and d <= max(min(measured), 0.0) + 1e-6, (label, d, measured)


def test_a_cutoff_keeps_near_distances_and_bounds_far_ones_from_below(two_envs):
    _, robot, _ = two_envs
    model = robot.sphere_model(("table", "post"), ())
    rng = np.random.default_rng(3)
    q = robot.model.mid_config() + 0.6 * rng.standard_normal((200, robot.model.n_dofs))
    exact, _ = model.distances(q, False)
    cut, _ = model.distances(q, False, cutoff=0.05)
    near = exact < 0.05
    assert near.any() and (~near).any()
    np.testing.assert_allclose(cut[near], exact[near], atol=1e-12)
    assert np.all(cut[~near] >= 0.05 - 1e-12) and np.all(cut[~near] <= exact[~near] + 1e-12)


def test_skipped_pairs_give_no_row_in_their_environment_only(two_envs):
    _, robot, q = two_envs
    sphere_rows = SphereRows(robot.sphere_model(("table", "post"), ()), 0.15, max_rows=50)
    rows = sphere_rows.rows(q)
    a, b = rows.labels[int(np.flatnonzero(rows.env == 1)[0])].split("|")
    skipped = sphere_rows.rows(q, [frozenset(), frozenset({(b, a)})])
    assert f"{a}|{b}" not in [label for e, label in zip(skipped.env, skipped.labels) if e == 1]
    assert list(skipped.labels[:int((skipped.env == 0).sum())]) == list(rows.labels[:int((rows.env == 0).sum())])


def test_merged_rows_keep_each_environments_closest_in_order():
    n = 3
    grad = np.eye(n)
    first = DistanceRows.from_gradients(np.array([0.02, 0.05, 0.01]), grad, ["a", "b", "c"], np.array([0, 0, 1]))
    second = DistanceRows.from_gradients(np.array([0.03, 0.001]), grad[:2], ["d", "e"], np.array([0, 1]))
    merged = merge_rows(first, second, max_rows=2)
    assert merged.env.tolist() == [0, 0, 1, 1]
    assert list(merged.labels) == ["a", "d", "e", "c"] and merged.distance.tolist() == [0.02, 0.03, 0.001, 0.01]
    np.testing.assert_array_equal(np.einsum("ki,kin->kn", merged.normal, merged.J_a - merged.J_b),
                                  grad[[0, 0, 1, 2]])


def test_an_unknown_collision_model_is_a_config_error_naming_the_key():
    with pytest.raises(ConfigError, match="collision_model.*'pybullet'.*'spheres'"):
        load_run_config(ROOT / "configs" / "qp_obstacle.yaml", {"controller.collision_model": "fcl"})


def _refereed_run(config: str, seconds: float, pairs_of) -> tuple[float, float, dict]:
    """A run of ``config`` with sphere rows; every control tick PyBullet measures the watched pairs
    (``pairs_of(robot)`` -> CollisionPairs). Returns (PyBullet's smallest distance, the smallest sphere row's
    distance, the controller config)."""
    run = load_run_config(ROOT / "configs" / config, {"controller.collision_model": "spheres"}, duration=seconds,
                          n_envs=1)
    scene, robot = build_scene(run)
    worst = {"pybullet": np.inf, "spheres": np.inf}
    try:
        pairs = pairs_of(robot)

        def referee(k, controller, q):
            truth = distance_rows(robot, pairs, q, scene.box_ids)
            if len(truth):
                worst["pybullet"] = min(worst["pybullet"], truth.distance.min())
            worst["spheres"] = min(worst["spheres"], controller.telemetry.min_distance[-1].min())

        episode, _ = simulate(run, scene, robot, run_motion(run, 1, robot=robot), on_tick=referee,
                              show_progress=False)
        controller = episode.controller
        assert controller.spheres is not None and controller.collisions is None  # no PyBullet rows
    finally:
        scene.close()
    return worst["pybullet"], worst["spheres"], run.controller


def test_sphere_rows_keep_the_margin_by_pybullets_measure_through_table_and_block():
    pairs_of = lambda robot: CollisionPairs(obstacles=("table", "block"), detection_distance=0.05, max_rows=100)  # noqa: E731
    truth, spheres, cfg = _refereed_run("qp_obstacle.yaml", 4.0, pairs_of)  # the dip and the block
    assert cfg.collision_model == "spheres"
    assert spheres < cfg.d_safe + 0.01  # the path pressed the arm against its margin
    assert truth >= cfg.d_safe - 1e-4 and spheres <= truth + 1e-6, (truth, spheres)


def test_row_selection_matches_a_stable_sort_of_each_environment():
    from app.ik.limits.sphere_rows import _select
    rng = np.random.default_rng(7)
    d = np.round(rng.uniform(-0.02, 0.3, (40, 12)), 2)  # ties included
    grad = rng.standard_normal((40, 12, 5))
    grad[rng.uniform(size=(40, 12)) < 0.1] = 0.0  # rows no joint moves
    watched = rng.uniform(size=(40, 12)) > 0.1
    env, pair, distance, normal, J_a, J_b = _select(d, grad, watched, 0.15, 4)
    for i in range(40):
        ok = watched[i] & (d[i] < 0.15) & grad[i].any(axis=1)
        want = [j for j in np.argsort(np.where(ok, d[i], np.inf), kind="stable")[:4] if ok[j]]
        assert pair[env == i].tolist() == want
    assert np.all(np.diff(env) >= 0)
    np.testing.assert_array_equal(np.einsum("ki,kin->kn", normal, J_a - J_b), grad[env, pair])
    np.testing.assert_array_equal(distance, d[env, pair])


@pytest.mark.parametrize("band", [0.0, -0.01, float("nan"), float("inf")])
def test_next_distances_refuse_a_band_that_is_not_a_positive_finite_length(two_envs, band):
    _, robot, q = two_envs
    with pytest.raises(InputError, match="band must be a finite number > 0 m"):
        robot.sphere_model(("table", "post"), ()).distances_and_next(q, band, 0.15)
