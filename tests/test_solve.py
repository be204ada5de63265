"""app.solve: large IK batches from an .npz file; the same answers in chunks and on Ray workers; malformed
files are errors naming the array and the shape expected."""

import numpy as np
import pytest

from app.errors import InputError
from app.solve import main, read_targets
from tests.conftest import WIDOWX_URDF


@pytest.fixture(scope="module")
def targets_file(tmp_path_factory, widowx):
    rng = np.random.default_rng(5)
    q = rng.uniform(widowx.q_lower, widowx.q_upper, (300, widowx.n_dofs))
    pos, quat = widowx.forward_kinematics(q, ["ee_gripper_link"])
    path = tmp_path_factory.mktemp("solve") / "targets.npz"
    np.savez(path, pos=pos[:, 0], quat=quat[:, 0])
    return path


def test_solves_every_target_and_chunks_do_not_change_answers(targets_file, tmp_path, widowx):
    assert main([str(targets_file), "--urdf", str(WIDOWX_URDF), "--out", str(tmp_path / "a.npz")]) == 0
    assert main([str(targets_file), "--urdf", str(WIDOWX_URDF), "--chunk", "37", "--out", str(tmp_path / "b.npz")]) == 0
    a, b = np.load(tmp_path / "a.npz"), np.load(tmp_path / "b.npz")
    assert sorted(a.files) == ["converged", "pos_err", "q", "rot_err"] and a["q"].shape == (300, widowx.n_dofs)
    for key in a.files:
        np.testing.assert_array_equal(a[key], b[key])
    assert a["converged"].all()
    data = np.load(targets_file)
    pos, _ = widowx.forward_kinematics(a["q"], ["ee_gripper_link"])
    assert np.abs(pos[:, 0] - data["pos"]).max() < 1e-4  # FK of the answers, not the solver's word


@pytest.mark.parametrize("arrays, message", [
    ({"pos": np.zeros((4, 3))}, r"missing array\(s\) \['quat'\]"),
    ({"pos": np.zeros((4, 3)), "quat": np.zeros((3, 4))}, r"quat must be .*shape \(n, 4\).*got float64 \(3, 4\)"),
    ({"pos": np.zeros((4, 2)), "quat": np.zeros((4, 4))}, r"pos must be .*shape \(n, 3\)"),
    ({"pos": np.full((2, 3), np.nan), "quat": np.ones((2, 4))}, r"pos has non-finite entries \(first at row 0\)"),
    ({"pos": np.zeros((2, 3)), "quat": np.ones((2, 4)), "init_qpos": np.zeros((2, 3))}, r"init_qpos must be .*\(n, 8\)"),
    ({"pos": np.zeros((2, 3)), "quat": np.ones((2, 4)), "init_qpos": np.full((2, 8), 9.0)},
     r"bad\.npz: init_qpos\[0\]: DOF 'joint_0' = 9 is outside its joint window"),  # used to be clipped silently
    ({"pos": np.zeros((2, 3)), "quat": np.array([[1.0, 0, 0, 0], [0, 0, 0, 0]])},
     r"bad\.npz: quat row 1 is zero"),  # used to name neither the file nor the row
    ({"pos": np.zeros((2, 3)), "quat": np.ones((2, 4)), "weights": np.ones(2)},
     r"bad\.npz: unknown array\(s\) \['weights'\]"),  # used to be ignored
])
def test_malformed_files_name_the_array_and_the_shape(tmp_path, widowx, arrays, message):
    path = tmp_path / "bad.npz"
    np.savez(path, **arrays)
    with pytest.raises(InputError, match=message):
        read_targets(path, widowx)


