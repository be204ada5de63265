"""What every render process needs before its first frame, loaded once in their fork server.

The render processes fork from a server (multiprocessing's forkserver) that imports this module first:
the video job's modules, and numba's compiled kernels for a robot's forward kinematics and rotations
(numba compiles per argument type, not per robot, so a one-joint arm loads the same machine code a
WidowX needs). Each render process then starts with them in memory instead of loading them itself
(0.31 -> 0.05 s of CPU per process, on the cores the simulation needs).
"""

from __future__ import annotations

import importlib
import sys

import numpy as np

from app.kernels.dispatch import run_in_background
from app.runtime.render_server import quiet_orphan_start

run_in_background()  # first: the server (its imports too) and the render processes it forks leave the simulation its core

from app.kinematics.model import KinematicModel  # noqa: E402
from app.kinematics.rotations import matrix_to_quat, quat_to_matrix  # noqa: E402

_ONE_JOINT = """<robot name="preload">
  <link name="base"/><link name="tip"/>
  <joint name="j" type="revolute"><parent link="base"/><child link="tip"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""


def load_kernels() -> None:
    """Run the kernels a renderer runs, once, on a one-joint arm."""
    model = KinematicModel.from_urdf_string(_ONE_JOINT)
    model.forward_kinematics(np.zeros((2, model.n_dofs)), ["tip"])
    matrix_to_quat(quat_to_matrix(np.array([[1.0, 0.0, 0.0, 0.0]])))


sys.excepthook = quiet_orphan_start  # inherited by each render process it forks
importlib.import_module("app.episode.video_job")  # the renderer's modules
load_kernels()
