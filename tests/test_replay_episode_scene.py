"""app.replay re-enacts a recorded pick-and-place episode in the episode's own scene (#38 item 3): the cube
starts where the recording drew it (meta/episode_scenes.jsonl), the gripper touches it and it ends within 1 cm
of where the recording left it (observation.environment_state); a dataset without scene state is said to be so;
the replay writes a video as app.run does."""

import json
import shutil

import numpy as np
import pytest
import yaml

from app.dataset import load_dataset
from app.record import main as record
from app.replay import main as replay
from tests.conftest import ROOT

CONFIG = str(ROOT / "configs/pick_place.yaml")
SEEDS = {3: 2, 11: 2}  # seed -> episodes recorded with it
RANDOMIZED = {"objects": {"size_scale": [0.85, 1.1], "mass_scale": [0.7, 1.5], "friction": [0.7, 1.2]},
              "gripper": {"force": [3, 6]}}


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    """A recording of configs/pick_place.yaml per seed (no cameras): seed -> its folder; "randomized": two
    episodes with the cube's size, mass and friction and the gripper's force drawn per episode."""
    root = tmp_path_factory.mktemp("replay_scene")
    out = {}
    for seed, n in SEEDS.items():
        out[seed] = root / f"seed{seed}"
        assert record([CONFIG, "--cameras", "none", "--episodes", str(n), "--seed", str(seed), "--out", str(out[seed]), "--keep-failed"]) == 0
    run = yaml.safe_load(open(CONFIG))
    run.update(scene=str(ROOT / run["scene"]), randomization=RANDOMIZED)
    (root / "randomized.yaml").write_text(yaml.safe_dump(run))
    out["randomized"] = root / "randomized"
    assert record([str(root / "randomized.yaml"), "--cameras", "none", "--episodes", "2", "--seed", "5", "--out", str(out["randomized"]),
                   "--keep-failed"]) == 0
    return out


def _replay(dataset, episode: int, out, *extra, config: str = CONFIG) -> dict:
    assert replay([str(dataset), "--episode", str(episode), "--config", config, "--out", str(out), *extra]) == 0
    return json.loads((out / "replay.json").read_text())


def test_a_recording_keeps_each_episodes_object_poses_as_its_environment_state(datasets):
    """observation.environment_state: the cube's pose per frame, named cube.x .. cube.qz, then the place target
    (place_target.x, .y: a policy must see where the cube goes); the first row's pose is the start the episode's
    scene line gives, and every row's target is the line's."""
    dataset = load_dataset(datasets[3])
    assert dataset.environment_names == ("cube.x", "cube.y", "cube.z", "cube.qw", "cube.qx", "cube.qy", "cube.qz",
                                         "place_target.x", "place_target.y")
    lines = [json.loads(t) for t in (datasets[3] / "meta/episode_scenes.jsonl").read_text().splitlines()]
    for episode, line in zip(dataset.episodes, lines):
        assert episode.environment_state.shape == (len(episode.state), 9)
        assert np.allclose(episode.environment_state[0, :3], line["objects"]["cube"]["pos"], atol=2e-3)
        assert np.allclose(episode.environment_state[:, 7:], line["place_xy"], atol=1e-6)
        assert line["bodies"]["cube"]["mass"] == 0.05 and line["bodies"]["cube"]["size"] == [0.05, 0.05, 0.05]


@pytest.mark.parametrize("seed, episode", [(3, 0), (3, 1), (11, 1), ("randomized", 1)])
def test_each_replayed_episode_touches_the_cube_and_leaves_it_within_1cm_of_the_recorded_end(
        datasets, tmp_path, seed, episode):
    """Two seeds' episodes, and a randomised one replayed with the plain config (its drawn size, mass, friction
    and gripper force come from its scene line: no note says a built body differs from the recorded one)."""
    report = _replay(datasets[seed], episode, tmp_path / "out", "--no-video")
    summary = report["summary"]
    assert summary["scene"] == "recorded" and report["scene_notes"] == []
    assert summary["frames_touching_objects"] > 10
    assert summary["object_end_error_max_m"] < 0.01
    assert not (tmp_path / "out/replay.mp4").exists()


