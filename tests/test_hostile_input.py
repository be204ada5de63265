"""Hostile and careless input: outputs only inside --out, all or nothing; one line and exit 2 for user
errors; SIGINT/SIGTERM stop cleanly; every number checked; resources bounded before any work."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from app.config.loader import load_run_config
from app.errors import ConfigError
from app.run import main
from app.runtime.outputs import PARTIAL
from tests.conftest import ROOT, Watched, runs

SCENE = f"scene: {ROOT / 'scenes' / 'table.yaml'}\n"


def _cli(*args, env=None, cwd=ROOT):
    res = subprocess.run([sys.executable, "-m", "app.run", *args], cwd=cwd, capture_output=True, text=True,
                         env=env, timeout=300)
    res.stderr = _ours(res.stderr)
    return res


def _ours(stderr: str) -> str:
    """stderr without PyBullet's own banner line."""
    return "\n".join(l for l in stderr.splitlines() if l.strip() and not l.startswith("pybullet build time"))


def _config(tmp_path, text, name="run.yaml"):
    path = tmp_path / name
    path.write_text(SCENE + text)
    return path


@pytest.mark.parametrize("key, value", [
    ("video:\n  filename", "../../escaped.mp4"), ("video:\n  filename", "/tmp/abs.mp4"), ("video:\n  filename", "''"),
    ("report:\n  filename", "sub/r.json"), ("report:\n  plot_filename", "plot.jpg"), ("video:\n  filename", ".mp4"),
])
def test_output_file_names_must_be_plain_names_in_the_output_folder(tmp_path, key, value):
    path = _config(tmp_path, f"{key}: {value}\n")
    with pytest.raises(ConfigError, match=r"run.yaml: (video|report)\.\w+: must be a"):
        load_run_config(path)


