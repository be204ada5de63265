"""Videos of an evaluation's first K episodes (``videos/eval_episode_N.mp4``, LeRobot's names): every step of the
episode seen from a fixed camera (the scene's first fixed camera, else the default ``cam_high``) at the run's
video size, with our overlay: the episode, its seed and time, the judge's stage, the gripper's finger
position, a stall and its cause while it lasts, a limit the motion passes at that step (app.quality: MOTION and
the event), the place target as a ring and the step's end-effector targets as frames; the last frame says success
or the failure's reason, and the first motion event where the episode was flagged."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from app.envs.pixels import Pixels
from app.evaluation.runner import EpisodeRecord
from app.kinematics.rotations import quat_to_matrix
from app.render.framing import CameraView
from app.render.mp4 import write_mp4
from app.render.overlay import FrameOverlay, OverlayStyle, draw_overlay
from app.specs import CameraStream

STAGES = ("moving", "touched", "held", "lifted", "placed")
LEGEND = (("moving", (160, 160, 160)), ("touched", (250, 200, 40)), ("held", (40, 160, 250)),
          ("lifted", (60, 120, 255)), ("placed", (40, 200, 80)), ("stalled", (230, 60, 40)),
          ("failed", (200, 30, 30)))
STALLED, FAILED = 5, 6


class EvalVideos:
    """Frames of the episodes with index < ``k`` of a vector environment, written as each ends."""

    def __init__(self, env, k: int, folder: Path, title: str):
        self.core, self.k, self.folder, self.title = env.core, int(k), Path(folder), title
        run = self.core.run
        fixed = [c for c in run.scene_config.cameras if c.link is None]
        stream = dataclasses.replace(fixed[0] if fixed else CameraStream(), width=run.video.width,
                                     height=run.video.height)
        self.view = CameraView(np.asarray(stream.eye, float), np.asarray(stream.target, float), stream.fov,
                               stream.width, stream.height, tuple(stream.up))
        self.style = OverlayStyle.for_view(self.view, LEGEND, run.video.axis_length)
        self.pixels = Pixels(self.core.world, [stream]) if k > 0 else None
        if k > 0:
            self.core.motion.watch_live()  # flagged from the first filmed step on
        self.frames: dict[int, list[np.ndarray]] = {}
        self.raw: dict[int, np.ndarray] = {}  # each filmed episode's latest picture without the overlay
        self.ids: list[int] = []
        self.paths: list[str] = []
        self.written: set[int] = set()  # episodes whose video is written
        self._flags: tuple[str, ...] = ()  # per environment a limit its motion passed in this step ('' none)

    def wave(self, ids: list[int]) -> None:
        """The episodes the environments play now (slot i: ids[i])."""
        self.ids = list(ids)

    def on_step(self, step: int, infos: dict) -> None:
        """Draw this step's frame of every filmed episode still running."""
        if self.pixels is None:
            return
        self._flags = self.core.motion.watch_live().take()  # what each environment's motion passed in this step
        slots = [i for i, ep in enumerate(self.ids) if ep < self.k and ep not in self.written]
        if not slots:
            return
        q = self.core.world.robot.read_states()[0]
        images = next(iter(self.pixels.render(q, slots).values()))
        for row, e in enumerate(slots):
            self.frames.setdefault(self.ids[e], []).append(self._overlay(images[row], e, step, infos, None))
            self.raw[self.ids[e]] = images[row]

    def on_episode(self, record: EpisodeRecord) -> None:
        """Write the episode's video when it is filmed (its last frame held 1 s with the verdict)."""
        frames = self.frames.pop(record.episode_ix, None)
        if not frames:
            return
        e = self.ids.index(record.episode_ix)
        last = self._overlay(self.raw.pop(record.episode_ix), e, record.steps, None, record)
        frames += [last] * max(1, self.core.fps)
        path = self.folder / f"eval_episode_{record.episode_ix}.mp4"
        write_mp4(path, frames, self.core.fps)
        self.paths.append(str(path))
        self.written.add(record.episode_ix)

    def _overlay(self, image, e: int, step: int, infos: dict | None, record: EpisodeRecord | None) -> np.ndarray:
        core = self.core
        stage = int(infos["stage"][e]) if infos is not None else (4 if record.success else 0)
        stall = str(infos["stall_cause"][e]) if infos is not None and "stall_cause" in infos else ""
        finger = core.world.layout.agent_pos(core.world.robot.read_states()[0][e:e + 1])[0]
        grip = " ".join(f"{finger[a * 7 + 6] * 1000:.0f} mm" for a in range(len(core.world.layout.arms))) \
            if core.world.layout.grippers else ""
        if record is not None:
            note = "success" if record.success else f"failed: {record.reason}"
            if record.motion.get("first"):
                note += f"; motion flagged: {record.motion['first']}"
            status = 4 if record.success else FAILED
        else:
            jerk = self._flags[e]
            note = f"{STAGES[stage]}  gripper {grip}" + (f"  STALL {stall}" if stall else "") + (
                f"  MOTION {jerk}" if jerk else "")
            status = STALLED if stall else stage
        pos, rot = self._targets(e)
        scene = core.scenes[e]
        marks = None if scene is None or scene.place is None else np.array([[[*scene.place, 0.0]]])
        ep = self.ids[e]
        frame = FrameOverlay(f"{self.title}  episode {ep}", step / core.fps, pos, rot, np.array([status]),
                             pos[:, 0], notes=(note,), marks=marks, finished=int(record is not None))
        return draw_overlay(image, self.view, frame, self.style)

    def _targets(self, e: int) -> tuple[np.ndarray, np.ndarray]:
        """The step's end-effector targets of slot e (1, n_arms, 3), (1, n_arms, 3, 3): the action's in the ee
        modes, else where the end effectors are."""
        goal = self.core.last_goal
        if goal is None:
            pos, quat = self.core.world.layout.ee_poses(self.core.world.robot.read_states()[0][e:e + 1])
            goal = np.concatenate([pos, quat], axis=2)
        else:
            goal = goal[e:e + 1]
        return goal[..., :3], quat_to_matrix(goal[..., 3:].reshape(-1, 4)).reshape(1, -1, 3, 3)

    def close(self) -> None:
        if self.pixels is not None:
            self.pixels.close()
