"""Seeded randomisation (``randomization:``): each episode draws its own values from its seed, the same values in any
worker or block, within the bounds the section gives; recordings write them per episode and two recordings of one
seed are identical; bad keys and values are errors naming the file and key."""

import json

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.config.loader import load_run_config
from app.episode.randomize import draw, episode_run, noisy, randomized
from app.errors import ConfigError, InputError
from app.record import main
from app.recording.blocks import Sink, record_block
from tests.conftest import ROOT

RANDOMIZATION = {
    "lighting": {"direction_deg": 30, "color": [[0.7, 0.7, 0.7], [1, 1, 1]], "ambient": [0.3, 0.8],
                 "diffuse": [0.2, 0.6], "specular": [0.0, 0.2]},
    "colors": {"table": 0.1, "objects": 0.3},
    "cameras": {"position": 0.02, "target": 0.02, "rotation_deg": 3, "fov_deg": 4},
    "objects": {"size_scale": [0.9, 1.1], "mass_scale": [0.5, 2.0], "friction": [0.6, 1.2]},
    "gripper": {"force": [3.0, 6.0]},
    "noise": {"action_std": 0.002, "observation_std": 0.001},
}
CAMERAS = [{"name": "cam_high", "eye": [-0.1, 0.0, 0.7], "target": [0.35, 0.0, 0.0], "width": 32, "height": 24},
           {"name": "cam_wrist", "link": "ee_gripper_link", "offset_pos": [-0.08, 0.0, 0.05], "width": 32,
            "height": 24}]


def _config(tmp_path, randomization=RANDOMIZATION, where="run", **extra):
    """A short circle run on the pick-and-place scene (a gripper and a cube) with two tiny cameras."""
    run = yaml.safe_load((ROOT / "configs/single_ik.yaml").read_text())
    run.update(scene=str(ROOT / "scenes/pick_place.yaml"), duration=0.2, n_envs=3,
               scene_overrides={"cameras": CAMERAS}, **extra)
    if where == "run":
        run["randomization"] = randomization
    else:
        run["scene_overrides"]["randomization"] = randomization
    path = tmp_path / "rand.yaml"
    path.write_text(yaml.safe_dump(run))
    return path


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    return _config(tmp_path_factory.mktemp("cfg"))


@pytest.fixture(scope="module")
def run(path):
    return load_run_config(path)


def test_each_episode_draws_its_own_values_and_its_run_differs(run):
    """Three episodes draw three different sets of values, and each one's run carries them into its scene."""
    draws = [draw(run, e) for e in range(3)]
    assert all(json.dumps(a) != json.dumps(b) for i, a in enumerate(draws) for b in draws[i + 1:])
    cubes = [randomized(run, d).scene_config.objects[0] for d in draws]
    assert len({(c.mass, c.friction, c.size[0], c.rgba) for c in cubes}) == 3
    looks = [randomized(run, d).scene_config.look for d in draws]
    assert len({lk.light_direction for lk in looks}) == 3


def test_draws_depend_only_on_the_seed_and_the_episode_not_on_the_block(run, path):
    """An episode's draws are the same whether its run has 3 environments or 10 (another block layout), and change
    with the seed."""
    wider = load_run_config(path, n_envs=10)
    assert json.dumps(draw(run, 2)) == json.dumps(draw(wider, 2))
    other_seed = load_run_config(path, seed=7)
    assert json.dumps(draw(run, 2)) != json.dumps(draw(other_seed, 2))


def test_a_resized_object_still_rests_on_the_table(run):
    """A cube scaled by s starts with its bottom where the unscaled one's was (its centre moved by the change of its
    half height)."""
    base = run.scene_config.objects[0]
    for e in range(3):
        cube = randomized(run, draw(run, e)).scene_config.objects[0]
        assert cube.pos[2] - cube.size[2] / 2 == pytest.approx(base.pos[2] - base.size[2] / 2, abs=1e-12)


def test_the_scene_files_randomization_is_used_when_the_run_has_none(tmp_path, run):
    """A randomization: block in the scene (here through scene_overrides) draws the same values as the run's."""
    scene_run = load_run_config(_config(tmp_path, where="scene"))
    assert json.dumps(draw(scene_run, 1)) == json.dumps(draw(run, 1))


