"""Interactive run in PyBullet's window, in real time, for finding out why an arm misses.

The parameter panel holds sliders for the selected environment's target (offsets x, y, z [m] and roll,
pitch, yaw [rad]) and one that selects the environment. Drawn live: each target frame (thick) and the
end effector's actual frame (thin), a status light per environment (the colours of
app.control.status) and a text line for the selected one (errors, status, constraints at their bound).
The window stays open after the run's duration, holding the last target, until the user quits (q, ESC
or closing the window); then the report and plot are written as a headless run writes them.
In a pick-and-place the x and y sliders move the selected environment's place target instead, ``e`` picks
again there, and the text line gives the phase and the gripper's state. ``m`` cycles the view through the
scene's named cameras (app.sim.camera_views: the window at the camera, its exact picture in the preview pane).
Keys avoid PyBullet's own (a c d g i j k l o p s v w, F1, ESC): ``p`` is PyBullet's (it starts a profile).
"""

from __future__ import annotations

import logging
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from app.config.schema import RunConfig
from app.control.motions import TargetGenerator, Targets
from app.control.phases import code_label
from app.control.status import STATUS_STYLE, EnvStatus, latest_status
from app.episode.execute import abandon, write_plot, write_report
from app.episode.gui_keys import HELP
from app.episode.loop import Episode, final_state, make_episode, simulate
from app.episode.motion_factory import run_motion
from app.episode.run_report import report_dict, target_labels, task_links
from app.episode.scene_build import build_scene
from app.errors import AppError
from app.kinematics.rotations import matrix_to_quat, quat_to_matrix, rpy_to_matrix
from app.runtime.outputs import OutputSet
from app.sim.camera import save_window_view
from app.sim.camera_views import CameraViews
from app.sim.scene import display_available
from app.sim.sphere_markers import SphereMarkers
from app.sim.window import StatusLights, Window

log = logging.getLogger(__name__)
STATUS_WIDTH, STATUS_LINES = 64, 3  # characters a status line holds in the window; lines it may take
DRAW_EVERY = 8  # physics steps between redraws of frames and lights, and reads of keys and sliders (30 Hz at 240 Hz)
TEXT_EVERY = 3 * DRAW_EVERY  # the text (10 Hz, as fast as one reads it): each changed line waits for a frame
MOTION_HOLD_S = 1.0  # [s] simulated: how long the text shows a limit an environment's motion passed (app.quality)
GUI_MOTION_KEEP_S = 60.0  # [s] simulated: a session runs until closed; its motion report judges the last minute
PLACE_SLIDERS = ("place dx [m]", "place dy [m]")  # a pick-and-place: where the selected environment puts it
HOLDING_WORDS = ("lift", "carry", "place", "to_meet", "take")  # phases in which a gripper holds the object up
SLIDERS = ("target dx [m]", "target dy [m]", "target dz [m]", "target droll [rad]", "target dpitch [rad]",
           "target dyaw [rad]")


