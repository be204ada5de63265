"""A Scene and its robot built from a SceneSpec (app.specs) in one pass: physics, robot or rig, boxes, objects,
the environments, the objects' start poses, the look, the grippers, the start joints."""

from __future__ import annotations

import numpy as np

from app.sim.look import apply_look
from app.sim.robot import Robot
from app.sim.scene import Scene
from app.specs.scene_spec import SceneSpec


def build_from_spec(spec: SceneSpec, gui: bool = False) -> tuple[Scene, Robot]:
    """The scene of ``spec``, built (closed again if any step fails). ``gui``: PyBullet's window. The spec's boxes,
    objects (their mesh files too) and grippers are taken as checked, as a run config's are by its loader
    (app.config.loader); a spec of other origin checks them first (app.validation.check_spec)."""
    scene = Scene(gui=gui, dt=spec.dt, gravity=spec.gravity, solver_iterations=spec.solver_iterations,
                  cone_friction=spec.cone_friction)
    try:
        robot = _add_robot(scene, spec)
        for box in spec.boxes:
            scene.declare_box(box)
        for obj in spec.objects:
            scene.declare_object(obj)
        scene.build(n_envs=spec.n_envs, env_spacing=spec.env_spacing, env_origins=spec.env_origins,
                    max_envs=spec.max_envs)
        for name, (pos, quat) in spec.object_starts.items():
            obj = scene.objects[name]
            obj.set_pose(obj.envs(None).out(pos), obj.envs(None).out(quat))
        apply_look(scene, spec.look, spec.textured)
        for arm, gripper in spec.grippers:
            robot.fit_gripper(gripper, arm)
        if spec.robot.init_qpos is not None:
            q0 = np.broadcast_to(np.array(spec.robot.init_qpos), (robot.n_envs, robot.n_dofs))
            robot.set_qpos(robot.unbatch(q0))
            robot.initial_qpos = robot.read_states()[0]
    except BaseException:
        scene.close()
        raise
    return scene, robot


def _add_robot(scene: Scene, spec: SceneSpec) -> Robot:
    r = spec.robot
    return scene.add_robot(r.urdf, r.base_pos, r.base_quat, r.package_dirs, r.xacro_args, description=r.description,
                           arm_links=r.arm_links)