def _within(lo, hi, value, eps=1e-12):
    return np.all(np.asarray(value) >= np.asarray(lo) - eps) and np.all(np.asarray(value) <= np.asarray(hi) + eps)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2 ** 32 - 1), env=st.integers(0, 10 ** 6), size=st.floats(0.0, 0.5),
       tilt=st.floats(0.0, 80.0), force=st.floats(0.1, 10.0))
def test_drawn_values_stay_within_their_bounds(path, seed, env, size, tilt, force):
    """For any seed, episode and range: every drawn value lies within the range the section allows (the light's
    tilt from the look's direction, colours in [0, 1], scales, friction, force, camera shifts and fov)."""
    section = {**RANDOMIZATION, "objects": {"size_scale": [1 - size, 1 + size], "mass_scale": [0.5, 2.0],
                                            "friction": [0.6, 1.2]},
               "lighting": {**RANDOMIZATION["lighting"], "direction_deg": tilt}, "gripper": {"force": [0.1, force]}}
    r = load_run_config(path, {"randomization": section}, seed=seed)
    d = draw(r, env)
    base = np.array([0.35, -0.25, 1.0]) / np.linalg.norm([0.35, -0.25, 1.0])
    cos = np.clip(np.dot(d["lighting"]["light_direction"], base), -1, 1)
    assert np.degrees(np.arccos(cos)) <= tilt + 1e-6
    assert np.linalg.norm(d["lighting"]["light_direction"]) == pytest.approx(1.0)
    assert _within([0.7] * 3, [1] * 3, d["lighting"]["light_color"]) and 0.3 <= d["lighting"]["ambient"] <= 0.8
    assert _within(0, 1, d["colors"]["table_rgb"]) and _within(0, 1, d["colors"]["objects"]["cube"])
    cube = d["objects"]["cube"]
    assert 1 - size <= cube["size_scale"] <= 1 + size and 0.5 <= cube["mass_scale"] <= 2
    assert 0.6 <= cube["friction"] <= 1.2
    assert 0.1 <= d["gripper"]["force"][""] <= force
    cam = d["cameras"]["cam_high"]
    assert _within(np.subtract(CAMERAS[0]["eye"], 0.02), np.add(CAMERAS[0]["eye"], 0.02), cam["eye"])
    assert abs(cam["fov"] - 58.0) <= 4.0
    wrist = d["cameras"]["cam_wrist"]
    assert np.linalg.norm(wrist["offset_quat_wxyz"]) == pytest.approx(1.0)
    assert np.degrees(2 * np.arccos(min(1.0, abs(wrist["offset_quat_wxyz"][0])))) <= 3.0 + 1e-6


@pytest.mark.parametrize("text, message", [
    ({"lightning": {}}, "randomization: unknown key 'lightning'; did you mean 'lighting'?"),
    ({"objects": {"size_scale": [1.2, 0.9]}}, "randomization.objects.size_scale: must be [lo, hi] with lo <= hi"),
    ({"objects": {"mass_scale": [0.0, 2.0]}}, "randomization.objects.mass_scale: must be [lo, hi] with lo <= hi "
                                              "within (0, 100]"),
    ({"colors": {"table": -0.1}}, "randomization.colors.table: must be in [0, 1]"),
    ({"lighting": {"color": [[0.5, 0.5, 0.5], [1.2, 1, 1]]}}, "randomization.lighting.color: must be"),
    ({"cameras": {"fov_deg": 130}}, "randomization.cameras.fov_deg: must be in [0, 60] deg"),
    ({"gripper": {"force": [3, 500]}}, "randomization.gripper.force: must stay within the fingers' URDF effort"),
    ({"noise": {"action_std": "big"}}, "randomization.noise.action_std: expected a number"),
])
def test_bad_randomization_keys_and_values_are_errors_naming_the_file_and_key(tmp_path, text, message):
    """Each bad section fails to load with the file, the key path and what is allowed."""
    with pytest.raises(ConfigError) as info:
        load_run_config(_config(tmp_path, text))
    assert str(info.value).startswith("rand.yaml: ") and message in str(info.value)