class GuiSession:
    """The window's state and handlers; the loop calls :meth:`hook` and :meth:`on_tick`.

    Args:
        run: The run. scene, robot: Its built GUI scene. targets: The run's target generator.
    """

    def __init__(self, run: RunConfig, scene, robot, targets: TargetGenerator):
        self.run, self.scene, self.robot, self.targets = run, scene, robot, targets
        self.arm_names = target_labels(run)  # each target's arm, for the text line ('' for one unnamed robot)
        self.window = Window(scene.client)
        n = robot.n_envs
        self._env_slider = self.window.add_slider("environment", 0, max(n - 1, 1e-9), 0) if n > 1 else None
        names = PLACE_SLIDERS if targets.feedback else SLIDERS
        self._first = [self.window.add_slider(name, -0.2 if "[m]" in name else -1.6,
                                              0.2 if "[m]" in name else 1.6) for name in names][0]
        self._n_sliders = len(names)
        self._sliders_now = self.window.sliders()  # read with the keys, DRAW_EVERY steps (each read waits a frame)
        self.selected, self.paused, self.follow, self.show_help, self.quit = 0, False, False, True, False
        self._last_env_slider, self._step_once = 0, False
        self.offsets = np.zeros((n, 6))  # per environment: dx dy dz [m], droll dpitch dyaw [rad]
        self._slider_base, self._held = np.zeros(6), np.zeros(6)  # at the last selection: sliders, offsets
        self.links = [robot.model.link_index(name) for name in task_links(run)]
        self.actual = scene.draw_debug_frame(np.zeros((n, 3)), quat=np.tile([1.0, 0, 0, 0], (n, 1)),
                                             axis_length=0.05, axis_radius=0.0018)
        base = np.asarray(run.scene_config.robot.base_pos)
        self.lights = StatusLights(scene.client, scene.env_origins + base + [0.0, -0.14, 0.03], radius=0.022)
        self.spheres = SphereMarkers(robot) if run.video.show_spheres else None  # the collision spheres, drawn
        self.q_last = robot.read_states()[0]
        self._place0 = targets.place[:, :2].copy() if targets.feedback else None
        self.k, self.controller = 0, None
        self.episode: Episode | None = None  # the run's controller, feedback and invariants (run_gui makes it)
        self.motion_note: dict[int, tuple[str, int]] = {}  # env -> (a limit its motion passed, shown until step k)
        self._wall0 = time.perf_counter()
        self.window.look_at(scene.env_origins[0] + np.asarray(run.scene_config.camera.target))
        self.views = CameraViews(scene, robot, list(run.scene_config.cameras))

    # ------------------------------------------------------------------ keys
    def handle_key(self, key: int) -> None:
        """What one key press does (the scripted tests call this directly)."""
        n = self.robot.n_envs
        if key == ord(" "):
            self.paused = not self.paused
            log.info("paused" if self.paused else "resumed")
        elif key == ord("n"):
            self._step_once = True
        elif key == ord("r"):
            self.robot.reset()
            if self.controller is not None:  # its last answers and command are of the motion before the reset
                self.controller.reset()
            log.info("arms reset to their initial joint positions")
        elif key in (ord("["), ord("]")):
            self.select((self.selected + (1 if key == ord("]") else -1)) % n)
        elif key == ord("f"):
            self.follow = not self.follow
        elif key == ord("e") and self.targets.can_restart:
            self.targets.restart([self.selected])
            log.info("environment %d: picking again", self.selected)
        elif key == ord("m") and not self.views.streams:
            log.info("the scene has no named cameras (cameras:) to view from")
        elif key == ord("m"):
            name = self.views.cycle()
            log.info("view from %s", name or "the free camera")
            if name is None and self.window.open:
                self.window.hide_preview()
                self._look_at_selected()
        elif key == ord("h"):
            self.show_help = not self.show_help
        elif key == ord("q"):
            self.quit = True

    def select(self, env: int) -> None:
        """Select environment ``env``: the sliders move its target, the camera turns to it."""
        self.selected = int(env)
        if self.window.open:  # the sliders now move this environment from where it is: no jump
            self._sliders_now = self.window.sliders()
            self._slider_base = self._slider_values()
        self._held = self.offsets[self.selected].copy()
        log.info("environment %d selected", self.selected)
        self._look_at_selected()

    def _slider_values(self) -> np.ndarray:
        """The offset sliders' values, as 6 offsets (dx dy dz droll dpitch dyaw; zeros where no slider)."""
        out = np.zeros(6)
        out[:self._n_sliders] = self._sliders_now[self._first:self._first + self._n_sliders]
        return out

    def _look_at_selected(self) -> None:
        dist, yaw, pitch = self.window.camera()
        self.window.look_at(self.scene.env_origins[self.selected] + np.asarray(self.run.scene_config.camera.target),
                            dist, yaw, pitch)

    # ------------------------------------------------------------------ the loop's callbacks
    def hook(self, t: float, targets: Targets) -> Targets:
        """The run's targets, held at their last value after the duration; the sliders move the selected
        environment's target from where it was when selected (the others keep the offsets they had)."""
        if self.window.open:  # else the offsets of the last tick (the window was closed)
            moved = self._slider_values() - self._slider_base
            self.offsets[self.selected] = self._held + moved
        if self.targets.feedback:  # a pick or hand-over: the sliders move the place target
            motion = self.targets
            motion.place[:, :2] = self._place0 + self.offsets[:, :2]
            return motion(t)
        targets = self.targets(min(t, self.run.duration))
        pos, quat = targets.pos.copy(), targets.quat.copy()
        for e in np.flatnonzero(np.any(self.offsets != 0, axis=1)):
            pos[e] += self.offsets[e, :3]
            turn = rpy_to_matrix(self.offsets[e, 3:])
            quat[e] = matrix_to_quat(turn @ quat_to_matrix(quat[e]))
        return Targets(pos, quat, targets.vel if t < self.run.duration else np.zeros_like(targets.vel))

    def on_tick(self, k: int, controller, q: np.ndarray) -> bool:
        """Keys, drawing, pause and real-time pacing after physics step k; True to stop."""
        if self.controller is None:  # the first tick: from here a key acts on the run (scripts wait for this line)
            log.info("GUI: the run has begun")
        self.k, self.q_last, self.controller = k, q, controller
        if self.spheres is not None and k % 4 == 0:  # 60 Hz of moving spheres is enough to see them
            self.spheres.update(q)
        self._poll(controller)
        while self.paused and not self._step_once and not self.quit:
            time.sleep(0.02)
            self._poll(controller)
            self._wall0 = time.perf_counter() - (k + 1) * self.scene.dt
        self._step_once = False
        lag = (k + 1) * self.scene.dt - (time.perf_counter() - self._wall0)
        if lag > 0:
            time.sleep(lag)
        return self.quit

    def _poll(self, controller) -> None:
        """Keys, sliders and drawing every DRAW_EVERY steps (30 times a second at 240 Hz), and at each poll while
        paused: under a software renderer each of these PyBullet calls waits for the window's next frame."""
        if self.k % DRAW_EVERY and not self.paused:
            return
        if not self.window.open:
            self.quit = True
            return
        for key in sorted(self.window.keys_pressed()):
            self.handle_key(key)
        self._sliders_now = self.window.sliders()
        if self._env_slider is not None:
            chosen = int(round(self._sliders_now[self._env_slider]))
            if chosen != self._last_env_slider:
                self._last_env_slider = chosen
                self.select(chosen)
        self.draw(controller)

    def draw(self, controller) -> None:
        """Actual end-effector frames, status lights, the selected environment's planned path and text, the
        camera."""
        pos, quat = self.robot.forward_kinematics(self.robot.unbatch(self.q_last), links_idx_local=self.links[:1])
        pos, quat = np.reshape(pos, (-1, 3)), np.reshape(quat, (-1, 4))
        self.actual.set_pose(self.robot.unbatch(pos), self.robot.unbatch(quat))
        self.scene.update_debug_objects()
        status = latest_status(controller.telemetry, self.robot.n_envs)
        self.lights.set([STATUS_STYLE[EnvStatus(c)][1] for c in status])
        origin = self.scene.env_origins[self.selected]
        if self.targets.paths is not None:  # the selected environment's planned path(s), as dots
            self.window.points("planned path", self.targets.paths[self.selected] + origin)
        if self.episode is not None:  # what each environment's motion passed since the last draw, held a second
            hold = self.k + int(round(MOTION_HOLD_S / self.scene.dt))
            self.motion_note |= {e: (m, hold) for e, m in enumerate(self.episode.motion.watch_live().take()) if m}
        if self.k % TEXT_EVERY == 0 or self.paused:
            self._draw_text(controller, status, origin)
        if self.views.name is not None:
            self.views.show(self.window, np.asarray(self.q_last).reshape(self.robot.n_envs, -1)[self.selected], origin)
        elif self.follow:
            self._look_at_selected()

    def _draw_text(self, controller, status: np.ndarray, origin: np.ndarray) -> None:
        """The selected environment's text line and the help, left of it in sight (one text item per line)."""
        head = wrap_status(self.status_line(controller, status))[:STATUS_LINES]
        lines = head + (WINDOW_HELP if self.show_help else [])
        dist = self.window.camera()[0]
        top = origin + np.asarray(self.run.scene_config.camera.target) + [0.0, 0.0, 0.42 * dist / 0.9] \
            - 0.5 * dist * self.window.right()
        for i in range(STATUS_LINES + len(WINDOW_HELP)):  # PyBullet draws one line per text item, centred
            self.window.text(f"line{i}", [lines[i] if i < len(lines) else ""], top - [0.0, 0.0, 0.032 * i * dist / 0.9],
                             rgb=(0.6, 0.0, 0.0) if i < len(head) else (0.05, 0.05, 0.05), size=1.0)

    def status_line(self, controller, status: np.ndarray) -> str:
        """'env 3 | tracking | pos 1.20 mm | rot 0.40 deg | at bound: 2 (table)' for the selected environment."""
        tel, e = controller.telemetry, self.selected
        if not tel.t:
            return f"env {e} | starting"
        label = STATUS_STYLE[EnvStatus(int(status[e]))][0]
        names = tel.active_names[-1][e] if tel.active_names else []
        bound = f" | at bound: {int(tel.n_active[-1][e])}" + (f" ({', '.join(names[:3])})" if names else "")
        held = " | paused" if self.paused else ""
        after = " | holding the last target" if self.scene.t >= self.run.duration else ""
        after += f" | view {self.views.name}" if self.views.name else ""
        pos = position_text(tel, e, self.arm_names)
        note, until = self.motion_note.get(e, ("", -1))
        jerk = f" | MOTION {note}" if note and self.k <= until else ""
        return (f"env {e} | {label} | pos {pos} | rot {np.degrees(tel.rot_err[-1][e]):.2f}"
                f" deg{bound}{self._pick_text(e)}{jerk}{held}{after}")

    def _pick_text(self, e: int) -> str:
        """' | carry | gripper 47 mm, holding' for a pick-and-place, else ''."""
        motion, gripper = self.targets, self.robot.gripper
        if gripper is None:
            return ""
        closing = gripper.state(self.q_last).closing[e]
        width = f"gripper {1e3 * gripper.max_opening * (1 - closing):.0f} mm"
        codes = motion.codes()
        if codes is None:
            return f" | {width}"
        code = int(codes[e])
        holding = ", holding" if code_label(code) in HOLDING_WORDS else ""
        return f" | {code_label(code)} | {width}{holding}"


