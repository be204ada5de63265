"""python -m app.eval: LeRobot's eval_info.json with our additions, the same seeds giving the same file, a recorded
dataset replayed to its recorded successes, random actions failing with reasons, and a failing policy as one
clear error that keeps the episodes finished before it."""

from __future__ import annotations

import json

import sys

import pytest

from app.eval import main
from app.evaluation.report import wilson_interval
from app.record import main as record_main
from tests.conftest import ROOT

PICK = str(ROOT / "configs" / "pick_place.yaml")
TIMINGS = ("eval_s", "eval_ep_s")


def _info(folder) -> dict:
    return json.loads((folder / "eval_info.json").read_text())


def _without_timings(info: dict) -> dict:
    return {**info, "aggregated": {k: v for k, v in info["aggregated"].items() if k not in TIMINGS}}


def test_the_expert_writes_lerobots_eval_info_with_an_interval_and_videos(tmp_path):
    assert main([PICK, "--policy", "expert", "--episodes", "3", "--num-envs", "2", "--videos", "1",
                 "--out", str(tmp_path)]) == 0
    info = _info(tmp_path)
    a = info["aggregated"]
    assert {"pc_success", "avg_sum_reward", "avg_max_reward", "eval_s", "eval_ep_s"} <= set(a)
    assert a["pc_success"] == 100.0 and a["n_episodes"] == 3 and a["failure_reasons"] == {}
    assert a["pc_success_ci95"] == list(wilson_interval(3, 3))
    assert [e["seed"] for e in info["per_episode"]] == [0, 1, 2]  # lerobot-eval's: seed + episode
    assert all(e["success"] and e["max_reward"] == 4.0 for e in info["per_episode"])
    assert info["video_paths"] == [str(tmp_path / "videos" / "eval_episode_0.mp4")] and info["complete"]


def test_two_evaluations_with_the_same_seeds_write_the_same_eval_info_but_for_timings(tmp_path):
    args = [PICK, "--policy", "expert", "--episodes", "3", "--num-envs", "2", "--seed", "7"]
    assert main(args + ["--out", str(tmp_path / "a")]) == 0
    assert main(args + ["--out", str(tmp_path / "b")]) == 0
    assert _without_timings(_info(tmp_path / "a")) == _without_timings(_info(tmp_path / "b"))


def test_random_actions_never_succeed_and_every_failure_has_a_reason(tmp_path):
    assert main([PICK, "--policy", "random", "--episodes", "4", "--out", str(tmp_path)]) == 0
    info = _info(tmp_path)
    assert info["aggregated"]["pc_success"] == 0.0
    assert sum(info["aggregated"]["failure_reasons"].values()) == 4
    assert all(e["reason"] for e in info["per_episode"])


def test_a_replayed_recording_reproduces_its_recorded_successes(tmp_path):
    data = tmp_path / "data"
    assert record_main([PICK, "--cameras", "none", "--episodes", "3", "--out", str(data), "--keep-failed"]) == 0
    recorded = [json.loads(line) for line in (data / "meta" / "episode_scenes.jsonl").read_text().splitlines()]
    assert [r["episode_index"] for r in recorded] == [0, 1, 2]
    assert main([PICK, "--replay", str(data), "--episodes", "3", "--out", str(tmp_path / "eval")]) == 0
    tasks = (data / "meta" / "tasks.parquet").read_bytes()
    assert b"failed" not in tasks  # every recorded episode succeeded ...
    assert [e["success"] for e in _info(tmp_path / "eval")["per_episode"]] == [True] * 3  # ... and so does its replay


def test_a_replay_refuses_a_dataset_without_its_episodes_scenes(tmp_path, capsys):
    data = tmp_path / "data"
    assert record_main([PICK, "--cameras", "none", "--episodes", "1", "--duration", "1", "--out", str(data), "--keep-failed"]) == 0
    (data / "meta" / "episode_scenes.jsonl").unlink()
    assert main([PICK, "--replay", str(data), "--episodes", "1", "--out", str(tmp_path / "eval")]) == 2
    assert "no scene recorded for episodes [0]" in capsys.readouterr().err.strip().splitlines()[-1]
    assert not (tmp_path / "eval" / "eval_info.json").exists()


