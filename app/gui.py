"""Interactive run in PyBullet's window, in real time.

Sliders move the target of environment 0; keys: space pauses or resumes, n steps once while
paused, r puts the arms back to their initial joint positions. Without a display it refuses
with a clear error (PyBullet would kill the process).
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from app.config.schema import RunConfig
from app.control.tasks import TargetGenerator, Targets
from app.runner import simulate
from app.build import build_scene
from app.sim.camera import save_window_view
from app.sim.scene import display_available
from app.sim.window import Window
from app.errors import AppError

log = logging.getLogger(__name__)
KEY_SPACE, KEY_N, KEY_R = ord(" "), ord("n"), ord("r")


class GuiControls:
    """Sliders and keyboard of the window; paces the loop to real time.

    Args:
        scene, robot: The built GUI scene. dt: Physics step [s].
    """

    def __init__(self, scene, robot, dt: float):
        self.scene, self.robot, self.dt = scene, robot, dt
        self.window = Window(scene.client)
        self.window.add_sliders([f"target d{axis} [m]" for axis in "xyz"], -0.2, 0.2)
        self.q0 = robot.get_qpos()
        self.paused = False
        self._wall0 = time.perf_counter()

    def offset(self) -> np.ndarray:
        return self.window.sliders()

    def hook(self, t: float, targets: Targets) -> Targets:
        """Move environment 0's targets by the sliders' offset."""
        pos = targets.pos.copy()
        pos[0] += self.offset()
        return Targets(pos, targets.quat, targets.vel)

    def on_tick(self, k: int) -> None:
        """Handle keys, wait while paused, sleep to stay in real time."""
        while True:
            pressed = self.window.keys_pressed()
            if KEY_SPACE in pressed:
                self.paused = not self.paused
                log.info("paused" if self.paused else "resumed")
            if KEY_R in pressed:
                self.robot.set_qpos(self.q0)
            if not self.paused or KEY_N in pressed:
                break
            time.sleep(0.01)
            self._wall0 = time.perf_counter() - (k + 1) * self.dt
        lag = (k + 1) * self.dt - (time.perf_counter() - self._wall0)
        if lag > 0:
            time.sleep(lag)


def run_gui(run: RunConfig, screenshot: str | Path | None = None) -> None:
    """Run ``run`` in the window for its duration; optionally save a PNG of the window's view at the end."""
    if not display_available():
        raise AppError("--gui needs a display: DISPLAY is not set (run without --gui, or under xvfb-run)")
    scene, robot = build_scene(replace(run, video=replace(run.video, enabled=False)), gui=True)
    try:
        cam = run.scene_config.camera
        controls = GuiControls(scene, robot, scene.dt)
        controls.window.look_at(cam.target)
        targets = TargetGenerator(run.task, robot.n_envs, np.array(run.scene_config.robot.base_pos), run.seed)
        simulate(run, scene, robot, targets, on_tick=controls.on_tick, target_hook=controls.hook)
        if screenshot is not None:
            save_window_view(scene.client, Path(screenshot))
    finally:
        scene.close()

