"""Videos rendered from recorded states: render processes give the serial video frame for frame, the camera
frames the environments (or one, close up), target frames stay visible on top, and an aborted job leaves
no file and no process behind."""

import dataclasses
import multiprocessing as mp
import sys
from concurrent.futures.process import BrokenProcessPool

import imageio.v2 as imageio
import numpy as np
import psutil
import pytest

from app.config.loader import load_run_config
from app.episode.execute import execute
from app.episode.frame_state import FrameState
from app.episode.video_job import VideoJob, legend
from app.render.framing import CameraView
from app.render.overlay import FrameOverlay, OverlayStyle, draw_overlay
from tests.conftest import ROOT, Watched, runs


def _run(**video):
    run = load_run_config(ROOT / "configs" / "batched_ik.yaml", duration=0.3)
    run = dataclasses.replace(run, n_envs=4, video=dataclasses.replace(run.video, width=160, height=120, **video))
    return run


def _frames(path):
    return np.stack([f for f in imageio.get_reader(path)])


@pytest.mark.slow
def test_render_processes_give_the_serial_video_frame_for_frame(tmp_path):
    serial = execute(_run(workers=0), tmp_path / "serial")
    parallel = execute(_run(workers=2), tmp_path / "parallel")
    a, b = _frames(serial.outputs["video"]), _frames(parallel.outputs["video"])
    assert a.shape == (8, 120, 160, 3)  # 0.3 s at 25 fps, the first frame at t = 0
    np.testing.assert_array_equal(a, b)
    assert (tmp_path / "serial" / "video.mp4").read_bytes() == (tmp_path / "parallel" / "video.mp4").read_bytes()


def _states(run, n):
    """The look and ``n`` moving states of ``run`` (its scene built once, then closed)."""
    from app.episode.execute import video_look
    from app.episode.motion_factory import run_motion
    from app.episode.scene_build import build_scene

    scene, robot = build_scene(run)
    targets = run_motion(run, robot.n_envs)
    spec = video_look(run, robot, targets, scene.env_origins)
    q0 = np.asarray(robot.unbatch(robot.initial_qpos), dtype=float).reshape(robot.n_envs, -1)
    scene.close()
    tg = targets(0.0)
    return spec, [FrameState(0.04 * k, q0 + 0.05 * k, tg.pos, tg.quat, np.zeros(robot.n_envs, np.int8))
                  for k in range(n)]


def test_frames_added_at_once_are_all_rendered_in_order_by_render_processes_and_here_alike(tmp_path):
    """Nine frames (two full chunks and a partial one) added at once, before the render processes are up."""
    run = _run()
    spec, states = _states(run, 9)
    videos = []
    for workers in (0, 2):
        job = VideoJob(run, tmp_path / f"w{workers}.mp4", fps=25, total=len(states), workers=workers)
        job.start(spec)
        for state in states:
            job.add(state)
        job.finish()
        videos.append(_frames(tmp_path / f"w{workers}.mp4"))
    assert videos[0].shape[0] == len(states)
    assert len({v.tobytes() for v in videos[0]}) == len(states)  # every frame differs: order is checkable
    np.testing.assert_array_equal(videos[0], videos[1])
    assert not mp.active_children()


def test_render_processes_that_cannot_build_their_scene_fail_the_job_and_leave_no_file(tmp_path, monkeypatch):
    import app.episode.video_job as video_job

    run = _run()
    spec, states = _states(run, video_job.CHUNK)
    broken = dataclasses.replace(run, scene_config=dataclasses.replace(  # the description the loader kept dropped too
        run.scene_config, description=None,
        robot=dataclasses.replace(run.scene_config.robot, urdf=str(tmp_path / "gone.urdf"))))
    monkeypatch.setattr(video_job, "headless", lambda r: broken)  # what the render processes build
    job = VideoJob(run, tmp_path / "video.mp4", fps=25, total=10, workers=1)
    job.start(spec)
    with pytest.raises(BrokenProcessPool):
        for state in states:
            job.add(state)
        job.finish()
    job.abort()
    assert not list(tmp_path.iterdir()) and not mp.active_children()


def test_aborted_job_leaves_no_file_and_no_render_process(tmp_path):
    run = _run()
    spec, states = _states(run, 2 * 4)
    path = tmp_path / "video.mp4"
    job = VideoJob(run, path, fps=25, total=10, workers=1)
    job.start(spec)
    for state in states:
        job.add(state)
    job.abort()
    assert not list(tmp_path.iterdir())
    assert not mp.active_children()


