"""ROS-style descriptions load into the scene as PyBullet and ROS tools read them, with one joint window
everywhere: fixture URDFs with Gazebo/transmission/ros2_control blocks, package:// and package:///
meshes in a ROS package layout, continuous joints with and without limits, mimic joints, a mobile
manipulator, and a .urdf.xacro with $(find) and $(arg). Truth: PyBullet's link frames and joint info,
and the simulated motors reaching every IK answer."""

import shutil
import sys

import numpy as np
import pybullet as pb
import pytest

from app import MeshNotFoundError, RobotModel, URDFError
from app.kinematics.description import geometry_urdf, read_description, resolve_uri
from app.kinematics.rotations import quat_to_matrix, xyzw_to_wxyz
from app.sim.scene import Scene
from tests.conftest import ROOT

SRC = ROOT / "tests" / "fixtures" / "ros_ws" / "src"
PKG = SRC / "demo_arm_description"
ARM, MOBILE, XACRO = PKG / "urdf" / "demo_arm.urdf", PKG / "urdf" / "demo_mobile_manipulator.urdf", \
    PKG / "urdf" / "demo_arm.urdf.xacro"
XACRO_ARGS = {"prefix": "left_", "upper_length": 0.3}
# (file, end-effector link, xacro args, orientation constrained)
FIXTURES = {
    "arm": (ARM, "tool0", None, True),
    "mobile_manipulator": (MOBILE, "gripper_grasping_frame", None, False),
    "xacro": (XACRO, "left_tool0", XACRO_ARGS, False),
}


def _scene(path, args=None, n_envs=None, gravity=(0.0, 0.0, -9.81)):
    scene = Scene(gravity=gravity)
    robot = scene.add_robot(str(path), package_dirs=[str(SRC)], xacro_args=args)
    scene.build(n_envs=n_envs)
    return scene, robot


def _configs(model, n, seed):
    """Random configurations inside each joint's window (+-pi where unlimited)."""
    lo = np.where(np.isfinite(model.q_lower), model.q_lower, -np.pi)
    hi = np.where(np.isfinite(model.q_upper), model.q_upper, np.pi)
    return np.random.default_rng(seed).uniform(lo, hi, (n, model.n_dofs))


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_loads_and_fk_equals_pybullet_link_frames(name):
    path, _, args, _ = FIXTURES[name]
    scene, robot = _scene(path, args)
    body = robot.bodies[0]
    for q in _configs(robot.model, 5, seed=1):
        robot.set_qpos(q)
        pos, quat = robot.forward_kinematics(q)
        for link, pb_idx in body.link_index.items():
            if pb_idx < 0:
                continue
            state = pb.getLinkState(body.body_id, pb_idx, computeForwardKinematics=True, physicsClientId=scene.client)
            k = robot.model.link_index(link)
            np.testing.assert_allclose(pos[k], state[4], atol=1e-6)
            np.testing.assert_allclose(quat_to_matrix(quat[k]), quat_to_matrix(xyzw_to_wxyz(state[5])), atol=1e-6)
    scene.close()


@pytest.mark.parametrize("name", FIXTURES)
def test_pybullet_enforces_exactly_the_model_joint_windows(name):
    path, _, args, _ = FIXTURES[name]
    scene, robot = _scene(path, args)
    body, model = robot.bodies[0], robot.model
    for k, joint in enumerate(model.dof_names):
        info = pb.getJointInfo(body.body_id, body.joint_index[joint], physicsClientId=scene.client)
        window = (info[8], info[9]) if info[8] <= info[9] else (-np.inf, np.inf)
        assert window == pytest.approx((model.q_lower[k], model.q_upper[k])), joint
    scene.close()


