"""branch= in the Genesis-named pose IK: the answer lies on the closed-form branch asked for (app.ik.branches
tells), a branch that cannot reach the target is not converged, and a bad branch or a target that is not a full
pose is refused with one line."""

from __future__ import annotations

import numpy as np
import pytest

from app.collision.pairs import sample_configs
from app.errors import InputError
from app.ik.analytic import analytic_ik
from app.ik.branches import branch_of

LINK = "ee_gripper_link"


def _targets(model, n, seed):
    q = sample_configs(model, n, seed=seed)
    pos, quat = model.forward_kinematics(q, [LINK])
    return pos[:, 0], quat[:, 0]


def test_every_reachable_branch_is_answered_on_that_branch(widowx):
    pos, quat = _targets(widowx, 40, 3)
    _, valid = analytic_ik(widowx, LINK, pos, quat)
    checked = 0
    for i in range(len(pos)):
        for b in np.flatnonzero(valid[i]):
            res = widowx.inverse_kinematics(LINK, pos=pos[i], quat=quat[i], branch=int(b), return_info=True)
            assert res.converged and res.pos_err < 1e-4
            assert branch_of(widowx, LINK, res.q)[0] in (b, -1)  # -1: where two branches meet
            checked += branch_of(widowx, LINK, res.q)[0] == b
    assert checked > len(pos)  # more than one branch per target on average, not only the default's


def test_a_branch_that_cannot_reach_the_target_is_not_converged(widowx):
    pos, quat = _targets(widowx, 40, 6)
    _, valid = analytic_ik(widowx, LINK, pos, quat)
    i, b = next((i, int(np.flatnonzero(~valid[i])[0])) for i in range(len(pos)) if (~valid[i]).any())
    res = widowx.inverse_kinematics(LINK, pos=pos[i], quat=quat[i], branch=b, return_info=True, warn=False)
    assert not res.converged and np.isfinite(res.q).all()


def test_a_batch_takes_one_branch_for_all_and_the_triple_names_it(widowx):
    pos, quat = _targets(widowx, 20, 8)
    _, valid = analytic_ik(widowx, LINK, pos, quat)
    b = int(np.argmax(valid.sum(axis=0)))
    res = widowx.inverse_kinematics(LINK, pos=pos, quat=quat, branch=(b // 4, (b // 2) % 2, b % 2),
                                    return_info=True, warn=False)
    assert np.array_equal(res.converged, valid[:, b])
    assert set(branch_of(widowx, LINK, res.q[res.converged])) <= {b, -1}


@pytest.mark.parametrize("branch", [8, -1, 2.0, (1, 0), "elbow up", True])
def test_a_bad_branch_is_refused(widowx, branch):
    with pytest.raises(InputError, match="branch must be an int 0..7"):
        widowx.inverse_kinematics(LINK, pos=[0.3, 0.0, 0.1], quat=[1.0, 0, 0, 0], branch=branch)


def test_branch_needs_a_full_pose(widowx):
    with pytest.raises(InputError, match="full pose"):
        widowx.inverse_kinematics(LINK, pos=[0.3, 0.0, 0.1], branch=1)


def test_the_scene_robot_s_genesis_call_takes_branch_in_each_environment_s_frame():
    from app import Scene

    scene = Scene()
    robot = scene.add_robot("assets/urdf/widowx_ai.urdf", base_pos=(0.1, 0.2, 0.0), base_quat=(0.9238795, 0.0, 0.0, 0.3826834))
    scene.build(n_envs=2)
    try:
        ee = robot.get_link(LINK)
        q_target = sample_configs(robot.model, 1, seed=12)[0]
        robot.set_qpos(np.tile(q_target, (2, 1)))
        pos = robot.get_links_pos([ee.idx_local])[:, 0]  # (2, 3) in each environment's frame
        quat = robot.get_links_quat([ee.idx_local])[:, 0]
        b = int(branch_of(robot.model, LINK, q_target[None])[0])
        q = robot.inverse_kinematics(link=ee, pos=pos, quat=quat, branch=b, init_qpos=np.tile(robot.model.mid_config(),
                                                                                               (2, 1)))
        assert np.allclose(q[:, :6], q_target[:6], atol=1e-4)  # the target's own branch: its own configuration
    finally:
        scene.close()


def test_the_scene_robot_refuses_branch_for_several_links():
    from app import Scene

    scene = Scene()
    robot = scene.add_robot("assets/urdf/widowx_ai.urdf")
    scene.build(n_envs=1)
    try:
        with pytest.raises(InputError, match="one link's closed-form branch"):
            robot.inverse_kinematics_multilink([LINK, "link_6"], poss=[[0.3, 0.0, 0.1], [0.3, 0.0, 0.15]],
                                               quats=[[1.0, 0, 0, 0], [1.0, 0, 0, 0]], branch=1)
    finally:
        scene.close()
