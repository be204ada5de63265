"""LeRobot v2.1 (Trossen's layout and units), ACT HDF5, unit conversion and detection."""

import json
import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from app.dataset import convert, dataset_units, detect_units, load_dataset, read_act, trossen_names, write_act_episode
from app.errors import DatasetError


def _radians_episode(n: int, n_arms: int, seed: int) -> np.ndarray:
    """A plausible WidowX AI trajectory (n, 7 * n_arms): joints inside their limits [rad], gripper 0..0.044 m."""
    rng = np.random.default_rng(seed)
    lo = np.array([-3.0, 0.0, 0.0, -1.5, -1.5, -3.0, 0.0])
    hi = np.array([3.0, 3.1, 2.3, 1.5, 1.5, 3.0, 0.044])
    start, end = rng.uniform(lo, hi, (2, n_arms, 7))
    s = np.linspace(0.0, 1.0, n)[:, None, None]
    return (start + (end - start) * s).reshape(n, 7 * n_arms)


def _write_v21(root, episodes: list[np.ndarray], fps: int, names: list[str]) -> None:
    """A LeRobot v2.1 dataset as Trossen's fork lays it out (written here by hand, independent of our writer)."""
    feature = {"dtype": "float32", "shape": [len(names)], "names": names}
    info = {"codebase_version": "v2.1", "robot_type": "trossen_ai_stationary", "total_episodes": len(episodes),
            "total_frames": sum(map(len, episodes)), "total_tasks": 1, "total_videos": 0, "total_chunks": 1,
            "chunks_size": 1000, "fps": fps, "splits": {"train": f"0:{len(episodes)}"},
            "data_path": "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet",
            "video_path": "videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4",
            "features": {"observation.state": feature, "action": feature,
                         "timestamp": {"dtype": "float32", "shape": [1], "names": None},
                         "frame_index": {"dtype": "int64", "shape": [1], "names": None},
                         "episode_index": {"dtype": "int64", "shape": [1], "names": None},
                         "index": {"dtype": "int64", "shape": [1], "names": None},
                         "task_index": {"dtype": "int64", "shape": [1], "names": None}}}
    (root / "meta").mkdir(parents=True)
    (root / "data/chunk-000").mkdir(parents=True)
    (root / "meta/info.json").write_text(json.dumps(info))
    (root / "meta/tasks.jsonl").write_text(json.dumps({"task_index": 0, "task": "handover"}) + "\n")
    lines, start = [], 0
    for index, values in enumerate(episodes):
        n = len(values)
        lines.append(json.dumps({"episode_index": index, "tasks": ["handover"], "length": n}))
        vec = pa.array(values.astype(np.float32).tolist(), pa.list_(pa.float32()))
        pq.write_table(pa.table({"observation.state": vec, "action": vec,
                                 "timestamp": pa.array(np.arange(n, dtype=np.float32) / fps),
                                 "frame_index": np.arange(n), "episode_index": np.full(n, index),
                                 "index": start + np.arange(n), "task_index": np.zeros(n, dtype=np.int64)}),
                       root / f"data/chunk-000/episode_{index:06d}.parquet")
        start += n
    (root / "meta/episodes.jsonl").write_text("\n".join(lines) + "\n")


def test_v21_dataset_in_trossen_units_reads_and_its_units_are_detected(tmp_path):
    """Two arms in degrees and metres x 10000: read back as stored, detected as trossen, converted to the
    radians and metres they were made from."""
    si = [_radians_episode(45, 2, seed) for seed in (1, 2)]
    _write_v21(tmp_path / "ds", [convert(e, "si", "trossen") for e in si], 30, trossen_names(2))
    ds = load_dataset(tmp_path / "ds")
    assert (ds.format, ds.fps, ds.state_names[7]) == ("lerobot-v2.1", 30.0, "right_joint_0")
    assert [len(e.state) for e in ds.episodes] == [45, 45] and ds.episodes[1].task == "handover"
    guess = dataset_units(ds)
    assert guess.units == "trossen" and "gripper" in guess.reason
    for episode, original in zip(ds.episodes, si):
        np.testing.assert_allclose(convert(episode.action, "trossen", "si"), original, atol=1e-5)
        np.testing.assert_allclose(episode.timestamp, np.arange(45) / 30, atol=1e-6)


def test_units_detection_says_si_for_radians_and_trossen_for_degrees_with_closed_grippers():
    """SI values stay SI; degrees are found from the joints alone when every gripper reads 0."""
    si = _radians_episode(60, 1, 3)
    assert detect_units(si).units == "si"
    degrees = convert(si, "si", "trossen")
    degrees[:, 6] = 0.0
    guess = detect_units(degrees)
    assert guess.units == "trossen" and "joint column" in guess.reason