def test_continuous_joint_windows_follow_the_limit_tag_as_pybullet_does():
    arm = RobotModel.from_urdf(str(ARM))
    pan, roll = arm.dof_index("shoulder_pan"), arm.dof_index("wrist_roll")
    assert (arm.q_lower[pan], arm.q_upper[pan]) == (-3.14159, 3.14159)  # continuous with <limit lower upper>
    assert np.isinf(arm.q_lower[roll]) and np.isinf(arm.q_upper[roll])  # continuous without
    mobile = RobotModel.from_urdf(str(MOBILE))
    wheel = mobile.dof_index("wheel_left_joint")  # <limit effort velocity> only: unlimited
    assert np.isinf(mobile.q_upper[wheel]) and mobile.v_max[wheel] == 5.0
    assert "caster_joint" not in mobile.dof_names  # floating: held fixed, as PyBullet does
    assert arm.mimic["finger_right_joint"] == ("finger_left_joint", 1.0, 0.0)


@pytest.mark.parametrize("name", FIXTURES)
def test_every_ik_answer_is_reached_by_the_motors(name):
    """IK answers lie in the windows PyBullet enforces: driven by the motors, the arm ends at each answer."""
    path, ee, args, full_pose = FIXTURES[name]
    scene, robot = _scene(path, args, n_envs=4)
    model = robot.model
    q_true = _configs(model, 4, seed=7)
    if name == "arm":  # a pan angle near its +pi stop, started from the other side: wrapping would leave the window
        q_true[0, model.dof_index("shoulder_pan")] = 3.05
        robot.set_qpos(np.where(np.arange(model.n_dofs) == model.dof_index("shoulder_pan"), -3.05, q_true[1])
                       [None].repeat(4, axis=0))
    pos, quat = (a[:, model.link_index(ee)] for a in robot.forward_kinematics(q_true))
    info = robot.inverse_kinematics(ee, pos, quat if full_pose else None, return_info=True)
    assert info.converged.all(), (info.pos_err, info.rot_err)
    assert np.all(info.q >= model.q_lower) and np.all(info.q <= model.q_upper)
    for _ in range(int(3.0 / scene.dt)):
        robot.control_dofs_position(info.q)
        scene.step()
    q_sim = robot.get_qpos()
    np.testing.assert_allclose(q_sim, info.q, atol=2e-3)
    pos_sim, _ = robot.forward_kinematics(q_sim, links_idx_local=[model.link_index(ee)])
    np.testing.assert_allclose(pos_sim[:, 0], pos, atol=3e-3)
    scene.close()


def test_extension_blocks_are_dropped_and_plugins_are_not_taken_for_meshes():
    text = read_description(ARM)
    assert "libgazebo_ros_control.so" in text
    limits = {n: (lo, hi) for n, lo, hi in zip(*(lambda m: (m.dof_names, m.q_lower, m.q_upper))(
        RobotModel.from_urdf(str(ARM))))}
    out = geometry_urdf(text, str(ARM), None, limits)
    for gone in ("gazebo", "transmission", "ros2_control", "libgazebo"):
        assert gone not in out
    assert str(PKG / "meshes" / "visual" / "box.dae") in out and str(PKG / "meshes" / "collision" / "box.stl") in out


def test_package_uris_resolve_with_two_and_three_slashes_from_package_dirs_and_ros_package_path(tmp_path,
                                                                                                 monkeypatch):
    mesh = str(PKG / "meshes" / "visual" / "box.obj")
    for uri in ("package://demo_arm_description/meshes/visual/box.obj",
                "package:///demo_arm_description/meshes/visual/box.obj"):
        assert resolve_uri(uri, str(tmp_path), [str(SRC)]) == mesh
        monkeypatch.setenv("ROS_PACKAGE_PATH", str(SRC))
        assert resolve_uri(uri, str(tmp_path), None) == mesh
        monkeypatch.delenv("ROS_PACKAGE_PATH")
        assert resolve_uri(uri, str(PKG / "urdf"), None) == mesh  # the URDF inside its package
    assert resolve_uri("file://" + mesh, str(tmp_path)) == mesh
    assert resolve_uri("../meshes/visual/box.obj", str(PKG / "urdf")) == mesh


def test_a_copied_description_loads_through_package_dirs_only(tmp_path):
    copy = tmp_path / "elsewhere.urdf"
    shutil.copy(MOBILE, copy)
    scene = Scene()
    robot = scene.add_robot(str(copy), package_dirs=[str(SRC)])
    scene.build()
    shapes = pb.getVisualShapeData(robot.bodies[0].body_id, physicsClientId=scene.client)
    assert any(b"box.dae" in row[4] for row in shapes)  # the package:/// mesh really loaded
    scene.close()
    scene = Scene()
    with pytest.raises(MeshNotFoundError, match="box.dae.*tried: .*demo_arm_description"):
        scene.add_robot(str(copy))
        scene.build()
    scene.close()


