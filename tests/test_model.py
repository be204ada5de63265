"""RobotModel FK and Jacobians against PyBullet and finite differences; bad input."""

import numpy as np
import pytest

from app import InputError, RobotModel, UnknownNameError
from app.kinematics.rotations import quat_to_matrix, so3_log
from app.sim.urdf_loader import load_urdf
from tests.conftest import KUKA_URDF, PANDA_URDF, WIDOWX_URDF, random_configs
from tests.pb_truth import jacobian as pb_jacobian
from tests.pb_truth import link_frame, set_config

ROBOTS = {"widowx": WIDOWX_URDF, "panda": PANDA_URDF, "kuka": KUKA_URDF}


@pytest.fixture(scope="module", params=list(ROBOTS))
def loaded(request, pb_client):
    path = str(ROBOTS[request.param])
    return RobotModel.from_urdf(path), load_urdf(pb_client, path)


def test_fk_matches_pybullet_link_frames_for_every_link(loaded, pb_client):
    model, body = loaded
    for q in random_configs(model, 30, seed=1):
        set_config(pb_client, body, model, q)
        pos, quat = model.forward_kinematics(q)
        for i, name in enumerate(model.link_names[1:], start=1):
            p_pb, R_pb = link_frame(pb_client, body, name)
            np.testing.assert_allclose(pos[i], p_pb, atol=1e-6, err_msg=name)  # PyBullet stores float32-ish poses
            np.testing.assert_allclose(quat_to_matrix(quat[i]), R_pb, atol=1e-6, err_msg=name)


def test_jacobian_matches_pybullet_calculate_jacobian(loaded, pb_client):
    model, body = loaded
    for q in random_configs(model, 10, seed=2):
        for link in model.link_names[-3:]:
            for local_point in ([0.0, 0.0, 0.0], [0.05, -0.02, 0.1]):
                np.testing.assert_allclose(model.get_jacobian(q, link, local_point),
                                           pb_jacobian(pb_client, body, model, q, link, local_point),
                                           atol=1e-6, err_msg=link)


def _fd_jacobian(model, q, link, local_point, h=1e-6):
    """Central differences of the point's position and of the link rotation."""
    J = np.zeros((6, model.n_dofs))
    for k in range(model.n_dofs):
        dq = np.zeros(model.n_dofs)
        dq[k] = h
        frames = [model.link_frames(q + s * dq) for s in (1, -1)]
        (Rp, pp), (Rm, pm) = [(R[model.link_index(link)], p[model.link_index(link)]) for R, p in frames]
        J[:3, k] = ((pp + Rp @ local_point) - (pm + Rm @ local_point)) / (2 * h)
        J[3:, k] = so3_log(Rp @ Rm.T) / (2 * h)
    return J


@pytest.mark.parametrize("link", ["ee_gripper_link", "left_fingertip", "link_4"])
def test_jacobian_matches_finite_differences_with_local_point(widowx, link):
    local_point = np.array([0.01, -0.02, 0.03])
    for q in random_configs(widowx, 10, seed=3):
        np.testing.assert_allclose(widowx.get_jacobian(q, link, local_point),
                                   _fd_jacobian(widowx, q, link, local_point), atol=1e-7)


def test_batched_fk_and_jacobian_equal_per_config_results(widowx):
    q = random_configs(widowx, 12, seed=4).reshape(3, 4, widowx.n_dofs)
    pos, quat = widowx.forward_kinematics(q, links=["ee_gripper_link", "link_3"])
    J = widowx.get_jacobian(q, "ee_gripper_link")
    assert pos.shape == (3, 4, 2, 3) and quat.shape == (3, 4, 2, 4) and J.shape == (3, 4, 6, 8)
    for idx in np.ndindex(3, 4):
        p1, q1 = widowx.forward_kinematics(q[idx], links=["ee_gripper_link", "link_3"])
        np.testing.assert_array_equal(pos[idx], p1)
        np.testing.assert_array_equal(quat[idx], q1)
        np.testing.assert_array_equal(J[idx], widowx.get_jacobian(q[idx], "ee_gripper_link"))


def test_attributes_of_widowx(widowx):
    assert widowx.n_dofs == 8
    assert widowx.dof_names[:6] == tuple(f"joint_{i}" for i in range(6))
    assert {"left_fingertip", "right_fingertip", "ee_gripper_link"} <= set(widowx.link_names)
    assert widowx.q_lower.shape == widowx.q_upper.shape == widowx.v_max.shape == widowx.effort_max.shape == (8,)
    assert widowx.mimic == {"right_carriage_joint": ("left_carriage_joint", 1.0, 0.0)}
    with pytest.raises(ValueError):
        widowx.q_lower[0] = 0.0  # limits are read-only


def test_fingertips_meet_at_end_effector_when_gripper_closed(widowx):
    q = widowx.mid_config()
    q[6:] = 0.0
    pos, _ = widowx.forward_kinematics(q, links=["left_fingertip", "right_fingertip", "ee_gripper_link"])
    np.testing.assert_allclose(pos[0], pos[2], atol=1e-12)
    np.testing.assert_allclose(pos[1], pos[2], atol=1e-12)


def test_unknown_link_lists_valid_names(widowx):
    with pytest.raises(UnknownNameError, match="valid link names: .*ee_gripper_link") as info:
        widowx.get_jacobian(widowx.mid_config(), "gripper")
    assert info.value.name == "gripper" and "link_6" in info.value.valid
    with pytest.raises(UnknownNameError):
        widowx.forward_kinematics(widowx.mid_config(), links=["nope"])


@pytest.mark.parametrize("q, message", [
    (np.zeros(7), r"shape \(\.\.\., 8\)"),
    (np.zeros((2, 3)), r"shape \(\.\.\., 8\)"),
    (np.array([0, 0, np.nan, 0, 0, 0, 0, 0.0]), "NaN or inf"),
    (np.array([0, 0, 0, 0, 0, np.inf, 0, 0.0]), "NaN or inf"),
    ("abc", "numeric"),
])
def test_bad_q_raises_input_error(widowx, q, message):
    with pytest.raises(InputError, match=message):
        widowx.forward_kinematics(q)


def test_bad_local_point_raises_input_error(widowx):
    with pytest.raises(InputError, match="local_point"):
        widowx.get_jacobian(widowx.mid_config(), "link_6", local_point=[0.0, 1.0])
