"""Hostile and careless input, round two (#24): xacro arguments, joint windows, closed scenes, API index
checks and bounds; each a one-line AppError saying what to fix."""

import numpy as np
import pytest

from app import RobotModel
from app.errors import AppError, InputError, URDFError
from app.sim.scene import BoxSpec, Scene
from tests.conftest import WIDOWX_URDF


def test_a_xacro_missing_its_arguments_names_them_and_says_to_pass_xacro_args(tmp_path):
    xacro_file = tmp_path / "needs_args.urdf.xacro"
    xacro_file.write_text('<?xml version="1.0"?>\n<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r">\n'
                          '  <xacro:arg name="has_default" default="x_"/>\n  <link name="$(arg has_default)a"/>\n'
                          '  <link name="$(arg prefix)base"/>\n  <link name="$(arg suffix)tip"/>\n'
                          '  <joint name="j1" type="fixed"><parent link="$(arg prefix)base"/><child link="$(arg has_default)a"/>'
                          '</joint>\n  <joint name="j2" type="fixed"><parent link="$(arg prefix)base"/>'
                          '<child link="$(arg suffix)tip"/></joint>\n</robot>\n')
    with pytest.raises(URDFError, match=r"needs_args.urdf.xacro: xacro argument\(s\) prefix, suffix needed but not "
                                        r"given: pass them as xacro_args .*robot.xacro_args"):
        RobotModel.from_urdf(str(xacro_file))
    with pytest.raises(URDFError, match=r"argument\(s\) suffix needed"):
        RobotModel.from_urdf(str(xacro_file), xacro_args={"prefix": "p_"})
    model = RobotModel.from_urdf(str(xacro_file), xacro_args={"prefix": "p_", "suffix": "s_"})
    assert set(model.link_names) == {"x_a", "p_base", "s_tip"}
