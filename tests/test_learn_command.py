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
    assert "--policy.chunk_size=50" in command and "--policy.chunk_size=20" not in command
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
