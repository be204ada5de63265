"""URDF parsing, package:// resolution and the PyBullet loader's errors."""

import shutil

import numpy as np
import pybullet as pb
import pytest

from app import MeshNotFoundError, RobotModel, URDFError
from app.kinematics.description import resolve_uri
from app.kinematics.urdf import parse_urdf_string
from app.sim.urdf_loader import load_urdf
from tests.conftest import OFFICIAL_URDF, require_reference

TWO_LINK = """<robot name="t">
  <link name="a"/><link name="b"/><link name="c"/>
  <joint name="j1" type="{jtype}"><parent link="a"/><child link="b"/><axis xyz="0 0 2"/>
    <limit lower="-1" upper="1" velocity="2" effort="3"/></joint>
  <joint name="j2" type="continuous"><parent link="b"/><child link="c"/><origin xyz="1 0 0" rpy="0 0 0.5"/></joint>
</robot>"""


def test_parses_joint_types_limits_and_normalises_axes():
    spec = parse_urdf_string(TWO_LINK.format(jtype="prismatic"))
    assert spec.links == ("a", "b", "c")
    j1, j2 = spec.joints
    assert (j1.type, j1.axis, j1.lower, j1.upper, j1.velocity, j1.effort) == ("prismatic", (0.0, 0.0, 1.0), -1, 1, 2, 3)
    assert j2.type == "continuous" and j2.lower == -np.inf and j2.axis == (1.0, 0.0, 0.0)
    model = RobotModel.from_urdf_string(TWO_LINK.format(jtype="revolute"))
    assert model.dof_names == ("j1", "j2") and np.isinf(model.q_upper[1])


def test_unsupported_joint_type_names_joint_and_supported_types():
    with pytest.raises(URDFError, match="joint 'j1' has type 'spherical'.*supported types"):
        parse_urdf_string(TWO_LINK.format(jtype="spherical"))


@pytest.mark.parametrize("jtype", ["floating", "planar"])
def test_floating_and_planar_joints_are_held_fixed_as_pybullet_holds_them(jtype):
    model = RobotModel.from_urdf_string(TWO_LINK.format(jtype=jtype))
    assert model.dof_names == ("j2",) and model.spec.joints[0].type == "fixed"


@pytest.mark.parametrize("text, message", [
    ("<robot><link name='a'>", "malformed XML"),
    ("<model/>", "expected <robot>"),
    ("<robot name='x'/>", "at least one <link"),
    ("<robot><link name='a'/><link name='b'/></robot>", "exactly one root link"),
    ("<robot><link name='a'/><joint name='j' type='fixed'><parent link='a'/><child link='zz'/></joint></robot>",
     "link 'zz', which is not defined"),
    ("<robot><link name='a'/><link name='b'/><joint name='j' type='revolute'><parent link='a'/><child link='b'/>"
     "<axis xyz='0 0 0'/></joint></robot>", "zero axis"),
    ("<robot><link name='a'/><link name='b'/><joint name='j' type='fixed'><parent link='a'/><child link='b'/>"
     "<origin xyz='1 2'/></joint></robot>", "needs 3 numbers"),
])
def test_malformed_urdf_raises_specific_error(text, message):
    with pytest.raises(URDFError, match=message):
        parse_urdf_string(text)


def test_missing_urdf_file_is_an_error(tmp_path):
    with pytest.raises(URDFError, match="not found"):
        RobotModel.from_urdf(str(tmp_path / "nope.urdf"))


def test_official_urdf_loads_for_kinematics_without_meshes(tmp_path):
    require_reference()
    copy = tmp_path / "wxai_base.urdf"  # no meshes beside it
    shutil.copy(OFFICIAL_URDF, copy)
    model = RobotModel.from_urdf(str(copy))
    assert model.n_dofs == 8 and "ee_gripper_link" in model.link_names


def test_package_uri_resolves_against_package_dirs_and_ros_package_path(tmp_path, monkeypatch):
    mesh = tmp_path / "pkgs" / "my_pkg" / "meshes" / "m.stl"
    mesh.parent.mkdir(parents=True)
    mesh.write_bytes(b"solid")
    uri = "package://my_pkg/meshes/m.stl"
    assert resolve_uri(uri, str(tmp_path), [str(tmp_path / "pkgs")]) == str(mesh)
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(tmp_path / "pkgs"))
    assert resolve_uri(uri, str(tmp_path), None) == str(mesh)
    monkeypatch.delenv("ROS_PACKAGE_PATH")
    with pytest.raises(MeshNotFoundError) as info:
        resolve_uri(uri, str(tmp_path / "elsewhere"), [str(tmp_path / "other")])
    assert str(tmp_path / "other" / "my_pkg" / "meshes" / "m.stl") in info.value.tried


def test_official_urdf_loads_into_pybullet_with_package_dirs(pb_client):
    reference = require_reference()
    body = load_urdf(pb_client, str(OFFICIAL_URDF), [str(reference)])
    assert body.link_index["ee_gripper_link"] >= 0
    shape_data = pb.getVisualShapeData(body.body_id, physicsClientId=pb_client)
    assert any(b"link_2.stl" in row[4] for row in shape_data)  # the mesh really loaded


def test_missing_mesh_for_pybullet_names_paths_tried(pb_client, tmp_path):
    require_reference()
    copy = tmp_path / "wxai_base.urdf"
    shutil.copy(OFFICIAL_URDF, copy)
    with pytest.raises(MeshNotFoundError, match="base_link.stl.*tried: .*no_such_dir") as info:
        load_urdf(pb_client, str(copy), [str(tmp_path / "no_such_dir")])
    assert info.value.uri.startswith("package://trossen_arm_description/")
