"""The Genesis-style robot on PyBullet: state, motors, FK/Jacobian/IK per environment.

Poses are in each environment's own frame, as in Genesis (see app.sim.env_frames); arrays lead
with one row per addressed environment when the scene was built with ``n_envs``. PyBullet's
(x, y, z, w) quaternions are converted at this edge only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pybullet as pb

from app.collision import CollisionModel
from app.errors import AppError, InputError, UnknownNameError
from app.ik.limits.joint_box import LIMIT_MARGIN
from app.ik.robot_model import RobotModel
from app.kinematics.arms import cross_arm_pairs
from app.kinematics.base_frame import BaseFrame
from app.kinematics.urdf import RobotDescription, read_robot
from app.sim.env_frames import EnvRows, as_indices
from app.sim.gripper import Gripper, GripperSpec
from app.sim.handles import Joint, Link
from app.sim.hard_stops import HardStops
from app.sim.robot_collisions import RobotCollisions
from app.sim.robot_kinematics import RobotKinematics
from app.sim.self_collision import SELF_COLLISION_FLAGS, keep_only_pairs
from app.sim.sphere_world import SceneObjects
from app.sim.urdf_loader import LoadedBody, load_body, simulator_file
from app.validation import check_spec


class Robot(RobotKinematics, RobotCollisions):
    """A URDF (or xacro) robot, one body per environment (created by ``scene.build``).

    Args:
        client: The scene's PyBullet client. urdf: Description file. base_pos, base_quat: base pose in
        each environment's frame (quat wxyz). package_dirs: ROS package roots. xacro_args: ``$(arg)`` values.
    """

    def __init__(self, client: int, urdf: str, base_pos, base_quat, package_dirs: Sequence[str] | None,
                 xacro_args: Mapping[str, object] | None = None, description: RobotDescription | None = None,
                 arm_links: Sequence[str] = ()):
        """``description``: the description already read and parsed (a composed rig, or a file the config
        loader read), not read again; ``urdf`` then only names it in messages. ``arm_links``: see
        :meth:`collide_arms`."""
        self.client, self.urdf, self.package_dirs = client, urdf, list(package_dirs or [])
        if description is None:
            description = read_robot(urdf, self.package_dirs, xacro_args)
        self._text = description.text
        self.model = RobotModel(description.spec)
        self.contact_pairs = cross_arm_pairs(self.model, list(arm_links))  # self pairs that touch physically
        self.bodies: list[LoadedBody] = []
        self.base = BaseFrame.from_pose(base_pos, base_quat)
        self.base_pos, self.base_quat = self.base.p, self.base.quat
        self.position_gain = 0.1  # PyBullet motor kp for absolute position targets
        self.env_origins = np.zeros((1, 3))
        self.batched = False
        self.grippers: dict[str, Gripper] = {}  # arm name ('' for a robot's one gripper) -> its fingers
        self.arm_dofs = np.arange(self.model.n_dofs)  # what the controllers command: all but the grippers' DOFs
        self.last_command: np.ndarray | None = None  # the motor targets of the last command (n_envs, n_dofs)
        self.objects: dict = {}  # the scene's objects (name -> app.sim.objects.SceneObject), set by build
        self._scene_objects: dict[int, SceneObjects] = {}
        self.closed = False  # set by scene.close()
        self.box_ids: dict[str, list[int]] = {}
        self.box_specs: tuple = ()
        self._sphere_models: dict[tuple, CollisionModel] = {}
        self._planning_spheres = None  # RobotSpheres, read on first use (planning_spheres)
        self.stops: HardStops | None = None  # the joints' hard stops, made by build
        self._states: tuple[np.ndarray, np.ndarray] | None = None  # (q, v) measured since the last step or write

    # ------------------------------------------------------------------ building and names
    def collide_arms(self, ee_links: Sequence[str]) -> None:
        """Before ``scene.build``: the arms ending at ``ee_links`` (two or more) touch each other physically (every
        link of one arm with every link of another); each arm's own links still pass through each other."""
        if self.bodies:
            raise InputError("collide_arms must come before scene.build")
        self.contact_pairs = cross_arm_pairs(self.model, list(ee_links))

    def build(self, env_origins: np.ndarray, batched: bool, box_ids: dict[str, list[int]] | None = None,
              box_specs: Sequence = (), objects: Mapping | None = None) -> None:
        """Load one body per environment origin (world frame) and hold it at the mid-point of its limits;
        ``box_ids`` are the scene's static boxes (one body per environment each) for distance rows, ``box_specs``
        their BoxSpecs and ``objects`` the scene's SceneObjects (for the sphere collision model)."""
        self.env_origins, self.batched = np.asarray(env_origins, dtype=float), batched
        self.box_ids, self.box_specs = dict(box_ids or {}), tuple(box_specs)
        self.objects = dict(objects or {})
        with simulator_file(self.model, self._text, self.urdf, self.package_dirs) as file:
            flags = SELF_COLLISION_FLAGS if self.contact_pairs else 0
            self.bodies = [load_body(self.client, file, self.urdf, self.model, origin + self.base_pos, self.base_quat,
                                     flags=flags) for origin in self.env_origins]
        for body in self.bodies if self.contact_pairs else ():
            keep_only_pairs(self.client, body.body_id, body.link_index, self.contact_pairs)
        self._joints = [self.bodies[0].joint_index[n] for n in self.model.dof_names]
        self.stops = HardStops(self.model.q_lower, self.model.q_upper, len(self.bodies))
        self._states = None
        effort = self.model.effort_max
        self._forces = np.where(np.isfinite(effort), effort, 1e3).tolist()  # motor force caps [N m] or [N]
        self.pb_to_model_link = {pb_idx: self.model.link_index(name)  # PyBullet link index -> model link
                                 for name, pb_idx in self.bodies[0].link_index.items()}
        self.movable_pb_links = frozenset(pb_idx for pb_idx, link in self.pb_to_model_link.items()
                                          if self.model.movable_links[link])  # PyBullet indices some DOF moves
        self.collision_links = frozenset(  # link names with a collision shape (the others can touch nothing)
            name for name, pb_idx in self.bodies[0].link_index.items()
            if pb.getCollisionShapeData(self.bodies[0].body_id, pb_idx, physicsClientId=self.client))
        self.set_qpos(self.model.mid_config())
        self.initial_qpos = self.read_states()[0]  # what reset() returns to; build_scene sets the config's

    @property
    def gripper(self) -> Gripper | None:
        """The robot's gripper when it has exactly one (else None: see ``grippers``)."""
        return next(iter(self.grippers.values())) if len(self.grippers) == 1 else None

    def attach_gripper(self, spec: GripperSpec, arm: str = "") -> Gripper:
        """Give the finger joints of ``spec`` to a gripper, the one of ``arm`` for a robot with several
        (after ``scene.build``): from then on the controllers'
        commands (:meth:`command`, :meth:`set_state`) leave those DOFs to it."""
        self._require_built()
        return self.fit_gripper(check_spec(spec, "gripper", self.model), arm)

    def fit_gripper(self, spec: GripperSpec, arm: str = "") -> Gripper:
        """:meth:`attach_gripper` for a spec already checked against this robot's model (a run config's, by its
        loader)."""
        self._require_built()
        if arm in self.grippers:
            raise InputError(f"arm {arm!r} has a gripper already")
        gripper = self.grippers[arm] = Gripper(self, spec)
        self.arm_dofs = np.setdiff1d(self.arm_dofs, gripper.dofs)
        return gripper

    def reset(self) -> None:
        """Every environment back to ``initial_qpos``, at rest, motors holding it."""
        self.set_qpos(self.unbatch(self.initial_qpos))
        self.control_dofs_position(self.unbatch(self.initial_qpos))

    @property
    def n_dofs(self) -> int:
        return self.model.n_dofs

    n_qs = n_dofs

    @property
    def n_links(self) -> int:
        return self.model.n_links

    @property
    def n_envs(self) -> int:
        return len(self.bodies)

    def get_link(self, name: str) -> Link:
        """The link called ``name``; UnknownNameError lists the valid names."""
        return Link(name, self.model.link_index(name))

    @property
    def links(self) -> list[Link]:
        """Every link, in the model's order (Genesis's ``entity.links``)."""
        return [Link(name, k) for k, name in enumerate(self.model.link_names)]

    @property
    def joints(self) -> list[Joint]:
        """Every joint, fixed ones included (Genesis's ``entity.joints``)."""
        return [self.get_joint(j.name) for j in self.model.spec.joints]

    def get_dofs_limit(self, dofs_idx_local: object = None, envs_idx: object = None) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) position limits ([n_envs,] n_selected) [rad or m]; +-inf where unlimited."""
        envs, dofs = self.envs(envs_idx), self._dofs(dofs_idx_local)
        lo, hi = (np.tile(a[dofs], (len(envs.idx), 1)) for a in (self.model.q_lower, self.model.q_upper))
        return envs.out(lo), envs.out(hi)

    def get_joint(self, name: str) -> Joint:
        """The joint called ``name``; UnknownNameError lists the valid names."""
        joints = self.model.spec.joints
        for k, joint in enumerate(joints):
            if joint.name == name:
                dof = self.model.dof_names.index(name) if joint.movable else None
                return Joint(name, joint.type, k, dof)
        raise UnknownNameError("joint", name, [j.name for j in joints])

    def _require_open(self) -> None:
        """Calls that talk to PyBullet need the scene open (model-only ones, such as FK of a given q, do not)."""
        if self.closed:
            raise AppError("the scene is closed (scene.close() was called): build a new Scene to use a robot")

    def _require_built(self) -> None:
        if not self.bodies:
            raise AppError("the robot has no bodies yet: call scene.build() first")

    def envs(self, envs_idx: object = None) -> EnvRows:
        """The environments a call addresses (checked)."""
        self._require_built()
        if envs_idx is not None and not self.batched:
            raise InputError(f"envs_idx={envs_idx!r:.40} given, but the scene was built without n_envs (one "
                             "unbatched environment): leave envs_idx out, or build with n_envs=N")
        return EnvRows(as_indices(envs_idx, "envs_idx", self.n_envs, "environments"), self.batched)

    def _dofs(self, dofs_idx_local: object, name: str = "dofs_idx_local") -> np.ndarray:
        return as_indices(dofs_idx_local, name, self.n_dofs, f"DOFs {list(self.model.dof_names)}")

    def unbatch(self, arr: np.ndarray) -> np.ndarray:
        """Drop the leading environment axis of ``arr`` (n_envs, ...) when the scene is unbatched."""
        return arr if self.batched else arr[0]

    # ------------------------------------------------------------------ state and motors
    def read_states(self) -> tuple[np.ndarray, np.ndarray]:
        """Joint positions and velocities of every environment. Shapes (n_envs, n_dofs) each (copies)."""
        self._require_built()
        self._require_open()
        if self._states is None:
            self._states = self._measure()
        return self._states[0].copy(), self._states[1].copy()

    def after_step(self) -> None:
        """The scene stepped the physics: every joint a contact pushed past a limit goes back onto its hard stop
        (app.sim.hard_stops), and the state is measured once for every reader until the next step."""
        if not self.bodies or self.closed:
            return
        q, v = self._measure()
        envs = self.stops.hold(q, v)
        if envs.size:
            self.teleport(q[envs], v[envs], envs)
        self._states = (q, v)

    def forget_states(self) -> None:
        """The joints were set behind this robot's back (a gripper's measurement): measure them again."""
        self._states = None

    def _measure(self) -> tuple[np.ndarray, np.ndarray]:
        states = [pb.getJointStates(b.body_id, self._joints, physicsClientId=self.client) for b in self.bodies]
        q = np.array([[s[0] for s in env] for env in states])
        v = np.array([[s[1] for s in env] for env in states])
        return q, v

    def get_dofs_position(self, dofs_idx_local: object = None, envs_idx: object = None) -> np.ndarray:
        """Joint positions. Shape ([n_envs,] n_dofs), or the DOFs and environments selected."""
        envs = self.envs(envs_idx)
        return envs.out(self.read_states()[0][np.ix_(envs.idx, self._dofs(dofs_idx_local))])

    def get_qpos(self, qs_idx_local: object = None, envs_idx: object = None) -> np.ndarray:
        """Joint positions (every DOF is one q here). Shape ([n_envs,] n_qs)."""
        return self.get_dofs_position(qs_idx_local, envs_idx)

    def get_dofs_velocity(self, dofs_idx_local: object = None, envs_idx: object = None) -> np.ndarray:
        """Joint velocities. Shape ([n_envs,] n_dofs), or the DOFs and environments selected."""
        envs = self.envs(envs_idx)
        return envs.out(self.read_states()[1][np.ix_(envs.idx, self._dofs(dofs_idx_local))])

    def set_dofs_position(self, position: object, dofs_idx_local: object = None, envs_idx: object = None, *,
                          zero_velocity: bool = True) -> None:
        """Teleport joints (no physics). position ([n_envs,] n_selected); with ``zero_velocity`` (the default, as
        in Genesis) every DOF of the addressed environments stops, else the velocities are kept."""
        envs, dofs = self.envs(envs_idx), self._dofs(dofs_idx_local)
        q = self.model.check_window(envs.rows(position, "qpos", len(dofs)), "qpos", dofs)
        q_all, v_all = self.read_states()
        q_all = q_all[envs.idx]
        q_all[:, dofs] = q
        v_all = np.zeros_like(q_all) if zero_velocity else v_all[envs.idx]
        self.teleport(q_all, v_all, envs.idx)

    def teleport(self, q_all: np.ndarray, v_all: np.ndarray, envs_idx: np.ndarray) -> None:
        """Every DOF of the environments ``envs_idx`` to q_all, v_all (len(envs_idx), n_dofs), unchecked (the
        renderer poses recorded states this way, which PyBullet may have left a hair outside a window)."""
        self._require_open()
        self._states = None
        for row, e in enumerate(envs_idx):  # one call per body (a call per joint cost 8x as much on the WidowX AI)
            pb.resetJointStatesMultiDof(self.bodies[e].body_id, self._joints, [[x] for x in q_all[row].tolist()],
                                        [[x] for x in v_all[row].tolist()], physicsClientId=self.client)

    def set_qpos(self, qpos: object, qs_idx_local: object = None, envs_idx: object = None, *,
                 zero_velocity: bool = True) -> None:
        """:meth:`set_dofs_position` with Genesis's q names."""
        self.set_dofs_position(qpos, qs_idx_local, envs_idx, zero_velocity=zero_velocity)

    def control_dofs_position(self, position: object, dofs_idx_local: object = None, envs_idx: object = None, *,
                              velocity: object = None, position_gain: float | None = None,
                              velocity_gain: float = 1.0) -> None:
        """Position targets for the motors (setJointMotorControlArray), forces capped at the URDF efforts.

        PyBullet's motor asks for the joint velocity kp (q_target - q)/dt + v + kd (v_target - v). Targets are
        clipped to LIMIT_MARGIN inside the joint window (a quarter of a narrower one), as every controller's are:
        held at a limit itself, PyBullet's force-capped motor ends micrometres past it.

        Args:
            position: Target positions. Shape ([n_envs,] n_selected).
            dofs_idx_local, envs_idx: The DOFs and environments commanded; None for all.
            velocity: Target velocities (feed-forward), keyword only, shaped like ``position``; zeros if None.
            position_gain: kp; default ``self.position_gain``. velocity_gain: kd.
        """
        envs, dofs = self.envs(envs_idx), self._dofs(dofs_idx_local)
        self._require_open()
        q = envs.rows(position, "position", len(dofs))
        lo, hi = self.model.q_lower[dofs], self.model.q_upper[dofs]
        margin = np.minimum(LIMIT_MARGIN, 0.25 * (hi - lo))  # the motors stop a hair past a target at a limit
        q = np.minimum(np.maximum(q, lo + margin), hi - margin)
        v = np.zeros_like(q) if velocity is None else envs.rows(velocity, "velocity", len(dofs))
        kp = self.position_gain if position_gain is None else position_gain
        for name, gain in (("position_gain", kp), ("velocity_gain", velocity_gain)):
            if isinstance(gain, bool) or not isinstance(gain, (int, float, np.number)) or not 0 <= gain < np.inf:
                raise InputError(f"{name} must be a finite number >= 0, got {gain!r:.40}")
        every = len(dofs) == self.n_dofs and dofs_idx_local is None
        forces = self._forces if every else [self._forces[k] for k in dofs]
        joints = self._joints if every else [self._joints[k] for k in dofs]
        for row, e in enumerate(envs.idx):
            pb.setJointMotorControlArray(self.bodies[e].body_id, joints, pb.POSITION_CONTROL,
                                         targetPositions=q[row].tolist(), targetVelocities=v[row].tolist(),
                                         forces=forces, positionGains=[kp] * len(joints),
                                         velocityGains=[velocity_gain] * len(joints), physicsClientId=self.client)

    # ------------------------------------------------------------------ the controllers' protocol
    def command(self, q: np.ndarray, qdot: np.ndarray, position_gain: float | None = None) -> None:
        """app.control.robot_protocol.ControlledRobot: motor targets q and feed-forward qdot (n_envs, n_dofs) of the arm
        DOFs (a gripper's are its own). The last targets stay readable as ``last_command`` (app.quality's
        commanded motion)."""
        self.last_command = np.array(q, dtype=float)
        if not self.grippers:
            self.control_dofs_position(self.unbatch(q), velocity=self.unbatch(qdot), position_gain=position_gain)
            return
        arm = self.arm_dofs
        self.control_dofs_position(self.unbatch(q[:, arm]), arm, velocity=self.unbatch(qdot[:, arm]),
                                   position_gain=position_gain)

    def set_state(self, q: np.ndarray) -> None:
        """app.control.robot_protocol.ControlledRobot: teleport the arm DOFs to q (n_envs, n_dofs), at rest (what a
        kinematic controller commands: ``last_command`` too)."""
        self.last_command = np.array(q, dtype=float)
        if not self.grippers:
            self.set_qpos(self.unbatch(q))
        else:
            self.set_qpos(self.unbatch(q[:, self.arm_dofs]), self.arm_dofs, zero_velocity=False)

    def contact_links(self, env: int) -> dict[int, set[int]]:
        """What touches the robot of ``env`` now: other body id -> the PyBullet indices of the links some joint
        moves that touch it (one query for every body)."""
        out: dict[int, set[int]] = {}
        for pt in pb.getContactPoints(self.bodies[env].body_id, physicsClientId=self.client):
            if pt[3] in self.movable_pb_links:
                out.setdefault(pt[2], set()).add(pt[3])
        return out