def _view():
    return CameraView(np.array([1.2, -1.2, 0.9]), np.array([0.3, 0.0, 0.15]), 50.0, 320, 240)


def test_a_target_frame_inside_an_obstacle_is_drawn_on_top():
    view = _view()
    grey = np.full((240, 320, 3), 128, np.uint8)  # the obstacle hides everything behind it
    pos = np.array([[[0.3, 0.0, 0.15]]])
    frame = FrameOverlay("t", 0.0, pos, np.eye(3)[None, None], np.zeros(1, np.int8), pos[:, 0] + [0, 0, -0.1])
    out = draw_overlay(grey, view, frame, OverlayStyle.for_view(view, legend()))
    (x, y), _ = view.project(pos[0, 0])
    patch = out[int(y) - 25:int(y) + 25, int(x) - 25:int(x) + 25].astype(int)
    red = ((patch[..., 0] > 200) & (patch[..., 1] < 80)).sum()
    green = ((patch[..., 1] > 180) & (patch[..., 0] < 80)).sum()
    blue = ((patch[..., 2] > 200) & (patch[..., 0] < 80)).sum()
    assert min(red, green, blue) >= 20, (red, green, blue)  # each axis a few pixels wide and >= 12 px long


def test_follow_env_frames_one_environment_close_up():
    from app.control.motions import TargetGenerator
    from app.episode.scene_build import build_scene
    from app.episode.video_job import video_view

    run = _run(follow_env=3)
    scene, robot = build_scene(run)
    try:
        tg = TargetGenerator(run.motion, robot.n_envs, np.array(run.scene_config.robot.base_pos), run.seed)
        close = video_view(run, robot, tg, scene.env_origins)
        wide = video_view(dataclasses.replace(run, video=dataclasses.replace(run.video, follow_env=None)), robot, tg,
                          scene.env_origins)
    finally:
        scene.close()
    from app.render.framing import box_corners

    table = run.scene_config.table
    px, _ = close.project(box_corners(table.pos, table.size) + scene.env_origins[3])
    assert px[:, 0].min() >= 0 and px[:, 0].max() <= 160 and np.ptp(px[:, 0]) > 0.6 * 160  # env 3's table fills it
    assert np.linalg.norm(close.eye - close.target) < 0.6 * np.linalg.norm(wide.eye - wide.target)


def test_rendered_frame_shows_the_recorded_objects_where_they_were_and_the_place_marks():
    """A recorded object pose moves the cube in the picture; a place mark draws a yellow ring there."""
    from app.episode.execute import video_look
    from app.episode.frame_render import SceneRenderer
    from app.episode.motion_factory import run_motion
    from app.episode.replica import headless
    from app.episode.scene_build import build_scene

    run = load_run_config(ROOT / "configs" / "pick_place.yaml", n_envs=1)
    scene, robot = build_scene(run)
    spec = video_look(run, robot, run_motion(run, robot=robot), scene.env_origins)
    q = robot.read_states()[0]
    scene.close()
    renderer = SceneRenderer(headless(run))
    far = np.array([[[0.3, 0.2, -5.0, 1.0, 0.0, 0.0, 0.0]]])  # under the floor: out of sight
    near = np.array([[[0.3, 0.2, 0.025, 1.0, 0.0, 0.0, 0.0]]])
    base = FrameState(0.0, q, np.zeros((1, 1, 3)) - 9.0, np.tile([1.0, 0, 0, 0], (1, 1, 1)), np.zeros(1, np.int8))
    red = lambda img: ((img[..., 0] > 150) & (img[..., 1] < 80) & (img[..., 2] < 80)).sum()  # noqa: E731
    yellow = lambda img: ((img[..., 0] > 200) & (img[..., 1] > 180) & (img[..., 2] < 60)).sum()  # noqa: E731
    hidden = renderer.render(spec, base._replace(objects=far))
    shown = renderer.render(spec, base._replace(objects=near))
    marked = renderer.render(spec, base._replace(objects=far, marks=np.array([[[0.4, -0.1, 0.0]]])))
    renderer.close()
    assert red(shown) > red(hidden) + 50
    assert yellow(marked) > yellow(hidden) + 20