def test_a_dataset_without_scene_state_is_replayed_with_a_warning_saying_so(datasets, tmp_path, caplog):
    """Another tool's recording (no meta/episode_scenes.jsonl): the replay still runs, in the config's own draw,
    and a warning says the objects do not start where the episode's did."""
    bare = tmp_path / "bare"
    shutil.copytree(datasets[11], bare)
    (bare / "meta/episode_scenes.jsonl").unlink()
    with caplog.at_level("WARNING", logger="app.replay"):
        summary = _replay(bare, 1, tmp_path / "out", "--no-video")["summary"]
    assert summary["scene"] == "config"
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("keeps no scene state" in w and "close on air" in w for w in warnings)


def test_a_replay_writes_the_video_beside_its_report_and_plot(datasets, tmp_path):
    """The replay's mp4 at the config's video size, one picture per dataset frame."""
    import imageio.v3 as iio

    run = yaml.safe_load(open(CONFIG))
    run["scene"] = str(ROOT / run["scene"])  # named from the repository root, as the config names it
    run["video"].update(width=160, height=120, workers=0)
    config = tmp_path / "small.yaml"
    config.write_text(yaml.safe_dump(run))
    _replay(datasets[3], 0, tmp_path / "out", config=str(config))
    frames = iio.imread(tmp_path / "out/replay.mp4")
    assert frames.shape == (240, 120, 160, 3)
    assert (tmp_path / "out/replay.png").stat().st_size > 0


def test_a_config_whose_cube_differs_from_the_recorded_one_is_said_to(datasets, tmp_path, caplog):
    """Replayed with a config whose cube weighs 80 g (recorded: 50 g): the replay runs, and a warning names the
    recorded and the built mass."""
    run = yaml.safe_load(open(CONFIG))
    run["scene"] = str(ROOT / run["scene"])
    run["scene_overrides"]["objects"][0]["mass"] = 0.08
    config = tmp_path / "heavy.yaml"
    config.write_text(yaml.safe_dump(run))
    with caplog.at_level("WARNING", logger="app.replay"):
        report = _replay(datasets[3], 0, tmp_path / "out", "--no-video", config=str(config))
    assert any("cube.mass: recorded 0.05, this config 0.08" in note for note in report["scene_notes"])
    assert any("cube.mass" in r.getMessage() for r in caplog.records if r.levelname == "WARNING")


def test_a_replay_ends_with_its_verdict_as_app_eval_replay_judges_it(datasets, tmp_path, caplog):
    """The last line says whether the episode succeeded again (a recorded success replays as one), replay.json
    holds the same verdict, and every excess line names its unit (and, where it exceeds, the joint and frame)."""
    from app.eval import main as evaluate

    caplog.set_level("INFO")
    report = _replay(datasets[3], 0, tmp_path / "out", "--no-video")
    lines = [r.getMessage() for r in caplog.records if r.name == "app.replay"]
    assert evaluate([CONFIG, "--replay", str(datasets[3]), "--episodes", "1", "--out", str(tmp_path / "eval")]) == 0
    judged = json.loads((tmp_path / "eval" / "eval_info.json").read_text())["per_episode"][0]
    assert report["verdict"]["success"] is judged["success"] is True
    assert lines[-1] == "replayed: success"
    excess = [s for s in lines if s.startswith(("limit_excess_max", "velocity_excess_max"))]
    assert len(excess) == 2 and all(" rad" in s or " m" in s for s in excess), excess
    assert report["summary"]["velocity_excess_at"]["unit"] in ("rad/s", "m/s")


def test_a_replay_without_a_task_to_judge_says_it_has_no_verdict_and_why(datasets, tmp_path, caplog):
    caplog.set_level("INFO")
    report = _replay(datasets[3], 0, tmp_path / "out", "--no-video", "--source", "state")
    last = [r.getMessage() for r in caplog.records if r.name == "app.replay"][-1]
    assert last.startswith("replayed: no verdict (--source state") and report["verdict"]["success"] is None


def test_an_excess_names_the_joint_and_frame_where_it_was_largest():
    from app.replay import summary_lines

    summary = {"frames": 3, "velocity_excess_max": 1.2265,
               "velocity_excess_at": {"joint": "left_joint_3", "frame": 12, "unit": "rad/s"},
               "limit_excess_max": 0.0, "limit_excess_at": {"joint": None, "frame": None, "unit": "rad"}}
    lines = summary_lines(summary)
    assert "velocity_excess_max: 1.226 rad/s beyond left_joint_3's velocity bound at frame 12" in lines
    assert "limit_excess_max: 0 rad (every command within its joint limits)" in lines