def test_a_fov_jitter_that_would_leave_the_allowed_fields_of_view_is_an_error(tmp_path):
    """A camera of 170 deg jittered by 20 deg could reach 190: refused, naming the cameras' fields of view."""
    path = _config(tmp_path, {"cameras": {"fov_deg": 20}})
    run = yaml.safe_load(path.read_text())
    run["scene_overrides"]["cameras"][0]["fov"] = 170
    path.write_text(yaml.safe_dump(run))
    with pytest.raises(ConfigError, match=r"rand.yaml: randomization.cameras.fov_deg: the cameras' fields of view "
                                          r"\[170.0, 58.0\] \+- 20.0 must stay within \[1, 179\] deg"):
        load_run_config(path)


def test_noise_is_seeded_per_episode_and_only_on_the_recorded_columns(run):
    """The noise of an episode is the same every time, differs between episodes, and has about the given std."""
    state = np.zeros((2000, 7))
    s0, a0 = noisy(run, 0, state, state)
    s0b, _ = noisy(run, 0, state, state)
    s1, _ = noisy(run, 1, state, state)
    assert np.array_equal(s0, s0b) and not np.array_equal(s0, s1)
    assert np.std(s0) == pytest.approx(0.001, rel=0.05) and np.std(a0) == pytest.approx(0.002, rel=0.05)


def test_an_episode_scene_line_rebuilds_the_episodes_run_and_bad_draws_are_refused(run):
    """The draws as JSON (as episode_scenes.jsonl holds them) give back the episode's own run; draws naming a
    camera's values of the wrong shape are an InputError."""
    line = json.loads(json.dumps({"randomization": draw(run, 1)}))
    assert episode_run(run, line).scene_config == randomized(run, draw(run, 1)).scene_config
    assert episode_run(run, {}) is run
    line["randomization"]["cameras"]["cam_high"]["eye"] = [1, 2]
    with pytest.raises(InputError, match="do not fit this run's scene"):
        episode_run(run, line)


def test_two_recordings_with_one_seed_are_identical_and_their_episodes_differ(tmp_path):
    """app.record twice with the same seed: the same episode_scenes.jsonl (its randomization per episode) and the
    same data; the episodes' draws and frames differ from each other; an episode recorded in a block of its own (as
    another worker would) has the same states and frames as in the block of all."""
    path = _config(tmp_path)
    outs = [tmp_path / "a", tmp_path / "b"]
    for out in outs:
        assert main([str(path), "--episodes", "2", "--out", str(out), "--keep-failed"]) == 0
    lines = [(out / "meta/episode_scenes.jsonl").read_text() for out in outs]
    assert lines[0] == lines[1]
    scenes = [json.loads(t) for t in lines[0].splitlines()]
    assert [s["episode_index"] for s in scenes] == [0, 1] and scenes[0]["randomization"] != scenes[1]["randomization"]
    data = [b"".join(p.read_bytes() for p in sorted((out / "data").rglob("*.parquet"))) for out in outs]
    assert data[0] == data[1]
    block = record_block((load_run_config(path), np.arange(2), Sink(None)))
    frames = [e.images["observation.images.cam_high"][0] for e in block.episodes]
    assert not np.array_equal(frames[0], frames[1])
    alone = record_block((load_run_config(path), np.array([1]), Sink(None)))  # another worker's block: env 1 only
    a, b = block.episodes[1], alone.episodes[0]
    assert np.array_equal(a.state, b.state) and all(np.array_equal(a.images[k], b.images[k]) for k in a.images)


def test_a_rigs_two_grippers_each_draw_their_force_and_its_run_carries_them(tmp_path):
    """The Stationary AI's handover: each arm's gripper (a robot of a ``robots:`` rig) gets its own drawn force,
    within the bounds, in the episode's run (the rig's grippers were not seen: 'the scene has no gripper')."""
    run_yaml = yaml.safe_load((ROOT / "configs/handover.yaml").read_text())
    run_yaml.update(scene=str(ROOT / run_yaml["scene"]), randomization={"gripper": {"force": [3.0, 6.0]}})
    path = tmp_path / "hand.yaml"
    path.write_text(yaml.safe_dump(run_yaml))
    run = load_run_config(path)
    arms = sorted(run.scene_config.robot.arms)
    forces = draw(run, 0)["gripper"]["force"]
    assert sorted(forces) == arms and all(3.0 <= f <= 6.0 for f in forces.values())
    drawn = {g.arm: g.force for g in randomized(run, draw(run, 0)).scene_config.robot.grippers}
    assert drawn == forces
    assert draw(run, 1)["gripper"]["force"] != forces
