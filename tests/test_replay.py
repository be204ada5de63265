"""app.replay: a recorded episode played through the motors reproduces the recorded end-effector path."""

import json

import numpy as np
import pybullet as pb
import pytest

from app.config.loader import load_run_config
from app.dataset import DatasetSpec, EpisodeFrames, LeRobotWriter, convert, trossen_names
from app.episode.scene_build import build_scene
from app.replay import main
from tests.conftest import ROOT
from tests.test_dataset_formats import _write_v21

CONFIG = str(ROOT / "configs/single_ik.yaml")
FPS, N = 30, 45


@pytest.fixture(scope="module")
def recording():
    """A 1.5 s episode recorded in the simulator itself as app.record does: each frame the joints are read
    (state) while the motors follow a smooth path; action = the next frame's state. PyBullet's own
    ee_gripper_link position at each frame is kept."""
    run = load_run_config(CONFIG, n_envs=1)
    scene, robot = build_scene(run)
    try:
        q0 = robot.read_states()[0][0]
        goal = q0 + np.array([0.5, -0.3, 0.4, 0.3, -0.4, 0.6, -0.01, -0.01])
        s = np.linspace(0.0, 1.0, N)[:, None]
        path = q0 + (goal - q0) * (10 * s**3 - 15 * s**4 + 6 * s**5)
        body, link = robot.bodies[0].body_id, robot.bodies[0].link_index["ee_gripper_link"]
        state, ee = np.empty_like(path), np.empty((N, 3))
        qdot = np.vstack([np.diff(path, axis=0) * FPS, np.zeros((1, 8))])
        for k in range(N):
            state[k] = robot.read_states()[0][0]
            ee[k] = pb.getLinkState(body, link, computeForwardKinematics=1, physicsClientId=robot.client)[4]
            robot.control_dofs_position(path[k], velocity=qdot[k])
            for _ in range(int(run.scene_config.physics_hz) // FPS):
                scene.step()
    finally:
        scene.close()
    state = state[:, :7]  # the dataset's 7 values: six joints and one finger (both fingers alike)
    return state, np.vstack([state[1:], state[-1:]]), ee


def _replay(tmp_path, dataset, *extra) -> tuple[int, dict]:
    out = tmp_path / "out"
    code = main([str(dataset), "--config", CONFIG, "--out", str(out), *extra])
    return code, (json.loads((out / "replay.json").read_text()) if code == 0 else {})


def test_replaying_a_recorded_v30_episode_reproduces_its_end_effector_path_within_1mm(tmp_path, recording):
    """Recorded state, action -> LeRobot v3.0 -> replay: end effector within 1 mm of PyBullet's recorded one."""
    state, action, ee = recording
    names = tuple(trossen_names(1))
    writer = LeRobotWriter(tmp_path / "ds", DatasetSpec(FPS, "trossen_ai_solo", names, names))
    writer.append(EpisodeFrames("reach", state, action, {}))
    code, report = _replay(tmp_path, tmp_path / "ds", "--units", "auto")
    assert code == 0 and report["units"]["units"] == "si"
    got = np.array(report["per_frame"]["ee_pos"])
    assert np.linalg.norm(got - ee, axis=1).max() < 1e-3
    assert report["summary"]["ee_gap_max_m"] < 1e-3 and report["summary"]["limit_excess_max"] == 0.0
    assert (tmp_path / "out/replay.png").stat().st_size > 0


def test_a_v21_episode_in_trossen_units_replays_with_its_units_detected(tmp_path, recording, caplog):
    """The same episode in degrees and metres x 10000, v2.1 layout: detected as trossen, same path."""
    state, action, ee = recording
    _write_v21(tmp_path / "v21", [convert(action, "si", "trossen")], FPS, trossen_names(1))
    with caplog.at_level("INFO", logger="app.replay"):
        code, report = _replay(tmp_path, tmp_path / "v21")
    assert code == 0 and report["units"]["units"] == "trossen"
    assert any("units: trossen" in r.getMessage() for r in caplog.records)
    assert np.linalg.norm(np.array(report["per_frame"]["ee_pos"]) - ee, axis=1).max() < 1e-3


def test_a_two_arm_dataset_on_one_arm_is_a_one_line_error(tmp_path, capsys, caplog):
    """14 values (left/right) against the WidowX AI: exit 2, the last stderr line says what was expected, and
    nothing about the dataset's units is said before the refusal."""
    values = np.zeros((5, 14))
    _write_v21(tmp_path / "two", [values], FPS, trossen_names(2))
    with caplog.at_level("INFO", logger="app.replay"):
        code, _ = _replay(tmp_path, tmp_path / "two")
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2 and last.startswith("error:") and "'left' arm needs exactly one robot DOF" in last
    assert not any("units:" in r.getMessage() for r in caplog.records)


def test_a_recorded_pick_and_place_episode_replays_within_1mm(tmp_path):
    """app.record of one pick-and-place episode, then app.replay of it in the same scene: the end effector
    stays within 1 mm of FK of the recorded state throughout, grasp and carry included."""
    from app.record import main as record

    config = str(ROOT / "configs/pick_place.yaml")
    assert record([config, "--cameras", "none", "--episodes", "1", "--out", str(tmp_path / "ds"), "--keep-failed"]) == 0
    code = main([str(tmp_path / "ds"), "--config", config, "--out", str(tmp_path / "out")])
    report = json.loads((tmp_path / "out/replay.json").read_text())
    assert code == 0 and report["summary"]["frames"] == 240
    assert report["summary"]["ee_gap_max_m"] < 1e-3 and report["summary"]["frames_with_contacts"] > 0
    motion = report["motion"]  # the recorded commands against the replayed joints: six arm joints, no fingers
    assert list(motion["joints"]) == [f"joint_{j}" for j in range(6)] and motion["duration_s"] == pytest.approx(8.0)
    assert report["summary"]["motion"].startswith(f"motion: {int(motion['verdict'] == 'smooth')}/1 smooth")


def test_each_replay_panel_names_the_robot_dof_it_shows():
    """The gripper's one column drives both fingers: two panels, each named by its own finger joint."""
    from app.dataset.joint_names import trossen_names
    from app.ik.robot_model import RobotModel
    from app.replay import panel_labels
    from tests.conftest import WIDOWX_URDF

    labels = panel_labels(list(trossen_names(1)), list(RobotModel.from_urdf(str(WIDOWX_URDF)).dof_names))
    assert len(labels) == len(set(labels)) == 8
    assert sum("(main_joint_6)" in label for label in labels) == 2