def test_a_mesh_format_pybullet_cannot_load_is_named_with_what_to_do(tmp_path):
    pkg = tmp_path / "demo_arm_description"
    shutil.copytree(PKG, pkg)
    (pkg / "meshes" / "visual" / "box.ply").write_bytes((PKG / "meshes" / "visual" / "box.obj").read_bytes())
    urdf = pkg / "urdf" / "demo_arm.urdf"
    urdf.write_text(urdf.read_text().replace("visual/box.dae", "visual/box.ply"))
    scene = Scene()
    scene.add_robot(str(urdf))
    with pytest.raises(URDFError, match=r"link 'base_link': visual mesh .*box.ply' is a .ply file, which PyBullet "
                                        r"cannot load; convert it to one of \['.obj', '.stl', '.dae'\]"):
        scene.build()
    scene.close()


def test_xacro_args_and_find_shape_the_model():
    default = RobotModel.from_urdf(str(XACRO), package_dirs=[str(SRC)])
    custom = RobotModel.from_urdf(str(XACRO), package_dirs=[str(SRC)], xacro_args=XACRO_ARGS)
    assert default.link_names[0] == "base_link" and custom.link_names[0] == "left_base_link"
    tip = lambda m: m.forward_kinematics(np.zeros(m.n_dofs))[0][-1]  # noqa: E731
    np.testing.assert_allclose(tip(default), [0, 0, 0.05 + 0.25 + 0.2 + 0.2])
    np.testing.assert_allclose(tip(custom), [0, 0, 0.05 + 0.3 + 0.2 + 0.2])


def test_xacro_errors_name_the_package_the_file_and_the_extra(tmp_path, monkeypatch):
    copy = tmp_path / "robot.urdf.xacro"
    shutil.copy(XACRO, copy)
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    with pytest.raises(URDFError, match=r"robot.urdf.xacro: \$\(find demo_arm_description\): package not found"):
        RobotModel.from_urdf(str(copy))
    with pytest.raises(URDFError, match="xacro_args .* given for a file that is not .xacro"):
        RobotModel.from_urdf(str(ARM), xacro_args={"prefix": "x"})
    monkeypatch.setitem(sys.modules, "xacro", None)  # as if the optional extra were not installed
    with pytest.raises(URDFError, match=r'needs the optional extra "ros": pip install -e ".\[ros\]"'):
        RobotModel.from_urdf(str(XACRO), package_dirs=[str(SRC)])


def test_a_scene_file_can_name_a_xacro_description_with_its_args(tmp_path):
    from app.config.loader import load_run_config
    from app.episode.scene_build import build_scene

    scene_file = tmp_path / "xacro_scene.yaml"
    scene_file.write_text(f"robot:\n  urdf: {XACRO}\n  package_dirs: [{SRC}]\n  ee_link: left_tool0\n"
                          "  xacro_args: {prefix: left_, upper_length: 0.3}\n")
    run_file = tmp_path / "run.yaml"
    run_file.write_text(f"scene: {scene_file}\ntask:\n  type: static\n  center: [0.2, 0.0, 0.4]\n"
                        "  rot_mask: [false, false, false]\n")
    run = load_run_config(run_file)
    scene, robot = build_scene(run)
    assert robot.model.link_names[-1] == "left_tool0"
    scene.close()


@pytest.mark.parametrize("relative", ["franka_panda/panda.urdf", "kuka_iiwa/model.urdf", "xarm/xarm6_robot.urdf",
                                      "husky/husky.urdf", "r2d2.urdf"])