def test_sixteen_cubes_on_their_place_marks_stay_visible_in_the_default_video():
    """The default pick_place video (16 environments, 640 x 480): a 5 cm cube on its place mark showed a quarter
    of its red pixels under the old ring and cross; the ring now lies around it."""
    from app.episode.execute import video_look
    from app.episode.motion_factory import run_motion
    from app.episode.scene_build import build_scene

    run = load_run_config(ROOT / "configs" / "pick_place.yaml")
    scene, robot = build_scene(run)
    spec = video_look(run, robot, run_motion(run, robot=robot), scene.env_origins)
    q = robot.read_states()[0]
    scene.close()
    n = robot.n_envs
    cubes = np.tile([[[0.3, 0.2, 0.025, 1.0, 0.0, 0.0, 0.0]]], (n, 1, 1))
    base = FrameState(0.0, q, np.zeros((n, 1, 3)) - 9.0, np.tile([1.0, 0, 0, 0], (n, 1, 1)), np.zeros(n, np.int8),
                      objects=cubes)
    red = lambda img: ((img[..., 0] > 150) & (img[..., 1] < 80) & (img[..., 2] < 80)).sum()  # noqa: E731
    bare = red(renderer_frames(run, spec, base))
    marked = red(renderer_frames(run, spec, base._replace(marks=np.tile([[[0.3, 0.2, 0.0]]], (n, 1, 1)))))
    assert marked >= 0.75 * bare, (marked, bare)


def renderer_frames(run, spec, state):
    from app.episode.frame_render import SceneRenderer
    from app.episode.replica import headless

    renderer = SceneRenderer(headless(run))
    try:
        return renderer.render(spec, state)
    finally:
        renderer.close()


def test_a_finished_picks_target_frame_is_not_drawn_over_the_cube_it_placed():
    """Done: the arm rests at its retreat pose, whose frame sat on top of the placed cube; it is no longer drawn
    (the status dot still tells reached or not). A pick still carrying keeps its frame."""
    from app.control.phases import Phase
    from app.episode.frame_render import _live_targets

    pos = np.full((2, 1, 3), 0.3)
    state = FrameState(0.0, np.zeros((2, 8)), pos, np.tile([1.0, 0, 0, 0], (2, 1, 1)), np.zeros(2, np.int8),
                       episode=np.array([int(Phase.DONE), int(Phase.DONE) - 1]))
    live = _live_targets(state)
    assert np.isnan(live[0]).all() and np.isfinite(live[1]).all()


# app.run with the video job's thread held inside Thread.start until the test writes a line: a Ctrl-C lands there
HELD_START = """
import runpy, sys, threading
class HeldStart(threading.Thread):
    def start(self):
        if self.name == "video-encoder":
            print("video thread starting", file=sys.stderr, flush=True)
            sys.stdin.readline()
        super().start()
threading.Thread = HeldStart
sys.argv = ["app.run", *sys.argv[1:]]
runpy.run_module("app.run", run_name="__main__")
"""


def test_ctrl_c_while_the_video_thread_starts_ends_the_run_in_one_line(tmp_path):
    """SIGINT inside VideoJob.__init__'s Thread.start: exit 130, one line, no traceback (the job's abort once
    joined a thread that had not started, and raised again), no output, none of the run's processes left."""
    import signal
    import subprocess
    import sys


    out = tmp_path / "out"
    run = Watched([sys.executable, "-c", HELD_START, "configs/batched_ik.yaml", "--duration", "5", "--out", str(out)],
                  cwd=ROOT, stdin=subprocess.PIPE)
    run.wait_for_line("video thread starting")
    run.descendants()  # the render processes' fork server, if up: checked below
    run.proc.send_signal(signal.SIGINT)
    try:
        run.proc.stdin.write("go\n")  # start() goes on (a held signal is delivered after it)
        run.proc.stdin.flush()
    except BrokenPipeError:  # it ended at the signal
        pass
    err = run.finish()
    lines = [l for l in err.splitlines() if l.strip() and not l.startswith(("pybullet build", "video thread"))]
    assert run.proc.returncode == 130, err
    assert len(lines) == 1 and lines[0].startswith("interrupted (SIGINT)") and "Traceback" not in err, err
    assert not out.exists() or not list(out.iterdir())
    assert not run.left_running(10)


