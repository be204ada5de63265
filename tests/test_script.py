"""The waypoint script task: targets between rows (linear position, shortest rotation), the gripper's value
per row, and the shipped script moving a cube by friction alone."""

import json

import numpy as np
from scipy.spatial.transform import Rotation

from app.config.loader import load_run_config
from app.control.script import ScriptMotion, ScriptPlayer, ScriptRow
from app.episode.execute import execute
from tests.conftest import ROOT


def test_script_targets_interpolate_between_rows_and_hold_the_last():
    q0 = (1.0, 0.0, 0.0, 0.0)
    q1 = tuple(Rotation.from_euler("z", 1.0).as_quat()[[3, 0, 1, 2]])
    task = ScriptMotion((ScriptRow(0.0, (0.3, 0.0, 0.1), q0, 0.0), ScriptRow(2.0, (0.3, 0.2, 0.1), q1, 1.0)))
    motion = ScriptPlayer(task, 3, np.array([0.0, 0.0, 0.05]))
    mid = motion(1.0)
    assert mid.pos.shape == (3, 1, 3) and np.allclose(mid.pos[:, 0], [0.3, 0.1, 0.15])
    assert np.allclose(mid.vel[:, 0], [0.0, 0.1, 0.0])
    angle = Rotation.from_quat(mid.quat[0, 0][[1, 2, 3, 0]]).as_euler("xyz")[2]
    assert np.isclose(angle, 0.5)
    late = motion(5.0)
    assert np.allclose(late.pos[:, 0], [0.3, 0.2, 0.15]) and np.allclose(late.vel, 0.0)
    assert motion.closing_at(1.9).tolist() == [0.0] * 3 and motion.closing_at(2.0).tolist() == [1.0] * 3


def test_shipped_script_carries_the_cube_to_its_last_rows(tmp_path):
    run = load_run_config(ROOT / "configs" / "script_pick.yaml", n_envs=1)
    result = execute(run, tmp_path, video=False, show_progress=False)
    final = result.objects["cube"]["final_pos"][0]
    assert np.linalg.norm(final[:2] - [0.3, 0.1]) < 0.01 and abs(final[2] - 0.025) < 2e-3
    assert result.summary["reached"] == 1
    start = result.objects["cube"]["start_pos"][0]
    carried = np.linalg.norm(final[:2] - start[:2])  # the fingers held it all that way: the report says for how long
    held = json.loads((tmp_path / "report.json").read_text())["environments"][0]["gripper"]["held_s"]
    assert carried > 0.1 and held > carried / 0.5, (carried, held)  # no faster than 0.5 m/s while held