def wrap_status(line: str, width: int = STATUS_WIDTH) -> list[str]:
    """The status line in pieces of at most ``width`` characters, cut only between its ' | ' fields (a field longer
    than that is a line of its own): the window shows whole lines, never one cut at its edge."""
    out: list[str] = []
    for field in line.split(" | "):
        if out and len(out[-1]) + 3 + len(field) <= width:
            out[-1] += " | " + field
        else:
            out.append(field)
    return out


WINDOW_HELP = [piece for text in HELP for piece in textwrap.wrap(text, STATUS_WIDTH, subsequent_indent="   ")]


def position_text(tel, e: int, names: tuple[str, ...]) -> str:
    """Environment e's latest position error: '1.20 mm', or per arm 'left 1.20 mm, right 0.80 mm' where the task
    moves named arms (``names``, one per target; app.episode.run_report.target_labels)."""
    if not names or not tel.pos_err_links:
        return f"{tel.pos_err[-1][e] * 1e3:.2f} mm"
    return ", ".join(f"{name} {err * 1e3:.2f} mm" for name, err in zip(names, tel.pos_err_links[-1][e]))


def run_gui(run: RunConfig, out_dir: Path | None = None, screenshot: str | Path | None = None,
            max_steps: int | None = None, session_hook=None) -> GuiSession:
    """Run ``run`` in the window until the user quits (or ``max_steps`` physics steps, for scripts); then
    write the report and plot into ``out_dir`` (if given) and return the session. ``session_hook(session)``
    runs once the window is up (tests drive it from there); ``screenshot``: a PNG of the window's view at the end."""
    if not display_available():
        raise AppError("--gui needs a display: DISPLAY is not set (run without --gui, or under xvfb-run)")
    outputs = OutputSet(out_dir) if out_dir is not None else None
    scene, robot = build_scene(replace(run, video=replace(run.video, enabled=False)), gui=True)
    try:
        targets = run_motion(run, robot.n_envs, robot=robot)
        window = Window(scene.client)
        with scene.rendering_paused():
            session = _closed_guard(window, None, lambda: GuiSession(run, scene, robot, targets))
        sys.stderr.write("GUI keys (also in the window):\n  " + "\n  ".join(HELP) + "\n")
        if session_hook is not None:
            session_hook(session)
        steps = max_steps if max_steps is not None else 10 ** 12  # until the user quits
        session.episode = make_episode(run, scene, robot, targets, motion_keep_s=GUI_MOTION_KEEP_S)
        episode, timings = _closed_guard(window, session, lambda: simulate(
            run, scene, robot, targets, on_tick=session.on_tick, target_hook=session.hook, n_steps=steps,
            show_progress=False, episode=session.episode))
        if screenshot is not None and session.window.open:
            save_window_view(scene.client, Path(screenshot))
        final_targets = None if targets.feedback else (lambda t: session.hook(t, None))  # where the sliders left them
        result = final_state(run, robot, episode, targets, scene.t, q=session.q_last, scene=scene,
                             targets=final_targets)
        result.timings = timings  # where the GUI's time went (a window closed mid-run: none measured)
    finally:
        scene.close()
    if outputs is None:  # a script's session: the summary only
        result.summary = report_dict(run, result, robot.model)["summary"]
    else:
        try:
            names = {**write_plot(run, result, outputs), **write_report(run, result, robot.model, outputs)}
            final = outputs.commit()
        except BaseException:
            abandon(outputs, None)
            raise
        for kind, name in names.items():
            log.info("%s: %s", kind, final[name])
    session.result = result
    return session


def _closed_guard(window: Window, session: GuiSession | None, work):
    """``work()``; when the user closes the window meanwhile, PyBullet's next call fails: the run then ends as
    if q was pressed (with the last tick's controller), or, before the first tick, with a clear error."""
    try:
        return work()
    except Exception:
        if window.open:
            raise
        if session is None or session.controller is None:
            raise AppError("the GUI window was closed before the run began: no output was written") from None
        session.quit = True
        return session.episode, {}