@pytest.mark.parametrize("factory, words", [
    ("raises_later", "policy 'raises-later' raised at step 5 of episodes 2..3: RuntimeError: the network's weights are missing"),
    ("wrong_shape", "policy 'wrong-shape' at step 5 of episodes 2..3: actions must have shape (2, 7)"),
    ("nan_later", "policy 'nan-later' at step 5 of episodes 2..3: action value 2 of environment 0 is nan"),
    ("exits_later", "policy 'exits-later' called sys.exit(0) at step 5 of episodes 2..3"),
])
def test_a_failing_policy_is_one_line_naming_it_and_the_step_and_keeps_the_episodes_before(tmp_path, capsys,
                                                                                            factory, words):
    # the policy holds the arm through a first wave of two episodes (their time limit), then fails in the second
    assert main([PICK, "--policy", f"tests.eval_policies:{factory}", "--episodes", "4", "--num-envs", "2",
                 "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("error: ") and words in err
    info = _info(tmp_path)
    assert info["complete"] is False and words in info["error"]
    assert [e["episode_ix"] for e in info["per_episode"]] == [0, 1]
    assert all(e["reason"] == "not_touched" for e in info["per_episode"])


def test_a_policy_whose_reset_raises_is_one_line_naming_it_and_keeps_the_episodes_before(tmp_path, capsys):
    assert main([PICK, "--policy", "tests.eval_policies:reset_raises", "--episodes", "4", "--num-envs", "2",
                 "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "policy 'reset-raises' raised at reset() before episodes 2..3: ValueError: no checkpoint" in err, err
    assert [e["episode_ix"] for e in _info(tmp_path)["per_episode"]] == [0, 1]


@pytest.mark.parametrize("source, words", [
    ("import numpy as np\ndef make(env:\n    pass\n", "SyntaxError"),
    ("raise RuntimeError('no GPU here')\n", "cannot load it: RuntimeError: no GPU here"),
    ("import sys\nsys.exit(3)\n", "cannot load it: SystemExit: the policy called sys.exit(3)"),
])
def test_a_policy_module_that_cannot_be_imported_is_one_line_naming_it(tmp_path, capsys, monkeypatch, source, words):
    (tmp_path / "user_policy_mod.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "user_policy_mod", raising=False)
    assert main([PICK, "--policy", "user_policy_mod:make", "--episodes", "1", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("error: --policy 'user_policy_mod:make'") and words in err, err
    assert not (tmp_path / "o" / "eval_info.json").exists()


def test_a_factory_that_exits_is_one_line(tmp_path, capsys):
    assert main([PICK, "--policy", "tests.eval_policies:exits_in_factory", "--episodes", "1",
                 "--out", str(tmp_path)]) == 2
    assert "the factory raised SystemExit: the policy called sys.exit('bye')" in capsys.readouterr().err


def test_a_sigterm_that_lands_in_a_compiled_kernel_stops_the_evaluation_instead_of_failing_the_policy(
        tmp_path, capsys):
    """1 SIGTERM in 3 went on as "policy 'expert' raised ... SystemError" and wrote eval_info.json (exit 2)."""
    assert main([PICK, "--policy", "tests.eval_policies:signal_in_kernel", "--episodes", "4", "--num-envs", "2",
                 "--out", str(tmp_path)]) == 143
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("terminated (SIGTERM): stopped")
    assert not (tmp_path / "eval_info.json").exists()


def test_a_factory_that_returns_no_policy_is_refused_before_any_episode(tmp_path, capsys):
    assert main([PICK, "--policy", "tests.eval_policies:not_a_policy", "--episodes", "1",
                 "--out", str(tmp_path)]) == 2
    assert "has no select_action(observation) method" in capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize("args, words", [
    (["--policy", "expert", "--episodes", "0"], "--episodes must be 1..100000"),
    (["--policy", "nowhere", "--episodes", "1"], "give 'expert', 'random' or 'module:factory'"),
    (["--policy", "no_such_module:f", "--episodes", "1"], "cannot load it: ModuleNotFoundError"),
    (["--policy", "expert", "--episodes", "2", "--videos", "3"], "--videos must be 0..2"),
    (["--policy", "expert", "--episodes", "1", "--action-mode", "joint"], "the scripted expert acts in the ee_pose"),
    (["--lerobot-policy", "policies/act", "--episodes", "1"], "policies/act: no LeRobot policy there"),
    (["--policy", "expert", "--episodes", "1", "--action-filter", "0"], "--action-filter must be in (0, 1]"),
    (["--policy", "expert", "--episodes", "1", "--action-filter", "1.5"], "--action-filter must be in (0, 1]"),
    (["--policy", "expert", "--episodes", "1", "--n-action-steps", "5"], "give --lerobot-policy"),
    (["--policy", "expert", "--episodes", "1", "--temporal-ensemble", "0.01"], "give --lerobot-policy"),
])
def test_bad_arguments_are_one_line_errors_before_any_work(tmp_path, capsys, args, words):
    assert main([PICK] + args + ["--out", str(tmp_path / "out")]) == 2
    assert words in capsys.readouterr().err.strip().splitlines()[-1]
    assert not (tmp_path / "out" / "eval_info.json").exists()


def test_a_lerobot_policy_without_lerobot_installed_is_one_line_error_naming_what_to_install(
        tmp_path, capsys, monkeypatch):
    _policy_folder(tmp_path, {"observation.state": [7], "observation.images.cam_high": [3, 480, 640]}, 7)
    monkeypatch.setitem(sys.modules, "lerobot", None)  # as in a Python without lerobot, whatever this one has
    assert main([PICK, "--lerobot-policy", str(tmp_path), "--episodes", "1", "--out", str(tmp_path / "out")]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--lerobot-policy needs lerobot" in last and "pip install" in last
    assert not (tmp_path / "out" / "eval_info.json").exists()


def _policy_folder(root, reads: dict, acts: int):
    folder = root / "pretrained_model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({
        "type": "act", "input_features": {k: {"type": "STATE", "shape": v} for k, v in reads.items()},
        "output_features": {"action": {"type": "ACTION", "shape": [acts]}}}))
    (folder / "model.safetensors").write_bytes(b"")
    return folder


@pytest.mark.parametrize("reads, acts, says", [
    ({"observation.state": [7], "observation.environment_state": [7]}, 7, "'observation.environment_state' of shape (7,)"),
    ({"observation.state": [7], "observation.images.cam_low": [3, 224, 224]}, 7, "does not give"),
    ({"observation.state": [7], "observation.images.cam_high": [3, 96, 96]}, 7, "--image-size"),
    ({"observation.state": [7], "observation.environment_state": [9]}, 8, "acts with 8 values"),
])
def test_a_policy_folder_that_does_not_fit_the_environment_is_one_line_before_any_episode(
        tmp_path, capsys, reads, acts, says):
    """Checked from config.json alone (no lerobot needed): an old state-only policy trained without the place
    target, a camera the scene does not have, another image size, another action length."""
    _policy_folder(tmp_path, reads, acts)
    obs = "state" if "observation.environment_state" in reads else "pixels_agent_pos"
    code = main([PICK, "--lerobot-policy", str(tmp_path), "--obs-type", obs, "--episodes", "1",
                 "--out", str(tmp_path / "out")])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2 and says in last, last
    assert not (tmp_path / "out" / "eval_info.json").exists()


def test_the_wilson_interval_matches_its_textbook_values():
    assert wilson_interval(95, 100) == pytest.approx((88.82, 97.85), abs=2e-2)
    assert wilson_interval(0, 10) == pytest.approx((0.0, 27.753), abs=1e-3)
    assert wilson_interval(10, 10) == pytest.approx((72.247, 100.0), abs=1e-3)


def test_ray_workers_give_the_same_episodes_as_one_process(tmp_path, shared_ray):
    args = [PICK, "--policy", "expert", "--episodes", "4", "--num-envs", "2"]
    assert main(args + ["--out", str(tmp_path / "one")]) == 0
    assert main(args + ["--workers", "2", "--out", str(tmp_path / "two")]) == 0
    assert _info(tmp_path / "one")["per_episode"] == _info(tmp_path / "two")["per_episode"]


def test_an_out_folder_with_an_earlier_evaluation_is_refused_and_left_as_it_was(tmp_path, capsys):
    """The earlier run's videos were listed as this run's in eval_info.json."""
    assert main([PICK, "--policy", "random", "--episodes", "2", "--num-envs", "2", "--videos", "1",
                 "--out", str(tmp_path)]) == 0
    before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}
    assert main([PICK, "--policy", "random", "--episodes", "1", "--out", str(tmp_path)]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "holds an earlier evaluation (eval_info.json, videos/eval_episode_0.mp4)" in last
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")} == before


def test_each_episode_has_a_motion_verdict_smooth_for_the_expert_and_flagged_at_a_policys_jump(tmp_path):
    """app.quality through app.eval: the expert's and a holding policy's episodes are smooth; a policy whose joint
    goal jumps 0.6 rad at its 10th step (18 rad/s at 30 steps/s against the joint's 6.28) is flagged there, on that
    joint, as a commanded step, and the summary counts it."""
    assert main([PICK, "--policy", "expert", "--episodes", "2", "--out", str(tmp_path / "expert")]) == 0
    expert = _info(tmp_path / "expert")
    assert [e["motion"]["verdict"] for e in expert["per_episode"]] == ["smooth", "smooth"]
    assert expert["aggregated"]["motion"]["smooth"] == 2
    for name, verdict in (("hold", "smooth"), ("jumps_once", "flagged")):
        out = tmp_path / name
        assert main([PICK, "--policy", f"tests.eval_policies:{name}", "--episodes", "2", "--out", str(out)]) == 0
        episodes = _info(out)["per_episode"]
        assert [e["motion"]["verdict"] for e in episodes] == [verdict, verdict]
    first = episodes[0]["motion"]
    assert first["first"] in ("commanded velocity", "commanded step")
    assert "joint_0" in first["event"] and "t=0.333 s" in first["event"]
    assert first["commanded_velocity_ratio"] > 2.0
    assert _info(tmp_path / "jumps_once")["aggregated"]["motion"]["flagged_first_by"] == {first["first"]: 2}
