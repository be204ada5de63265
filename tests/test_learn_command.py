"""python -m app.learn without lerobot (CI has none): its refusals are one line before any work, and the trainer's
command line is lerobot-train's with our presets, which options after ``--`` override."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.learn import main, parse_args
from app.learning.training import PRESETS, train_command
from tests.conftest import ROOT

PICK = str(ROOT / "configs" / "pick_place.yaml")


def test_options_after_the_double_dash_reach_lerobot_train_and_win_over_the_presets():
    args = parse_args([PICK, "--episodes", "5", "--steps", "100", "--out", "x", "--", "--policy.chunk_size=50",
                       "--batch_size=8"])
    assert args.extra == ["--policy.chunk_size=50", "--batch_size=8"]
    command = train_command(Path("/d"), Path("/o"), "act", 100, 50, 3, args.extra)
    assert command[1:3] == ["-m", "lerobot.scripts.lerobot_train"]
    assert "--policy.chunk_size=50" in command and f"--policy.chunk_size={PRESETS['act']['chunk_size']}" not in command
    assert "--batch_size=8" in command and "--batch_size=32" not in command
    assert "--policy.use_vae=false" in command and "--seed=3" in command and "--save_freq=50" in command
    assert set(PRESETS) == {"act", "diffusion"}


def test_without_lerobot_it_is_one_line_naming_the_learn_extra_and_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "lerobot", None)  # as in a Python without lerobot, whatever this one has
    out = tmp_path / "run"
    assert main([PICK, "--episodes", "2", "--steps", "10", "--out", str(out)]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("error: app.learn needs lerobot and torch") and "pip install -e '.[learn]'" in last
    assert not out.exists()


@pytest.mark.parametrize("extra, words", [
    (["--steps", "0"], "--steps must be 1..10000000"),
    (["--steps", "10", "--eval-episodes", "0"], "--eval-episodes must be 1..10000"),
    (["--train-minutes", "-1"], "--train-minutes must be > 0"),
    (["--steps", "10", "--seed", "-4"], "--seed must be 0.."),
    (["--steps", "10", "--action-filter", "0"], "--action-filter must be in (0, 1]"),
])
def test_bad_options_are_one_line_before_any_work(tmp_path, capsys, extra, words):
    assert main([PICK, "--episodes", "2", *extra, "--out", str(tmp_path / "run")]) == 2
    assert words in capsys.readouterr().err.strip().splitlines()[-1]
    assert not (tmp_path / "run").exists()


def test_an_out_folder_that_is_not_empty_is_refused_and_left_as_it_was(tmp_path, capsys):
    (tmp_path / "mine.txt").write_text("keep")
    assert main([PICK, "--episodes", "2", "--steps", "10", "--out", str(tmp_path)]) == 2
    assert "not empty" in capsys.readouterr().err.strip().splitlines()[-1]
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]


def test_a_paused_trainer_makes_no_progress_and_its_pause_is_not_training_time(tmp_path):
    """The trainer is stopped while a checkpoint is evaluated: on 2 cores the two slowed each other many times
    over, and the time budget paid for the evaluations."""
    import time

    from app.learning.training import Trainer

    ticks = tmp_path / "ticks"
    child = (f"import time, pathlib\np = pathlib.Path({str(ticks)!r})\nfor i in range(100000):\n"
             "    p.write_text(str(i))\n    time.sleep(0.01)\n")
    trainer = Trainer([sys.executable, "-c", child], tmp_path / "train", tmp_path / "train.log")
    try:
        deadline = time.monotonic() + 30
        while not ticks.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        with trainer.paused():
            time.sleep(0.2)  # let a last write land
            before = ticks.read_text()
            time.sleep(0.5)
            assert ticks.read_text() == before  # stopped: no tick while paused
        assert trainer.paused_s >= 0.7 and trainer.running()
        deadline = time.monotonic() + 30
        while ticks.read_text() == before and time.monotonic() < deadline:
            time.sleep(0.01)
        assert ticks.read_text() != before  # continued
        assert trainer.minutes * 60 <= time.monotonic() - trainer.t0 - 0.7
    finally:
        trainer.stop()
    assert not trainer.running()


def test_act_decays_its_learning_rate_over_the_steps_or_the_minutes_budget():
    steps = train_command(Path("/d"), Path("/o"), "act", 30000, 5000, 0, [])
    assert "--use_policy_training_preset=false" in steps and "--scheduler.type=cosine_decay_with_warmup" in steps
    assert "--scheduler.num_decay_steps=30000" in steps and "--optimizer.lr=0.0001" in steps
    minutes = parse_args([PICK, "--episodes", "5", "--train-minutes", "55", "--out", "x"])
    from app.envs.options import EnvOptions
    from app.learn import _plan

    plan = _plan(minutes, None, EnvOptions("state", "ee_pose"), Path("/o"), Path("/d"))
    assert "--scheduler.num_decay_steps=18150" in plan.command  # 55 min at 5.5 steps/s
    given = train_command(Path("/d"), Path("/o"), "act", 100, 50, 0, ["--scheduler.num_decay_steps=7"])
    assert given.count("--scheduler.num_decay_steps=7") == 1 and "--scheduler.num_decay_steps=100" not in given
    assert not any(a.startswith("--scheduler") for a in train_command(Path("/d"), Path("/o"), "diffusion", 100, 50,
                                                                       0, []))
