"""A symmetric object's orientation observed modulo its symmetry (app.episode.object_state), and the expert's
least-turn grasp (task.grasp_choice): together they make the wrist yaw a policy must learn the observed yaw itself."""

from __future__ import annotations

import numpy as np
import pytest

import app.envs as envs
from app.config.loader import load_run_config
from app.errors import ConfigError
from app.kinematics.rotations import quat_conjugate, quat_multiply, quat_to_matrix, yaw_canonical
from app.specs.object_spec import ObjectSpec
from tests.conftest import ROOT

PICK = ROOT / "configs" / "pick_place.yaml"


def _rz(t: float) -> np.ndarray:
    return np.array([np.cos(t / 2), 0.0, 0.0, np.sin(t / 2)])


def _rx(t: float) -> np.ndarray:
    return np.array([np.cos(t / 2), np.sin(t / 2), 0.0, 0.0])


def _yaw(q: np.ndarray) -> float:
    return float(np.degrees(2 * np.arctan2(q[3], q[0])))


@pytest.mark.parametrize("deg, order, expected", [
    (60.0, 4, -30.0), (-60.0, 4, 30.0), (44.0, 4, 44.0), (-44.0, 4, -44.0), (135.0, 4, -45.0), (90.0, 4, 0.0),
    (120.0, 2, -60.0), (60.0, 2, 60.0), (170.0, 1, 170.0), (37.0, 0, 0.0)])
def test_an_upright_objects_yaw_is_wrapped_into_its_symmetry_period(deg, order, expected):
    assert _yaw(yaw_canonical(_rz(np.radians(deg)), order)) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("order", [1, 2, 4])
def test_a_tilted_objects_canonical_orientation_differs_by_a_symmetry_turn_about_its_own_z(order):
    rng = np.random.default_rng(0)
    for _ in range(50):
        q = quat_multiply(quat_multiply(_rz(rng.uniform(-np.pi, np.pi)), _rx(rng.uniform(-0.5, 0.5))),
                          _rz(rng.uniform(-np.pi, np.pi)))
        c = yaw_canonical(q, order)
        turn = quat_multiply(quat_conjugate(q), c)  # body-frame difference: a turn about the body z
        np.testing.assert_allclose(quat_to_matrix(turn)[:, 2], [0.0, 0.0, 1.0], atol=1e-9)
        k = _yaw(turn) / (360.0 / order)
        assert k == pytest.approx(round(k), abs=1e-9)
        assert abs(_yaw(c / np.linalg.norm(c)) if abs(c[1]) + abs(c[2]) < 1e-12 else 0.0) <= 180.0 / order + 1e-9
        assert c[0] >= 0


def test_the_symmetry_of_each_shape():
    assert ObjectSpec(shape="box", size=(0.05, 0.05, 0.05)).yaw_symmetry() == 4
    assert ObjectSpec(shape="box", size=(0.05, 0.03, 0.05)).yaw_symmetry() == 2
    assert ObjectSpec(shape="cylinder").yaw_symmetry() == 0
    assert ObjectSpec(shape="sphere").yaw_symmetry() == 0


def test_the_environment_observes_a_turned_cube_modulo_a_quarter_turn_while_the_world_keeps_its_pose():
    env = envs.make_env(PICK, obs_type="state")
    try:
        _, info = env.reset(seed=0)
        scene = info["scene"]
        scene["objects"]["cube"]["quat_wxyz"] = _rz(np.radians(60.0)).tolist()
        obs, _ = env.reset(options={"scene": scene})
        assert _yaw(obs["environment_state"][3:7].astype(float)) == pytest.approx(-30.0, abs=1e-3)
        true_quat = env.unwrapped.core.world.scene.object_poses()[0, 0, 3:7]
        assert abs(_yaw(true_quat)) == pytest.approx(60.0, abs=1e-3)
    finally:
        env.close()


def test_least_turn_demonstrations_grasp_at_the_observed_yaw():
    """The gripper's closing direction at the grasp is the cube's observed (canonical) yaw plus one constant, for
    every seed (a continuous function of what the policy sees), and at most 45 deg from where it started."""
    from app.learning.demos import play_demos

    def closing(quat: np.ndarray) -> float:
        y = quat_to_matrix(quat)[:, 1]  # the gripper's closing axis (y)
        return float(np.degrees(np.arctan2(y[1], y[0])))

    run = load_run_config(PICK, sets={"task.grasp_choice": "least_turn"})
    offsets = []
    for demo in play_demos(run, list(range(8)), None, 8):
        assert demo.success
        grasp = int(np.argmax(demo.action[:, 7] < 0.5 * demo.action[0, 7]))  # the first closing command
        turn = closing(demo.action[grasp, 3:7]) - closing(demo.action[0, 3:7])
        assert abs((turn + 90.0) % 180.0 - 90.0) <= 45.0 + 1e-6
        offsets.append(closing(demo.action[grasp, 3:7]) - _yaw(demo.environment_state[0, 3:7]))
    spread = (np.array(offsets) - offsets[0] + 90.0) % 180.0 - 90.0  # modulo the gripper's half turn
    np.testing.assert_allclose(spread, 0.0, atol=0.5)


def test_an_unknown_grasp_choice_is_a_config_error_naming_the_key():
    with pytest.raises(ConfigError, match=r"task\.grasp_choice.*must be one of \['score', 'least_turn'\]"):
        load_run_config(PICK, sets={"task.grasp_choice": "nearest"})
