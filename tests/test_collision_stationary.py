"""The collision model of the Stationary AI (two arms, 16 DOFs, real meshes measured on their hulls) against PyBullet.

Slow on a fresh cache: fitting the meshes (~5 s) and sampling 2 x 100,000 configurations for 452 link
pairs (~9 s) on 2 cores, once per file contents (then the cached file loads in well under a second)."""

import numpy as np
import pybullet as pb
import pytest

from app import RobotModel
from app.collision import collision_model
from app.collision.pairs import sample_configs
from app.sim.urdf_loader import load_urdf
from tests.conftest import require_reference
from tests.sphere_truth import true_distances

pytestmark = pytest.mark.slow
PB_PRECISION = 5e-5  # [m] PyBullet's GJK tolerance and float32 link states
PB_TOL = 1.5e-3  # [m] PyBullet's GJK on hulls, and its boxes' corners rounded by its margin (a box link: up to 1.5 mm)


@pytest.fixture(scope="module")
def stationary():
    ref = require_reference()
    path = ref / "trossen_arm_description" / "urdf" / "stationary_ai.urdf"
    model = RobotModel.from_urdf(str(path), package_dirs=[str(ref)])
    return path, ref, model, collision_model(model, package_dirs=[str(ref)])


def test_arm_arm_and_table_pairs_are_checked_after_100k_samples(stationary):
    _, _, model, cm = stationary
    assert model.n_dofs == 16 and cm.robot.samples >= 100_000
    names = set(cm.pair_names)
    assert ("follower_left_link_6", "follower_right_link_6") in names
    assert any("tabletop_link" in p and "follower_left_link_6" in p for p in names)


def test_mesh_links_measured_exactly_against_pybullet_meshes(stationary):
    """The mesh links are measured on their convex hulls (GJK): within PyBullet's own precision of its closest points
    (its GJK stops at ~1e-5 m, its link poses are float32) and never farther by more; in contact, never apart."""
    path, ref, model, cm = stationary
    client = pb.connect(pb.DIRECT)
    try:
        body = load_urdf(client, str(path), package_dirs=[str(ref)])
        q = sample_configs(model, 100, seed=5)
        true = np.array([true_distances(client, body, model, cm, qi, {}) for qi in q])
    finally:
        pb.disconnect(client)
    d, _ = cm.distances(q, with_gradient=False)
    apart = true >= 0
    assert (d[apart] <= true[apart] + PB_PRECISION).all(), (true - d)[apart].min()
    assert (d[~apart] <= PB_PRECISION).all()
    assert (true - d)[apart].max() <= PB_TOL
