"""The CLI and a whole run: outputs written, user errors exit 2 with one line and no files."""

import json
import os
import subprocess
import sys

import imageio.v2 as imageio
import numpy as np
import pytest

from app.run import main
from tests.conftest import ROOT


def _cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "app.run", *args], cwd=ROOT, capture_output=True, text=True,
                          env=env, timeout=300)


def test_short_run_writes_video_report_and_plot(tmp_path):
    out = tmp_path / "out"
    assert main([str(ROOT / "configs" / "single_ik.yaml"), "--duration", "0.6", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["report.json", "tracking_error.png", "video.mp4"]
    report = json.loads((out / "report.json").read_text())
    env = report["environments"][0]
    assert report["n_envs"] == 1 and len(env["q_final"]) == 8
    assert {"pos_err_final_m", "rot_err_final_rad", "stalled_final", "min_obstacle_distance_m", "reached_final",
            "solver_ok_final", "joint_limit_margin_min"} <= set(env)
    assert env["joint_limit_margin_min"] >= -1e-3
    assert set(report["timings_s"]) >= {"control", "physics", "record", "video_after_sim", "total"}
    reader = imageio.get_reader(out / "video.mp4")
    frames = [f for f in reader]  # list() would ask len(), which the ffmpeg reader reports as inf
    assert len(frames) == 18 and frames[0].shape == (360, 480, 3)  # 0.6 s at 30 fps, the scene camera size


def test_report_errors_agree_with_fk_of_final_joints(tmp_path):
    from app import RobotModel

    out = tmp_path / "out"
    assert main([str(ROOT / "configs" / "single_ik.yaml"), "--duration", "1.0", "--no-video", "--out", str(out)]) == 0
    env = json.loads((out / "report.json").read_text())["environments"][0]
    model = RobotModel.from_urdf(str(ROOT / "assets" / "urdf" / "widowx_ai.urdf"))
    pos, _ = model.forward_kinematics(np.array(env["q_final"]), ["ee_gripper_link"])
    np.testing.assert_allclose(pos[0], env["links_pos"][0], atol=1e-9)
    assert env["pos_err_final_m"] < 2e-3 and env["reached_final"] == (env["pos_err_final_m"] <= 1e-3
                                                                   and env["rot_err_final_rad"] <= 1e-2)


def test_help_explains_every_option():
    out = _cli("--help").stdout
    for option in ("--gui", "--no-video", "--out", "--duration", "--seed"):
        assert option in out
    from app.episode.gui_keys import KEYS
    flat = " ".join(out.split())  # argparse wraps the text
    for key, text in KEYS:  # every GUI key the window knows, e and m too
        assert text is None or text.split(":")[0] in flat, (key, flat)


@pytest.mark.parametrize("args, message", [
    (["configs/missing.yaml"], "missing.yaml: file not found"),
    (["configs/single_ik.yaml", "--duration", "-1"], "duration: must be a finite time"),
])
def test_user_errors_exit_2_with_one_line_and_write_nothing(tmp_path, args, message):
    out = tmp_path / "never"
    res = _cli(*args, "--out", str(out))
    assert res.returncode == 2
    lines = [l for l in res.stderr.splitlines() if l.strip() and not l.startswith("pybullet build time")]
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in res.stderr
    assert not out.exists()


def test_gui_without_display_exits_2(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    res = _cli("configs/single_ik.yaml", "--gui", env=env)
    assert res.returncode == 2 and "needs a display" in res.stderr


def test_check_exits_3_when_an_environment_misses_and_0_when_all_reach(tmp_path, capsys):
    config = str(ROOT / "configs" / "qp_obstacle.yaml")
    assert main([config, "--duration", "0.3", "--no-video", "--check", "--out", str(tmp_path / "miss")]) == 3
    assert main([config, "--duration", "0.3", "--no-video", "--out", str(tmp_path / "plain")]) == 0  # no --check
    report = json.loads((tmp_path / "miss" / "report.json").read_text())
    summary = report["summary"]
    assert summary["reached"] == 0 and summary["missed_envs"] == [0] and summary["d_safe_m"] == 0.01
    assert report["task_masks"]["rot_mask"] == [True, False, False] and "masked" in report["task_masks"]["errors"]
    assert main([str(ROOT / "configs" / "single_ik.yaml"), "--no-video", "--check", "--out", str(tmp_path / "ok")]) == 0


def test_a_finished_command_keeps_its_exit_code_last_log_lines_outputs_and_leaves_no_temp_folder(tmp_path):
    """The exit code (3 from --check), the summary's last line and every output survive the exit, and the render
    processes' fork server leaves no folder in the run's own temp folder."""
    temp = tmp_path / "tmp"  # this run's alone: another program's files never count
    temp.mkdir()
    out = tmp_path / "miss"
    res = subprocess.run([sys.executable, "-m", "app.run", str(ROOT / "configs" / "qp_obstacle.yaml"), "--duration",
                          "0.3", "--check", "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, TMPDIR=str(temp)))
    assert res.returncode == 3, res.stderr[-2000:]
    assert res.stderr.rstrip().splitlines()[-1].startswith("INFO motion: ")  # the summary's last line
    assert sorted(p.name for p in out.iterdir()) == ["report.json", "tracking_error.png", "video.mp4"]
    assert json.loads((out / "report.json").read_text())["summary"]["reached"] == 0
    assert list(temp.iterdir()) == []


def test_summary_lines_say_how_the_run_went():
    from app.run import summary_lines

    lines = summary_lines({"reached": 14, "n_envs": 16, "missed_envs": [3, 9], "pos_err_final_max_m": 0.0123,
                           "rot_err_final_max_rad": 0.01, "stalled_final": 1, "stalled_ever": 2,
                           "solver_failed_final": 0, "solver_failed_ticks_fraction": 0.015, "solver_failed_ticks": 7,
                           "min_obstacle_distance_m": 0.0105, "d_safe_m": 0.01, "joint_limit_margin_min_rad": 0.02})
    text = "\n".join(lines)
    for part in ("final target reached 14/16 (missed: 3, 9) (of those: 1 stalled, 0 with the solver failing, 1 still on "
                 "the way when the run ended)", "12.30 mm", "0.57 deg", "stalled at the end 1 (ever 2)",
                 "failed on 7 environment-ticks, 1.5 % of them", "closest obstacle 10.50 mm (d_safe 10.00 mm)", "0.0200 rad"):
        assert part in text, (part, text)
    past = "\n".join(summary_lines({**dict(zip(("reached", "n_envs"), (16, 16))), "missed_envs": [],
                                     "pos_err_final_max_m": 0.0, "rot_err_final_max_rad": 0.0, "stalled_final": 0,
                                     "stalled_ever": 0, "solver_failed_final": 0, "solver_failed_ticks_fraction": 0.0,
                                     "min_obstacle_distance_m": None, "d_safe_m": None,
                                     "joint_limit_margin_min_rad": -2.48e-5}))
    assert "2.48e-05 rad (or m) past its limit" in past and "-0.0000" not in past  # an excess says it is one


def test_a_pick_summary_never_reads_as_placed_none_but_reached_all():
    """'placed 0/4' beside 'reached 4/4' read as a contradiction: the pick's reached count is the arm back at its
    retreat pose, and says so; a run whose targets were missed without a stall says why ('still on the way')."""
    from app.run import summary_lines

    base = {"n_envs": 4, "pos_err_final_max_m": 0.0, "rot_err_final_max_rad": 0.0, "stalled_ever": 0,
            "solver_failed_ticks_fraction": 0.0, "min_obstacle_distance_m": None, "d_safe_m": None,
            "joint_limit_margin_min_rad": 0.1, "solver_failed_final": 0, "stalled_final": 0}
    pick = "\n".join(summary_lines({**base, "reached": 4, "missed_envs": [], "placed": 0,
                                    "failed": {"misplaced": [0, 1, 2, 3]}, "slip_max_m": 0.001}))
    assert "placed 0/4" in pick and "arm back at its final (retreat) pose 4/4" in pick and "reached 4/4" not in pick
    moving = "\n".join(summary_lines({**base, "reached": 0, "missed_envs": [0, 1, 2, 3]}))
    assert "final target reached 0/4" in moving and "4 still on the way when the run ended" in moving


def test_the_summary_counts_the_qp_failures_the_warnings_report(tmp_path, monkeypatch, caplog):
    """With no certified answer and OSQP capped at one iteration some ticks fail (a warning starts each failing
    streak): the summary and the console count those environment-ticks, not a rounded 0.0 %."""
    import functools
    import logging

    import app.control.qp_controller as qp_controller
    from app.run import summary_lines

    build = qp_controller.QPController.build

    def uncertified(self, *args):
        qps, err = build(self, *args)
        qps.exact[:] = False  # every tick goes to OSQP
        return qps, err

    monkeypatch.setattr(qp_controller.QPController, "build", uncertified)
    monkeypatch.setattr(qp_controller, "QPSolver", functools.partial(qp_controller.QPSolver, max_iter=1))
    out = tmp_path / "out"
    with caplog.at_level(logging.WARNING, logger="app.control.qp_controller"):
        assert main([str(ROOT / "configs" / "qp_obstacle.yaml"), "--duration", "0.5", "--no-video",
                     "--out", str(out)]) == 0
    warnings = [r for r in caplog.records if "commanding a safe stop" in r.getMessage()]
    summary = json.loads((out / "report.json").read_text())["summary"]
    assert warnings and summary["solver_failed_ticks"] >= len(warnings)
    assert summary["solver_failed_ticks_fraction"] == pytest.approx(summary["solver_failed_ticks"] / 120)
    assert f"failed on {summary['solver_failed_ticks']} environment-ticks" in "\n".join(summary_lines(summary))


def test_a_temp_folder_too_long_for_the_render_servers_socket_still_gives_the_video(tmp_path):
    """The render processes' fork server listens on a Unix socket in TMPDIR (at most 108 bytes of path): with a
    longer TMPDIR the render processes start afresh instead, and the run ends as usual with its video."""
    temp = tmp_path / ("t" * max(1, 110 - len(str(tmp_path))))
    temp.mkdir()
    out = tmp_path / "out"
    res = subprocess.run([sys.executable, "-m", "app.run", str(ROOT / "configs" / "single_ik.yaml"), "--duration",
                          "0.3", "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, TMPDIR=str(temp)))
    assert res.returncode in (0, 3) and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert sorted(p.name for p in out.iterdir()) == ["report.json", "tracking_error.png", "video.mp4"]


def test_runs_import_osqp_and_scipy_only_when_they_need_them(tmp_path):
    """Start-up cost (~0.2 s each, in every command and Ray worker): the main job (IK controller, no collision model)
    never imports osqp, scipy.sparse or scipy.spatial; a QP run whose answers the active set certifies never
    imports osqp; a QP that only OSQP can answer (infeasible) still gets OSQP's status."""
    code = f"""
import json, sys
from app.run import main
import numpy as np
seen = {{}}
assert main(['configs/batched_ik.yaml', '--no-video', '--duration', '0.5', '--out', {str(tmp_path / 'ik')!r}]) == 0
seen['main job'] = sorted(m for m in ('osqp', 'scipy.sparse', 'scipy.spatial') if m in sys.modules)
assert main(['configs/qp_obstacle.yaml', '--no-video', '--duration', '0.5', '--out', {str(tmp_path / 'qp')!r}]) == 0
seen['qp run'] = 'osqp' in sys.modules
from app.ik.qp import QP, QPSolver
infeasible = QP(np.eye(2), np.zeros(2), np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([1.0, -1e30]),
               np.array([1e30, -1.0]))
seen['infeasible'] = QPSolver(2, 2).solve(infeasible).status
print(json.dumps(seen))
"""
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    seen = json.loads(res.stdout.strip().splitlines()[-1])
    assert seen["main job"] == [] and seen["qp run"] is False
    assert "infeasible" in seen["infeasible"], seen


def test_each_environment_has_a_motion_report_whose_peaks_agree_with_its_telemetry_joints(tmp_path):
    """app.quality in app.run: each environment's report over the DOFs its controller commands, the summary's line,
    and the simulated velocity peak is the measured joints' own (no faster than the invariants saw, 2 % allowed)."""
    from app.quality.motion_report import summary_line

    out = tmp_path / "out"
    assert main([str(ROOT / "configs" / "single_ik.yaml"), "--duration", "1.0", "--no-video", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    motion = report["environments"][0]["motion"]
    assert motion["duration_s"] == pytest.approx(1.0, abs=0.02)
    assert list(motion["joints"]) == [f"joint_{j}" for j in range(6)] + ["right_carriage_joint", "left_carriage_joint"]
    # no gripper in this config: the controller commands the carriages too, and they are judged
    assert report["summary"]["motion"] == summary_line([motion])
    peaks = [row["simulated"]["velocity_peak"] / motion["limits"]["velocity"][name]
             for name, row in motion["joints"].items() if motion["limits"]["velocity"][name]]
    assert 0 < max(peaks) <= report["invariants"]["velocity_over_bound_max"] + 0.02
