"""Seeing what a script did: ``APP_TROSSEN_OUTPUTS=FOLDER`` makes the world record every arm's joints at
``FPS`` frames per simulated second, its commands, its controller errors and its contacts, and write when the
process ends (atexit) ``FOLDER/video.mp4`` (a fixed camera over the arms, TinyRenderer, re-posed from the
recorded joints, each arm's latest tool goal drawn as a frame) and ``FOLDER/report.json`` (simulated time, per
arm: commands by kind with their first times, errors with time and the controller's log, collisions as they
begin, final joints). ``APP_TROSSEN_GUI=1`` opens PyBullet's window instead (needs a display). No extra code
in the script: the variables are read when the world is made.
"""

from __future__ import annotations

import bisect
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from app.render.mp4 import write_mp4
from app.runtime.outputs import write_atomic
from app.sim.camera import Camera

log = logging.getLogger(__name__)

OUTPUTS_ENV, GUI_ENV = "APP_TROSSEN_OUTPUTS", "APP_TROSSEN_GUI"
FPS = 30
SIZE = (480, 360)  # [px]


@dataclass
class ArmLog:
    """What one arm did: commands by kind (count, first time [s]), errors."""

    commands: dict[str, list[float]] = field(default_factory=dict)  # kind -> [count, first t]
    errors: list[dict] = field(default_factory=list)
    last_error: str = "none"
    collisions: list[dict] = field(default_factory=list)  # contacts as they begin: t, the arm's link, with what
    touching: set = field(default_factory=set)


class Recorder:
    """Frames, commands and errors of a world's arms (see the module docstring).

    Args:
        folder: Where video.mp4 and report.json go (made if missing).
    """

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.times: list[float] = []
        self.frames: list[dict[str, np.ndarray]] = []  # per frame: arm -> its robot DOFs
        self.arms: dict[str, ArmLog] = {}
        self.goals: dict[str, list[tuple[float, np.ndarray]]] = {}  # arm -> (t, the tool's goal in the world)
        self._next = 0.0

    def command(self, arm: str, kind: str, t: float, goal: np.ndarray | None = None) -> None:
        """A command of ``kind`` to ``arm`` at simulated time t [s]; ``goal``: the tool's goal pose in the world
        (4x4), drawn in the video from then on."""
        entry = self.arms.setdefault(arm, ArmLog()).commands.setdefault(kind, [0, t])
        entry[0] += 1
        if goal is not None:
            self.goals.setdefault(arm, []).append((t, goal))

    def step(self, t: float, slots: dict) -> None:
        """After a physics step at simulated time t [s]: a frame when one is due, errors as they appear."""
        for name, slot in slots.items():
            arm, c = self.arms.setdefault(name, ArmLog()), slot.controller
            if c.error_state.name != arm.last_error:
                arm.last_error = c.error_state.name
                if c.error_state.name != "none":
                    arm.errors.append({"t": round(t, 4), "state": c.error_state.name, "log": c.error_log})
        if t + 1e-9 < self._next:
            return
        self._next = t + 1.0 / FPS
        self._contacts(t, slots)
        self.times.append(t)
        self.frames.append({name: slot.controller.measured.q_dofs.copy() for name, slot in slots.items()})

    def _contacts(self, t: float, slots: dict) -> None:
        """Collision events at a frame: what each arm's moving links touch, logged where a contact begins."""
        names = {robot_body: name for name, slot in slots.items() for robot_body in
                 (b.body_id for b in slot.robot.bodies)}
        for name, slot in slots.items():
            robot = slot.robot
            boxes = {i: box for box, ids in robot.box_ids.items() for i in ids}
            touching = {(boxes.get(body) or names.get(body, f"body {body}"),
                         robot.model.link_names[robot.pb_to_model_link[link]])
                        for body, links in robot.contact_links(0).items() for link in links}
            arm = self.arms.setdefault(name, ArmLog())
            for other, link in sorted(touching - arm.touching):
                arm.collisions.append({"t": round(t, 4), "link": link, "with": other})
            arm.touching = touching

    def write(self, world) -> None:
        """report.json, then video.mp4 (the world's robots re-posed frame by frame: call at the end)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        report = {"simulated_time_s": round(world.t, 4), "frames": len(self.times), "fps": FPS, "arms": {
            name: {"place": slot.place.name, "base_pos": list(slot.place.base_pos),
                   "commands": {k: {"count": v[0], "first_t": round(v[1], 4)} for k, v in
                                self.arms.get(name, ArmLog()).commands.items()},
                   "errors": self.arms.get(name, ArmLog()).errors,
                   "collisions": self.arms.get(name, ArmLog()).collisions,
                   "final_joints": np.round(slot.controller.measured.q, 6).tolist()}
            for name, slot in world.arms.items()}}
        write_atomic(self.folder / "report.json", ".json",
                     lambda tmp: Path(tmp).write_text(json.dumps(report, indent=2) + "\n"))
        if self.times and world.arms:
            write_mp4(self.folder / "video.mp4", self._frames(world), FPS, total=len(self.times), label="video")
        log.info("app.trossen_arm: wrote %s", self.folder)

    def _frames(self, world):
        bases = np.array([slot.place.base_pos for slot in world.arms.values()])
        target = bases.mean(axis=0) + (0.2, 0.0, 0.15)  # over the arms, a little ahead of their bases
        spread = np.ptp(bases[:, :2], axis=0).max() if len(bases) > 1 else 0.0
        camera = Camera.looking_at(world.scene.client, target + (0.9 + spread, -1.0 - spread, 0.6 + 0.4 * spread),
                                   target, 45, *SIZE)
        robots = {name: slot.robot for name, slot in world.arms.items()}
        kept = {name: robot.read_states() for name, robot in robots.items()}
        markers = {name: world.scene.draw_debug_frame(goals[0][1], axis_length=0.06) for name, goals in
                   self.goals.items() if name in robots}
        try:
            for t, frame in zip(self.times, self.frames):
                for name, q in frame.items():
                    robots[name].teleport(q[None], np.zeros((1, len(q))), np.array([0]))
                for name, marker in markers.items():  # each arm's latest goal so far
                    marker.set_T(_latest(self.goals[name], t))
                world.scene.update_debug_objects()
                yield camera.frame()
        finally:  # the arms back where the simulation left them, moving as they were; no markers
            for name, (q, v) in kept.items():
                robots[name].teleport(q, v, np.array([0]))
            for marker in markers.values():
                world.scene.clear_debug_object(marker)


def _latest(goals: list[tuple[float, np.ndarray]], t: float) -> np.ndarray:
    """The last goal given by time t [s] (the first one before it)."""
    k = max(0, bisect.bisect_right([g[0] for g in goals], t + 1e-9) - 1)
    return goals[k][1]


def from_env(environ=os.environ) -> tuple[Recorder | None, bool]:
    """(the Recorder APP_TROSSEN_OUTPUTS asks for or None, whether APP_TROSSEN_GUI asks for the window)."""
    folder = environ.get(OUTPUTS_ENV)
    return (Recorder(folder) if folder else None), environ.get(GUI_ENV, "") not in ("", "0")
