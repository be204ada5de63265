"""A scripted GUI session under Xvfb (tests/test_gui.py): ``m`` cycles the view through a fixed named camera and a
camera on the gripper, then back to the free view. Prints a JSON line: per step the view's name, the window
camera's eye and viewing axis (PyBullet's own view matrix), the chosen camera's pose, and the preview's size and
mean colour; saves the preview pictures and a screenshot of the X screen while the wrist camera is shown."""

import json
import subprocess
import sys
from pathlib import Path

import imageio.v2 as imageio
import numpy as np
import pybullet as pb

from app.config.loader import load_run_config
from app.episode.gui import run_gui
from tests.gui.xwd import read_xwd

out = Path(sys.argv[1])
WRIST = {"name": "cam_wrist", "link": "ee_gripper_link", "offset_pos": [-0.06, 0.0, 0.05],
         "offset_quat": [0.5, -0.5, 0.5, -0.5], "width": 320, "height": 240, "fps": 30, "fov": 70}
HIGH = {"name": "cam_high", "eye": [-0.15, 0.0, 0.75], "target": [0.35, 0.0, 0.0], "width": 640, "height": 480,
        "fps": 30, "fov": 58}
run = load_run_config("configs/single_ik.yaml", {"scene_overrides.cameras": [HIGH, WRIST]}, duration=1.0)
steps = []


def hook(session):
    tick = session.on_tick

    def on_tick(k, controller, q):
        if k in (40, 80, 120, 160):
            if k > 40:  # what the previous 'm' showed, redrawn at this tick's joints
                session.q_last = q
                session.draw(controller)
                info = pb.getDebugVisualizerCamera(physicsClientId=session.scene.client)
                V = np.array(info[2]).reshape(4, 4).T
                name = session.views.name
                entry = {"name": name, "eye": (-V[:3, :3].T @ V[:3, 3]).tolist(), "axis": (-V[2, :3]).tolist()}
                if name is not None:
                    p, R = session.views.cameras.poses(np.asarray(session.q_last).reshape(-1))[name]
                    picture = session.views.last_picture
                    imageio.imwrite(out / f"preview_{name}.png", picture)
                    entry.update(cam_eye=p.tolist(), cam_axis=R[:, 2].tolist(), preview=list(picture.shape),
                                 mean=picture.reshape(-1, 3).mean(axis=0).tolist(), line=session.status_line(
                                     controller, np.zeros(1, int)))
                    if name == "cam_wrist":
                        shot = subprocess.run(["xwd", "-root", "-silent"], capture_output=True, check=True).stdout
                        imageio.imwrite(out / "screen_wrist.png", read_xwd(shot))
                    entry["pixel_std"] = float(picture.std())
                steps.append(entry)
            session.handle_key(ord("m"))
        return tick(k, controller, q)

    session.on_tick = on_tick


run_gui(run, None, max_steps=170, session_hook=hook)
print(json.dumps({"steps": steps}))