def test_pybullet_bundled_robots_load_into_the_scene_with_the_same_windows(relative):
    import pybullet_data

    scene, robot = _scene(f"{pybullet_data.getDataPath()}/{relative}")
    body, model = robot.bodies[0], robot.model
    q = _configs(model, 1, seed=3)[0]
    robot.set_qpos(q)
    pos, _ = robot.forward_kinematics(q)
    for link, pb_idx in body.link_index.items():
        if pb_idx >= 0:
            state = pb.getLinkState(body.body_id, pb_idx, computeForwardKinematics=True, physicsClientId=scene.client)
            np.testing.assert_allclose(pos[model.link_index(link)], state[4], atol=1e-6)
    scene.close()


def test_roslaunch_substitutions_left_in_a_plain_urdf_are_evaluated_or_named(tmp_path, monkeypatch):
    text = ARM.read_text().replace('<origin xyz="0.2 0 0"/><axis xyz="0 1 0"/>',
                                   '<origin xyz="$(optenv DEMO_WRIST_XYZ 0.2 0 0)"/><axis xyz="0 1 0"/>')
    urdf = tmp_path / "optenv.urdf"
    urdf.write_text(text)
    wrist = lambda: RobotModel.from_urdf(str(urdf)).spec.joints[4].origin_xyz  # noqa: E731
    assert wrist() == (0.2, 0.0, 0.0)  # the default
    monkeypatch.setenv("DEMO_WRIST_XYZ", "0.25 0 0")
    assert wrist() == (0.25, 0.0, 0.0)
    urdf.write_text(text.replace("$(optenv DEMO_WRIST_XYZ 0.2 0 0)", "$(arg wrist_xyz)"))
    with pytest.raises(URDFError, match=r"cannot evaluate '\$\(arg wrist_xyz\)' in a plain URDF"):
        RobotModel.from_urdf(str(urdf))


def test_substitutions_in_comments_and_extension_blocks_are_left_alone(tmp_path):
    text = ARM.read_text().replace("<robot name=\"demo_arm\"", "<!-- $(arg prefix) is for xacro users -->\n"
                                   "<robot name=\"demo_arm\"")
    text = text.replace('<robotNamespace>/demo_arm</robotNamespace>',
                        '<robotNamespace>$(find not_installed_pkg)</robotNamespace>'
                        '<parameters>$(find not_installed_pkg)/config/c.yaml</parameters>')
    text = text.replace('filename="libgazebo_ros_control.so"', 'filename="$(find not_installed_pkg)/lib.so"')
    urdf = PKG / "urdf" / "demo_arm.urdf"
    copy = tmp_path / "demo_arm_description" / "urdf" / "demo_arm.urdf"
    shutil.copytree(PKG, tmp_path / "demo_arm_description")
    copy.write_text(text)
    assert RobotModel.from_urdf(str(copy)).n_dofs == RobotModel.from_urdf(str(urdf)).n_dofs
    scene = Scene()
    scene.add_robot(str(copy))
    scene.build()
    scene.close()


def test_official_wxai_xacro_builds_a_scene_moved_by_ik_and_pybullet_reads_it_line_by_line():
    """Trossen's wxai.urdf.xacro expands to one long line; the file handed to PyBullet has one element a line."""
    from app.sim.urdf_loader import simulator_file
    from tests.conftest import require_reference

    reference = require_reference()
    xacro_file = reference / "trossen_arm_description" / "urdf" / "wxai.urdf.xacro"
    text = read_description(str(xacro_file), [str(reference)])
    model = RobotModel.from_urdf(str(xacro_file), package_dirs=[str(reference)])
    with simulator_file(model, text, str(xacro_file), [str(reference)]) as file:
        lines = open(file).read().splitlines()
    assert len(lines) > 50 and max(map(len, lines)) < 1000
    scene = Scene()
    robot = scene.add_robot(str(xacro_file), package_dirs=[str(reference)])
    scene.build()
    target = np.array([0.3, 0.05, 0.2])
    q = robot.inverse_kinematics(robot.get_link("ee_gripper_link"), pos=target, quat=None)
    robot.set_qpos(q)
    body = robot.bodies[0]
    state = pb.getLinkState(body.body_id, body.link_index["ee_gripper_link"], computeForwardKinematics=True,
                            physicsClientId=scene.client)
    np.testing.assert_allclose(state[4], target, atol=1e-4)
    scene.close()