def test_cli_exits_2_with_one_line_for_a_bad_file(tmp_path, capsys):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    assert main([str(bad), "--out", str(tmp_path / "o.npz")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a readable .npz file" in err[0]
    assert not (tmp_path / "o.npz").exists()


@pytest.mark.slow
def test_two_ray_workers_give_the_answers_of_one_process(targets_file, tmp_path, shared_ray):
    assert main([str(targets_file), "--urdf", str(WIDOWX_URDF), "--out", str(tmp_path / "a.npz")]) == 0
    assert main([str(targets_file), "--urdf", str(WIDOWX_URDF), "--workers", "2", "--chunk", "64",
                 "--out", str(tmp_path / "b.npz")]) == 0
    a, b = np.load(tmp_path / "a.npz"), np.load(tmp_path / "b.npz")
    for key in a.files:
        np.testing.assert_array_equal(a[key], b[key])


def test_a_single_array_file_and_a_truncated_archive_are_clear_errors(tmp_path, widowx):
    single = tmp_path / "pos.npy"
    np.save(single, np.zeros((3, 3)))
    with pytest.raises(InputError, match="an .npz archive of named arrays is needed"):
        read_targets(single, widowx)
    full = tmp_path / "full.npz"
    np.savez(full, pos=np.zeros((3, 3)), quat=np.ones((3, 4)))
    cut = tmp_path / "cut.npz"
    cut.write_bytes(full.read_bytes()[:60])
    with pytest.raises(InputError, match="not a readable .npz file"):
        read_targets(cut, widowx)


def test_collision_free_solve_keeps_clear_of_a_box_by_pybullets_measure(tmp_path, widowx):
    """--min-distance with a --box: answers marked collision_free keep every link 1 cm from the box by PyBullet's
    closest points; a target inside the box is never marked clear."""
    import pybullet as pb

    from app.sim.urdf_loader import load_urdf
    q = np.array([[0.3, 1.0, 0.8, -0.4, 0.2, 0.1, 0.02, 0.02], [-0.5, 1.2, 0.9, -0.5, 0.0, 0.0, 0.02, 0.02]])
    pos, quat = widowx.forward_kinematics(q, ["ee_gripper_link"])
    box = (0.05, 0.05, 0.05, *pos[1, 0])  # around the second target's gripper
    path = tmp_path / "t.npz"
    np.savez(path, pos=pos[:, 0], quat=quat[:, 0])
    out = tmp_path / "o.npz"
    assert main([str(path), "--urdf", str(WIDOWX_URDF), "--min-distance", "0.005", "--box", *map(str, box),
                 "--out", str(out)]) == 0
    got = np.load(out)
    assert got["collision_free"].tolist() == [True, False]
    assert got["converged"].tolist() == [True, True]  # reaching the second target is possible, only in collision
    assert got["pos_err"][0] < 1e-3 and got["rot_err"][0] < 1e-2
    client = pb.connect(pb.DIRECT)
    try:
        body = load_urdf(client, str(WIDOWX_URDF))
        box_id = pb.createMultiBody(0, pb.createCollisionShape(pb.GEOM_BOX, halfExtents=box[:3], physicsClientId=client),
                                    -1, box[3:], physicsClientId=client)
        for name, value in zip(widowx.dof_names, got["q"][0]):
            pb.resetJointState(body.body_id, body.joint_index[name], value, physicsClientId=client)
        closest = [pt[8] for pt in pb.getClosestPoints(body.body_id, box_id, 0.1, physicsClientId=client)]
        assert min(closest, default=np.inf) >= 0.005
    finally:
        pb.disconnect(client)


def test_a_box_without_min_distance_is_an_error(targets_file, tmp_path, capsys):
    assert main([str(targets_file), "--box", "0.1", "0.1", "0.1", "0", "0", "0", "--out", str(tmp_path / "o.npz")]) == 2
    assert "--box needs --min-distance" in capsys.readouterr().err.strip().splitlines()[-1]


def test_the_default_robot_is_found_from_any_working_directory(targets_file, tmp_path, monkeypatch):
    """The default --urdf was relative to the working directory: outside the project it was 'not found'."""
    monkeypatch.chdir(tmp_path)
    assert main([str(targets_file), "--out", "a.npz"]) == 0
    assert np.load(tmp_path / "a.npz")["converged"].all()