def test_out_that_is_a_file_or_under_a_file_is_refused_before_any_work(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for out in (blocker, blocker / "below"):
        res = _cli("configs/single_ik.yaml", "--duration", "0.1", "--out", str(out))
        assert res.returncode == 2 and res.stderr.strip().count("\n") == 0, res.stderr
        assert "--out" in res.stderr and "Traceback" not in res.stderr
    assert blocker.read_text() == "x"


def test_a_failed_run_leaves_the_previous_outputs_and_no_partial_file(tmp_path, monkeypatch):
    out = tmp_path / "out"
    config = str(ROOT / "configs" / "single_ik.yaml")
    assert main([config, "--duration", "0.3", "--out", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    import app.episode.execute

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")  # after the video was encoded
    monkeypatch.setattr(app.episode.execute, "report_dict", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        main([config, "--duration", "0.1", "--out", str(out)])
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_stale_partial_files_of_a_killed_run_are_removed_by_the_next_run(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / f"{PARTIAL}video.k3j2.mp4").write_bytes(b"half a video")
    (out / "keep.txt").write_text("mine")
    assert main([str(ROOT / "configs" / "single_ik.yaml"), "--duration", "0.1", "--no-video", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt", "report.json", "tracking_error.png"]


@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_sigint_and_sigterm_stop_with_one_line_and_no_partial_file(tmp_path, sig, code, word):
    """Mid-simulation, the render processes up: one line, no file, none of the run's processes left."""
    out = tmp_path / "out"
    run = Watched([sys.executable, "-m", "app.run", "configs/batched_ik.yaml", "--duration", "60", "--out", str(out)],
                  cwd=ROOT)
    run.wait_for_line("simulating: 0/")
    run.wait_for(lambda procs: sum(runs(p, "multiprocessing") for p in procs) >= 2)  # fork server, a renderer
    run.proc.send_signal(sig)
    err = _ours(run.finish())
    assert run.proc.returncode == code, err
    lines = [l for l in err.splitlines() if not l.startswith(("simulating", "video"))]  # progress lines aside
    assert len(lines) == 1 and word in lines[0] and "Traceback" not in err, err
    assert not out.exists()  # the folder it made is removed again
    assert not run.left_running(10), "render processes left running"


def test_ctrl_c_to_the_whole_process_group_in_the_first_second_ends_in_one_line(tmp_path):
    """A terminal's Ctrl-C reaches every process of the group, the render processes' fork server too, which
    is still loading their modules then."""
    out = tmp_path / "out"
    run = Watched([sys.executable, "-m", "app.run", "configs/batched_ik.yaml", "--duration", "60", "--out", str(out)],
                  cwd=ROOT, start_new_session=True)
    # the server loads its modules, and the run is past the instant it starts the server with SIGINT ignored
    run.wait_for(lambda procs: any(runs(p, "multiprocessing.forkserver") for p in procs)
                 and not _ignores_sigint(run.proc.pid))
    os.killpg(run.proc.pid, signal.SIGINT)
    err = _ours(run.finish())
    assert run.proc.returncode == 130, err
    lines = [l for l in err.splitlines() if not l.startswith(("simulating", "video", "INFO"))]
    assert len(lines) == 1 and "interrupted" in lines[0] and "Traceback" not in err, err
    assert not run.left_running(10)


@pytest.mark.parametrize("text, message", [
    ("scene_overrides:\n  table:\n    pos: [.nan, 0, -0.02]\n", r"table.pos\[0\]: must be a finite number"),
    ("scene_overrides:\n  table:\n    size: [-0.8, 0.7, 0.04]\n", r"scene_overrides.table.size: .*must be > 0"),
    ("scene_overrides:\n  gravity: [0, 0, .inf]\n", r"gravity\[2\]: must be a finite number"),
    ("scene_overrides:\n  camera:\n    fov: 0\n", r"scene_overrides.camera.fov: must be in \[1, 179\] degrees"),
    ("scene_overrides:\n  camera:\n    eye: [0.25, 0.0, 0.12]\n", r"camera.eye: must differ from camera.target"),
    ("scene_overrides:\n  camera:\n    width: 641\n", r"scene_overrides.camera.width: must be an even number"),
    ("controller:\n  type: qp\n  d_safe: .nan\n", r"controller.d_safe: must be a finite number"),
    ("controller:\n  type: qp\n  gamma: 2\n", r"controller.gamma: must be in \(0, 1\]"),
    ("n_envs: 100000\n", r"n_envs: must be 1..max_envs=1024"),
    ("n_envs: 1000000000000000000000000000000\n", r"n_envs: must be 1..max_envs"),
    ("video:\n  width: 4096\n  height: 4096\n", r"video: .* GB in memory \(limit 2.0 GB\)"),
    ("seed: -1\n", r"seed: must be in 0..2\*\*32-1"),
])
def test_every_number_is_checked_with_its_file_and_key(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_run_config(_config(tmp_path, text))


def test_a_scene_camera_size_is_reported_against_the_scene_file(tmp_path):
    scene = tmp_path / "odd.yaml"
    scene.write_text((ROOT / "scenes" / "table.yaml").read_text().replace("width: 480", "width: 641"))
    run = tmp_path / "run.yaml"
    run.write_text(f"scene: {scene}\n")
    with pytest.raises(ConfigError, match=r"odd.yaml: camera.width: must be an even number"):
        load_run_config(run)


def test_yaml_nested_too_deep_or_not_utf8_is_one_line(tmp_path):
    deep = tmp_path / "deep.yaml"
    deep.write_text("a: " + "[" * 20000 + "]" * 20000 + "\n")
    res = _cli(str(deep))
    assert res.returncode == 2 and "nested too deeply" in res.stderr and res.stderr.strip().count("\n") == 0
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(SCENE.encode() + "# caf\xe9\n".encode("latin-1"))
    res = _cli(str(latin))
    assert res.returncode == 2 and "not UTF-8" in res.stderr and res.stderr.strip().count("\n") == 0


def test_bad_app_threads_is_one_line(tmp_path):
    res = _cli("configs/single_ik.yaml", "--no-video", "--out", str(tmp_path / "o"),
               env=dict(os.environ, APP_THREADS="abc"))
    assert res.returncode == 2 and "APP_THREADS must be a whole number" in res.stderr
    assert not (tmp_path / "o").exists()


def test_huge_or_tiny_quaternion_entries_are_normalised_without_overflow(widowx):
    info = widowx.inverse_kinematics("ee_gripper_link", [0.3, 0.0, 0.2], [0.0, 1e200, 0.0, 0.0], return_info=True)
    assert info.converged and np.isfinite(info.err).all() and np.isfinite(info.rot_err)
    tiny = widowx.inverse_kinematics("ee_gripper_link", [0.3, 0.0, 0.2], [0.0, 1e-200, 0.0, 0.0], return_info=True)
    np.testing.assert_allclose(tiny.q, info.q)


def test_stale_urdf_copies_of_a_killed_process_are_removed(tmp_path, monkeypatch):
    import tempfile

    from app.sim import urdf_loader as loader
    from app.sim.scene import Scene

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    old, fresh = tmp_path / f"{loader.PREFIX}old.urdf", tmp_path / f"{loader.PREFIX}fresh.urdf"
    old.write_text("<robot/>"), fresh.write_text("<robot/>")
    os.utime(old, (time.time() - 2 * loader.STALE_AFTER,) * 2)
    scene = Scene()
    scene.add_robot(str(ROOT / "assets" / "urdf" / "widowx_ai.urdf"))
    scene.build()
    scene.close()
    assert not old.exists() and fresh.exists()  # a copy in use by another process now is left alone
    assert sorted(p.name for p in tmp_path.iterdir()) == [fresh.name]


def _ignores_sigint(pid: int) -> bool:
    """Whether the test's own child ``pid`` ignores SIGINT now (its SigIgn mask, /proc/PID/status on Linux): the run
    does for the instant it starts the render processes' server, which inherits that."""
    try:
        line = next(l for l in Path(f"/proc/{pid}/status").read_text().splitlines() if l.startswith("SigIgn:"))
    except (OSError, StopIteration):
        return False
    return bool(int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)))
