"""app.record: a run's environments become dataset episodes of the measured joints, in either format and unit
convention; failed episodes are left out or kept flagged."""

import numpy as np
import pytest

from app.config.loader import load_run_config
from app.dataset import convert, dataset_units, load_dataset, trossen_names
from app.record import main
from app.runner import run_targets
from tests.conftest import ROOT

CONFIG = str(ROOT / "configs/single_ik.yaml")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    out = tmp_path_factory.mktemp("rec") / "ds"
    assert main([CONFIG, "--episodes", "2", "--out", str(out)]) == 0
    return out


def test_recorded_episodes_are_the_measured_joints_and_end_on_the_target(recorded, widowx):
    """Two 4 s episodes at 30 fps in the one-arm layout; action k = state k + 1; FK of the last state (the
    WidowX AI's model, both fingers at the gripper value) is on the circle target of that time (5 mm)."""
    ds = load_dataset(recorded)
    run = load_run_config(CONFIG, n_envs=2)
    assert (ds.fps, ds.robot_type, ds.state_names) == (30.0, "trossen_ai_solo", tuple(trossen_names(1)))
    assert [len(e.state) for e in ds.episodes] == [120, 120] and {e.task for e in ds.episodes} == {"circle"}
    targets = run_targets(run)(119 / 30 + 1 / run.scene_config.physics_hz)
    for e in ds.episodes:
        np.testing.assert_allclose(e.action[:-1], e.state[1:], atol=1e-6)
        q = np.concatenate([e.state[-1], e.state[-1, 6:]])
        pos, _ = widowx.forward_kinematics(q, ["ee_gripper_link"])
        assert np.linalg.norm(pos[0] - targets.pos[e.index, 0]) < 5e-3


def test_act_hdf5_in_trossen_units_holds_the_same_episodes(recorded, tmp_path):
    """--format act-hdf5 --trossen-units: units detected as trossen; converted back, the same joints."""
    assert main([CONFIG, "--episodes", "2", "--out", str(tmp_path / "act"), "--format", "act-hdf5",
                 "--trossen-units"]) == 0
    act, lerobot = load_dataset(tmp_path / "act"), load_dataset(recorded)
    assert dataset_units(act).units == "trossen" and act.fps == 30.0
    for a, b in zip(act.episodes, lerobot.episodes, strict=True):
        np.testing.assert_allclose(convert(a.state, "trossen", "si"), b.state, atol=1e-5)


def test_failed_episodes_are_left_out_or_kept_flagged(tmp_path, caplog):
    """At 0.3 s no environment has reached its target: none written, each listed; --keep-failed keeps them
    with the reason in their task."""
    with caplog.at_level("WARNING", logger="app.record"):
        assert main([CONFIG, "--episodes", "2", "--duration", "0.3", "--out", str(tmp_path / "none")]) == 0
    assert [r.getMessage() for r in caplog.records] == [f"episode {k} failed: target not reached (left out)"
                                                        for k in (0, 1)]
    assert not (tmp_path / "none" / "meta").exists()
    assert main([CONFIG, "--episodes", "2", "--duration", "0.3", "--out", str(tmp_path / "kept"),
                 "--keep-failed"]) == 0
    assert {e.task for e in load_dataset(tmp_path / "kept").episodes} == {"circle [failed: target not reached]"}
