"""app.track: end-effector trajectories tracked by the config's controller; every stretch behind has its cause,
checked against what the model and PyBullet say of the same poses."""

import json

import numpy as np
import pybullet as pb
import pytest

from app import RobotModel
from app.control.stall_causes import StallDiagnosis
from app.dataset.trajectory import read_ee_trajectory, read_table, write_table
from app.kinematics.rotations import quat_multiply, quat_to_matrix
from app.sim.urdf_loader import load_urdf
from app.track import main
from tests.conftest import ROOT, WIDOWX_URDF
from tests.pb_truth import link_frame, set_config

IK_CONFIG = str(ROOT / "configs/single_ik.yaml")
DOWN = np.array([np.sqrt(0.5), 0.0, np.sqrt(0.5), 0.0])  # the gripper's approach axis (x) pointing down
HOME = np.array([0.3, 0.0, 0.1])  # reachable pointing down (above ~0.15 m it is not)
WAYPOINT_HZ, RATE = 30, "250"


def _smooth(s):
    return 10 * s**3 - 15 * s**4 + 6 * s**5


def _columns(t, pos, quat, prefix=""):
    names = ("x", "y", "z", "qw", "qx", "qy", "qz")
    values = np.concatenate([pos, quat], axis=1)
    return {f"{prefix}{n}": values[:, i] for i, n in enumerate(names)}


def _write(path, t, pos, quat=None, **extra):
    quat = np.tile(DOWN, (len(t), 1)) if quat is None else quat
    write_table(path, {"t": t, **_columns(t, pos, quat), **extra})
    return str(path)


def _run(tmp_path, trajectory, config=IK_CONFIG, *extra):
    out = tmp_path / "out"
    code = main([trajectory, "--config", config, "--out", str(out), "--rate", RATE, *extra])
    assert code == 0
    return json.loads((out / "track.json").read_text()), out


@pytest.fixture
def qp_config(tmp_path):
    path = tmp_path / "qp.yaml"
    path.write_text(f"scene: {ROOT / 'scenes/table.yaml'}\ncontroller:\n  type: qp\n  gain: 10.0\n")
    return str(path)


def test_a_clean_trajectory_reports_no_stretch_and_its_joints_reach_the_poses_in_pybullet(tmp_path, pb_client):
    """A circle pointing down: no stretch; PyBullet's FK of the written joints lies on the waypoints (1 mm)."""
    t = np.arange(0.0, 1.5, 1.0 / WAYPOINT_HZ)
    a = 2.0 * _smooth(t / t[-1])
    pos = HOME + 0.05 * np.stack([np.cos(a) - 1.0, np.sin(a), 0 * a], axis=1)
    report, out = _run(tmp_path, _write(tmp_path / "clean.csv", t, pos))
    assert report["stretches"] == [] and report["summary"]["by_cause"] == {}
    assert report["motion"]["verdict"] == "smooth" and report["summary"]["motion"] == "motion: 1/1 smooth"
    joints = read_table(out / "joints.csv")
    model = RobotModel.from_urdf(str(WIDOWX_URDF))
    body = load_urdf(pb_client, str(WIDOWX_URDF))
    for k in range(0, len(joints["t"]), 25):
        q = np.array([joints[n][k] for n in model.dof_names])
        set_config(pb_client, body, model, q)
        p, _ = link_frame(pb_client, body, "ee_gripper_link")
        target = [np.interp(joints["t"][k], t, pos[:, i]) for i in range(3)]
        assert np.linalg.norm(p - target) < 1e-3


