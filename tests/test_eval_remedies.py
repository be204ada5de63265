"""app.eval's remedies for jerky actions: the low-pass (--action-filter) blends each environment's actions as its
formula says and keeps an ee_pose action's quaternions unit and on one hemisphere; on a policy whose joint goal
jumps it lowers the commanded speed the motion report sees; a LeRobot policy's --n-action-steps and
--temporal-ensemble are checked against its config.json before any episode."""

from __future__ import annotations

import json

import numpy as np
import pytest

from app.errors import InputError
from app.eval import main
from app.evaluation.lerobot_policy import checked_overrides
from app.evaluation.smoothing import LowPassActions
from tests.conftest import ROOT

PICK = str(ROOT / "configs" / "pick_place.yaml")


class _Scripted:
    def __init__(self, actions):
        self.actions, self.k, self.resets = list(actions), 0, 0

    def reset(self):
        self.resets += 1

    def select_action(self, observation):
        self.k += 1
        return self.actions[self.k - 1]


def test_the_low_pass_blends_each_action_with_the_last_and_restarts_with_a_wave():
    steps = [np.zeros((2, 3)), np.ones((2, 3)), np.ones((2, 3))]
    policy = LowPassActions(_Scripted(steps + steps), 0.25, "joint")
    out = [policy.select_action({}) for _ in range(3)]
    np.testing.assert_allclose(out[1], 0.25)
    np.testing.assert_allclose(out[2], 0.25 + 0.25 * 0.75)  # 1 - (1 - alpha)^2 of the step
    policy.reset()
    assert policy.policy.resets == 1
    np.testing.assert_allclose(policy.select_action({}), 0.0)  # a new wave: nothing blended in


def test_the_low_pass_keeps_an_ee_pose_quaternion_unit_and_on_the_last_ones_hemisphere():
    q = np.array([1.0, 0.0, 0.0, 0.0])
    first = np.concatenate([[0.3, 0.0, 0.2], q, [0.0]])[None]
    flipped = np.concatenate([[0.3, 0.0, 0.2], -q, [1.0]])[None]  # the same rotation, the other sign
    policy = LowPassActions(_Scripted([first, flipped]), 0.5, "ee_pose")
    policy.select_action({})
    out = policy.select_action({})[0]
    np.testing.assert_allclose(out[3:7], q, atol=1e-7)  # not the zero a blind average would give
    assert out[7] == pytest.approx(0.5)


def test_a_filter_outside_0_1_is_refused():
    with pytest.raises(InputError, match=r"--action-filter must be in \(0, 1\]"):
        LowPassActions(_Scripted([]), 0.0, "joint")


def test_the_low_pass_lowers_the_commanded_speed_of_a_jumping_policy(tmp_path):
    ratios = {}
    for name, extra in (("raw", []), ("filtered", ["--action-filter", "0.2"])):
        assert main([PICK, "--policy", "tests.eval_policies:jumps_once", "--episodes", "1",
                     "--out", str(tmp_path / name)] + extra) == 0
        info = json.loads((tmp_path / name / "eval_info.json").read_text())
        ratios[name] = info["per_episode"][0]["motion"]["commanded_velocity_ratio"]
        assert info["remedies"]["action_filter"] == (None if name == "raw" else 0.2)
    assert ratios["filtered"] < 0.3 * ratios["raw"]


def _config(tmp_path, **fields):
    (tmp_path / "config.json").write_text(json.dumps(fields))
    return tmp_path


def test_lerobot_overrides_are_checked_against_the_policys_chunk(tmp_path):
    act = _config(tmp_path, type="act", chunk_size=40, n_action_steps=40)
    assert checked_overrides(act, 20, None) == (("n_action_steps", 20),)
    assert checked_overrides(act, None, 0.01) == (("temporal_ensemble_coeff", 0.01), ("n_action_steps", 1))
    with pytest.raises(InputError, match=r"--n-action-steps 41: must be 1\.\.40"):
        checked_overrides(act, 41, None)
    (tmp_path / "diffusion").mkdir()
    diffusion = _config(tmp_path / "diffusion", type="diffusion", horizon=16, n_obs_steps=2)
    assert checked_overrides(diffusion, 15, None) == (("n_action_steps", 15),)
    with pytest.raises(InputError, match="for an ACT policy"):
        checked_overrides(diffusion, None, 0.01)
