"""The video of what a script did, through app.run's pipeline (app.episode.video_job): the recorded frames become
FrameStates (each arm an environment: its joints, its pose goal drawn as a target frame labelled with the arm's
name, its status dot at its base, the gripper's position beside it), rendered from a replica of the arms
(app.trossen_arm.replica) with app.run's overlay and caption, and encoded into an mp4."""

from __future__ import annotations

import bisect

from pathlib import Path

import numpy as np

from app.episode.frame_state import FrameState
from app.episode.video_job import CAPTION_RESERVE, VideoJob, VideoSpec
from app.render.framing import CameraView, fit_view
from app.render.overlay import OverlayStyle
from app.trossen_arm.recorder import FPS, STATUS_STYLE, ArmFrame, ArmStatus, Recorder, pose_quat
from app.trossen_arm.replica import ArmsScene

SIZE = (640, 480)  # [px], app.run's default camera
FOV = 25.0  # [deg]: a narrow lens, so that the camera framing the arms stands back from them
VIEW_FROM = np.array([0.9, -1.0, 0.6])  # the camera's direction from what it films (in front, right, above)
AXIS_LENGTH = 0.08  # [m] of a goal frame's axes
FIT_SAMPLES = 24  # frames whose link positions the camera frames
LEAD_S = 0.5  # [s] of stillness kept before the first motion or goal (a script's set-up took ~2 s of idle arm)


def frame_states(recorder: Recorder, world) -> list[FrameState]:
    """One FrameState per recorded frame, the world's arms in their order (an arm loaded later stands at the
    sleep pose before, with no goal), each arm marked with a limit its motion passed since the frame before
    (app.quality). Targets are world positions (the environments' origins are zero)."""
    names = list(world.arms)
    n = max(slot.robot.n_dofs for slot in world.arms.values())
    idle = ArmFrame(np.zeros(0), None, int(ArmStatus.NO_GOAL), 0.0)
    events = {name: recorder.motions[name].events(slot.controller) if name in recorder.motions else []
              for name, slot in world.arms.items()}
    times = {name: [e.t for e in found] for name, found in events.items()}
    states, t_before = [], -np.inf
    for t, frame in zip(recorder.times, recorder.frames):
        arms = [frame.get(name, idle) for name in names]
        q = np.zeros((len(names), n))
        pos, quat = np.full((len(names), 1, 3), np.nan), np.tile([1.0, 0.0, 0.0, 0.0], (len(names), 1, 1))
        for i, arm in enumerate(arms):
            q[i, :len(arm.q)] = arm.q
            if arm.goal is not None:
                pos[i, 0], quat[i, 0] = pose_quat(arm.goal)
        status = np.array([arm.status for arm in arms], dtype=np.int8)
        marks = tuple(_first_between(events[name], times[name], t_before, t) for name in names)
        states.append(FrameState(t, q, pos, quat, status, gripper=np.array([arm.gripper for arm in arms]),
                                 motion=marks))
        t_before = t
    return states


def _first_between(events: list, times: list[float], t_before: float, t: float) -> str:
    """The first of time-ordered ``events`` (their ``times``) in (t_before, t], in a few words ('' for none)."""
    k = bisect.bisect_right(times, t_before)
    return events[k].short() if k < len(events) and times[k] <= t else ""


def without_idle_start(states: list[FrameState], fps: float = FPS) -> list[FrameState]:
    """``states`` from ``LEAD_S`` before the first frame where an arm has moved or has a goal: a script's set-up
    (configure, modes) is not filmed as seconds of still arms. A script whose arms never move keeps every frame.
    The frames keep their times (the caption shows the script's clock)."""
    if not states:
        return states
    first = next((k for k, s in enumerate(states) if np.isfinite(s.targets_pos).any()
                  or s.q.shape != states[0].q.shape or not np.allclose(s.q, states[0].q, atol=1e-6)), None)
    return states if first is None else states[max(0, first - int(round(LEAD_S * fps))):]


def camera_view(states: list[FrameState], world) -> CameraView:
    """A fixed camera from ``VIEW_FROM`` framing every arm's links (sampled frames) and goals, caption room kept."""
    slots = list(world.arms.values())
    points = [np.array([slot.place.base_pos for slot in slots])]
    for state in states[::max(1, len(states) // FIT_SAMPLES)] + states[-1:]:
        for i, slot in enumerate(slots):
            links, _ = slot.model.forward_kinematics(state.q[i, :slot.robot.n_dofs])
            points.append(links @ slot.base_T[:3, :3].T + slot.base_T[:3, 3])
    goals = np.concatenate([s.targets_pos.reshape(-1, 3) for s in states]) if states else np.zeros((0, 3))
    points.append(goals[np.isfinite(goals).all(axis=1)])
    points = np.concatenate(points)
    centre = 0.5 * (points.min(axis=0) + points.max(axis=0))
    return fit_view(points, centre + VIEW_FROM, centre, FOV, *SIZE, top_reserve=CAPTION_RESERVE)


def video_spec(title: str, view: CameraView, world) -> VideoSpec:
    """The overlay's look: the arms' status legend, each goal frame labelled with its arm, dots at the bases."""
    names = list(world.arms)
    style = OverlayStyle.for_view(view, tuple(STATUS_STYLE[code] for code in ArmStatus), AXIS_LENGTH, names)
    anchors = np.array([slot.place.base_pos for slot in world.arms.values()], dtype=float)
    return VideoSpec(title, view, style, np.zeros((len(names), 3)), anchors)


def write_video(path: Path, recorder: Recorder, world, title: str, workers: int = 0) -> int:
    """The recorded frames into the mp4 ``path`` (its name ends in .mp4); returns the frame count. ``workers``:
    render processes (0: here, on this thread)."""
    states = without_idle_start(frame_states(recorder, world))
    arms = ArmsScene(tuple(slot.place for slot in world.arms.values()), tuple(world.scene.boxes))
    job = VideoJob(None, path, FPS, len(states), workers, replica=arms)
    try:
        job.start(video_spec(title, camera_view(states, world), world))
        for state in states:
            job.add(state)
        job.finish()
    except BaseException:
        job.abort()
        raise
    return len(states)