def test_a_trajectory_leaving_the_workspace_is_one_unreachable_stretch_covering_the_poses_ik_cannot_reach(tmp_path):
    """x runs out to 0.65 m and back: where pose IK (model, many restarts) finds no solution lies in one
    stretch whose cause is unreachable; the first 0.2 s, well inside, are on track."""
    t = np.arange(0.0, 1.6, 1.0 / WAYPOINT_HZ)
    pos = HOME + np.stack([0.35 * np.sin(np.pi * t / t[-1]) ** 2, 0 * t, 0 * t], axis=1)
    report, _ = _run(tmp_path, _write(tmp_path / "leave.npz", t, pos))
    model = RobotModel.from_urdf(str(WIDOWX_URDF))
    info = model.inverse_kinematics("ee_gripper_link", pos=pos, quat=np.tile(DOWN, (len(t), 1)), warn=False,
                                    return_info=True)
    out_of_reach = t[~info.converged]
    assert len(out_of_reach) > 5
    stretch = next(s for s in report["stretches"] if s["cause"] == "unreachable")
    assert stretch["t_start_s"] > 0.2
    assert stretch["t_start_s"] <= out_of_reach[0] + 0.05 and stretch["t_end_s"] >= out_of_reach[-1] - 0.05
    assert stretch["causes"]["unreachable"]["ik_pos_err_m"] > 1e-3


def test_an_unreachable_stretch_is_one_warning_line_not_one_per_tick(tmp_path, caplog):
    """The controller's per-tick IK misses go to its telemetry; the console says each stretch once, with its span."""
    t = np.arange(0.0, 1.6, 1.0 / WAYPOINT_HZ)
    pos = HOME + np.stack([0.35 * np.sin(np.pi * t / t[-1]) ** 2, 0 * t, 0 * t], axis=1)
    with caplog.at_level("WARNING"):
        report, _ = _run(tmp_path, _write(tmp_path / "leave.npz", t, pos))
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert report["stretches"] and not any("did not converge" in w for w in warnings), warnings[:3]
    assert len(warnings) == len(report["stretches"]), warnings


def test_rolling_the_wrist_past_its_limit_is_a_joint_limit_stretch_naming_the_wrist_joint(tmp_path, qp_config):
    """The gripper turns 200 degrees about its approach axis (the pose at 200 degrees is reachable the other way
    round): the QP's wrist roll (joint_5, limit pi) stops at its bound and the stretch says joint_limit, from when
    the written joint_5 reached it."""
    t = np.arange(0.0, 2.0, 1.0 / WAYPOINT_HZ)
    angle = np.radians(200.0) * _smooth(t / t[-1])
    roll = np.stack([np.cos(angle / 2), 0 * angle, 0 * angle, np.sin(angle / 2)], axis=1)
    quat = quat_multiply(roll, np.tile(DOWN, (len(t), 1)))
    report, out = _run(tmp_path, _write(tmp_path / "roll.parquet", t, np.tile(HOME, (len(t), 1)), quat), qp_config)
    assert [s["cause"] for s in report["stretches"]] == ["joint_limit"]
    stretch = report["stretches"][0]
    assert stretch["causes"]["joint_limit"]["joints"] == ["joint_5"]
    joints = read_table(out / "joints.parquet")
    at_bound = joints["t"][np.abs(np.abs(joints["joint_5"]) - np.pi) < 2e-3]
    assert abs(at_bound[0] - stretch["t_start_s"]) < 0.05 and stretch["t_end_s"] == pytest.approx(joints["t"][-1])


def test_a_jump_is_a_policy_jump_stretch_with_the_factor_of_the_needed_joint_speed(tmp_path, qp_config):
    """The target steps 6 cm sideways between two waypoints: one policy_jump stretch from the step, whose factor
    is the joint speed the step needs over its bound, computed here from the model's Jacobian (pinv)."""
    t = np.arange(0.0, 1.5, 1.0 / WAYPOINT_HZ)
    step = np.searchsorted(t, 0.75)
    pos = np.tile(HOME, (len(t), 1))
    pos[step:, 1] += 0.06
    report, out = _run(tmp_path, _write(tmp_path / "jump.csv", t, pos), qp_config)
    assert [s["cause"] for s in report["stretches"]] == ["policy_jump"]
    assert report["motion"]["verdict"] == "flagged" and report["motion"]["first_event"]["t"] >= t[step - 1]
    stretch = report["stretches"][0]
    assert t[step - 1] < stretch["t_start_s"] <= t[step] + 0.01
    model = RobotModel.from_urdf(str(WIDOWX_URDF))
    joints = read_table(out / "joints.csv")
    k = np.searchsorted(joints["t"], t[step - 1])
    q = np.array([joints[n][k] for n in model.dof_names])
    twist = np.array([0.0, 0.06 * WAYPOINT_HZ, 0.0, 0.0, 0.0, 0.0])
    arm = slice(0, 6)
    need = np.linalg.pinv(model.get_jacobian(q, "ee_gripper_link")[:, arm]) @ twist
    expected = np.max(np.abs(need) / model.v_max[arm])
    assert stretch["causes"]["policy_jump"]["factor"] == pytest.approx(expected, rel=0.05)
    assert expected > 1.0


