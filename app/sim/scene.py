"""A PyBullet world with one or many environments laid on a grid (Genesis-style API).

Add robots and boxes, then ``build(n_envs, env_spacing)`` creates one copy of everything per
environment. ``n_envs=None`` means one environment and unbatched shapes on the robots. As in
Genesis, ``env_spacing`` only places the copies for viewing: robots, boxes and debug frames
take and return poses in their own environment's frame; ``scene.env_origins`` (n_envs, 3)
gives the world origin of each environment for world-frame work.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping, Sequence

import numpy as np
import pybullet as pb

from app.collision.object_urdf import check_object_file
from app.errors import AppError, InputError
from app.kinematics.compose import RobotPart, compose_urdf
from app.kinematics.rotations import wxyz_to_xyzw
from app.kinematics.urdf import RobotDescription, parse_urdf_string
from app.sim.debug_frames import DebugFrame, pose_of
from app.sim.env_frames import as_indices
from app.sim.objects import SceneObject
from app.sim.robot import Robot
from app.specs import BoxSpec, ObjectSpec  # noqa: F401 - BoxSpec: app.BoxSpec, the scene's box type
from app.specs.look_spec import LookSpec
from app.validation import MAX_MAGNITUDE, as_point, check_spec

log = logging.getLogger(__name__)

MAX_ENVS = 1024  # Scene.build's default bound on n_envs (its max_envs= keyword raises it)


def display_available() -> bool:
    """Whether an X display is set (PyBullet's GUI kills the process without one)."""
    return bool(os.environ.get("DISPLAY"))


MIN_DT, MAX_DT = 1e-4, 1.0  # [s] the physics steps a scene takes (physics_hz 10000 .. 1 in a scene file)


class Scene:
    """PyBullet client, environments on a grid, robots, static boxes and target-frame markers.

    Args:
        gui: Open PyBullet's window (needs DISPLAY; raises AppError otherwise).
        dt: Physics time step [s].
        gravity: World gravity [m/s^2]. Shape (3,).
        solver_iterations: PyBullet's contact solver iterations per step (None: PyBullet's default, 50).
        cone_friction: PyBullet's friction cone (True, its default) or the cheaper pyramid approximation.
    """

    def __init__(self, gui: bool = False, dt: float = 1.0 / 240.0, gravity: Sequence[float] = (0.0, 0.0, -9.81),
                 solver_iterations: int | None = None, cone_friction: bool = True):
        if not (isinstance(dt, (int, float)) and not isinstance(dt, bool) and MIN_DT <= dt <= MAX_DT):
            raise InputError(f"dt must be a physics step in [{MIN_DT:g}, {MAX_DT:g}] s (1 to 10000 Hz, as a scene "
                             f"file's physics_hz), got {dt!r}")
        gravity = as_point(gravity, "gravity")
        if np.abs(gravity).max() > MAX_MAGNITUDE:
            raise InputError(f"gravity must be within +-{MAX_MAGNITUDE:g} m/s^2, got {gravity.tolist()}")
        if solver_iterations is not None and not (isinstance(solver_iterations, int) and 1 <= solver_iterations <= 1000):
            raise InputError(f"solver_iterations must be an integer in 1..1000 (or None), got {solver_iterations!r}")
        if gui and not display_available():
            raise AppError("--gui needs a display: DISPLAY is not set (use xvfb-run, or run without --gui)")
        self.gui, self.dt = gui, float(dt)
        self.client = pb.connect(pb.GUI if gui else pb.DIRECT)
        if gui:  # the parameter panel (sliders) shown, the camera preview panes hidden
            for flag, on in ((pb.COV_ENABLE_GUI, 1), (pb.COV_ENABLE_RGB_BUFFER_PREVIEW, 0),
                             (pb.COV_ENABLE_DEPTH_BUFFER_PREVIEW, 0), (pb.COV_ENABLE_SEGMENTATION_MARK_PREVIEW, 0)):
                pb.configureDebugVisualizer(flag, on, physicsClientId=self.client)
        pb.setGravity(*gravity, physicsClientId=self.client)
        pb.setTimeStep(self.dt, physicsClientId=self.client)
        if solver_iterations is not None:
            pb.setPhysicsEngineParameter(numSolverIterations=solver_iterations, physicsClientId=self.client)
        if not cone_friction:
            pb.setPhysicsEngineParameter(enableConeFriction=0, physicsClientId=self.client)
        self.robots: list[Robot] = []
        self.objects: dict[str, SceneObject] = {}
        self.boxes: list[BoxSpec] = []
        self.box_ids: dict[str, list[int]] = {}
        self.markers: list[DebugFrame] = []
        self.visualizer = _Visualizer(self)
        self.look = LookSpec().resolved()  # how its pictures look (app.sim.look.apply_look dresses it)
        self.n_envs: int | None = None
        self.env_origins = np.zeros((1, 3))
        self.built = False
        self.t = 0.0

    def add_robot(self, urdf: str, base_pos=(0.0, 0.0, 0.0), base_quat=(1.0, 0.0, 0.0, 0.0),
                  package_dirs: Sequence[str] | None = None, xacro_args: Mapping[str, object] | None = None,
                  description: RobotDescription | None = None, arm_links: Sequence[str] = ()) -> Robot:
        """Declare a fixed-base robot from a URDF or ``.xacro`` file (``xacro_args``: its ``$(arg)`` values);
        bodies are created by :meth:`build`. Base pose in each environment's frame (quat wxyz). ``description``:
        the file already read and parsed (app.kinematics.urdf.read_robot), not read again. ``arm_links``: the
        end effectors of arms that touch each other physically (app.sim.robot.Robot.collide_arms)."""
        self._check_not_built()
        robot = Robot(self.client, str(urdf), base_pos, base_quat, package_dirs, xacro_args, description=description,
                      arm_links=arm_links)
        self.robots.append(robot)
        return robot

    def add_robots(self, parts: Sequence[RobotPart], base_pos=(0.0, 0.0, 0.0), base_quat=(1.0, 0.0, 0.0, 0.0),
                   name: str = "rig", description: RobotDescription | None = None) -> Robot:
        """Declare several robots as one fixed-base rig (app.kinematics.compose): robot ``NAME``'s links and
        joints are ``NAME/...``, its base at its part's pose in the rig's frame, the rig at ``base_pos`` /
        ``base_quat`` (wxyz) in each environment's frame; one DOF vector, the parts' DOFs in their order.
        ``description``: the rig already composed and parsed from these parts, not composed again."""
        self._check_not_built()
        label = f"{name} ({', '.join(f'{p.name}: {p.urdf}' for p in parts)})"
        if description is None:
            text = compose_urdf(list(parts), name)
            description = RobotDescription(text, parse_urdf_string(text, label))
        robot = Robot(self.client, label, base_pos, base_quat, None, description=description)
        self.robots.append(robot)
        return robot

    def add_box(self, box: BoxSpec) -> None:
        """Declare a static box (table, obstacle)."""
        self._check_not_built()
        if not isinstance(box, BoxSpec):
            raise InputError(f"add_box takes a BoxSpec, got {type(box).__name__}")
        self.declare_box(check_spec(box, f"box {box.name!r}"))

    def add_object(self, spec: ObjectSpec) -> SceneObject:
        """Declare a dynamic body (one copy per environment, created by :meth:`build`); names are unique among
        objects and boxes."""
        self._check_not_built()
        if not isinstance(spec, ObjectSpec):
            raise InputError(f"add_object takes an ObjectSpec, got {type(spec).__name__}")
        spec = check_spec(spec, f"object {spec.name!r}")
        check_object_file(spec.shape, spec.file, f"object {spec.name!r}")  # PyBullet crashes on some broken meshes
        return self.declare_object(spec)

    def declare_box(self, box: BoxSpec) -> None:
        """:meth:`add_box` for a box already checked (app.validation.check_spec: a run config's, by its loader)."""
        self._check_not_built()
        if any(b.name == box.name for b in self.boxes):
            raise InputError(f"a box named '{box.name}' was already added: each box needs its own name")
        self.boxes.append(box)

    def declare_object(self, spec: ObjectSpec) -> SceneObject:
        """:meth:`add_object` for a spec already checked, its mesh file too (a run config's, by its loader)."""
        self._check_not_built()
        if spec.name in self.objects or any(b.name == spec.name for b in self.boxes):
            raise InputError(f"an object or box is already called {spec.name!r}: names must be unique")
        self.objects[spec.name] = obj = SceneObject(self.client, spec)
        return obj

    def build(self, n_envs: int | None = None, env_spacing: Sequence[float] = (1.0, 1.0), *,
              env_origins: np.ndarray | None = None, max_envs: int = MAX_ENVS) -> None:
        """Create every body once per environment, on a near-square grid centred on the origin (or at the
        world points ``env_origins`` (n_envs, 3): one worker's share of a larger grid); ``n_envs`` above
        ``max_envs`` is refused before anything is created (each environment costs memory and build time)."""
        self._check_not_built()
        if n_envs is not None and (not isinstance(n_envs, (int, np.integer)) or isinstance(n_envs, bool)
                                   or n_envs < 1):
            raise InputError(f"n_envs must be an integer >= 1 or None, got {n_envs!r}")
        if n_envs is not None and n_envs > max_envs:
            raise InputError(f"n_envs={n_envs} is above max_envs={max_envs} (each environment costs ~20 MB and "
                             "build time): pass scene.build(..., max_envs=N) to allow more")
        self.n_envs = n_envs
        count = 1 if n_envs is None else int(n_envs)
        with self.rendering_paused():
            self._build_bodies(count, n_envs, env_spacing, env_origins)

    @contextlib.contextmanager
    def rendering_paused(self):
        """The window draws nothing while bodies are made inside (a body drawn as it is added made the window
        of 16 arms take 42 s to come up); no effect without a window."""
        if not self.gui:
            yield
            return
        pb.configureDebugVisualizer(pb.COV_ENABLE_RENDERING, 0, physicsClientId=self.client)
        try:
            yield
        finally:
            pb.configureDebugVisualizer(pb.COV_ENABLE_RENDERING, 1, physicsClientId=self.client)

    def _build_bodies(self, count: int, n_envs: int | None, env_spacing, env_origins) -> None:
        """Every body of every environment (see :meth:`build`)."""
        self.env_origins = grid_origins(count, env_spacing) if env_origins is None else \
            np.asarray(env_origins, dtype=float).reshape(count, 3)
        for box in self.boxes:
            self.box_ids[box.name] = [self._create_box(box, origin) for origin in self.env_origins]
        for obj in self.objects.values():
            obj.build(self.env_origins, n_envs is not None)
            self.box_ids[obj.name] = obj.body_ids  # watched by distance rows like the boxes
        for robot in self.robots:
            robot.build(self.env_origins, batched=n_envs is not None, box_ids=self.box_ids, box_specs=self.boxes,
                        objects=self.objects)
        self.built = True
        for frame in self.markers:
            self._materialize(frame)

    def _create_box(self, box: BoxSpec, origin: np.ndarray) -> int:
        half = [s / 2 for s in box.size]
        vis = pb.createVisualShape(pb.GEOM_BOX, halfExtents=half, rgbaColor=box.rgba, physicsClientId=self.client)
        col = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=half, physicsClientId=self.client) \
            if box.collision else -1
        return pb.createMultiBody(0, col, vis, (origin + np.array(box.pos)).tolist(),
                                  wxyz_to_xyzw(np.array(box.quat)).tolist(), physicsClientId=self.client)

    def _check_not_built(self) -> None:
        self._check_open()
        if self.built:
            raise AppError("the scene is already built; add entities before scene.build()")

    def reset(self) -> None:
        """Back to the state after build: robots at their initial joint positions, at rest, time 0."""
        self._check_open()
        for robot in self.robots:
            robot.reset()
        self.t = 0.0

    def detect_contacts(self) -> None:
        """PyBullet's collision detection without a step: the contacts of pairs that no longer overlap are
        dropped, so a body teleported away and back starts without the contact impulses it had (the solver's
        warm start), as a freshly built one does."""
        self._check_open()
        pb.performCollisionDetection(physicsClientId=self.client)

    def object_poses(self) -> np.ndarray | None:
        """Every object's pose in each environment's frame (n_envs, n_objects, 7): position, quat wxyz; None: none."""
        if not self.objects:
            return None
        return np.stack([np.concatenate(obj.poses(), axis=1) for obj in self.objects.values()], axis=1)

    def step(self) -> None:
        """Advance the physics by dt."""
        self._check_open()
        pb.stepSimulation(physicsClientId=self.client)
        for robot in self.robots:
            robot.after_step()
        self.t += self.dt

    def draw_debug_frame(self, T: object, axis_length: float = 0.1, origin_size: float | None = None,
                         axis_radius: float = 0.004, *, quat: object = None, envs_idx: object = None) -> DebugFrame:
        """A coordinate frame in each environment's frame, visible in the GUI and in rendered video
        (Genesis's arguments in Genesis's order; our default sizes suit a 0.5 m arm).

        Args:
            T: Genesis's 4x4 transform (4, 4), or a position (3,) [m] with ``quat`` (4,) wxyz; per-environment
                poses (k, 4, 4) / (k, 3) for the k environments drawn in.
            axis_length, axis_radius, origin_size: Sizes [m] (origin_size: diameter of the origin sphere;
                None: 3.6 axis radii).
            quat: (keyword) The orientation when T is a position. envs_idx: Environments to draw in; None: all.
        Returns:
            The frame; move it with ``set_pose``/``set_T``/``set_qpos``, then :meth:`update_debug_objects`.
        """
        self._check_open()
        for name, size in (("axis_length", axis_length), ("axis_radius", axis_radius), ("origin_size", origin_size)):
            if size is not None and (isinstance(size, bool) or not isinstance(size, (int, float, np.number))
                                     or not 0 < size < np.inf):
                raise InputError(f"{name} must be a positive length [m], got {size!r:.40}")
        pos, quat = pose_of(T, quat)
        frame = DebugFrame(pos, quat, axis_length, axis_radius, origin_size, envs_idx)
        self.markers.append(frame)
        if self.built:
            self._materialize(frame)
        return frame

    def _materialize(self, frame: DebugFrame) -> None:
        envs = as_indices(frame.envs_idx, "envs_idx", len(self.env_origins), "environments")
        frame.materialize(self.client, self.env_origins, envs, self.n_envs is not None)

    def update_debug_objects(self) -> None:
        """Apply the poses queued on every debug frame."""
        for frame in self.markers:
            frame.apply()

    def draw_debug_frames(self, Ts: object, axis_length: float = 0.1, origin_size: float | None = None,
                          axis_radius: float = 0.004) -> list[DebugFrame]:
        """Genesis's ``draw_debug_frames``: one frame per transform Ts (k, 4, 4), each in every environment."""
        Ts = np.asarray(Ts, dtype=float)
        if Ts.ndim != 3 or Ts.shape[1:] != (4, 4):
            raise InputError(f"Ts must have shape (k, 4, 4), got {Ts.shape}")
        return [self.draw_debug_frame(T, axis_length, origin_size, axis_radius) for T in Ts]

    def clear_debug_object(self, frame: DebugFrame) -> None:
        """Remove one debug frame."""
        frame.remove()
        self.markers = [f for f in self.markers if f is not frame]

    def clear_debug_objects(self) -> None:
        """Remove every debug frame."""
        for frame in self.markers:
            frame.remove()
        self.markers = []

    def close(self) -> None:
        if self.client is not None and pb.isConnected(self.client):
            pb.disconnect(self.client)
        self.client = None
        for robot in self.robots:
            robot.closed = True
        for obj in self.objects.values():
            obj.closed = True

    def _check_open(self) -> None:
        if self.client is None:
            raise AppError("the scene is closed (scene.close() was called): build a new Scene")

    def __enter__(self) -> Scene:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def grid_origins(n: int, spacing: Sequence[float]) -> np.ndarray:
    """Origins of n environments on a near-square grid centred on (0, 0). Shape (n, 3)."""
    spacing = np.asarray(spacing, dtype=float)
    if spacing.shape != (2,) or not np.all(np.isfinite(spacing)):
        raise InputError(f"env_spacing must be (dx, dy) in metres, got {spacing.tolist()}")
    cols = int(np.ceil(np.sqrt(n)))
    rows = int(np.ceil(n / cols))
    i = np.arange(n)
    x = (i % cols - (cols - 1) / 2) * spacing[0]
    y = ((rows - 1) / 2 - i // cols) * spacing[1]
    return np.stack([x, y, np.zeros(n)], axis=1)


class _Visualizer:
    """``scene.visualizer.update()``, as in Genesis: shows queued debug-frame poses."""

    def __init__(self, scene: Scene):
        self._scene = scene

    def update(self) -> None:
        self._scene.update_debug_objects()