@pytest.mark.parametrize("video", [True, False])
def test_python_m_app_run_starts_the_render_server_while_the_package_imports_and_never_without_a_video(tmp_path,
                                                                                                       video):
    """The server's own imports (~1.2 s of CPU) then run beside the command's instead of beside the simulation: by
    the time ``app.ik.robot_model`` (among the package's first heavy imports; python -v names each) loads, the server
    runs; with --no-video none does."""
    out = tmp_path / "out"
    run = Watched([sys.executable, "-v", "-m", "app.run", "configs/single_ik.yaml", "--duration", "0.2",
                   "--out", str(out), *([] if video else ["--no-video"])], cwd=ROOT)
    for line in run.proc.stderr:  # python -v: a line per module it loads
        if str(ROOT / "app" / "ik") in line:
            break
    assert any(runs(p, "forkserver") for p in run.descendants()) == video
    rest = run.proc.stderr.read()  # read to its end (-v fills a pipe), which comes when the command and the server end
    assert run.proc.wait(timeout=120) == 0, rest[-2000:]
    assert (out / "video.mp4").is_file() == video and not run.left_running()


def test_a_command_that_fails_early_leaves_no_render_server_holding_its_output(tmp_path):
    """A user error ends the command while the early server may still load its modules: it is ended with the
    command, so a pipe reading the command's stderr closes when the command ends (it held it open for 1-9 s)."""
    run = Watched([sys.executable, "-m", "app.run", "configs/batched_ik.yaml", "--duration", "-1",
                   "--out", str(tmp_path / "out")], cwd=ROOT)
    run.wait_for(lambda procs: any(runs(p, "forkserver") for p in procs))
    code = run.proc.wait(timeout=120)
    servers = [p for p in run.seen.values() if runs(p, "forkserver") and p.is_running()  # at once
               and p.status() != psutil.STATUS_ZOMBIE]
    err = run.proc.stderr.read()
    assert code == 2 and "duration" in err.strip().splitlines()[-1], err[-2000:]
    assert servers == [] and run.left_running(10) == []  # multiprocessing's resource tracker ends on its own


def test_the_caption_counts_the_episodes_done_from_the_frames_phases_not_from_its_notes():
    """A pick's notes carry the gripper's opening ('done 90mm'): the caption counts the phase codes themselves;
    a motion without phases (a script) counts the environments that reached their targets."""
    from app.control.phases import WORDS
    from app.episode.frame_render import episodes_done, frame_notes
    from app.render.overlay import FrameOverlay, caption_text

    n = 4
    codes = np.array([WORDS.index("done")] * 3 + [WORDS.index("carry")], dtype=np.int16)
    state = FrameState(1.0, np.zeros((n, 8)), np.zeros((n, 1, 3)), np.tile([1.0, 0, 0, 0], (n, 1, 1)),
                       np.array([0, 0, 1, 1]), episode=codes, gripper=np.full(n, 0.09))
    assert frame_notes(state)[0] == "done 90mm" and episodes_done(state) == 3
    overlay = FrameOverlay("pick", 1.0, np.zeros((n, 1, 3)), np.tile(np.eye(3), (n, 1, 1, 1)), state.status,
                           np.zeros((n, 3)), 0, frame_notes(state), None, episodes_done(state))
    assert "done 3/4" in caption_text(overlay)
    script = state._replace(episode=None)
    assert episodes_done(script) is None
    assert "reached 2/4" in caption_text(overlay._replace(notes=frame_notes(script), finished=None))


def test_a_frame_notes_motion_beside_the_environments_that_passed_a_limit_and_nothing_beside_the_others():
    from app.episode.frame_render import frame_notes

    n = 3
    state = FrameState(0.5, np.zeros((n, 8)), np.zeros((n, 1, 3)), np.tile([1.0, 0, 0, 0], (n, 1, 1)),
                       np.zeros(n, dtype=np.int8), motion=("", "jerk joint_1 2.1x", ""))
    assert frame_notes(state) == ("", "MOTION jerk joint_1 2.1x", "")  # no phases, no gripper: the mark alone
    assert frame_notes(state._replace(motion=("", "", ""))) is None  # nothing passed: no notes at all
    assert frame_notes(state._replace(gripper=np.full(n, 0.04)))[1] == "40mm MOTION jerk joint_1 2.1x"