def test_trossen_conversion_is_degrees_and_gripper_times_10000():
    """One arm: joint 90 deg <-> pi/2 rad, gripper 440 <-> 0.044 m; conversion round-trips."""
    values = np.array([[90.0, -45.0, 0.0, 10.0, 20.0, 30.0, 440.0]])
    si = convert(values, "trossen", "si")
    np.testing.assert_allclose(si[0, [0, 1, 6]], [math.pi / 2, -math.pi / 4, 0.044])
    np.testing.assert_allclose(convert(si, "si", "trossen"), values)
    with pytest.raises(DatasetError, match="allowed"):
        convert(values, "si", "imperial")


def test_act_hdf5_round_trip_keeps_arrays_images_rate_and_names(tmp_path):
    """Two episode files written, the folder read back in natural order with everything equal."""
    rng = np.random.default_rng(0)
    written = []
    for index, n in ((2, 12), (10, 9)):  # natural order: episode_2 before episode_10
        qpos = _radians_episode(n, 1, index)
        images = {"cam_high": rng.integers(0, 255, (n, 8, 10, 3), dtype=np.uint8)}
        write_act_episode(tmp_path / f"episode_{index}.hdf5", qpos, np.gradient(qpos, axis=0) * 50, qpos + 0.01,
                          images, fps=50)
        written.append((qpos, images))
    ds = read_act(tmp_path)
    assert (ds.format, ds.fps, ds.cameras, ds.state_names) == ("act-hdf5", 50.0, ("cam_high",),
                                                              tuple(trossen_names(1)))
    for episode, (qpos, images) in zip(ds.episodes, written, strict=True):
        np.testing.assert_array_equal(episode.state, qpos)
        np.testing.assert_array_equal(episode.action, qpos + 0.01)
        np.testing.assert_array_equal(episode.images["cam_high"], images["cam_high"])
    assert load_dataset(tmp_path / "episode_10.hdf5").episodes[0].state.shape == (9, 7)


def test_a_folder_of_neither_format_is_a_one_line_error(tmp_path):
    """No meta/info.json and no *.hdf5: the error names both layouts."""
    with pytest.raises(DatasetError, match="neither a LeRobot dataset"):
        load_dataset(tmp_path)


def test_image_stats_from_histograms_equal_the_pixels_own_and_aggregation_pools_exactly():
    """Per-channel image stats (histogram) equal numpy's over the pixels; episode stats aggregated equal the
    stats of the episodes joined (min, max, mean, std, count)."""
    from app.dataset.stats import aggregate, image_stats, vector_stats
    rng = np.random.default_rng(0)
    frames = rng.integers(0, 256, (30, 40, 50, 3), dtype=np.uint8)
    pixels = vector_stats(frames.reshape(-1, 3) / 255.0)
    for key, value in image_stats(frames).items():
        if key != "count":
            np.testing.assert_allclose(value.ravel(), pixels[key], atol=1e-12, err_msg=key)
    parts = [rng.normal(i, 1 + i, (n, 7)) for i, n in enumerate((5, 17, 40))]
    pooled, joined = aggregate([vector_stats(p) for p in parts]), vector_stats(np.vstack(parts))
    for key in ("min", "max", "mean", "std", "count"):
        np.testing.assert_allclose(pooled[key], joined[key], rtol=1e-12, err_msg=key)


def test_two_arm_names_map_onto_the_stationary_ai_and_one_arm_onto_the_widowx():
    """Trossen's Stationary AI URDF: left_joint_i -> follower_left_joint_i, each gripper -> both carriage
    joints of its arm; recorded rows come back as the DOFs' values (fingers averaged)."""
    from app.dataset.robot_map import map_to_robot, robot_layout, values_from_dofs
    from app.kinematics.urdf import parse_urdf
    from tests.conftest import require_reference
    urdf = require_reference() / "trossen_arm_description/urdf/stationary_ai.urdf"
    dofs = [j.name for j in parse_urdf(urdf).joints if j.type in ("revolute", "prismatic", "continuous")]
    names, dof_map = robot_layout(dofs)
    assert names == trossen_names(2)
    mapped = {names[c]: dofs[d] for c, d in zip(dof_map.columns, dof_map.dofs)}
    assert mapped["left_joint_3"] == "follower_left_joint_3" and mapped["right_joint_0"] == "follower_right_joint_0"
    grippers = sorted(dofs[d] for c, d in zip(dof_map.columns, dof_map.dofs) if names[c] == "right_joint_6")
    assert grippers == ["follower_right_left_carriage_joint", "follower_right_right_carriage_joint"]
    q = np.arange(len(dofs), dtype=float)[None]
    row = values_from_dofs(q, dof_map, 14)
    assert row[0, 9] == dofs.index("follower_right_joint_2") and row[0, 6] == np.mean(
        [dofs.index("follower_left_left_carriage_joint"), dofs.index("follower_left_right_carriage_joint")])
    with pytest.raises(DatasetError, match="exactly one robot DOF ending in 'joint_0'"):
        map_to_robot(trossen_names(1), dofs)