@pytest.mark.parametrize("config", ["bimanual_ik", "bimanual_qp"])
def test_two_arms_are_read_by_their_prefixes_and_only_the_jumping_arm_is_reported(tmp_path, config):
    """A scene with arms left and right (ik, qp controller): left holds still, right jumps 5 cm; every stretch is
    right's, the first a policy_jump at the step (the ik controller then rings about the new pose: it brakes only
    before position limits, which the later stretches show)."""
    t = np.arange(0.0, 1.2, 1.0 / WAYPOINT_HZ)
    quat = np.tile([0.0, 1.0, 0.0, 0.0], (len(t), 1))
    left = np.tile([0.0, 0.15, 0.2], (len(t), 1))
    right = np.tile([0.0, -0.15, 0.2], (len(t), 1))
    right[len(t) // 2:, 0] += 0.05
    columns = {"t": t, **_columns(t, left, quat, "left."), **_columns(t, right, quat, "right.")}
    write_table(tmp_path / "two.csv", columns)
    report, out = _run(tmp_path, str(tmp_path / "two.csv"), str(ROOT / f"configs/{config}.yaml"), "--rot-mask",
                       "0,0,1")
    assert report["arms"] == {"left": "left/ee_gripper_link", "right": "right/ee_gripper_link"}
    assert {s["arm"] for s in report["stretches"]} == {"right"}
    first = report["stretches"][0]
    assert first["cause"] == "policy_jump" and t[len(t) // 2 - 1] < first["t_start_s"] <= t[len(t) // 2] + 0.01


@pytest.mark.parametrize("problem, column", [
    ("missing", "qz"), ("backwards", "t"), ("nan", "y"), ("arm", "lft"),
])
def test_bad_files_are_one_line_errors_naming_the_file_and_column(tmp_path, capsys, problem, column):
    """Missing column, t not increasing, NaN, an arm the scene lacks: exit 2, the last stderr line names both."""
    t = np.arange(0.0, 1.0, 0.1)
    cols = {"t": t, **_columns(t, np.tile(HOME, (len(t), 1)), np.tile(DOWN, (len(t), 1)))}
    if problem == "missing":
        del cols["qz"]
    elif problem == "backwards":
        cols["t"] = t.copy()
        cols["t"][4] = 0.1
    elif problem == "nan":
        cols["y"] = cols["y"].copy()
        cols["y"][3] = np.nan
    else:
        cols = {"t": t, **{f"lft.{k}": v for k, v in cols.items() if k != "t"}}
    path = tmp_path / f"{problem}.csv"
    write_table(path, cols)
    config = IK_CONFIG if problem != "arm" else str(ROOT / "configs/bimanual_ik.yaml")
    assert main([str(path), "--config", config, "--out", str(tmp_path / "out")]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert str(path) in last and repr(column) in last
    assert not (tmp_path / "out" / "track.json").exists()


def test_trajectory_files_read_back_what_was_written_in_every_format(tmp_path):
    """CSV, NPZ and parquet give the same waypoints (quaternions normalised, gripper kept)."""
    t = np.linspace(0.0, 1.0, 7)
    quat = np.tile(DOWN * 2.0, (len(t), 1))
    cols = {"t": t, **_columns(t, np.tile(HOME, (len(t), 1)), quat), "gripper": np.linspace(0, 1, len(t))}
    read = [read_ee_trajectory(write_table(tmp_path / f"w{ext}", cols)) for ext in (".csv", ".npz", ".parquet")]
    for traj in read:
        assert traj.arms == (None,)
        np.testing.assert_allclose(traj.quat[:, 0], np.tile(DOWN, (len(t), 1)), atol=1e-9)
        np.testing.assert_allclose(traj.gripper[:, 0], cols["gripper"], atol=1e-9)
        np.testing.assert_allclose(traj.pos, read[0].pos, atol=1e-9)


def test_physics_mode_drives_pybullet_motors_close_to_the_ideal_joints(tmp_path):
    """--physics: the same clean trajectory through PyBullet's motors at the physics rate stays within 2 mm."""
    t = np.arange(0.0, 1.0, 1.0 / WAYPOINT_HZ)
    pos = HOME + np.stack([0.04 * _smooth(t / t[-1]), 0 * t, 0 * t], axis=1)
    path = _write(tmp_path / "p.csv", t, pos)
    report, out = _run(tmp_path, path, IK_CONFIG, "--physics")
    assert report["physics"] and report["rate_hz"] == 240.0
    assert report["stretches"] == [] or all(s["max_pos_err_m"] < 2e-3 for s in report["stretches"])


def test_a_dip_into_the_table_is_a_collision_margin_stretch_held_at_d_safe_in_pybullet(tmp_path, qp_config, pb_client):
    """The target dips 2 cm below the table top: the QP's table rows hold the fingers off; the one stretch says
    collision_margin with the finger rows, and PyBullet's closest distance from the fingers to the table at the
    written joints comes down to the rows' aim (d_safe 1 cm + the controller's 1 mm buffer) and never below d_safe."""
    t = np.arange(0.0, 1.5, 1.0 / WAYPOINT_HZ)
    pos = HOME + np.stack([0 * t, 0 * t, -0.12 * np.sin(np.pi * t / t[-1]) ** 2], axis=1)
    report, out = _run(tmp_path, _write(tmp_path / "dip.csv", t, pos), qp_config)
    assert [s["cause"] for s in report["stretches"]] == ["collision_margin"]
    stretch = report["stretches"][0]
    assert all("|table" in row for row in stretch["causes"]["collision_margin"]["rows"])
    model = RobotModel.from_urdf(str(WIDOWX_URDF))
    body = load_urdf(pb_client, str(WIDOWX_URDF))
    table = pb.createMultiBody(0, pb.createCollisionShape(pb.GEOM_BOX, halfExtents=[0.4, 0.35, 0.02],
                                                          physicsClientId=pb_client),
                               basePosition=[0.25, 0.0, -0.0205], physicsClientId=pb_client)
    joints = read_table(out / "joints.csv")
    fingers = [body.link_index[n] for n in ("gripper_left", "gripper_right")]
    inside = (joints["t"] >= stretch["t_start_s"]) & (joints["t"] <= stretch["t_end_s"])
    distances = []
    for k in np.flatnonzero(inside)[::4]:
        set_config(pb_client, body, model, np.array([joints[n][k] for n in model.dof_names]))
        distances.append(min(c[8] for link in fingers for c in pb.getClosestPoints(
            body.body_id, table, 0.1, linkIndexA=link, physicsClientId=pb_client)))
    assert 0.01 - 1e-4 <= min(distances) <= 0.0115


def test_near_the_wrist_singularity_the_diagnosis_says_singular_with_pybullets_smallest_singular_value(pb_client):
    """Joint 4 at 0.005 rad from 90 degrees (the wrist's pitch and roll axes nearly aligned), the target 5 mm
    above (reachable): 'singular' with the smallest singular value of PyBullet's own Jacobian of the arm (1e-6)."""
    from tests.pb_truth import jacobian as pb_jacobian

    model = RobotModel.from_urdf(str(WIDOWX_URDF))
    body = load_urdf(pb_client, str(WIDOWX_URDF))
    q = np.array([0.0, 1.2, 1.0, -0.3, np.pi / 2 - 0.005, 0.0, 0.02, 0.02])
    diagnosis = StallDiagnosis(model, ["ee_gripper_link"], (True, True, True), (True, True, True),
                               np.r_[model.v_max[:6], 0.0, 0.0], 40.0, 1 / 250)
    pos, quat = model.forward_kinematics(q, ["ee_gripper_link"])
    target = pos[0] + [0.0, 0.0, 0.005]
    causes = diagnosis.causes(0, q, np.zeros(8), np.zeros(8), target, quat_to_matrix(quat[0]), np.zeros(6), [])
    sigma = np.linalg.svd(pb_jacobian(pb_client, body, model, q, "ee_gripper_link")[:, :6], compute_uv=False).min()
    assert "singular" in causes and sigma < 0.01
    assert causes["singular"]["sigma_min"] == pytest.approx(sigma, abs=1e-6)
    assert "joint_limit" not in causes and "unreachable" not in causes


def test_an_unreachable_stretch_carries_its_last_search_and_ends_at_once_when_reachable_again(monkeypatch):
    """An unreachable target moving slowly: one full search (every restart) per refresh_ticks ticks, a single
    descent from the carried best in between, 'unreachable' every tick; back in reach: not unreachable at once."""
    model = RobotModel.from_urdf(str(WIDOWX_URDF))
    diagnosis = StallDiagnosis(model, ["ee_gripper_link"], (True, True, True), (True, True, True),
                               np.r_[model.v_max[:6], 0.0, 0.0], 40.0, 1 / 500, carry=True)
    restarts, real = [], model.inverse_kinematics

    def counted(*args, **kw):
        restarts.append(kw["max_restarts"])
        return real(*args, **kw)

    monkeypatch.setattr(model, "inverse_kinematics", counted)
    q = model.mid_config()
    R = np.eye(3)
    ticks = 120
    for k in range(ticks):  # 1 m out: beyond the arm's reach, drifting 0.1 mm a tick
        causes = diagnosis.causes(0, q, np.zeros(8), np.zeros(8), np.array([1.0 + 1e-4 * k, 0.0, 0.3]), R,
                                  np.zeros(6), [])
        assert "unreachable" in causes and causes["unreachable"]["ik_pos_err_m"] > 0.2
    full = sum(r > 0 for r in restarts)
    assert full <= ticks // diagnosis.limits.refresh_ticks + 1 and len(restarts) <= ticks + full
    pos, quat = model.forward_kinematics(q, ["ee_gripper_link"])
    causes = diagnosis.causes(0, q, np.zeros(8), np.zeros(8), pos[0] + [0.0, 0.0, 0.01], quat_to_matrix(quat[0]),
                              np.zeros(6), [])
    assert "unreachable" not in causes


@pytest.mark.parametrize("extra, words", [
    (["--rate", "0"], "--rate must be in [1, 10000] Hz"), (["--rate", "nan"], "--rate must be"),
    (["--rot-mask", "1,1,0"], "--rot-mask"), (["--singular-threshold", "-1"], "--singular-threshold"),
    (["--rate", "10000", "--format", "csv"], "ticks"),
    (["--rate", "1000", "--physics"], "--rate 1000 Hz with --physics: the control rate must be at most about "
                                      "the scene's physics rate, 240 Hz"),
])
def test_bad_options_are_one_line_errors(tmp_path, capsys, extra, words):
    """A zero or NaN rate, two rotation axes, a negative threshold, a trajectory of too many ticks, a control rate above
    the physics rate with --physics (it was silently the physics rate): exit 2, one line, nothing written."""
    t = np.array([0.0, 2000.0]) if "--physics" not in extra else np.array([0.0, 1.0])
    path = _write(tmp_path / "long.csv", t, np.tile(HOME, (2, 1)))
    assert main([path, "--config", IK_CONFIG, "--out", str(tmp_path / "out"), *extra]) == 2
    assert words in capsys.readouterr().err.strip().splitlines()[-1]
    assert not (tmp_path / "out" / "track.json").exists()
